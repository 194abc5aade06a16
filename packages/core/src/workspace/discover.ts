/**
 * Which packages a workspace has: npm/yarn `workspaces` (array or `{ packages }`), pnpm's
 * `pnpm-workspace.yaml`, or — in an Nx workspace without either — every package.json below the root.
 * Works without Nx (core never imports it), so `kiln keys` runs in a plain npm/pnpm/yarn workspace.
 * Deterministic: projects sorted by root; roots are relative POSIX paths.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';

export interface WorkspaceProject {
  /** package.json `name` (the project name Nx infers from it too). */
  name: string;
  /** Relative POSIX path from the workspace root. */
  root: string;
  /** The parsed package.json, or null when it cannot be parsed (then `manifestError` says why). */
  manifest: Record<string, unknown> | null;
  manifestError?: string;
}

export interface Workspace {
  kind: 'npm' | 'pnpm' | 'nx' | 'single';
  projects: WorkspaceProject[];
  diagnostics: Diagnostic[];
}

const SKIP = new Set(['node_modules', '.git', '.nx', 'dist', 'coverage', 'tmp', '.cache']);

export async function discoverWorkspace(workspaceRoot: string): Promise<Workspace> {
  const diagnostics: Diagnostic[] = [];
  const rootManifest = await readJson(join(workspaceRoot, 'package.json'));
  let patterns: string[] | undefined;
  let kind: Workspace['kind'] = 'single';
  const ws = rootManifest.value?.workspaces;
  if (Array.isArray(ws)) patterns = ws.filter((p): p is string => typeof p === 'string');
  else if (ws && typeof ws === 'object' && Array.isArray((ws as { packages?: unknown }).packages)) {
    patterns = ((ws as { packages: unknown[] }).packages).filter((p): p is string => typeof p === 'string');
  }
  if (patterns) kind = 'npm';
  const pnpm = await readText(join(workspaceRoot, 'pnpm-workspace.yaml'));
  if (pnpm !== undefined) {
    patterns = parsePnpmWorkspace(pnpm);
    kind = 'pnpm';
  }
  let dirs: string[];
  if (patterns) {
    dirs = await expandPatterns(workspaceRoot, patterns);
  } else if (await exists(join(workspaceRoot, 'nx.json'))) {
    kind = 'nx';
    dirs = (await findPackageDirs(workspaceRoot, '', 0)).filter((d) => d !== '');
  } else {
    dirs = [''];
  }
  const projects: WorkspaceProject[] = [];
  for (const dir of [...new Set(dirs)].sort()) {
    const m = await readJson(join(workspaceRoot, dir, 'package.json'));
    if (m.missing) continue;
    if (m.error !== undefined) {
      diagnostics.push(diagnostic('KILN_MANIFEST_INVALID', `${posix.join(dir, 'package.json')}: ${m.error}`, { file: posix.join(dir, 'package.json'), producer: 'workspace' }));
      projects.push({ name: dir || '.', root: dir || '.', manifest: null, manifestError: m.error });
      continue;
    }
    const name = typeof m.value?.name === 'string' && m.value.name ? m.value.name : dir || '.';
    projects.push({ name, root: dir || '.', manifest: m.value ?? {} });
  }
  return { kind, projects, diagnostics };
}

/** `packages:` list items of pnpm-workspace.yaml (the only key kiln needs). */
export function parsePnpmWorkspace(text: string): string[] {
  const out: string[] = [];
  let inPackages = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '');
    if (/^packages\s*:/.test(line)) {
      inPackages = true;
      continue;
    }
    if (inPackages) {
      const m = /^\s+-\s*['"]?([^'"]+?)['"]?\s*$/.exec(line);
      if (m) out.push(m[1]!);
      else if (/^\S/.test(line)) inPackages = false;
    }
  }
  return out;
}

/** Expand workspace globs (`libs/*`, `packages/**`, exact dirs, `!negations`) to package dirs. */
export async function expandPatterns(root: string, patterns: string[]): Promise<string[]> {
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globToRegExp(p.slice(1)));
  const found = new Set<string>();
  for (const pattern of include) {
    const clean = pattern.replace(/^\.\//, '').replace(/\/$/, '');
    for (const dir of await expand(root, '', clean.split('/'))) {
      if (exclude.some((re) => re.test(dir))) continue;
      if (await exists(join(root, dir, 'package.json'))) found.add(dir);
    }
  }
  return [...found].sort();
}

async function expand(root: string, prefix: string, segments: string[]): Promise<string[]> {
  if (!segments.length) return [prefix];
  const [seg, ...rest] = segments as [string, ...string[]];
  // Dot directories only when the pattern names them (pnpm's `examples/.*/*`).
  const children = async () => (await listDirs(join(root, prefix))).filter((d) => !SKIP.has(d) && (!d.startsWith('.') || seg.startsWith('.')));
  if (seg === '**') {
    const out = await expand(root, prefix, rest);
    for (const d of await children()) out.push(...(await expand(root, posix.join(prefix, d), segments)));
    return out;
  }
  if (seg.includes('*')) {
    const re = globToRegExp(seg);
    const out: string[] = [];
    for (const d of await children()) if (re.test(d)) out.push(...(await expand(root, posix.join(prefix, d), rest)));
    return out;
  }
  return (await exists(join(root, prefix, seg))) ? expand(root, posix.join(prefix, seg), rest) : [];
}

function globToRegExp(glob: string): RegExp {
  const re = glob
    .replace(/^\.\//, '')
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\/?/g, '\u0000')
    .replace(/\*/g, '[^/]*')
    .replace(/\u0000/g, '(?:.*/)?');
  return new RegExp(`^${re}$`);
}

async function findPackageDirs(root: string, prefix: string, depth: number): Promise<string[]> {
  const out: string[] = [];
  if (await exists(join(root, prefix, 'package.json'))) out.push(prefix);
  if (depth >= 5) return out;
  for (const d of await listDirs(join(root, prefix))) {
    if (SKIP.has(d) || d.startsWith('.')) continue;
    out.push(...(await findPackageDirs(root, posix.join(prefix, d), depth + 1)));
  }
  return out;
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

async function readText(p: string): Promise<string | undefined> {
  try {
    return await readFile(p, 'utf8');
  } catch {
    return undefined;
  }
}

async function readJson(p: string): Promise<{ value?: Record<string, unknown>; error?: string; missing?: boolean }> {
  const text = await readText(p);
  if (text === undefined) return { missing: true };
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'package.json is not a JSON object' };
    return { value: v as Record<string, unknown> };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
