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
 *     workspace walk, plus every path outside it that the computation was seen to read (see "The memo
 *     across graph builds" below); on a hit neither @kiln/core nor @nx/devkit is loaded. Any doubt is a
 *     miss: the keys are then computed as always, from the warm store.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CreateDependencies, CreateNodesContextV2, CreateNodesResult, CreateNodesV2, DependencyType, PostTasksExecution, RawProjectGraphDependency, TargetConfiguration } from '@nx/devkit';
import type { ProjectKey, ToolTargetSpec, WorkspaceKeys } from '@kiln/core';
import { codegraphTarget } from './codegraph-target.js';

/** node:fs as loaded, before any recording wraps it: the snapshot's own stats are never recorded. */
const fsSync = { statSync, lstatSync, readdirSync, readFileSync };

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
}

/** The tag kiln gives every project with a keyed target; `nx g @kiln/nx:init` filters target defaults on it. */
export const KILN_KEYED_TAG = 'kiln-keyed';

export const KILN_BUILD_EXECUTOR = '@kiln/nx:build';

type Core = typeof import('@kiln/core');
let corePromise: Promise<Core> | undefined;
/** @kiln/core, loaded only when keys must be computed (its import costs more than a memo hit). */
const loadCore = (): Promise<Core> => (corePromise ??= import('@kiln/core'));

type NodesResults = [string, CreateNodesResult][];
/** What createDependencies needs of a key: the package, and the workspace packages its key depends on. */
interface Edges {
  project: string;
  root: string;
  dependencies: string[];
}

/**
 * The edges of the keys the latest createNodes of this process computed or restored, and the project
 * roots it considered. Nx calls createNodes and then createDependencies in every graph build, in the
 * same worker; createDependencies takes them (once), so a later graph build can never see them.
 */
let latest: { workspaceRoot: string; considered: Set<string>; edges: Edges[]; keyed: Keyed[] } | undefined;

/** A target kiln keyed: createDependencies checks that the key reached Nx's merged configuration. */
interface Keyed {
  root: string;
  target: string;
  key: string;
  /** kiln's own build executor (options.kilnKey) or a tool target (options.kiln.key). */
  own: boolean;
}

/** The environment variables the keys read: NODE_ENV and what keyed targets declare. */
function envOfKeys(keys: WorkspaceKeys): Record<string, string> {
  const names = new Set(['NODE_ENV']);
  for (const p of keys.projects) for (const t of Object.values(p.targets ?? {})) for (const n of Object.keys(t.components.env)) names.add(n);
  return Object.fromEntries([...names].sort().map((n) => [n, envDigest(n)]));
}

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

export const createNodesV2: CreateNodesV2<KilnPluginOptions> = [
  '**/package.json',
  async (configFiles, options, context: CreateNodesContextV2) => {
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
            targets[name] = { options: { kilnKey: key.key, tsConfig: `{projectRoot}/${keyedFile}` }, inputs: [] };
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
  },
];

function edgesOf(keys: WorkspaceKeys | undefined): Edges[] {
  return (keys?.projects ?? []).filter((p) => p.components).map((p) => ({ project: p.project, root: p.root, dependencies: Object.keys(p.components!.dependencies) }));
}

function tsconfigOf(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): string {
  return key.components?.tsconfig?.file ?? core.findTsconfig(join(workspaceRoot, root), options?.tsConfig) ?? 'tsconfig.json';
}

function buildTarget(core: Core, workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): TargetConfiguration {
  const tsconfigName = tsconfigOf(core, workspaceRoot, root, key, options);
  const outDir = key.components ? (key.components.tsconfig?.options.outDir as string | undefined) : core.readTsconfig(workspaceRoot, root, tsconfigName).outDir;
  const output = `{projectRoot}/${outDir ?? 'dist'}`;
  return {
    executor: KILN_BUILD_EXECUTOR,
    // Everything a build's output can depend on is in the key; raw bytes are not inputs.
    inputs: [],
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

// ---------------------------------------------------------------------------------------------
// The memo across graph builds
//
// A memo answers createNodes again only for the very state it was computed in. That state is a
// snapshot of stats (size, mtime, ctime, inode; nanoseconds), compared as one digest:
//   - walk:   every file and directory listing of the workspace but node_modules, .git, .nx and the
//             build outputs no key read (`skip`, below);
//   - probes: every path outside that walk which the computation read, stat'ed or listed — recorded
//             as it happened (`startRecording`): installed packages' manifests, tsconfigs extended
//             from node_modules or from outside the workspace and every path TypeScript probed to
//             resolve them, the lockfile-less version fallbacks;
//   - fixed:  the package managers' install markers, and kiln's own code (its dist and the
//             TypeScript it parses with) as this process loaded it.
// A write or a rename changes a file's ctime (which no tool can set), a new, removed or renamed entry
// changes the walk's listings. Files changed in the last 2 s are never memoised (a file system
// whose clock is coarser than the write rate could give two contents one stamp).

/** Counters for tests and diagnostics: memo hits, key computations, memos written valid. */
const stats = { hits: 0, computed: 0, written: 0, lastWrite: '' };
/** How this process used the memo: hits, key computations, memos written valid, and why the last one was (not). */
export function graphMemoStats(): { hits: number; computed: number; written: number; lastWrite: string } {
  return { ...stats };
}

interface Memo {
  format: number;
  id: string;
  /** Workspace-relative build-output directories the fingerprint leaves out (no key read them). */
  skip: string[];
  /**
   * Build-output directories some key read (a resolution probe of a dependency's `dist`): walked by
   * content, not by stat stamps. Without the daemon, Nx restores every cache hit's outputs, so a fully
   * cached run rewrites them with the same bytes and new inodes and times; stamps would miss every run.
   */
  byContent: string[];
  /** Absolute paths outside the walk that the computation read (stat'ed on every lookup). */
  probes: string[];
  /** The digest of the snapshot the keys were computed in; '' never matches. */
  fingerprint: string;
  /** `valid`, or why the fingerprint is '' (for people: `cat` the memo to see why it does not answer). */
  why: string;
  results: NodesResults;
  edges: Edges[];
  /** Targets keyed (for createDependencies' check that the keys landed). */
  keyed: Keyed[];
  /** Environment variables a key read (NODE_ENV, those keyed targets declare) → a digest of the value. */
  env: Record<string, string>;
}

const MEMO_FORMAT = 4;
const cacheDir = (workspaceRoot: string) => join(workspaceRoot, 'node_modules', '.cache', 'kiln');
const memoFile = (workspaceRoot: string) => join(cacheDir(workspaceRoot), 'graph-memo.json');
/** Files changed this recently may be followed by a same-timestamp write (coarse file-system clocks): not memoised. */
const RACY_NS = 2_000_000_000n;
/** Directories the walk never enters, wherever they are (what a key reads there is a probe). */
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.nx']);
/** The package managers' records of an install: rewritten whenever node_modules changes through them. */
const INSTALL_MARKERS = ['node_modules/.package-lock.json', 'node_modules/.modules.yaml', 'node_modules/.yarn-state.yml', 'node_modules/.yarn-integrity'];

/**
 * What, besides the files, a memo answers for: the config files Nx matched (they follow .gitignore and
 * .nxignore), the plugin options, the Node.js version (which names its built-in modules, left out of
 * a key's externals) and every KILN_* variable. No environment variable changes a key
 * today (KILN_STORE and XDG_CACHE_HOME only move the content-addressed store, KILN_NO_CODE_CACHE only
 * how TypeScript is loaded); they are part of the id all the same, so a future one cannot be missed.
 */
function memoId(configFiles: readonly string[], options: KilnPluginOptions | undefined): string {
  const env = Object.keys(process.env)
    .filter((k) => k.startsWith('KILN_'))
    .sort()
    .map((k) => [k, process.env[k]]);
  return JSON.stringify({ files: [...configFiles].sort(), options: options ?? {}, env, node: process.version });
}

/** An environment variable's value as a memo compares it (never stored in clear). */
function envDigest(name: string): string {
  const v = process.env[name];
  return v === undefined ? 'unset' : createHash('sha256').update(v).digest('hex').slice(0, 32);
}

async function readMemo(workspaceRoot: string): Promise<Memo | undefined> {
  try {
    const memo = JSON.parse(await readFile(memoFile(workspaceRoot), 'utf8')) as Memo;
    const strings = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === 'string');
    if (memo.format !== MEMO_FORMAT || typeof memo.id !== 'string' || typeof memo.fingerprint !== 'string') return undefined;
    if (!strings(memo.skip) || !strings(memo.byContent) || !strings(memo.probes) || !Array.isArray(memo.results) || !Array.isArray(memo.edges) || !Array.isArray(memo.keyed)) return undefined;
    if (!memo.env || typeof memo.env !== 'object') return undefined;
    return memo;
  } catch {
    return undefined;
  }
}

async function lookupMemo(workspaceRoot: string, id: string): Promise<{ hit?: Memo; memo?: Memo; before?: Snapshot }> {
  const memo = await readMemo(workspaceRoot);
  const before = snapshot(workspaceRoot, memo?.skip ?? [], memo?.probes ?? [], memo?.byContent ?? []);
  const envSame = (m: Memo) => Object.entries(m.env).every(([k, v]) => envDigest(k) === v);
  if (memo && before && memo.id === id && memo.fingerprint !== '' && envSame(memo) && fingerprint(before, memo.skip, before.probes).digest === memo.fingerprint) return { hit: memo };
  return { ...(memo ? { memo } : {}), ...(before ? { before } : {}) };
}

/**
 * Writes the memo of keys just computed, valid (with a fingerprint) only if all of these hold:
 *   - the snapshot taken before anything was read (`before`) walked everything but what is skipped now;
 *   - no key read a module or file where the walk does not go (outside the workspace, node_modules);
 *   - nothing in it, and no probe, changed in the 2 s before it was stat'ed;
 *   - a snapshot taken now, after the keys, is the same (nothing changed while they were computed),
 *     and so is kiln's code.
 * Otherwise the memo is written with a fingerprint that never matches: it still tells the next lookup
 * which outputs to leave out and which probes to stat, so that one can be valid.
 */
async function writeMemo(
  workspaceRoot: string,
  answer: Pick<Memo, 'id' | 'results' | 'edges' | 'keyed' | 'env'>,
  keys: WorkspaceKeys,
  old: Memo | undefined,
  before: Snapshot | undefined,
  recording: Recording,
): Promise<void> {
  const outputs = [...new Set([...outputsOf(answer.results), ...toolOutputsOf(keys)])];
  // Every path read, and every directory above one.
  const read = new Set<string>();
  for (const f of [...readByKeys(keys), ...recording.inside]) {
    for (let path = f; path && !read.has(path); path = path.slice(0, Math.max(0, path.lastIndexOf('/')))) read.add(path);
  }
  const skip: string[] = [];
  const byContent: string[] = [];
  for (const dir of outputs) {
    // Left out only if no key read anything in it, and it was there, the same directory, before and
    // after the keys were computed (what lists its parent saw it and did not enter). One a key read is
    // fingerprinted by its files' contents instead (see Memo.byContent).
    if (read.has(dir)) {
      byContent.push(dir);
      continue;
    }
    const pre = before?.dirs.get(dir);
    if (pre && pre === dirIdentity(join(workspaceRoot, dir))) skip.push(dir);
  }
  byContent.sort();
  const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  let digest = '';
  let why: string;
  if (!before) why = 'no snapshot before (an unreadable entry or a symbolic link to a directory)';
  else if (!(old?.skip ?? []).every((d) => skip.includes(d))) why = 'an output directory left out before is read or was replaced';
  else if (readsOutside(workspaceRoot, keys)) why = 'a key read a module or file outside the walk';
  else {
    const prior = fingerprint(before, skip, recording.probes);
    if (prior.recent) why = `changed less than 2 s before: ${prior.recent}`;
    else if (!codeUnchanged()) why = "kiln's code changed";
    // The snapshot before walked these by the last memo's list: with another list, it cannot vouch.
    else if (!sameList(old?.byContent ?? [], byContent)) why = 'the output directories fingerprinted by content changed (the next graph build can answer)';
    else {
      const now = snapshot(workspaceRoot, skip, [...recording.probes.keys()], byContent);
      if (!now || fingerprint(now, skip, now.probes).digest !== prior.digest) why = 'a file changed while the keys were computed';
      else {
        digest = prior.digest;
        why = 'valid';
      }
    }
  }
  stats.lastWrite = why;
  if (digest) stats.written++;
  const memo: Memo = { format: MEMO_FORMAT, ...answer, skip, byContent, probes: [...recording.probes.keys()].sort(), fingerprint: digest, why };
  const file = memoFile(workspaceRoot);
  try {
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify(memo));
    await rename(tmp, file);
  } catch {
    // A memo that cannot be written costs time on the next graph build, nothing else.
  }
}

/** The folders tool keys never read (their targets' outputs), workspace-relative: the memo may skip them. */
function toolOutputsOf(keys: WorkspaceKeys): string[] {
  return keys.projects.flatMap((p) => Object.values(p.targets ?? {}).flatMap((t) => t.outputs.map((o) => posixJoin(p.root, o))));
}

/** The inferred targets' output directories inside their project (workspace-relative, POSIX). */
function outputsOf(results: NodesResults): string[] {
  const out = new Set<string>();
  for (const [, result] of results) {
    for (const [root, project] of Object.entries(result.projects ?? {})) {
      for (const target of Object.values(project.targets ?? {})) {
        for (const o of target.outputs ?? []) {
          // `{projectRoot}/dist` (the build) or `{workspaceRoot}/dist/codegraph/{projectRoot}` (the code graph).
          const atRoot = o.startsWith('{workspaceRoot}/');
          const rel = atRoot ? posixJoin(o.slice('{workspaceRoot}/'.length).replace('{projectRoot}', root)) : posixJoin(root, o.replace('{projectRoot}', '.'));
          const inside = atRoot ? rel !== '' && rel !== '.' : rel.startsWith(`${toPosix(root)}/`);
          if (inside && !rel.split('/').includes('..') && !/[*?{[]/.test(rel)) out.add(rel);
        }
      }
    }
  }
  return [...out].sort();
}

/** Workspace-relative paths of the modules and files the keys read (modules are read in worker threads, unrecorded). */
function readByKeys(keys: WorkspaceKeys): string[] {
  const read: string[] = [];
  for (const p of keys.projects) {
    for (const id of Object.keys(p.components?.modules ?? {})) read.push(posixJoin(p.root, id.slice(id.indexOf('//') + 2))); // a logical path (`src/a`), perhaps with `#order:…`
    for (const f of Object.keys(p.components?.files ?? {})) read.push(f.startsWith('/') ? posixJoin(f.slice(1)) : posixJoin(p.root, f));
  }
  return read;
}

/** Whether some key read a module or file where the walk does not go: outside the workspace, in a skipped directory, or in the store. */
function readsOutside(workspaceRoot: string, keys: WorkspaceKeys): boolean {
  const unwalked = unwalkedDirs(workspaceRoot);
  return readByKeys(keys).some(
    (rel) => rel.split('/')[0] === '..' || isAbsolute(rel) || rel.split('/').some((part) => SKIPPED_DIRS.has(part)) || unwalked.some((d) => rel === d || rel.startsWith(`${d}/`)),
  );
}

/**
 * kiln's slice store (`KILN_STORE`, else the user cache directory, as @kiln/core places it), when it
 * lies inside the workspace: content-addressed, never a key input, and written by every computation.
 */
function storeDir(): string {
  return resolve(process.env.KILN_STORE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kiln', 'store'));
}

/** Workspace-relative directories the walk leaves out besides SKIPPED_DIRS: the store, if inside. */
function unwalkedDirs(workspaceRoot: string): string[] {
  const rel = relative(workspaceRoot, storeDir());
  return rel && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) ? [toPosix(rel)] : [];
}

// ---------------------------------------------------------------------------------------------
// Snapshots

interface Stamp {
  text: string;
  /** Changed less than RACY_NS before it was taken. */
  recent: boolean;
}

interface Snapshot {
  /** The walk: workspace-relative path (so skipped outputs can be left out) and stamp. */
  walk: { path: string; stamp: Stamp }[];
  /** Install markers and kiln's code. */
  fixed: Stamp[];
  /** Probe path → stamp. */
  probes: Map<string, Stamp>;
  /** Every directory the walk met (entered, or left out as `skip`) → its identity (device, inode, birth time). */
  dirs: Map<string, string>;
}

function stampOf(s: BigIntStats | undefined, now: bigint, error?: string): Stamp {
  if (!s) return { text: error ?? 'missing', recent: false };
  const kind = s.isDirectory() ? 'd' : s.isFile() ? 'f' : 'o';
  return { text: `${kind}${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.ino}:${s.dev}`, recent: now - s.ctimeNs < RACY_NS || now - s.mtimeNs < RACY_NS };
}

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** A file of a by-content directory: its kind, size and bytes' digest (never racy: bytes are compared, not times). */
function contentStamp(abs: string, stat: Stamp): Stamp {
  if (!stat.text.startsWith('f')) return { text: stat.text.replace(/:.*/, ''), recent: false };
  try {
    return { text: `c${createHash('sha256').update(fsSync.readFileSync(abs)).digest('hex')}`, recent: false };
  } catch (e) {
    return { text: errorText(e), recent: false };
  }
}

/** The stamp of a path (following links), or `missing` / `error:CODE`. */
function stampPath(abs: string, now = nowNs()): Stamp {
  try {
    return stampOf(fsSync.statSync(abs, { bigint: true, throwIfNoEntry: false }), now);
  } catch (e) {
    return stampOf(undefined, now, errorText(e));
  }
}

const errorText = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' ? 'missing' : `error:${code ?? 'unknown'}`;
};

function dirIdentity(abs: string): string | null {
  try {
    const s = fsSync.lstatSync(abs, { bigint: true, throwIfNoEntry: false });
    return s?.isDirectory() ? `${s.dev}:${s.ino}:${s.birthtimeNs}` : null;
  } catch {
    return null;
  }
}

/** The digest of a snapshot without the walk entries inside `skip`, with these probes; `recent` if any part is. */
function fingerprint(snap: Snapshot, skip: string[], probes: Map<string, Stamp>): { digest: string; recent: string | undefined } {
  const left = new Set(skip);
  const inside = (path: string) => {
    if (!left.size) return false;
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) if (left.has(path.slice(0, i))) return true;
    return left.has(path);
  };
  const parts: Stamp[] = [...snap.walk.filter((e) => !inside(e.path)).map((e) => ({ text: `walk ${e.path} ${e.stamp.text}`, recent: e.stamp.recent })), ...snap.fixed];
  for (const [path, s] of probes) parts.push({ text: `probe ${path} ${s.text}`, recent: s.recent });
  const hash = createHash('sha256');
  for (const text of parts.map((p) => p.text).sort()) hash.update(`${text}\n`);
  return { digest: hash.digest('hex'), recent: parts.find((p) => p.recent)?.text };
}

/**
 * A snapshot: the walk (all but node_modules, .git, .nx and `skip`), the install markers and kiln's
 * code, and `probes`. `undefined` when it cannot vouch for the workspace (an unreadable directory, a
 * symbolic link to a directory: the walk does not follow them, readers may).
 */
function snapshot(workspaceRoot: string, skip: string[], probes: string[], byContent: string[] = []): Snapshot | undefined {
  // Synchronous: a few thousand stats cost a few milliseconds this way, several times that through
  // the thread pool; the worker has nothing else to do meanwhile.
  try {
    const now = nowNs();
    const left = new Set(skip);
    const unwalked = new Set(unwalkedDirs(workspaceRoot));
    const walk: Snapshot['walk'] = [];
    const dirs = new Map<string, string>();
    const contentDirs = new Set(byContent);
    const visit = (dir: string, rel: string, content: boolean): boolean => {
      for (const e of fsSync.readdirSync(dir, { withFileTypes: true })) {
        const abs = join(dir, e.name);
        const relPath = rel ? `${rel}/${e.name}` : e.name;
        if (SKIPPED_DIRS.has(e.name) || unwalked.has(relPath)) continue;
        if (e.isDirectory()) {
          const id = dirIdentity(abs);
          if (id) dirs.set(relPath, id);
          if (left.has(relPath)) continue;
          const inContent = content || contentDirs.has(relPath);
          // Its listing is its entries; by content, a re-created directory is the same directory.
          walk.push({ path: relPath, stamp: { text: inContent ? 'dir' : `dir ${id}`, recent: false } });
          if (!visit(abs, relPath, inContent)) return false;
          continue;
        }
        const stamp = stampPath(abs, now);
        if (stamp.text.startsWith('d')) return false; // a linked directory (readers may follow it, the walk does not)
        walk.push({ path: relPath, stamp: content ? contentStamp(abs, stamp) : stamp });
      }
      return true;
    };
    if (!visit(workspaceRoot, '', false)) return undefined;
    const code = processCode();
    if (!code) return undefined;
    const fixed = INSTALL_MARKERS.map((m) => {
      const stamp = stampPath(join(workspaceRoot, m), now);
      return { text: `marker ${m} ${stamp.text}`, recent: stamp.recent };
    });
    return {
      walk,
      fixed: [...fixed, ...code],
      probes: new Map(probes.map((p) => [p, stampPath(p, now)])),
      dirs,
    };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// kiln's code: stamped once per process, as loaded

const SELF = fileURLToPath(import.meta.url);
/** This module's stamp when it was loaded (a later rebuild must not pass for the code that runs). */
const selfAtLoad = (() => {
  try {
    return stampOf(fsSync.statSync(SELF, { bigint: true }), nowNs()).text;
  } catch {
    return 'unknown';
  }
})();

let codeStamps: Stamp[] | undefined;
/** kiln's code as this process runs it: stamped at its first lookup (before @kiln/core is loaded). */
const processCode = () => (codeStamps ??= stampCode());

/**
 * Every file of this package's dist and of @kiln/core's that can be loaded or read at run time (not
 * source maps, declarations or build info), and the TypeScript that parses tsconfigs and sources.
 */
function stampCode(): Stamp[] | undefined {
  try {
    const files: string[] = [];
    for (const dir of kilnCodeDirs()) {
      for (const f of fsSync.readdirSync(dir, { recursive: true, withFileTypes: true })) {
        if (!f.isDirectory() && !/\.(map|d\.ts|tsbuildinfo)$/.test(f.name)) files.push(join(f.parentPath, f.name));
      }
    }
    const ts = createRequire(coreEntry());
    files.push(ts.resolve('typescript/package.json'), ts.resolve('typescript'));
    const now = nowNs();
    const stamps = files.sort().map((f) => [f, stampPath(f, now)] as const);
    if (stamps.find(([f]) => f === SELF)?.[1].text !== selfAtLoad) return undefined;
    return stamps.map(([f, s]) => ({ text: `code ${f} ${s.text}`, recent: s.recent }));
  } catch {
    return undefined;
  }
}

/** Whether kiln's code on disk is still what this process stamped (and so what it ran). */
function codeUnchanged(): boolean {
  const was = processCode();
  const is = stampCode();
  return !!was && !!is && was.length === is.length && was.every((s, i) => s.text === is[i]!.text);
}

function kilnCodeDirs(): string[] {
  // This package's dist (this file is dist/plugins/src/index.js) and @kiln/core's.
  return [resolve(dirname(SELF), '..', '..'), dirname(coreEntry())];
}

const coreEntry = () => createRequire(import.meta.url).resolve('@kiln/core');

// ---------------------------------------------------------------------------------------------
// Recording what a computation reads

interface Recording {
  /** Workspace-relative (POSIX) paths read inside the walk. */
  inside: Set<string>;
  /** Absolute paths read outside the walk → their stamp just before the first read. */
  probes: Map<string, Stamp>;
  stop(): void;
}

const req = createRequire(import.meta.url);
const fsModule = req('node:fs') as Record<string, unknown> & { promises: Record<string, unknown> };
const listeners = new Set<(path: string) => void>();
/** [object, name, original, wrapper] of each patched function while recordings run. */
let patches: [Record<string, unknown>, string, unknown, unknown][] | undefined;

/** Node's file-system functions that read, stat or list a path (first argument). */
const FS_READERS = [
  'readFileSync', 'statSync', 'lstatSync', 'existsSync', 'readdirSync', 'accessSync', 'openSync', 'opendirSync', 'realpathSync',
  'readFile', 'stat', 'lstat', 'readdir', 'access', 'open', 'opendir', 'exists', 'realpath', 'createReadStream',
];
const FS_PROMISE_READERS = ['readFile', 'stat', 'lstat', 'readdir', 'access', 'open', 'opendir', 'realpath'];

function pathOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg.startsWith('file:') ? fileURLToPath(arg) : arg;
  if (arg instanceof URL) return arg.protocol === 'file:' ? fileURLToPath(arg) : undefined;
  if (Buffer.isBuffer(arg)) return arg.toString();
  return undefined;
}

function wrapReader(original: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    if (listeners.size) {
      try {
        const path = pathOf(args[0]);
        if (path !== undefined) for (const l of listeners) l(resolve(path));
      } catch {
        // recording never changes what the call does
      }
    }
    return Reflect.apply(original, this, args);
  };
  for (const k of Reflect.ownKeys(original)) {
    if (k === 'length' || k === 'name' || k === 'prototype') continue;
    const v = (original as unknown as Record<PropertyKey, unknown>)[k];
    (wrapper as unknown as Record<PropertyKey, unknown>)[k] = k === 'native' && typeof v === 'function' ? wrapReader(v as (...args: unknown[]) => unknown) : v;
  }
  return wrapper;
}

/**
 * Records every path read, stat'ed or listed through node:fs (sync, callback and promise forms, which
 * ES module imports of node:fs see too: syncBuiltinESMExports) by this thread until stop(). A path
 * inside the walk is noted; one outside it (and outside `excluded`: kiln's store, records, compile
 * cache and code, none of which a key depends on) is stamped before its first read. Worker threads
 * are not seen: they read the modules the keys list, which `readsOutside` checks.
 */
function startRecording(workspaceRoot: string, excluded: string[]): Recording {
  const inside = new Set<string>();
  const probes = new Map<string, Stamp>();
  const listener = (abs: string) => {
    if (excluded.some((e) => abs === e || abs.startsWith(`${e}${sep}`))) return;
    const rel = relative(workspaceRoot, abs);
    const parts = rel.split(sep);
    if (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) && !parts.some((p) => SKIPPED_DIRS.has(p))) {
      inside.add(parts.join('/'));
    } else if (!probes.has(abs)) {
      const now = nowNs();
      let s: BigIntStats | undefined;
      let error: string | undefined;
      try {
        s = fsSync.statSync(abs, { bigint: true, throwIfNoEntry: false });
      } catch (e) {
        error = errorText(e);
      }
      probes.set(abs, stampOf(s, now, error));
    }
  };
  if (!patches) {
    patches = [];
    for (const [object, names] of [[fsModule, FS_READERS], [fsModule.promises, FS_PROMISE_READERS]] as const) {
      for (const name of names) {
        const original = object[name];
        if (typeof original !== 'function') continue;
        const wrapper = wrapReader(original as (...args: unknown[]) => unknown);
        object[name] = wrapper;
        patches.push([object, name, original, wrapper]);
      }
    }
    syncBuiltinESMExports();
  }
  listeners.add(listener);
  return {
    inside,
    probes,
    stop() {
      listeners.delete(listener);
      if (listeners.size || !patches) return;
      // A function someone patched over ours stays (ours passes through when nothing records).
      for (const [object, name, original, wrapper] of patches) if (object[name] === wrapper) object[name] = original;
      patches = undefined;
      syncBuiltinESMExports();
    },
  };
}

const toPosix = (p: string) => p.split(sep).join('/');
const posixJoin = (...parts: string[]) => toPosix(join(...parts));
