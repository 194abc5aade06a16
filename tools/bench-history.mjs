#!/usr/bin/env node
/**
 * Real-history benchmark (SPEC §10, issue 3 point 7, issue 10 points 4 and 5): over the last N
 * first-parent commits of a real monorepo (trpc by default), how often each workspace package's
 * `build` key changes under Nx (`production` inputs, emulated from `git ls-tree` blob ids —
 * tools/lib/nx-emulation.mjs says exactly what is included) and under kiln (`computeWorkspaceKeys`),
 * side by side; which rule avoided each rerun kiln saved; and the false-hit oracle.
 *
 * The oracle is stratified by cause: kiln hits are grouped by the rule that avoided the Nx rerun
 * (own-format, own-nonbuild, dep-surface, manifest, lockfile, root-config) plus the hits where Nx hit
 * too although a file the build reads changed (nx-also-hit), and a seeded sample of --sample hits per
 * stratum (all where fewer) is checked: the package is built at both commits with the TypeScript
 * compiler (JS + .d.ts, workspace packages mapped to their sources — tools/lib/oracle-build.mjs), and
 * the outputs are judged by two judges that share no code — kiln's `compareOutputs` (SPEC §4, built on
 * kiln's extractor) and `judgeOutputs` of tools/lib/token-judge.mjs (the TypeScript scanner's tokens).
 * A false hit is a pair both judges find different; a pair they disagree on is printed and fails the
 * run; a build that failed or emitted nothing is counted apart, never as equal. Pairs whose lockfile
 * changed (--install lockfile, the default) or every pair (--install all) are built in a per-commit
 * checkout with the whole workspace's dependencies really installed by the repository's package
 * manager (tools/lib/install.mjs: pnpm/npm/yarn at the version the commit names, frozen lockfile, no
 * scripts), with the TypeScript the commit installed, so external types are real; the checkout is
 * removed once its builds are cached (--keep-installs keeps it), the package store is kept.
 *
 * Calibration is enforced: the same builds and judges run on a seeded sample of kiln *reruns* whose own
 * sources changed meaningfully (a file the package's tsconfig compiles changed and kiln's digests of
 * its declarations or modules moved; a type-only edit inside a body is such a change and emits the
 * same output, hence 90% and not 100%); each judge must see an output difference in at least 90% of
 * them, or it is declared blind. The run exits non-zero on a false hit, a judge disagreement or a blind judge
 * (--blind-judge forces a judge blind, to show that the gate can fail).
 *
 * Corpus: a git directory (bare is fine) of the repository, e.g. the one the `fetch` tool returns
 * for github:trpc/trpc (/work/.mirror/trpc+trpc/repo), or `git clone --bare https://github.com/trpc/trpc`.
 * Nothing of the corpus is written into this repository: checkouts, installs, the kiln store,
 * per-commit records, oracle builds and verdicts live under --cache (default /tmp/kiln-bench-history),
 * and every phase is resumable — rerunning the same command reuses what is there (records are keyed by
 * a fingerprint of kiln's dist and the Nx emulation, verdicts also by the token judge's source).
 *
 * Usage: node tools/bench-history.mjs --repo DIR [--commits N] [--branch REF] [--cache DIR]
 *          [--workers N] [--sample N | --oracle-all | --no-oracle] [--seed N] [--jobs N] [--calibrate N]
 *          [--install lockfile|all|none] [--keep-installs] [--blind-judge kiln|token|both] [--json FILE]
 *          [--kiln-dist DIR]
 * Requires a build of this repository (`npm run build`). Exit status: 0, or 1 when the oracle found a
 * false hit, a judge disagreement or a blind judge, or 2 for bad usage.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { lsTree as lsTreeOf, nxHashes } from './lib/nx-emulation.mjs';
import { configInputs, ORACLE_TS_VERSION } from './lib/oracle-build.mjs';
import { diskUsage } from './lib/install.mjs';
import { blinded, calibrate, CALIBRATION_MIN, verdictOf } from './lib/oracle-verdict.mjs';
import { cliArgs } from './lib/cli-args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
let coreDist = join(repoRoot, 'packages/core/dist');
const RECORD_VERSION = 4;
/** Version of the oracle's build setup (builds and verdicts of another version are not reused). */
const ORACLE_BUILD_VERSION = 2;

if (!isMainThread) {
  await oracleWorker(workerData);
  process.exit(0);
}

const HELP = `usage: node tools/bench-history.mjs --repo GIT_DIR [options]

  --repo DIR       git directory of the corpus (bare or not); default $KILN_BENCH_REPO, else
                   /work/.mirror/trpc+trpc/repo when it exists
  --branch REF     branch to walk (default: the repository's HEAD)
  --commits N      commits to measure, newest first, each against its first parent (default 300)
  --cache DIR      checkouts, installs, kiln store, records, oracle builds and verdicts
                   (default /tmp/kiln-bench-history)
  --workers N      kiln digest workers (default 1; at least 1)
  --sample N       oracle: check a seeded random sample of N kiln hits per cause stratum (own-format,
                   own-nonbuild, dep-surface, manifest, lockfile, root-config, nx-also-hit); all
                   where fewer (default 30)
  --oracle-all     oracle: check every kiln hit of every stratum
  --no-oracle      skip the oracle (keys and reruns only)
  --seed N         sample seed (default 1)
  --jobs N         oracle build threads (default 1)
  --calibrate N    oracle calibration: also judge N sampled kiln reruns whose own sources changed
                   meaningfully; each judge must find a difference in >= 90% of those that built,
                   or it is declared blind and the run fails (default 30; at least 1)
  --install MODE   which pairs are built with the dependencies really installed at both commits
                   (a checkout per commit under --cache, the whole workspace installed by the
                   commit's package manager and version, frozen lockfile, no scripts; the commit's
                   TypeScript):
                   lockfile (default: pairs whose lockfile changed), all, none
  --build-budget S  oracle: start no new commit checkout (and its builds) after S seconds of oracle
                   builds; sampled pairs whose two builds are not in the cache by then are reported
                   as "not built" (never equal) and the run is INCOMPLETE. 0 judges only what earlier
                   runs built (default: no limit)
  --keep-installs  keep each installed checkout after its builds (default: removed, ~0.2 GB each;
                   the package store under --cache is kept, so installing again is warm)
  --blind-judge J  self-test of the calibration gate: judge J (kiln, token or both) calls every pair
                   equal; the run must then fail
  --json FILE      also write the results as JSON
  --kiln-dist DIR  the @kiln/core build to measure (default: this repository's packages/core/dist),
                   e.g. a clean build of one commit while the working tree is being edited

The oracle needs tools/lib/token-judge.mjs (judgeOutputs). Exit status: 1 when the oracle found a false
hit, a judge disagreement or a blind judge; 2 for bad usage.
`;

const { args, int } = cliArgs(
  {
    repo: { type: 'string' },
    branch: { type: 'string' },
    commits: { type: 'string', default: '300' },
    cache: { type: 'string', default: '/tmp/kiln-bench-history' },
    workers: { type: 'string', default: '1' },
    sample: { type: 'string', default: '30' },
    'oracle-all': { type: 'boolean', default: false },
    'no-oracle': { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    jobs: { type: 'string', default: '1' },
    calibrate: { type: 'string', default: '30' },
    install: { type: 'string', default: 'lockfile' },
    'blind-judge': { type: 'string' },
    'keep-installs': { type: 'boolean', default: false },
    'build-budget': { type: 'string' },
    json: { type: 'string' },
    'kiln-dist': { type: 'string' },
  },
  HELP,
);
const N = int('commits', 1);
const WORKERS = int('workers', 1);
const SAMPLE = int('sample', 1);
const SEED = int('seed', 0);
const JOBS = int('jobs', 1);
const CALIBRATE = int('calibrate', 1);
const BUILD_BUDGET = args['build-budget'] === undefined ? undefined : int('build-budget', 0);
const INSTALL = args.install;
if (!['lockfile', 'all', 'none'].includes(INSTALL)) {
  process.stderr.write(`--install must be lockfile, all or none\n`);
  process.exit(2);
}
const BLIND = new Set(args['blind-judge'] === undefined ? [] : args['blind-judge'] === 'both' ? ['kiln', 'token'] : [args['blind-judge']]);
if ([...BLIND].some((j) => j !== 'kiln' && j !== 'token')) {
  process.stderr.write(`--blind-judge must be kiln, token or both\n`);
  process.exit(2);
}
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
// The kiln judge (compile/equivalence.js: not on @kiln/core's public entry).
const equivalence = await import(pathToFileURL(join(coreDist, 'compile/equivalence.js')).href);
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

const lsTree = (sha) => lsTreeOf(repo, sha);

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
            // The package's own code alone (declarations and module layout/evaluation order), without the
            // file list (which also carries non-source files the build reaches, e.g. a package.json).
            ownCode: h(JSON.stringify([c.declarations, c.modules])),
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
    kp.ownSrcHash = h([...own.files].sort().map((p) => `${p}:${files.get(p) ?? '-'}`).join('\n'));
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
const lockMemo = new Map();
/** The root lockfiles' blob ids at a commit (pnpm, yarn, npm), for "did the lockfile change". */
function lockBlobs(sha) {
  let v = lockMemo.get(sha);
  if (v === undefined) {
    v = git('ls-tree', sha, '--', 'pnpm-lock.yaml', 'yarn.lock', 'package-lock.json', 'npm-shrinkwrap.json').trim();
    lockMemo.set(sha, v);
  }
  return v;
}
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
    let rule;
    if (nxRerun && !kilnRerun) {
      const moved = (k) => na.parts[k] !== nb.parts[k];
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
      // Own sources changed meaningfully: a file the package's tsconfig compiles changed, and kiln's
      // digests of the package's declarations or modules moved (calibration population).
      ownCodeMoved: !!(ka?.parts && kb?.parts && ka.parts.ownCode !== kb.parts.ownCode && ka.ownSrcHash !== kb.ownSrcHash),
      nxRerun,
      kilnRerun,
      rule,
      // The package's externals as Nx resolves them through the lockfile moved; the lockfile changed.
      extMoved: na.parts.ext !== nb.parts.ext,
      lockMoved: lockBlobs(shas[i - 1]) !== lockBlobs(shas[i]),
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

// Kiln hits by cause: the rule that attributed the avoided Nx rerun (phase 2), plus the hits where Nx
// hit as well although a file the build reads changed (outside Nx's `production` inputs: a tsconfig
// chain or an included file outside the project). Hits where nothing the build reads, and no input of
// Nx, changed are left out: both keys are trivially right there.
const STRATA = {
  'own-format': 'own sources edited, no semantic change (comments/format/reorder)',
  'own-nonbuild': 'own files outside the build changed (not in its tsconfig)',
  'dep-surface': 'a dependency changed, its surface did not',
  manifest: 'package.json fields that cannot reach the output',
  lockfile: 'lockfile: versions of externals the build does not read',
  'root-config': 'root tsconfig change that does not reach this build',
  'nx-also-hit': 'Nx hit too, yet a file the build reads changed',
};
const strataPop = new Map(Object.keys(STRATA).map((k) => [k, []]));
for (const p of pairs) {
  const s = p.rule ?? (p.inputsChanged ? 'nx-also-hit' : undefined);
  if (!s) continue;
  p.stratum = s;
  strataPop.get(s).push(p);
}
/** Is this pair judged with the dependencies really installed at both commits (--install)? */
const installedMode = (p) => INSTALL === 'all' || (INSTALL === 'lockfile' && p.lockMoved);

let oracle = null;
const runFailures = [];
let installsThisRun = 0;
if (!args['no-oracle']) {
  const tOracle = performance.now();
  const judgeOutputs = await loadTokenJudge();
  const chosenBy = new Map([...strataPop].map(([s, list]) => [s, args['oracle-all'] ? list : stableSample(list, SAMPLE, SEED)]));
  const chosen = [...chosenBy.values()].flat();
  // Calibration: the same builds and both judges on kiln reruns where the package's own sources changed
  // meaningfully (its declarations or modules moved in kiln's digest and a file its tsconfig compiles
  // changed): at least CALIBRATION_MIN of them must show an output difference to each judge, or that
  // judge is blind and the run fails.
  const reruns = allPairs.filter((p) => p.kilnRerun && p.ownCodeMoved && p.tsconfigA && p.tsconfigB);
  const calib = stableSample(reruns, CALIBRATE, SEED + 1);
  say();
  say(
    `False-hit oracle (SPEC §10, issue 10): kiln hits ${pairs.length}, of which in a cause stratum ${[...strataPop.values()].reduce((n, l) => n + l.length, 0)}; ` +
      `${args['oracle-all'] ? 'every hit checked' : `a seeded sample of ${SAMPLE} per stratum (all where fewer), seed ${SEED}`}; ` +
      `builds: TypeScript emit (tools/lib/oracle-build.mjs), ${INSTALL === 'none' ? 'no install (external types missing)' : INSTALL === 'all' ? 'dependencies installed at both commits for every pair' : 'dependencies installed at both commits where the lockfile changed, else bare checkouts'}; ` +
      `bare builds use TypeScript ${ORACLE_TS_VERSION}, installed builds the TypeScript the commit installed; judges: kiln compareOutputs and tools/lib/token-judge.mjs judgeOutputs${BLIND.size ? ` — JUDGE FORCED BLIND: ${[...BLIND].join(', ')} (self-test of the calibration gate)` : ''}`,
  );
  const results = await checkPairs([...chosen, ...calib]);
  const verdict = verdictOf;
  const strataRows = [];
  const falseHits = [];
  const disagreements = [];
  const failedList = [];
  const unbuiltList = [];
  let comparedFiles = 0;
  for (const [s, list] of chosenBy) {
    const row = { stratum: s, population: strataPop.get(s).length, sampled: list.length, installed: 0, equal: 0, falseHits: 0, disagreements: 0, failed: 0, unbuilt: 0 };
    for (const p of list) {
      const r = results.get(p);
      if (r.mode === 'installed') row.installed++;
      if (verdict(r) === 'unbuilt') {
        row.unbuilt++;
        unbuiltList.push(p);
        continue;
      }
      comparedFiles += Math.max(r.kiln.compared, r.token.compared);
      const v = verdict(r);
      if (v === 'equal') row.equal++;
      else if (v === 'failed') (row.failed++, failedList.push({ p, r }));
      else if (v === 'differ') (row.falseHits++, falseHits.push({ p, r }));
      else (row.disagreements++, disagreements.push({ p, r }));
    }
    strataRows.push(row);
  }
  const sumRow = (k) => strataRows.reduce((n, r) => n + r[k], 0);
  table(
    ['cause stratum', 'population', 'sampled', 'installed', 'judged equal', 'false hits', 'judges disagree', 'failed/empty', ...(unbuiltList.length ? ['not built'] : []), 'what changed'],
    [
      ...strataRows.map((r) => [r.stratum, r.population, r.sampled, r.installed, r.equal, r.falseHits, r.disagreements, r.failed, ...(unbuiltList.length ? [r.unbuilt] : []), STRATA[r.stratum]]),
      null,
      ['TOTAL', sumRow('population'), sumRow('sampled'), sumRow('installed'), sumRow('equal'), sumRow('falseHits'), sumRow('disagreements'), sumRow('failed'), ...(unbuiltList.length ? [sumRow('unbuilt')] : []), ''],
    ],
    ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', ...(unbuiltList.length ? ['r'] : []), 'l'],
  );
  say(`population = kiln hits of that cause; installed = judged with the dependencies installed at both commits; judged equal = both judges found the outputs equivalent; false hit = both found a difference; failed/empty = a build failed or emitted nothing (never counted as equal). ${comparedFiles} output files compared.`);
  if (unbuiltList.length) say(`not built = sampled pairs whose builds were not made within --build-budget ${BUILD_BUDGET} s (not judged, never counted as equal): the run is INCOMPLETE.`);
  say(`FALSE HITS: ${falseHits.length}${falseHits.length ? ' (target 0 in every stratum: MISS)' : unbuiltList.length ? ` among the judged (${unbuiltList.length} sampled pairs not built: INCOMPLETE)` : ' (target 0 in every stratum: PASS)'}`);
  const filesOf = (p) => git('diff', '--name-only', shas[p.i - 1], shas[p.i]).trim().split('\n');
  const describe = (p, r) => {
    say(`  ${p.name} (${p.root}) [${p.stratum ?? 'calibration'}, ${r.mode}${r.ts ? `, TypeScript ${[...new Set(r.ts)].join('/')}` : ''}] at ${shas[p.i].slice(0, 9)} "${subjects.get(shas[p.i])}" (parent ${shas[p.i - 1].slice(0, 9)}):`);
    for (const [j, label] of [['kiln', 'kiln compareOutputs'], ['token', 'token judge']]) {
      say(`    ${label}: ${r[j].equal ? 'equal' : 'DIFFERENT'} (${r[j].compared} files)`);
      for (const d of r[j].differences.slice(0, 6)) say(`      ${d}`);
    }
    const files = filesOf(p);
    say(`    files changed by the commit: ${files.slice(0, 12).join(', ')}${files.length > 12 ? ` (+${files.length - 12})` : ''}`);
  };
  for (const { p, r } of falseHits) (say('FALSE HIT'), describe(p, r));
  say(`JUDGE DISAGREEMENTS: ${disagreements.length}`);
  for (const { p, r } of disagreements) (say('DISAGREEMENT'), describe(p, r));
  if (failedList.length) {
    say(`failed or empty builds (${failedList.length}):`);
    for (const { p, r } of failedList.slice(0, 30)) say(`  ${p.root} at ${shas[p.i].slice(0, 9)} [${p.stratum}, ${r.mode}]: files ${r.files?.join('/') ?? '-'}${r.fatal ? ` — ${errorLine(r.fatal)}` : ''}`);
    if (failedList.length > 30) say(`  (+${failedList.length - 30} more)`);
  }

  // Calibration, per judge.
  const calibration = { population: reruns.length, ...calibrate(calib.map((p) => results.get(p))) };
  const calibValid = calib.filter((p) => verdict(results.get(p)) !== 'failed' && verdict(results.get(p)) !== 'unbuilt');
  say();
  say(
    `calibration: ${calib.length} sampled kiln reruns whose own sources changed meaningfully (a file its tsconfig compiles changed and kiln's declaration/module digests moved; population ${reruns.length}), ` +
      `${calibration.failed} failed/empty builds${calibration.unbuilt ? ` and ${calibration.unbuilt} not built (--build-budget)` : ''} set apart; each judge must see a difference in at least ${Math.round(CALIBRATION_MIN * 100)}% of the rest:`,
  );
  for (const [j, label] of [['kiln', 'kiln compareOutputs'], ['token', 'token judge']]) {
    const { differ, valid, rate, pass } = calibration.judges[j];
    say(`  ${label}: ${differ}/${valid} differ (${(100 * rate).toFixed(1)}%) — ${pass ? 'PASS' : 'BLIND: the run fails'}`);
    if (!pass) runFailures.push(`${label} declared blind by calibration (${differ}/${valid})`);
  }
  const unseen = calibValid.filter((p) => results.get(p).kiln.equal && results.get(p).token.equal);
  for (const p of unseen.slice(0, 10)) say(`  no output difference: ${p.root} at ${shas[p.i].slice(0, 9)} "${subjects.get(shas[p.i])}"`);
  if (calibValid.length && calibValid.length < 10) say(`  (fewer than 10 valid calibration pairs: a weak calibration)`);

  if (falseHits.length) runFailures.push(`${falseHits.length} false hit(s)`);
  if (unbuiltList.length || calibration.unbuilt) runFailures.push(`INCOMPLETE: ${unbuiltList.length} sampled and ${calibration.unbuilt} calibration pair(s) not built within --build-budget ${BUILD_BUDGET} s`);
  if (disagreements.length) runFailures.push(`${disagreements.length} judge disagreement(s)`);
  const installs = installSummary();
  if (installs.count) {
    say();
    say(
      `installs (${installs.pms.join(', ')}; nodes ${installs.nodes.join(', ')}): ${installs.count} commits installed (${installs.failed} failed), ${installs.thisRun} this run; ` +
        `install time total ${(installs.totalMs / 1000).toFixed(0)} s, median ${(installs.medianMs / 1000).toFixed(1)} s, max ${(installs.maxMs / 1000).toFixed(1)} s per commit; ` +
        `disk now (package store, tools and ${installs.kept} kept checkout(s) with node_modules, hard links once): ${(installs.disk / 2 ** 20).toFixed(0)} MiB`,
    );
    for (const f of installs.failures) say(`  install failed at ${f.sha.slice(0, 9)} (${f.command ?? f.pm ?? ''}): ${errorLine(f.error)}`);
  }
  oracle = {
    kilnHits: pairs.length,
    strata: strataRows,
    falseHits: falseHits.map(({ p, r }) => ({ sha: shas[p.i], parent: shas[p.i - 1], root: p.root, stratum: p.stratum, mode: r.mode, kiln: r.kiln.differences, token: r.token.differences })),
    disagreements: disagreements.map(({ p, r }) => ({ sha: shas[p.i], parent: shas[p.i - 1], root: p.root, stratum: p.stratum, mode: r.mode, kiln: r.kiln, token: r.token })),
    unbuilt: unbuiltList.map((p) => ({ sha: shas[p.i], root: p.root, stratum: p.stratum })),
    failed: failedList.map(({ p, r }) => ({ sha: shas[p.i], root: p.root, stratum: p.stratum, mode: r.mode, files: r.files, fatal: r.fatal })),
    calibration,
    installs,
    blind: [...BLIND],
    ms: Math.round(performance.now() - tOracle),
  };
}

/** The line of a failure's output that says what went wrong (an ERR_ code or "error"), else its end. */
function errorLine(text) {
  const lines = String(text ?? '').split('\n');
  return (lines.find((l) => /ERR_[A-Z]/.test(l)) ?? lines.find((l) => /\berror\b/i.test(l)) ?? lines.slice(-2).join(' | ')).trim().slice(0, 400);
}

/** tools/lib/token-judge.mjs (the judge that shares no code with kiln's extractor). */
async function loadTokenJudge() {
  const file = join(here, 'lib', 'token-judge.mjs');
  if (!existsSync(file)) {
    process.stderr.write(`tools/lib/token-judge.mjs is missing: the oracle runs two judges (issue 10 point 3); pass --no-oracle to measure keys only\n`);
    process.exit(2);
  }
  const mod = await import(pathToFileURL(file).href);
  if (typeof mod.judgeOutputs !== 'function') {
    process.stderr.write(`tools/lib/token-judge.mjs does not export judgeOutputs(dirA, dirB, { exclude })\n`);
    process.exit(2);
  }
  return mod.judgeOutputs;
}

/** Fingerprint of the token judge (its module file), for the results cache. */
function judgeFingerprint() {
  const file = join(here, 'lib', 'token-judge.mjs');
  return existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12) : 'none';
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

/** What the install markers under --cache say: commits installed, time, failures, disk. */
function installSummary() {
  const dir = join(cache, 'installs');
  const marks = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.install.json'))
        .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')))
    : [];
  const ms = marks.flatMap((m) => m.history ?? []).map((h) => h.ms);
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    count: marks.length,
    failed: marks.filter((m) => !m.ok).length,
    thisRun: installsThisRun,
    runs: ms.length,
    totalMs: ms.reduce((a, b) => a + b, 0),
    medianMs: sorted[sorted.length >> 1] ?? 0,
    maxMs: sorted.at(-1) ?? 0,
    pms: [...new Set(marks.map((m) => m.pm).filter(Boolean))],
    nodes: [...new Set(marks.map((m) => m.node).filter(Boolean))],
    failures: marks.filter((m) => !m.ok),
    // Hard links between the store and node_modules counted once: one `du` over both folders.
    disk: marks.length ? diskUsage([dir, join(cache, 'pm-store'), join(cache, 'tools')].filter((d) => existsSync(d))) : 0,
    kept: marks.filter((m) => m.ok && !m.pruned).length,
  };
}

/**
 * Build each pair's package at both commits (cached under --cache), bare or in a checkout with the
 * dependencies installed, and run both judges on the outputs.
 */
async function checkPairs(list) {
  // Builds depend only on the corpus, the mode and the compiler (shared by every run); verdicts on
  // kiln's compareOutputs and the token judge, so they are cached per kiln build and judge.
  const resultsFile = join(cache, 'oracle', `results-b${ORACLE_BUILD_VERSION}-${ORACLE_TS_VERSION}-${FP}-${judgeFingerprint()}.json`);
  mkdirSync(dirname(resultsFile), { recursive: true });
  const stored = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
  const modeOf = (p) => (installedMode(p) ? 'installed' : 'bare');
  const idOf = (p) => `${p.root}@${shas[p.i - 1]}:${p.tsconfigA}..${shas[p.i]}:${p.tsconfigB}:${modeOf(p)}`;
  const buildDir = (root, sha, tsconfig, mode) =>
    join(cache, 'oracle', 'builds', root.replace(/[/@]/g, '_'), `${sha}-${tsconfig.replace(/[^\w.-]/g, '_')}${mode === 'installed' ? '-full-install' : ''}`);
  const need = [...new Set(list)].filter((p) => !stored[idOf(p)]);
  const notBuilt = new Map();
  // Builds needed, grouped by commit and mode so each checkout (and install) serves every package built at it.
  const builds = new Map();
  for (const p of need) {
    const mode = modeOf(p);
    for (const [sha, tsconfig] of [[shas[p.i - 1], p.tsconfigA], [shas[p.i], p.tsconfigB]]) {
      if (!tsconfig) continue;
      const outDir = buildDir(p.root, sha, tsconfig, mode);
      if (existsSync(join(outDir, '.done.json'))) continue;
      const k = `${mode}:${sha}`;
      const job = builds.get(k) ?? { sha, mode, list: [] };
      if (!job.list.some((x) => x.outDir === outDir)) job.list.push({ root: p.root, name: p.name, tsconfig, outDir });
      builds.set(k, job);
    }
  }
  // Bare checkouts first (seconds each), then installed ones (an install each): under a --build-budget
  // the cheap pairs are judged first. Commit order within each, so the two builds of a pair come close.
  const jobs = [...builds.values()].sort((a, b) => (a.mode === 'installed') - (b.mode === 'installed') || shas.indexOf(a.sha) - shas.indexOf(b.sha));
  const nBuilds = jobs.reduce((n, j) => n + j.list.length, 0);
  log(`oracle: ${need.length} pairs to compare (${new Set(list).size - need.length} cached), ${nBuilds} builds at ${jobs.length} commit checkouts (${jobs.filter((j) => j.mode === 'installed').length} installed), ${JOBS} thread(s)`);
  let done = 0;
  const tb = performance.now();
  const deadline = BUILD_BUDGET === undefined ? undefined : Date.now() + BUILD_BUDGET * 1000;
  const chunks = Array.from({ length: JOBS }, () => []);
  jobs.forEach((j, k) => chunks[k % JOBS].push(j));
  await Promise.all(
    chunks.map(
      (chunk, k) =>
        new Promise((res, rej) => {
          if (!chunk.length) return res();
          const w = new Worker(fileURLToPath(import.meta.url), {
            workerData: { repo, cache, jobs: chunk, tree: join(cache, `otree${k}`), index: join(cache, `otree${k}.index`), keepInstalls: args['keep-installs'], deadline },
          });
          w.on('message', (m) => {
            if (m.type === 'install') {
              if (!m.cached) installsThisRun++;
              log(`oracle install ${m.sha.slice(0, 9)}: ${m.cached ? 'cached' : `${m.ok ? 'ok' : 'FAILED'} in ${(m.ms / 1000).toFixed(1)} s`}${m.ok ? '' : ` — ${String(m.error).split('\n').slice(-2).join(' | ').slice(0, 300)}`}`);
              return;
            }
            done++;
            const el = (performance.now() - tb) / 1000;
            log(`oracle build ${done}/${nBuilds} ${m.root}@${m.sha.slice(0, 9)} [${m.mode}${m.ts ? `, ts ${m.ts}` : ''}]: ${m.files} files, ${m.ms} ms${m.fatal ? ` FAILED ${String(m.fatal).split('\n')[0].slice(0, 200)}` : ''} — eta ${Math.round(((nBuilds - done) * el) / done)} s`);
          });
          w.on('error', rej);
          w.on('exit', (c) => (c === 0 ? res() : rej(new Error(`oracle worker exited with ${c}`))));
        }),
    ),
  );
  const exclude = (f) => f === '.done.json';
  const judge = async (fn, a, b) => {
    try {
      const r = await fn(a, b, { exclude });
      return { equal: !!r.equal, compared: r.compared, differences: r.differences.slice(0, 8).map((d) => (typeof d === 'string' ? d : equivalence.formatDifference(d)).slice(0, 400)) };
    } catch (e) {
      return { equal: false, compared: 0, differences: [`judge threw: ${String(e?.message ?? e).slice(0, 300)}`], threw: true };
    }
  };
  const judgeOutputs = await loadTokenJudge();
  for (const p of need) {
    const mode = modeOf(p);
    if (!p.tsconfigA || !p.tsconfigB) {
      const none = { equal: false, compared: 0, differences: [] };
      stored[idOf(p)] = { mode, files: [0, 0], fatal: `no tsconfig at ${p.tsconfigA ? 'B' : 'A'}`, kiln: none, token: none };
      continue;
    }
    const a = buildDir(p.root, shas[p.i - 1], p.tsconfigA, mode);
    const b = buildDir(p.root, shas[p.i], p.tsconfigB, mode);
    // Not built within --build-budget: reported apart, never stored (a later run builds it).
    if (!existsSync(join(a, '.done.json')) || !existsSync(join(b, '.done.json'))) {
      notBuilt.set(idOf(p), { mode, notBuilt: true });
      continue;
    }
    const metaA = JSON.parse(readFileSync(join(a, '.done.json'), 'utf8'));
    const metaB = JSON.parse(readFileSync(join(b, '.done.json'), 'utf8'));
    const fatal = metaA.fatal ? `A: ${metaA.fatal}` : metaB.fatal ? `B: ${metaB.fatal}` : undefined;
    stored[idOf(p)] = {
      mode,
      files: [metaA.files, metaB.files],
      ts: [metaA.ts, metaB.ts],
      fatal,
      kiln: await judge((x, y, o) => equivalence.compareOutputs(x, y, o), a, b),
      token: await judge(judgeOutputs, a, b),
    };
  }
  writeFileSync(resultsFile, JSON.stringify(stored));
  // A judge forced blind (--blind-judge) calls everything equal: applied after the cache, never stored.
  return new Map(
    list.map((p) => [p, notBuilt.get(idOf(p)) ?? blinded(stored[idOf(p)], BLIND)]),
  );
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
say(
  `command: node tools/bench-history.mjs --repo ${repo} --commits ${N}${args['kiln-dist'] ? ` --kiln-dist ${args['kiln-dist']}` : ''}${args.cache !== '/tmp/kiln-bench-history' ? ` --cache ${args.cache}` : ''}` +
    `${WORKERS !== 1 ? ` --workers ${WORKERS}` : ''}${args['oracle-all'] ? ' --oracle-all' : args['no-oracle'] ? ' --no-oracle' : ` --sample ${SAMPLE} --seed ${SEED}`}` +
    `${args['no-oracle'] ? '' : ` --calibrate ${CALIBRATE} --install ${INSTALL}${JOBS !== 1 ? ` --jobs ${JOBS}` : ''}${BUILD_BUDGET !== undefined ? ` --build-budget ${BUILD_BUDGET}` : ''}${args['blind-judge'] ? ` --blind-judge ${args['blind-judge']}` : ''}`}`,
);
if (runFailures.length) say(`RUN FAILED: ${runFailures.join('; ')}`);
process.stdout.write(`${out.join('\n')}\n`);
if (args.json) writeFileSync(args.json, JSON.stringify({ rows, totals: tot, avoided: avoidedTotal, kilnOnlyCauses, oracle, crashes, diagnostics: diagList, failures: runFailures }, null, 2));
if (runFailures.length) process.exitCode = 1;

// ---------------------------------------------------------------- oracle worker (a thread)

async function oracleWorker({ repo: gitDir, cache: cacheDir, jobs, tree: dir0, index: idx0, keepInstalls, deadline }) {
  const { oracleBuild: build, workspacePaths: wsPaths, installedTypeScript } = await import('./lib/oracle-build.mjs');
  const { projectRoots, pnpmPatterns } = await import('./lib/nx-emulation.mjs');
  const { installDependencies } = await import('./lib/install.mjs');
  const toolsDir = join(cacheDir, 'tools');
  const readTree = (dir, idx, sha) => {
    if (!existsSync(idx)) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['--git-dir', gitDir, '--work-tree', dir, 'read-tree', '-u', '--reset', sha], { env: { ...process.env, GIT_INDEX_FILE: idx }, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  const failAll = (sha, mode, list, fatal) => {
    for (const b of list) {
      rmSync(b.outDir, { recursive: true, force: true });
      mkdirSync(b.outDir, { recursive: true });
      const r = { files: 0, syntaxErrors: 0, ms: 0, fatal };
      writeFileSync(join(b.outDir, '.done.json'), JSON.stringify({ ...r, mode }));
      parentPort.postMessage({ type: 'build', sha, root: b.root, mode, ...r });
    }
  };
  for (const job of jobs) {
    // --build-budget: past it, no new checkout is started; its pairs are reported "not built".
    if (deadline !== undefined && Date.now() >= deadline) break;
    try {
      await oracleJob(job);
    } catch (e) {
      // A checkout, install or workspace read that throws fails this commit's builds, not the run.
      failAll(job.sha, job.mode, job.list.filter((b) => !existsSync(join(b.outDir, '.done.json'))), String(e?.stack ?? e).slice(0, 1500));
    }
  }

  async function oracleJob({ sha, mode, list }) {
    let dir = dir0;
    let installFailure;
    if (mode === 'installed') {
      // A checkout per commit under --cache with the whole workspace installed — never a subset: the
      // projects installed change what gets hoisted and which copy of a type resolves, so both commits
      // of a pair must get the same kind of install (filtered installs that differed made declaration
      // emit differ between two commits whose sources did not). The marker records each attempt's time
      // and failures (not retried).
      dir = join(cacheDir, 'installs', sha);
      const markFile = join(cacheDir, 'installs', `${sha}.install.json`);
      const mark = existsSync(markFile) ? JSON.parse(readFileSync(markFile, 'utf8')) : undefined;
      if (mark && (!mark.ok || (!mark.pruned && existsSync(dir)))) {
        parentPort.postMessage({ type: 'install', sha, cached: true, ok: mark.ok, error: mark.error });
        if (!mark.ok) installFailure = mark.error;
      } else {
        readTree(dir, join(cacheDir, 'installs', `${sha}.index`), sha);
        const r = installDependencies(dir, { toolsDir, store: join(cacheDir, 'pm-store') });
        const next = { sha, ...r, history: [...(mark?.history ?? []), { ms: r.ms, ok: r.ok }] };
        writeFileSync(markFile, JSON.stringify(next));
        parentPort.postMessage({ type: 'install', sha, cached: false, ...r });
        if (!r.ok) installFailure = r.error;
      }
    } else {
      readTree(dir, idx0, sha);
    }
    if (installFailure) {
      failAll(sha, mode, list, `install failed: ${installFailure}`);
      return prune(sha, dir, mode);
    }
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
        // Installed: the TypeScript the commit installed for this package (else this repository's, said so).
        const its = mode === 'installed' ? installedTypeScript(join(dir, b.root), toolsDir) : undefined;
        r = build({ workspaceRoot: dir, root: b.root, tsconfig: b.tsconfig, paths, outDir: b.outDir, ts: its?.ts });
        if (mode === 'installed' && !its) r.tsNotInstalled = true;
      } catch (e) {
        rmSync(b.outDir, { recursive: true, force: true });
        mkdirSync(b.outDir, { recursive: true });
        r = { files: 0, syntaxErrors: 0, ms: 0, fatal: String(e?.stack ?? e).slice(0, 1500) };
      }
      writeFileSync(join(b.outDir, '.done.json'), JSON.stringify({ ...r, mode }));
      parentPort.postMessage({ type: 'build', sha, root: b.root, mode, ...r });
    }
    prune(sha, dir, mode);
  }

  /**
   * An installed checkout takes ~0.2 GB of directories and links (trpc): once its builds are written it
   * is removed unless --keep-installs; a later build at this commit installs again (warm store).
   */
  function prune(sha, dir, mode) {
    if (mode !== 'installed' || keepInstalls) return;
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(cacheDir, 'installs', `${sha}.index`), { force: true });
    const markFile = join(cacheDir, 'installs', `${sha}.install.json`);
    if (existsSync(markFile)) writeFileSync(markFile, JSON.stringify({ ...JSON.parse(readFileSync(markFile, 'utf8')), pruned: true }));
  }
}
