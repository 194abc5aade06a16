/**
 * Import resolution for the codegraph: which file or package an import's specifier names. With a
 * tsconfig, the compiler's module resolution first (tsconfig `paths`, package `exports` through
 * node_modules links; with a program its own host, without one the answers kept per tsconfig,
 * checked.ts ResolutionMemo); what it does not place, kiln resolves itself: relative paths in the
 * package's tree, and workspace packages by name through their package.json `exports`/`main` (the
 * workspace view's packages, view/kept-views.ts). Where a resolved file belongs (this package's
 * module, another workspace package's, or an external package) is the builder's `placeOf`.
 *
 * Invariants: an answer is a function of the package's files, manifests and the workspace's files:
 * what is kept for the life of the process (workspace views by workspace root, resolution answers by
 * tsconfig) is validated before use (size and modification time of what it was read from) and never
 * changes an answer; `forgetGraphMemos` drops it. A bare specifier means the same file from every
 * importer; a relative one is resolved against its importer. No answer holds an absolute path that a
 * record could show: targets are module or package ids.
 */
import { statSync } from 'node:fs';
import { dirname, join, posix, resolve, sep } from 'node:path';
import type { Slice } from '../facts/slice.js';
import type { ImportNode, ImportForm } from './records.js';
import { packageId } from './records.js';
import { forgetKeptViews } from '../view/kept-views.js';
import { resolveManifestTarget, resolveInTree } from '../view/resolve.js';
import { packageOfSpecifier } from '../view/surface.js';
import type { PackageEntries } from '../view/workspace-view.js';
import { checkResolutionMemo, compilerResolve, createResolutionMemo, memoResolve, type LoadedConfig, type ResolutionMemo } from './checked.js';
import { inside } from './syntax.js';
import type { Builder } from './builder.js';

const toPosix = (p: string) => p.split(sep).join('/');

/** One specifier of one file: its import, re-export and dynamic import statements merged. */
export interface PendingImport {
  rel: string;
  specifier: string;
  forms: Set<ImportForm>;
  typeOnly: boolean;
  bindings: { imported: string; local: string; type_only: boolean }[];
  reexports: { imported: string; exported: string }[];
  reexportAll: boolean;
}

/** How a pending import resolved. */
export interface ImportAnswer {
  target: string | null;
  external: boolean;
  by: ImportNode['resolved_by'];
  /** The file a bare specifier resolved to: a file of this package, or another's (absolute). */
  found?: { own?: string; abs?: string };
}

/** Workspace packages by name, for bare specifiers kiln resolves itself (view/kept-views.ts). */
export type WorkspaceMap = ReadonlyMap<string, PackageEntries>;

/** The compiler's module resolution answers by tsconfig, for the life of the process (checked.ts ResolutionMemo). */
const resolutionMemos = new Map<string, ResolutionMemo>();

/**
 * Forget what this process keeps between exports outside sessions (workspace views, module resolution
 * answers): the next export reads everything again. Kept answers are validated before use, so this is
 * never needed for correctness; tests use it to compare with an export that remembers nothing.
 */
export function forgetGraphMemos(): void {
  forgetKeptViews();
  resolutionMemos.clear();
  processForeign.clear();
}

/**
 * Other packages' slices decoded in this process, by content (store/lookup.ts `contentKey`), for exports
 * without a session: a slice is a function of its content, so any later export may take it without a
 * store read. Bounded: past this many slices it starts again empty.
 */
const PROCESS_FOREIGN_LIMIT = 50_000;
const processForeign = new Map<string, Slice>();
export function processForeignSlices(): Map<string, Slice> {
  if (processForeign.size > PROCESS_FOREIGN_LIMIT) processForeign.clear();
  return processForeign;
}

/** The module resolution answers kept for a tsconfig (checked before the first is used). */
export function resolutionMemoOf(configPath: string): ResolutionMemo {
  let m = resolutionMemos.get(configPath);
  if (!m) {
    m = createResolutionMemo();
    resolutionMemos.set(configPath, m);
  }
  return m;
}

/** One export's import resolution: answers for its pending imports, with per-export caches. */
export class ImportResolver {
  /** Whether `resolutions` was checked against the file system in this export (once, before its first use). */
  private resolutionsChecked = false;
  private readonly bare = new Map<string, string | undefined>();
  private readonly isFile = new Map<string, boolean>();

  constructor(
    private readonly b: Builder,
    private readonly workspace: WorkspaceMap,
    /** Whose module resolution the compiler's answers come from: the program's, else the tsconfig's (none without a usable tsconfig). */
    private readonly compiler: LoadedConfig | undefined,
    /** The module resolution answers kept for this tsconfig; only without a program. */
    private readonly resolutions: ResolutionMemo | undefined,
  ) {}

  /** How a pending import resolved: its target, and the file behind a bare specifier. */
  answer(p: PendingImport): ImportAnswer {
    const b = this.b;
    const abs = join(b.root, p.rel);
    let target: string | null = null;
    let external = false;
    let by: ImportNode['resolved_by'] = 'none';
    const resolver = this.compiler;
    let compiled: string | undefined;
    if (resolver && this.resolutions && !b.loaded) {
      if (!this.resolutionsChecked) {
        checkResolutionMemo(this.resolutions, JSON.stringify([resolver.configPath, b.manifests]));
        this.resolutionsChecked = true;
      }
      compiled = memoResolve(resolver, this.resolutions, abs, p.specifier);
    } else if (resolver) compiled = compilerResolve(resolver, abs, p.specifier);
    const compiledPlace = compiled ? b.placeOf(compiled) : undefined;
    let file: string | undefined;
    if (compiledPlace) {
      by = 'compiler';
      external = compiledPlace.external;
      target = compiledPlace.external ? packageId(packageOfSpecifier(p.specifier)) : compiledPlace.moduleId;
      if (!compiledPlace.external) file = compiled;
    } else {
      const own = this.kilnResolve(p.rel, p.specifier);
      const ownPlace = own ? b.placeOf(own) : undefined;
      if (ownPlace && !ownPlace.external) {
        by = 'kiln';
        target = ownPlace.moduleId;
        file = own;
      } else if (!p.specifier.startsWith('.') && !p.specifier.startsWith('#') && !p.specifier.startsWith('/')) {
        by = 'kiln';
        const name = packageOfSpecifier(p.specifier);
        external = !this.workspace.has(name);
        target = packageId(name);
      }
    }
    let found: ImportAnswer['found'];
    if (file !== undefined && !p.specifier.startsWith('.')) {
      const ownRel = inside(b.root, file);
      found = ownRel !== undefined && b.slices.has(ownRel) ? { own: ownRel } : { abs: file };
    }
    return { target, external, by, found };
  }

  private kilnResolve(rel: string, specifier: string): string | undefined {
    if (specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') {
      const hit = this.b.modules.resolve(rel, specifier);
      if (hit) return join(this.b.root, hit);
      const abs = resolve(this.b.root, dirname(rel), specifier);
      const base = dirname(abs);
      const found = resolveInTree(posix.basename(toPosix(abs)), this.existsIn(base));
      return found ? join(base, found) : undefined;
    }
    if (specifier.startsWith('#') || specifier.startsWith('node:')) return undefined;
    // A bare specifier means the same file from every importer.
    if (this.bare.has(specifier)) return this.bare.get(specifier);
    const found = this.kilnResolveBare(specifier);
    this.bare.set(specifier, found);
    return found;
  }

  /** A set-like view of the files under a directory (stat once per path and export), for resolveInTree. */
  private existsIn(dir: string): ReadonlySet<string> {
    return {
      has: (p: string) => {
        const abs = join(dir, p);
        let v = this.isFile.get(abs);
        if (v === undefined) {
          try {
            v = statSync(abs).isFile();
          } catch {
            v = false;
          }
          this.isFile.set(abs, v);
        }
        return v;
      },
    } as ReadonlySet<string>;
  }

  private kilnResolveBare(specifier: string): string | undefined {
    const name = packageOfSpecifier(specifier);
    const ws = this.workspace.get(name);
    if (!ws) return undefined;
    const sub = `.${specifier.slice(name.length)}`;
    const entry = ws.info.entries.find((e) => e.subpath === sub);
    const inTree = this.existsIn(ws.root);
    if (entry) {
      for (const t of entry.targets) {
        const f = resolveManifestTarget(t, inTree, ws.outDirs);
        if (f) return join(ws.root, f);
      }
      return undefined;
    }
    if (sub !== '.' && !ws.info.entries.length) {
      const f = resolveInTree(sub.slice(2), inTree);
      if (f) return join(ws.root, f);
    }
    return undefined;
  }
}
