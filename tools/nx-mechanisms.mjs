#!/usr/bin/env node
// Issue 11, point 1: how each mechanism that attaches kiln's key to a build target a workspace already
// has reaches Nx's task hash — measured on real Nx installs, with real runs.
//
//   node tools/nx-mechanisms.mjs [--nx 24,22] [--rows base,obj-td,…] [--origins script,rc-pkg,…]
//                                [--json out.json] [--markdown-out table.md]
// The tables go to stdout as markdown (--markdown-out also writes them to a file).
//
// For each Nx version (a real npm install in <tmpdir>/kiln-nx-installs/, made once; see
// tools/nx-mechanisms/installs.mjs) and each row (a mechanism × a targetDefaults shape), it makes one
// temp workspace holding one library per target origin (tools/nx-mechanisms/fixture.mjs), registers a
// stand-in for kiln's plugin (tools/nx-mechanisms/probe-plugin.cjs), and records per library:
//   cfg      the merged build target (`nx graph --file`): its executor, where kiln's key sits, its inputs
//   key      the task hash moves when only the key changes (k1 → k2)      programmatic hasher, daemon off
//   cmt      the hash stays when a source comment changes (key unchanged)  "only with the key"
//   dep      the hash stays when an unrelated devDependency is added to the root manifest + lockfile
//   dmn      with NX_DAEMON=true the hashes equal the daemon-off ones, and move with the key
//   run      `nx run-many -t build`: exit code, run.json hash = the predicted hash, a 2nd run hits
//   remote   with a self-hosted remote cache (tools/testing/nx-cache-server.mjs): after the local cache is
//            emptied, a 3rd run is a remote hit under the same hash
//   out      each library's dist/ byte-equal to the same library built without kiln (row base), taken
//            before the batch run (@nx/js:tsc's batch implementation also writes .d.ts.map and a tsbuildinfo)
//   leak     kiln's key seen in the task's terminal output or in dist/ (forwarded to the tool)
//   batch    NX_BATCH_MODE=true run of the @nx/js:tsc library: exit code, hash = predicted, and Nx
//            really ran a batch (NX_PERF_LOGGING shows its 'apply-from-cache-or-run-batch' measure; seen on
//            Nx 24, not on Nx 22, where "not batched" only means unconfirmed)
//   hashed   what else Nx hashes for the task (hash details): all external deps, npm:<pkg>, files, …
// Tool versions and the lockfile come from the install; node_modules is a directory of symlinks
// into it (tools/testing/workspace.mjs). Everything runs sequentially (2 shared cores).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Workspace, linkNodeModules, exec, cleanEnv } from './testing/workspace.mjs';
import { ensureInstall, VERSIONS } from './nx-mechanisms/installs.mjs';
import { startCacheServer } from './testing/nx-cache-server.mjs';
import { ORIGINS as ALL_ORIGINS, INFERRED, fixtureFiles, projectName, toolPlugins, writeFiles } from './nx-mechanisms/fixture.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const K1 = 'kilnprobe-k1';
const K2 = 'kilnprobe-k2';
const KI = [{ externalDependencies: [] }];
const TD_PLAIN = { dependsOn: ['^build'], inputs: ['production', '^production'], cache: true };
const TD_FILTER = (inputs) => ({ filter: { projects: ['tag:kiln-keyed'] }, inputs });

/** Rows: a mechanism (probe plugin `mech`), the targetDefaults.build shape, the plugin order. */
const ROWS = {
  base: { mech: null, td: 'plain', doc: 'no kiln; targetDefaults.build.inputs = production (common)' },
  'obj-tdplain': { mech: 'obj', td: 'plain', doc: 'same executor, options.kiln = { key }, inputs [{externalDependencies: []}]; plain targetDefaults' },
  'obj-tdnone': { mech: 'obj', td: 'none', doc: 'as obj, targetDefaults.build without inputs' },
  'obj-tdfilter': { mech: 'obj', td: 'filter', doc: 'as obj, plus a filtered targetDefaults entry (tag:kiln-keyed) with kiln inputs' },
  'obj-first': { mech: 'obj', td: 'filter', kilnFirst: true, doc: 'as obj-tdfilter, kiln registered before the tool plugins' },
  'noexec-tdfilter': { mech: 'noexec', td: 'filter', doc: 'no executor, options.kiln = { key } (compatible with any executor)' },
  'noexec-tdplain': { mech: 'noexec', td: 'plain', doc: 'as noexec, plain targetDefaults only (what init leaves on Nx < 24: no filtered defaults)' },
  'noexec-tdnone': { mech: 'noexec', td: 'none', doc: 'as noexec, targetDefaults.build without inputs (Nx < 24 with no workspace-wide build inputs)' },
  'str-tdfilter': { mech: 'str', td: 'filter', doc: 'same executor, options.kilnKey = key (string)' },
  'env-tdfilter': { mech: 'env', td: 'filter', doc: 'same executor, options.env = { KILN_KEY }' },
  'wrap-tdplain': { mech: 'wrap', td: 'plain', doc: 'init rewrites each target to kiln-run-proto:run { run: original } with inputs; plugin merges options.kiln' },
  'runtime-tdfilter': { mech: 'runtime', td: 'filter', runtime: true, doc: 'inputs only: [{ runtime: cat kiln-probe.key }] (filtered targetDefaults carries it)' },
};

// ---------------------------------------------------------------------------------------------
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const versions = opt('nx', '24,22').split(',');
const rowNames = opt('rows', Object.keys(ROWS).join(',')).split(',');
const jsonOut = opt('json', null);
const mdOut = opt('markdown-out', null);
// --origins keeps the workspace small (2 shared cores): a subset of fixture.mjs's libraries.
const ORIGINS = opt('origins', ALL_ORIGINS.join(',')).split(',');
for (const o of ORIGINS) if (!ALL_ORIGINS.includes(o)) throw new Error(`unknown origin ${o} (have ${ALL_ORIGINS.join(', ')})`);
const log = (s) => process.stderr.write(`${s}\n`);
const started = Date.now();

const results = []; // { version, row, origin, ...cells }
const notes = [];

for (const label of versions) {
  const install = await ensureInstall(label, log);
  const baseline = {}; // origin → { cfg, digest }
  for (const rowName of ['base', ...rowNames.filter((r) => r !== 'base')]) {
    const row = ROWS[rowName];
    if (!row) throw new Error(`unknown row ${rowName}`);
    const t0 = Date.now();
    log(`[nx ${label}] ${rowName} …`);
    try {
      const out = await measureRow(install, rowName, row, baseline);
      for (const r of out) results.push({ version: label, nx: install.versions.nx, row: rowName, ...r });
    } catch (e) {
      notes.push(`Nx ${label} ${rowName}: ${String(e.message || e).split('\n').slice(0, 6).join(' | ')}`);
      results.push({ version: label, nx: install.versions.nx, row: rowName, origin: '*', error: firstErrorLine(String(e.message || e)) });
      log(`  failed: ${String(e.message || e).slice(0, 1500)}`);
    }
    log(`  ${rowName}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}

const tables = printTables();
if (mdOut) await writeFile(mdOut, tables);
if (jsonOut) await writeFile(jsonOut, JSON.stringify({ versions: Object.fromEntries(versions.map((v) => [v, VERSIONS[v]])), results, notes }, null, 2));
log(`total ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(0);

// ---------------------------------------------------------------------------------------------

function firstErrorLine(s) {
  const lines = s.split('\n').map((l) => l.trim()).filter(Boolean);
  const hit = lines.find((l) => /error|invalid|cannot|not /i.test(l) && !/^at /.test(l) && !l.startsWith('nx ')) ?? lines[0];
  return (hit ?? '').slice(0, 160);
}

async function makeWorkspace(install, rowName, row, baseline) {
  const root = await mkdtemp(join(tmpdir(), `kiln-mech-${install.label}-${rowName}-`));
  const files = fixtureFiles({ devDependencies: install.manifest.devDependencies, origins: ORIGINS });
  await writeFiles(root, files);
  const lock = JSON.parse(await readFile(install.lock, 'utf8'));
  lock.name = 'mech-ws';
  if (lock.packages?.['']) lock.packages[''] = { ...lock.packages[''], name: 'mech-ws', workspaces: ['libs/*'] };
  await writeFile(join(root, 'package-lock.json'), JSON.stringify(lock, null, 2) + '\n');
  await cp(join(HERE, 'nx-mechanisms', 'probe-plugin.cjs'), join(root, 'kiln-probe.cjs'));
  await cp(join(HERE, 'nx-mechanisms', 'run-proto'), join(root, 'tools', 'kiln-run-proto'), { recursive: true });
  await writeFile(join(root, 'kiln-probe.key'), K1 + '\n');

  const executors = {};
  for (const origin of ORIGINS) {
    const b = baseline[origin]?.cfg;
    if (b?.executor) executors[`libs/${origin}`] = b.executor;
  }
  const tdInputs = row.runtime ? [{ runtime: 'cat kiln-probe.key' }, { externalDependencies: [] }] : KI;
  const buildTd = row.td === 'plain' ? TD_PLAIN : row.td === 'none' ? { dependsOn: ['^build'], cache: true } : [TD_PLAIN, TD_FILTER(tdInputs)];
  const kiln = row.mech ? [{ plugin: './kiln-probe.cjs', options: { mech: row.mech, executors, tag: row.td === 'filter' } }] : [];
  const nxJson = {
    namedInputs: {
      default: ['{projectRoot}/**/*', 'sharedGlobals'],
      production: ['default', '!{projectRoot}/**/*.md'],
      sharedGlobals: [],
    },
    targetDefaults: { build: buildTd },
    plugins: row.kilnFirst ? [...kiln, ...toolPlugins(ORIGINS)] : [...toolPlugins(ORIGINS), ...kiln],
  };
  await writeFile(join(root, 'nx.json'), JSON.stringify(nxJson, null, 2) + '\n');
  if (row.mech === 'wrap') await initWrapper(root, baseline);
  await linkNodeModules(root, install.nodeModules);
  await symlink('../tools/kiln-run-proto', join(root, 'node_modules', 'kiln-run-proto'));
  const ws = new Workspace(root);
  await ws.git('init', '-q', '-b', 'main');
  for (const [k, v] of [['user.name', 'm'], ['user.email', 'm@example.invalid'], ['commit.gpgsign', 'false']]) await ws.git('config', k, v);
  await ws.commit('fixture');
  return ws;
}

/** What an init step would write for the wrapper: each build target becomes kiln-run-proto:run { run: original }. */
async function initWrapper(root, baseline) {
  for (const origin of ORIGINS) {
    const b = baseline[origin]?.cfg;
    if (!b?.executor) continue;
    const dir = join(root, 'libs', origin);
    const original = JSON.parse(readFileSync(join(dir, existsSync(join(dir, 'project.json')) ? 'project.json' : 'package.json'), 'utf8'));
    const own = (existsSync(join(dir, 'project.json')) ? original.targets : original.nx?.targets)?.build;
    // Config-file targets are moved as written (tokens kept); inferred or script ones as Nx merged them.
    const src = own ?? b.raw;
    const run = { executor: src.executor, options: src.options ?? {}, ...(src.configurations ? { configurations: src.configurations } : {}), ...(src.defaultConfiguration ? { defaultConfiguration: src.defaultConfiguration } : {}) };
    const wrapped = { executor: 'kiln-run-proto:run', options: { run }, inputs: KI, ...(src.outputs ? { outputs: src.outputs } : {}), ...(src.dependsOn ? { dependsOn: src.dependsOn } : {}), cache: true };
    if (existsSync(join(dir, 'project.json'))) {
      original.targets.build = wrapped;
      await writeFile(join(dir, 'project.json'), JSON.stringify(original, null, 2) + '\n');
    } else {
      original.nx = { ...(original.nx ?? {}), targets: { ...(original.nx?.targets ?? {}), build: wrapped } };
      await writeFile(join(dir, 'package.json'), JSON.stringify(original, null, 2) + '\n');
    }
  }
}

async function readGraph(ws, env = {}) {
  const file = '.mech-graph.json';
  await ws.runNx(['graph', `--file=${file}`], { env });
  const g = JSON.parse(await ws.read(file));
  await ws.remove(file);
  return g.graph?.nodes ?? g.nodes;
}

function summarizeCfg(node, origin) {
  const t = node?.data?.targets?.build;
  if (!t) return { executor: null };
  const s = JSON.stringify(t.options ?? {});
  const keyAt = t.options?.kiln?.key ? 'options.kiln' : t.options?.kilnKey ? 'options.kilnKey' : t.options?.env?.KILN_KEY ? 'options.env' : s.includes('kilnprobe') ? 'options?' : (JSON.stringify(t.inputs ?? []).includes('kiln-probe') ? 'inputs.runtime' : '-');
  return {
    executor: t.executor,
    command: t.options?.command ?? t.options?.script ?? null,
    keyAt,
    inputs: t.inputs ?? null,
    envKeys: t.options?.env ? Object.keys(t.options.env) : null,
    raw: t,
  };
}

function summarizeInputs(inputs) {
  if (!inputs) return 'default';
  const j = JSON.stringify(inputs);
  if (j === JSON.stringify(KI)) return 'kiln';
  if (j === JSON.stringify(TD_PLAIN.inputs)) return 'production';
  if (j.includes('runtime')) return 'runtime';
  return j.length > 40 ? j.slice(0, 37) + '…' : j;
}

function summarizeDetails(d) {
  if (!d) return '?';
  const keys = Object.keys(d.nodes ?? {});
  const tags = [];
  if (keys.includes('AllExternalDependencies')) tags.push('ALL-ext');
  const npm = keys.filter((k) => k.startsWith('npm:'));
  if (npm.length) tags.push(npm.length <= 3 ? `npm:${npm.map((k) => k.slice(4)).join('+')}` : `npm:${npm.length} pkgs (the executor's package's deps)`);
  const fileSets = keys.filter((k) => k.includes('{projectRoot}') || k.includes('{workspaceRoot}/libs'));
  if (fileSets.length) tags.push('files');
  if (keys.some((k) => /tsconfig/i.test(k))) tags.push('tsconfig');
  if (keys.some((k) => k.startsWith('runtime:'))) tags.push('runtime');
  if (keys.some((k) => k.startsWith('env:'))) tags.push('env');
  const ws = keys.filter((k) => k.startsWith('{workspaceRoot}/') && !k.includes('libs/')).map((k) => k.replace('{workspaceRoot}/', ''));
  if (ws.length) tags.push(ws.join(','));
  return tags.join(' ');
}

async function hashAll(ws, env = {}, details = false) {
  return ws.hashes({ targets: ['build'], env, details, timeoutMs: 240_000 });
}

async function distDigest(ws, origin) {
  const dir = ws.path(`libs/${origin}/dist`);
  if (!existsSync(dir)) return { digest: null, files: 0, leak: false };
  const h = createHash('sha256');
  let n = 0;
  let leak = false;
  const walk = async (d) => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else {
        const c = await readFile(p);
        if (c.includes('kilnprobe')) leak = true;
        h.update(relative(dir, p)).update('\0').update(c).update('\0');
        n++;
      }
    }
  };
  await walk(dir);
  return { digest: h.digest('hex').slice(0, 12), files: n, leak };
}

/** Static output sections: "> nx run p:build" … up to the next task line. */
function taskSections(output) {
  const out = {};
  let cur = null;
  for (const line of output.split('\n')) {
    const m = /nx run (\S+:\S+)/.exec(line);
    if (m) cur = m[1];
    if (cur) (out[cur] ??= []).push(line);
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, v.join('\n')]));
}

async function setKey(ws, key) {
  await writeFile(ws.path('kiln-probe.key'), key + '\n');
}

async function measureRow(install, rowName, row, baseline) {
  const ws = await makeWorkspace(install, rowName, row, baseline);
  const cells = Object.fromEntries(ORIGINS.map((o) => [o, { origin: o }]));
  try {
    // 1. merged configuration
    const nodes = await readGraph(ws);
    for (const origin of ORIGINS) {
      const cfg = summarizeCfg(nodes[projectName(origin)], origin);
      if (rowName === 'base') baseline[origin] = { cfg };
      const c = cells[origin];
      c.executor = cfg.executor;
      c.execSame = cfg.executor === (baseline[origin]?.cfg.executor ?? null);
      c.keyAt = cfg.keyAt;
      c.inputs = summarizeInputs(cfg.inputs);
      c.envKeys = cfg.envKeys;
      c.command = cfg.command;
      c.cfg = cfg.raw;
    }
    // 2. hashes: k1 (with details), k2, comment edit, unrelated dependency
    const h1 = await hashAll(ws, {}, true);
    await setKey(ws, K2);
    const h2 = await hashAll(ws);
    await setKey(ws, K1);
    for (const origin of ORIGINS) {
      const f = existsSync(ws.path(`libs/${origin}/src/index.ts`)) ? `libs/${origin}/src/index.ts` : `libs/${origin}/src/index.js`;
      await ws.edit(f, ['a comment: the', 'a comment (edited): the']);
    }
    const h3 = await hashAll(ws);
    await ws.git('checkout', '--', 'libs');
    const pkg = await ws.read('package.json');
    const lockText = await ws.read('package-lock.json');
    await ws.editJson('package.json', (p) => { p.devDependencies['left-pad'] = '1.3.0'; });
    await ws.editJson('package-lock.json', (l) => {
      l.packages[''].devDependencies = { ...(l.packages[''].devDependencies ?? {}), 'left-pad': '1.3.0' };
      l.packages['node_modules/left-pad'] = { version: '1.3.0', resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz', integrity: 'sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQEstGi8GMYQEdJBuj+pzQE5xk1AfF2X+CO1qJh9v6xKnPRA==', dev: true };
    });
    const h4 = await hashAll(ws);
    await writeFile(ws.path('package.json'), pkg);
    await writeFile(ws.path('package-lock.json'), lockText);
    // 3. daemon on: the same hashes, and they move with the key
    const denv = { NX_DAEMON: 'true' };
    let d1 = null;
    let d2 = null;
    let daemonNote = '';
    try {
      d1 = await hashAll(ws, denv);
      await setKey(ws, K2);
      await new Promise((r) => setTimeout(r, 1500)); // the daemon's watcher
      d2 = await hashAll(ws, denv);
      const st = await exec(process.execPath, [ws.nxBin(), 'daemon'], { cwd: ws.root, env: ws.nxEnv(denv) });
      daemonNote = /running/i.test(st.output) && !/not running/i.test(st.output) ? 'running' : st.output.trim().split('\n')[0];
    } catch (e) {
      daemonNote = firstErrorLine(String(e.message));
    } finally {
      await exec(process.execPath, [ws.nxBin(), 'daemon', '--stop'], { cwd: ws.root, env: ws.nxEnv(denv) });
      await setKey(ws, K1);
    }
    // 4. run, outputs, second run
    await ws.clearLocalCache();
    const server = await startCacheServer();
    let run1, run2, run3;
    try {
      const renv = server.env;
      run1 = await ws.runNx(['run-many', '-t', 'build', '--parallel=2'], { allowFailure: true, timeoutMs: 400_000, env: renv });
      run2 = await ws.runNx(['run-many', '-t', 'build', '--parallel=2'], { allowFailure: true, timeoutMs: 400_000, env: renv });
      // remote: an empty local cache, so each task can only come from the remote cache
      await ws.clearLocalCache();
      run3 = await ws.runNx(['run-many', '-t', 'build', '--parallel=2'], { allowFailure: true, timeoutMs: 400_000, env: renv });
    } finally {
      await server.close();
    }
    const sections = taskSections(run1.stdout);
    for (const origin of ORIGINS) {
      const id = `${projectName(origin)}:build`;
      const c = cells[origin];
      if (!(id in h1.hashes)) continue;
      c.hash = h1.hashes[id];
      c.keyMoves = h1.hashes[id] !== h2[id];
      c.commentStable = h1.hashes[id] === h3[id];
      c.depStable = h1.hashes[id] === h4[id];
      c.daemon = d1 && d2 ? (d1[id] === h1.hashes[id] && d2[id] === h2[id] ? 'same' : d1[id] === h1.hashes[id] ? 'k2 differs' : 'differs') : `n/a (${daemonNote})`;
      c.hashed = summarizeDetails(h1.details?.[id]);
      c.hashKeys = Object.keys(h1.details?.[id]?.nodes ?? {});
      const t = run1.tasks[id];
      c.run = t ? (t.code === 0 ? 'ok' : `exit ${t.code}`) : 'not run';
      c.runHashPredicted = t ? t.hash === h1.hashes[id] : null;
      c.secondRunHit = run2.tasks[id]?.cache === 'local';
      c.remoteHit = t?.code === 0 ? run3.tasks[id]?.cache === 'remote' && run3.tasks[id]?.hash === c.hash : null;
      const dd = await distDigest(ws, origin);
      c.digest = dd.digest;
      if (rowName === 'base') baseline[origin].digest = dd.digest;
      c.outSame = dd.digest !== null && dd.digest === baseline[origin]?.digest;
      c.leak = (sections[id] ?? '').includes('kilnprobe') || dd.leak;
      c.leakLines = (sections[id] ?? '').split('\n').filter((l) => /kilnprobe|kiln/i.test(l)).slice(0, 3);
      c.failLines = t && t.code !== 0 ? (sections[id] ?? '').split('\n').filter((l) => /error|invalid|TS\d{4}|must|unknown/i.test(l)).slice(0, 3) : [];
    }
    // 5. batch mode on the @nx/js:tsc library — after the dist digests: @nx/js:tsc's batch implementation
    //    writes more than its plain one (declaration maps, a tsbuildinfo), so its dist is not compared
    let batch = null;
    if (h1.hashes[projectName('js-tsc') + ':build'] !== undefined) {
      const b = await ws.runNx(['run-many', '-t', 'build', '-p', projectName('js-tsc'), '--skip-nx-cache'], { allowFailure: true, env: { NX_BATCH_MODE: 'true', NX_PERF_LOGGING: 'true' } });
      const t = b.tasks[projectName('js-tsc') + ':build'];
      const ranBatch = /apply-from-cache-or-run-batch/.test(b.output);
      batch = t ? `${t.code === 0 ? 'ok' : 'exit ' + t.code}${t.hash === h1.hashes[projectName('js-tsc') + ':build'] ? '' : ' hash≠'}${ranBatch ? '' : ' (not batched)'}` : 'no task';
    }
    if (cells['js-tsc']?.hash) cells['js-tsc'].batch = batch;
  } finally {
    await exec(process.execPath, [ws.nxBin(), 'daemon', '--stop'], { cwd: ws.root, env: ws.nxEnv({ NX_DAEMON: 'true' }) }).catch(() => {});
    if (process.env.KILN_KEEP_TEMP !== '1') await rm(ws.root, { recursive: true, force: true, maxRetries: 3 });
    else log(`  kept ${ws.root}`);
  }
  return Object.values(cells);
}

// ---------------------------------------------------------------------------------------------
// Output

function yn(v) {
  return v === true ? 'Y' : v === false ? 'N' : v ?? '';
}

function verdict(c) {
  if (c.error) return `ERR`;
  if (!c.hash) return c.executor ? '?' : '—';
  const bad = [];
  if (!c.execSame) bad.push('exec');
  if (!c.keyMoves) bad.push('key');
  if (!c.commentStable) bad.push('raw');
  if (!c.depStable) bad.push('ext');
  if (c.daemon !== 'same') bad.push('dmn');
  if (c.run !== 'ok') bad.push('FAIL');
  if (c.runHashPredicted === false) bad.push('hash≠');
  if (c.run === 'ok' && !c.outSame) bad.push('out≠');
  if (c.leak) bad.push('leak');
  if (c.secondRunHit === false && c.run === 'ok') bad.push('nohit');
  if (c.remoteHit === false) bad.push('noremote');
  return bad.length ? bad.join(',') : 'OK';
}

function printTables() {
  const lines = [];
  const p = (s) => lines.push(s);
  p('## Full table');
  p('');
  p('| Nx | row | origin | executor (merged) | key at | inputs | key→hash | comment stable | dep stable | daemon | run | run hash = predicted | 2nd run hit | remote hit | dist = base | leak | batch | also hashed |');
  p('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    if (r.error) {
      p(`| ${r.version} | ${r.row} | * | ERROR: ${r.error.replace(/\|/g, '/')} ||||||||||||||`);
      continue;
    }
    if (!r.executor && !r.hash) continue;
    p(`| ${r.version} | ${r.row} | ${r.origin} | ${r.executor ?? '—'}${r.execSame ? '' : ' (≠base)'} | ${r.keyAt ?? ''} | ${r.inputs ?? ''} | ${yn(r.keyMoves)} | ${yn(r.commentStable)} | ${yn(r.depStable)} | ${r.daemon ?? ''} | ${r.run ?? ''} | ${yn(r.runHashPredicted)} | ${yn(r.secondRunHit)} | ${yn(r.remoteHit)} | ${yn(r.outSame)} | ${yn(r.leak)} | ${r.batch ?? ''} | ${r.hashed ?? ''} |`);
  }
  p('');
  p('## Matrix (OK = the hash follows the key and only the key, daemon on = off, the target runs unchanged, dist byte-equal, nothing forwarded)');
  p('');
  for (const v of versions) {
    const rows = [...new Set(results.filter((r) => r.version === v).map((r) => r.row))].filter((r) => r !== 'base');
    p(`Nx ${v} (${results.find((r) => r.version === v)?.nx})`);
    p('');
    p(`| origin | ${rows.join(' | ')} |`);
    p(`|---|${rows.map(() => '---').join('|')}|`);
    for (const origin of ORIGINS) {
      const cells = rows.map((row) => {
        const e = results.find((r) => r.version === v && r.row === row && r.origin === '*');
        if (e) return 'ERR';
        const c = results.find((r) => r.version === v && r.row === row && r.origin === origin);
        return c ? verdict(c) : '';
      });
      p(`| ${origin} | ${cells.join(' | ')} |`);
    }
    p('');
  }
  p('Legend: exec = the merged executor is not the original one; key = the hash does not move with the key; raw = a comment edit moves the hash (raw files hashed); ext = an unrelated devDependency moves it (all external deps hashed); dmn = daemon-on hashes differ; FAIL = the task fails; out≠ = dist differs from the build without kiln; leak = the key reached the tool (command line or output); nohit = the second identical run missed; noremote = with the local cache emptied, the third run was no remote hit; — = no build target.');
  if (notes.length) {
    p('');
    p('Notes:');
    for (const n of notes) p(`- ${n}`);
  }
  const details = [];
  for (const r of results) {
    if (r.failLines?.length || r.leakLines?.length) details.push(`- Nx ${r.version} ${r.row} ${r.origin}: ${[...(r.failLines ?? []), ...(r.leakLines ?? [])].map((l) => l.trim().slice(0, 200)).join(' ⏎ ')}`);
  }
  if (details.length) {
    p('');
    p('Task output lines (failures, the key seen):');
    lines.push(...details);
  }
  process.stdout.write(lines.join('\n') + '\n');
  return lines.join('\n') + '\n';
}
