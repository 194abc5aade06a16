// Test harness: temporary Nx workspaces made from fixture folders, driven through the real `nx` CLI.
//
//   const ws = await createWorkspace('workspace-basic');     // copy fixtures/<name>, link node_modules, git init + commit
//   const run = await ws.runNx(['run-many', '-t', 'build']); // real nx child process
//   run.statuses  // { '@fx/base:build': 'executed', ... }   ('local' | 'remote' | 'executed')
//   await ws.edit('libs/base/src/greet.ts', (s) => s.replace('Hello', 'Hi')); await ws.commit('edit');
//   const b = await cloneWorkspace(ws);                      // `git clone` at another absolute path
//   await b.hashes()  // { '@fx/base:build': '845…', … } computed by Nx without running anything
//   await disposeAll();                                      // in afterAll
//
// Where the answers come from (Nx 24):
// - Hit/miss per task: `<cacheDir>/run.json`, written at the end of every task run by Nx's
//   StoreRunInformationLifeCycle (nx/src/tasks-runner/life-cycles/store-run-information-life-cycle.js),
//   one entry per task with `hash` and `cacheStatus` ∈ {local-cache-hit, remote-cache-hit, cache-miss}
//   and `status` (exit code). It is deleted before each run so a stale file is never read. The static
//   terminal output (`nx run <task>  [local cache]` / `[remote cache]`) is parsed too and must agree:
//   a disagreement throws, so neither source can drift unnoticed.
// - Hashes without running: tools/testing/nx-task-hashes.cjs builds the project and task graphs and
//   calls the hasher exactly as `nx run-many` does before it runs anything
//   (`hashTasksThatDoNotDependOnOutputsOfOtherTasks`); the harness test checks it equals run.json.
//
// Isolation (each matters; see tools/testing/README.md):
// - NX_CACHE_DIRECTORY / NX_WORKSPACE_DATA_DIRECTORY point inside the workspace. Without them Nx 24
//   puts the cache and its DB in ~/.nx/<workspace id>/, shared by every checkout of the same repo
//   (same git remote or first commit), so a clone would see the first clone's *local* cache.
// - NX_DAEMON=false, NX_NO_CLOUD=true, CI=true, NX_TUI=false, NX_DEFAULT_OUTPUT_STYLE=static, no colour.
// - Every inherited NX_* and GIT_* variable is dropped (an outer NX_SKIP_NX_CACHE or GIT_DIR would
//   silently change what is tested).
// - node_modules is a real directory of symlinks into the kiln repo's node_modules (one per entry),
//   plus links for the workspace's own packages (`@fx/base` → ../../libs/base), so `nx`, `tsc` and
//   the libraries' cross-imports resolve without network and without touching the kiln repo.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { cp, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KILN_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES_DIR = join(KILN_ROOT, 'fixtures');
const HASH_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'nx-task-hashes.cjs');
const TEMP_PREFIX = 'kiln-ws-';
const DEFAULT_NX_TIMEOUT_MS = 180_000;
const DEFAULT_CMD_TIMEOUT_MS = 60_000;

/** Directories this process created; disposeAll() removes them. */
const created = new Set();
// Safety net for a run that dies before its afterAll: remove what is left when the process exits.
process.once('exit', () => {
  if (process.env.KILN_KEEP_TEMP === '1') return;
  for (const dir of created) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Processes

/**
 * Runs a command without blocking the event loop (a synchronous child would deadlock against a
 * cache server living in this same process). Bounded: killed (whole process group) after timeoutMs.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, input?: string }} options
 * @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, output: string, durationMs: number, timedOut: boolean }>}
 */
export function exec(command, args, { cwd, env = cleanEnv(), timeoutMs = DEFAULT_CMD_TIMEOUT_MS, input } = /** @type {any} */ ({})) {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true, // its own process group, so a timeout kills nx and everything it started
    });
    let stdout = '';
    let stderr = '';
    let output = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      stdout += d;
      output += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      output += d;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      setTimeout(() => killGroup(child.pid, 'SIGKILL'), 3000).unref();
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, output, durationMs: Date.now() - started, timedOut });
    });
    if (input !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // the child may exit before reading its input
      child.stdin.end(input);
    }
  });
}

function killGroup(pid, signal) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * process.env without anything that would leak the outer run into the child: every NX_* and GIT_*
 * variable, and the colour forcing of the test runner.
 * @param {Record<string, string | undefined>} [extra] set (or, with undefined, remove) variables
 */
export function cleanEnv(extra = {}) {
  /** @type {NodeJS.ProcessEnv} */
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (/^(NX_|GIT_)/.test(k) || k === 'FORCE_COLOR' || k === 'NO_COLOR') continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

async function git(cwd, args, timeoutMs = DEFAULT_CMD_TIMEOUT_MS) {
  const r = await exec('git', args, { cwd, env: cleanEnv({ GIT_TERMINAL_PROMPT: '0' }), timeoutMs });
  if (r.code !== 0) {
    throw new Error(`git ${args.join(' ')} failed in ${cwd} (${r.timedOut ? 'timed out' : `exit ${r.code}`}):\n${r.output}`);
  }
  return r.stdout.trim();
}

// ---------------------------------------------------------------------------------------------
// node_modules

/**
 * Makes `<root>/node_modules` a directory of symlinks: one per entry of `source` (scoped packages
 * linked one level down so workspace scopes can sit beside them), `.bin` included, then one per
 * workspace package of the fixture. Re-run after adding a workspace package.
 * @param {string} root
 * @param {string} [source]
 */
export async function linkNodeModules(root, source = join(KILN_ROOT, 'node_modules')) {
  const target = join(root, 'node_modules');
  await rm(target, { recursive: true, force: true });
  await mkdir(target);
  const own = await workspacePackages(root);
  const ownNames = new Set(own.map((p) => p.name));
  for (const entry of await readdir(source)) {
    if (entry.startsWith('.') && entry !== '.bin') continue; // .package-lock.json, .cache, …
    const from = join(source, entry);
    if (entry.startsWith('@')) {
      await mkdir(join(target, entry), { recursive: true });
      for (const sub of await readdir(from)) {
        if (ownNames.has(`${entry}/${sub}`)) continue;
        await symlink(join(from, sub), join(target, entry, sub));
      }
    } else if (!ownNames.has(entry)) {
      await symlink(from, join(target, entry));
    }
  }
  for (const pkg of own) {
    const link = join(target, ...pkg.name.split('/'));
    await mkdir(dirname(link), { recursive: true });
    await rm(link, { recursive: true, force: true });
    await symlink(relative(dirname(link), pkg.dir), link);
  }
}

/**
 * The workspace's own packages, from the root package.json `workspaces` globs (`dir/*` and exact
 * paths; that is all the fixtures use).
 * @param {string} root
 * @returns {Promise<{ name: string, version?: string, dir: string }[]>}
 */
export async function workspacePackages(root) {
  const rootPkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  const patterns = Array.isArray(rootPkg.workspaces) ? rootPkg.workspaces : (rootPkg.workspaces?.packages ?? []);
  const dirs = [];
  for (const pattern of patterns) {
    if (pattern.endsWith('/*')) {
      const base = join(root, pattern.slice(0, -2));
      if (!existsSync(base)) continue;
      for (const e of (await readdir(base, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        if (e.isDirectory()) dirs.push(join(base, e.name));
      }
    } else if (!pattern.includes('*')) {
      dirs.push(join(root, pattern));
    } else {
      throw new Error(`workspacePackages: unsupported workspaces pattern ${pattern}`);
    }
  }
  const out = [];
  for (const dir of dirs) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(await readFile(file, 'utf8'));
    if (pkg.name) out.push({ name: pkg.name, version: pkg.version, dir });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Nx output

/**
 * @typedef {'local' | 'remote' | 'executed'} CacheOutcome
 * @typedef {object} NxTaskResult
 * @property {string} id          e.g. "@fx/base:build"
 * @property {string} project
 * @property {string} target
 * @property {string} hash        the Nx task hash (the cache key)
 * @property {CacheOutcome} cache local cache hit, remote cache hit, or executed
 * @property {number} code        the task's exit code (the cached one for a hit)
 * @property {string | null} terminalMarker what the static output said: 'local' | 'remote' | 'executed' | null (task line not found)
 */

/** Parses the static output's task lines: `> nx run @fx/base:build  [local cache]`. */
export function parseTaskLines(output) {
  /** @type {Record<string, CacheOutcome>} */
  const seen = {};
  for (const raw of output.split(/\r?\n/)) {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
    const m = /(?:^|\s)nx run (\S+)(.*)$/.exec(line);
    if (!m || !m[1].includes(':')) continue;
    const rest = m[2];
    let outcome = /** @type {CacheOutcome} */ ('executed');
    if (rest.includes('[remote cache]')) outcome = 'remote';
    else if (rest.includes('[local cache]') || rest.includes('[existing outputs match the cache')) outcome = 'local';
    // A task may be printed twice (e.g. a summary line after its output); a cache marker wins.
    if (!(m[1] in seen) || outcome !== 'executed') seen[m[1]] = outcome;
  }
  return seen;
}

const CACHE_STATUS = {
  'local-cache-hit': 'local',
  'remote-cache-hit': 'remote',
  'cache-miss': 'executed',
};

// ---------------------------------------------------------------------------------------------
// Workspace

export class Workspace {
  /**
   * @param {string} root absolute path
   * @param {{ fixture?: string, origin?: Workspace }} [meta]
   */
  constructor(root, meta = {}) {
    this.root = root;
    this.fixture = meta.fixture ?? null;
    this.origin = meta.origin ?? null;
    this.cacheDir = join(root, '.nx', 'cache');
    this.workspaceDataDir = join(root, '.nx', 'workspace-data');
  }

  /** Absolute path of a workspace-relative path. */
  path(rel = '.') {
    const abs = resolve(this.root, rel);
    if (abs !== this.root && !abs.startsWith(this.root + sep)) throw new Error(`${rel} is outside the workspace`);
    return abs;
  }

  exists(rel) {
    return existsSync(this.path(rel));
  }

  read(rel) {
    return readFile(this.path(rel), 'utf8');
  }

  async readJson(rel) {
    return JSON.parse(await this.read(rel));
  }

  async write(rel, content) {
    await mkdir(dirname(this.path(rel)), { recursive: true });
    await writeFile(this.path(rel), content);
  }

  async writeJson(rel, value) {
    await this.write(rel, JSON.stringify(value, null, 2) + '\n');
  }

  /**
   * Edits a file. `change` is a function of the content, or a [search, replace] pair that must match
   * (a silent no-op edit would make a "hit" test pass for the wrong reason).
   * @param {string} rel
   * @param {((content: string) => string) | [string | RegExp, string]} change
   */
  async edit(rel, change) {
    const before = await this.read(rel);
    let after;
    if (typeof change === 'function') after = change(before);
    else {
      const [search, replacement] = change;
      const found = typeof search === 'string' ? before.includes(search) : search.test(before);
      if (!found) throw new Error(`edit ${rel}: ${String(search)} not found`);
      after = before.replace(search, replacement);
    }
    if (after === before) throw new Error(`edit ${rel}: the edit changed nothing`);
    await writeFile(this.path(rel), after);
    return after;
  }

  /** Edits a JSON file through a function that mutates (or returns) the parsed value. */
  async editJson(rel, change) {
    const value = await this.readJson(rel);
    const result = change(value);
    await this.writeJson(rel, result === undefined ? value : result);
  }

  /**
   * What `npm install -D acorn@8.19.0 -w <lib>` leaves: the library's manifest and the lockfile (its
   * importer and the package entry) name acorn, a package no fixture source imports.
   */
  async addAcornDevDependency(lib) {
    await this.editJson(`${lib}/package.json`, (j) => {
      j.devDependencies = { ...j.devDependencies, acorn: '^8.19.0' };
    });
    await this.editJson('package-lock.json', (lock) => {
      lock.packages[lib].devDependencies = { acorn: '^8.19.0' };
      lock.packages['node_modules/acorn'] = {
        version: '8.19.0',
        resolved: 'https://registry.npmjs.org/acorn/-/acorn-8.19.0.tgz',
        integrity: 'sha512-oJlA3XiRm7Cyk6qFD2Jn8ak9B7jSy0qy00ADO3+8dpT0LSjFihQYv4C02LFCSYJV3Q37xYwwRy5m+IpIiUzqWw==',
        dev: true,
        license: 'MIT',
      };
    });
  }

  async remove(rel) {
    await rm(this.path(rel), { recursive: true, force: true });
  }

  /** git in this workspace; returns trimmed stdout, throws on failure. */
  git(...args) {
    return git(this.root, args.flat());
  }

  /** Stages everything and commits; returns the new HEAD sha. */
  async commit(message = 'change', { allowEmpty = false } = {}) {
    await this.git('add', '-A');
    await this.git('commit', '-q', '--no-verify', '-m', message, ...(allowEmpty ? ['--allow-empty'] : []));
    return this.head();
  }

  head() {
    return this.git('rev-parse', 'HEAD');
  }

  /** Fast-forwards from the clone's origin (for a workspace made by cloneWorkspace). */
  async pull() {
    await this.git('pull', '-q', '--ff-only');
    await linkNodeModules(this.root); // a pulled commit may add a workspace package
    return this.head();
  }

  /** The fixture's workspace packages ({ name, version, dir }). */
  packages() {
    return workspacePackages(this.root);
  }

  /**
   * Deletes the `nx` field (the plain `nx:run-commands` build target of the fixtures) from every
   * workspace package.json, so targets come from plugins only (e.g. kiln's inferred `build`).
   * Use it in createWorkspace's `prepare` so the first commit already has it.
   */
  async removePackageNxConfig() {
    for (const pkg of await this.packages()) {
      await this.editJson(relative(this.root, join(pkg.dir, 'package.json')), (json) => {
        delete json.nx;
      });
    }
  }

  /** Re-links node_modules (after adding or renaming a workspace package). */
  linkNodeModules() {
    return linkNodeModules(this.root);
  }

  /**
   * The environment every nx child gets: hermetic defaults, then `env` (undefined removes a variable).
   * @param {Record<string, string | undefined>} [env]
   */
  nxEnv(env = {}) {
    return cleanEnv({
      NX_DAEMON: 'false',
      NX_NO_CLOUD: 'true',
      CI: 'true',
      NX_TUI: 'false',
      NX_DEFAULT_OUTPUT_STYLE: 'static',
      NX_SKIP_LOG_GROUPING: 'true',
      NX_CACHE_DIRECTORY: this.cacheDir,
      NX_WORKSPACE_DATA_DIRECTORY: this.workspaceDataDir,
      FORCE_COLOR: '0',
      NO_COLOR: '1',
      ...env,
    });
  }

  /** Path of the nx CLI entry this workspace resolves (through its node_modules). */
  nxBin() {
    const req = createRequire(join(this.root, 'package.json'));
    const pkgFile = req.resolve('nx/package.json');
    const bin = JSON.parse(readFileSync(pkgFile, 'utf8')).bin;
    return join(dirname(pkgFile), typeof bin === 'string' ? bin : bin.nx);
  }

  /**
   * Runs the real nx CLI and reports, per task, whether it was a local hit, a remote hit or executed.
   * Throws when nx exits non-zero (unless allowFailure), when it times out, and when run.json and the
   * terminal output disagree about a task.
   * @param {string[]} args e.g. ['run-many', '-t', 'build']
   * @param {{ env?: Record<string, string | undefined>, timeoutMs?: number, allowFailure?: boolean }} [options]
   */
  async runNx(args, { env = {}, timeoutMs = DEFAULT_NX_TIMEOUT_MS, allowFailure = false } = {}) {
    const childEnv = this.nxEnv(env);
    const cacheDir = resolve(this.root, childEnv.NX_CACHE_DIRECTORY ?? this.cacheDir);
    const runJsonFile = join(cacheDir, 'run.json');
    await rm(runJsonFile, { force: true });
    const r = await exec(process.execPath, [this.nxBin(), ...args], { cwd: this.root, env: childEnv, timeoutMs });
    const describe = () => `nx ${args.join(' ')} in ${this.root}`;
    if (r.timedOut) throw new Error(`${describe()} timed out after ${timeoutMs} ms:\n${r.output.slice(-4000)}`);
    if (r.code !== 0 && !allowFailure) throw new Error(`${describe()} exited ${r.code}:\n${r.output.slice(-6000)}`);

    let runJson = null;
    if (existsSync(runJsonFile)) runJson = JSON.parse(await readFile(runJsonFile, 'utf8'));
    const markers = parseTaskLines(r.stdout);
    if (runJson === null && Object.keys(markers).length > 0) {
      throw new Error(
        `${describe()}: tasks ran but ${runJsonFile} was not written (NX_CACHE_DIRECTORY overridden?):\n${r.output.slice(-3000)}`,
      );
    }
    /** @type {Record<string, NxTaskResult>} */
    const tasks = {};
    for (const t of runJson?.tasks ?? []) {
      const cache = CACHE_STATUS[t.cacheStatus];
      if (!cache) throw new Error(`${describe()}: unknown cacheStatus ${t.cacheStatus} for ${t.taskId}`);
      const terminalMarker = markers[t.taskId] ?? null;
      if (terminalMarker !== null && terminalMarker !== cache) {
        throw new Error(
          `${describe()}: run.json says ${t.taskId} was ${cache}, the terminal output says ${terminalMarker}:\n${r.stdout.slice(-4000)}`,
        );
      }
      tasks[t.taskId] = {
        id: t.taskId,
        project: t.projectName,
        target: t.target,
        hash: t.hash,
        cache,
        code: t.status,
        terminalMarker,
      };
    }
    for (const id of Object.keys(markers)) {
      if (!(id in tasks)) throw new Error(`${describe()}: the output shows task ${id}, run.json does not:\n${r.stdout.slice(-3000)}`);
    }
    const ids = Object.keys(tasks).sort();
    return {
      ...r,
      args,
      runJson,
      tasks,
      /** taskId → 'local' | 'remote' | 'executed' */
      statuses: Object.fromEntries(ids.map((id) => [id, tasks[id].cache])),
      /** taskId → hash */
      hashes: Object.fromEntries(ids.map((id) => [id, tasks[id].hash])),
      executed: ids.filter((id) => tasks[id].cache === 'executed'),
      localHits: ids.filter((id) => tasks[id].cache === 'local'),
      remoteHits: ids.filter((id) => tasks[id].cache === 'remote'),
    };
  }

  /**
   * Task hashes as Nx computes them before running, without running anything.
   * Tasks whose hash depends on other tasks' outputs (none in the fixtures) come back as null.
   * @param {{ targets?: string[], projects?: string[], configuration?: string, details?: boolean, env?: Record<string, string | undefined>, timeoutMs?: number }} [options]
   * @returns {Promise<Record<string, string | null>>} taskId → hash; with details: true, an object
   *   { hashes, details: taskId → { nodes: { input → hash }, runtime, implicitDeps } }
   */
  async hashes({ targets = ['build'], projects, configuration, details = false, env = {}, timeoutMs = 120_000 } = {}) {
    const request = JSON.stringify({ targets, projects: projects ?? null, configuration: configuration ?? null, details });
    const r = await exec(process.execPath, [HASH_SCRIPT, request], { cwd: this.root, env: this.nxEnv(env), timeoutMs });
    const m = /@@KILN_NX_HASHES@@(.*)$/m.exec(r.stdout);
    if (r.timedOut || r.code !== 0 || !m) {
      throw new Error(`hashing in ${this.root} failed (${r.timedOut ? 'timed out' : `exit ${r.code}`}):\n${r.output.slice(-4000)}`);
    }
    const parsed = JSON.parse(m[1]);
    return details ? parsed : parsed.hashes;
  }

  /** The hash Nx would give one task ("project:target"), without running it. */
  async hashOf(taskId, options = {}) {
    const i = taskId.lastIndexOf(':');
    const project = taskId.slice(0, i);
    const target = taskId.slice(i + 1);
    const all = await this.hashes({ ...options, targets: [target], projects: [project], details: false });
    if (!(taskId in all)) throw new Error(`hashOf: no task ${taskId} (have ${Object.keys(all).join(', ')})`);
    return all[taskId];
  }

  /** Empties this workspace's local Nx cache and its DB (the DB indexes the cache: drop both). */
  async clearLocalCache() {
    await rm(this.cacheDir, { recursive: true, force: true });
    await rm(this.workspaceDataDir, { recursive: true, force: true });
  }

  /** Removes the build outputs (`dist/` of every workspace package). */
  async cleanOutputs() {
    for (const pkg of await this.packages()) await rm(join(pkg.dir, 'dist'), { recursive: true, force: true });
  }

  /**
   * Runs a Node ESM snippet inside the workspace (so `import('@fx/tail')` resolves through its
   * node_modules) and returns its stdout; throws on failure.
   */
  async node(source, { timeoutMs = DEFAULT_CMD_TIMEOUT_MS } = {}) {
    const r = await exec(process.execPath, ['--input-type=module', '-e', source], {
      cwd: this.root,
      env: cleanEnv(),
      timeoutMs,
    });
    if (r.code !== 0) throw new Error(`node snippet failed in ${this.root}:\n${r.output}`);
    return r.stdout;
  }

  /** Deletes the workspace directory (only one this harness created). */
  async dispose() {
    await removeTemp(this.root);
  }
}

async function newTempDir(label) {
  const dir = await mkdtemp(join(tmpdir(), `${TEMP_PREFIX}${label.replace(/[^A-Za-z0-9_-]/g, '_')}-`));
  const real = realpathSync(dir);
  created.add(real);
  return real;
}

async function removeTemp(dir) {
  if (!created.has(dir)) throw new Error(`refusing to delete ${dir}: not created by this harness`);
  created.delete(dir);
  if (process.env.KILN_KEEP_TEMP === '1') {
    process.stderr.write(`[workspace harness] kept ${dir}\n`);
    return;
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

async function initGit(root) {
  await git(root, ['init', '-q', '-b', 'main']);
  await configureGit(root);
}

async function configureGit(root) {
  for (const [k, v] of [
    ['user.name', 'Kiln Test'],
    ['user.email', 'kiln-test@example.invalid'],
    ['commit.gpgsign', 'false'],
    ['core.autocrlf', 'false'],
  ]) {
    await git(root, ['config', k, v]);
  }
}

/**
 * Creates a workspace from `fixtures/<fixture>` in a new temp dir: copies it, links node_modules,
 * `git init` (branch main) and commits everything.
 * @param {string} fixture folder name under fixtures/, or an absolute path
 * @param {{ git?: boolean, message?: string, prepare?: (ws: Workspace) => Promise<void> | void }} [options]
 *   prepare runs after the copy and before the first commit (e.g. swap the build target for kiln's).
 */
export async function createWorkspace(fixture, { git: withGit = true, message = 'fixture', prepare } = {}) {
  const from = fixture.startsWith('/') ? fixture : join(FIXTURES_DIR, fixture);
  if (!existsSync(join(from, 'package.json'))) throw new Error(`no fixture at ${from}`);
  const root = await newTempDir(fixture.split('/').pop() ?? 'ws');
  await cp(from, root, {
    recursive: true,
    filter: (src) => !/(^|[/\\])(node_modules|dist|\.nx)([/\\]|$)/.test(relative(from, src)),
  });
  const ws = new Workspace(root, { fixture });
  if (prepare) await prepare(ws);
  await linkNodeModules(root);
  if (withGit) {
    await initGit(root);
    await ws.commit(message);
  }
  return ws;
}

/**
 * `git clone`s a workspace into a new temp dir (a different absolute path), links its node_modules.
 * The clone's local cache starts empty: it has its own .nx/ (untracked).
 * @param {Workspace} ws
 */
export async function cloneWorkspace(ws) {
  const parent = await newTempDir(`${ws.fixture ?? 'ws'}-clone`);
  const root = join(parent, 'checkout'); // deeper than the original: the absolute paths differ in length too
  await git(parent, ['clone', '-q', ws.root, root]);
  await configureGit(root);
  await linkNodeModules(root);
  const clone = new Workspace(root, { fixture: ws.fixture ?? undefined, origin: ws });
  clone.dispose = () => removeTemp(parent);
  return clone;
}

/** Removes every temp dir this harness created and has not removed yet. */
export async function disposeAll() {
  for (const dir of [...created]) await removeTemp(dir);
}

/** Whether `path` is a symlink (for tests of the harness itself). */
export async function isSymlink(path) {
  return (await lstat(path)).isSymbolicLink();
}
