/**
 * Test infrastructure for the Nx end-to-end and remote-cache tests (issue 3, points 5 and 6):
 * the self-hosted remote cache server (tools/testing/nx-cache-server.mjs), the workspace harness
 * (tools/testing/workspace.mjs) and the fixture (fixtures/workspace-basic), exercised with plain Nx
 * — no kiln — so a failure here is the harness's or Nx's, never kiln's.
 */
import { request } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCacheServer, type CacheServer } from '../testing/nx-cache-server.mjs';
import {
  cloneWorkspace,
  createWorkspace,
  disposeAll,
  isSymlink,
  parseTaskLines,
  type NxRunResult,
  type Workspace,
} from '../testing/workspace.mjs';

const BUILDS = ['@fx/base:build', '@fx/left:build', '@fx/right:build', '@fx/tail:build', '@fx/top:build'];
const all = (outcome: string) => Object.fromEntries(BUILDS.map((id) => [id, outcome]));
/** What `run(' Ada ')` of the built @fx/tail returns (it goes through every library). */
const TAIL_OUTPUT = 'Hello, Ada! (left) | level=2 | label=#2 | top:2 | x6=42 | tail';
const runTail = (ws: Workspace) =>
  ws.node(`const { run } = await import('@fx/tail'); process.stdout.write(run(' Ada '));`);

describe('nx-cache-server: the Nx self-hosted remote cache HTTP API', () => {
  let server: CacheServer;
  const put = (hash: string, body: string | Buffer, token: string | null = 'rw') =>
    fetch(`${server.url}/v1/cache/${hash}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });
  const get = (hash: string, token: string | null = 'ro') =>
    fetch(`${server.url}/v1/cache/${hash}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    server = await startCacheServer({ token: 'rw', readOnlyToken: 'ro' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('binds 127.0.0.1 on an ephemeral port and exposes the env Nx reads', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
    expect(server.env).toEqual({
      NX_SELF_HOSTED_REMOTE_CACHE_SERVER: server.url,
      NX_SELF_HOSTED_REMOTE_CACHE_ACCESS_TOKEN: 'rw',
    });
  });

  it('401 without or with a wrong bearer token, on GET and PUT', async () => {
    expect((await get('h1', null)).status).toBe(401);
    expect((await get('h1', 'nope')).status).toBe(401);
    expect((await put('h1', 'x', null)).status).toBe(401);
    const r = await put('h1', 'x', 'nope');
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await server.hashes()).toEqual([]);
  });

  it('404 on a miss, 200 on store, the same bytes back, 409 on overwrite', async () => {
    expect((await get('h2')).status).toBe(404);
    const blob = Buffer.from([0x1f, 0x8b, 0, 1, 2, 3, 255]);
    expect((await put('h2', blob)).status).toBe(200);
    const hit = await get('h2');
    expect(hit.status).toBe(200);
    expect(hit.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await hit.arrayBuffer())).toEqual(blob);
    expect((await put('h2', 'other')).status).toBe(409);
    expect(Buffer.from(await (await get('h2', 'rw')).arrayBuffer())).toEqual(blob);
  });

  it('403 when a read-only token writes', async () => {
    expect((await put('h3', 'x', 'ro')).status).toBe(403);
    expect((await get('h3')).status).toBe(404);
  });

  it('400 without Content-Length and for an unsafe hash; 405 for other methods', async () => {
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${server.url}/v1/cache/h4`,
        { method: 'PUT', headers: { authorization: 'Bearer rw', 'transfer-encoding': 'chunked' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('abc');
    });
    expect(chunked).toBe(400);
    expect((await put('..%2Fescape', 'x')).status).toBe(400);
    expect((await put('.hidden', 'x')).status).toBe(400);
    expect((await fetch(`${server.url}/v1/cache/h5`, { method: 'DELETE', headers: { authorization: 'Bearer rw' } })).status).toBe(405);
    expect(await server.hashes()).toEqual(['h2']);
  });

  it('racing PUTs of one hash: exactly one 200, the rest 409', async () => {
    const statuses = await Promise.all([1, 2, 3, 4, 5].map((i) => put('h6', `body-${i}`).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(4);
  });

  it('close() stops listening and removes its blob dir', async () => {
    const other = await startCacheServer();
    expect(other.env).toEqual({ NX_SELF_HOSTED_REMOTE_CACHE_SERVER: other.url }); // no auth configured
    expect((await fetch(`${other.url}/v1/cache/x`, { method: 'PUT', body: 'y' })).status).toBe(200);
    await other.close();
    expect(existsSync(other.dir)).toBe(false);
    await expect(fetch(`${other.url}/v1/cache/x`)).rejects.toThrow();
  });
});

describe('parseTaskLines', () => {
  it('reads the cache markers of static output', () => {
    const out = [
      '> nx run @fx/base:build',
      '> tsc -p libs/base/tsconfig.lib.json',
      '> nx run @fx/left:build  [local cache]',
      '\x1b[2m>\x1b[22m nx run @fx/right:build  \x1b[2m[remote cache]\x1b[22m',
      '✔  nx run @fx/top:build  [existing outputs match the cache, left as is]',
    ].join('\n');
    expect(parseTaskLines(out)).toEqual({
      '@fx/base:build': 'executed',
      '@fx/left:build': 'local',
      '@fx/right:build': 'remote',
      '@fx/top:build': 'local',
    });
  });
});

describe('workspace harness + remote cache, plain Nx on fixtures/workspace-basic', () => {
  let server: CacheServer;
  let a: Workspace;
  let b: Workspace;
  let first: NxRunResult;
  let predicted: Record<string, string | null>;

  beforeAll(async () => {
    server = await startCacheServer({ token: 'kiln-test-token' });
    a = await createWorkspace('workspace-basic');
  });
  afterAll(async () => {
    await server?.close();
    await disposeAll();
  });

  it('creates a committed git repo with linked node_modules', async () => {
    expect(await a.git('status', '--porcelain')).toBe('');
    expect(await a.git('rev-list', '--count', 'HEAD')).toBe('1');
    expect(await a.git('branch', '--show-current')).toBe('main');
    expect(await a.git('ls-files', 'node_modules', 'libs/base/dist')).toBe(''); // ignored, untracked
    expect(await isSymlink(a.path('node_modules/nx'))).toBe(true);
    expect(await isSymlink(a.path('node_modules/@fx/base'))).toBe(true);
    expect(readFileSync(a.path('node_modules/@fx/base/package.json'), 'utf8')).toContain('"@fx/base"');
    expect((await a.packages()).map((p) => p.name)).toEqual(['@fx/base', '@fx/left', '@fx/right', '@fx/tail', '@fx/top']);
  });

  it('hashes every task without running anything', async () => {
    predicted = await a.hashes();
    expect(Object.keys(predicted)).toEqual(BUILDS);
    for (const h of Object.values(predicted)) expect(h).toMatch(/^\d+$/);
    expect(new Set(Object.values(predicted)).size).toBe(BUILDS.length);
    expect(existsSync(a.path('libs/base/dist'))).toBe(false);
    expect(await a.hashOf('@fx/top:build')).toBe(predicted['@fx/top:build']);
  });

  it('first run: every build executes, with the predicted hashes, and is stored remotely', async () => {
    first = await a.runNx(['run-many', '-t', 'build'], { env: server.env });
    expect(first.code).toBe(0);
    expect(first.statuses).toEqual(all('executed'));
    for (const id of BUILDS) {
      expect(first.tasks[id].code).toBe(0);
      expect(first.tasks[id].terminalMarker).toBe('executed');
    }
    expect(first.hashes).toEqual(predicted);
    expect(await server.hashes()).toEqual(Object.values(predicted).sort());
    const puts = server.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.status)).toEqual(BUILDS.map(() => 200));
    expect(existsSync(a.path('libs/tail/dist/index.d.ts'))).toBe(true);
    expect(await runTail(a)).toBe(TAIL_OUTPUT);
  });

  it('second run: every build is a local cache hit, same hashes', async () => {
    server.resetRequests();
    const second = await a.runNx(['run-many', '-t', 'build'], { env: server.env });
    expect(second.statuses).toEqual(all('local'));
    for (const id of BUILDS) expect(second.tasks[id].terminalMarker).toBe('local');
    expect(second.hashes).toEqual(first.hashes);
    expect(server.requests).toEqual([]); // local hits never ask the remote cache
  });

  it('a clone at a different absolute path computes identical task hashes', async () => {
    b = await cloneWorkspace(a);
    expect(b.root).not.toBe(a.root);
    expect(b.root.length).not.toBe(a.root.length);
    expect(await b.head()).toBe(await a.head());
    expect(existsSync(b.cacheDir)).toBe(false); // empty local cache
    expect(await b.hashes()).toEqual(first.hashes);
  });

  it('the clone, with an empty local cache, gets every build from the remote cache, and the outputs run', async () => {
    server.resetRequests();
    const r = await b.runNx(['run-many', '-t', 'build'], { env: server.env });
    expect(r.statuses).toEqual(all('remote'));
    for (const id of BUILDS) expect(r.tasks[id].terminalMarker).toBe('remote');
    expect(r.hashes).toEqual(first.hashes);
    expect(server.requests.filter((q) => q.method === 'GET' && q.status === 200)).toHaveLength(BUILDS.length);
    expect(server.requests.filter((q) => q.method === 'PUT')).toEqual([]);
    expect(readFileSync(b.path('libs/base/dist/greet.d.ts'), 'utf8')).toBe(
      readFileSync(a.path('libs/base/dist/greet.d.ts'), 'utf8'),
    );
    expect(await runTail(b)).toBe(TAIL_OUTPUT);
  });

  it('a commit in the first clone, built there, reaches the second clone as remote hits', async () => {
    await a.edit('libs/base/src/greet.ts', ['return `Hello, ${normalize(name)}!`;', 'return `Hi, ${normalize(name)}!`;']);
    await a.commit('base: say hi');
    const built = await a.runNx(['run-many', '-t', 'build'], { env: server.env });
    expect(built.statuses).toEqual(all('executed')); // plain Nx: every dependent's hash moves too
    for (const id of BUILDS) expect(built.hashes[id]).not.toBe(first.hashes[id]);

    await b.pull();
    expect(await b.hashes()).toEqual(built.hashes);
    const r = await b.runNx(['run-many', '-t', 'build'], { env: server.env });
    expect(r.statuses).toEqual(all('remote'));
    expect(await runTail(b)).toBe(TAIL_OUTPUT.replace('Hello', 'Hi'));
  });

  it('without the server, a clone with a cleared local cache executes everything (the hits were remote)', async () => {
    await b.clearLocalCache();
    await b.cleanOutputs();
    const r = await b.runNx(['run-many', '-t', 'build']);
    expect(r.statuses).toEqual(all('executed'));
  });

  it('a failing task: nx exits non-zero, the task reports its exit code, runNx throws unless allowed', async () => {
    await b.write('libs/tail/src/broken.ts', 'export const n: number = "not a number";\n');
    await expect(b.runNx(['run-many', '-t', 'build'])).rejects.toThrow(/exited 1[\s\S]*TS2322/);
    const r = await b.runNx(['run-many', '-t', 'build'], { allowFailure: true });
    expect(r.code).not.toBe(0);
    expect(r.statuses['@fx/tail:build']).toBe('executed');
    expect(r.tasks['@fx/tail:build'].code).not.toBe(0);
    expect(r.localHits).toEqual(['@fx/base:build', '@fx/left:build', '@fx/right:build', '@fx/top:build']);
    expect(r.output).toContain('TS2322');
  });
});

describe('createWorkspace prepare hook', () => {
  afterAll(async () => {
    await disposeAll();
  });

  it('removePackageNxConfig drops the plain build targets before the first commit', async () => {
    const ws = await createWorkspace('workspace-basic', { prepare: (w) => w.removePackageNxConfig() });
    expect((await ws.readJson('libs/base/package.json')).nx).toBeUndefined();
    expect(await ws.git('status', '--porcelain')).toBe('');
    const r = await ws.runNx(['show', 'projects', '--with-target', 'build']);
    expect(r.stdout.trim()).toBe('');
    expect(await ws.hashes()).toEqual({});
    await ws.dispose();
    expect(existsSync(ws.root)).toBe(false);
  });
});
