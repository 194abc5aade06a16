/**
 * What a package manifest says about identity: the package name (never the version) and its public
 * entry points, mapped from `exports`/`main`/`module`/`types` back to source files of the tree.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { worktree, type FileTree } from '../workspace/tree.js';

export interface PackageInfo {
  name: string;
  /** Entry subpath (`.`, `./server`) → the manifest's target paths, best first. */
  entries: { subpath: string; targets: string[] }[];
  /** Set when package.json exists but cannot be parsed. */
  invalid?: string;
  found: boolean;
}

export const UNNAMED_PACKAGE = '(unnamed)';

export async function readPackageInfo(packageRoot: string, tree: FileTree = worktree): Promise<PackageInfo> {
  let text: string;
  try {
    const t = tree === worktree ? await readFile(join(packageRoot, 'package.json'), 'utf8') : tree.readText(join(packageRoot, 'package.json'));
    if (t === undefined) throw new Error('no package.json');
    text = t;
  } catch {
    return { name: UNNAMED_PACKAGE, entries: [], found: false };
  }
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(text) as Record<string, unknown>;
    if (!pkg || typeof pkg !== 'object' || Array.isArray(pkg)) throw new Error('package.json is not an object');
  } catch (e) {
    return { name: UNNAMED_PACKAGE, entries: [], invalid: (e as Error).message, found: true };
  }
  const name = typeof pkg.name === 'string' && pkg.name ? pkg.name : UNNAMED_PACKAGE;
  return { name, entries: entriesOf(pkg), found: true };
}

const CONDITION_ORDER = ['types', 'typings', 'source', 'import', 'module', 'node', 'require', 'default'];

function collectTargets(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectTargets(v, out);
  else if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).sort((a, b) => rank(a) - rank(b));
    for (const k of keys) collectTargets(obj[k], out);
  }
}

function rank(condition: string): number {
  const i = CONDITION_ORDER.indexOf(condition);
  return i === -1 ? CONDITION_ORDER.length : i;
}

function entriesOf(pkg: Record<string, unknown>): { subpath: string; targets: string[] }[] {
  const exp = pkg.exports;
  const entries: { subpath: string; targets: string[] }[] = [];
  if (exp !== undefined && exp !== null) {
    const isSubpathMap = typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp as object).some((k) => k.startsWith('.'));
    if (isSubpathMap) {
      for (const [subpath, value] of Object.entries(exp as Record<string, unknown>)) {
        if (subpath.includes('*') || subpath === './package.json') continue;
        const targets: string[] = [];
        collectTargets(value, targets);
        if (targets.length) entries.push({ subpath, targets });
      }
    } else {
      const targets: string[] = [];
      collectTargets(exp, targets);
      if (targets.length) entries.push({ subpath: '.', targets });
    }
  }
  if (!entries.some((e) => e.subpath === '.')) {
    const targets = ['types', 'typings', 'source', 'module', 'main']
      .map((k) => pkg[k])
      .filter((v): v is string => typeof v === 'string');
    if (targets.length) entries.push({ subpath: '.', targets });
  }
  return entries.sort((a, b) => (a.subpath < b.subpath ? -1 : a.subpath > b.subpath ? 1 : 0));
}
