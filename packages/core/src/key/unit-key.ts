/**
 * Unit keys (SPEC §4): the key of a project's `build` is a digest of what can reach its output —
 *   - its own declarations' semantic digests, doc digests (the `.d.ts` carries JSDoc), module layout
 *     and evaluation order, and the non-source files its sources import;
 *   - the external closure (surface) of each workspace dependency: what a consumer can observe, so a
 *     private body edit in a dependency does not move its dependents' keys;
 *   - the relevant manifest fields, the lockfile-resolved versions of the external packages its
 *     sources read and of the toolchain, each with the digest of its resolved transitive dependency
 *     closure in the lockfile (workspace/lockfile.ts), and the emit-relevant tsconfig options.
 * Computable before any task runs, from sources alone; free of absolute paths (two clones agree).
 * A key is never computed from a guess: what cannot be resolved widens the key (a dependency whose
 * surface cannot be followed contributes all of itself).
 */
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { digestParts, sha256Hex } from '../digest/hash.js';
import type { DigestReport } from '../view/report.js';
import { computeClosures } from '../closure/closure.js';
import type { WorkspaceProject } from '../workspace/discover.js';
import { externalKeyPart, externalLabel, type ExternalClosure, type Lockfile } from '../workspace/lockfile.js';
import type { TsconfigView } from '../workspace/tsconfig.js';
import { manifestView, type ManifestView } from './manifest.js';
import { DIGEST_SCHEMA, EXTRACTOR_VERSION, KEY_SCHEMA } from '../version.js';
import { recordComponents } from './records.js';
import { createReachCaches, type ReachResult } from '../view/reach.js';
import { WorkspaceView, workspaceDependencyNames, type PackageView } from '../view/workspace-view.js';
import { saveCompilerCache } from '../parse/typescript.js';
import { computeToolKey, listToolInputs, splitToolInputs, toolOutputs, type ToolKeyComponents, type ToolTargetSpec } from './tool-key.js';
import { OpaquePackages, opaqueSurface } from './opaque.js';
import { worktree, type FileTree } from '../workspace/tree.js';
import { span } from '../trace/record.js';

export interface DependencySurface {
  /** Digest of what a consumer of the package can observe. */
  digest: string;
  /** `surface`: exports and their shape closures; `full`: everything (the surface could not be followed). */
  mode: 'surface' | 'full';
  reason?: string;
  /** Exported name (`entry#name`) → closure digest, for explaining what moved. */
  exports: Record<string, string>;
}

export interface KeyComponents {
  schema: number;
  project: string;
  root: string;
  target: 'build';
  toolchain: Record<string, string>;
  /** identity → `semantic|doc` (or `degraded:<content hash>`). */
  declarations: Record<string, string>;
  /** module identity → module digest (evaluation order, pragmas, top-level statements). */
  modules: Record<string, string>;
  /** Non-source inputs (imported assets, files included from outside the project) → content hash. */
  files: Record<string, string>;
  tsconfig: { file: string; digest: string; options: Record<string, unknown> } | null;
  manifest: { digest: string; fields: Record<string, unknown>; dependencies: string[]; devDependencies: string[] } | null;
  /** External package → lockfile-resolved version. */
  externals: Record<string, string>;
  /**
   * External package → its resolved transitive dependency closure (what the lockfile installs under it:
   * a type re-exported from a dependency of a dependency reaches the `.d.ts`). Absent for an external
   * that is neither in the lockfile nor installed. Records made before key schema 3 have none.
   */
  closures?: Record<string, ClosureView>;
  /** Workspace dependency → its surface. */
  dependencies: Record<string, DependencySurface>;
  /**
   * What the build reaches without a named import of a workspace package (view/reach.ts): request →
   * what it landed on (`file:…`, `package:…`, `external:…`, `unresolved`). Files reached are in
   * `files`, packages in `dependencies`, external packages in `externals`.
   */
  reach: Record<string, string>;
}

/** An external's closure as a key records it. */
export type ClosureView = ExternalClosure;

/** The key material of closures: their digests. */
export function closureDigests(closures: Record<string, ClosureView> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(closures ?? {}).map(([k, v]) => [k, v.digest]));
}

/** The key of a target kiln does not run. */
export interface ToolTargetKey {
  key: string;
  components: ToolKeyComponents;
  /** Folders the key never reads (the target's outputs), project-relative. */
  outputs: string[];
}

export interface ProjectKey {
  project: string;
  root: string;
  /** The build key, or null when the project cannot be built (no tsconfig, unreadable manifest). */
  key: string | null;
  components: KeyComponents | null;
  /** Keys of the targets kiln does not run (`options.targets`), by target name (key/tool-key.ts). */
  targets?: Record<string, ToolTargetKey>;
  /** What this project offers its dependents. */
  surface: DependencySurface | null;
  diagnostics: Diagnostic[];
  stats: { files: number; parsed: number };
}

export interface WorkspaceKeys {
  kind: string;
  projects: ProjectKey[];
  diagnostics: Diagnostic[];
  stats: { projects: number; files: number; parsed: number; ms: number };
}

export interface WorkspaceKeyOptions {
  store?: string | false;
  workers?: number;
  /** Only these project roots (relative); default: every project of the workspace. */
  roots?: string[];
  /** Preferred tsconfig per project root (relative to it); default: tsconfig.lib.json, .build, tsconfig.json. */
  tsconfigs?: Record<string, string>;
  onProgress?: (done: number, total: number) => void;
  /** Record each key's components under node_modules/.cache/kiln (for `kiln explain-miss`). */
  record?: boolean;
  /**
   * Targets kiln does not run but keys (a script, a command, another executor), per project root:
   * each gets a key over everything its tool can read (key/tool-key.ts).
   */
  targets?: Record<string, ToolTargetSpec[]>;
  /**
   * The state keyed: the working tree (default) or a git tree (workspace/tree.ts), for keys of a
   * revision without a checkout (`kiln affected`). Tool keys (`targets`) read the working tree only.
   */
  tree?: FileTree;
  /**
   * Compute on this view (its state, store and tree) instead of opening one: a caller that already
   * loaded the workspace (`kiln affected`) does not read it twice. It is closed (its pool) as usual.
   */
  view?: WorkspaceView;
}

/** A package as keys see it: the view's package, and the inputs of its targets kiln does not run. */
interface Prepared extends PackageView {
  /** For targets kiln does not run: every source under the project (digested) and the other files, per target. */
  tool?: Map<string, { report: DigestReport; others: string[]; unreadableDirs: string[]; reach?: ReachResult }>;
}

/** Traced (trace/) as one `keys` span, the digests and store work inside. */
export function computeWorkspaceKeys(workspaceRoot: string, options: WorkspaceKeyOptions = {}): Promise<WorkspaceKeys> {
  return span('keys', () => computeWorkspaceKeysTraced(workspaceRoot, options));
}

async function computeWorkspaceKeysTraced(workspaceRoot: string, options: WorkspaceKeyOptions): Promise<WorkspaceKeys> {
  const t0 = performance.now();
  const tree = options.view?.tree ?? options.tree ?? worktree;
  if (tree !== worktree && options.targets && Object.keys(options.targets).length) throw new Error(`computeWorkspaceKeys: tool keys read the working tree; ${tree.label} was asked for`);
  const view = options.view ?? await WorkspaceView.open(workspaceRoot, {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.tsconfigs ? { tsconfigs: options.tsconfigs } : {}),
    ...(tree !== worktree ? { tree } : {}),
  });
  const lockfile = await view.lockfile();
  const byName = view.byName;
  const wanted = options.roots ? new Set(options.roots.map((r) => r || '.')) : undefined;
  const selected = view.projects.filter((p) => !wanted || wanted.has(p.root));
  const tools = new Map<string, NonNullable<Prepared['tool']>>();

  try {
    // Every project a wanted project depends on or reaches must be digested for its surface.
    await view.load(selected, options.onProgress);
    // Targets kiln does not run: everything under the project their tool can read.
    for (const p of selected) {
      const specs = options.targets?.[p.root];
      if (!specs?.length || !p.manifest) continue;
      const tool: NonNullable<Prepared['tool']> = new Map();
      tools.set(p.root, tool);
      const dir = join(workspaceRoot, p.root);
      for (const spec of specs) {
        const listed = await listToolInputs(dir, toolOutputs(spec, p.manifest, view.packageAt(p.root)?.tsconfig));
        const { sources, others } = splitToolInputs(listed.files);
        tool.set(spec.name, { report: await view.digest(dir, sources), others, unreadableDirs: listed.unreadableDirs });
      }
    }
    // What a tool target's sources reach beyond named imports (a config importing ../../vite.shared.ts,
    // a `paths` alias): resolved as for the build key, with the project's tsconfig or, for a JavaScript
    // project without one, the bundler resolution the tools use.
    const toolCaches = createReachCaches();
    for (const p of selected) {
      const tool = tools.get(p.root);
      if (!tool) continue;
      const packages = view.reachPackages();
      const tsconfig = view.packageAt(p.root)?.tsconfig ?? view.bundlerTsconfig(p.root);
      for (const t of tool.values()) {
        t.reach = view.reach(p.root, t.report, tsconfig, toolCaches, packages);
        for (const pkg of t.reach.packages.keys()) {
          const q = byName.get(pkg);
          if (q) view.include(q);
        }
      }
    }
    await view.prepareIncluded();
  } finally {
    await view.close();
  }

  const prepared = new Map<string, Prepared>();
  for (const [root, pv] of view.packages) prepared.set(root, pv);
  for (const [root, tool] of tools) prepared.set(root, { ...(prepared.get(root) ?? { project: view.projects.find((q) => q.root === root)!, diagnostics: [] }), tool });
  const opaque = new OpaquePackages(workspaceRoot, { ...(options.store !== undefined ? { store: options.store } : {}), ...(options.workers !== undefined ? { workers: options.workers } : {}), tree });
  const surfaces = new SurfaceCalculator(workspaceRoot, prepared, byName, lockfile, opaque, tree);
  const projects: ProjectKey[] = [];
  let files = 0;
  let parsed = 0;
  for (const p of view.projects) {
    if (wanted && !wanted.has(p.root)) continue;
    const prep = prepared.get(p.root) ?? { project: p, diagnostics: [] };
    const result = await projectKey(workspaceRoot, prep, byName, lockfile, surfaces, tree);
    if (options.record && result.key && result.components) await recordComponents(workspaceRoot, result.key, result.components).catch(() => undefined);
    for (const spec of options.targets?.[p.root] ?? []) {
      const tool = prep.tool?.get(spec.name);
      if (!tool || !p.manifest) continue;
      for (const d of tool.report.diagnostics) result.diagnostics.push({ ...d, ...(d.file ? { file: posix.join(p.root, d.file) } : {}) });
      for (const d of tool.unreadableDirs) {
        const at = posix.join(p.root, d);
        result.diagnostics.push(diagnostic('KILN_TOOL_INPUT_UNREADABLE', `${at}: the directory could not be listed; the ${spec.name} target's key never repeats (no cache hit) until it can be`, { file: at, producer: 'key' }));
      }
      const t = await computeToolKey({
        workspaceRoot,
        project: p,
        spec,
        report: tool.report,
        others: tool.others,
        unreadableDirs: tool.unreadableDirs,
        tsconfig: prep.tsconfig,
        lockfile,
        byName,
        deps: surfaces,
        workspaceDependencies: view.dependencyNames(p),
        ...(tool.reach ? { reach: tool.reach } : {}),
        keySchema: KEY_SCHEMA,
        toolchain: `key${KEY_SCHEMA}/extractor${EXTRACTOR_VERSION}/digest${DIGEST_SCHEMA}`,
      });
      (result.targets ??= {})[spec.name] = { ...t, outputs: toolOutputs(spec, p.manifest, prep.tsconfig) };
      if (options.record) await recordComponents(workspaceRoot, t.key, t.components).catch(() => undefined);
    }
    files += result.stats.files;
    parsed += result.stats.parsed;
    projects.push(result);
  }
  saveCompilerCache();
  return {
    kind: view.kind,
    projects,
    diagnostics: [...view.diagnostics, ...opaque.diagnostics(), ...surfaces.diagnostics],
    stats: { projects: projects.length, files, parsed, ms: Math.round(performance.now() - t0) },
  };
}

async function projectKey(
  workspaceRoot: string,
  prep: Prepared,
  byName: ReadonlyMap<string, WorkspaceProject>,
  lockfile: Lockfile,
  surfaces: SurfaceCalculator,
  tree: FileTree,
): Promise<ProjectKey> {
  const p = prep.project;
  const diagnostics = [...prep.diagnostics];
  const base = { project: p.name, root: p.root, diagnostics, stats: { files: 0, parsed: 0 } };
  if (!p.manifest) {
    diagnostics.push(diagnostic('KILN_MANIFEST_INVALID', `${posix.join(p.root, 'package.json')}: ${p.manifestError}; no build key`, { file: posix.join(p.root, 'package.json'), producer: 'key' }));
    return { ...base, key: null, components: null, surface: null };
  }
  if (!prep.tsconfig || !prep.report) {
    diagnostics.push(diagnostic('KILN_TSCONFIG_NOT_FOUND', `${p.root}: no tsconfig.lib.json, tsconfig.build.json or tsconfig.json; no build key`, { file: p.root, producer: 'key' }));
    return { ...base, key: null, components: null, surface: null };
  }
  const report = prep.report;
  base.stats = { files: report.stats.files, parsed: report.stats.parsed };
  for (const d of report.diagnostics) diagnostics.push({ ...d, ...(d.file ? { file: posix.join(p.root, d.file) } : {}) });

  const declarations: Record<string, string> = {};
  const contentHash = new Map(report.files.map((f) => [f.path, f.content_hash]));
  for (const d of report.declarations) {
    declarations[d.identity] = d.semantic_digest === null ? `degraded:${contentHash.get(d.span.file)}` : `${d.semantic_digest}|${d.doc_digest ?? ''}`;
  }
  const modules: Record<string, string> = {};
  for (const f of report.files) {
    modules[f.module.identity] = f.module.degraded ? `degraded:${f.content_hash}` : f.module.digest;
    // Documentation on statements that are not declarations (the `.d.ts` carries it).
    if (f.module.docs) modules[`${f.module.identity}#docs`] = f.module.docs;
  }
  // Source order the module digest leaves out but an output can show: the order of same-named
  // module-level declarations (overload signatures, merged interfaces: consumers resolve in that
  // order), and — when the project emits CommonJS, whose `exports.a = …` assignments follow the source
  // — the order of every module-level declaration.
  const cjs = emitsCommonJs(prep.tsconfig.options, p.manifest);
  for (const f of report.files) {
    const decls = report.declarations
      .filter((d) => d.module_level && d.span.file === f.path)
      .sort((x, y) => x.span.startLine - y.span.startLine || x.span.startColumn - y.span.startColumn);
    const byName = new Map<string, string[]>();
    for (const d of decls) {
      const name = d.path.replace(/(~[0-9a-f]{8})?(#\d+)?$/, '');
      (byName.get(name) ?? byName.set(name, []).get(name)!).push(d.identity);
    }
    for (const [name, ids] of byName) if (ids.length > 1) modules[`${f.module.identity}#order:${name}`] = digestParts('kiln-order/1', ids);
    if (cjs || /\.c[jt]s$/.test(f.path)) modules[`${f.module.identity}#cjs-order`] = digestParts('kiln-order/1', decls.map((d) => d.identity));
  }

  const files: Record<string, string> = {};
  for (const f of report.files) {
    for (const asset of f.asset_imports) files[asset] = await contentHashOf(tree, join(workspaceRoot, p.root, asset));
  }
  for (const outside of prep.tsconfig.outsideFiles) files[`/${outside}`] = await contentHashOf(tree, join(workspaceRoot, outside));

  const imported = new Set(report.files.flatMap((f) => f.external_packages));
  const manifest = manifestView(p.manifest, imported);
  const externals: Record<string, string> = {};
  const dependencies: Record<string, DependencySurface> = {};
  const wsDeps = new Set(workspaceDependencyNames(p, byName));
  for (const name of imported) if (byName.has(name) && name !== p.name) wsDeps.add(name);
  const externalNames = new Set<string>();
  for (const name of imported) if (!byName.has(name) && !isBuiltin(name)) externalNames.add(name);
  for (const name of manifest.devDependencies) if (!byName.has(name)) externalNames.add(name);
  // The JSX runtime package every JSX expression reads (`jsx: react-jsx`, `jsxImportSource`).
  const jsx = prep.tsconfig.options.jsx as number | undefined;
  if ((jsx === 4 || jsx === 5) && report.files.some((f) => /\.[jt]sx$/.test(f.path))) {
    const source = String(prep.tsconfig.options.jsxImportSource ?? 'react');
    if (byName.has(source)) wsDeps.add(source);
    else externalNames.add(source);
  }
  const typesOption = prep.tsconfig.options.types;
  if (Array.isArray(typesOption)) for (const t of typesOption) externalNames.add(String(t).startsWith('@') ? String(t) : `@types/${t}`);
  else for (const t of lockfile.ambientTypes()) externalNames.add(t);
  // What the build reaches without a named import (view/reach.ts): files by content, packages by
  // surface — or whole, where the build compiles their sources — and external packages by version.
  const reach: Record<string, string> = {};
  const wholeDeps = new Set<string>();
  if (prep.reach) {
    const targets = new Map<string, Set<string>>();
    for (const e of prep.reach.edges) (targets.get(e.request) ?? targets.set(e.request, new Set()).get(e.request)!).add(e.target);
    for (const [request, t] of targets) reach[request] = [...t].sort().join(' ');
    for (const [rel, hash] of prep.reach.files) files[`/${rel}`] = hash;
    for (const name of prep.reach.externals.keys()) if (!byName.has(name) && !isBuiltin(name)) externalNames.add(name);
    for (const [name, r] of prep.reach.packages) {
      if (name === p.name || !byName.has(name)) continue;
      wsDeps.add(name);
      if (r.mode === 'full') wholeDeps.add(name);
    }
  }
  const closures: Record<string, ClosureView> = {};
  for (const name of [...externalNames].sort()) {
    const part = await externalKeyPart(lockfile, name, p.root);
    externals[name] = part.version;
    if (part.closure) closures[name] = part.closure;
  }
  for (const name of [...wsDeps].sort()) dependencies[name] = wholeDeps.has(name) ? await surfaces.wholeOf(name) : await surfaces.surfaceOf(name);

  const toolchain: Record<string, string> = {
    kiln: `key${KEY_SCHEMA}/extractor${EXTRACTOR_VERSION}/digest${DIGEST_SCHEMA}`,
    typescript: (await lockfile.versionOf('typescript', p.root)) ?? 'unknown',
  };
  const components: KeyComponents = {
    schema: KEY_SCHEMA,
    project: p.name,
    root: p.root,
    target: 'build',
    toolchain,
    declarations: sortRecord(declarations),
    modules: sortRecord(modules),
    files: sortRecord(files),
    tsconfig: { file: prep.tsconfig.configFile, digest: prep.tsconfig.optionsDigest, options: prep.tsconfig.options },
    manifest: { digest: manifest.digest, fields: manifest.fields, dependencies: manifest.dependencies, devDependencies: manifest.devDependencies },
    externals,
    closures,
    dependencies,
    reach: sortRecord(reach),
  };
  return { ...base, key: keyOf(components), components, surface: await surfaces.surfaceOf(p.name) };
}

/** The key: a digest of the components, with dependency surfaces by digest only. */
export function keyOf(c: KeyComponents): string {
  const material = {
    schema: c.schema,
    target: c.target,
    toolchain: c.toolchain,
    declarations: c.declarations,
    modules: c.modules,
    files: c.files,
    tsconfig: c.tsconfig?.digest ?? null,
    manifest: c.manifest?.digest ?? null,
    externals: c.externals,
    closures: closureDigests(c.closures),
    dependencies: Object.fromEntries(Object.entries(c.dependencies).map(([k, v]) => [k, v.digest])),
    reach: c.reach,
  };
  return digestParts(`kiln-key/${KEY_SCHEMA}`, [JSON.stringify(material)]);
}

/**
 * The external closure of each workspace package, memoised: exported names → shape closures, the
 * manifest fields consumers resolve through, its emit options (`stripInternal`, declaration flags),
 * and the surfaces/versions of the packages that closure reaches. Also what a consumer sees without
 * importing it by name: augmentations (`declare global`, `declare module 'x'`) and every declaration
 * of a file that may be a script (global), with the full closure of what they mention; the content of
 * non-source files its sources import (a JSON module behind an inferred export); and what its sources
 * reach beyond named imports (view/reach.ts: files, packages, externals). Falls back to the whole
 * package when its surface cannot be followed (unresolved re-exports, missing entry targets, cycles).
 */
class SurfaceCalculator {
  private readonly memo = new Map<string, Promise<DependencySurface>>();
  private readonly wholeMemo = new Map<string, Promise<DependencySurface>>();
  /** The packages being computed, innermost last (calls are sequential: a stack). */
  private readonly inProgress = new Set<string>();
  /**
   * Packages whose surface was computed while a cycle closed on a package below them on the stack:
   * their `ws:<pkg>:cycle` token stands for a package only the caller's digest covers, so the result
   * holds for that caller only and is not memoised (a later dependent computes it afresh).
   */
  private readonly contextual = new Set<string>();
  private readonly cycles = new Set<string>();
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly workspaceRoot: string,
    private readonly prepared: Map<string, Prepared>,
    private readonly byName: ReadonlyMap<string, WorkspaceProject>,
    private readonly lockfile: Lockfile,
    private readonly opaque: OpaquePackages,
    private readonly tree: FileTree,
  ) {}

  surfaceOf(name: string): Promise<DependencySurface> {
    let m = this.memo.get(name);
    if (!m) {
      m = this.compute(name).then((s) => {
        if (this.contextual.delete(name)) this.memo.delete(name);
        return s;
      });
      this.memo.set(name, m);
    }
    return m;
  }

  /**
   * All of a package, bodies included: a dependent whose build compiles the package's sources (a
   * `paths` mapping or an `exports` target into them) emits and type-checks them.
   */
  wholeOf(name: string): Promise<DependencySurface> {
    let m = this.wholeMemo.get(name);
    if (!m) {
      const project = this.byName.get(name)!;
      const prep = this.prepared.get(project.root);
      if (prep?.report && prep.tsconfig) {
        // On the stack like a surface, so a cycle closing below it is seen (and not memoised).
        this.inProgress.add(name);
        m = this.full(name, prep.report, prep.tsconfig, this.manifestSurface(project), 'a dependent compiles its sources')
          .finally(() => this.inProgress.delete(name))
          .then((s) => {
            if (this.contextual.delete(name)) this.wholeMemo.delete(name);
            return s;
          });
      } else m = this.surfaceOf(name);
      this.wholeMemo.set(name, m);
    }
    return m;
  }

  private readonly bundleMemo = new Map<string, Promise<DependencySurface>>();
  private readonly bundling = new Set<string>();

  /**
   * A package as a bundler sees it (key/tool-key.ts): all of it, bodies and imported assets included,
   * and the workspace packages it imports bundled in turn — unless `external` names them (the tool
   * keeps those imports), then by their surface.
   */
  bundleOf(name: string, external: ReadonlySet<string>): Promise<DependencySurface> {
    const id = `${name}\u0000${[...external].sort().join(',')}`;
    let m = this.bundleMemo.get(id);
    if (m) return m;
    let contextual = false;
    m = (async (): Promise<DependencySurface> => {
      this.bundling.add(name);
      try {
        const project = this.byName.get(name)!;
        const prep = this.prepared.get(project.root);
        const whole = await this.wholeOf(name);
        const parts = [`whole:${whole.digest}`];
        const imported = new Set<string>();
        if (prep?.report) for (const f of prep.report.files) for (const p of f.external_packages) imported.add(p);
        else if (!prep?.tsconfig) for (const p of (await this.opaque.content(project)).packages) imported.add(p);
        for (const pkg of [...imported].sort()) {
          if (pkg === name || !this.byName.has(pkg)) continue;
          if (external.has(pkg)) parts.push(`ext-ws:${pkg}:${(await this.surfaceOf(pkg)).digest}`);
          else if (this.bundling.has(pkg)) {
            // A cycle: the package on the stack is covered by the caller's key only, so this result
            // holds for this caller (not memoised), like every bundle computed under it.
            parts.push(`bundle:${pkg}:cycle`);
            contextual = true;
          } else {
            const sub = await this.bundleOf(pkg, external);
            if (!this.bundleMemo.has(`${pkg}\u0000${[...external].sort().join(',')}`)) contextual = true;
            parts.push(`bundle:${pkg}:${sub.digest}`);
          }
        }
        return { digest: digestParts('kiln-bundle/1', parts), mode: 'full', reason: 'a dependent bundles it', exports: {} };
      } finally {
        this.bundling.delete(name);
      }
    })();
    this.bundleMemo.set(id, m);
    return m.then((r) => {
      if (contextual) this.bundleMemo.delete(id);
      return r;
    });
  }

  private isOpaque(name: string): boolean {
    const prep = this.prepared.get(this.byName.get(name)!.root);
    return !prep?.report || !prep.tsconfig;
  }

  /** A cycle closes on `pkg` (in progress): mark the results above it contextual; tell of cycles through opaque packages. */
  private noteCycle(pkg: string): void {
    const stack = [...this.inProgress];
    const members = stack.slice(stack.indexOf(pkg));
    for (const m of members.slice(1)) this.contextual.add(m);
    const opaque = members.filter((m) => this.isOpaque(m));
    const id = [...members].sort().join('\u0000');
    if (!opaque.length || this.cycles.has(id)) return;
    this.cycles.add(id);
    this.diagnostics.push(
      diagnostic('KILN_OPAQUE_CYCLE', `dependency cycle ${[...members, pkg].join(' → ')} passes through ${opaque.join(', ')}, which kiln does not build; each package's surface covers the others up to where the cycle closes`, {
        file: this.byName.get(opaque[0]!)!.root,
        producer: 'key',
      }),
    );
  }

  /** The key part of a package an opaque package's files import. */
  private async reach(pkg: string, fromRoot: string): Promise<string | undefined> {
    if (this.byName.has(pkg)) {
      if (this.inProgress.has(pkg)) {
        this.noteCycle(pkg);
        return `ws:${pkg}:cycle`;
      }
      return `ws:${pkg}:${(await this.surfaceOf(pkg)).digest}`;
    }
    return isBuiltin(pkg) ? undefined : `ext:${pkg}@${await externalLabel(this.lockfile, pkg, fromRoot)}`;
  }

  /**
   * The dependency's manifest fields a dependent's build reads: resolution (`exports`, `main`, … the
   * compiler follows) and `sideEffects` (the dependent's kiln.rep requires a dependency that declares
   * none only from the chunks that use it: represent/bundle.ts).
   */
  private manifestSurface(project: WorkspaceProject): string {
    const manifest = project.manifest ?? {};
    return JSON.stringify(['name', 'type', 'exports', 'main', 'module', 'types', 'typings', 'typesVersions', 'imports', 'sideEffects'].map((f) => [f, manifest[f] ?? null]));
  }

  private async compute(name: string): Promise<DependencySurface> {
    const project = this.byName.get(name)!;
    const prep = this.prepared.get(project.root);
    const manifestSurface = this.manifestSurface(project);
    if (!prep?.report || !prep.tsconfig) {
      // Not a TypeScript library kiln builds: what it ships, digested (key/opaque.ts).
      this.inProgress.add(name);
      try {
        return await opaqueSurface(project, manifestSurface, await this.opaque.content(project), (pkg) => this.reach(pkg, project.root));
      } finally {
        this.inProgress.delete(name);
      }
    }
    const report = prep.report;
    this.inProgress.add(name);
    try {
      const closures = computeClosures(report, 'shape');
      const exports: Record<string, string> = {};
      const reached = new Set<string>();
      const unresolved = new Set<string>();
      for (const entry of report.entries) {
        if (entry.missing) unresolved.add(`entry ${entry.subpath} names no source file`);
        for (const u of entry.unresolved) unresolved.add(`re-export ${u}`);
        for (const e of entry.external) reached.add(e);
      }
      const byIdentity = new Map(report.declarations.map((d) => [d.identity, d]));
      const fileHash = new Map(report.files.map((f) => [f.path, f.content_hash]));
      const surfaceTargets = new Map<string, string[]>();
      for (const d of report.declarations) {
        for (const s of d.surface) (surfaceTargets.get(s) ?? surfaceTargets.set(s, []).get(s)!).push(d.identity);
      }
      for (const [surfaceName, ids] of [...surfaceTargets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const parts: string[] = [];
        for (const id of ids.sort()) {
          const d = byIdentity.get(id)!;
          parts.push(`${id}:${closures.digests.get(id) ?? `${d.semantic_digest ?? `degraded:${fileHash.get(d.span.file)}`}`}`);
          for (const e of closures.external.get(id) ?? []) reached.add(e);
          for (const u of closures.unresolved.get(id) ?? []) unresolved.add(u);
        }
        exports[surfaceName] = digestParts('kiln-export/1', parts);
      }
      for (const entry of report.entries) for (const n of entry.names) if (!exports[`${name}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}#${n}`]) {
        // Re-exported from another package only: its version or surface is in `reached`.
        exports[`${name}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}#${n}`] = 'external';
      }
      const ambient = ambientDeclarations(report);
      const ambientParts: string[] = [];
      if (ambient.length) {
        // Their full closure: an augmentation's members are types a consumer sees whole.
        const full = computeClosures(report, 'full');
        for (const d of ambient) {
          ambientParts.push(`ambient:${d.identity}:${full.digests.get(d.identity) ?? `${d.semantic_digest ?? `degraded:${fileHash.get(d.span.file)}`}`}`);
          for (const e of full.external.get(d.identity) ?? []) reached.add(e);
          for (const u of full.unresolved.get(d.identity) ?? []) unresolved.add(u);
        }
      }
      const reachedParts: string[] = [];
      for (const pkg of [...reached].sort()) {
        if (pkg === name) continue;
        if (this.byName.has(pkg)) {
          if (this.inProgress.has(pkg)) {
            unresolved.add(`cycle through ${pkg}`);
            this.noteCycle(pkg);
          }
          else reachedParts.push(`ws:${pkg}:${(await this.surfaceOf(pkg)).digest}`);
        } else if (!isBuiltin(pkg)) {
          reachedParts.push(`ext:${pkg}@${await externalLabel(this.lockfile, pkg, project.root)}`);
        }
      }
      if (unresolved.size) return this.full(name, report, prep.tsconfig, manifestSurface, [...unresolved].sort().join('; '));
      return {
        digest: digestParts('kiln-surface/2', [
          manifestSurface,
          prep.tsconfig.optionsDigest,
          ...Object.entries(exports).map(([k, v]) => `${k}=${v}`),
          ...reachedParts,
          ...ambientParts,
          ...(await this.assetParts(project, report)),
          ...(await this.reachParts(name, prep)),
        ]),
        mode: 'surface',
        exports,
      };
    } finally {
      this.inProgress.delete(name);
    }
  }

  private async full(name: string, report: DigestReport, tsconfig: TsconfigView, manifestSurface: string, reason: string): Promise<DependencySurface> {
    const project = this.byName.get(name)!;
    const prep = this.prepared.get(project.root);
    const parts = [manifestSurface, tsconfig.optionsDigest];
    // A declaration that could not be digested stands for its file's content (never a constant).
    const contentHash = new Map(report.files.map((f) => [f.path, f.content_hash]));
    for (const d of report.declarations) parts.push(`${d.identity}:${d.semantic_digest ?? `degraded:${contentHash.get(d.span.file)}`}:${d.doc_digest ?? ''}`);
    for (const f of report.files) parts.push(`${f.module.identity}:${f.module.degraded ? f.content_hash : f.module.digest}`);
    for (const pkg of [...new Set(report.files.flatMap((f) => f.external_packages))].sort()) {
      if (pkg === name || isBuiltin(pkg)) continue;
      if (!this.byName.has(pkg)) parts.push(`ext:${pkg}@${await externalLabel(this.lockfile, pkg, project.root)}`);
      else if (this.inProgress.has(pkg)) {
        parts.push(`ws:${pkg}:cycle`); // its own key covers it
        this.noteCycle(pkg);
      }
      else parts.push(`ws:${pkg}:${(await this.surfaceOf(pkg)).digest}`);
    }
    parts.push(...(await this.assetParts(project, report)));
    if (prep) {
      const wasInProgress = this.inProgress.has(name);
      this.inProgress.add(name);
      try {
        parts.push(...(await this.reachParts(name, prep)));
      } finally {
        if (!wasInProgress) this.inProgress.delete(name);
      }
    }
    return { digest: digestParts('kiln-surface-full/2', parts), mode: 'full', reason, exports: {} };
  }

  /**
   * Content of the non-source files the package's sources import (`./data.json`): an inferred export
   * may carry it. Not those its TypeScript files only `require()` (`require('../package.json').version`):
   * the compiler does not follow them, so no type of the package can.
   */
  private async assetParts(project: WorkspaceProject, report: DigestReport): Promise<string[]> {
    const assets = [...new Set(report.files.flatMap((f) => f.asset_imports.filter((a) => !f.asset_requires?.includes(a))))].sort();
    const out: string[] = [];
    for (const a of assets) out.push(`asset:${a}:${await contentHashOf(this.tree, join(this.workspaceRoot, project.root, a))}`);
    return out;
  }

  /**
   * What the package's sources reach beyond named imports (`/// <reference>`, relative imports out of
   * the package, `paths`): its declaration output can carry those references to a consumer. Requests
   * made by its tsconfig alone (`types`, `typeRoots`, references) are the package's own build's affair.
   */
  private async reachParts(name: string, prep: Prepared): Promise<string[]> {
    const reach = prep.reach;
    if (!reach) return [];
    const out: string[] = [];
    for (const e of reach.edges) if (e.origin === 'source') out.push(`reach:${e.request}=${e.target}`);
    for (const [rel, hash] of reach.files) out.push(`reach-file:${rel}:${hash}`);
    for (const [pkg, origin] of reach.externals) {
      if (origin !== 'source' || this.byName.has(pkg) || isBuiltin(pkg)) continue;
      out.push(`reach-ext:${pkg}@${await externalLabel(this.lockfile, pkg, prep.project.root)}`);
    }
    for (const [pkg, r] of reach.packages) {
      if (r.origin !== 'source' || pkg === name) continue;
      if (this.inProgress.has(pkg)) {
        out.push(`reach-ws:${pkg}:cycle`);
        this.noteCycle(pkg);
      }
      else out.push(`reach-ws:${pkg}:${r.mode}:${(await (r.mode === 'full' ? this.wholeOf(pkg) : this.surfaceOf(pkg))).digest}`);
    }
    return out.sort();
  }
}

/**
 * Module-level declarations a consumer sees without importing them by name: augmentations
 * (`declare global { … }`, `declare module 'x' { … }` — namespaces no entry exports; a plain
 * unexported namespace is included too, harmlessly) and every declaration of a file that may be a
 * script (its top-level declarations are global).
 */
function ambientDeclarations(report: DigestReport): DigestReport['declarations'] {
  const scripts = new Set(report.files.filter((f) => f.script).map((f) => f.path));
  return report.declarations.filter((d) => d.module_level && (scripts.has(d.span.file) || (d.kind === 'namespace' && d.surface.length === 0)));
}

/**
 * Whether TypeScript emits CommonJS for the project's `.ts` files: `module` CommonJS/AMD/UMD/System,
 * or a Node module mode with a package that is not `"type": "module"`, or no `module` with an ES5/ES3
 * target (the compiler's default).
 */
function emitsCommonJs(options: Record<string, unknown>, manifest: Record<string, unknown>): boolean {
  const module = options.module as number | undefined;
  const target = options.target as number | undefined;
  if (module === undefined) return target === undefined || target < 2;
  if (module >= 1 && module <= 4) return true;
  if (module >= 100 && module <= 199) return manifest.type !== 'module';
  return false;
}

async function contentHashOf(tree: FileTree, path: string): Promise<string> {
  if (tree !== worktree) {
    const bytes = tree.readFile(path);
    return bytes ? sha256Hex(bytes) : 'missing';
  }
  try {
    return sha256Hex(await readFile(path));
  } catch {
    return 'missing';
  }
}

function sortRecord<T>(r: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(r).sort().map((k) => [k, r[k]!]));
}

export type { ManifestView };
