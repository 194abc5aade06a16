/**
 * The public surface a representation is keyed by, from kiln's own facts (SPEC §7, RFC 123): every
 * surface identity the manifest's entry points export, each with the identity of the declaration
 * that declares it, its kind and the entry it is reached through.
 *
 * Invariants:
 * - nothing is re-derived by name: the digest report (view/digest-tree.ts) records, on each
 *   declaration, its identity and the surface identities that reach it (view/surface.ts follows
 *   aliases, re-exports and facades to the declaring declaration), and the entries' export tables
 *   (`computeSurfaces` over the same slices) say which names leave the package (`export { x } from
 *   'other-pkg'`): those are foreign, never matched to a same-named local declaration;
 * - several surfaces may share one declaring identity (an alias, a re-export, a facade);
 * - the result is sorted by surface in code-point order and holds no absolute path.
 */
import type { DeclKind, Slice } from '../facts/slice.js';
import { digestTree } from '../view/digest-tree.js';
import { buildOutputDirs } from '../view/files.js';
import { readPackageInfo, type PackageInfo } from '../view/package.js';
import type { DeclarationRecord, DigestReport } from '../view/report.js';
import { resolveManifestTarget } from '../view/resolve.js';
import { computeSurfaces, ModuleExports } from '../view/surface.js';
import { surfaceKey } from '../identity/identity.js';

/** Kinds that have no runtime value in the built JavaScript. */
const TYPE_KINDS: ReadonlySet<DeclKind> = new Set<DeclKind>(['interface', 'type']);

/**
 * Which of several declarations one name reaches declares its runtime value (a merged `interface X`
 * + `const X`, a namespace merged into a function or class, overloads): value kinds first, in this
 * order; ties by identity key, so the choice never depends on file or traversal order.
 */
const KIND_RANK: readonly DeclKind[] = ['class', 'function', 'enum', 'variable', 'export-default', 'export-equals', 'namespace', 'const-enum', 'interface', 'type'];
const rank = (k: DeclKind) => {
  const i = KIND_RANK.indexOf(k);
  return i < 0 ? KIND_RANK.length : i;
};

export interface SurfaceDeclaring {
  identity: string;
  kind: DeclKind;
  /** Package-relative source file (provenance only). */
  file: string;
  /** Declaration path in its module (`add`, `default`); a module-level declaration's local name. */
  path: string;
  moduleLevel: boolean;
  /** Every declaration the name reaches is an interface or type alias. */
  typeOnly: boolean;
}

export interface SurfaceItem {
  /** Surface identity (`@scope/pkg#name`, `@scope/pkg/sub#name`). */
  surface: string;
  /** Manifest entry subpath (`.`, `./sub`). */
  entry: string;
  /** Exported name. */
  name: string;
  /** Declared in this package. */
  declaring?: SurfaceDeclaring;
  /** Re-exported from these packages (declared there): set exactly when `declaring` is not. */
  foreign?: string[];
  /** With `foreign`: every path re-exporting it is type-only (`export type { X } from 'pkg'`). */
  foreignTypeOnly?: boolean;
  /** Package-relative source file of the entry (for details). */
  entrySource: string;
}

export interface PublicSurface {
  pkg: PackageInfo;
  outDirs: string[];
  items: SurfaceItem[];
  /** Entries whose export tables re-export whole other packages (`export * from 'pkg'`): names not enumerable here. */
  starForeign: { entry: string; packages: string[]; entrySource: string }[];
  /** Manifest entries that name no source of the tree (their names are unknown). */
  missingEntries: string[];
  report: DigestReport;
}

export interface SurfaceOptions {
  /** Store directory; `false` disables the store (digest-tree.ts). */
  store?: string | false;
  /** Digest worker threads; 0 digests on the calling thread. */
  workers?: number;
}

/** The public surface of the package at `packageRoot` (absolute), from its digest report. */
export async function readPublicSurface(packageRoot: string, options: SurfaceOptions = {}): Promise<PublicSurface> {
  let slices: ReadonlyMap<string, Slice> = new Map();
  const [pkg, outDirs] = await Promise.all([readPackageInfo(packageRoot), buildOutputDirs(packageRoot)]);
  const report = await digestTree(packageRoot, {
    closures: false,
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    onSlices: (s) => (slices = s),
  });
  // The entries' export tables over the very slices the report was assembled from: the report keeps
  // only the packages an entry re-exports from, not which names.
  const surfaces = computeSurfaces(pkg, new ModuleExports(slices as Map<string, Slice>), new Set(slices.keys()), outDirs);

  const bySurface = new Map<string, DeclarationRecord[]>();
  for (const d of report.declarations) for (const s of d.surface) (bySurface.get(s) ?? bySurface.set(s, []).get(s)!).push(d);

  // The source each entry maps to: the file whose export table computeSurfaces read.
  const files = new Set(slices.keys());
  const entrySources = new Map(pkg.entries.map((e) => [e.subpath, e.targets.map((t) => resolveManifestTarget(t, files, outDirs)).find((f) => f !== undefined) ?? '']));

  const items: SurfaceItem[] = [];
  const starForeign: PublicSurface['starForeign'] = [];
  for (const [entry, table] of surfaces.entries) {
    const entrySource = entrySources.get(entry) ?? '';
    for (const name of table.names.keys()) {
      const surface = surfaceKey({ package: pkg.name, entry, name });
      const decls = bySurface.get(surface) ?? [];
      if (!decls.length) continue; // cannot happen: the report's surfaces come from the same tables
      const sorted = [...decls].sort((a, b) => rank(a.kind) - rank(b.kind) || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
      const first = sorted[0]!;
      items.push({ surface, entry, name, entrySource, declaring: { identity: first.identity, kind: first.kind, file: first.span.file, path: first.path, moduleLevel: !!first.module_level, typeOnly: sorted.every((d) => TYPE_KINDS.has(d.kind)) } });
    }
    for (const [name, pkgs] of table.external) {
      if (table.names.has(name)) continue;
      items.push({ surface: surfaceKey({ package: pkg.name, entry, name }), entry, name, entrySource, foreign: [...pkgs].sort(), ...(table.externalValue.has(name) ? {} : { foreignTypeOnly: true }) });
    }
    if (table.starExternal.size) starForeign.push({ entry, packages: [...table.starExternal].sort(), entrySource });
  }
  items.sort((a, b) => (a.surface < b.surface ? -1 : a.surface > b.surface ? 1 : 0));
  return { pkg, outDirs, items, starForeign, missingEntries: [...surfaces.missingEntries].sort(), report };
}
