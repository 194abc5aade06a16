/**
 * Which packages a workspace has: npm/yarn `workspaces` (array or `{ packages }`), pnpm's
 * `pnpm-workspace.yaml`, or — in an Nx workspace without either — every package.json below the root.
 * Works without Nx (core never imports it), so `kiln keys` runs in a plain npm/pnpm/yarn workspace.
 * Deterministic: projects sorted by root; roots are relative POSIX paths. Reads through a FileTree
 * (workspace/tree.ts): the working tree by default, or a git tree object.
 */
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { worktree, type FileTree } from './tree.js';

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

export async function discoverWorkspace(workspaceRoot: string, tree: FileTree = worktree): Promise<Workspace> {
  const diagnostics: Diagnostic[] = [];
  const fsx = files(tree);
  const rootManifest = fsx.readJson(join(workspaceRoot, 'package.json'));
  let patterns: string[] | undefined;
  let kind: Workspace['kind'] = 'single';
  const ws = rootManifest.value?.workspaces;
  if (Array.isArray(ws)) patterns = ws.filter((p): p is string => typeof p === 'string');
  else if (ws && typeof ws === 'object' && Array.isArray((ws as { packages?: unknown }).packages)) {
    patterns = ((ws as { packages: unknown[] }).packages).filter((p): p is string => typeof p === 'string');
  }
  if (patterns) kind = 'npm';
  const pnpm = tree.readText(join(workspaceRoot, 'pnpm-workspace.yaml'));
  if (pnpm !== undefined) {
    patterns = parsePnpmWorkspace(pnpm);
    kind = 'pnpm';
  }
  let dirs: string[];
  if (patterns) {
    dirs = await expandPatterns(workspaceRoot, patterns, tree);
  } else if (tree.kindOf(join(workspaceRoot, 'nx.json'))) {
    kind = 'nx';
    dirs = findPackageDirs(fsx, workspaceRoot, '', 0).filter((d) => d !== '');
  } else {
    dirs = [''];
  }
  const projects: WorkspaceProject[] = [];
  for (const dir of [...new Set(dirs)].sort()) {
    const m = fsx.readJson(join(workspaceRoot, dir, 'package.json'));
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
export async function expandPatterns(root: string, patterns: string[], tree: FileTree = worktree): Promise<string[]> {
  const fsx = files(tree);
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => globToRegExp(p.slice(1)));
  const found = new Set<string>();
  for (const pattern of include) {
    const clean = pattern.replace(/^\.\//, '').replace(/\/$/, '');
    for (const dir of expand(fsx, root, '', clean.split('/'))) {
      if (exclude.some((re) => re.test(dir))) continue;
      if (fsx.exists(join(root, dir, 'package.json'))) found.add(dir);
    }
  }
  return [...found].sort();
}

function expand(fsx: Files, root: string, prefix: string, segments: string[]): string[] {
  if (!segments.length) return [prefix];
  const [seg, ...rest] = segments as [string, ...string[]];
  // Dot directories only when the pattern names them (pnpm's `examples/.*/*`).
  const children = () => fsx.listDirs(join(root, prefix)).filter((d) => !SKIP.has(d) && (!d.startsWith('.') || seg.startsWith('.')));
  if (seg === '**') {
    const out = expand(fsx, root, prefix, rest);
    for (const d of children()) out.push(...expand(fsx, root, posix.join(prefix, d), segments));
    return out;
  }
  if (seg.includes('*')) {
    const re = globToRegExp(seg);
    const out: string[] = [];
    for (const d of children()) if (re.test(d)) out.push(...expand(fsx, root, posix.join(prefix, d), rest));
    return out;
  }
  return fsx.exists(join(root, prefix, seg)) ? expand(fsx, root, posix.join(prefix, seg), rest) : [];
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

function findPackageDirs(fsx: Files, root: string, prefix: string, depth: number): string[] {
  const out: string[] = [];
  if (fsx.exists(join(root, prefix, 'package.json'))) out.push(prefix);
  if (depth >= 5) return out;
  for (const d of fsx.listDirs(join(root, prefix))) {
    if (SKIP.has(d) || d.startsWith('.')) continue;
    out.push(...findPackageDirs(fsx, root, posix.join(prefix, d), depth + 1));
  }
  return out;
}

interface Files {
  listDirs(dir: string): string[];
  exists(p: string): boolean;
  readJson(p: string): { value?: Record<string, unknown>; error?: string; missing?: boolean };
}

/** The few reads discovery makes, on a tree (synchronous: a handful of small files and directories). */
function files(tree: FileTree): Files {
  return {
    // A symlinked directory is not walked into (no cycles), as readdir's Dirent.isDirectory() said before.
    listDirs: (dir) => (tree.list(dir) ?? []).filter((e) => e.kind === 'dir' && !e.symlink).map((e) => e.name),
    exists: (p) => tree.kindOf(p) !== undefined,
    readJson(p) {
      const text = tree.readText(p);
      if (text === undefined) return { missing: true };
      try {
        const v = JSON.parse(text) as unknown;
        if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'package.json is not a JSON object' };
        return { value: v as Record<string, unknown> };
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
  };
}
