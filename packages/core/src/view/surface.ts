/**
 * Module exports and surface identities. `ModuleExports` follows local exports, import bindings and
 * re-export chains (`export *`, `export { a as b } from`) to the declaring declaration, inside one
 * package; what leaves the package (a bare specifier) is recorded as `ext:<package>`, and what cannot
 * be followed stays unresolved — never guessed. Surfaces are the exports reachable from the manifest's
 * entry points.
 */
import type { Slice } from '../facts/slice.js';
import { resolveManifestTarget, resolveSpecifier } from './resolve.js';
import type { PackageInfo } from './package.js';
import { surfaceKey } from '../identity/identity.js';

/** file → declaration index → surface keys */
export type SurfaceMap = Map<string, Map<number, string[]>>;

export type Target = { file: string; decl: number };

export interface ExportTable {
  /** Exported name → declaring declarations. */
  names: Map<string, Target[]>;
  /** Exported name → packages it is re-exported from (`export { x } from 'pkg'`). */
  external: Map<string, Set<string>>;
  /**
   * The names of `external` reached through at least one path that is not type-only (`import type`,
   * `export type … from`, a `type` binding): a name of `external` not here is only another package's
   * type (`export type { NextApiHandler } from 'next'`), with no runtime value in this package.
   */
  externalValue: Set<string>;
  /** Packages re-exported wholesale (`export * from 'pkg'`): any name may come from them. */
  starExternal: Set<string>;
  /** Relative re-exports that resolve to no file of the package. */
  unresolved: Set<string>;
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
export function packageOfSpecifier(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const isRelative = (spec: string) => spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..';

export class ModuleExports {
  private readonly files: Set<string>;
  private readonly memo = new Map<string, ExportTable>();
  /** (directory of the importing file, specifier) → resolved file, or null: a view resolves the same pairs many times. */
  private readonly resolved = new Map<string, string | null>();

  /**
   * @param files the package's files, for resolving specifiers, when `slices` holds only some of them
   *   (the codegraph loads another package's slices on demand); default: the keys of `slices`.
   */
  constructor(
    private readonly slices: Map<string, Slice>,
    files?: ReadonlySet<string>,
  ) {
    this.files = new Set(files ?? slices.keys());
  }

  resolve(fromFile: string, specifier: string): string | undefined {
    const slash = fromFile.lastIndexOf('/');
    const key = `${slash < 0 ? '' : fromFile.slice(0, slash)}\u0000${specifier}`;
    let hit = this.resolved.get(key);
    if (hit === undefined) {
      hit = resolveSpecifier(fromFile, specifier, this.files) ?? null;
      this.resolved.set(key, hit);
    }
    return hit ?? undefined;
  }

  exportsOf(file: string, visiting = new Set<string>()): ExportTable {
    const cached = this.memo.get(file);
    if (cached) return cached;
    const out: ExportTable = { names: new Map(), external: new Map(), externalValue: new Set(), starExternal: new Set(), unresolved: new Set() };
    const slice = this.slices.get(file);
    if (!slice || visiting.has(file)) return out;
    visiting.add(file);
    const add = (name: string, targets: Target[]) => {
      if (!targets.length) return;
      const list = out.names.get(name) ?? [];
      for (const t of targets) if (!list.some((x) => x.file === t.file && x.decl === t.decl)) list.push(t);
      out.names.set(name, list);
    };
    const addExternal = (name: string, pkg: string, value: boolean) => {
      const set = out.external.get(name) ?? new Set<string>();
      set.add(pkg);
      out.external.set(name, set);
      if (value) out.externalValue.add(name);
    };
    const topLevelByName = (name: string): Target[] =>
      slice.decls.flatMap((d, i) => (d.parent === -1 && d.name === name ? [{ file, decl: i }] : []));
    slice.decls.forEach((d, i) => {
      if (d.parent === -1 && d.exportedAs) for (const name of d.exportedAs) add(name, [{ file, decl: i }]);
    });
    for (const ex of slice.exports) {
      const local = topLevelByName(ex.local);
      if (local.length) {
        add(ex.exported, local);
        continue;
      }
      for (const imp of slice.imports) {
        const b = imp.bindings.find((x) => x.local === ex.local);
        if (!b) continue;
        const value = !imp.typeOnly && !b.typeOnly;
        if (!isRelative(imp.specifier)) {
          addExternal(ex.exported, packageOfSpecifier(imp.specifier), value);
          continue;
        }
        const target = this.resolve(file, imp.specifier);
        if (!target) {
          out.unresolved.add(imp.specifier);
          continue;
        }
        const theirs = this.exportsOf(target, visiting);
        if (b.imported === '*') {
          // `import * as ns; export { ns }`: the namespace exposes everything the target exports.
          for (const ts of theirs.names.values()) add(ex.exported, ts);
        } else {
          add(ex.exported, theirs.names.get(b.imported) ?? []);
          for (const p of theirs.external.get(b.imported) ?? []) addExternal(ex.exported, p, value && theirs.externalValue.has(b.imported));
        }
      }
    }
    for (const re of slice.reexports) {
      if (!isRelative(re.specifier)) {
        const pkg = packageOfSpecifier(re.specifier);
        if (re.names === '*') out.starExternal.add(pkg);
        else for (const n of re.names) addExternal(n.exported, pkg, !re.typeOnly);
        continue;
      }
      const target = this.resolve(file, re.specifier);
      if (!target) {
        out.unresolved.add(re.specifier);
        continue;
      }
      const theirs = this.exportsOf(target, visiting);
      for (const u of theirs.unresolved) out.unresolved.add(u);
      if (re.names === '*') {
        for (const [name, ts] of theirs.names) if (name !== 'default' && !out.names.has(name)) add(name, ts);
        for (const [name, ps] of theirs.external) if (name !== 'default') for (const p of ps) addExternal(name, p, !re.typeOnly && theirs.externalValue.has(name));
        for (const p of theirs.starExternal) out.starExternal.add(p);
      } else {
        for (const n of re.names) {
          if (n.imported === '*') {
            for (const ts of theirs.names.values()) add(n.exported, ts);
            continue;
          }
          add(n.exported, theirs.names.get(n.imported) ?? []);
          for (const p of theirs.external.get(n.imported) ?? []) addExternal(n.exported, p, !re.typeOnly && theirs.externalValue.has(n.imported));
        }
      }
    }
    visiting.delete(file);
    this.memo.set(file, out);
    return out;
  }
}

export interface Surfaces {
  byDecl: SurfaceMap;
  /** Entry subpath → its export table (what consumers of that entry can import). */
  entries: Map<string, ExportTable>;
  /** Manifest entries whose target file is not in the tree. */
  missingEntries: string[];
}

export function computeSurfaces(pkg: PackageInfo, modules: ModuleExports, files: ReadonlySet<string>, outDirs: string[]): Surfaces {
  const byDecl: SurfaceMap = new Map();
  const entries = new Map<string, ExportTable>();
  const missingEntries: string[] = [];
  for (const entry of pkg.entries) {
    const file = entry.targets.map((t) => resolveManifestTarget(t, files, outDirs)).find((f) => f !== undefined);
    if (!file) {
      missingEntries.push(entry.subpath);
      continue;
    }
    const table = modules.exportsOf(file);
    entries.set(entry.subpath, table);
    for (const [name, targets] of table.names) {
      const key = surfaceKey({ package: pkg.name, entry: entry.subpath, name });
      for (const t of targets) {
        const perFile = byDecl.get(t.file) ?? new Map<number, string[]>();
        const list = perFile.get(t.decl) ?? [];
        if (!list.includes(key)) list.push(key);
        perFile.set(t.decl, list);
        byDecl.set(t.file, perFile);
      }
    }
  }
  for (const perFile of byDecl.values()) for (const list of perFile.values()) list.sort();
  return { byDecl, entries, missingEntries };
}
