/**
 * Remote cache (SPEC §5): kiln keys are Nx task hashes, so any Nx remote cache shares semantic hits.
 * Two clones at different absolute paths compute identical task hashes; with Nx's self-hosted remote
 * cache served on loopback, the second clone gets remote hits for what the first built — also after a
 * comment-only commit, which kiln keys identically — and the restored library runs there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneWorkspace, createWorkspace, disposeAll, type Workspace } from '../../../tools/testing/workspace.mjs';
import { startCacheServer, type CacheServer } from '../../../tools/testing/nx-cache-server.mjs';

const TASKS = ['base', 'left', 'right', 'top', 'tail'].map((l) => `@fx/${l}:build`).sort();
const BUILD = ['run-many', '-t', 'build'];
const EXPECTED = 'Hello, Ada! (left) | level=2 | label=#2 | top:2 | x6=42 | tail';

let server: CacheServer;
let first: Workspace;
let second: Workspace;

beforeAll(async () => {
  server = await startCacheServer({ token: 'kiln-test-token' });
  first = await createWorkspace('workspace-basic', { prepare: (w) => w.removePackageNxConfig() });
  expect((await first.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive'])).code).toBe(0);
  await first.commit('register kiln');
  second = await cloneWorkspace(first);
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await server?.close();
});

describe('kiln keys through an Nx remote cache', () => {
  it('two clones at different paths compute identical task hashes', async () => {
    expect(second.root).not.toBe(first.root);
    const [a, b] = await Promise.all([first.hashes({ targets: ['build'] }), second.hashes({ targets: ['build'] })]);
    expect(Object.keys(a).sort()).toEqual(TASKS);
    for (const t of TASKS) expect(a[t], t).toMatch(/\S/);
    expect(b).toEqual(a);
  });

  it('the second clone gets remote hits for what the first built, and the restored outputs run', async () => {
    const built = await first.runNx(BUILD, { env: server.env });
    expect(built.executed.sort()).toEqual(TASKS);
    expect((await server.hashes()).length).toBeGreaterThanOrEqual(TASKS.length);
    const restored = await second.runNx(BUILD, { env: server.env });
    expect(restored.remoteHits.sort()).toEqual(TASKS);
    expect(restored.hashes).toEqual(built.hashes);
    expect((await second.node(`import { run } from '@fx/tail'; console.log(run(' Ada '));`)).trim()).toBe(EXPECTED);
  });

  it('after a comment-only commit in the first clone, the second still gets remote hits', async () => {
    await first.edit('libs/base/src/greet.ts', ['export function shout', '// Louder.\nexport function shout']);
    await first.commit('comment only');
    const again = await first.runNx(BUILD, { env: server.env });
    expect(again.localHits.sort()).toEqual(TASKS); // same kiln keys: nothing to build
    await second.pull();
    await second.clearLocalCache();
    await second.cleanOutputs();
    const pulled = await second.runNx(BUILD, { env: server.env });
    expect(pulled.remoteHits.sort()).toEqual(TASKS);
    expect((await second.node(`import { run } from '@fx/tail'; console.log(run(' Ada '));`)).trim()).toBe(EXPECTED);
  });

  it('a real change misses in both clones (the hits above were not a broken key)', async () => {
    await first.edit('libs/base/src/math.ts', ['return n * 2;', 'return n + n + 0;']);
    await first.commit('body change');
    const changed = await first.runNx(BUILD, { env: server.env });
    expect(changed.executed).toEqual(['@fx/base:build']);
    await second.pull();
    const pulled = await second.runNx(BUILD, { env: server.env });
    expect(pulled.remoteHits).toContain('@fx/base:build');
    expect(pulled.statuses['@fx/tail:build']).not.toBe('executed');
  });
});
