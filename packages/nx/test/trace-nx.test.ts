/**
 * Issue 14 point 9 — the build timeline of a real `nx run-many` (Nx 24, no daemon) on the fixture
 * workspace with kiln's plugin registered (`addBuildTargets`: kiln's build and codegraph executors):
 * with `KILN_TRACE=FILE` set, every process of the run — each task's (run at once) and the plugin
 * worker's — appends to the one file, which the independent validator
 * (tools/testing/trace-event-format.mjs) accepts: a process per task, named by its task id, each capture
 * complete, the compile phases in the build, the export's in the codegraph, all on one timeline (the
 * plugin's keys are computed before any task starts). The CLI commands that work on a workspace
 * (`kiln keys`, `kiln affected`) trace there too.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, createWorkspace, disposeAll, type Workspace } from '../../../tools/testing/workspace.mjs';
import { checkTrace } from '../../../tools/testing/trace-event-format.mjs';

let ws: Workspace;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-trace-nx-'));
  // What `nx g @kiln/nx:init --addBuildTargets` registers (the generator has its own tests), written directly.
  ws = await createWorkspace('workspace-basic', {
    prepare: async (w) => {
      await w.removePackageNxConfig();
      await w.editJson('nx.json', (nx) => {
        nx.plugins = [{ plugin: '@kiln/nx', options: { addBuildTargets: true } }];
      });
      await w.write('.gitignore', 'node_modules\n.nx\ndist\n');
    },
  });
}, 300_000);

afterAll(async () => {
  await disposeAll();
  await rm(scratch, { recursive: true, force: true });
});

/**
 * The trace once every process of the run has closed its capture: Nx may return before a detached
 * plugin worker has written its last record (give it up to 5 s; a capture still open then is reported).
 */
async function traceOf(file: string) {
  let checked = checkTrace(await readFile(file, 'utf8'));
  for (let i = 0; i < 50 && checked.processes.some((p) => p.state === 'cut'); i++) {
    await new Promise((r) => setTimeout(r, 100));
    checked = checkTrace(await readFile(file, 'utf8'));
  }
  expect(checked.errors).toEqual([]);
  return checked.processes;
}

describe('KILN_TRACE over a real nx run-many', () => {
  it('one run, one merged trace: a complete capture per task and the plugin, each with its phases, on one timeline', async () => {
    const file = join(scratch, 'run-many.json');
    const before = Date.now() * 1000;
    const run = await ws.runNx(['run-many', '-t', 'build,codegraph', '--projects=@fx/base'], { env: { KILN_TRACE: file } });
    const after = Date.now() * 1000;
    const tasks = ['@fx/base:build', '@fx/base:codegraph'];
    expect(Object.keys(run.tasks).sort()).toEqual(tasks);
    expect(run.executed.sort()).toEqual(tasks);

    const processes = await traceOf(file);
    for (const p of processes) expect(p.state, `${p.name}: ${JSON.stringify(p.captures)}`).toBe('complete');
    const byName = new Map(processes.map((p) => [p.name, p]));
    for (const t of tasks) expect(byName.has(t), `${t} in ${[...byName.keys()].join(', ')}`).toBe(true);
    expect(byName.has('nx plugin @kiln/nx')).toBe(true);
    // Processes of one run, each its own pid.
    expect(new Set(processes.map((p) => p.pid)).size).toBe(processes.length);

    for (const t of tasks.filter((t) => t.endsWith(':build'))) {
      const names = new Set(byName.get(t)!.spans.map((s) => s.name));
      for (const n of ['nx build', 'compile', 'config', 'program', 'check', 'emit', 'write']) expect(names, `${t} ${n}`).toContain(n);
      expect(byName.get(t)!.spans.find((s) => s.name === 'nx build')!.args).toMatchObject({ success: true });
    }
    for (const t of tasks.filter((t) => t.endsWith(':codegraph'))) {
      const names = new Set(byName.get(t)!.spans.map((s) => s.name));
      for (const n of ['nx codegraph', 'graph export', 'digest', 'lookup', 'graph check', 'graph build']) expect(names, `${t} ${n}`).toContain(n);
    }
    expect(byName.get('nx plugin @kiln/nx')!.spans.map((s) => s.name)).toContain('createNodes');
    // One timeline: every span of every process lies within the run (give or take the wall clock's
    // error between processes), and Nx computed the project graph (the plugin's keys) before it ran
    // any task.
    const slack = 50_000;
    for (const p of processes) for (const s of p.spans) expect(s.ts >= before - slack && s.ts + s.dur <= after + slack, `${p.name} ${s.name}`).toBe(true);
    const graph = byName.get('nx plugin @kiln/nx')!.spans.find((s) => s.name === 'createNodes')!;
    for (const t of tasks) expect(byName.get(t)!.spans.find((s) => s.name.startsWith('nx '))!.ts, t).toBeGreaterThanOrEqual(graph.ts + graph.dur);
  });

  it('kiln keys and kiln affected --trace on the workspace append their captures, with the keys and digests inside', async () => {
    const file = join(scratch, 'cli.json');
    const bin = resolve(__dirname, '../../cli/bin/kiln.js');
    const kiln = (...args: string[]) => spawnSync(process.execPath, [bin, ...args, '--trace', file], { cwd: ws.root, encoding: 'utf8', env: cleanEnv({ KILN_STORE: join(scratch, 'store') }) });
    const keys = kiln('keys', '.', '--no-record');
    expect(keys.status, keys.stderr).toBe(0);
    await ws.edit('libs/base/src/math.ts', (t) => `${t}\nexport const traced = 1;\n`);
    const affected = kiln('affected', '--base', 'HEAD', '-t', 'build', '--format', 'projects');
    expect(affected.status, affected.stderr).toBe(0);
    expect(affected.stdout).toContain('@fx/base');
    const processes = await traceOf(file);
    expect(processes.map((p) => [p.name, p.state])).toEqual([
      ['kiln keys .', 'complete'],
      ['kiln affected', 'complete'],
    ]);
    const [k, a] = processes.map((p) => new Set(p.spans.map((s) => s.name)));
    for (const n of ['kiln keys', 'keys', 'digest', 'lookup']) expect(k, n).toContain(n);
    for (const n of ['kiln affected', 'affected', 'digest']) expect(a, n).toContain(n);
  });
});
