#!/usr/bin/env node
/**
 * Real-history benchmark (SPEC §10, issue 3 point 7): over the last N first-parent commits of a real
 * monorepo (trpc), how often each workspace package's `build` key changes under Nx (`production`
 * inputs, emulated from `git ls-tree` blob ids — tools/lib/nx-emulation.mjs says exactly what is
 * included) and under kiln (`computeWorkspaceKeys`), side by side; which rule avoided each rerun
 * kiln saved; and the false-hit oracle: for kiln hits where a file the build reads changed, a fresh
 * TypeScript emit (JS + .d.ts, workspace packages mapped to their sources — tools/lib/oracle-build.mjs)
 * at the commit must be equivalent (`compareOutputs`, SPEC §4) to the emit at its parent.
 *
 * Corpus: a git directory (bare is fine) of the repository, e.g. the one the `fetch` tool returns
 * for github:trpc/trpc (/work/.mirror/trpc+trpc/repo), or `git clone --bare https://github.com/trpc/trpc`.
 * Nothing of the corpus is written into this repository: checkouts, the kiln store, per-commit
 * records and oracle builds live under --cache (default /tmp/kiln-bench-history), and every phase
 * is resumable — rerunning the same command reuses what is there.
 *
 * Usage: node tools/bench-history.mjs --repo DIR [--commits N] [--branch REF] [--cache DIR]
 *          [--workers N] [--sample N | --oracle-all | --no-oracle] [--seed N] [--jobs N] [--calibrate N] [--json FILE] [--kiln-dist DIR]
 * Requires a build of this repository (`npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { nxHashes } from './lib/nx-emulation.mjs';
import { configInputs, ORACLE_TS_VERSION } from './lib/oracle-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
let coreDist = join(repoRoot, 'packages/core/dist');
const RECORD_VERSION = 3;

if (!isMainThread) {
  await oracleWorker(workerData);
  process.exit(0);
}

const HELP = `usage: node tools/bench-history.mjs --repo GIT_DIR [options]

  --repo DIR       git directory of the corpus (bare or not); default $KILN_BENCH_REPO, else
                   /work/.mirror/trpc+trpc/repo when it exists
  --branch REF     branch to walk (default: the repository's HEAD)
  --commits N      commits to measure, newest first, each against its first parent (default 300)
  --cache DIR      checkouts, kiln store, records, oracle builds (default /tmp/kiln-bench-history)
  --workers N      kiln digest workers (default 1; at least 1)
  --sample N       oracle: check a seeded random sample of N kiln hits (default 150; all if fewer)
  --oracle-all     oracle: check every kiln hit whose build inputs changed
  --no-oracle      skip the oracle
  --seed N         sample seed (default 1)
  --jobs N         oracle build threads (default 1)
  --calibrate N    oracle calibration: also compare N sampled kiln reruns where the package's own
                   declarations moved (nearly all must differ, or the oracle is blind); default 10
  --json FILE      also write the results as JSON
  --kiln-dist DIR  the @kiln/core build to measure (default: this repository's packages/core/dist),
                   e.g. a clean build of one commit while the working tree is being edited
`;

let args;
try {
  args = parseArgs({
    options: {
      repo: { type: 'string' },
      branch: { type: 'string' },
      commits: { type: 'string', default: '300' },
      cache: { type: 'string', default: '/tmp/kiln-bench-history' },
      workers: { type: 'string', default: '1' },
      sample: { type: 'string', default: '150' },
      'oracle-all': { type: 'boolean', default: false },
      'no-oracle': { type: 'boolean', default: false },
      seed: { type: 'string', default: '1' },
      jobs: { type: 'string', default: '1' },
      calibrate: { type: 'string', default: '10' },
      json: { type: 'string' },
      'kiln-dist': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
} catch (e) {
  process.stderr.write(`${e.message}\n${HELP}`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const int = (name, min) => {
  const v = Number(args[name]);
  if (!Number.isInteger(v) || v < min) {
    process.stderr.write(`--${name} must be an integer >= ${min}\n`);
    process.exit(2);
  }
  return v;
};
const N = int('commits', 1);
const WORKERS = int('workers', 1);
const SAMPLE = int('sample', 1);
const SEED = int('seed', 0);
const JOBS = int('jobs', 1);
const CALIBRATE = Number.isInteger(Number(args.calibrate)) && Number(args.calibrate) >= 0 ? Number(args.calibrate) : 10;
const repo = args.repo ?? process.env.KILN_BENCH_REPO ?? (existsSync('/work/.mirror/trpc+trpc/repo') ? '/work/.mirror/trpc+trpc/repo' : undefined);
if (!repo || !existsSync(repo)) {
  process.stderr.write(`no corpus: pass --repo GIT_DIR (e.g. git clone --bare https://github.com/trpc/trpc /tmp/trpc.git)\n`);
  process.exit(2);
}
if (args['kiln-dist']) coreDist = resolve(args['kiln-dist']);
if (!existsSync(join(coreDist, 'index.js'))) {
  process.stderr.write('packages/core/dist is missing: run `npm run build` first\n');
  process.exit(2);
}
const core = await import(pathToFileURL(join(coreDist, 'index.js')).href);
const cache = resolve(args.cache);
const t0 = performance.now();
const log = (m) => process.stderr.write(`${m}\n`);
const git = (...a) => execFileSync('git', ['--git-dir', repo, ...a], { maxBuffer: 1 << 28, encoding: 'utf8' });

// ---------------------------------------------------------------- commits

const branch = args.branch ?? git('symbolic-ref', '--short', 'HEAD').trim();
const shas = git('log', '--first-parent', '--format=%H', '-n', String(N + 1), branch).trim().split('\n').reverse();
const subjects = new Map(git('log', '--first-parent', '--format=%H %s', '-n', String(N + 1), branch).trim().split('\n').map((l) => [l.slice(0, 40), l.slice(41)]));
if (shas.length < 2) {
  process.stderr.write('fewer than two commits\n');
  process.exit(1);
}

/**
 * Fingerprint of what a per-commit record depends on: kiln's built code, the Nx emulation and this
 * script's record layout (RECORD_VERSION). A different fingerprint measures every commit again.
 */
function fingerprint() {
  const hash = createHash('sha256').update(`record${RECORD_VERSION}`);
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) hash.update(e.name).update(readFileSync(p));
    }
  };
  walk(coreDist);
  hash.update(readFileSync(join(here, 'lib/nx-emulation.mjs')));
  return hash.digest('hex').slice(0, 16);
}
const FP = fingerprint();
const recordDir = join(cache, 'records', FP);
mkdirSync(recordDir, { recursive: true });

function lsTree(sha) {
  const out = execFileSync('git', ['--git-dir', repo, 'ls-tree', '-r', '-z', '--full-tree', sha], { maxBuffer: 1 << 28 });
  const files = new Map();
  for (const entry of out.toString('utf8').split('\0')) {
    if (!entry) continue;
    const tab = entry.indexOf('\t');
    const [mode, type, oid] = entry.slice(0, tab).split(' ');
    if (type !== 'blob' || mode === '120000') continue;
    files.set(entry.slice(tab + 1), oid);
  }
  return files;
}

/** Move a reusable checkout to `sha` (a private index; files not in the commit are removed). */
function checkout(dir, index, sha) {
  if (!existsSync(index)) rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('git', ['--git-dir', repo, '--work-tree', dir, 'read-tree', '-u', '--reset', sha], {
      env: { ...process.env, GIT_INDEX_FILE: index },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch {
    rmSync(index, { force: true });
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['--git-dir', repo, '--work-tree', dir, 'read-tree', '-u', '--reset', sha], { env: { ...process.env, GIT_INDEX_FILE: index } });
  }
}

const h = (s) => createHash('sha256').update(s).digest('hex').slice(0, 32);

// ---------------------------------------------------------------- phase 1: keys per commit

const tree = join(cache, 'tree');
const index = join(cache, 'tree.index');
// One store per kiln build: a store is only as good as its (extractor, schema) versioning, and this
// benchmark is run against work-in-progress builds too.
const store = join(cache, 'store', FP);
const nxCaches = { imports: new Map(), locks: new Map() };
const records = new Map();
let prevFiles;
let prevInputs = new Map(); // root → { files, configs } of the previous measured commit
let measured = 0;
let measuredMs = 0;
const todo = shas.filter((s) => !existsSync(join(recordDir, `${s}.json`)));
log(`bench-history: ${shas.length - 1} commits of ${branch} (${shas[0].slice(0, 9)}..${shas.at(-1).slice(0, 9)}), cache ${cache}, ${todo.length} of ${shas.length} commits to measure`);
for (let i = 0; i < shas.length; i++) {
  const sha = shas[i];
  const file = join(recordDir, `${sha}.json`);
  if (existsSync(file)) {
    records.set(sha, JSON.parse(readFileSync(file, 'utf8')));
    prevFiles = undefined;
    continue;
  }
  const tc = performance.now();
  checkout(tree, index, sha);
  const files = lsTree(sha);
  const changed = new Set();
  if (prevFiles) {
    for (const [p, b] of files) if (prevFiles.get(p) !== b) changed.add(p);
    for (const p of prevFiles.keys()) if (!files.has(p)) changed.add(p);
  }
  const readText = (p) => {
    try {
      return readFileSync(join(tree, p), 'utf8');
    } catch {
      return undefined;
    }
  };
  const tn = performance.now();
  const nx = nxHashes(files, readText, nxCaches);
  const nxMs = performance.now() - tn;

  const tk = performance.now();
  let kiln;
  let crash;
  try {
    kiln = await core.computeWorkspaceKeys(tree, { store, workers: WORKERS, record: false });
  } catch (e) {
    crash = { message: String(e?.message ?? e), stack: String(e?.stack ?? '').split('\n').slice(0, 8).join('\n') };
  }
  const kilnMs = performance.now() - tk;

  // What each project's build reads (its tsconfig's files, package.json, the tsconfig chain), for the
  // oracle's population and the attribution of avoided reruns.
  const inputs = new Map();
  const kilnProjects = {};
  for (const p of kiln?.projects ?? []) {
    const c = p.components;
    const tsconfig = c?.tsconfig?.file;
    let inp;
    if (tsconfig) {
      const prev = prevInputs.get(p.root);
      const touched = !prevFiles || [...changed].some((f) => f.startsWith(`${p.root}/`) || /(^|\/)tsconfig[^/]*\.json$/.test(f));
      inp = prev && prev.tsconfig === tsconfig && !touched ? prev : { tsconfig, ...configInputs(tree, p.root, tsconfig) };
      inputs.set(p.root, inp);
    }
    const codes = {};
    for (const d of p.diagnostics) (codes[d.code] ??= { count: 0, severity: d.severity, first: `${d.file ?? ''}: ${d.message}`.slice(0, 300) }).count++;
    kilnProjects[p.root] = {
      name: p.project,
      key: p.key,
      surface: p.surface?.mode ?? null,
      surfaceReason: p.surface?.reason?.slice(0, 200),
      tsconfig: tsconfig ?? null,
      deps: c ? Object.keys(c.dependencies) : [],
      parts: c
        ? {
            own: h(JSON.stringify([c.declarations, c.modules, c.files])),
            manifest: c.manifest?.digest ?? '',
            tsconfig: c.tsconfig?.digest ?? '',
            // Versions and transitive lockfile closures (key schema 3).
            externals: h(JSON.stringify([c.externals, Object.entries(c.closures ?? {}).map(([k, v]) => [k, v.digest])])),
            deps: h(JSON.stringify(Object.entries(c.dependencies).map(([k, v]) => [k, v.digest]))),
            toolchain: h(JSON.stringify(c.toolchain)),
          }
        : null,
      diagnostics: codes,
    };
  }
  prevInputs = inputs;
  // Read set per project: own inputs and those of its workspace dependencies (transitively), by blob.
  const byName = new Map(Object.entries(kilnProjects).map(([root, p]) => [p.name, root]));
  for (const [root, kp] of Object.entries(kilnProjects)) {
    const own = inputs.get(root);
    if (!own) continue;
    const roots = new Set([root]);
    const stack = [...kp.deps];
    while (stack.length) {
      const r = byName.get(stack.pop());
      if (!r || roots.has(r)) continue;
      roots.add(r);
      stack.push(...kilnProjects[r].deps);
    }
    const paths = new Set();
    for (const r of roots) {
      paths.add(`${r}/package.json`);
      for (const f of inputs.get(r)?.files ?? []) paths.add(f);
      for (const f of inputs.get(r)?.configs ?? []) paths.add(f);
    }
    const sorted = [...paths].sort();
    kp.readHash = h(sorted.map((p) => `${p}:${files.get(p) ?? '-'}`).join('\n'));
    kp.ownReadHash = h([...own.files, ...own.configs, `${root}/package.json`].sort().map((p) => `${p}:${files.get(p) ?? '-'}`).join('\n'));
  }

  const rec = {
    sha,
    subject: subjects.get(sha),
    nx: Object.fromEntries([...nx].map(([root, v]) => [root, { name: v.name, build: v.hasBuild, hash: v.hash, parts: v.parts }])),
    kiln: kilnProjects,
    kilnWorkspaceDiagnostics: (kiln?.diagnostics ?? []).map((d) => `${d.code}: ${d.message}`),
    kilnStats: kiln?.stats ?? null,
    crash,
    ms: { total: Math.round(performance.now() - tc), nx: Math.round(nxMs), kiln: Math.round(kilnMs) },
  };
  writeFileSync(file, JSON.stringify(rec));
  records.set(sha, rec);
  prevFiles = files;
  measured++;
  measuredMs += rec.ms.total;
  const left = todo.length - measured;
  log(
    `[${i + 1}/${shas.length}] ${sha.slice(0, 9)} ${rec.ms.total} ms (nx ${rec.ms.nx}, kiln ${rec.ms.kiln}, parsed ${kiln?.stats.parsed ?? '-'})` +
      `${crash ? ` KILN CRASH: ${crash.message}` : ''} — eta ${Math.round((left * measuredMs) / measured / 1000)} s`,
  );
}
const keysMs = performance.now() - t0;

// ---------------------------------------------------------------- phase 2: reruns side by side

const AVOIDED = {
  'own-format': 'own sources edited, no semantic change (comments/format/reorder)',
  'own-nonbuild': 'own files outside the build (not in its tsconfig: configs, scripts, fixtures)',
  'dep-surface': 'dependency changed, its surface (external closure) did not',
  manifest: 'package.json fields that cannot reach the output (version, scripts, ranges)',
  lockfile: 'lockfile: versions of externals the build does not read',
  'root-config': 'root tsconfig change that does not reach this build',
};
const perPkg = new Map();
const notDiscovered = new Map();
const pairs = []; // kiln hits
const allPairs = [];
const avoidedTotal = Object.fromEntries(Object.keys(AVOIDED).map((k) => [k, 0]));
const kilnOnlyCauses = {};
const diagnosticsSeen = new Map();
const crashes = [];
for (let i = 1; i < shas.length; i++) {
  const a = records.get(shas[i - 1]);
  const b = records.get(shas[i]);
  if (b.crash) crashes.push({ sha: b.sha, ...b.crash });
  for (const [root, kp] of Object.entries(b.kiln)) {
    for (const [code, d] of Object.entries(kp.diagnostics)) {
      const k = `${code}|${root}`;
      if (!diagnosticsSeen.has(k)) diagnosticsSeen.set(k, { code, root, severity: d.severity, first: d.first, commits: 0, sha: b.sha });
      diagnosticsSeen.get(k).commits++;
    }
  }
  for (const [root, nb] of Object.entries(b.nx)) {
    const na = a.nx[root];
    if (!na || !na.build || !nb.build) continue; // a package must exist with a build at both commits
    const ka = a.kiln[root];
    const kb = b.kiln[root];
    if (!ka && !kb) {
      const e = notDiscovered.get(root) ?? { name: nb.name, commits: 0, nx: 0 };
      e.commits++;
      if (na.hash !== nb.hash) e.nx++;
      notDiscovered.set(root, e);
      continue;
    }
    if (!ka?.key && !kb?.key) continue; // kiln infers no build for it (reported with its diagnostics)
    const row = perPkg.get(root) ?? { name: nb.name, root, commits: 0, nx: 0, kiln: 0, kilnOnly: 0, avoided: {}, surface: kb?.surface };
    perPkg.set(root, row);
    row.commits++;
    row.surface = kb?.surface ?? row.surface;
    const nxRerun = na.hash !== nb.hash;
    const kilnRerun = !ka?.key || !kb?.key || ka.key !== kb.key;
    if (nxRerun) row.nx++;
    if (kilnRerun) row.kiln++;
    if (kilnRerun && !nxRerun) {
      row.kilnOnly++;
      const moved = ka?.parts && kb?.parts ? Object.keys(kb.parts).filter((k) => ka.parts[k] !== kb.parts[k]) : ['no key'];
      const cause = moved.join('+') || 'key';
      kilnOnlyCauses[cause] = (kilnOnlyCauses[cause] ?? 0) + 1;
    }
    if (nxRerun && !kilnRerun) {
      const moved = (k) => na.parts[k] !== nb.parts[k];
      let rule;
      if (moved('ownSrc')) rule = ka.ownReadHash !== kb.ownReadHash ? 'own-format' : 'own-nonbuild';
      else if (moved('depSrc')) rule = 'dep-surface';
      else if (moved('ownManifest') || moved('depManifest')) rule = 'manifest';
      else if (moved('ext')) rule = 'lockfile';
      else rule = 'root-config';
      row.avoided[rule] = (row.avoided[rule] ?? 0) + 1;
      avoidedTotal[rule]++;
    }
    const pair = {
      i,
      root,
      name: nb.name,
      tsconfigA: ka?.tsconfig,
      tsconfigB: kb?.tsconfig,
      inputsChanged: ka?.readHash !== kb?.readHash,
      ownChanged: ka?.ownReadHash !== kb?.ownReadHash,
      ownMoved: !!(ka?.parts && kb?.parts && ka.parts.own !== kb.parts.own),
      nxRerun,
      kilnRerun,
    };
    allPairs.push(pair);
    if (!kilnRerun) pairs.push(pair);
  }
}

const rows = [...perPkg.values()].sort((x, y) => y.nx - x.nx || (x.root < y.root ? -1 : 1));
const tot = rows.reduce((t, r) => ({ commits: t.commits + r.commits, nx: t.nx + r.nx, kiln: t.kiln + r.kiln, kilnOnly: t.kilnOnly + r.kilnOnly }), { commits: 0, nx: 0, kiln: 0, kilnOnly: 0 });
const ratio = (k, n) => (n === 0 ? (k === 0 ? '—' : '∞') : (k / n).toFixed(2));
const out = [];
const say = (s = '') => out.push(s);
const table = (head, body, align) => {
  const all = [head, ...body.filter(Boolean)];
  const w = head.map((_, c) => Math.max(...all.map((r) => String(r[c]).length)));
  const fmt = (r) => r.map((v, c) => (align[c] === 'l' ? String(v).padEnd(w[c]) : String(v).padStart(w[c]))).join('  ');
  say(fmt(head));
  say(w.map((n) => '-'.repeat(n)).join('  '));
  for (const r of body) say(r === null ? w.map((n) => '-'.repeat(n)).join('  ') : fmt(r));
};
say(`kiln real-history benchmark — ${repo} ${branch}, last ${shas.length - 1} first-parent commits (${shas[0].slice(0, 9)}..${shas.at(-1).slice(0, 9)})`);
say(`Nx: build inputs ["production", "^production"], production = {projectRoot}/**/* minus ${['**/*.spec.*', '**/*.test.*', '**/__tests__/**', 'test/**', '**/*.md'].join(', ')}; + lockfile external nodes; + root tsconfig*.json`);
say(`kiln: computeWorkspaceKeys from ${coreDist} (key schema ${core.KEY_SCHEMA}, extractor ${core.EXTRACTOR_VERSION}, digest schema ${core.DIGEST_SCHEMA})`);
say();
table(
  ['package', 'root', 'commits', 'Nx reruns', 'kiln reruns', 'kiln/Nx', 'kiln-only', 'surface'],
  [
    ...rows.map((r) => [r.name, r.root, r.commits, r.nx, r.kiln, ratio(r.kiln, r.nx), r.kilnOnly, r.surface ?? '-']),
    null,
    ['TOTAL', `${rows.length} packages`, tot.commits, tot.nx, tot.kiln, ratio(tot.kiln, tot.nx), tot.kilnOnly, ''],
  ],
  ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'l'],
);
say();
say(`target kiln/Nx <= 0.50: ${tot.nx && tot.kiln / tot.nx <= 0.5 ? 'PASS' : 'MISS'} (${ratio(tot.kiln, tot.nx)})`);
say(`"commits" = commit/parent pairs where the package exists with a build (package.json + tsconfig + TS sources) at both; kiln-only = kiln reran, Nx did not; surface = how dependents see it (surface | full).`);
say();
const avoidedSum = Object.values(avoidedTotal).reduce((a, b) => a + b, 0);
say(`Nx reruns kiln avoided: ${avoidedSum} (${tot.nx ? ((100 * avoidedSum) / tot.nx).toFixed(1) : 0}% of Nx reruns), by what changed (first matching rule, in this order):`);
table(
  ['rule', 'avoided', 'what changed'],
  Object.entries(AVOIDED).map(([k, d]) => [k, avoidedTotal[k], d]),
  ['l', 'r', 'l'],
);
if (Object.keys(kilnOnlyCauses).length) {
  say();
  say(`kiln-only reruns by key component that moved: ${Object.entries(kilnOnlyCauses).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')}`);
}
if (notDiscovered.size) {
  say();
  say(`Workspace packages with a build that kiln's discovery does not list (excluded from the totals):`);
  for (const [root, e] of notDiscovered) say(`  ${root} (${e.name}): ${e.commits} commits, Nx reruns ${e.nx}`);
}

// ---------------------------------------------------------------- phase 3: false-hit oracle

const population = pairs.filter((p) => p.inputsChanged);
let oracle = null;
if (!args['no-oracle']) {
  const tOracle = performance.now();
  const chosen = args['oracle-all'] ? population : stableSample(population, SAMPLE, SEED);
  // Calibration: the same builds and comparison on kiln reruns where the package's *own* declarations
  // or modules moved (a semantic change in its sources) — nearly all must show a difference in the
  // emitted JS/.d.ts, or the oracle could not see one.
  const reruns = allPairs.filter((p) => p.kilnRerun && p.ownMoved && p.tsconfigA && p.tsconfigB);
  const calib = CALIBRATE ? stableSample(reruns, CALIBRATE, SEED + 1) : [];
  say();
  say(`False-hit oracle (SPEC §10): kiln hits ${pairs.length}, of which a file the build reads changed (population) ${population.length}; checked ${chosen.length} (${args['oracle-all'] || chosen.length === population.length ? 'all' : `seeded sample, seed ${SEED}`}); TypeScript ${ORACLE_TS_VERSION}`);
  const results = await checkPairs([...chosen, ...calib]);
  const checked = chosen.map((p) => ({ ...p, r: results.get(p) }));
  const falseHits = checked.filter((c) => !c.r.equal);
  const failed = checked.filter((c) => c.r.fatal || c.r.compared === 0);
  const byPkg = new Map();
  for (const c of checked) byPkg.set(c.root, (byPkg.get(c.root) ?? 0) + 1);
  say(`oracle: compared ${checked.length} hit(s) over ${byPkg.size} packages, ${checked.reduce((n, c) => n + c.r.compared, 0)} output files (JS + .d.ts); builds that failed or emitted nothing: ${failed.length}`);
  say(`FALSE HITS: ${falseHits.length}${falseHits.length ? ' (target 0: MISS)' : ' (target 0: PASS)'}`);
  for (const f of falseHits) {
    say(`  FALSE HIT ${f.name} (${f.root}) at ${shas[f.i].slice(0, 9)} "${subjects.get(shas[f.i])}" (parent ${shas[f.i - 1].slice(0, 9)}):`);
    for (const d of f.r.differences) say(`    ${d}`);
    const files = git('diff', '--name-only', shas[f.i - 1], shas[f.i]).trim().split('\n');
    say(`    files changed by the commit: ${files.slice(0, 12).join(', ')}${files.length > 12 ? ` (+${files.length - 12})` : ''}`);
  }
  const calibDiffer = calib.filter((p) => !results.get(p).equal).length;
  if (calib.length) say(`oracle calibration: of ${calib.length} sampled kiln reruns where the package's own declarations/modules moved (of ${reruns.length}), ${calibDiffer} gave different outputs (the oracle sees real changes)`);
  oracle = {
    kilnHits: pairs.length,
    population: population.length,
    checked: checked.length,
    falseHits: falseHits.map((f) => ({ sha: shas[f.i], root: f.root, differences: f.r.differences })),
    failed: failed.length,
    calibration: { sampled: calib.length, of: reruns.length, differ: calibDiffer },
    ms: Math.round(performance.now() - tOracle),
  };
}

/**
 * A seeded random sample that is stable under small changes of the population: each pair gets a
 * pseudo-random rank from (seed, package, commit) and the lowest ranks are taken, so a rerun with a
 * slightly different kiln checks mostly the same pairs and reuses their cached builds.
 */
function stableSample(list, k, seed) {
  const rank = (p) => createHash('sha256').update(`${seed}:${p.root}@${shas[p.i]}`).digest('hex');
  return list.map((p) => [rank(p), p]).sort((a, b) => (a[0] < b[0] ? -1 : 1)).slice(0, k).map(([, p]) => p).sort((a, b) => a.i - b.i || (a.root < b.root ? -1 : 1));
}

/** Build each pair's package at both commits (cached under --cache) and compare the outputs. */
async function checkPairs(list) {
  // Builds depend only on the corpus and TypeScript (shared by every run); comparisons use kiln's
  // compareOutputs, so they are cached per kiln build.
  const resultsFile = join(cache, 'oracle', `results-${ORACLE_TS_VERSION}-${FP}.json`);
  mkdirSync(dirname(resultsFile), { recursive: true });
  const stored = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
  const idOf = (p) => `${p.root}@${shas[p.i - 1]}:${p.tsconfigA}..${shas[p.i]}:${p.tsconfigB}`;
  const buildDir = (root, sha, tsconfig) => join(cache, 'oracle', 'builds', root.replace(/[/@]/g, '_'), `${sha}-${tsconfig.replace(/[^\w.-]/g, '_')}`);
  const need = list.filter((p) => !stored[idOf(p)]);
  // Builds needed, grouped by commit so each checkout serves every package built at it.
  const builds = new Map();
  for (const p of need) {
    for (const [sha, tsconfig] of [[shas[p.i - 1], p.tsconfigA], [shas[p.i], p.tsconfigB]]) {
      const outDir = buildDir(p.root, sha, tsconfig);
      if (existsSync(join(outDir, '.done.json'))) continue;
      const l = builds.get(sha) ?? [];
      if (!l.some((x) => x.outDir === outDir)) l.push({ root: p.root, tsconfig, outDir });
      builds.set(sha, l);
    }
  }
  const jobs = [...builds].sort((a, b) => shas.indexOf(a[0]) - shas.indexOf(b[0]));
  const nBuilds = jobs.reduce((n, [, l]) => n + l.length, 0);
  log(`oracle: ${need.length} pairs to compare (${list.length - need.length} cached), ${nBuilds} builds at ${jobs.length} commits, ${JOBS} thread(s)`);
  let done = 0;
  const tb = performance.now();
  const chunks = Array.from({ length: JOBS }, () => []);
  jobs.forEach((j, k) => chunks[k % JOBS].push(j));
  await Promise.all(
    chunks.map(
      (chunk, k) =>
        new Promise((res, rej) => {
          if (!chunk.length) return res();
          const w = new Worker(fileURLToPath(import.meta.url), { workerData: { repo, jobs: chunk, tree: join(cache, `otree${k}`), index: join(cache, `otree${k}.index`) } });
          w.on('message', (m) => {
            done++;
            const el = (performance.now() - tb) / 1000;
            log(`oracle build ${done}/${nBuilds} ${m.root}@${m.sha.slice(0, 9)}: ${m.files} files, ${m.ms} ms${m.fatal ? ` FAILED ${m.fatal}` : ''} — eta ${Math.round(((nBuilds - done) * el) / done)} s`);
          });
          w.on('error', rej);
          w.on('exit', (c) => (c === 0 ? res() : rej(new Error(`oracle worker exited with ${c}`))));
        }),
    ),
  );
  for (const p of need) {
    const a = buildDir(p.root, shas[p.i - 1], p.tsconfigA);
    const b = buildDir(p.root, shas[p.i], p.tsconfigB);
    const metaA = JSON.parse(readFileSync(join(a, '.done.json'), 'utf8'));
    const metaB = JSON.parse(readFileSync(join(b, '.done.json'), 'utf8'));
    const cmp = await core.compareOutputs(a, b, { exclude: (f) => f === '.done.json' });
    stored[idOf(p)] = {
      equal: cmp.equal,
      compared: cmp.compared,
      files: [metaA.files, metaB.files],
      fatal: metaA.fatal ?? metaB.fatal,
      differences: cmp.differences.slice(0, 5).map((d) => core.formatDifference(d)),
    };
  }
  writeFileSync(resultsFile, JSON.stringify(stored));
  return new Map(list.map((p) => [p, stored[idOf(p)]]));
}

// ---------------------------------------------------------------- kiln diagnostics and crashes

say();
say(`kiln crashes: ${crashes.length}`);
for (const c of crashes) say(`  ${c.sha.slice(0, 9)}: ${c.message}\n${c.stack.replace(/^/gm, '    ')}`);
const diagList = [...diagnosticsSeen.values()].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : a.root < b.root ? -1 : 1));
say(`kiln diagnostics seen (code, project, commits with it, first message):`);
for (const d of diagList) say(`  ${d.code} [${d.severity}] ${d.root}: ${d.commits} commits — ${d.first}`);
const wsDiag = new Set([...records.values()].flatMap((r) => r.kilnWorkspaceDiagnostics));
for (const d of wsDiag) say(`  workspace: ${d}`);
const fullSurfaces = new Map();
for (const r of records.values()) for (const [root, k] of Object.entries(r.kiln)) if (k.surface === 'full' && k.surfaceReason) fullSurfaces.set(root, k.surfaceReason);
if (fullSurfaces.size) {
  say(`packages whose surface falls back to "full" (dependents see every declaration), with the reason at the last commit seen:`);
  for (const [root, reason] of fullSurfaces) say(`  ${root}: ${reason}`);
}
const allRecs = [...records.values()].filter((r) => r.ms);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
say();
say(
  `runtime: this run ${((performance.now() - t0) / 1000).toFixed(0)} s (${measured} commit(s) newly measured${oracle ? `, oracle ${(oracle.ms / 1000).toFixed(0)} s` : ''}); ` +
    `per-commit measurement over all ${allRecs.length} commits (this and earlier runs): ${(sum(allRecs.map((r) => r.ms.total)) / 1000).toFixed(0)} s — ` +
    `checkout + Nx emulation + kiln keys, median ${med(allRecs.map((r) => r.ms.total))} ms/commit (kiln keys median ${med(allRecs.map((r) => r.ms.kiln))} ms, max ${Math.max(...allRecs.map((r) => r.ms.kiln))} ms; Nx emulation median ${med(allRecs.map((r) => r.ms.nx))} ms)`,
);
say(`command: node tools/bench-history.mjs --repo ${repo} --commits ${N}${args['kiln-dist'] ? ` --kiln-dist ${args['kiln-dist']}` : ''}${args.cache !== '/tmp/kiln-bench-history' ? ` --cache ${args.cache}` : ''}${WORKERS !== 1 ? ` --workers ${WORKERS}` : ''}${args['oracle-all'] ? ' --oracle-all' : args['no-oracle'] ? ' --no-oracle' : ` --sample ${SAMPLE} --seed ${SEED}`}`);
process.stdout.write(`${out.join('\n')}\n`);
if (args.json) writeFileSync(args.json, JSON.stringify({ rows, totals: tot, avoided: avoidedTotal, kilnOnlyCauses, oracle, crashes, diagnostics: diagList }, null, 2));

// ---------------------------------------------------------------- oracle worker (a thread)

async function oracleWorker({ repo: gitDir, jobs, tree: dir, index: idx }) {
  const { oracleBuild: build, workspacePaths: wsPaths } = await import('./lib/oracle-build.mjs');
  const { projectRoots, pnpmPatterns } = await import('./lib/nx-emulation.mjs');
  for (const [sha, list] of jobs) {
    if (!existsSync(idx)) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['--git-dir', gitDir, '--work-tree', dir, 'read-tree', '-u', '--reset', sha], { env: { ...process.env, GIT_INDEX_FILE: idx }, stdio: ['ignore', 'ignore', 'pipe'] });
    // Workspace packages at this commit (the workspace globs), for the `paths` mapping to sources.
    const tracked = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '--name-only', '--full-tree', sha], { maxBuffer: 1 << 28, encoding: 'utf8' }).split('\n');
    const files = new Map(tracked.filter(Boolean).map((p) => [p, '']));
    const pnpm = existsSync(join(dir, 'pnpm-workspace.yaml')) ? readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8') : undefined;
    let patterns = pnpm !== undefined ? pnpmPatterns(pnpm) : [];
    if (pnpm === undefined) {
      const ws = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).workspaces;
      patterns = Array.isArray(ws) ? ws : (ws?.packages ?? []);
    }
    const packages = projectRoots(files, patterns).map((root) => {
      let manifest = null;
      try {
        manifest = JSON.parse(readFileSync(join(dir, root, 'package.json'), 'utf8'));
      } catch {
        manifest = null;
      }
      return { root, name: manifest?.name, manifest };
    });
    const paths = wsPaths(dir, packages);
    for (const b of list) {
      let r;
      try {
        r = build({ workspaceRoot: dir, root: b.root, tsconfig: b.tsconfig, paths, outDir: b.outDir });
      } catch (e) {
        rmSync(b.outDir, { recursive: true, force: true });
        mkdirSync(b.outDir, { recursive: true });
        r = { files: 0, syntaxErrors: 0, ms: 0, fatal: String(e?.stack ?? e).slice(0, 500) };
      }
      writeFileSync(join(b.outDir, '.done.json'), JSON.stringify(r));
      parentPort.postMessage({ sha, root: b.root, ...r });
    }
  }
}
