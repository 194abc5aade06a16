/**
 * `kiln affected` as CI runs it, on the fixture Nx workspace (real git, real Nx): `--format projects`
 * gives the list `nx run-many --projects` takes, `--format json` the same records with reason chains,
 * and `--run` runs exactly the affected projects' targets through the workspace's own Nx (the task
 * statuses Nx reports are the judge) and exits with Nx's status.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, disposeAll, cleanEnv, type Workspace } from '../../../tools/testing/workspace.mjs';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
let ws: Workspace;

function kiln(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: ws.root, encoding: 'utf8', env: cleanEnv({ KILN_STORE: join(ws.root, '.kiln-store') }), timeout: 300_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(async () => {
  ws = await createWorkspace('workspace-basic');
  await ws.write('.gitignore', 'node_modules\n.nx\n.kiln-store\ndist\n');
  await ws.commit('ignore');
}, 120_000);
afterAll(disposeAll);

describe('kiln affected (CLI)', () => {
  it('a comment edit in the base library: nothing to build or test; --run says so and runs nothing', async () => {
    await ws.edit('libs/base/src/greet.ts', (s) => s.replace('// Greetings.', '// Greetings, politely.'));
    await ws.commit('comment');
    const p = kiln('affected', '--base', 'HEAD~1', '--head', 'HEAD', '-t', 'build,test', '--format', 'projects');
    expect(p.code, p.err).toBe(0);
    expect(p.out.trim()).toBe('');
    const run = kiln('affected', '--base', 'HEAD~1', '--head', 'HEAD', '-t', 'build', '--run');
    expect(run.code, run.err).toBe(0);
    expect(run.err).toContain('no project is affected; nothing to run');
  }, 300_000);

  it('a private body edit: the base library and everything above it, with reasons; --run builds exactly those', async () => {
    await ws.edit('libs/base/src/greet.ts', (s) => s.replace(".replace(/\\s+/g, ' ')", ".replace(/\\s+/g, '  ')"));
    await ws.commit('body');
    const p = kiln('affected', '--base', 'HEAD~1', '--head', 'HEAD', '-t', 'build', '--format', 'projects');
    expect(p.code, p.err).toBe(0);
    expect(p.out.trim()).toBe('@fx/base,@fx/left,@fx/right,@fx/tail,@fx/top');
    const j = JSON.parse(kiln('affected', '--base', 'HEAD~1', '--head', 'HEAD', '-t', 'build', '--format', 'json').out);
    expect(j.kind).toBe('kiln-affected');
    const tail = j.affected.find((a: { project: string }) => a.project === '@fx/tail');
    expect(tail.reasons[0][0]).toBe('@fx/tail:build');
    expect(tail.reasons[0].at(-1)).toMatch(/^@fx\/base\/\/src\/greet#normalize:function: /);
    const text = kiln('affected', '--base', 'HEAD~1', '--head', 'HEAD', '-t', 'build');
    expect(text.out).toContain('@fx/left:build ← @fx/base (dependency) ← @fx/base//src/greet#normalize:function');
    // Only the right library's file changes now (uncommitted): --run builds it and its dependents, nothing else.
    await ws.edit('libs/right/src/index.ts', (s) => `${s}\nexport const extra = 1;\n`);
    const run = kiln('affected', '--base', 'HEAD', '-t', 'build', '--run');
    expect(run.code, run.err).toBe(0);
    expect(run.err).toContain('run-many -t build --projects=@fx/right,@fx/tail,@fx/top');
    const stats = spawnSync('git', ['status', '--porcelain'], { cwd: ws.root, encoding: 'utf8' }).stdout;
    expect(stats).toContain('libs/right/src/index.ts');
    for (const lib of ['right', 'top', 'tail']) expect(ws.exists(`libs/${lib}/dist/index.js`), lib).toBe(true);
    // Nx ran the three projects' builds (and, by dependsOn ^build, the builds they depend on).
    expect(run.out.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Successfully ran target build for 3 projects/);
  }, 600_000);

  it('bad input: an unknown base is a coded error (exit 1), never an empty list', async () => {
    const r = kiln('affected', '--base', 'no-such-branch', '--format', 'projects');
    expect(r.code).toBe(1);
    expect(r.out.trim()).toBe('');
    expect(r.err).toContain('KILN_GIT_REF_UNKNOWN');
  }, 120_000);
});
