#!/usr/bin/env node
/**
 * Overhead benchmark (issue 3, point 8): what kiln's keys cost an Nx user on a fully cached build.
 *
 * One generated workspace of TypeScript libraries (tools/lib/bench-workspace.mjs: ≥ 50 libraries, a
 * layered dependency DAG, 3-8 files of varied size each), in two copies that differ only in how `build`
 * is keyed:
 *   kiln   the @kiln/nx plugin, registered by its init generator: inferred `build` targets, `inputs: []`,
 *          the kiln unit key in the options (computed in createNodes, on every project-graph build);
 *   plain  the same executor (`@kiln/nx:build`, so a build is the same work) declared in each
 *          package.json (`nx.targets.build`), with the usual `production` / `^production` inputs from
 *          nx.json targetDefaults: Nx hashes the files.
 *   floor  plain, plus a no-op Nx plugin (its createNodesV2 answers `{}` for every package.json): what any
 *          plugin costs by itself — Nx 24 starts one more worker process per project-graph build for it.
 * All are built once; then fully cached `nx run-many -t build` runs are timed side by side, interleaved
 * (A B, B A, …), with the daemon off (the default here) and, if it starts, on. Every timed run must be
 * 100 % local cache hits, or the benchmark fails. With the daemon off, a third column runs kiln with its
 * graph memo deleted before each run (createNodes computes every key: the first command after an edit). Also: keying the whole workspace cold (empty kiln store)
 * vs warm (`computeWorkspaceKeys` twice in one process, and once more in a fresh process, which is what a
 * plugin worker does), and where the plugin's time goes (Nx's perf marks; a CPU profile of createNodes +
 * createDependencies called as Nx calls them).
 *
 * Usage: node tools/bench-overhead.mjs [--libs N] [--reps N] [--no-daemon] [--keep]
 * Requires a build (`npm run build`). Works offline; every temp dir is removed at the end (unless --keep).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join, relative } from 'node:path';
import { createWorkspace, disposeAll, exec, cleanEnv, KILN_ROOT, FIXTURES_DIR } from './testing/workspace.mjs';
import { writeBenchWorkspace } from './lib/bench-workspace.mjs';
import { cliArgs } from './lib/cli-args.mjs';

const HELP = `usage: node tools/bench-overhead.mjs [--libs N] [--reps N] [--no-daemon] [--keep]

  --libs N      libraries in the generated workspace (default 60, at least 50)
  --reps N      timed fully cached runs per variant and daemon mode, interleaved (default 7, at least 5)
  --key-reps N  cold/warm keying repetitions (default 3)
  --no-daemon   skip the NX_DAEMON=true measurement
  --keep        keep the temp workspaces (paths printed)
`;

const { args } = cliArgs(
  {
    libs: { type: 'string', default: '60' },
    reps: { type: 'string', default: '7' },
    'key-reps': { type: 'string', default: '3' },
    'no-daemon': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
  HELP,
);
const LIBS = Number(args.libs);
const REPS = Number(args.reps);
const KEY_REPS = Number(args['key-reps']);
if (!(LIBS >= 50) || !(REPS >= 5) || !(KEY_REPS >= 1)) {
  process.stderr.write(`--libs must be ≥ 50, --reps ≥ 5, --key-reps ≥ 1\n${HELP}`);
  process.exit(2);
}
if (args.keep) process.env.KILN_KEEP_TEMP = '1';

const CORE_DIST = join(KILN_ROOT, 'packages/core/dist/index.js');
const NX_PLUGIN_DIST = join(KILN_ROOT, 'packages/nx/dist/plugins/src/index.js');
for (const f of [CORE_DIST, NX_PLUGIN_DIST]) {
  if (!existsSync(f)) {
    process.stderr.write(`${relative(KILN_ROOT, f)} is missing: run \`npm run build\` first\n`);
    process.exit(1);
  }
}

const BUILD = ['run-many', '-t', 'build'];
const started = Date.now();
const log = (s = '') => process.stdout.write(`${s}\n`);
const progress = (s) => process.stderr.write(`[bench-overhead ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${Math.round(x)}`;
const stat = (xs) => `${ms(median(xs)).padStart(6)} [${ms(Math.min(...xs))}–${ms(Math.max(...xs))}]`;
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// ---------------------------------------------------------------------------------------------
// Machine facts

function machineFacts() {
  const cpus = os.cpus();
  const facts = {
    cpu: `${cpus.length} × ${cpus[0]?.model ?? 'unknown'}`,
    availableParallelism: os.availableParallelism(),
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB total, ${(os.freemem() / 2 ** 30).toFixed(1)} GiB free`,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    nx: readJsonSafe(join(KILN_ROOT, 'node_modules/nx/package.json'))?.version,
    typescript: readJsonSafe(join(KILN_ROOT, 'node_modules/typescript/package.json'))?.version,
    tmpdir: os.tmpdir(),
  };
  try {
    const max = readFileSync('/sys/fs/cgroup/cpu.max', 'utf8').trim();
    facts.cgroupCpuMax = max;
  } catch {
    /* not cgroup v2 */
  }
  try {
    const top = execFileSync('ps', ['-eo', 'pcpu,comm', '--sort=-pcpu', '--no-headers'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .slice(0, 5)
      .map((l) => l.trim().replace(/\s+/, '% '));
    facts.busiest = top.join(', ');
  } catch {
    /* no ps */
  }
  return facts;
}

function readJsonSafe(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Nx runs

/** A fully cached run: wall time of the whole `nx` process; fails unless every task was a local hit. */
async function cachedRun(ws, env, label) {
  const loadBefore = os.loadavg()[0];
  const r = await ws.runNx(BUILD, { env });
  const tasks = Object.keys(r.statuses).length;
  if (tasks !== LIBS || r.localHits.length !== LIBS) {
    throw new Error(`${label}: expected ${LIBS} local cache hits, got ${r.localHits.length} of ${tasks} tasks (executed: ${r.executed.join(', ')})`);
  }
  return { ms: r.durationMs, load: loadBefore };
}

/** Interleaved reps: A B, B A, A B, … so drift in the machine's load hits both variants alike. */
async function interleaved(variants, env, reps, label) {
  const times = Object.fromEntries(variants.map((v) => [v.name, []]));
  const loads = [];
  for (let i = 0; i < reps; i++) {
    const order = i % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      await v.before?.();
      const r = await cachedRun(v.ws, { ...v.env, ...env }, `${label} ${v.name} rep ${i + 1}`);
      times[v.name].push(r.ms);
      loads.push(r.load);
    }
    progress(`${label} rep ${i + 1}/${reps}: ${variants.map((v) => `${v.name} ${times[v.name].at(-1)} ms`).join(', ')} (load ${load()})`);
  }
  return { times, loads };
}

/** `Time taken for 'X' Yms` lines of NX_PERF_LOGGING, as [name, ms]. */
function perfMarks(output) {
  const out = [];
  for (const m of output.matchAll(/Time taken for '([^']+)' ([\d.]+)ms/g)) out.push([m[1], Number(m[2])]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Keying, outside Nx

/** Runs an ESM snippet in a fresh node; returns its last JSON line. */
async function nodeJson(source, { cwd, env = {}, nodeArgs = [], timeoutMs = 600_000 }) {
  const r = await exec(process.execPath, [...nodeArgs, '--input-type=module', '-e', source], { cwd, env: cleanEnv(env), timeoutMs });
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (r.code !== 0 || !line) throw new Error(`node snippet failed (exit ${r.code}):\n${r.output.slice(-3000)}`);
  return JSON.parse(line);
}

const KEYING_SNIPPET = (root, store, runs) => `
const t0 = performance.now();
const { computeWorkspaceKeys } = await import(${JSON.stringify(CORE_DIST)});
const importMs = performance.now() - t0;
const runs = [];
for (let i = 0; i < ${runs}; i++) {
  const t = performance.now();
  const k = await computeWorkspaceKeys(${JSON.stringify(root)}, { store: ${JSON.stringify(store)}, record: false });
  runs.push({ ms: performance.now() - t, parsed: k.stats.parsed, files: k.stats.files, projects: k.stats.projects, keyed: k.projects.filter((p) => p.key).length });
}
console.log(JSON.stringify({ importMs, runs }));
`;

/**
 * createNodesV2 then createDependencies, called as Nx's plugin worker calls them, in a fresh process
 * (import of the plugin included), optionally under --cpu-prof.
 */
const PLUGIN_SNIPPET = (root, configFiles, projects) => `
const t0 = performance.now();
const plugin = await import(${JSON.stringify(NX_PLUGIN_DIST)});
const importMs = performance.now() - t0;
const ctx = { workspaceRoot: ${JSON.stringify(root)}, nxJsonConfiguration: {} };
const t1 = performance.now();
const nodes = await plugin.createNodesV2[1](${JSON.stringify(configFiles)}, undefined, ctx);
const createNodesMs = performance.now() - t1;
const projects = ${JSON.stringify(projects)};
const t2 = performance.now();
const deps = await plugin.createDependencies(undefined, { ...ctx, projects, fileMap: {}, filesToProcess: {}, externalNodes: {} });
const createDependenciesMs = performance.now() - t2;
const targets = nodes.filter(([, r]) => r.projects).length;
const digest = (await import('node:crypto')).createHash('sha256').update(JSON.stringify([nodes, deps])).digest('hex');
console.log(JSON.stringify({ importMs, createNodesMs, createDependenciesMs, targets, edges: deps.length, digest }));
`;

/** Self time of a V8 CPU profile, grouped by where the code lives. */
async function summariseProfile(dir) {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (!files.length) return null;
  const p = JSON.parse(await readFile(join(dir, files[0]), 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  p.samples.forEach((id, i) => {
    const d = p.timeDeltas[i] ?? 0;
    total += d;
    self.set(id, (self.get(id) ?? 0) + d);
  });
  const groups = new Map();
  const fns = new Map();
  for (const [id, t] of self) {
    const n = byId.get(id);
    const url = n.callFrame.url.replace(/^file:\/\//, '');
    let g;
    if (!url) g = n.callFrame.functionName === '(garbage collector)' ? 'GC' : n.callFrame.functionName === '(idle)' ? 'idle (waiting on I/O)' : `native ${n.callFrame.functionName || '(program)'}`;
    else if (url.includes('/packages/core/dist/')) g = `@kiln/core ${url.split('/packages/core/dist/')[1].split('/').slice(0, -1).join('/') || '.'}/`;
    else if (url.includes('/packages/nx/dist/')) g = '@kiln/nx plugin';
    else if (url.includes('/node_modules/typescript/')) g = 'typescript (tsconfig parsing, module load)';
    else if (url.includes('/node_modules/')) g = `node_modules/${url.split('/node_modules/').pop().split('/')[0]}`;
    else if (url.startsWith('node:')) g = `node ${url.split('/')[0]}`;
    else g = 'other';
    groups.set(g, (groups.get(g) ?? 0) + t);
    if (url) {
      const fk = `${n.callFrame.functionName || '(anonymous)'} (${url.replace(/.*\/packages\/core\/dist\//, 'core/').replace(/.*\/node_modules\//, '')}:${n.callFrame.lineNumber + 1})`;
      fns.set(fk, (fns.get(fk) ?? 0) + t);
    }
  }
  const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, t]) => ({ name, ms: t / 1000 }));
  return { totalMs: total / 1000, groups: top(groups, 14), functions: top(fns, 12) };
}

// ---------------------------------------------------------------------------------------------

const scratch = await mkdtemp(join(os.tmpdir(), 'kiln-bench-overhead-'));
const store = join(scratch, 'kiln-store'); // the kiln store both variants' nx processes see (KILN_STORE)
const workspaces = [];
const daemonsToStop = [];
let failed = false;

try {
  const facts = machineFacts();
  log('kiln overhead benchmark — fully cached `nx run-many -t build`, kiln keys vs plain Nx inputs');
  log(`command: node tools/bench-overhead.mjs ${process.argv.slice(2).join(' ')}`.trimEnd());
  log(`machine: ${facts.cpu}; availableParallelism ${facts.availableParallelism}${facts.cgroupCpuMax ? `; cgroup cpu.max ${facts.cgroupCpuMax}` : ''}; ${facts.memory}`);
  log(`         ${facts.os}; node ${facts.node}; nx ${facts.nx}; typescript ${facts.typescript}`);
  log(`load average at start (1/5/15 min): ${load()} — a shared machine: other engineers' jobs run beside this one`);
  if (facts.busiest) log(`busiest processes at start: ${facts.busiest}`);

  // 1. The workspace, twice.
  progress('generating the workspace');
  const template = join(scratch, 'template');
  await mkdir(template);
  const { facts: wsFacts } = await writeBenchWorkspace(template, { libs: LIBS, lockTemplate: join(FIXTURES_DIR, 'workspace-basic/package-lock.json') });
  log(
    `workspace: ${wsFacts.libs} libraries in ${wsFacts.layers} layers, ${wsFacts.edges} dependency edges, depth ${wsFacts.depth}, ` +
      `max fan-in ${wsFacts.maxFanIn}; ${wsFacts.files} .ts files, ${(wsFacts.bytes / 1024).toFixed(0)} KiB`,
  );
  const envAll = { KILN_STORE: store };
  const plain = await createWorkspace(template, { message: 'plain nx' });
  const kiln = await createWorkspace(template, { message: 'generated', prepare: (w) => w.removePackageNxConfig() });
  // The no-op plugin is an installed package, as kiln is (a local plugin path costs Nx an extra pass
  // over the workspace to resolve it).
  const NOOP = 'kiln-bench-noop-plugin';
  const floor = await createWorkspace(template, {
    message: 'plain nx + a no-op plugin',
    prepare: async (w) => {
      const nx = await w.readJson('nx.json');
      await w.writeJson('nx.json', { ...nx, plugins: [...(nx.plugins ?? []), NOOP] });
    },
  });
  await floor.writeJson(`node_modules/${NOOP}/package.json`, { name: NOOP, version: '0.0.0', main: 'index.js' });
  await floor.write(`node_modules/${NOOP}/index.js`, "exports.createNodesV2 = ['**/package.json', async (files) => files.map((f) => [f, {}])];\n");
  workspaces.push(plain, kiln, floor);
  await kiln.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive'], { env: envAll });
  const nxJson = await kiln.readJson('nx.json');
  if (!nxJson.plugins?.some((p) => (typeof p === 'string' ? p : p.plugin) === '@kiln/nx')) throw new Error('the init generator did not register @kiln/nx');
  await kiln.commit('nx g @kiln/nx:init');
  const variants = [
    { name: 'plain', ws: plain, env: envAll },
    { name: 'kiln', ws: kiln, env: envAll },
    { name: 'floor', ws: floor, env: envAll },
  ];
  // kiln with its graph memo removed before each run: every graph build computes the keys (from the warm
  // store), as the first nx command after any edit does.
  const memoFile = kiln.path('node_modules/.cache/kiln/graph-memo.json');
  const kilnNoMemo = { name: 'kilnNoMemo', ws: kiln, env: envAll, before: () => rm(memoFile, { force: true }) };
  // Whether each timed kiln run started with a valid memo (one that can answer without computing keys).
  const memoAtStart = [];
  variants[1].before = async () => {
    const m = existsSync(memoFile) ? JSON.parse(await readFile(memoFile, 'utf8')) : null;
    memoAtStart.push(Boolean(m?.fingerprint));
  };
  log(`workspaces: plain ${plain.root}\n            kiln  ${kiln.root}   (kiln store ${store})\n            floor ${floor.root}`);

  // 2. Build both fully once (every task executes), then check both really are keyed as intended.
  const firstBuild = {};
  for (const v of variants) {
    progress(`first full build of ${v.name} (${LIBS} tasks execute)`);
    const r = await v.ws.runNx(BUILD, { env: v.env, timeoutMs: 1_200_000 });
    if (r.executed.length !== LIBS) throw new Error(`${v.name}: first build executed ${r.executed.length} of ${LIBS} tasks`);
    firstBuild[v.name] = r.durationMs;
  }
  const target = async (ws) => {
    const r = await ws.runNx(['show', 'project', '@bench/l0-strings', '--json'], { env: envAll });
    return JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))).targets.build;
  };
  const [pt, kt] = [await target(plain), await target(kiln)];
  if (pt.executor !== '@kiln/nx:build' || kt.executor !== '@kiln/nx:build') throw new Error(`executors differ: ${pt.executor} / ${kt.executor}`);
  // kiln's inputs: no files and no external dependencies (`[]` before kiln hashed no externals either).
  const noRawInputs = Array.isArray(kt.inputs) && kt.inputs.every((i) => JSON.stringify(i) === JSON.stringify({ externalDependencies: [] }));
  if (!kt.options?.kilnKey || !noRawInputs) throw new Error(`kiln's target is not keyed by kiln: ${JSON.stringify(kt)}`);
  if (pt.options?.kilnKey || JSON.stringify(pt.inputs) !== JSON.stringify(['production', '^production'])) throw new Error(`plain target: ${JSON.stringify(pt)}`);
  log(`targets: both '@kiln/nx:build'; plain inputs ${JSON.stringify(pt.inputs)}; kiln inputs ${JSON.stringify(kt.inputs)} + options.kilnKey (${kt.options.kilnKey})`);
  log(`first full build (all ${LIBS} tasks execute, parallel 3): plain ${ms(firstBuild.plain)} ms, kiln ${ms(firstBuild.kiln)} ms, floor ${ms(firstBuild.floor)} ms (not compared: compile-bound and load-sensitive)`);

  // 3. Fully cached runs, daemon off (NX_DAEMON=false from the harness).
  progress('warm-up cached runs (daemon off)');
  for (const v of variants) await cachedRun(v.ws, v.env, `${v.name} warm-up`);
  const memoState = existsSync(memoFile) ? JSON.parse(await readFile(memoFile, 'utf8')) : null;
  const off = await interleaved([...variants, kilnNoMemo], {}, REPS, 'daemon off');
  await cachedRun(kiln, envAll, 'kiln memo rebuild'); // leave a memo behind for what follows
  await cachedRun(kiln, envAll, 'kiln memo rebuild');

  // 4. Where the time goes (daemon off): Nx's perf marks for one run of each.
  progress('NX_PERF_LOGGING runs');
  const marks = {};
  for (const v of [...variants, kilnNoMemo]) {
    await v.before?.();
    const r = await v.ws.runNx(BUILD, { env: { ...v.env, NX_PERF_LOGGING: 'true' } });
    marks[v.name] = perfMarks(r.output);
  }
  await cachedRun(kiln, envAll, 'kiln memo rebuild');

  // 5. Daemon on.
  let on = null;
  let daemonNote = '';
  if (!args['no-daemon']) {
    const daemonEnv = { NX_DAEMON: 'true' };
    try {
      progress('daemon on: starting the daemons (first run of each computes the graph)');
      const startMs = {};
      for (const v of variants) {
        daemonsToStop.push(v);
        const r = await cachedRun(v.ws, { ...v.env, ...daemonEnv }, `${v.name} daemon start`);
        startMs[v.name] = r.ms;
        const status = await v.ws.runNx(['daemon'], { env: { ...v.env, ...daemonEnv }, allowFailure: true });
        if (!/Daemon is currently running/i.test(status.output)) throw new Error(`no daemon for ${v.name}: ${status.output.slice(0, 300)}`);
      }
      for (const v of variants) await cachedRun(v.ws, { ...v.env, ...daemonEnv }, `${v.name} daemon warm-up`);
      on = await interleaved(variants, daemonEnv, REPS, 'daemon on');
      daemonNote = `first run with the daemon starting it (graph computed): plain ${ms(startMs.plain)} ms, kiln ${ms(startMs.kiln)} ms`;
    } catch (e) {
      daemonNote = `daemon measurement skipped: ${e.message.split('\n')[0]}`;
    } finally {
      await stopDaemons();
    }
  }

  // 6. Keying outside Nx: cold (empty store) vs warm, and the plugin's own calls under a profiler.
  progress('keying the workspace cold vs warm');
  const keying = { cold: [], warmSame: [], warmFresh: [], importMs: [] };
  let keyedFacts = null;
  for (let i = 0; i < KEY_REPS; i++) {
    const coldStore = join(scratch, `key-store-${i}`);
    const a = await nodeJson(KEYING_SNIPPET(kiln.root, coldStore, 2), { cwd: kiln.root });
    const b = await nodeJson(KEYING_SNIPPET(kiln.root, coldStore, 1), { cwd: kiln.root });
    keying.cold.push(a.runs[0].ms);
    keying.warmSame.push(a.runs[1].ms);
    keying.warmFresh.push(b.runs[0].ms);
    keying.importMs.push(b.importMs);
    keyedFacts = { cold: a.runs[0], warm: a.runs[1], fresh: b.runs[0] };
    progress(`keying rep ${i + 1}/${KEY_REPS}: cold ${ms(a.runs[0].ms)} ms, warm ${ms(a.runs[1].ms)} ms, warm fresh process ${ms(b.runs[0].ms)} ms`);
    await rm(coldStore, { recursive: true, force: true });
  }
  if (keyedFacts.cold.parsed !== keyedFacts.cold.files || keyedFacts.warm.parsed !== 0 || keyedFacts.fresh.parsed !== 0) {
    throw new Error(`keying: expected every file parsed cold and none warm: ${JSON.stringify(keyedFacts)}`);
  }

  progress('profiling createNodes + createDependencies as a plugin worker runs them');
  const pkgFiles = ['package.json', ...(await kiln.packages()).map((p) => relative(kiln.root, join(p.dir, 'package.json')))].sort();
  const projects = Object.fromEntries((await kiln.packages()).map((p) => [p.name, { root: relative(kiln.root, p.dir) }]));
  const pluginRuns = { hit: [], miss: [] };
  for (let i = 0; i < 3; i++) {
    pluginRuns.hit.push(await nodeJson(PLUGIN_SNIPPET(kiln.root, pkgFiles, projects), { cwd: kiln.root, env: envAll }));
    await rm(memoFile, { force: true });
    pluginRuns.miss.push(await nodeJson(PLUGIN_SNIPPET(kiln.root, pkgFiles, projects), { cwd: kiln.root, env: envAll }));
  }
  const profDir = join(scratch, 'cpuprofile');
  await rm(memoFile, { force: true });
  await nodeJson(PLUGIN_SNIPPET(kiln.root, pkgFiles, projects), { cwd: kiln.root, env: envAll, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] });
  const profile = await summariseProfile(profDir);

  // ---------------------------------------------------------------------------------------------
  // Report
  log();
  log(`## Fully cached \`nx run-many -t build\` (${LIBS} tasks, every one a local cache hit), wall ms of the nx process`);
  log(`   median [min–max] over ${REPS} interleaved reps per cell; ratio = median / median plain (in parentheses: median of the paired per-rep ratios)`);
  log();
  const cell = (xs) => stat(xs).padEnd(24);
  const ratio = (t, name, base = 'plain') => `${(median(t[name]) / median(t[base])).toFixed(2)}× (${median(t[name].map((k, i) => k / t[base][i])).toFixed(2)}×)`.padEnd(15);
  log('| mode                 | plain Nx (production)    | kiln (memo hit)          | kiln / plain    | kiln, keys recomputed *  | recomputed / plain | plain + no-op plugin **  | floor / plain   | kiln / floor    | load avg  |');
  log('|----------------------|--------------------------|--------------------------|-----------------|--------------------------|--------------------|--------------------------|-----------------|-----------------|-----------|');
  const loads = (m) => `${Math.min(...m.loads).toFixed(1)}–${Math.max(...m.loads).toFixed(1)}`.padEnd(9);
  log(`| daemon off (default) | ${cell(off.times.plain)} | ${cell(off.times.kiln)} | ${ratio(off.times, 'kiln')} | ${cell(off.times.kilnNoMemo)} | ${ratio(off.times, 'kilnNoMemo').padEnd(18)} | ${cell(off.times.floor)} | ${ratio(off.times, 'floor')} | ${ratio(off.times, 'kiln', 'floor')} | ${loads(off)} |`);
  if (on) log(`| NX_DAEMON=true       | ${cell(on.times.plain)} | ${cell(on.times.kiln)} | ${ratio(on.times, 'kiln')} | ${'—'.padEnd(24)} | ${'—'.padEnd(18)} | ${cell(on.times.floor)} | ${ratio(on.times, 'floor')} | ${ratio(on.times, 'kiln', 'floor')} | ${loads(on)} |`);
  log();
  log('* kiln, keys recomputed: the graph memo (node_modules/.cache/kiln/graph-memo.json) deleted before each run, so createNodes');
  log('  computes every key from the warm store: what the first nx command after any edit pays, and what every run paid before the memo.');
  log('** plain + no-op plugin: the plain workspace with one more Nx plugin whose createNodesV2 does nothing — the floor for any');
  log('   plugin, since Nx 24 starts a worker process for each plugin on every project-graph build (daemon off) and the machine has');
  log(`   ${os.availableParallelism()} CPUs for them all. kiln / floor is what kiln itself adds.`);
  log(`kiln graph memo before the timed runs: ${memoState ? (memoState.fingerprint ? `valid (leaves out ${memoState.skip.length} output dirs)` : 'present, not yet valid') : 'absent'}; timed kiln runs that started with a valid memo: ${memoAtStart.filter(Boolean).length}/${memoAtStart.length}`);
  const ratioOf = (t) => median(t.kiln) / median(t.plain);
  const verdict = (r) => `${r <= 1.05 ? 'meets the stretch target (≤ 1.05×)' : r <= 1.2 ? 'meets the target (≤ 1.2×), misses the stretch (1.05×)' : 'MISSES the target (≤ 1.2×)'}`;
  log(`daemon off: ${verdict(ratioOf(off.times))}; kiln − plain = ${ms(median(off.times.kiln) - median(off.times.plain))} ms per invocation (keys recomputed: ${ms(median(off.times.kilnNoMemo) - median(off.times.plain))} ms)`);
  log(`daemon off: kiln − floor = ${ms(median(off.times.kiln) - median(off.times.floor))} ms per invocation (a no-op plugin alone: floor − plain = ${ms(median(off.times.floor) - median(off.times.plain))} ms)`);
  if (on) log(`daemon on:  ${verdict(ratioOf(on.times))}; kiln − plain = ${ms(median(on.times.kiln) - median(on.times.plain))} ms per invocation`);
  if (daemonNote) log(daemonNote);
  log();
  log(`## Keying the whole workspace (${keyedFacts.cold.projects} projects, ${keyedFacts.cold.files} files), computeWorkspaceKeys, ms, median [min–max] of ${KEY_REPS}`);
  log();
  log('| cold: empty store (every file parsed in the pool) | warm: same process, 2nd call | warm: fresh process (a plugin worker) | import @kiln/core |');
  log('|---------------------------------------------------|------------------------------|---------------------------------------|------------------|');
  log(`| ${stat(keying.cold).padEnd(49)} | ${stat(keying.warmSame).padEnd(28)} | ${stat(keying.warmFresh).padEnd(37)} | ${stat(keying.importMs).padEnd(16)} |`);
  log();
  log(`warm / cold = ${(median(keying.warmSame) / median(keying.cold)).toFixed(2)} (same process), ${(median(keying.warmFresh) / median(keying.cold)).toFixed(2)} (fresh process)`);
  log();
  log('## Where the kiln variant\'s extra time goes (daemon off)');
  log();
  const interesting = (name) =>
    /@kiln\/nx|createNodes$|createDependencies$|loadSpecifiedNxPlugins|loadDefaultNxPlugins|build-project-configs|createProjectGraphAsync$|^code-loading/.test(name) && !/^nx\/js\/dependencies-and-lockfile:createNodes/.test(name);
  for (const v of [...variants, kilnNoMemo]) {
    const shown = marks[v.name].filter(([n]) => interesting(n));
    log(`Nx perf marks, ${v.name}: ${shown.map(([n, t]) => `${n} ${ms(t)}`).join('; ') || '(none)'}`);
  }
  log(`(Nx 24 runs each plugin in its own worker process, started for each project-graph build and stopped after it, daemon`);
  log(` or not: nothing survives in memory between graph builds; the kiln store and kiln's graph memo are on disk.)`);
  log();
  log(`the plugin called as Nx calls it (createNodesV2, then createDependencies), a fresh process each, ${pluginRuns.hit.length} runs, ms (${pluginRuns.hit[0].targets} targets, ${pluginRuns.hit[0].edges} edges):`);
  for (const [label, runs] of [['memo hit', pluginRuns.hit], ['keys computed (memo deleted)', pluginRuns.miss]]) {
    log(`  ${label.padEnd(29)} import ${stat(runs.map((r) => r.importMs))}; createNodesV2 ${stat(runs.map((r) => r.createNodesMs))}; createDependencies ${stat(runs.map((r) => r.createDependenciesMs))}`);
  }
  if (JSON.stringify(pluginRuns.hit.map((r) => r.digest)) !== JSON.stringify(pluginRuns.miss.map((r) => r.digest))) throw new Error('the memo hit answered differently from the computed keys');
  if (profile) {
    log(`CPU profile of a run that computes the keys (import + createNodes + createDependencies), ${ms(profile.totalMs)} ms sampled, self time:`);
    for (const g of profile.groups) log(`  ${ms(g.ms).padStart(6)} ms  ${(100 * g.ms / profile.totalMs).toFixed(0).padStart(3)} %  ${g.name}`);
    log('  hottest functions:');
    for (const f of profile.functions) log(`  ${ms(f.ms).padStart(6)} ms  ${f.name}`);
  }
  log();
  log(`load average at end: ${load()}; total benchmark time ${((Date.now() - started) / 1000).toFixed(0)} s`);
} catch (e) {
  failed = true;
  process.stderr.write(`bench-overhead failed: ${e.stack ?? e}\n`);
} finally {
  await stopDaemons();
  if (args.keep) progress(`kept ${scratch} and the workspaces`);
  else await rm(scratch, { recursive: true, force: true });
  await disposeAll();
}
process.exit(failed ? 1 : 0);

/** `nx daemon --stop` in every workspace whose daemon this run may have started (idempotent). */
async function stopDaemons() {
  while (daemonsToStop.length) {
    const v = daemonsToStop.pop();
    try {
      await v.ws.runNx(['daemon', '--stop'], { env: { ...v.env, NX_DAEMON: 'true' }, allowFailure: true, timeoutMs: 60_000 });
    } catch (e) {
      process.stderr.write(`could not stop the daemon of ${v.ws.root}: ${e.message.split('\n')[0]}\n`);
    }
  }
}
