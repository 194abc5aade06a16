/**
 * Where a package's representation lives: `kiln.rep` beside the built JavaScript of the manifest's
 * main entry — the directory the build writes and caches, and that `files` publishes with the JS.
 * One rule, used by the producer to write it and by every consumer to find it (never a search).
 *
 * The main entry: `exports["."]` (or `exports` itself when it has no subpaths), its conditions tried in
 * the order `import`, `module`, `node`, `default`, `require` (nested conditions followed the same way),
 * the first JavaScript path; else `module`; else `main`; else the package root.
 *
 * Invariant: the result is inside the package directory (a manifest pointing outside it, or at an
 * absolute path, gets the package root).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** The file name of a representation. */
export const REPRESENTATION_FILE = 'kiln.rep';

const CONDITIONS = ['import', 'module', 'node', 'default', 'require'];
const JS = /\.(m|c)?js$/;

function firstJs(value: unknown, depth = 0): string | undefined {
  if (depth > 8 || value === null || value === undefined) return undefined;
  if (typeof value === 'string') return JS.test(value) ? value : undefined;
  if (Array.isArray(value)) {
    for (const v of value) {
      const hit = firstJs(v, depth + 1);
      if (hit) return hit;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const c of CONDITIONS) {
      if (!(c in o)) continue;
      const hit = firstJs(o[c], depth + 1);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The package-relative path of the representation a manifest's package has (or would have). */
export function representationRelPath(manifest: Record<string, unknown>): string {
  const exp = manifest.exports;
  let main: string | undefined;
  if (exp !== undefined && exp !== null) {
    const isMap = typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
    main = firstJs(isMap ? (exp as Record<string, unknown>)['.'] : exp);
  }
  for (const f of ['module', 'main']) if (!main && typeof manifest[f] === 'string' && JS.test(manifest[f] as string)) main = manifest[f] as string;
  if (!main || isAbsolute(main)) return REPRESENTATION_FILE;
  const rel = relative('.', join(dirname(main), REPRESENTATION_FILE)).split('\\').join('/');
  return rel.startsWith('../') || rel === '..' ? REPRESENTATION_FILE : rel;
}

/** The absolute path of the representation of the package in `packageDir` (read from its package.json). */
export function representationPath(packageDir: string, manifest?: Record<string, unknown>): string {
  const m = manifest ?? (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as Record<string, unknown>);
  return resolve(packageDir, representationRelPath(m));
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * The directory of the package `name` as Node's resolution finds it from `fromDir`: first the package
 * `fromDir` is in, when it is `name` and has `exports` (Node's self-reference: a library's own folder,
 * where its name is not installed), then each `node_modules/<name>` from there up (a package's
 * `exports` need not expose its package.json).
 */
export function findPackageDir(name: string, fromDir: string): string | undefined {
  for (let d = resolve(fromDir); ; d = dirname(d)) {
    // The nearest package.json is the package scope (node_modules folders are not scopes of their own).
    if (basename(d) === 'node_modules') break;
    const manifest = join(d, 'package.json');
    if (!existsSync(manifest)) {
      if (dirname(d) === d) break;
      continue;
    }
    try {
      const m = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown; exports?: unknown };
      if (m.name === name && m.exports !== undefined && m.exports !== null) return d;
    } catch {
      // an unreadable manifest is no scope Node could self-reference either
    }
    break;
  }
  for (let d = resolve(fromDir); ; d = dirname(d)) {
    const candidate = join(d, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(d) === d) return undefined;
  }
}
