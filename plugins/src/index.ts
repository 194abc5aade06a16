/**
 * The kiln Nx plugin: `createNodesV2` infers a `build` target for every TypeScript library (a
 * package.json beside a tsconfig, with TypeScript sources), whose options carry the kiln unit key.
 * Nx hashes target options up front on every path (daemon or not, batch hashing, remote cache), so
 * the key reaches the task hash with no custom hasher; `inputs: []` keeps raw source bytes out of it.
 * `createDependencies` adds the workspace edges kiln resolved from imports.
 *
 * Thin: all knowledge lives in @kiln/core. What is here is about cost. Nx 24 runs the plugin in a worker
 * process that it starts for each project-graph build and stops after it (daemon or not), so:
 *   - createDependencies uses the keys its own graph build's createNodes computed (no second keying);
 *   - across graph builds, the createNodes answer is memoised on disk (`graph-memo.json` beside kiln's
 *     key records), valid while a stat snapshot of everything a key can read is unchanged — the
 *     workspace walk, plus every path outside it that the computation was seen to read; on a hit
 *     neither @kiln/core nor @nx/devkit is loaded. Any doubt is a miss: the keys are then computed as
 *     always, from the warm store.
 *
 * The rooms: this file is the plugin's hooks; graph-memo.ts the memo (read, lookup, write), snapshot.ts
 * the stat snapshots it compares, fs-recording.ts the recording of what a computation reads,
 * codegraph-target.ts the inferred `codegraph` target. Importing them does no I/O but one stat, and
 * loads neither @kiln/core nor @nx/devkit: both are loaded when keys must be computed.
 *
 * With `KILN_TRACE=FILE` the worker appends its capture to FILE (@kiln/core/trace, which loads nothing
 * else of core): one `createNodes` span per call (`memo: hit` or `computed`, the keys' spans inside),
 * written after each call. The capture is opened before any recording starts (the trace file is never
 * a read of the keys) and ends when the worker exits.
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { CreateDependencies, CreateNodesContextV2, CreateNodesResult, CreateNodesV2, DependencyType, PostTasksExecution, RawProjectGraphDependency, TargetConfiguration } from '@nx/devkit';
import type { ProjectKey, ToolTargetSpec, WorkspaceKeys } from '@kiln/core';
import { codegraphTarget } from './codegraph-target.js';
import { packTarget } from './pack-target.js';
import { KILN_KEYED_TAG } from './keyed-tag.js';
import { startRecording } from './fs-recording.js';
import { cacheDir, envOfKeys, lookupMemo, memoId, readMemo, stats, writeMemo, type Edges, type Keyed, type NodesResults } from './graph-memo.js';
import { kilnCodeDirs, storeDir } from './snapshot.js';

export { graphMemoStats } from './graph-memo.js';

export interface KilnPluginOptions {
  /**
   * Targets kiln keys where the workspace already defines them — package.json scripts, project.json,
   * package.json `nx.targets` — whatever their executor (default `['build']`). The target keeps its
   * executor, command, outputs and dependsOn; kiln adds its key to the options and replaces the raw
   * file inputs (the key covers them).
   */
  targets?: string[];
  /**
   * Add kiln's own build target (executor `@kiln/nx:build`) to TypeScript libraries that have no
   * target of that name (default false: kiln never adds a target that can fail unless asked).
   */
  addBuildTargets?: boolean;
  /** Name of kiln's own build target where it adds one (default `build`). */
  buildTargetName?: string;
  /** Tsconfig names tried, per project, in order (default tsconfig.lib.json, tsconfig.build.json, tsconfig.json); also the one keyed. */
  tsConfig?: string;
  /** Name of the inferred code-graph target (default `codegraph`); `false`: no such target. */
  codegraphTargetName?: string | false;
  /**
   * Add a `pack` target (executor `@kiln/nx:pack`: the npm tarball, into `dist/packs/<projectRoot>`)
   * to every non-private library whose build is kiln's own executor (added by `addBuildTargets` or
   * defined by the workspace). Default: the value of `addBuildTargets` — asking kiln to build a
   * library asks it to pack what it built; `false` turns it off.
   */
  addPackTargets?: boolean;
  /** Name of the inferred pack target (default `pack`). */
  packTargetName?: string;
}

/** The tag kiln gives every project with a keyed target; `nx g @kiln/nx:init` filters target defaults on it. */
export { KILN_KEYED_TAG };

export const KILN_BUILD_EXECUTOR = '@kiln/nx:build';

/**
 * The inputs of a target kiln's executor builds: no files (the key in its options covers every file a
 * build reads) and no external dependencies. `inputs: []` is not enough: with no `externalDependencies`
 * input Nx hashes `AllExternalDependencies` for a non-`@nx` executor, so any lockfile change anywhere
 * reran every kiln build (the key already holds the versions its sources and its compiler resolve).
 */
const KILN_BUILD_INPUTS = [{ externalDependencies: [] }];

type Core = typeof import('@kiln/core');
let corePromise: Promise<Core> | undefined;
/** @kiln/core, loaded only when keys must be computed (its import costs more than a memo hit). */
const loadCore = (): Promise<Core> => (corePromise ??= import('@kiln/core'));

/**
 * The edges of the keys the latest createNodes of this process computed or restored, and the project
 * roots it considered. Nx calls createNodes and then createDependencies in every graph build, in the
 * same worker; createDependencies takes them (once), so a later graph build can never see them.
 */
let latest: { workspaceRoot: string; considered: Set<string>; edges: Edges[]; keyed: Keyed[] } | undefined;

function keyedTargetNames(options: KilnPluginOptions | undefined): string[] {
  const names = options?.targets ?? ['build'];
  return [...new Set(names.filter((n) => typeof n === 'string' && n.length > 0))];
}

/**
 * What kiln infers over a target the workspace defines: no executor (so Nx merges it with the
 * definition whatever its executor, instead of replacing one or the other), the key in an object
 * option (hashed by Nx up front on every path; `nx:run-commands` forwards only scalar options to the
 * command, `nx:run-script` ignores options but `script`), and inputs without raw file bytes or
 * `AllExternalDependencies` — the key holds the semantic sources, every other file by content and
 * the resolved versions it needs.
 */
function keyedTarget(key: string): TargetConfiguration {
  return {
    options: { kiln: { key } },
    inputs: [{ externalDependencies: [] }],
  };
}

function collectKeyed(results: NodesResults, names: readonly string[]): Keyed[] {
  const out: Keyed[] = [];
  for (const [, r] of results) {
    for (const [root, project] of Object.entries(r.projects ?? {})) {
      for (const name of names) {
        const opts = project.targets?.[name]?.options as { kiln?: { key?: string }; kilnKey?: string } | undefined;
        if (opts?.kiln?.key) out.push({ root, target: name, key: opts.kiln.key, own: false });
        else if (opts?.kilnKey) out.push({ root, target: name, key: opts.kilnKey, own: true });
      }
    }
  }
  return out;
}

function isLibraryRoot(core: Core, workspaceRoot: string, root: string, preferred?: string): boolean {
  if (root === '.' || root === '') return false;
  return core.findTsconfig(join(workspaceRoot, root), preferred) !== undefined;
}

type Trace = typeof import('@kiln/core/trace');
let pluginTrace: Promise<Trace | undefined> | undefined;
/** This worker's capture (started once, on the first call with KILN_TRACE set); undefined when it cannot be written. */
function tracer(file: string): Promise<Trace | undefined> {
  return (pluginTrace ??= import('@kiln/core/trace').then((t) => {
    const session = t.startTrace(file, { process: 'nx plugin @kiln/nx' });
    for (const d of session.diagnostics) process.stderr.write(`${t.formatDiagnostic(d)}\n`);
    return session.diagnostics.length ? undefined : t;
  }));
}

export const createNodesV2: CreateNodesV2<KilnPluginOptions> = [
  '**/package.json',
  async (configFiles, options, context: CreateNodesContextV2) => {
    const t = process.env.KILN_TRACE ? await tracer(process.env.KILN_TRACE) : undefined;
    if (!t) return createNodes(configFiles, options, context);
    const hits = stats.hits;
    try {
      return await t.span('createNodes', async () => {
        const results = await createNodes(configFiles, options, context);
        t.annotate('memo', stats.hits > hits ? 'hit' : 'computed');
        return results;
      });
    } finally {
      t.flushTrace();
    }
  },
];

async function createNodes(configFiles: readonly string[], options: KilnPluginOptions | undefined, context: CreateNodesContextV2): Promise<NodesResults> {
  const workspaceRoot = context.workspaceRoot;
  const id = memoId(configFiles, options);
  const memo = await lookupMemo(workspaceRoot, id);
  const considered = new Set(configFiles.map((f) => dirname(f)));
  if (memo.hit) {
    stats.hits++;
    latest = { workspaceRoot, considered, edges: memo.hit.edges, keyed: memo.hit.keyed ?? [] };
    return memo.hit.results;
  }

  const core = await loadCore();
  stats.computed++;
  // Every file, directory and stat kiln reads from here on (this thread) is recorded: what lies
  // outside the snapshot's walk becomes a probe of the memo.
  const recording = startRecording(workspaceRoot, [cacheDir(workspaceRoot), storeDir(), resolve(core.defaultStoreDir()), join(tmpdir(), 'kiln-code-cache'), ...kilnCodeDirs()]);
  let results: NodesResults;
  let keys: WorkspaceKeys | undefined;
  let keyed: Keyed[] = [];
  try {
    const keyedNames = keyedTargetNames(options);
    const candidates = configFiles.map((f) => dirname(f)).filter((r) => r !== '.' && r !== '');
    const definitions = new Map(candidates.map((r) => [r, core.readTargetDefinitions(workspaceRoot, r, keyedNames)]));
    // The tsconfig each library is keyed with: the one kiln's own build target builds with (its
    // tsConfig option), else the plugin option, else the default search — the executor's order.
    const tsconfigs: Record<string, string> = {};
    for (const r of candidates) {
      const preferred = core.buildKeyTsconfig(keyedNames.map((n) => definitions.get(r)?.targets.get(n)), options?.tsConfig);
      if (preferred !== undefined) tsconfigs[r] = preferred;
    }
    const libraries = candidates.filter((r) => isLibraryRoot(core, workspaceRoot, r, tsconfigs[r]));
    const toolSpecs: Record<string, ToolTargetSpec[]> = {};
    for (const [root, defs] of definitions) {
      const specs = [...defs.targets.values()].flatMap((d) => (d.spec ? [d.spec] : []));
      if (specs.length) toolSpecs[root] = specs;
    }
    const roots = [...new Set([...libraries, ...Object.keys(toolSpecs)])].sort();
    keys = roots.length
      ? await core.computeWorkspaceKeys(workspaceRoot, {
          roots,
          record: true,
          targets: toolSpecs,
          ...(Object.keys(tsconfigs).length ? { tsconfigs: Object.fromEntries(libraries.filter((r) => tsconfigs[r] !== undefined).map((r) => [r, tsconfigs[r]!])) } : {}),
        })
      : undefined;
    const byRoot = new Map<string, ProjectKey>((keys?.projects ?? []).map((p) => [p.root, p]));
    results = configFiles.map((file): [string, CreateNodesResult] => {
      const root = dirname(file);
      const key = byRoot.get(root);
      const defs = definitions.get(root)?.targets ?? new Map();
      const targets: Record<string, TargetConfiguration> = {};
      let tagged = false;
      for (const name of keyedNames) {
        const def = defs.get(name);
        if (def?.spec) {
          const toolKey = key?.targets?.[name]?.key;
          if (!toolKey) continue;
          targets[name] = keyedTarget(toolKey);
          tagged = true;
        } else if (def && key?.key) {
          // The workspace runs kiln's own executor under this name: the build key, computed from the
          // tsconfig the target builds with. The keyed file is filled in as tsConfig too (a target
          // that names none takes it; one that names it names the same file). A target whose
          // tsconfig differs from the keyed one, or whose configurations switch tsconfigs, is left
          // unkeyed: Nx hashes it as usual (no semantic hits, never a wrong one).
          const keyedFile = key.components?.tsconfig?.file;
          if (!keyedFile || (def.tsconfig !== undefined && def.tsconfig !== keyedFile) || def.tsconfigConfigurations?.length) continue;
          targets[name] = { options: { kilnKey: key.key, tsConfig: `{projectRoot}/${keyedFile}` }, inputs: KILN_BUILD_INPUTS };
        }
      }
      const buildName = options?.buildTargetName ?? 'build';
      // No key (an unreadable manifest, no tsconfig): no kiln target; `kiln keys` says why.
      if (key?.key) {
        if (options?.addBuildTargets && !defs.has(buildName) && !targets[buildName]) {
          const own = buildTarget(core, workspaceRoot, root, key, options);
          const clash = core.declaredOutputs(workspaceRoot, root).find((d) => d.target !== buildName && core.outputsOverlap(d.output, own.outputs![0]!));
          // Never declare outputs another target owns: a cache restore of one would delete the other's files.
          if (clash) process.stderr.write(`kiln: warning: no ${buildName} target added to ${root}: its output ${own.outputs![0]} overlaps ${clash.output}, declared by the project's "${clash.target}" target. Fix: give the tsconfig another outDir, or define the build target yourself.\n`);
          else targets[buildName] = own;
        }
        const packName = options?.packTargetName ?? 'pack';
        const kilnBuilds = targets[buildName]?.executor === KILN_BUILD_EXECUTOR || defs.get(buildName)?.executor === KILN_BUILD_EXECUTOR;
        if ((options?.addPackTargets ?? options?.addBuildTargets ?? false) && kilnBuilds && !targets[packName]) {
          const pack = packTargetOf(core, workspaceRoot, root, key, options, buildName, packName);
          if (pack) targets[packName] = pack;
        }
        const graphName = options?.codegraphTargetName ?? 'codegraph';
        if (graphName !== false && !defs.has(graphName)) targets[graphName] = codegraphTarget(root, tsconfigOf(core, workspaceRoot, root, key, options), `extractor${core.EXTRACTOR_VERSION}/digest${core.DIGEST_SCHEMA}/graph${core.GRAPH_SCHEMA_VERSION}`, buildName);
      }
      if (!Object.keys(targets).length) return [file, {}];
      return [file, { projects: { [root]: { targets, ...(tagged ? { tags: [KILN_KEYED_TAG] } : {}) } } }];
    });
    keyed = collectKeyed(results, keyedNames);
  } finally {
    recording.stop();
  }
  const edges = edgesOf(keys);
  latest = { workspaceRoot, considered, edges, keyed };
  if (keys) await writeMemo(workspaceRoot, { id, results, edges, keyed, env: envOfKeys(keys) }, keys, memo.memo, memo.before, recording);
  return results;
}

function edgesOf(keys: WorkspaceKeys | undefined): Edges[] {
  return (keys?.projects ?? []).filter((p) => p.components).map((p) => ({ project: p.project, root: p.root, dependencies: Object.keys(p.components!.dependencies) }));
}

function tsconfigOf(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): string {
  return key.components?.tsconfig?.file ?? core.findTsconfig(join(workspaceRoot, root), options?.tsConfig) ?? 'tsconfig.json';
}

/**
 * The inferred pack target of a library kiln builds, or undefined: a private manifest (npm refuses to
 * publish it), a pack target the project defines itself, or an output another target declares.
 */
function packTargetOf(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined, buildName: string, packName: string): TargetConfiguration | undefined {
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(readFileSync(join(workspaceRoot, root, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (manifest.private === true) return undefined;
  if (core.readTargetDefinitions(workspaceRoot, root, [packName]).targets.has(packName)) return undefined;
  const outDir = buildOutDir(core, workspaceRoot, root, key, options);
  const pack = packTarget(workspaceRoot, root, manifest, outDir, buildName);
  const output = `dist/packs/${root}`;
  const clash = core.declaredOutputs(workspaceRoot, root).find((d) => d.target !== packName && core.outputsOverlap(d.output, output));
  // Never declare outputs another target owns: a cache restore of one would delete the other's files.
  if (clash) {
    process.stderr.write(`kiln: warning: no ${packName} target added to ${root}: its output ${output} overlaps ${clash.output}, declared by the project's "${clash.target}" target. Fix: define the pack target yourself with another outputPath.\n`);
    return undefined;
  }
  return pack;
}

/** The build's output directory, project-relative: the tsconfig's outDir (kiln's build writes there), else dist. */
function buildOutDir(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): string {
  const outDir = key.components ? (key.components.tsconfig?.options.outDir as string | undefined) : core.readTsconfig(workspaceRoot, root, tsconfigOf(core, workspaceRoot, root, key, options)).outDir;
  return outDir ?? 'dist';
}

function buildTarget(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): TargetConfiguration {
  const tsconfigName = tsconfigOf(core, workspaceRoot, root, key, options);
  const outDir = key.components ? (key.components.tsconfig?.options.outDir as string | undefined) : core.readTsconfig(workspaceRoot, root, tsconfigName).outDir;
  const output = `{projectRoot}/${outDir ?? 'dist'}`;
  return {
    executor: KILN_BUILD_EXECUTOR,
    // Everything a build's output can depend on is in the key; raw bytes are not inputs.
    inputs: KILN_BUILD_INPUTS,
    outputs: [output],
    dependsOn: [`^${options?.buildTargetName ?? 'build'}`],
    cache: true,
    options: {
      tsConfig: `{projectRoot}/${tsconfigName}`,
      outputPath: output,
      kilnKey: key.key,
    },
    metadata: {
      description: 'kiln: compile with TypeScript; cached by semantic digests and dependency surfaces',
      technologies: ['typescript'],
    },
  };
}

export const createDependencies: CreateDependencies<KilnPluginOptions> = async (options, context) => {
  const candidates = Object.values(context.projects)
    .map((p) => p.root)
    .filter((r) => r !== '.' && r !== '' && existsSync(join(context.workspaceRoot, r, 'package.json')));
  let edges: Edges[];
  const mine = latest;
  latest = undefined;
  // createNodes of this graph build looked at every one of these projects (and keyed the libraries).
  if (mine && mine.workspaceRoot === context.workspaceRoot && candidates.every((r) => mine.considered.has(r))) {
    edges = mine.edges;
  } else {
    const core = await loadCore();
    const roots = candidates.filter((r) => isLibraryRoot(core, context.workspaceRoot, r, options?.tsConfig));
    if (!roots.length) return [];
    edges = edgesOf(await core.computeWorkspaceKeys(context.workspaceRoot, { roots: roots.sort(), record: true }));
  }
  if (mine && mine.workspaceRoot === context.workspaceRoot) warnShadowed(mine.keyed, context.projects);
  const nameOf = new Map(Object.entries(context.projects).map(([name, p]) => [p.root, name]));
  const projectByPackage = new Map<string, string>();
  for (const p of edges) {
    const nxName = nameOf.get(p.root);
    if (nxName) projectByPackage.set(p.project, nxName);
  }
  const deps: RawProjectGraphDependency[] = [];
  for (const p of edges) {
    const source = nameOf.get(p.root);
    if (!source) continue;
    for (const dep of p.dependencies) {
      const target = projectByPackage.get(dep);
      // DependencyType.static, without loading @nx/devkit for one string.
      if (target && target !== source) deps.push({ source, target, type: 'static' as `${DependencyType.static}` as DependencyType.static, sourceFile: join(p.root, 'package.json') });
    }
  }
  return deps;
};

/**
 * After a run, each keyed task that succeeded (ran or restored) is recorded as built with the key
 * the graph carried, so `kiln explain-miss` can say what moved since — also for targets kiln does not
 * run. The key comes from the graph memo of the graph build the tasks ran with (this hook runs in a
 * plugin worker of its own). Explanation only: nothing here reaches a hash; errors are swallowed.
 */
export const postTasksExecution: PostTasksExecution<KilnPluginOptions> = async (_options, context) => {
  try {
    const memo = await readMemo(context.workspaceRoot);
    if (!memo?.keyed.length) return;
    const byTask = new Map(memo.keyed.map((k) => [`${k.root}\0${k.target}`, k.key]));
    const done = Object.values(context.taskResults).filter((r) => r.status === 'success' || r.status === 'local-cache' || r.status === 'local-cache-kept-existing' || r.status === 'remote-cache');
    let core: Core | undefined;
    for (const r of done) {
      const key = r.task.projectRoot !== undefined ? byTask.get(`${r.task.projectRoot}\0${r.task.target.target}`) : undefined;
      if (!key) continue;
      core ??= await loadCore();
      await core.recordBuilt(context.workspaceRoot, r.task.target.project, r.task.target.target, key);
    }
  } catch {
    // A record that cannot be written costs an explanation, nothing else.
  }
};

/**
 * Nx merges what plugins infer with project.json, package.json and target defaults; this is the only
 * place that sees the result. A keyed target whose key did not land (another definition replaced
 * kiln's) or whose inputs were overridden (raw bytes back in the hash: correct, but no semantic hits)
 * is named, once per graph build, with the definition that won and the fix.
 */
function warnShadowed(keyed: readonly Keyed[], projects: Record<string, { root: string; targets?: Record<string, TargetConfiguration> }>): void {
  const byRoot = new Map(Object.entries(projects).map(([name, p]) => [p.root, { name, p }]));
  const notLanded: string[] = [];
  /** Overriding inputs (as JSON) → the targets they apply to: one line per cause, not per target. */
  const overridden = new Map<string, string[]>();
  for (const k of keyed) {
    const entry = byRoot.get(k.root);
    if (!entry) continue;
    const t = entry.p.targets?.[k.target];
    const opts = t?.options as { kiln?: { key?: string }; kilnKey?: string } | undefined;
    const landed = k.own ? opts?.kilnKey === k.key : opts?.kiln?.key === k.key;
    const where = `${entry.name}:${k.target}`;
    if (!landed) notLanded.push(`${where} (${t?.executor ?? 'no executor'})`);
    else if (!k.own && JSON.stringify(t?.inputs ?? null) !== JSON.stringify([{ externalDependencies: [] }])) {
      const cause = JSON.stringify(t?.inputs ?? 'default');
      overridden.set(cause, [...(overridden.get(cause) ?? []), where]);
    }
  }
  const list = (xs: string[]) => `${xs.slice(0, 4).join(', ')}${xs.length > 4 ? ` and ${xs.length - 4} more` : ''}`;
  const lines: string[] = [];
  if (notLanded.length) lines.push(`not keyed: the target Nx resolved does not carry kiln's key — another plugin or definition replaced it: ${list(notLanded)}. Fix: define the target in project.json or package.json (kiln keys those), or leave it out of the plugin's "targets".`);
  for (const [cause, where] of overridden) {
    lines.push(`inputs ${cause} (from targetDefaults or the target's own definition) override kiln's for ${list(where)}: the key is in the hash, but so are raw file bytes and every external dependency, so a comment edit is not a hit. Fix: \`nx g @kiln/nx:init\` (a target default for projects tagged ${KILN_KEYED_TAG}), or remove the target's own "inputs".`);
  }
  if (lines.length) process.stderr.write(`kiln: ${lines.map((l) => `warning: ${l}`).join('\nkiln: ')}\n`);
}
