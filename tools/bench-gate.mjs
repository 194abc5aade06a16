#!/usr/bin/env node
/**
 * Benchmark gate (issue 12): "bench-digest, bench-graph and bench-overhead show no regression beyond
 * run-to-run noise, measured before and after side by side in one run". Two revisions of kiln (default:
 * 3d0a47a, the last commit before the renovation of packages/core/src, and HEAD) are checked out as
 * detached git worktrees in a temporary directory; each gets node_modules (a `cp -a` of this repository's
 * when the lockfiles are equal — the @kiln/* links inside are relative, so they point into the copy — else
 * `npm ci --offline`) and is built (`npm run build`). Then each benchmark runs on both sides, interleaved
 * (before, after, after, before, before, after, …) so drift in the machine's load hits both alike, and one
 * table per benchmark prints its key metrics side by side: each side's median [min–max] and spread, the
 * ratio after/before, the ratio allowed, and a verdict.
 *
 * What is measured, and how it is read: each side runs its OWN copy of the benchmark (tools/ of that
 * revision) against its own build, so the API and the internal module paths a benchmark reaches for (the
 * renovation moved folders and narrowed @kiln/core's public API: HEAD's bench-digest imports internals
 * 3d0a47a does not have) always match the engine under test. Where the two copies differ, the gate says so
 * (`git diff --stat` of what each benchmark runs), so a changed method is not mistaken for a changed engine.
 * bench-graph is read from its `--json FILE` (both revisions have it). bench-digest and bench-overhead have
 * no JSON output at 3d0a47a, and a JSON option added now would exist on one side only, so their printed
 * tables are parsed, by one parser for both sides (rows matched by label prefix; a row missing on a side is
 * reported as n/a and fails the gate, never dropped silently). Every metric is lower-is-better: a time in
 * ms, a paired within-run ratio (kiln / plain Nx), or store bytes.
 *
 * The verdict: a sample is one run of a benchmark (its own median over its --reps), except bench-overhead,
 * whose every fully cached nx run, paired ratio and keying rep is a sample (read from its progress lines):
 * one bench-overhead run spends ~10 min building its three workspaces before it times anything, so it runs
 * once per side (--overhead-runs) and its repetitions are the runs. ratio = median(after samples) /
 * median(before samples); a side's spread = (max − min) / median of its samples, its run-to-run noise in
 * this very session; REGRESSION when ratio > 1 + max(spread before, spread after), else PASS ("better"
 * when ratio < 1 − that). With one sample per side there is no spread and any slowdown is flagged, so
 * --runs must be ≥ 2 to mean anything. Deterministic metrics (store bytes) have no spread: any growth is
 * flagged. Rows marked "control" time code kiln does not own (tree-sitter, Nx without kiln) and rows marked
 * "not gated" are splits of a gated row: both are shown with a verdict and do not decide the gate; a
 * control outside its allowance says the spreads understate this session's noise.
 *
 * Invariants: this repository's work tree is not modified (the worktrees live in the temp dir and are
 * removed with `git worktree remove --force` and `git worktree prune` at the end, unless --keep); a side
 * given as a directory is used as it is (it must be built), never built or cleaned; both sides get the same
 * corpus (bench-digest's node_modules fallback from identical node_modules copies, or --digest-corpus;
 * bench-graph one trpc commit, resolved once); every run's stdout/stderr goes to the temp dir or --logs DIR,
 * which --replay DIR reads again. Exit code 0 when every gated metric passes, 1 on a REGRESSION, 2 when a
 * run failed or a metric is missing on one side.
 *
 * Usage: node tools/bench-gate.mjs [--before REV|DIR] [--after REV|DIR] [--runs N] [--bench digest,graph,overhead]
 *          [--digest-files N] [--digest-reps N] [--digest-corpus DIR]
 *          [--graph-packages LIST] [--graph-reps N] [--graph-edit-reps N] [--graph-checker] [--graph-repo GIT_DIR]
 *          [--overhead-runs N] [--overhead-libs N] [--overhead-reps N] [--overhead-key-reps N] [--overhead-daemon]
 *          [--digest-args ARGS] [--graph-args ARGS] [--overhead-args ARGS] [--json FILE] [--logs DIR] [--keep]
 *        node tools/bench-gate.mjs --replay DIR [--bench LIST]
 * Cost, measured on 2 cores shared with another engineer's builds (load 6–12): builds 45 s; a bench-digest
 * run (150 files, 2 reps) 1.7–3.7 min; a bench-graph run (server,client, 2 reps, no checker) 1–1.4 min; a
 * bench-overhead run 15–18 min, 10–13 of them building its three workspaces. With --runs 2 that was 50 min
 * in all; the defaults (--runs 3) add a run of each of the first two per side. `--bench digest,graph` leaves
 * the expensive one out. `npm run bench:gate` runs it (the gate builds both sides itself).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliArgs } from './lib/cli-args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const MIRROR = '/work/.mirror/trpc+trpc/repo';
const BENCHES = ['digest', 'graph', 'overhead'];

const HELP = `usage: node tools/bench-gate.mjs [--before REV|DIR] [--after REV|DIR] [--runs N] [--bench LIST]
         [--digest-files N] [--digest-reps N] [--digest-corpus DIR]
         [--graph-packages LIST] [--graph-reps N] [--graph-edit-reps N] [--graph-checker] [--graph-repo GIT_DIR]
         [--overhead-runs N] [--overhead-libs N] [--overhead-reps N] [--overhead-key-reps N] [--overhead-daemon]
         [--digest-args ARGS] [--graph-args ARGS] [--overhead-args ARGS] [--json FILE] [--logs DIR] [--keep]
       node tools/bench-gate.mjs --replay DIR [--bench LIST]

  --before REV|DIR     the baseline: a revision of this repository (checked out and built in a temp worktree)
                       or the path of a built checkout, used as it is (default 3d0a47a)
  --after REV|DIR      the candidate, likewise (default HEAD)
  --runs N             runs of bench-digest and bench-graph per side, interleaved B A A B B A …; a side's
                       spread is over its runs (default 3; 1 gives no spread)
  --bench LIST         which benchmarks, comma-separated (default digest,graph,overhead)
  --digest-files N     bench-digest --files (default 150); its --warmup is 1
  --digest-reps N      bench-digest --reps (default 2)
  --digest-corpus DIR  bench-digest --corpus (default: its fallback, the sources in each side's node_modules,
                       identical copies)
  --graph-packages L   bench-graph --packages (default server,client: client reads server through the
                       workspace view)
  --graph-reps N       bench-graph --reps (default 2)
  --graph-edit-reps N  bench-graph --edit-reps (default 3)
  --graph-checker      also the checker rows (else bench-graph gets --no-checker; they take minutes)
  --graph-repo DIR     trpc git directory (default $KILN_BENCH_REPO, else ${MIRROR}); both sides
                       export the same commit (its HEAD, resolved once); bench-graph gets --worktrees 2
  --overhead-runs N    runs of bench-overhead per side (default 1: its cached nx runs are the samples)
  --overhead-libs N    bench-overhead --libs (default 50, at least 50)
  --overhead-reps N    bench-overhead --reps (default 5, at least 5)
  --overhead-key-reps N  bench-overhead --key-reps (default 2)
  --overhead-daemon    also the NX_DAEMON=true rows (else bench-overhead gets --no-daemon)
  --digest-args ARGS, --graph-args ARGS, --overhead-args ARGS
                       more arguments for that benchmark, split on spaces, appended as they are
  --json FILE          also write every sample and verdict as JSON
  --logs DIR           write every run's stdout/stderr (and bench-graph's JSON) to DIR and keep it
                       (default: in the temp dir, removed unless --keep)
  --replay DIR         print the tables again from a kept run's outputs (its --logs DIR, or logs/ of a --keep
                       temp dir): nothing is built or run
  --keep               keep the temp dir: worktrees, builds and every run's output (paths printed)
`;

const { args, int } = cliArgs(
  {
    before: { type: 'string', default: '3d0a47a' },
    after: { type: 'string', default: 'HEAD' },
    runs: { type: 'string', default: '3' },
    bench: { type: 'string', default: BENCHES.join(',') },
    'digest-files': { type: 'string', default: '150' },
    'digest-reps': { type: 'string', default: '2' },
    'digest-corpus': { type: 'string' },
    'graph-packages': { type: 'string', default: 'server,client' },
    'graph-reps': { type: 'string', default: '2' },
    'graph-edit-reps': { type: 'string', default: '3' },
    'graph-checker': { type: 'boolean', default: false },
    'graph-repo': { type: 'string' },
    'overhead-runs': { type: 'string', default: '1' },
    'overhead-libs': { type: 'string', default: '50' },
    'overhead-reps': { type: 'string', default: '5' },
    'overhead-key-reps': { type: 'string', default: '2' },
    'overhead-daemon': { type: 'boolean', default: false },
    'digest-args': { type: 'string', default: '' },
    'graph-args': { type: 'string', default: '' },
    'overhead-args': { type: 'string', default: '' },
    json: { type: 'string' },
    logs: { type: 'string' },
    replay: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
  HELP,
);
const RUNS = int('runs', 1);
const OVERHEAD_RUNS = int('overhead-runs', 1);
const selected = args.bench.split(',').map((s) => s.trim()).filter(Boolean);
for (const b of selected) {
  if (!BENCHES.includes(b)) {
    process.stderr.write(`--bench: unknown benchmark ${b} (one of ${BENCHES.join(', ')})\n`);
    process.exit(2);
  }
}
const split = (s) => s.split(/\s+/).filter(Boolean);
const graphRepo = args['graph-repo'] ?? process.env.KILN_BENCH_REPO ?? MIRROR;
if (selected.includes('graph') && !existsSync(graphRepo)) {
  process.stderr.write(`bench-graph needs a trpc git directory: ${graphRepo} does not exist (pass --graph-repo, or leave graph out with --bench)\n`);
  process.exit(2);
}

// ------------------------------------------------------------------ helpers

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s`;
const progress = (s) => process.stderr.write(`[bench-gate ${elapsed()}] ${s}\n`);
const print = (s = '') => process.stdout.write(`${s}\n`);
const git = (cwd, ...a) => execFileSync('git', ['-C', cwd, ...a], { encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmtNum = (x) => (!Number.isFinite(x) ? '-' : Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US').replace(/,/g, ' ') : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Runs a command to completion; stdout and stderr go to files (and stderr's tail into the error). */
function run(cmd, argv, { cwd, out, err, env = process.env }) {
  return new Promise((resolveRun, reject) => {
    const t = Date.now();
    const child = spawn(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const o = createWriteStream(out);
    const e = createWriteStream(err);
    let tail = '';
    child.stdout.pipe(o);
    child.stderr.on('data', (d) => {
      e.write(d);
      tail = (tail + d).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      e.end();
      o.end(() => {
        if (code === 0) resolveRun({ ms: Date.now() - t });
        else reject(new Error(`${cmd} ${argv.join(' ')} (in ${cwd}) exited ${code ?? signal}:\n${tail}`));
      });
    });
  });
}

// ------------------------------------------------------------------ parsers: one per benchmark, same for both sides

/** A metric: key, label, and how to read one run's value; `control` marks code kiln does not own. */
const m = (key, label, read, extra = {}) => ({ key, label, read, ...extra });

/** bench-digest's main table: `section | measurement | MB/s | ms | min–max ms | cpu ms | …`, rows by label prefix. */
function digestTable(stdout) {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => /^section\s+\| measurement\s+\|/.test(l));
  if (start < 0) throw new Error('bench-digest: no results table in its output');
  const rows = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.includes(' | ')) break;
    const c = l.split(' | ').map((s) => s.trim());
    const num = (x) => (x === undefined || x === '' ? undefined : Number(x));
    rows.push({ label: c[1], ms: num(c[3]), cpu: num(c[5]) });
  }
  const corpus = stdout.match(/^ {2}(\d+ files, [\d.]+ MB)/m)?.[1];
  return { rows, corpus };
}
const digestRow = (prefix, col = 'ms') => (p) => {
  const r = p.rows.find((x) => x.label.startsWith(prefix));
  return r && Number.isFinite(r[col]) ? r[col] : undefined;
};
const DIGEST_METRICS = [
  m('tsitter', 'tree-sitter parse only (native), 1 thread', digestRow('tree-sitter parse only (native)'), { control: true }),
  m('parse', 'TypeScript parse as kiln parses, 1 thread', digestRow('TypeScript as kiln parses')),
  m('extract', 'cold digest: extractSlice loop, 1 thread', digestRow('cold digest: extractSlice loop')),
  m('extractCpu', '  the same, cpu ms', digestRow('cold digest: extractSlice loop', 'cpu')),
  m('isolated', 'extractSlice, isolated thread, steady state', digestRow('isolated thread, steady state: extractSlice only')),
  m('cold1', 'digestTree cold, 1 worker, fresh pool', digestRow('digestTree, empty store, 1 worker (startup incl.)')),
  m('cold2', 'digestTree cold, 2 workers, fresh pool', digestRow('digestTree, empty store, 2 workers (startup incl.)')),
  m('steady1', 'digestTree cold, 1 worker, warm pool', digestRow('digestTree, empty store, 1 worker, warm pool')),
  m('steady2', 'digestTree cold, 2 workers, warm pool', digestRow('digestTree, empty store, 2 workers, warm pool')),
  m('inThread', 'digestTree cold, calling thread (0 workers)', digestRow('cold digestTree, store, calling thread')),
  m('noStore', 'digestTree cold, no store, 2 workers', digestRow('cold digestTree, no store, 2 workers')),
  m('writes', 'store write phase alone (pack + manifest + registry)', digestRow('store write phase alone')),
  m('warm', 'digestTree warm (same store, 0 parsed)', digestRow('digestTree, same store, 2nd run')),
  m('warmNoMemo', 'digestTree warm, report memo off', digestRow('warm digestTree with the report memo off')),
];

/** bench-graph --json: results.rows (wall/cpu medians in ms), results.corpus. */
const graphRow = (key, col = 'wall') => (p) => {
  const v = p.rows?.[key]?.[col];
  return Number.isFinite(v) ? v : undefined;
};
const GRAPH_METRICS = [
  m('syntaxCold', 'syntax export, cold store, in process', graphRow('syntaxCold')),
  m('syntaxColdCpu', '  the same, cpu ms', graphRow('syntaxCold', 'cpu')),
  m('syntaxWarm', 'syntax export, warm store, in process', graphRow('syntaxWarm')),
  m('syntaxFreshAll', 'syntax export, cold, one fresh process', graphRow('syntaxFreshAll')),
  m('syntaxFresh', 'syntax export, cold, fresh process per package', graphRow('syntaxFresh')),
  m('checkerCold', 'checker export, cold store', graphRow('checkerCold')),
  m('checkerWarm', 'checker export, warm store', graphRow('checkerWarm')),
  m('editSyntaxSession', 'one-file edit, syntax, session', graphRow('editSyntaxSession')),
  m('editSyntaxSurface', 'one-file edit, syntax, session, new export', graphRow('editSyntaxSurface')),
  m('editSyntaxStore', 'one-file edit, syntax, store only', graphRow('editSyntaxStore')),
  m('editSyntaxFresh', 'one-file edit, syntax, fresh process', graphRow('editSyntaxFresh')),
  m('editCheckerBody', 'one-file edit, checker, session, body', graphRow('editCheckerBody')),
  m('editCheckerSurface', 'one-file edit, checker, session, new export', graphRow('editCheckerSurface')),
  // Where the cold syntax export's time goes (exportGraph's stats.phases, summed over the packages): for
  // reading a regression of the row above, not gated themselves.
  ...['digest', 'config', 'build', 'workspace', 'imports', 'references', 'finish'].map((ph) =>
    m(`phase-${ph}`, `  syntax cold, of which ${ph}`, (p) => (Number.isFinite(p.splits?.['syntax, cold store']?.[ph]) ? p.splits['syntax, cold store'][ph] : undefined), { info: true }),
  ),
  m('storeOne', 'store bytes after 1 worktree', (p) => p.rows?.store?.one?.apparent, { unit: 'B', deterministic: true }),
  m('storeRatio', 'store, N worktrees vs 1 (bytes ratio)', (p) => p.rows?.store?.ratio, { unit: '×', deterministic: true }),
];

/**
 * bench-overhead: one run builds three workspaces first (~3 min each on 2 busy cores, not timed), so the
 * gate takes its repetitions as the runs: every fully cached `nx run-many` and every keying rep is a
 * sample, read from its progress lines (`daemon off rep 2/5: plain 1700 ms, kiln 1780 ms, …`, `keying rep
 * 1/2: cold …`); the paired per-rep ratios kiln/plain and kiln/floor too. Rows only printed as
 * `median [min–max]` of n ≤ 3 runs (import @kiln/core, the plugin's own calls) give their n samples exactly.
 */
function overheadParse(stdout, stderr, keyReps) {
  const out = {};
  const push = (k, v) => (out[k] ??= []).push(v);
  for (const line of stderr.split('\n')) {
    const rep = /daemon (off|on) rep \d+\/\d+: (.*?) \(load/.exec(line);
    if (rep) {
      const ms = Object.fromEntries([...rep[2].matchAll(/(\w+) (\d+(?:\.\d+)?) ms/g)].map((x) => [x[1], Number(x[2])]));
      const p = rep[1];
      for (const [k, name] of [['plain', 'Plain'], ['kiln', 'Kiln'], ['floor', 'Floor'], ['kilnNoMemo', 'NoMemo']]) if (ms[k] !== undefined) push(`${p}${name}`, ms[k]);
      if (ms.kiln !== undefined && ms.plain) push(`${p}KilnRatio`, ms.kiln / ms.plain);
      if (ms.kiln !== undefined && ms.floor) push(`${p}KilnFloor`, ms.kiln / ms.floor);
      if (ms.kilnNoMemo !== undefined && ms.plain) push(`${p}NoMemoRatio`, ms.kilnNoMemo / ms.plain);
    }
    const key = /keying rep \d+\/\d+: cold (\d+) ms, warm (\d+) ms, warm fresh process (\d+) ms/.exec(line);
    if (key) {
      push('keyCold', Number(key[1]));
      push('keyWarm', Number(key[2]));
      push('keyWarmFresh', Number(key[3]));
    }
  }
  /** The n samples behind `median [min–max]`, exact for n ≤ 3. */
  const samples = (text, n) => {
    const x = /(\d+(?:\.\d+)?) \[(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?)\]/.exec(text ?? '');
    if (!x) return undefined;
    const [med, min, max] = [Number(x[1]), Number(x[2]), Number(x[3])];
    return n === 1 ? [med] : n === 2 ? [min, max] : [min, med, max];
  };
  const lines = stdout.split('\n');
  const k = lines.findIndex((l) => l.startsWith('| cold: empty store'));
  if (k >= 0 && lines[k + 2]?.startsWith('| ') && keyReps <= 3) out.importCore = samples(lines[k + 2].split('|')[4], keyReps);
  for (const line of lines) {
    const plug = /^ {2}(memo hit|keys computed \(memo deleted\))\s+import (.*?); createNodesV2 (.*?); createDependencies (.*)$/.exec(line);
    if (plug) {
      const p = plug[1] === 'memo hit' ? 'hit' : 'miss';
      out[`${p}Import`] = samples(plug[2], 3);
      out[`${p}CreateNodes`] = samples(plug[3], 3);
      out[`${p}CreateDeps`] = samples(plug[4], 3);
    }
  }
  return out;
}
const ov = (key) => (p) => p[key];
const OVERHEAD_METRICS = [
  m('offPlain', 'cached run, daemon off: plain Nx', ov('offPlain'), { control: true }),
  m('offFloor', 'cached run, daemon off: plain + no-op plugin', ov('offFloor'), { control: true }),
  m('offKiln', 'cached run, daemon off: kiln (memo hit)', ov('offKiln')),
  m('offKilnRatio', '  kiln / plain, paired per rep', ov('offKilnRatio'), { unit: '×' }),
  m('offKilnFloor', '  kiln / floor, paired per rep', ov('offKilnFloor'), { unit: '×' }),
  m('offNoMemo', 'cached run, daemon off: kiln, keys recomputed', ov('offNoMemo')),
  m('offNoMemoRatio', '  keys recomputed / plain, paired per rep', ov('offNoMemoRatio'), { unit: '×' }),
  m('onPlain', 'cached run, daemon on: plain Nx', ov('onPlain'), { control: true }),
  m('onKiln', 'cached run, daemon on: kiln', ov('onKiln')),
  m('onKilnRatio', '  kiln / plain, paired per rep (daemon on)', ov('onKilnRatio'), { unit: '×' }),
  m('keyCold', 'computeWorkspaceKeys cold (empty store)', ov('keyCold')),
  m('keyWarm', 'computeWorkspaceKeys warm, same process', ov('keyWarm')),
  m('keyWarmFresh', 'computeWorkspaceKeys warm, fresh process', ov('keyWarmFresh')),
  m('importCore', 'import @kiln/core (fresh process)', ov('importCore')),
  m('hitImport', 'import the @kiln/nx plugin (fresh process)', ov('hitImport')),
  m('hitCreateNodes', 'createNodesV2, memo hit', ov('hitCreateNodes')),
  m('missCreateNodes', 'createNodesV2, keys computed', ov('missCreateNodes')),
  m('missCreateDeps', 'createDependencies, keys computed', ov('missCreateDeps'), { info: true }),
];

// ------------------------------------------------------------------ the benchmarks

const BENCH = {
  digest: {
    script: 'tools/bench-digest.mjs',
    uses: ['tools/bench-digest.mjs'],
    args: () => [
      '--files', String(int('digest-files', 1)), '--reps', String(int('digest-reps', 1)), '--warmup', '1',
      ...(args['digest-corpus'] ? ['--corpus', resolve(args['digest-corpus'])] : []),
      ...split(args['digest-args']),
    ],
    runs: RUNS,
    metrics: DIGEST_METRICS,
    read: async ({ stdout }) => digestTable(stdout),
    facts: (p) => p.corpus && `corpus ${p.corpus}`,
  },
  graph: {
    script: 'tools/bench-graph.mjs',
    uses: ['tools/bench-graph.mjs'],
    args: ({ json }) => [
      '--repo', graphRepo, '--ref', graphRef, '--packages', args['graph-packages'], '--reps', String(int('graph-reps', 1)),
      '--edit-reps', String(int('graph-edit-reps', 1)), '--worktrees', '2', ...(args['graph-checker'] ? [] : ['--no-checker']),
      '--json', json, ...split(args['graph-args']),
    ],
    runs: RUNS,
    metrics: GRAPH_METRICS,
    read: async ({ json }) => JSON.parse(await readFile(json, 'utf8')),
    facts: (p) => p.corpus && `trpc ${String(p.corpus.sha).slice(0, 10)} ${p.corpus.packages?.join(',')}: ${p.corpus.files} files, ${p.corpus.loc} LOC`,
  },
  overhead: {
    script: 'tools/bench-overhead.mjs',
    uses: ['tools/bench-overhead.mjs', 'tools/lib/bench-workspace.mjs', 'tools/testing', 'fixtures/workspace-basic'],
    args: () => [
      '--libs', String(int('overhead-libs', 50)), '--reps', String(int('overhead-reps', 5)), '--key-reps', String(int('overhead-key-reps', 1)),
      ...(args['overhead-daemon'] ? [] : ['--no-daemon']), ...split(args['overhead-args']),
    ],
    runs: OVERHEAD_RUNS,
    metrics: OVERHEAD_METRICS,
    read: async ({ stdout, stderr }) => overheadParse(stdout, stderr, Number(args['overhead-key-reps'])),
    facts: () => undefined,
  },
};

let graphRef = 'HEAD';
if (selected.includes('graph')) {
  try {
    graphRef = execFileSync('git', ['--git-dir', graphRepo, 'rev-parse', 'HEAD^{commit}'], { encoding: 'utf8' }).trim();
  } catch (e) {
    process.stderr.write(`--graph-repo ${graphRepo}: not a git directory (${e.message.split('\n')[0]})\n`);
    process.exit(2);
  }
}

// ------------------------------------------------------------------ the two sides

// Every benchmark's arguments are checked before anything is built.
for (const b of selected) BENCH[b].args({ json: '<FILE>' });

const REPLAY = args.replay !== undefined;
const tmpRoot = await mkdtemp(join(os.tmpdir(), 'kiln-bench-gate-'));
const logs = REPLAY ? resolve(args.replay) : args.logs ? resolve(args.logs) : join(tmpRoot, 'logs');
await mkdir(logs, { recursive: true });
const added = []; // worktrees this run added (removed at the end)

/** A mistake in the arguments: reported without a stack. */
class UsageError extends Error {}

/** A side: a revision (checked out, given node_modules, built) or a directory used as it is. */
async function prepareSide(name, spec) {
  if (existsSync(spec) && statSync(spec).isDirectory()) {
    const root = resolve(spec);
    for (const f of ['packages/core/dist/index.js', 'packages/nx/dist/plugins/src/index.js', 'node_modules']) {
      if (!existsSync(join(root, f))) throw new UsageError(`--${name} ${root}: ${f} is missing (a directory side is used as it is: install and build it first)`);
    }
    let rev = '(not a git checkout)';
    try {
      rev = `${git(root, 'rev-parse', '--short=10', 'HEAD')}${git(root, 'status', '--porcelain', '--untracked-files=no') ? ' + local changes' : ''}`;
    } catch {
      // not a git checkout
    }
    return { name, root, label: `${root} (${rev})`, sha: undefined };
  }
  let sha;
  try {
    sha = git(repoRoot, 'rev-parse', '--verify', `${spec}^{commit}`);
  } catch {
    throw new UsageError(`--${name} ${spec}: neither a directory nor a revision of ${repoRoot}`);
  }
  const root = join(tmpRoot, name);
  progress(`${name}: git worktree add --detach ${root} ${sha.slice(0, 10)}`);
  git(repoRoot, 'worktree', 'add', '--quiet', '--detach', root, sha);
  added.push(root);
  const lock = (dir) => (existsSync(join(dir, 'package-lock.json')) ? readFileSync(join(dir, 'package-lock.json'), 'utf8') : null);
  const out = join(logs, `${name}-setup.out`);
  const err = join(logs, `${name}-setup.err`);
  if (existsSync(join(repoRoot, 'node_modules')) && lock(root) !== null && lock(root) === lock(repoRoot)) {
    progress(`${name}: cp -a node_modules (same package-lock.json as ${repoRoot})`);
    await run('cp', ['-a', join(repoRoot, 'node_modules'), join(root, 'node_modules')], { cwd: root, out, err });
  } else {
    progress(`${name}: npm ci --offline (package-lock.json differs from ${repoRoot})`);
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: root, out, err });
  }
  progress(`${name}: npm run build`);
  const b = await run('npm', ['run', 'build', '--silent'], { cwd: root, out: join(logs, `${name}-build.out`), err: join(logs, `${name}-build.err`) });
  progress(`${name}: built in ${(b.ms / 1000).toFixed(0)} s`);
  const subject = git(repoRoot, 'log', '-1', '--format=%cs %s', sha);
  return { name, root, label: `${sha.slice(0, 10)} (${subject.length > 90 ? `${subject.slice(0, 87)}…` : subject})`, sha };
}

// ------------------------------------------------------------------ verdicts and tables

/** Controls (code kiln does not own) and diagnostic sub-rows are shown with a verdict but do not gate. */
const gated = (mt) => !mt.control && !mt.info;

/** Relative range of a side's runs: (max − min) / median. */
const spreadOf = (xs) => (xs.length ? (Math.max(...xs) - Math.min(...xs)) / median(xs) : NaN);

function judge(metric, before, after) {
  const b = before.filter(Number.isFinite);
  const a = after.filter(Number.isFinite);
  // Absent on both sides: a row this configuration does not measure (e.g. the checker without --graph-checker).
  if (!b.length && !a.length) return { verdict: 'absent' };
  if (!b.length || !a.length) return { verdict: 'n/a', missing: true };
  const mb = median(b);
  const ma = median(a);
  const ratio = mb === 0 ? (ma === 0 ? 1 : Infinity) : ma / mb;
  const sb = spreadOf(b);
  const sa = spreadOf(a);
  const allowed = Math.max(Number.isFinite(sb) ? sb : 0, Number.isFinite(sa) ? sa : 0);
  const verdict = ratio > 1 + allowed + 1e-9 ? 'REGRESSION' : ratio < 1 - allowed - 1e-9 ? 'PASS (better)' : 'PASS';
  return { before: { median: mb, min: Math.min(...b), max: Math.max(...b), spread: sb, n: b.length }, after: { median: ma, min: Math.min(...a), max: Math.max(...a), spread: sa, n: a.length }, ratio, allowed, verdict };
}

const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '-');
const side = (s, unit) => {
  const f = unit === '×' ? (x) => x.toFixed(3) : fmtNum;
  return `${f(s.median)}${unit === 'ms' ? '' : unit === '×' ? '×' : ` ${unit}`} [${f(s.min)}–${f(s.max)}]`;
};

function table(results, metrics) {
  const head = ['metric', 'before: median [min–max]', 'spread', 'after: median [min–max]', 'spread', 'after/before', 'allowed', 'verdict'];
  const rows = [];
  for (const mt of metrics) {
    const j = results.verdicts[mt.key];
    if (j.verdict === 'absent') continue;
    const label = `${mt.label}${mt.control ? ' (control)' : ''}`;
    if (!j.before) {
      rows.push([label, '-', '', '-', '', '', '', 'n/a (missing on one side)']);
      continue;
    }
    const unit = mt.unit ?? 'ms';
    const v = mt.control || mt.info ? `${j.verdict === 'REGRESSION' ? 'slower' : j.verdict === 'PASS (better)' ? 'faster' : 'within noise'} (not gated)` : j.verdict;
    rows.push([label, side(j.before, unit), pct(j.before.spread), side(j.after, unit), pct(j.after.spread), `${j.ratio.toFixed(3)}×`, `≤ ${(1 + j.allowed).toFixed(3)}×`, v]);
  }
  const right = new Set([1, 2, 3, 4, 5, 6]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const fmtRow = (r) => `| ${r.map((c, i) => (right.has(i) ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join(' | ')} |`;
  print(fmtRow(head));
  print(`|${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`);
  for (const r of rows) print(fmtRow(r));
}

// ------------------------------------------------------------------ main

const report = { before: args.before, after: args.after, runs: RUNS, overheadRuns: OVERHEAD_RUNS, benches: {} };
let failed = false;
let regressed = false;
const loadStart = load();
try {
  let sides;
  let scriptDiff = {};
  let replayedCommands = {};
  if (REPLAY) {
    // Re-read a kept run's outputs (--logs DIR or --keep): nothing is checked out, built or run.
    const meta = existsSync(join(logs, 'gate-meta.json')) ? JSON.parse(await readFile(join(logs, 'gate-meta.json'), 'utf8')) : {};
    sides = { before: { label: meta.sides?.before ?? '(from the replayed logs)' }, after: { label: meta.sides?.after ?? '(from the replayed logs)' } };
    scriptDiff = meta.scripts ?? {};
    replayedCommands = meta.commands ?? {};
    if (meta.args) for (const k of ['overhead-key-reps']) args[k] = meta.args[k];
  } else {
    sides = { before: await prepareSide('before', args.before), after: await prepareSide('after', args.after) };
    // Which benchmark scripts differ between the two revisions (their method may differ, not only the engine).
    if (sides.before.sha && sides.after.sha) {
      for (const b of selected) {
        const stat = git(repoRoot, 'diff', '--stat=200', sides.before.sha, sides.after.sha, '--', ...BENCH[b].uses).split('\n');
        scriptDiff[b] = stat.length > 1 ? `differ: ${stat.slice(0, -1).map((l) => l.trim().replace(/\s+\|\s+/, ' ')).join(', ')}` : 'identical';
      }
    }
    const commands = Object.fromEntries(selected.map((b) => [b, `node ${BENCH[b].script} ${BENCH[b].args({ json: 'FILE' }).join(' ')}`]));
    await writeFile(join(logs, 'gate-meta.json'), `${JSON.stringify({ sides: { before: sides.before.label, after: sides.after.label }, scripts: scriptDiff, commands, args }, null, 2)}\n`);
  }
  report.sides = { before: sides.before.label, after: sides.after.label };

  const order = (r) => (r % 2 === 0 ? ['before', 'after'] : ['after', 'before']);
  for (const b of selected) {
    const bench = BENCH[b];
    const values = { before: [], after: [] };
    const facts = { before: new Set(), after: new Set() };
    const errors = [];
    const seq = [];
    const cmdArgs = bench.args({ json: '<FILE>' });
    const RUNS = REPLAY ? Math.max(0, ...[...new Set(readdirSync(logs).map((f) => new RegExp(`^${b}-(?:before|after)-(\\d+)\\.out$`).exec(f)?.[1]).filter(Boolean))].map(Number)) : bench.runs;
    for (let r = 0; r < RUNS; r++) {
      for (const s of order(r)) {
        const tag = `${b}-${s}-${r + 1}`;
        const io = { out: join(logs, `${tag}.out`), err: join(logs, `${tag}.err`), json: join(logs, `${tag}.json`) };
        if (REPLAY && !existsSync(io.out)) continue;
        seq.push(s === 'before' ? 'B' : 'A');
        try {
          if (!REPLAY) {
            progress(`${b} run ${r + 1}/${RUNS}, ${s}: node ${bench.script} … (load ${load()})`);
            const t = await run(process.execPath, [bench.script, ...bench.args(io)], { cwd: sides[s].root, out: io.out, err: io.err });
            progress(`${b} run ${r + 1}/${RUNS}, ${s}: ${(t.ms / 1000).toFixed(0)} s`);
          }
          const parsed = await bench.read({ stdout: await readFile(io.out, 'utf8'), stderr: await readFile(io.err, 'utf8'), json: io.json });
          values[s].push(Object.fromEntries(bench.metrics.map((mt) => [mt.key, mt.read(parsed)])));
          const f = bench.facts(parsed);
          if (f) facts[s].add(f);
        } catch (e) {
          errors.push(`${tag}: ${e.message}`);
          progress(`${b} run ${r + 1}/${RUNS}, ${s}: FAILED (${e.message.split('\n')[0]})`);
        }
      }
    }
    const verdicts = {};
    // A run gives a metric one value, or several samples (bench-overhead's reps): all of a side's samples count.
    for (const mt of bench.metrics) verdicts[mt.key] = judge(mt, values.before.flatMap((v) => v[mt.key] ?? []), values.after.flatMap((v) => v[mt.key] ?? []));
    report.benches[b] = { command: REPLAY ? (replayedCommands[b] ?? `node ${bench.script} (replayed)`) : `node ${bench.script} ${cmdArgs.join(' ')}`, order: seq.join(' '), values, verdicts, errors, facts: { before: [...facts.before], after: [...facts.after] }, scripts: scriptDiff[b] };
  }

  // ---- the report
  print(`kiln benchmark gate — ${new Date().toISOString()} — command: node tools/bench-gate.mjs ${process.argv.slice(2).join(' ')}`.trimEnd());
  const cpus = os.cpus();
  print(`machine: ${os.availableParallelism()} cpus (${cpus[0]?.model?.trim() ?? 'unknown'}), node ${process.version}; load average ${loadStart} at start, ${load()} at end`);
  print(`before: ${sides.before.label}`);
  print(`after:  ${sides.after.label}`);
  print('rule: ratio = median(after) / median(before); spread = (max − min) / median of a side\'s samples; REGRESSION when');
  print('      ratio > 1 + max(spread before, spread after). A sample is one run of the benchmark (its median of its reps; runs');
  print("      interleaved B A A B …), except bench-overhead's cached nx runs and keying reps, each a sample. Every metric is");
  print("      lower-is-better (ms unless marked). Each side runs its own revision's copy of the benchmark against its own build.");
  if (RUNS < 2) print('      note: --runs 1 gives digest and graph no spread: every metric that is slower at all is flagged');
  for (const b of selected) {
    const r = report.benches[b];
    print();
    print(`## bench-${b}: ${r.command.replace('<FILE>', 'FILE')}`);
    print(`   order ${r.order}${r.scripts ? `; what it runs (${BENCH[b].uses.join(', ')}) at the two revisions: ${r.scripts}` : ''}`);
    const fb = r.facts.before.join('; ');
    const fa = r.facts.after.join('; ');
    if (fb || fa) print(`   ${fb === fa ? `both sides: ${fb}` : `before: ${fb || '-'}; after: ${fa || '-'} — THE SIDES MEASURED DIFFERENT INPUTS`}`);
    for (const e of r.errors) print(`   FAILED RUN: ${e.split('\n').slice(0, 6).join('\n     ')}`);
    print();
    table(r, BENCH[b].metrics);
    const vs = Object.values(r.verdicts);
    if (r.errors.length || vs.some((v) => v.missing && !v.before)) failed = true;
    if (BENCH[b].metrics.some((mt) => gated(mt) && r.verdicts[mt.key].verdict === 'REGRESSION')) regressed = true;
  }
  print();
  const all = selected.flatMap((b) => BENCH[b].metrics.filter(gated).map((mt) => [b, mt, report.benches[b].verdicts[mt.key]])).filter(([, , v]) => v.before);
  const reg = all.filter(([, , v]) => v.verdict === 'REGRESSION');
  print(
    `gate: ${reg.length ? `REGRESSION in ${reg.length} of ${all.length} gated metrics (${reg.map(([b, mt]) => `${b}: ${mt.label.trim()}`).join('; ')})` : `PASS (${all.length} gated metrics)`}` +
      `${failed ? '; some runs failed or metrics are missing (see above)' : ''}; total ${((Date.now() - started) / 60000).toFixed(1)} min`,
  );
  if (args.json) await writeFile(args.json, `${JSON.stringify({ ...report, load: { start: loadStart, end: load() }, totalMs: Date.now() - started }, null, 2)}\n`);
} catch (e) {
  failed = true;
  process.stderr.write(`bench-gate failed: ${e instanceof UsageError ? e.message : (e.stack ?? e)}\n`);
} finally {
  if (args.keep) {
    progress(`kept ${tmpRoot} (worktrees ${added.join(', ') || 'none'}; every run's output in ${logs}); remove the worktrees with git worktree remove --force`);
  } else {
    for (const wt of added) {
      try {
        git(repoRoot, 'worktree', 'remove', '--force', wt);
      } catch (e) {
        process.stderr.write(`could not remove the worktree ${wt}: ${e.message.split('\n')[0]}\n`);
      }
    }
    await rm(tmpRoot, { recursive: true, force: true });
    try {
      git(repoRoot, 'worktree', 'prune');
    } catch {
      // nothing to prune
    }
  }
}
process.exit(failed ? 2 : regressed ? 1 : 0);
