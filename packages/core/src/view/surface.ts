/**
 * Surface identities: follow each manifest entry point through local exports, import bindings and
 * re-export chains (`export *`, `export { a as b } from`) to the declaring declaration. Aliases and
 * facades resolve to the declaring identity; what cannot be followed inside the package stays
 * unresolved.
 */
import type { Slice } from '../facts/slice.js';
import { resolveManifestTarget, resolveSpecifier } from './resolve.js';
import type { PackageInfo } from './package.js';
import { surfaceKey } from '../identity/identity.js';

/** file → declaration index → surface keys */
export type SurfaceMap = Map<string, Map<number, string[]>>;

type Target = { file: string; decl: number };

export function computeSurfaces(pkg: PackageInfo, slices: Map<string, Slice>, outDirs: string[]): SurfaceMap {
  const files = new Set(slices.keys());
  const memo = new Map<string, Map<string, Target[]>>();
  const result: SurfaceMap = new Map();

  function exportsOf(file: string, visiting: Set<string>): Map<string, Target[]> {
    const cached = memo.get(file);
    if (cached) return cached;
    const out = new Map<string, Target[]>();
    const slice = slices.get(file);
    if (!slice || visiting.has(file)) return out;
    visiting.add(file);
    const add = (name: string, targets: Target[]) => {
      if (!targets.length) return;
      const list = out.get(name) ?? [];
      for (const t of targets) if (!list.some((x) => x.file === t.file && x.decl === t.decl)) list.push(t);
      out.set(name, list);
    };
    const topLevelByName = (name: string): Target[] =>
      slice.decls.flatMap((d, i) => (d.parent === -1 && d.name === name ? [{ file, decl: i }] : []));
    slice.decls.forEach((d, i) => {
      if (d.parent === -1 && d.exportedAs) for (const name of d.exportedAs) add(name, [{ file, decl: i }]);
    });
    for (const ex of slice.exports) {
      const local = topLevelByName(ex.local);
      if (local.length) add(ex.exported, local);
      else {
        for (const imp of slice.imports) {
          const b = imp.bindings.find((x) => x.local === ex.local);
          if (!b || b.imported === '*') continue;
          const target = resolveSpecifier(file, imp.specifier, files);
          if (target) add(ex.exported, exportsOf(target, visiting).get(b.imported) ?? []);
        }
      }
    }
    for (const re of slice.reexports) {
      const target = resolveSpecifier(file, re.specifier, files);
      if (!target) continue;
      const theirs = exportsOf(target, visiting);
      if (re.names === '*') {
        for (const [name, ts] of theirs) if (name !== 'default' && !out.has(name)) add(name, ts);
      } else {
        for (const n of re.names) if (n.imported !== '*') add(n.exported, theirs.get(n.imported) ?? []);
      }
    }
    visiting.delete(file);
    memo.set(file, out);
    return out;
  }

  for (const entry of pkg.entries) {
    const file = entry.targets.map((t) => resolveManifestTarget(t, files, outDirs)).find((f) => f !== undefined);
    if (!file) continue;
    for (const [name, targets] of exportsOf(file, new Set())) {
      const key = surfaceKey({ package: pkg.name, entry: entry.subpath, name });
      for (const t of targets) {
        const byDecl = result.get(t.file) ?? new Map<number, string[]>();
        const list = byDecl.get(t.decl) ?? [];
        if (!list.includes(key)) list.push(key);
        byDecl.set(t.decl, list);
        result.set(t.file, byDecl);
      }
    }
  }
  for (const byDecl of result.values()) for (const list of byDecl.values()) list.sort();
  return result;
}
