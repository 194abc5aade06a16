#!/usr/bin/env node
/**
 * Check the history benchmark's emulated Nx hashes (tools/lib/nx-emulation.mjs) against the task
 * hashes of the real Nx the corpus installs (issue: "the history benchmark's emulated Nx hashes are
 * checked against real Nx task hashes on a sample of commits, plain and kiln-keyed").
 *
 * For a seeded sample of --pairs first-parent commit pairs (parent, commit) among the last --commits
 * of the corpus — half where the emulation says some package reruns, half where it says none does —
 * each commit is checked out from the git directory into a reusable checkout under --cache (a private
 * index, `git read-tree -u --reset`; the corpus is never written), its dependencies are installed by
 * tools/lib/install.mjs (the package manager and version the commit names, frozen lockfile, no
 * scripts, the package store under --cache), and the checkout's own Nx is asked, for every project
 * with a `build` target:
 *   - the task's resolved inputs: what `nx show target inputs <project>:build --json` prints (files,
 *     external nodes, environment, runtime, dependency outputs) — computed in one process per
 *     checkout by the same call the CLI makes (HashPlanInspector.inspectTaskInputs), because one CLI
 *     process per project costs a project graph each; the first commit also runs the CLI itself for
 *     one project and the run fails unless both answers are identical;
 *   - the task's real hash and its per-input details (the task hasher `nx run` uses, with
 *     NX_DAEMON=false and NX_NO_CLOUD=true; nothing is built).
 * Two configurations (--config): `emulation` overlays nx.json with exactly the `namedInputs` and
 * `targetDefaults.build.inputs` nx-emulation.mjs's header says it emulates (the commit's plugins are
 * kept, so the projects and targets are the commit's own); `own` keeps the commit's nx.json as
 * committed (what the repository's Nx really does).
 *
 * Per pair and project the verdicts are compared: the emulation says "rerun" when its hash moved;
 * real Nx reruns when the real task hash moved. Disagreements are listed with their causes: the
 * real hash's detail entries that moved (and the listed files whose blob changed), the emulation's
 * parts that moved (and its files whose blob changed). Per project, the input sets are compared at
 * each sampled commit: files only in Nx's set, files only in the emulation's, external packages
 * (by name) only in either. In `emulation` mode the emulation's own sets are derived by the rules
 * its header states (own production files, those of its transitive workspace dependencies, the root
 * `tsconfig*.json`, the lockfile closure of the packages its manifest names and its sources import);
 * a derivation that disagrees with nxHashes' own verdict is reported as a tool error.
 *
 * Kiln-keyed (--kiln-keyed, the default): at the newest checked-out commit a target whose inputs are
 * `[{ "externalDependencies": [] }]` (what a kiln-keyed target declares) is added to one project's
 * package.json `nx.targets` in the checkout only, and Nx is asked what it still hashes; then
 * `git log --first-parent --name-only` over the same --commits counts, per package, the commits
 * touching those always-hashed files, and — given --kiln-records (a records directory of
 * tools/bench-history.mjs for the same commits) — how many of them kiln's emulated key did not
 * already rerun: the extra reruns a kiln-keyed target pays under real Nx.
 *
 * Invariants: nothing is written to the corpus, this repository or the machine's Node; every
 * checkout, install, probe answer and package store lives under --cache; the sample is a pure
 * function of (--seed, the commit list); a failed install or probe fails the run with its output.
 *
 * Usage: node tools/check-nx-emulation.mjs --repo GIT_DIR [--commits 300] [--pairs 6] [--seed 1]
 *          [--config emulation|own|both] [--cache DIR] [--kiln-keyed | --no-kiln-keyed]
 *          [--kiln-records DIR] [--json FILE] [--markdown FILE]
 * Exit status: 0 when every verdict agrees, 1 when some disagree (or a tool error), 2 for bad usage.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installDependencies } from './lib/install.mjs';
import { importedPackages, isExcludedFromProduction, isSourceFile, lsTree as lsTreeOf, nxHashes, parsePnpmLock, projectRoots, workspacePatterns } from './lib/nx-emulation.mjs';
import { prng } from './lib/corpus.mjs';

const here = dirname(fileURLToPath(import.meta.url));

const HELP = `usage: node tools/check-nx-emulation.mjs --repo GIT_DIR [options]

  --repo DIR          git directory of the corpus (bare is fine), e.g. a \`fetch\` mirror
  --branch REF        branch to walk (default: the repository's HEAD)
  --commits N         the window: the last N first-parent commits (default 300)
  --pairs K           (parent, commit) pairs to check, half where the emulation reruns some package,
                      half where it reruns none (default 6)
  --lockfile-pairs L  and L more pairs whose lockfile changed (default 2; the emulation hashes a
                      project's external closure, real Nx may hash every external node)
  --seed N            sample seed (default 1)
  --config MODE       emulation: nx.json overlaid with the emulation's namedInputs/targetDefaults;
                      own: the commit's nx.json; both (default)
  --cache DIR         checkouts, installs, package store, probe answers (default $TMPDIR/nxcheck)
  --no-kiln-keyed     skip the kiln-keyed measurement
  --kiln-records DIR  tools/bench-history.mjs records directory for the same commits (one JSON per
                      commit with kiln keys): extra reruns are counted against kiln's own reruns
  --json FILE         write every result as JSON
  --markdown FILE     write the summary tables as markdown
  -h, --help          this text

Exit status: 0 when every verdict agrees, 1 on a disagreement or a tool error, 2 for bad usage.`;

let args;
try {
  args = parseArgs({
    options: {
      repo: { type: 'string' },
      branch: { type: 'string' },
      commits: { type: 'string', default: '300' },
      pairs: { type: 'string', default: '6' },
      'lockfile-pairs': { type: 'string', default: '2' },
      seed: { type: 'string', default: '1' },
      config: { type: 'string', default: 'both' },
      cache: { type: 'string', default: join(tmpdir(), 'nxcheck') },
      'kiln-keyed': { type: 'boolean', default: true },
      'no-kiln-keyed': { type: 'boolean', default: false },
      'kiln-records': { type: 'string' },
      json: { type: 'string' },
      markdown: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (e) {
  console.error(`check-nx-emulation: ${e.message}\n\n${HELP}`);
  process.exit(2);
}
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const usage = (msg) => {
  console.error(`check-nx-emulation: ${msg}\n\n${HELP}`);
  process.exit(2);
};
if (!args.repo) usage('--repo is required');
const repo = resolve(args.repo);
if (!existsSync(repo)) usage(`--repo ${repo} does not exist`);
const N = Number(args.commits);
const K = Number(args.pairs);
const SEED = Number(args.seed);
if (!Number.isInteger(N) || N < 2) usage('--commits must be an integer ≥ 2');
if (!Number.isInteger(K) || K < 1) usage('--pairs must be an integer ≥ 1');
if (!Number.isInteger(SEED)) usage('--seed must be an integer');
const LOCK_PAIRS = Number(args['lockfile-pairs']);
if (!Number.isInteger(LOCK_PAIRS) || LOCK_PAIRS < 0) usage('--lockfile-pairs must be an integer ≥ 0');
if (!['emulation', 'own', 'both'].includes(args.config)) usage('--config is emulation, own or both');
const MODES = args.config === 'both' ? ['emulation', 'own'] : [args.config];
const KILN_KEYED = args['kiln-keyed'] && !args['no-kiln-keyed'];
const cacheRoot = resolve(args.cache);
const repoName = (basename(repo) === 'repo' ? basename(dirname(repo)) : basename(repo)).replace(/\.git$/, '');
const work = join(cacheRoot, repoName);
mkdirSync(work, { recursive: true });
const log = (m) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

const git = (...a) =>
  execFileSync('git', ['--git-dir', repo, ...a], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
let branch;
try {
  branch = args.branch ?? git('symbolic-ref', '--short', 'HEAD').trim();
} catch {
  branch = 'HEAD';
}
const shas = git('log', '--first-parent', '--format=%H', '-n', String(N + 1), branch)
  .trim()
  .split('\n')
  .reverse();
if (shas.length < 2) usage(`${branch} has fewer than 2 first-parent commits`);
const subjects = new Map(
  git('log', '--first-parent', '--format=%H %s', '-n', String(N + 1), branch)
    .trim()
    .split('\n')
    .map((l) => [l.slice(0, 40), l.slice(41)]),
);

/** The tool's own fingerprint: probe answers of another version of this tool or the emulation are not reused. */
const FP = createHash('sha256')
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .update(readFileSync(join(here, 'lib/nx-emulation.mjs')))
  .digest('hex')
  .slice(0, 12);

// ---------------------------------------------------------------- git helpers

const lsTree = (sha) => lsTreeOf(repo, sha);

/** Move a reusable checkout to `sha` (a private index; tracked files not in the commit are removed). */
function checkout(dir, sha) {
  const index = `${dir}.index`;
  if (!existsSync(index)) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('git', ['--git-dir', repo, '--work-tree', dir, 'read-tree', '-u', '--reset', sha], {
    env: { ...process.env, GIT_INDEX_FILE: index },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

const readerFor = (dir) => (p) => {
  try {
    return readFileSync(join(dir, p), 'utf8');
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------- the emulation's side

const nxCaches = { imports: new Map(), locks: new Map() };
const emuMemo = new Map();
/** nxHashes at `sha`, read from the checkout `dir` (which must be at `sha`). */
function emulate(sha, dir) {
  if (emuMemo.has(sha)) return emuMemo.get(sha);
  const files = lsTree(sha);
  const readText = readerFor(dir);
  const nx = nxHashes(files, readText, nxCaches);
  const r = { files, nx, sets: emulationSets(files, readText, nx) };
  emuMemo.set(sha, r);
  return r;
}

/**
 * The sets nx-emulation.mjs hashes, per project root, by the rules its header states: files (own
 * production files with package.json, those of every transitive workspace dependency, every
 * root-level tsconfig*.json) and external package names (the lockfile closure of what the project
 * and its dependencies name in their manifests or import from their production sources).
 */
function emulationSets(files, readText, nx) {
  const patterns = workspacePatterns(readText);
  const roots = projectRoots(files, patterns);
  const rootSet = new Set(roots);
  const prod = new Map(roots.map((r) => [r, []]));
  for (const path of files.keys()) {
    let d = dirname(path);
    while (d !== '.' && !rootSet.has(d)) d = dirname(d);
    if (d !== '.' && !isExcludedFromProduction(path.slice(d.length + 1))) prod.get(d).push(path);
  }
  const rootTs = [...files.keys()].filter((p) => !p.includes('/') && /^tsconfig.*\.json$/.test(p));
  const lock = files.has('pnpm-lock.yaml') ? parsePnpmLock(readText('pnpm-lock.yaml') ?? '') : null;
  const names = new Map();
  for (const root of roots) {
    let m = {};
    try {
      m = JSON.parse(readText(`${root}/package.json`) ?? '{}') ?? {};
    } catch {
      m = {};
    }
    const ns = new Set();
    for (const f of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) for (const n of Object.keys(m[f] ?? {})) ns.add(n);
    for (const p of prod.get(root)) if (isSourceFile(p)) for (const n of importedPackages(readText(p) ?? '')) ns.add(n);
    names.set(root, ns);
  }
  const wsNames = new Set([...nx.values()].map((p) => p.name));
  const closure = (root) => {
    if (!lock) return [];
    const imp = lock.importers.get(root) ?? new Map();
    const rootImp = lock.importers.get('.') ?? new Map();
    const out = new Set();
    const stack = [];
    for (const n of names.get(root) ?? []) {
      if (wsNames.has(n)) continue;
      const v = imp.get(n) ?? rootImp.get(n);
      if (!v || /^(link|file|workspace):/.test(v)) continue;
      stack.push([n, v]);
    }
    const seen = new Set();
    while (stack.length) {
      const [n, v] = stack.pop();
      const key = lock.snapshots.has(`${n}@${v}`) ? `${n}@${v}` : lock.snapshots.has(v) ? v : `${n}@${v}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.add(n);
      for (const [dn, dv] of lock.snapshots.get(key) ?? []) if (!/^(link|file|workspace):/.test(dv)) stack.push([dn, dv]);
    }
    return [...out];
  };
  const sets = new Map();
  for (const [root, p] of nx) {
    const fileSet = new Set([...prod.get(root), ...rootTs]);
    const ext = new Set(closure(root));
    for (const d of p.wsDeps) {
      for (const f of prod.get(d) ?? []) fileSet.add(f);
      for (const n of closure(d)) ext.add(n);
    }
    sets.set(root, { files: fileSet, external: ext });
  }
  return sets;
}

// ---------------------------------------------------------------- sampling


const scanDir = join(work, 'scan');
function emuAt(sha) {
  if (!emuMemo.has(sha)) checkout(scanDir, sha);
  return emulate(sha, scanDir);
}
const buildRoots = (e) => [...e.nx.values()].filter((p) => p.hasBuild).map((p) => p.root);
function emuReruns(a, b) {
  const ea = emuAt(a);
  const eb = emuAt(b);
  return buildRoots(eb).filter((r) => ea.nx.get(r)?.hash !== eb.nx.get(r).hash);
}

log(
  `check-nx-emulation: ${repoName} ${branch}, last ${shas.length - 1} first-parent commits (${shas[0].slice(0, 9)}..${shas.at(-1).slice(0, 9)}), ${K} pairs, seed ${SEED}, config ${MODES.join('+')}, cache ${work}`,
);
const order = shas.slice(1).map((_, i) => i + 1);
const rand = prng(SEED);
for (let i = order.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1));
  [order[i], order[j]] = [order[j], order[i]];
}
const wantRerun = Math.ceil(K / 2);
const wantNone = K - wantRerun;
const picked = [];
let nRerun = 0;
let nNone = 0;
const leftovers = [];
for (const i of order) {
  if (nRerun >= wantRerun && nNone >= wantNone) break;
  const reruns = emuReruns(shas[i - 1], shas[i]);
  const kind = reruns.length ? 'rerun' : 'none';
  if (kind === 'rerun' ? nRerun < wantRerun : nNone < wantNone) {
    picked.push({ i, parent: shas[i - 1], commit: shas[i], emuReruns: reruns });
    if (kind === 'rerun') nRerun++;
    else nNone++;
  } else
    leftovers.push({
      i,
      parent: shas[i - 1],
      commit: shas[i],
      emuReruns: reruns,
    });
}
while (picked.length < K && leftovers.length) picked.push(leftovers.shift());
// Pairs whose lockfile changed, seeded among those of the window (they are rare and matter: an
// external node's version enters the hash).
if (LOCK_PAIRS > 0) {
  const lockCommits = new Set(
    git('log', '--first-parent', '--format=%H', `${shas[0]}..${shas.at(-1)}`, '--', 'pnpm-lock.yaml', 'yarn.lock', 'package-lock.json')
      .trim()
      .split('\n')
      .filter(Boolean),
  );
  const taken = new Set(picked.map((p) => p.i));
  // Preferred: pairs where the emulation leaves some package unchanged (there, hashing every external
  // node or only a project's closure decides the verdict); else the first ones in seeded order.
  const all = order.filter((i) => lockCommits.has(shas[i]) && !taken.has(i));
  const cands = [];
  for (const i of all.slice(0, 12)) {
    if (cands.length >= LOCK_PAIRS) break;
    const reruns = emuReruns(shas[i - 1], shas[i]);
    if (reruns.length < buildRoots(emuAt(shas[i])).length) cands.push({ i, reruns });
  }
  for (const i of all) if (cands.length < LOCK_PAIRS && !cands.some((c) => c.i === i)) cands.push({ i, reruns: emuReruns(shas[i - 1], shas[i]) });
  for (const { i, reruns } of cands)
    picked.push({
      i,
      parent: shas[i - 1],
      commit: shas[i],
      emuReruns: reruns,
      lockfile: true,
    });
  log(
    `${lockCommits.size} of ${N} commits change the lockfile; ${cands.length} sampled (${cands.map((c) => `${shas[c.i].slice(0, 9)}: emulation reruns ${c.reruns.length}`).join(', ')})`,
  );
}
picked.sort((a, b) => a.i - b.i);
for (const p of picked)
  log(
    `pair ${p.parent.slice(0, 9)}..${p.commit.slice(0, 9)} "${subjects.get(p.commit)}"${p.lockfile ? ' (lockfile)' : ''}: emulation reruns ${p.emuReruns.length} package(s)`,
  );

// ---------------------------------------------------------------- the real Nx side

/** The emulation's nx.json, exactly as nx-emulation.mjs's header states it. */
function overlayNxJson(text) {
  let j;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new Error(`nx.json is not plain JSON (${e.message}); the overlay needs it parsed`);
  }
  j.namedInputs = {
    default: ['{projectRoot}/**/*', 'sharedGlobals'],
    sharedGlobals: ['{workspaceRoot}/tsconfig*.json'],
    production: [
      'default',
      '!{projectRoot}/**/*.spec.*',
      '!{projectRoot}/**/*.test.*',
      '!{projectRoot}/**/__tests__/**',
      '!{projectRoot}/test/**',
      '!{projectRoot}/**/*.md',
    ],
  };
  j.targetDefaults = {
    ...(j.targetDefaults ?? {}),
    build: {
      ...(j.targetDefaults?.build ?? {}),
      inputs: ['production', '^production'],
    },
  };
  return `${JSON.stringify(j, null, 2)}\n`;
}

/**
 * Runs in the checkout with the checkout's own Nx (CommonJS, nx's package exports allow `nx/src/*`):
 * the resolved inputs of each `<target>` task (the call `nx show target inputs` makes) and its real
 * hash with details (the task hasher `nx run` uses).
 */
const PROBE = String.raw`
const { join } = require('node:path');
const { writeFileSync } = require('node:fs');
const req = (m) => require(require.resolve(m, { paths: [process.cwd()] }));
(async () => {
  const [target, out, only] = process.argv.slice(2);
  const { createProjectGraphAsync } = req('nx/src/project-graph/project-graph');
  const { readNxJson } = req('nx/src/config/nx-json');
  const { HashPlanInspector } = req('nx/src/hasher/hash-plan-inspector');
  const { createTaskHasher } = req('nx/src/hasher/create-task-hasher');
  const { createTaskGraph } = req('nx/src/tasks-runner/create-task-graph');
  let getTaskSpecificEnv;
  try { ({ getTaskSpecificEnv } = req('nx/src/tasks-runner/task-env')); } catch {}
  const graph = await createProjectGraphAsync({ exitOnError: true });
  const nxJson = readNxJson();
  const names = Object.keys(graph.nodes).filter((n) => graph.nodes[n].data.targets?.[target] && (!only || n === only)).sort();
  const inspector = new HashPlanInspector(graph, process.cwd(), nxJson);
  await inspector.init();
  const projects = {};
  let api;
  for (const n of names) {
    let inputs;
    if (typeof inspector.inspectTaskInputs === 'function') {
      inputs = inspector.inspectTaskInputs({ project: n, target })[n + ':' + target];
      api = 'HashPlanInspector.inspectTaskInputs';
    } else {
      // Older Nx (no \`nx show target\`): the flat plan, 'file:…', 'npm:…', 'env:…', 'runtime:…'.
      const flat = inspector.inspectTask({ project: n, target })[n + ':' + target] ?? [];
      inputs = { files: [], external: [], environment: [], runtime: [], depOutputs: [], other: [] };
      for (const x of flat) {
        const i = x.indexOf(':');
        const [k, v] = i > 0 ? [x.slice(0, i), x.slice(i + 1)] : ['', x];
        if (k === 'file') inputs.files.push(v);
        else if (k === 'npm' || x === 'AllExternalDependencies') inputs.external.push(x);
        else if (k === 'env') inputs.environment.push(v);
        else if (k === 'runtime') inputs.runtime.push(v);
        else inputs.other.push(x);
      }
      api = 'HashPlanInspector.inspectTask';
    }
    projects[n] = { root: graph.nodes[n].data.root, configuredInputs: graph.nodes[n].data.targets[target].inputs ?? null, executor: graph.nodes[n].data.targets[target].executor ?? null, inputs };
  }
  const taskGraph = createTaskGraph(graph, {}, names, [target], undefined, {}, false);
  const tasks = names.map((n) => taskGraph.tasks[n + ':' + target]);
  const hasher = createTaskHasher(graph, nxJson);
  const envs = {};
  for (const t of tasks) envs[t.id] = getTaskSpecificEnv ? getTaskSpecificEnv(t, graph) : process.env;
  let hashes;
  try {
    hashes = await hasher.hashTasks(tasks, taskGraph, envs);
  } catch (e) {
    // Nx before per-task environments takes one environment for every task.
    if (!/rust type|String/.test(String(e && e.message))) throw e;
    hashes = await hasher.hashTasks(tasks, taskGraph, process.env);
  }
  tasks.forEach((t, i) => {
    projects[t.target.project].hash = hashes[i].value;
    projects[t.target.project].details = hashes[i].details?.nodes ?? {};
  });
  const nxVersion = req('nx/package.json').version;
  const showTarget = (() => { try { require.resolve('nx/src/command-line/show/show-target/inputs', { paths: [process.cwd()] }); return true; } catch { return false; } })();
  writeFileSync(out, JSON.stringify({ nxVersion, api, showTarget, projects }));
})().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
`;
const probeFile = join(work, `probe-${FP}.cjs`);
writeFileSync(probeFile, PROBE);

const nxEnv = (mode) => ({
  ...process.env,
  NX_DAEMON: 'false',
  NX_NO_CLOUD: 'true',
  NX_SKIP_NX_CACHE: 'true',
  NX_CACHE_PROJECT_GRAPH: 'false',
  NX_TUI: 'false',
  NX_WORKSPACE_DATA_DIRECTORY: join(work, `nx-workspace-data-${mode}`),
  NX_CACHE_DIRECTORY: join(work, `nx-cache-${mode}`),
  NX_ISOLATE_PLUGINS: 'false',
  NX_VERBOSE_LOGGING: 'false',
});

function runProbe(dir, mode, target, out, only) {
  const r = spawnSync(process.execPath, [probeFile, target, out, ...(only ? [only] : [])], {
    cwd: dir,
    env: nxEnv(mode),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    timeout: 20 * 60_000,
  });
  if (r.status !== 0)
    throw new Error(
      `probe (${mode}, ${target}) failed in ${dir}: exit ${r.status ?? r.signal}\n${(r.stderr || r.stdout || '').split('\n').slice(-20).join('\n')}`,
    );
  return JSON.parse(readFileSync(out, 'utf8'));
}

/** The CLI itself for one project, to show the probe answers what `nx show target inputs` prints. */
function cliInputs(dir, mode, project, target) {
  const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/nx/package.json'), 'utf8'));
  const bin = join(dir, 'node_modules/nx', typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.nx);
  // Into a file: Nx exits before a large write to a pipe is flushed.
  const outFile = join(work, `cli-${mode}.json`);
  const fd = openSync(outFile, 'w');
  let r;
  try {
    r = spawnSync(process.execPath, [bin, 'show', 'target', 'inputs', `${project}:${target}`, '--json'], {
      cwd: dir,
      env: nxEnv(mode),
      encoding: 'utf8',
      stdio: ['ignore', fd, 'pipe'],
      maxBuffer: 1 << 28,
    });
  } finally {
    closeSync(fd);
  }
  if (r.status !== 0) throw new Error(`nx show target inputs ${project}:${target} --json failed: ${(r.stderr || '').split('\n').slice(-10).join('\n')}`);
  const text = readFileSync(outFile, 'utf8');
  return JSON.parse(text.slice(text.indexOf('{')));
}

const coDir = join(work, 'co');
// Probe answers depend only on the probe and the overlay, not on the rest of this tool.
const PROBE_FP = createHash('sha256').update(PROBE).update(overlayNxJson.toString()).digest('hex').slice(0, 12);
const probeDir = join(work, 'probes', PROBE_FP);
mkdirSync(probeDir, { recursive: true });
const INSTALL_FILES = /(^|\/)(package\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|\.npmrc|yarn\.lock|package-lock\.json|\.yarnrc\.yml)$/;
let installedFor = existsSync(join(work, 'co.installed')) ? readFileSync(join(work, 'co.installed'), 'utf8') : '';
let coAt = null;
let nxVersions = new Set();
let cliCheck = null;
const apis = new Set();

/** Probe answers at `sha` in `mode` (cached under --cache). */
function probeAt(sha, mode) {
  const out = join(probeDir, `${sha}.${mode}.json`);
  if (existsSync(out)) {
    const j = JSON.parse(readFileSync(out, 'utf8'));
    nxVersions.add(j.nxVersion);
    const saved = join(probeDir, `${sha}.${mode}.cli.json`);
    if (!cliCheck?.[mode] && existsSync(saved))
      cliCheck = {
        ...(cliCheck ?? {}),
        [mode]: JSON.parse(readFileSync(saved, 'utf8')),
      };
    apis.add(`Nx ${j.nxVersion}: ${j.api}${j.showTarget ? ' (= `nx show target inputs`)' : ' (this Nx has no `nx show target`)'}`);
    return j;
  }
  prepare(sha);
  const t0 = performance.now();
  writeFileSync(join(coDir, 'nx.json'), mode === 'emulation' ? overlayNxJson(git('show', `${sha}:nx.json`)) : git('show', `${sha}:nx.json`));
  const j = runProbe(coDir, mode, 'build', `${out}.tmp`);
  writeFileSync(out, JSON.stringify(j));
  rmSync(`${out}.tmp`, { force: true });
  nxVersions.add(j.nxVersion);
  log(`  ${sha.slice(0, 9)} ${mode}: Nx ${j.nxVersion}, ${Object.keys(j.projects).length} build tasks probed in ${Math.round(performance.now() - t0)} ms`);
  apis.add(`Nx ${j.nxVersion}: ${j.api}${j.showTarget ? ' (= `nx show target inputs`)' : ' (this Nx has no `nx show target`)'}`);
  if (j.showTarget && !cliCheck?.[mode]) checkCli(sha, mode, j);
  return j;
}

/**
 * The CLI itself (`nx show target inputs <project>:build --json`) for one project at `sha`, against
 * the probe's answer `j`; the run fails unless they are identical. Saved beside the probe answer.
 */
function checkCli(sha, mode, j) {
  prepare(sha);
  writeFileSync(join(coDir, 'nx.json'), mode === 'emulation' ? overlayNxJson(git('show', `${sha}:nx.json`)) : git('show', `${sha}:nx.json`));
  const name = Object.keys(j.projects)[0];
  const cli = cliInputs(coDir, mode, name, 'build');
  const mine = j.projects[name].inputs;
  const same = ['files', 'external', 'environment'].every((k) => JSON.stringify([...(cli[k] ?? [])].sort()) === JSON.stringify([...(mine[k] ?? [])].sort()));
  const r = { sha, project: name, identical: same };
  cliCheck = { ...(cliCheck ?? {}), [mode]: r };
  writeFileSync(join(probeDir, `${sha}.${mode}.cli.json`), JSON.stringify(r));
  log(
    `  CLI check (${mode}): \`nx show target inputs ${name}:build --json\` ${same ? 'is identical to' : 'DIFFERS from'} the probe's answer at ${sha.slice(0, 9)}`,
  );
  if (!same) throw new Error(`the probe does not answer what \`nx show target inputs ${name}:build --json\` prints at ${sha} (${mode})`);
}

function prepare(sha) {
  if (coAt === sha) return;
  checkout(coDir, sha);
  coAt = sha;
  const files = lsTree(sha);
  const key = createHash('sha256')
    .update(
      [...files]
        .filter(([p]) => INSTALL_FILES.test(p))
        .map(([p, b]) => `${p}:${b}`)
        .sort()
        .join('\n'),
    )
    .digest('hex');
  if (key !== installedFor || !existsSync(join(coDir, 'node_modules'))) {
    const r = installDependencies(coDir, {
      toolsDir: join(cacheRoot, 'tools'),
      store: join(cacheRoot, 'store'),
      log,
    });
    if (!r.ok) throw new Error(`install at ${sha} failed: ${r.command ?? ''}\n${r.error}`);
    log(`  ${sha.slice(0, 9)}: installed in ${r.ms} ms (${r.command})`);
    installedFor = key;
    writeFileSync(join(work, 'co.installed'), key);
  }
}

// ---------------------------------------------------------------- comparison

const extName = (e) => {
  const s = e.replace(/^npm:/, '');
  const at = s.indexOf('@', 1);
  return at > 0 ? s.slice(0, at) : s;
};
const diffKeys = (a, b) => [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])].filter((k) => a?.[k] !== b?.[k]).sort();

const results = {
  repo: repoName,
  branch,
  window: [shas[0], shas.at(-1)],
  commits: shas.length - 1,
  seed: SEED,
  fingerprint: FP,
  modes: {},
  pairs: [],
};
for (const mode of MODES)
  results.modes[mode] = {
    agree: 0,
    disagree: 0,
    realOnly: 0,
    emuOnly: 0,
    bothRerun: 0,
    bothHit: 0,
    disagreements: [],
    setDiffs: {},
  };
let toolErrors = [];

for (const pair of picked) {
  log(`pair ${pair.parent.slice(0, 9)}..${pair.commit.slice(0, 9)}`);
  const pr = {
    parent: pair.parent,
    commit: pair.commit,
    subject: subjects.get(pair.commit),
    lockfile: !!pair.lockfile,
    emuReruns: pair.emuReruns,
    modes: {},
  };
  const probes = {};
  for (const sha of [pair.parent, pair.commit]) for (const mode of MODES) probes[`${sha}.${mode}`] = probeAt(sha, mode);
  const ea = emuMemo.get(pair.parent);
  const eb = emuMemo.get(pair.commit);
  const changedFiles = new Set();
  for (const [p, b] of eb.files) if (ea.files.get(p) !== b) changedFiles.add(p);
  for (const p of ea.files.keys()) if (!eb.files.has(p)) changedFiles.add(p);
  pr.changedFiles = changedFiles.size;
  for (const mode of MODES) {
    const m = results.modes[mode];
    const A = probes[`${pair.parent}.${mode}`].projects;
    const B = probes[`${pair.commit}.${mode}`].projects;
    const rows = [];
    for (const [name, pb] of Object.entries(B)) {
      const root = pb.root;
      const emB = eb.nx.get(root);
      if (!emB) {
        rows.push({
          project: name,
          root,
          note: 'no emulated project at this root',
        });
        continue;
      }
      const pa = A[name];
      const emA = ea.nx.get(root);
      const realRerun = !pa || pa.hash !== pb.hash;
      const emuRerun = !emA || emA.hash !== emB.hash;
      const row = {
        project: name,
        root,
        emuHasBuild: emB.hasBuild,
        realRerun,
        emuRerun,
        agree: realRerun === emuRerun,
      };
      // Causes.
      row.realMoved = pa ? diffKeys(pa.details, pb.details) : ['(new task)'];
      const realFilesA = new Set(pa?.inputs.files ?? []);
      const realFilesB = new Set(pb.inputs.files);
      row.realFilesChanged = [...new Set([...realFilesA, ...realFilesB])].filter((f) => changedFiles.has(f) || realFilesA.has(f) !== realFilesB.has(f)).sort();
      row.emuMoved = emA ? diffKeys(emA.parts, emB.parts) : ['(new project)'];
      const sA = ea.sets.get(root);
      const sB = eb.sets.get(root);
      row.emuFilesChanged = [...new Set([...(sA?.files ?? []), ...sB.files])]
        .filter((f) => changedFiles.has(f) || !!sA?.files.has(f) !== sB.files.has(f))
        .sort();
      // Self-check of the derived sets: the emulation's own parts that hash files must move iff a file of its set changed.
      // (Root-level tsconfig files are left out: the emulation hashes the root tsconfig parsed, so a
      // reformatting changes its blob and not the emulation's part.)
      const partsFileMoved = row.emuMoved.some((k) => ['ownSrc', 'ownManifest', 'depSrc', 'depManifest'].includes(k));
      if (partsFileMoved !== row.emuFilesChanged.some((f) => f.includes('/'))) {
        toolErrors.push(
          `${mode} ${pair.commit.slice(0, 9)} ${root}: derived emulation set (${row.emuFilesChanged.length} changed files) disagrees with nxHashes' parts (${row.emuMoved.join(',') || 'none'})`,
        );
      }
      {
        // Input sets at the commit.
        const realExt = new Set((pb.inputs.external ?? []).filter((e) => e.startsWith('npm:')).map(extName));
        row.sets = {
          filesOnlyNx: [...realFilesB].filter((f) => !sB.files.has(f)).sort(),
          filesOnlyEmu: [...sB.files].filter((f) => !realFilesB.has(f)).sort(),
          externalOnlyNx: [...realExt].filter((n) => !sB.external.has(n)).sort(),
          externalOnlyEmu: [...sB.external].filter((n) => !realExt.has(n)).sort(),
          allExternal: (pb.inputs.external ?? []).includes('AllExternalDependencies'),
          environment: pb.inputs.environment ?? [],
          runtime: pb.inputs.runtime ?? [],
          configuredInputs: pb.configuredInputs,
          executor: pb.executor,
        };
      }
      if (row.agree) m.agree++;
      else m.disagree++;
      if (realRerun && emuRerun) m.bothRerun++;
      else if (!realRerun && !emuRerun) m.bothHit++;
      else if (realRerun) m.realOnly++;
      else m.emuOnly++;
      if (!row.agree)
        m.disagreements.push({
          parent: pair.parent,
          commit: pair.commit,
          subject: pr.subject,
          project: name,
          root,
          realRerun,
          emuRerun,
          realMoved: row.realMoved,
          realFilesChanged: row.realFilesChanged.slice(0, 20),
          emuMoved: row.emuMoved,
          emuFilesChanged: row.emuFilesChanged.slice(0, 20),
        });
      rows.push(row);
    }
    for (const root of buildRoots(eb))
      if (!Object.values(B).some((p) => p.root === root))
        rows.push({
          project: eb.nx.get(root).name,
          root,
          note: 'emulated build, but no real build target',
        });
    pr.modes[mode] = rows;
  }
  results.pairs.push(pr);
}

// Set differences per project at the newest sampled commit (each row keeps its own in the JSON).
for (const mode of MODES) {
  const agg = {};
  for (const pr of results.pairs.slice(-1)) {
    for (const row of pr.modes[mode]) {
      if (!row.sets) continue;
      const a = (agg[row.project] ??= {
        root: row.root,
        filesOnlyNx: new Set(),
        filesOnlyEmu: new Set(),
        externalOnlyNx: new Set(),
        externalOnlyEmu: new Set(),
        allExternal: false,
        environment: new Set(),
        runtime: new Set(),
        configuredInputs: row.sets.configuredInputs,
        executor: row.sets.executor,
      });
      for (const k of ['filesOnlyNx', 'filesOnlyEmu', 'externalOnlyNx', 'externalOnlyEmu', 'environment', 'runtime']) for (const x of row.sets[k]) a[k].add(x);
      a.allExternal ||= row.sets.allExternal;
    }
  }
  for (const [name, a] of Object.entries(agg)) {
    results.modes[mode].setDiffs[name] = Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v instanceof Set ? [...v].sort() : v]));
  }
}
// Every probe answer came from the cache: run the CLI check where it has not been run yet.
for (const mode of MODES) {
  if (cliCheck?.[mode]) continue;
  for (const sha of [...new Set(picked.flatMap((p) => [p.commit, p.parent]))].reverse()) {
    const j = probeAt(sha, mode);
    if (j.showTarget) {
      checkCli(sha, mode, j);
      break;
    }
  }
}
results.nxVersions = [...nxVersions];
results.cliCheck = cliCheck;
results.apis = [...apis];

// ---------------------------------------------------------------- kiln-keyed

if (KILN_KEYED) {
  const sha = picked.at(-1).commit;
  prepare(sha);
  const modeForProbe = 'own';
  writeFileSync(join(coDir, 'nx.json'), git('show', `${sha}:nx.json`));
  const e = emuMemo.get(sha);
  const target = buildRoots(e)
    .map((r) => e.nx.get(r))
    .sort((a, b) => (a.root < b.root ? -1 : 1))[0];
  const manifestPath = join(coDir, target.root, 'package.json');
  const original = readFileSync(manifestPath, 'utf8');
  const m = JSON.parse(original);
  m.nx = {
    ...(m.nx ?? {}),
    targets: {
      ...(m.nx?.targets ?? {}),
      'kiln-keyed-probe': {
        command: 'true',
        cache: true,
        inputs: [{ externalDependencies: [] }],
      },
    },
  };
  writeFileSync(manifestPath, JSON.stringify(m, null, 2));
  let probe;
  try {
    probe = runProbe(coDir, modeForProbe, 'kiln-keyed-probe', join(work, `kiln-keyed-${sha}.json`));
  } finally {
    writeFileSync(manifestPath, original);
  }
  const p = Object.values(probe.projects)[0];
  const always = (p.inputs.files ?? []).filter((f) => !f.startsWith(`${target.root}/`));
  const ownFiles = (p.inputs.files ?? []).filter((f) => f.startsWith(`${target.root}/`));
  // Commits over the window touching the always-hashed files (workspace files and the root tsconfig).
  const logOut = git('log', '--first-parent', '--format=@@%H', '--name-only', '-m', '-n', String(N), branch);
  const touched = new Map();
  let cur;
  for (const line of logOut.split('\n')) {
    if (line.startsWith('@@')) {
      cur = line.slice(2);
      touched.set(cur, new Set());
    } else if (line.trim() && cur) touched.get(cur).add(line.trim());
  }
  const hitting = [...touched].filter(([, fs]) => always.some((f) => fs.has(f)));
  const byFile = Object.fromEntries(always.map((f) => [f, [...touched].filter(([, fs]) => fs.has(f)).length]));
  const kk = {
    commit: sha,
    nxVersion: probe.nxVersion,
    project: p.root,
    hashedFilesOutsideProject: always,
    hashedFilesInProject: ownFiles,
    external: p.inputs.external,
    environment: p.inputs.environment,
    runtime: p.inputs.runtime,
    detailKeys: Object.keys(p.details).sort(),
    commitsTouching: hitting.length,
    commitsTouchingByFile: byFile,
    commitsTouchingList: hitting.map(([c, fs]) => ({
      commit: c,
      subject: subjects.get(c),
      files: always.filter((f) => fs.has(f)),
    })),
  };
  // Per package: against kiln's own reruns (bench-history records), when given.
  if (args['kiln-records']) {
    const dir = resolve(args['kiln-records']);
    const rec = (s) => {
      const f = join(dir, `${s}.json`);
      return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null;
    };
    const per = {};
    let missing = 0;
    for (let i = 1; i < shas.length; i++) {
      const a = rec(shas[i - 1]);
      const b = rec(shas[i]);
      if (!a || !b) {
        missing++;
        continue;
      }
      const hit = touched.get(shas[i]) && always.some((f) => touched.get(shas[i]).has(f));
      for (const [root, kb] of Object.entries(b.kiln ?? {})) {
        if (!b.nx?.[root]?.build) continue;
        const ka = a.kiln?.[root];
        const kilnRerun = !ka || ka.key !== kb.key;
        const nxRerun = !a.nx?.[root] || a.nx[root].hash !== b.nx[root].hash;
        const q = (per[root] ??= {
          name: kb.name,
          kiln: 0,
          extra: 0,
          kilnKeyed: 0,
          nxEmulated: 0,
        });
        if (kilnRerun) q.kiln++;
        if (nxRerun) q.nxEmulated++;
        if (hit && !kilnRerun) q.extra++;
        if (kilnRerun || hit) q.kilnKeyed++;
      }
    }
    kk.perPackage = per;
    kk.recordsMissing = missing;
  }
  results.kilnKeyed = kk;
  log(
    `kiln-keyed: Nx ${probe.nxVersion} still hashes ${always.join(', ')} (+ ${ownFiles.join(', ') || 'nothing'} in the project); ${hitting.length} of ${N} commits touch them`,
  );
}

// ---------------------------------------------------------------- report

const md = [];
md.push(`# Emulated vs real Nx — ${repoName} (${shas[0].slice(0, 9)}..${shas.at(-1).slice(0, 9)}, ${shas.length - 1} first-parent commits)`);
md.push('');
md.push(
  `Nx ${[...nxVersions].join(', ')} (the checkout's own, installed by its package manager); inputs from ${[...apis].join('; ')}; as \`nx show target inputs <project>:build --json\` lists them (${Object.entries(
    cliCheck ?? {},
  )
    .map(([k, v]) => `${k}: CLI ${v.identical ? 'identical' : 'DIFFERENT'} on ${v.project} at ${v.sha.slice(0, 9)}`)
    .join('; ')}), hashes from Nx's task hasher; seed ${SEED}, tool ${FP}.`,
);
md.push('');
md.push(
  '| pair | subject | changed files | emulated reruns | ' + MODES.map((m) => `${m}: projects / agree / disagree (Nx only, emulation only)`).join(' | ') + ' |',
);
md.push('|---|---|---|---|' + MODES.map(() => '---|').join(''));
for (const pr of results.pairs) {
  const cells = MODES.map((mode) => {
    const rows = pr.modes[mode].filter((r) => r.agree !== undefined);
    const ag = rows.filter((r) => r.agree).length;
    const nxo = rows.filter((r) => r.realRerun && !r.emuRerun).length;
    const emo = rows.filter((r) => !r.realRerun && r.emuRerun).length;
    return `${rows.length} / ${ag} / ${rows.length - ag} (${nxo}, ${emo})`;
  });
  md.push(
    `| ${pr.parent.slice(0, 9)}..${pr.commit.slice(0, 9)}${pr.lockfile ? ' (lockfile)' : ''} | ${pr.subject.replace(/\|/g, '\\|').slice(0, 60)} | ${pr.changedFiles} | ${pr.emuReruns.length} | ${cells.join(' | ')} |`,
  );
}
for (const mode of MODES) {
  const m = results.modes[mode];
  md.push('');
  md.push(
    `**${mode}**: ${m.agree + m.disagree} (pair, project) verdicts — ${m.agree} agree (${m.bothRerun} both rerun, ${m.bothHit} both hit), ${m.disagree} disagree (${m.realOnly} real Nx reruns and the emulation does not, ${m.emuOnly} the reverse).`,
  );
  if (m.disagreements.length) {
    md.push('');
    md.push('| pair | project | real Nx | emulation | real hash entries that moved | files responsible |');
    md.push('|---|---|---|---|---|---|');
    for (const d of m.disagreements) {
      const files = d.realRerun
        ? d.realFilesChanged.filter((f) => !d.emuFilesChanged.includes(f))
        : d.emuFilesChanged.filter((f) => !d.realFilesChanged.includes(f));
      md.push(
        `| ${d.commit.slice(0, 9)} | ${d.project} | ${d.realRerun ? 'rerun' : 'hit'} | ${d.emuRerun ? 'rerun' : 'hit'} (${d.emuMoved.join(', ') || '—'}) | ${d.realMoved.slice(0, 6).join(', ').replace(/\|/g, '\\|') || '—'} | ${files.slice(0, 6).join(', ') || '—'} |`,
      );
    }
  }
}
for (const mode of MODES) {
  const sd = results.modes[mode].setDiffs;
  if (!Object.keys(sd).length) continue;
  const group = (l) => {
    const c = {};
    for (const f of l) {
      const k = f.includes('/') ? f.split('/').slice(0, 2).join('/') + '/' : f;
      c[k] = (c[k] ?? 0) + 1;
    }
    return (
      Object.entries(c)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || '—'
    );
  };
  md.push('');
  md.push(
    `Input sets at ${results.pairs.at(-1).commit.slice(0, 9)} (${mode}): files only in Nx's set / only in the emulation's, by folder; external packages by name.`,
  );
  md.push('');
  md.push('| project | configured inputs | files only Nx | files only emulation | external only Nx / only emulation | all external nodes hashed |');
  md.push('|---|---|---|---|---|---|');
  for (const [name, a] of Object.entries(sd)) {
    md.push(
      `| ${name} | ${JSON.stringify(a.configuredInputs).replace(/\|/g, '\\|').slice(0, 80)} | ${group(a.filesOnlyNx)} | ${group(a.filesOnlyEmu)} | ${a.externalOnlyNx.length} / ${a.externalOnlyEmu.length} (${a.externalOnlyEmu.slice(0, 4).join(', ')}) | ${a.allExternal ? 'yes' : 'no'} |`,
    );
  }
}
if (results.kilnKeyed) {
  const kk = results.kilnKeyed;
  md.push('');
  md.push(
    `**kiln-keyed** (a target with \`inputs: [{"externalDependencies": []}]\`, Nx ${kk.nxVersion}, at ${kk.commit.slice(0, 9)}): Nx still hashes ${kk.hashedFilesOutsideProject.map((f) => `\`${f}\``).join(', ')}${kk.hashedFilesInProject.length ? ` and, in the project, ${kk.hashedFilesInProject.map((f) => `\`${f}\``).join(', ')}` : ''}; hash entries ${kk.detailKeys.map((k) => `\`${k}\``).join(', ')}. ${kk.commitsTouching} of ${N} commits touch those files (${Object.entries(
      kk.commitsTouchingByFile,
    )
      .map(([f, n]) => `${f}: ${n}`)
      .join(', ')}).`,
  );
  if (kk.perPackage) {
    md.push('');
    md.push('| package | Nx reruns (emulated) | kiln reruns (emulated) | extra under real Nx (kiln-keyed) | kiln-keyed total |');
    md.push('|---|---|---|---|---|');
    let t = [0, 0, 0, 0];
    for (const [root, q] of Object.entries(kk.perPackage).sort()) {
      md.push(`| ${q.name} | ${q.nxEmulated} | ${q.kiln} | ${q.extra} | ${q.kilnKeyed} |`);
      t = [t[0] + q.nxEmulated, t[1] + q.kiln, t[2] + q.extra, t[3] + q.kilnKeyed];
    }
    md.push(`| **total** | ${t[0]} | ${t[1]} | ${t[2]} | ${t[3]} |`);
    if (kk.recordsMissing) md.push(`\n(${kk.recordsMissing} commit pairs had no bench-history record and are not counted.)`);
  }
}
if (toolErrors.length) {
  md.push('');
  md.push(`**tool errors** (${toolErrors.length}):`);
  for (const e of toolErrors.slice(0, 30)) md.push(`- ${e}`);
}
results.toolErrors = toolErrors;
const text = md.join('\n') + '\n';
console.log(text);
if (args.markdown) writeFileSync(resolve(args.markdown), text);
if (args.json) writeFileSync(resolve(args.json), JSON.stringify(results, null, 1));
const disagreements = MODES.reduce((s, mode) => s + results.modes[mode].disagree, 0);
process.exit(disagreements || toolErrors.length ? 1 : 0);
