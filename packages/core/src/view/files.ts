/**
 * Which files of a directory are sources. Deterministic (sorted, POSIX-relative paths), skips
 * dependency and build-output folders, never follows symlinked directories (no cycles).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isSourceFile } from '../parse/language.js';

const ALWAYS_SKIPPED = new Set(['node_modules', '.git', '.nx', 'coverage']);

export async function listSourceFiles(root: string, extraSkipped: string[] = []): Promise<string[]> {
  const skipped = new Set(extraSkipped.map((p) => p.split(sep).join('/').replace(/^\.\//, '').replace(/\/$/, '')));
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    const subdirs: Promise<void>[] = [];
    for (const e of entries) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split(sep).join('/');
      if (e.isDirectory()) {
        if (ALWAYS_SKIPPED.has(e.name) || e.name.startsWith('.') || skipped.has(rel)) continue;
        subdirs.push(walk(abs)); // sibling directories are read concurrently; the result is sorted below
      } else if (e.isFile() && isSourceFile(e.name)) {
        out.push(rel);
      }
    }
    await Promise.all(subdirs);
  }
  await walk(root);
  return out.sort();
}

/** Build output folders named by the package's tsconfig (`outDir`, `declarationDir`). */
export async function buildOutputDirs(packageRoot: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const name of ['tsconfig.json', 'tsconfig.lib.json', 'tsconfig.build.json']) {
    let text: string;
    try {
      text = await readFile(join(packageRoot, name), 'utf8');
    } catch {
      continue;
    }
    // tsconfig is JSONC; pull the two options out without evaluating anything.
    for (const m of text.matchAll(/"(outDir|declarationDir)"\s*:\s*"([^"]+)"/g)) dirs.push(m[2]!.replace(/^\.\//, ''));
  }
  return [...new Set(dirs)];
}
