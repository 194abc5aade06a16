/**
 * Issue 15, point 8 — publishing for real. Through real `nx` runs of kiln's plugin (addBuildTargets,
 * hence the inferred `pack` targets) on the fixture workspace, a real Verdaccio on loopback (a temporary
 * config and storage, no uplinks: nothing leaves the machine), real `npm publish` / `npm install`, and
 * the real `kiln` CLI and @kiln/runtime in a consumer project that has neither the packages' sources nor
 * their built JavaScript:
 *   - `nx run-many -t build,pack` writes npm's tarballs into dist/packs/<projectRoot>, carrying the
 *     manifest, JS, .d.ts, kiln.rep and the maps; a comment-only edit is a hit of build AND pack, a
 *     `version` bump reruns pack (the tarball's name and manifest move with it);
 *   - `files` that would leave kiln.rep and the maps out fails the pack (KILN_PACK_INCOMPLETE), no tarball;
 *   - the two tarballs are published with `npm publish`, installed by a consumer from that registry, their
 *     `dist/*.js` deleted, and their exports called through the representation (`kiln call`, and
 *     @kiln/runtime directly) with the results of the built JS (computed before publishing). @fx/left's
 *     payloads import @fx/base, an import the runtime resolves through @fx/base's own representation
 *     (RFC 123: by identity; neither package's JS is present);
 *   - a tarball whose kiln.rep declares a future format version is refused, naming package, version and
 *     requirement (KILN_REP_UNSUPPORTED_VERSION), and `kiln inspect representation` says "unreadable version".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, createWorkspace, disposeAll, exec, KILN_ROOT, type Workspace } from '../../../tools/testing/workspace.mjs';

const KILN = join(KILN_ROOT, 'packages/cli/bin/kiln.js');
const VERDACCIO = join(KILN_ROOT, 'node_modules/verdaccio/bin/verdaccio');
const RUNTIME = join(KILN_ROOT, 'packages/runtime/dist/index.js');
const LIBS = ['base', 'left'] as const;

/** The calls made through the representation, and (filled before publishing) what the built JS returns. */
const CALLS: { surface: string; args: unknown[] }[] = [
  { surface: '@fx/base#greet', args: ['  Ada   Lovelace '] },
  { surface: '@fx/base#shout', args: ['grace  hopper'] },
  { surface: '@fx/base#double', args: [21] },
  { surface: '@fx/base#makeLabel', args: [7] },
  { surface: '@fx/base#describeLevel', args: [2] },
];
/** Calls into @fx/left, whose payloads import @fx/base: a dependency stays an import the consumer resolves (its JS). */
const LEFT_CALLS: { surface: string; args: unknown[] }[] = [
  { surface: '@fx/left#leftLevel', args: [] },
  { surface: '@fx/left#leftGreeting', args: [' Bob '] },
  { surface: '@fx/left#leftLabel', args: [] },
];

let ws: Workspace;
let scratch: string;
let verdaccio: ChildProcess | undefined;
let registry: string;
let npmrc: string;
const expected = new Map<string, unknown>();
const timings: Record<string, number> = {};

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => done(port));
    });
  });
}

async function startVerdaccio(dir: string): Promise<string> {
  const port = await freePort();
  const config = join(dir, 'verdaccio.yaml');
  // No uplinks: a package not published here is a 404, never a request to the internet.
  await writeFile(
    config,
    [
      `storage: ${JSON.stringify(join(dir, 'storage'))}`,
      'auth:',
      '  htpasswd:',
      `    file: ${JSON.stringify(join(dir, 'htpasswd'))}`,
      '    max_users: -1',
      'uplinks: {}',
      'packages:',
      "  '@fx/*':",
      '    access: $all',
      '    publish: $all $anonymous',
      "  '**':",
      '    access: $all',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  verdaccio = spawn(process.execPath, [VERDACCIO, '--config', config, '--listen', `127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  verdaccio.stdout!.on('data', (d) => (log += d));
  verdaccio.stderr!.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/`;
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (verdaccio.exitCode !== null) throw new Error(`verdaccio exited ${verdaccio.exitCode}:\n${log}`);
    try {
      const r = await fetch(`${url}-/ping`);
      if (r.ok) return url;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`verdaccio did not answer on ${url}:\n${log}`);
}

function stopVerdaccio(): Promise<void> {
  const v = verdaccio;
  verdaccio = undefined;
  if (!v || v.exitCode !== null || v.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => v.kill('SIGKILL'), 5000);
    v.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    v.kill('SIGTERM');
  });
}
// A run that dies before afterAll leaves no registry behind.
process.once('exit', () => verdaccio?.kill('SIGKILL'));

/** npm with the temporary registry, auth and cache: nothing read from or written to the user's npm setup. */
const npmEnv = () => cleanEnv({ npm_config_userconfig: npmrc, npm_config_cache: join(scratch, 'npm-cache'), npm_config_registry: registry, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' });
const npm = (args: string[], cwd: string) => exec('npm', args, { cwd, env: npmEnv(), timeoutMs: 120_000 });
const kiln = (args: string[], cwd: string) => exec(process.execPath, [KILN, ...args], { cwd, env: cleanEnv(), timeoutMs: 60_000 });
/** The package and version of a kiln.rep: the u32 prefix length at byte 12, then two u16-length strings. */
function labelOf(b: Buffer): { pkg: string; version: string } {
  const at = b.readUInt32LE(12);
  const n = b.readUInt16LE(at);
  const pkg = b.subarray(at + 2, at + 2 + n).toString('utf8');
  const m = b.readUInt16LE(at + 2 + n);
  return { pkg, version: b.subarray(at + 4 + n, at + 4 + n + m).toString('utf8') };
}

const tarball = (lib: string, version = '0.1.0') => ws.path(`dist/packs/libs/${lib}/fx-${lib}-${version}.tgz`);
async function tarList(file: string): Promise<string[]> {
  const r = await exec('tar', ['tzf', file], { cwd: scratch });
  expect(r.code, r.output).toBe(0);
  return r.stdout.trim().split('\n').sort();
}
const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
  const t = Date.now();
  try {
    return await f();
  } finally {
    timings[name] = Date.now() - t;
  }
};

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-publish-'));
  npmrc = join(scratch, '.npmrc');
  const [, url] = await Promise.all([
    timed('workspace', async () => {
      ws = await createWorkspace('workspace-basic', {
        prepare: async (w) => {
          await w.removePackageNxConfig();
          // What a published library declares: only its build output (README/LICENSE/package.json by npm's rules).
          for (const lib of LIBS) await w.editJson(`libs/${lib}/package.json`, (m: Record<string, unknown>) => ({ ...m, files: ['dist'] }));
          await w.write('libs/base/README.md', '# @fx/base\n');
        },
      });
      const init = await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
      expect(init.code, init.output).toBe(0);
      await ws.commit('kiln');
    }),
    timed('verdaccio start', () => startVerdaccio(scratch)),
  ]);
  registry = url;
  // A fake token: npm refuses to publish without one; Verdaccio lets anonymous users publish @fx/*.
  await writeFile(npmrc, `registry=${registry}\n//${registry.replace(/^http:\/\//, '')}:_authToken=fake-token-for-tests\n`);
}, 300_000);

afterAll(async () => {
  await stopVerdaccio();
  await disposeAll();
  if (scratch) await rm(scratch, { recursive: true, force: true });
  console.log(`publish.test timings (ms): ${JSON.stringify(timings)}`);
});

describe('the inferred pack target', () => {
  it('packs what npm publishes, with kiln.rep, .d.ts and maps; a comment edit is a hit of build and pack, a version bump reruns pack', async () => {
    const first = await timed('build+pack', () => ws.runNx(['run-many', '-t', 'build,pack', '-p', '@fx/base', '@fx/left']));
    expect(first.code, first.output).toBe(0);
    for (const lib of LIBS) {
      expect(first.statuses[`@fx/${lib}:pack`]).toBe('executed');
      expect(readdirSync(ws.path(`dist/packs/libs/${lib}`))).toEqual([`fx-${lib}-0.1.0.tgz`]);
      const files = await tarList(tarball(lib));
      for (const f of ['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/index.js.map', 'package/dist/kiln.rep']) expect(files, lib).toContain(f);
      expect(files.filter((f) => f.startsWith('package/src/'))).toEqual([]);
    }
    expect(await tarList(tarball('base'))).toContain('package/README.md');
    expect(first.output).toMatch(/kiln pack libs\/base:[\s\S]*dist\/kiln\.rep[\s\S]*@fx\/base@0\.1\.0: dist\/packs\/libs\/base\/fx-base-0\.1\.0\.tgz \(\d+ files/);
    const packed = await readFile(tarball('base'));

    // Comment-only edit: kiln's build key holds, Nx restores the build's outputs, the pack's inputs are unchanged.
    await ws.edit('libs/base/src/greet.ts', (s) => s.replace('export function shout', '// loud\nexport function shout'));
    const hit = await ws.runNx(['run-many', '-t', 'build,pack', '-p', '@fx/base']);
    expect(hit.code, hit.output).toBe(0);
    expect(hit.statuses['@fx/base:build']).toBe('local');
    expect(hit.statuses['@fx/base:pack']).toBe('local');
    expect(await readFile(tarball('base'))).toEqual(packed);

    // The version is part of the key: a bump reruns pack, and the tarball carries the new version only.
    await ws.editJson('libs/base/package.json', (m: Record<string, unknown>) => ({ ...m, version: '0.1.1' }));
    const bumped = await ws.runNx(['run-many', '-t', 'build,pack', '-p', '@fx/base']);
    expect(bumped.code, bumped.output).toBe(0);
    expect(bumped.statuses['@fx/base:pack']).toBe('executed');
    expect(readdirSync(ws.path('dist/packs/libs/base'))).toEqual(['fx-base-0.1.1.tgz']);
    // The build is keyed without the version (a hit), so its kiln.rep is unstamped; the tarball's
    // carries 0.1.1. Read at the offsets SPEC §7 fixes for every format (not with kiln's reader).
    expect(bumped.statuses['@fx/base:build']).toBe('local');
    const stage = await mkdtemp(join(tmpdir(), 'kiln-stamp-'));
    const x = await exec('tar', ['-xzf', tarball('base', '0.1.1'), '-C', stage], { cwd: stage });
    expect(x.code, x.stderr).toBe(0);
    expect(labelOf(await readFile(join(stage, 'package/dist/kiln.rep')))).toEqual({ pkg: '@fx/base', version: '0.1.1' });
    expect(labelOf(await readFile(ws.path('libs/base/dist/kiln.rep')))).toEqual({ pkg: '@fx/base', version: '' });
    await rm(stage, { recursive: true, force: true });

    // Back to 0.1.0: the first tarball is restored from the cache, alone in its folder.
    await ws.editJson('libs/base/package.json', (m: Record<string, unknown>) => ({ ...m, version: '0.1.0' }));
    const back = await ws.runNx(['run-many', '-t', 'build,pack', '-p', '@fx/base']);
    expect(back.statuses['@fx/base:pack']).toBe('local');
    expect(readdirSync(ws.path('dist/packs/libs/base'))).toEqual(['fx-base-0.1.0.tgz']);
    expect(await readFile(tarball('base'))).toEqual(packed);
  }, 300_000);

  it('refuses `files` that would leave out kiln.rep and the maps (KILN_PACK_INCOMPLETE), writing no tarball', async () => {
    const manifest = await ws.read('libs/left/package.json');
    await ws.editJson('libs/left/package.json', (m: Record<string, unknown>) => ({ ...m, files: ['dist/*.js', 'dist/*.d.ts'] }));
    try {
      const r = await ws.runNx(['run', '@fx/left:pack'], { allowFailure: true });
      expect(r.code).not.toBe(0);
      expect(r.output).toContain('KILN_PACK_INCOMPLETE');
      expect(r.output).toMatch(/leaves dist\/kiln\.rep \(the package's executable representation\) out of the tarball/);
      expect(r.output).toMatch(/leaves dist\/index\.js\.map \(/);
      expect(r.output).toContain('Widen `files`');
      expect(existsSync(ws.path('dist/packs/libs/left')) ? readdirSync(ws.path('dist/packs/libs/left')) : []).toEqual([]);
    } finally {
      await ws.write('libs/left/package.json', manifest);
    }
    const again = await ws.runNx(['run', '@fx/left:pack']);
    expect(again.code, again.output).toBe(0);
    expect(existsSync(tarball('left'))).toBe(true);
  }, 300_000);
});

describe('published to a registry, called by a consumer without the packages’ code', () => {
  let consumer: string;

  it('npm publish of the packed tarballs, npm install from the registry, calls through the representation equal the built JS', async () => {
    // The built JS's answers, in the workspace, before anything is published.
    const out = await ws.node(
      `const mods = { '@fx/base': await import('@fx/base'), '@fx/left': await import('@fx/left') };\n` +
        `const calls = ${JSON.stringify([...CALLS, ...LEFT_CALLS])};\n` +
        `console.log(JSON.stringify(calls.map(({ surface, args }) => { const [p, e] = surface.split('#'); return mods[p][e](...args); })));`,
    );
    const results = JSON.parse(out) as unknown[];
    [...CALLS, ...LEFT_CALLS].forEach((c, i) => expected.set(c.surface, results[i]));
    expect(expected.get('@fx/base#greet')).toBe('Hello, Ada Lovelace!');

    await timed('publish', async () => {
      for (const lib of LIBS) {
        const r = await npm(['publish', tarball(lib), '--registry', registry], scratch);
        expect(r.code, r.output).toBe(0);
      }
    });
    const view = await npm(['view', '@fx/left', 'version', 'dependencies', '--json', '--registry', registry], scratch);
    expect(view.code, view.output).toBe(0);
    expect(JSON.parse(view.stdout)).toMatchObject({ version: '0.1.0', dependencies: { '@fx/base': '^0.1.0' } });

    consumer = join(scratch, 'consumer');
    await mkdir(consumer);
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '1.0.0', dependencies: { '@fx/base': '0.1.0', '@fx/left': '0.1.0' } }, null, 2));
    const install = await timed('install', () => npm(['install', '--registry', registry, '--no-package-lock'], consumer));
    expect(install.code, install.output).toBe(0);
    for (const lib of LIBS) {
      const dir = join(consumer, 'node_modules/@fx', lib);
      expect(existsSync(join(dir, 'dist/kiln.rep')), lib).toBe(true);
      expect(existsSync(join(dir, 'src')), lib).toBe(false);
      // No JavaScript of the package: only the representation can answer.
      for (const f of readdirSync(join(dir, 'dist'))) if (/\.(c|m)?js$/.test(f)) await rm(join(dir, 'dist', f));
      expect(readdirSync(join(dir, 'dist')).filter((f) => /\.(c|m)?js$/.test(f))).toEqual([]);
    }
    const imported = await exec(process.execPath, ['--input-type=module', '-e', "await import('@fx/base')"], { cwd: consumer, env: cleanEnv() });
    expect(imported.code, 'the package JS is really gone').not.toBe(0);

    await timed('kiln call', async () => {
      for (const { surface, args } of CALLS) {
        const r = await kiln(['call', surface, '--args', JSON.stringify(args), '--format', 'json'], consumer);
        expect(r.code, `${surface}: ${r.output}`).toBe(0);
        expect(JSON.parse(r.stdout), surface).toEqual({ surface, result: expected.get(surface) });
      }
    });

    // @fx/left's payloads import @fx/base: that import resolves through @fx/base's own representation
    // (its JS is gone too), so neither package's JavaScript is loaded.
    for (const { surface, args } of LEFT_CALLS) {
      const r = await kiln(['call', surface, '--args', JSON.stringify(args), '--format', 'json'], consumer);
      expect(r.code, `${surface}: ${r.output}`).toBe(0);
      expect(JSON.parse(r.stdout), surface).toEqual({ surface, result: expected.get(surface) });
    }
    expect(readdirSync(join(consumer, 'node_modules/@fx/base/dist')).filter((f) => /\.(c|m)?js$/.test(f))).toEqual([]);
    expect(readdirSync(join(consumer, 'node_modules/@fx/left/dist')).filter((f) => /\.(c|m)?js$/.test(f))).toEqual([]);

    // @kiln/runtime directly, as a tool runner would use it.
    const script = join(consumer, 'call.mjs');
    await writeFile(
      script,
      `import { createConsumer, openRepresentation, representationPath } from ${JSON.stringify(RUNTIME)};\n` +
        `import { join } from 'node:path';\nconst out = [];\n` +
        `for (const { surface, args } of ${JSON.stringify([...CALLS, ...LEFT_CALLS])}) {\n` +
        `  const pkg = surface.split('#')[0];\n` +
        `  const dir = join(import.meta.dirname, 'node_modules', pkg);\n` +
        `  const reader = openRepresentation(representationPath(dir));\n` +
        `  try { out.push(await createConsumer(reader, { requireFrom: dir }).call(surface, args)); } finally { reader.close(); }\n` +
        `}\nconsole.log(JSON.stringify(out));\n`,
    );
    const direct = await exec(process.execPath, [script], { cwd: consumer, env: cleanEnv() });
    expect(direct.code, direct.output).toBe(0);
    expect(JSON.parse(direct.stdout)).toEqual([...CALLS, ...LEFT_CALLS].map((c) => expected.get(c.surface)));
  }, 300_000);

  it('a tarball whose kiln.rep declares a future format version is refused, naming package, version and requirement; inspect says "unreadable version"', async () => {
    const unpack = join(scratch, 'future');
    await mkdir(unpack);
    const x = await exec('tar', ['xzf', tarball('base'), '-C', unpack], { cwd: scratch });
    expect(x.code, x.output).toBe(0);
    const repFile = join(unpack, 'package/dist/kiln.rep');
    const rep = await readFile(repFile);
    expect(rep.readUInt32LE(8)).toBe(2); // the format version (packages/runtime/src/format.ts: REPRESENTATION_FORMAT)
    rep.writeUInt32LE(99, 8);
    await writeFile(repFile, rep);
    const packed = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', unpack], join(unpack, 'package'));
    expect(packed.code, packed.output).toBe(0);
    const future = join(unpack, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);

    const call = await kiln(['call', '@fx/base#greet', '--args', '["x"]', '--package', future], scratch);
    expect(call.code).not.toBe(0);
    expect(call.output).toContain('KILN_REP_UNSUPPORTED_VERSION');
    expect(call.output).toContain('@fx/base@0.1.0');
    expect(call.output).toMatch(/format 99/);
    expect(call.output).toMatch(/reads format 2/);
    expect(call.output).not.toContain('Hello');

    const inspect = await kiln(['inspect', 'representation', future], scratch);
    expect(inspect.code, inspect.output).toBe(0);
    expect(inspect.stdout).toContain('unreadable version');
    expect(inspect.stdout).toContain('format 99');
    const json = await kiln(['inspect', 'representation', future, '--format', 'json'], scratch);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'unreadable-version', found_format: 99, package: '@fx/base' });
  }, 120_000);
});
