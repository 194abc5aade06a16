/**
 * Which built JavaScript file a manifest entry loads, for bundling payloads: the ESM build when there
 * is one (rollup reads ESM natively), else whatever the entry has, with its format. Read with the
 * rules kiln's build writes by (compile/package-layout.ts): `exports` conditions in object order
 * (`import`/`module`/`node`/`default` for ESM, `require`/`node`/`default` for CommonJS), `module`
 * and `main` for `.` without `exports`; a file's format from its extension, or for `.js` from the
 * nearest package.json `type` between it and the package root.
 *
 * Invariant: reads only the package's own files; paths returned are absolute, paths in messages are
 * package-relative.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fixedFormat, isInside, packageType, resolveConditions, splitOutputExt, type ModuleFormat } from '../compile/package-layout.js';

export type BuiltEntry =
  | { ok: true; file: string; rel: string; format: ModuleFormat }
  /** `paths`: the package-relative JavaScript paths the manifest names for the entry (for details). */
  | { ok: false; why: 'missing' | 'commonjs'; paths: string[] };

const ESM_CONDITIONS = new Set(['import', 'module', 'node']);
const CJS_CONDITIONS = new Set(['require', 'node']);

/** The built JavaScript of each entry subpath the manifest names. */
export function builtEntries(packageRoot: string, manifest: Record<string, unknown>, subpaths: string[]): Map<string, BuiltEntry> {
  const out = new Map<string, BuiltEntry>();
  for (const subpath of subpaths) out.set(subpath, builtEntry(packageRoot, manifest, subpath));
  return out;
}

function builtEntry(root: string, manifest: Record<string, unknown>, subpath: string): BuiltEntry {
  const exp = manifest.exports;
  const isMap = !!exp && typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
  const value = isMap ? (exp as Record<string, unknown>)[subpath] : subpath === '.' ? exp : undefined;
  const candidates: string[] = [];
  if (value !== undefined && value !== null) {
    for (const conditions of [ESM_CONDITIONS, CJS_CONDITIONS]) {
      const r = resolveConditions(value, conditions);
      if (typeof r === 'string') candidates.push(r);
    }
  } else if (subpath === '.') {
    for (const f of ['module', 'main']) if (typeof manifest[f] === 'string') candidates.push(manifest[f] as string);
    if (!candidates.length) candidates.push('index.js'); // Node's default main
  }
  const js = [...new Set(candidates.map((c) => c.replace(/^\.\//, '')))].filter((c) => splitOutputExt(c)?.kind === 'js');
  const found = js
    .map((rel) => ({ rel, file: resolve(root, rel) }))
    .filter((c) => isInside(c.file, root) && existsSync(c.file))
    .map((c) => ({ ...c, format: formatOf(root, manifest, c.file, c.rel) }));
  const esm = found.find((c) => c.format === 'esm');
  if (esm) return { ok: true, ...esm };
  if (found.length) return { ok: false, why: 'commonjs', paths: found.map((c) => c.rel) };
  return { ok: false, why: 'missing', paths: js };
}

function formatOf(root: string, manifest: Record<string, unknown>, file: string, rel: string): ModuleFormat {
  const fixed = fixedFormat(splitOutputExt(rel)!.ext);
  if (fixed) return fixed;
  // The nearest package.json scope (kiln's build writes `{"type": …}` into a layout of the other format).
  for (let dir = dirname(file); isInside(dir, root) && dir !== root; dir = dirname(dir)) {
    const p = join(dir, 'package.json');
    if (!existsSync(p)) continue;
    try {
      const type = (JSON.parse(readFileSync(p, 'utf8')) as { type?: unknown }).type;
      return type === 'module' ? 'esm' : 'cjs';
    } catch {
      break;
    }
  }
  return packageType(manifest) === 'module' ? 'esm' : 'cjs';
}
