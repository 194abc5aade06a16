/**
 * Issue 11 points 1 and 3, with real Nx processes: kiln keys the build targets a workspace already
 * has. The fixture's libraries (base ← left, right ← top ← tail) each build with a plain
 * `nx:run-commands` tsc target in package.json `nx.targets`; `nx g @kiln/nx:init` (no options) is all
 * the user does. The targets keep their executor, command and outputs; the key rides in
 * `options.kiln`, the inputs leave out raw bytes and `AllExternalDependencies`. Every hit is judged
 * against a fresh build by the independent token judge (tools/lib/token-judge.mjs).
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, disposeAll, type Workspace } from '../../../tools/testing/workspace.mjs';
import { judgeOutputs } from '../../../tools/lib/token-judge.mjs';

const LIBS = ['base', 'left', 'right', 'top', 'tail'] as const;
type Lib = (typeof LIBS)[number];
const task = (lib: Lib) => `@fx/${lib}:build`;
const BUILD = ['run-many', '-t', 'build'];

let ws: Workspace;
let baseline: string;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-keyed-'));
  ws = await createWorkspace('workspace-basic');
  const init = await ws.runNx(['g', '@kiln/nx:init', '--no-interactive']);
  expect(init.code, init.output).toBe(0);
  baseline = await ws.commit('register kiln');
  const first = await ws.runNx(BUILD);
  expect(first.executed.sort()).toEqual(LIBS.map(task).sort());
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await rm(scratch, { recursive: true, force: true });
});

async function reset(): Promise<void> {
  await ws.git('reset', '--hard', baseline);
  await ws.git('clean', '-fdq', '-e', 'node_modules', '-e', '.nx');
}

/** Apply an edit, build; every hit's restored output must equal a fresh build's (token judge). */
async function buildAfter(edit: () => Promise<unknown>): Promise<{ hits: Lib[]; executed: Lib[] }> {
  await reset();
  await edit();
  const run = await ws.runNx(BUILD);
  const hits = LIBS.filter((l) => run.statuses[task(l)] === 'local' || run.statuses[task(l)] === 'remote');
  const executed = LIBS.filter((l) => run.statuses[task(l)] === 'executed');
  expect(hits.length + executed.length, run.output).toBe(LIBS.length);
  if (hits.length) {
    const restored = join(scratch, `restored-${Date.now()}`);
    for (const l of hits) await cp(ws.path(`libs/${l}/dist`), join(restored, l), { recursive: true });
    const fresh = await ws.runNx([...BUILD, '--skip-nx-cache']);
    expect(fresh.executed.length).toBe(LIBS.length);
    for (const l of hits) {
      const judged = await judgeOutputs(join(restored, l), ws.path(`libs/${l}/dist`));
      expect(judged.compared, `${l}: nothing compared`).toBeGreaterThan(0);
      expect(judged.differences, `${l}: a cache hit a fresh build does not reproduce`).toEqual([]);
    }
  }
  return { hits, executed };
}

describe("kiln keys the workspace's own build targets (real Nx, real git)", () => {
  it('the merged target keeps its executor and command, carries the key, and hashes no raw bytes or external dependencies', async () => {
    const show = await ws.runNx(['show', 'project', '@fx/left', '--json']);
    const project = JSON.parse(show.stdout.slice(show.stdout.indexOf('{')));
    expect(project.tags).toContain('kiln-keyed');
    const build = project.targets.build;
    expect(build.executor).toBe('nx:run-commands');
    expect(build.options.command).toBe('tsc -p libs/left/tsconfig.lib.json');
    expect(build.options.kiln.key).toMatch(/^[0-9a-f]{32}$/);
    expect(build.inputs).toEqual([{ externalDependencies: [] }]);
    expect(build.dependsOn).toEqual(['^build']);
    // The command ran unchanged: no --kiln option reached tsc (it would have failed).
    const nxJson = await ws.readJson('nx.json');
    expect(nxJson.plugins).toContain('@kiln/nx');
    expect(nxJson.targetDefaults.build.at(-1)).toEqual({ filter: { projects: ['tag:kiln-keyed'] }, inputs: [{ externalDependencies: [] }] });
  });

  it('a comment edit in the base package: every build is a hit, and equivalent', async () => {
    const { executed } = await buildAfter(() => ws.edit('libs/base/src/index.ts', (s) => `// a comment nobody compiles\n${s}`));
    expect(executed).toEqual([]);
  });

  it('a private body edit in the base package: only base rebuilds (tsc keeps dependencies external)', async () => {
    const { executed } = await buildAfter(() => ws.edit('libs/base/src/math.ts', (s) => s.replace('return n * 2;', 'return n + n;')));
    expect(executed).toEqual(['base']);
  });

  it('explain-miss: the key each task ran with was recorded after the run; Nx hashes no sources and no external dependencies besides it', async () => {
    await reset();
    await ws.runNx(BUILD);
    const bin = resolve(__dirname, '../../cli/bin/kiln.js');
    const r = spawnSync(process.execPath, [bin, 'explain-miss', '@fx/left:build', '--format', 'json'], { cwd: ws.root, encoding: 'utf8', env: { ...process.env, NX_DAEMON: 'false' } });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ status: 'hit', keyed: 'package.json#nx (nx:run-commands)' });
    expect(result.nx.external).toEqual([]);
    expect(result.nx.raw).toEqual([]);
    const lint = spawnSync(process.execPath, [bin, 'explain-miss', '@fx/left:lint', '--no-nx'], { cwd: ws.root, encoding: 'utf8' });
    expect(lint.stdout).toMatch(/not keyed by kiln/);
  });

  it('a dependency added to an unrelated package: only that package rebuilds (no AllExternalDependencies in the hash)', async () => {
    const { executed } = await buildAfter(() => ws.addAcornDevDependency('libs/tail'));
    expect(executed).toEqual(['tail']);
  });
});
