/**
 * One workspace at one state — the working tree, or a git tree object read without a checkout
 * (`WorkspaceView.at`, workspace/tree.ts): its packages (workspace/discover.ts), its lockfile (read on first use), and — prepared on
 * demand, each package once — every package's tsconfig view, its digest report (view/digest-tree.ts,
 * through the store and one shared digest pool), and what its sources reach beyond named imports
 * (view/reach.ts: the cross-package resolution). Keys (key/) are computed on top of a view; a view
 * knows nothing of keys.
 *
 * Invariants:
 * - a package is prepared at most once per view, whoever asks first; `load` reaches a fixpoint: every
 *   package a loaded package depends on, or reaches without a named import, is loaded too;
 * - every parse goes through the store, and through the view's pool but for the files of other
 *   packages the codegraph's checker asks for synchronously that the store did not hold (view/
 *   foreign.ts: extracted on the calling thread, then written to the store). The pool starts only when
 *   more files miss the store than are worth digesting on the calling thread (the usual warm run after
 *   an edit: one or a few files; booting a worker would cost ~1–2 s), and `close` ends it;
 * - nothing read here depends on where the workspace is: reports and reach are workspace-relative;
 * - every file is read through the view's FileTree: a view of a git tree is the same computation as
 *   a view of a checkout of it (its digests through a store view of their own, blob ids known up front);
 * - what the codegraph reads of other packages comes from here too: the packages by name with their
 *   entries and output folders (`packageInfos`, read once per view), and files of other packages
 *   located and sliced through the view's store (and pool) (`foreign`, view/foreign.ts).
 */
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { Slice } from '../facts/slice.js';
import { defaultStoreDir, type GitViewState } from '../store/format.js';
import { DEFAULT_MAX_FILE_SIZE } from '../parse/decode.js';
import { DIGEST_SCHEMA } from '../version.js';
import { createDigestPool, defaultWorkerCount, type DigestPool } from '../pool/pool.js';
import digestFile from '../pool/worker.js';
import { typescript } from '../parse/typescript.js';
import { discoverWorkspace, type WorkspaceProject } from '../workspace/discover.js';
import { readLockfile, type Lockfile } from '../workspace/lockfile.js';
import { GitTree, worktree, type FileTree } from '../workspace/tree.js';
import { findTsconfig, readTsconfig, type TsconfigView } from '../workspace/tsconfig.js';
import { digestTree } from './digest-tree.js';
import { buildOutputDirs } from './files.js';
import { ForeignFiles } from './foreign.js';
import { readPackageInfo, type PackageInfo } from './package.js';
import { computeReach, createReachCaches, type ReachCaches, type ReachPackage, type ReachResult } from './reach.js';
import type { DigestReport } from './report.js';

export interface WorkspaceViewOptions {
  /** Store directory; `false` disables the store. Default: KILN_STORE or the user cache dir. */
  store?: string | false;
  /** Digest worker threads; 0 digests on the calling thread. Default: the machine's, started lazily. */
  workers?: number;
  /** Preferred tsconfig per project root (relative to it); default: tsconfig.lib.json, .build, tsconfig.json. */
  tsconfigs?: Record<string, string>;
  /** Where the files are read from; default the working tree (`WorkspaceView.at` reads a git revision). */
  tree?: FileTree;
  /** With a git `tree`: the store's git view its digests are kept under (digest-tree.ts `gitView`). */
  gitView?: GitViewState;
}

/** A package as the view holds it. */
export interface PackageView {
  project: WorkspaceProject;
  /** Absent for a package without a readable manifest or without a tsconfig (not a TypeScript library kiln reads). */
  tsconfig?: TsconfigView;
  report?: DigestReport;
  /** What its sources reach beyond named imports; set once every package it reaches is prepared. */
  reach?: ReachResult;
  diagnostics: Diagnostic[];
}

/** A workspace package as the codegraph resolves bare specifiers to it: its manifest's entries and build output folders. */
export interface PackageEntries {
  /** Absolute directory. */
  root: string;
  info: PackageInfo;
  outDirs: string[];
}

/** Names of the workspace packages a project depends on: manifest dependencies of any kind, sorted. */
export function workspaceDependencyNames(p: WorkspaceProject, byName: ReadonlyMap<string, WorkspaceProject>): string[] {
  const m = p.manifest ?? {};
  const names = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const n of Object.keys((m[field] as Record<string, unknown> | undefined) ?? {})) if (byName.has(n) && n !== p.name) names.add(n);
  }
  return [...names].sort();
}

/** Misses digested on the calling thread before a pool is started. */
const INLINE_MISSES = 16;

export class WorkspaceView {
  readonly byName: ReadonlyMap<string, WorkspaceProject>;
  private readonly prepared = new Map<string, PackageView>();
  private readonly preparing = new Map<string, Promise<PackageView>>();
  /** The packages loaded so far (what `load` was asked for, their dependencies and what they reach). */
  private readonly loaded = new Map<string, WorkspaceProject>();
  private pool: DigestPool | undefined;
  private inlineLeft: number;
  private entries: Promise<Map<string, PackageEntries>> | undefined;
  /** The digest pool the view's trees share (lazy: see INLINE_MISSES). */
  readonly digestPool: DigestPool;

  /** Where this view's files are read from. */
  readonly tree: FileTree;

  private constructor(
    readonly root: string,
    readonly kind: string,
    readonly projects: readonly WorkspaceProject[],
    private readonly discoveryDiagnostics: readonly Diagnostic[],
    private readonly options: WorkspaceViewOptions,
  ) {
    this.byName = new Map(projects.map((p) => [p.name, p]));
    this.tree = options.tree ?? worktree;
    const threads = Math.max(1, options.workers ?? defaultWorkerCount());
    this.inlineLeft = options.workers === undefined ? INLINE_MISSES : 0;
    this.digestPool = {
      threads,
      run: (task) => (!this.pool && this.inlineLeft-- > 0 ? digestFile(task) : (this.pool ??= createDigestPool(threads)).run(task)),
      destroy: async () => undefined,
    };
  }

  /** The workspace at `root` as it is on disk now: its packages (nothing is digested yet; the lockfile is read on first use). */
  static async open(root: string, options: WorkspaceViewOptions = {}): Promise<WorkspaceView> {
    const ws = await discoverWorkspace(root, options.tree);
    return new WorkspaceView(root, ws.kind, ws.projects, [...(options.tree?.diagnostics ?? []), ...ws.diagnostics], options);
  }

  /**
   * The workspace at `root` as git revision `rev` has it (a commit, tag or tree), read from git
   * objects: no checkout, nothing written to the working tree. Installed dependencies are read from
   * disk (workspace/tree.ts). Throws KILN_GIT_REF_UNKNOWN / KILN_GIT_UNAVAILABLE.
   */
  static at(root: string, rev: string, options: Omit<WorkspaceViewOptions, 'tree'> = {}): Promise<WorkspaceView> {
    return WorkspaceView.open(root, { ...options, tree: GitTree.open(root, rev) });
  }

  /**
   * The same workspace state read through another store or pool: discovery and the packages' entries
   * (`packageInfos`) are shared with this view, everything digested is the new view's own (a report
   * belongs to the store it was read through). The tree and tsconfig choices stay this view's.
   */
  withOptions(options: Pick<WorkspaceViewOptions, 'store' | 'workers'>): WorkspaceView {
    const { store: _s, workers: _w, ...rest } = this.options;
    const view = new WorkspaceView(this.root, this.kind, this.projects, this.discoveryDiagnostics, { ...rest, ...options });
    view.entries = this.entries;
    return view;
  }

  /** A view of no packages at `root` (no workspace found, or it could not be discovered): its store and pool only. */
  static empty(root: string, options: WorkspaceViewOptions = {}): Promise<WorkspaceView> {
    return Promise.resolve(new WorkspaceView(root, 'single', [], [], options));
  }

  private lockfileRead: Promise<Lockfile> | undefined;
  private lockfileValue: Lockfile | undefined;

  /**
   * The workspace's lockfile, read once, on first use: keys need it (resolved versions and closures);
   * a graph export never asks, and a large pnpm lockfile costs ~0.1 s to parse.
   */
  lockfile(): Promise<Lockfile> {
    return (this.lockfileRead ??= readLockfile(this.root, this.tree).then((l) => (this.lockfileValue = l)));
  }

  /** Discovery's diagnostics, and the lockfile's once it was read (it reports some as it is used). */
  get diagnostics(): Diagnostic[] {
    return [...this.discoveryDiagnostics, ...(this.lockfileValue?.diagnostics ?? [])];
  }

  /**
   * End the digest pool, if one was started. The view's packages stay readable; a view used again
   * (kept between exports, view/kept-views.ts) digests its next few misses inline again.
   */
  async close(): Promise<void> {
    // Unset first: a task asked for meanwhile (another reading of a kept view) starts a new pool.
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
    if (this.options.workers === undefined) this.inlineLeft = INLINE_MISSES;
  }

  /**
   * The workspace packages by name with their entries and build output folders, read once per view:
   * in discovery order, the first of a name wins; a package without a readable, valid manifest is left out.
   */
  packageInfos(): Promise<ReadonlyMap<string, PackageEntries>> {
    return (this.entries ??= (async () => {
      const out = new Map<string, PackageEntries>();
      for (const p of this.projects) {
        const root = join(this.root, p.root);
        const info = await readPackageInfo(root, this.tree);
        if (!info.found || info.invalid) continue;
        if (!out.has(info.name)) out.set(info.name, { root, info, outDirs: await buildOutputDirs(root, this.tree) });
      }
      return out;
    })());
  }

  /**
   * Files of other packages for one reading (a graph export): located, and sliced through the view's
   * store and pool, or for the checker looked up in the store and extracted on demand (view/foreign.ts).
   * One per reading: its per-file caches assume files stand still.
   */
  foreign(options: { maxFileSize?: number; memory?: Map<string, Slice> } = {}): ForeignFiles {
    // The codegraph reads the working tree; its locator reads files from disk.
    if (this.tree !== worktree) throw new Error(`WorkspaceView.foreign: a view of ${this.tree.label} has no foreign-file reader (the codegraph reads the working tree)`);
    const storeDir = this.options.store === false ? null : this.options.store ?? defaultStoreDir();
    return new ForeignFiles({
      storeDir,
      schema: DIGEST_SCHEMA,
      maxFileSize: options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE,
      ...(this.options.workers === 0 ? {} : { pool: this.digestPool }),
      ...(options.memory ? { memory: options.memory } : {}),
    });
  }

  /** Prepared packages by root. */
  get packages(): ReadonlyMap<string, PackageView> {
    return this.prepared;
  }

  /** A prepared package, by root. */
  packageAt(root: string): PackageView | undefined {
    return this.prepared.get(root);
  }

  /** The digest report of a workspace package, by name, if it is prepared and has one. */
  reportOf(name: string): DigestReport | undefined {
    return this.prepared.get(this.byName.get(name)?.root ?? '')?.report;
  }

  /** Whether `load` has taken this package in. */
  isLoaded(root: string): boolean {
    return this.loaded.has(root);
  }

  /** Names of workspace packages a project depends on: manifest dependencies of any kind. */
  dependencyNames(p: WorkspaceProject): string[] {
    return workspaceDependencyNames(p, this.byName);
  }

  /** Prepare one package (once): its tsconfig view and its digest report. */
  prepare(p: WorkspaceProject): Promise<PackageView> {
    const existing = this.preparing.get(p.root);
    if (existing) return existing;
    const job = (async (): Promise<PackageView> => {
      const out: PackageView = { project: p, diagnostics: [] };
      if (!p.manifest) return out;
      const dir = join(this.root, p.root);
      const configFile = findTsconfig(dir, this.options.tsconfigs?.[p.root], this.tree);
      if (!configFile) return out;
      out.tsconfig = readTsconfig(this.root, p.root, configFile, { tree: this.tree });
      for (const e of out.tsconfig.errors) {
        out.diagnostics.push(diagnostic('KILN_TSCONFIG_INVALID', e, { file: posix.join(p.root, configFile), producer: 'key' }));
      }
      if (out.tsconfig.unknownOptions.length) {
        const names = out.tsconfig.unknownOptions.map((o) => `'${o}'`).join(', ');
        out.diagnostics.push(diagnostic('KILN_TSCONFIG_UNKNOWN_OPTION', `${names}: not an option of TypeScript ${typescript().version}; keyed by its raw value`, { file: posix.join(p.root, configFile), producer: 'key' }));
      }
      out.report = await this.digest(dir, out.tsconfig.fileNames);
      this.prepared.set(p.root, out);
      return out;
    })();
    this.preparing.set(p.root, job);
    return job;
  }

  /** Digest these files of a directory through the view's store and pool. */
  digest(dir: string, files: string[]): Promise<DigestReport> {
    return digestTree(dir, {
      files,
      ...(this.options.store !== undefined ? { store: this.options.store } : {}),
      ...(this.options.workers === 0 ? { workers: 0 } : { pool: this.digestPool }),
      ...(this.tree !== worktree ? { tree: this.tree, ...(this.options.gitView ? { gitView: this.options.gitView } : {}) } : {}),
    });
  }

  /**
   * Load packages: prepare each, every workspace package it depends on (transitively), and what their
   * sources reach beyond named imports — a package reached only that way is loaded too (with its own
   * dependencies), and every reach is computed again, since whether a reached file is one of a
   * package's sources depends on that package's report. `onProgress` counts the first round.
   */
  async load(projects: Iterable<WorkspaceProject>, onProgress?: (done: number, total: number) => void): Promise<void> {
    for (const p of projects) this.include(p);
    let done = 0;
    const first = [...this.loaded.values()];
    await Promise.all(
      first.map(async (p) => {
        await this.prepare(p);
        onProgress?.(++done, first.length);
      }),
    );
    for (;;) {
      const packages = this.reachPackages();
      const caches = createReachCaches(this.tree);
      const more: WorkspaceProject[] = [];
      for (const prep of this.prepared.values()) {
        if (!prep.report || !prep.tsconfig) continue;
        prep.reach = this.reach(prep.project.root, prep.report, prep.tsconfig, caches, packages);
        for (const name of prep.reach.packages.keys()) {
          const q = this.byName.get(name);
          if (q && !this.loaded.has(q.root)) more.push(q);
        }
      }
      if (!more.length) break;
      const before = this.loaded.size;
      more.forEach((q) => this.include(q));
      await Promise.all([...this.loaded.values()].map((q) => this.prepare(q)));
      if (this.loaded.size === before) break;
    }
  }

  /** Take a package and the workspace packages it depends on into what is loaded (not prepared yet). */
  include(p: WorkspaceProject): void {
    if (this.loaded.has(p.root)) return;
    this.loaded.set(p.root, p);
    for (const dep of this.dependencyNames(p)) this.include(this.byName.get(dep)!);
  }

  /** Prepare every package taken in by `include` that is not prepared yet. */
  async prepareIncluded(): Promise<void> {
    await Promise.all([...this.loaded.values()].map((p) => this.prepare(p)));
  }

  /** The workspace's packages as reach sees them: roots, outputs and, where prepared, their sources. */
  reachPackages(): ReachPackage[] {
    return this.projects.map((p) => {
      const prep = this.prepared.get(p.root);
      const outputs = [prep?.tsconfig?.options.outDir, prep?.tsconfig?.options.declarationDir].filter((o): o is string => typeof o === 'string');
      return { name: p.name, root: p.root, outputs, ...(prep?.report ? { sources: new Set(prep.report.files.map((f) => f.path)) } : {}) };
    });
  }

  /** What a report's sources reach beyond named imports, resolved with a tsconfig view (view/reach.ts). */
  reach(root: string, report: DigestReport, tsconfig: TsconfigView, caches: ReachCaches = createReachCaches(this.tree), packages = this.reachPackages()): ReachResult {
    return computeReach(this.root, root, report, tsconfig, packages, (name) => this.reportOf(name), caches);
  }

  /** Resolution for a JavaScript project without a tsconfig: what bundlers do (exports conditions, extensions, JSON). */
  bundlerTsconfig(root: string): TsconfigView {
    const ts = typescript();
    return {
      configFile: '',
      options: {},
      optionsDigest: '',
      fileNames: [],
      outsideFiles: [],
      errors: [],
      unknownOptions: [],
      references: [],
      compiler: {
        options: { allowJs: true, checkJs: false, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, resolveJsonModule: true, allowArbitraryExtensions: true },
        projectReferences: [],
        configPath: join(this.root, root, 'tsconfig.json'),
      },
    };
  }
}
