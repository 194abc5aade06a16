/**
 * Which files of a directory are sources. Deterministic (sorted, POSIX-relative paths), skips
 * dependency and build-output folders, never follows symlinked directories (no cycles). The same rules
 * decide a file list made from git's view of the tree (view/git-state.ts): `sourcePathRules` is the
 * one definition of both.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { isSourceFile } from '../parse/language.js';
import { worktree, type FileTree } from '../workspace/tree.js';

const ALWAYS_SKIPPED = new Set(['node_modules', '.git', '.nx', 'coverage']);

function normalizeSkipped(extraSkipped: string[]): Set<string> {
  return new Set(extraSkipped.map((p) => p.split(sep).join('/').replace(/^\.\//, '').replace(/\/$/, '')));
}

function isSkippedDir(name: string, rel: string, skipped: ReadonlySet<string>): boolean {
  return ALWAYS_SKIPPED.has(name) || name.startsWith('.') || skipped.has(rel);
}

export interface SourcePathRules {
  /** Whether listSourceFiles lists this root-relative POSIX path, were it a regular file. */
  lists(rel: string): boolean;
  /** Whether listSourceFiles walks into this root-relative POSIX directory (and every one above it). */
  walks(relDir: string): boolean;
}

/** listSourceFiles(root, extraSkipped)'s rules as predicates on root-relative paths. */
export function sourcePathRules(extraSkipped: string[] = []): SourcePathRules {
  const skipped = normalizeSkipped(extraSkipped);
  // Every directory on the path (`a`, `a/b`, …) must be one the walk enters.
  const dirsWalked = (path: string, end: number): boolean => {
    let from = 0;
    for (let slash = path.indexOf('/'); slash !== -1 && slash <= end; slash = path.indexOf('/', from)) {
      if (isSkippedDir(path.slice(from, slash), path.slice(0, slash), skipped)) return false;
      from = slash + 1;
    }
    return true;
  };
  return {
    lists: (rel) => {
      const last = rel.lastIndexOf('/');
      return last < rel.length - 1 && dirsWalked(rel, last) && isSourceFile(rel.slice(last + 1));
    },
    walks: (relDir) => dirsWalked(`${relDir}/`, relDir.length),
  };
}

export async function listSourceFiles(root: string, extraSkipped: string[] = []): Promise<string[]> {
  return listSourceFilesUnder(root, '', extraSkipped);
}

/**
 * listSourceFiles(root, extraSkipped) restricted to the directory `startRel` (root-relative POSIX,
 * '' for all): the same paths, relative to `root`. The caller has checked that `startRel` itself is
 * not skipped.
 */
export async function listSourceFilesUnder(root: string, startRel: string, extraSkipped: string[] = []): Promise<string[]> {
  const skipped = normalizeSkipped(extraSkipped);
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    const subdirs: Promise<void>[] = [];
    for (const e of entries) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split(sep).join('/');
      if (e.isDirectory()) {
        if (isSkippedDir(e.name, rel, skipped)) continue;
        subdirs.push(walk(abs)); // sibling directories are read concurrently; the result is sorted below
      } else if (e.isFile() && isSourceFile(e.name)) {
        out.push(rel);
      }
    }
    await Promise.all(subdirs);
  }
  await walk(startRel ? join(root, ...startRel.split('/')) : root);
  return out.sort();
}

/** Build output folders named by the package's tsconfig (`outDir`, `declarationDir`). */
export async function buildOutputDirs(packageRoot: string, tree: FileTree = worktree): Promise<string[]> {
  const dirs: string[] = [];
  for (const name of ['tsconfig.json', 'tsconfig.lib.json', 'tsconfig.build.json']) {
    let text: string;
    try {
      const t = tree === worktree ? await readFile(join(packageRoot, name), 'utf8') : tree.readText(join(packageRoot, name));
      if (t === undefined) continue;
      text = t;
    } catch {
      continue;
    }
    // tsconfig is JSONC; pull the two options out without evaluating anything.
    for (const m of text.matchAll(/"(outDir|declarationDir)"\s*:\s*"([^"]+)"/g)) dirs.push(m[2]!.replace(/^\.\//, ''));
  }
  return [...new Set(dirs)];
}
