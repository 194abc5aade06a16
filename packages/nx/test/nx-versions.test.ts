/**
 * kiln on every Nx major it claims (issue 11, point 4), each from a real install out of the npm registry:
 * a fresh workspace per Nx version with kiln's packed tarball (tools/pack.mjs), nothing linked from this
 * repository. For Nx 21, 22, 23 and 24: `nx g @kiln/nx:init` registers the plugin, the plugin loads
 * (`nx graph --file`), kiln's inferred targets and keys and its dependency edge are in the graph, and the
 * inferred build runs. For Nx 20 (below the supported range): npm refuses the install
 * (kiln's `nx` peer range), and, forced past that, init refuses with KILN_NX_UNSUPPORTED and leaves
 * nx.json unchanged, and a plugin registered by hand fails every graph build with the same message.
 *
 * Nx 22 is 22.6.5 on purpose: up to 22.6, Nx sets `plugin.name` on what require() returned, which fails
 * for an ES module entry ("Cannot add property name, object is not extensible"); 22.7 copies it first.
 * Each version is installed once (npm, two at a time) and every assertion reuses it.
 *
 * The suite runs Nx 22 and 24 and the Nx 20 refusals; `KILN_NX_MATRIX=all` runs all four majors
 * (`node tools/nx-matrix.mjs`: 8.5 minutes measured at a load average of 20-30 on 2 cores), `KILN_NX_MATRIX=21,23`
 * the ones named.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packSelfContained } from '../../../tools/pack.mjs';
import { freshEnv, freshWorkspace } from '../../../tools/testing/fresh-workspace.mjs';
import compat from '../dist/plugins/src/compat.cjs';

/** One exact version per Nx major kiln supports, and one below. */
const SUPPORTED = { 21: '21.6.11', 22: '22.6.5', 23: '23.3.2', 24: '24.0.6' } as const;
const UNSUPPORTED = '20.8.4';
/** The majors this run installs. */
const MATRIX = process.env.KILN_NX_MATRIX ?? '22'; // 'all', or a comma list of majors (Nx 24, the workspace's own, runs in every other Nx test)
const RUN: [string, string][] = Object.entries(SUPPORTED).filter(([major]) => MATRIX === 'all' || MATRIX.split(',').includes(major));

type Fresh = Awaited<ReturnType<typeof freshWorkspace>>;
let tmp: string;
const installs = new Map<string, Promise<Fresh>>();

/** Runs `tasks` with at most `n` at a time (the machine has 2 cores; npm installs are mostly I/O). */
function limit(n: number) {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await task();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-nxv-'));
  const tarball: string = packSelfContained('@kiln/nx', tmp);
  const gate = limit(2);
  const start = (nx: string, installArgs: string[]) =>
    gate(async () => {
      const ws = await freshWorkspace(join(tmp, `nx-${nx}`), { nx, pm: 'npm', devDependencies: { '@kiln/nx': `file:${tarball}` }, env: freshEnv() });
      const r = await ws.run('npm', ['install', ...installArgs], 300_000);
      if (r.code !== 0) throw new Error(`npm install (Nx ${nx}) failed:\n${r.output}`);
      return ws;
    });
  for (const [, nx] of RUN) installs.set(nx, start(nx, []));
  installs.set(UNSUPPORTED, start(UNSUPPORTED, ['--legacy-peer-deps']));
  for (const p of installs.values()) p.catch(() => {}); // reported by the test that awaits it
  expect(basename(tarball)).toBe('kiln-nx-0.1.0.tgz');
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(installs.values());
  if (tmp && process.env.KILN_KEEP_TEMP !== '1') await rm(tmp, { recursive: true, force: true });
});

it('the supported range is one constant, and the tested versions are its bounds and every major between', () => {
  const majors = Object.keys(SUPPORTED).map(Number);
  expect(majors).toEqual(Array.from({ length: compat.NX_MAJORS.max - compat.NX_MAJORS.min + 1 }, (_, i) => compat.NX_MAJORS.min + i));
  expect(Number(UNSUPPORTED.split('.')[0])).toBe(compat.NX_MAJORS.min - 1);
});

describe.each(RUN)('Nx %s', (_major, version) => {
  it(`(${version}) init registers kiln; the plugin loads; kiln's targets, keys and edges are in the graph; the build runs`, { timeout: 600_000 }, async () => {
    const ws = await installs.get(version)!;
    expect(await ws.readJson('node_modules/nx/package.json')).toMatchObject({ version });

    const init = await ws.nx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
    expect(init.code, init.output).toBe(0);
    expect((await ws.readJson('nx.json')).plugins).toContainEqual({ plugin: '@kiln/nx', options: { addBuildTargets: true } });
    expect(init.output).not.toContain('is tested with'); // no "untested" warning on a tested major

    const graph = await ws.nx(['graph', '--file=graph.json']);
    expect(graph.code, graph.output).toBe(0);
    const { graph: g } = await ws.readJson('graph.json');
    expect(Object.keys(g.nodes).sort()).toEqual(['@fresh/a', '@fresh/b', '@fresh/c']);
    for (const name of ['@fresh/a', '@fresh/b']) {
      const build = g.nodes[name].data.targets.build;
      expect(build, name).toMatchObject({ executor: '@kiln/nx:build', inputs: [{ externalDependencies: [] }] });
      expect(build.options.kilnKey, name).toMatch(/^[0-9a-f]{32}$/);
      expect(g.nodes[name].data.targets.codegraph?.executor, name).toBe('@kiln/nx:codegraph');
    }
    expect(g.dependencies['@fresh/b'].map((d: { target: string }) => d.target)).toContain('@fresh/a');
    // A build target the workspace has (a package.json script): kiln's key merged into it, the script kept.
    const c = g.nodes['@fresh/c'].data.targets.build;
    expect(c.executor).toBe('nx:run-script');
    expect(c.options.script).toBe('build');
    expect(c.options.kiln?.key).toMatch(/^[0-9a-f]{16,}$/);

    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    let built = '';
    // The build (executors are require()d by Nx too) on every major of the full matrix; in the suite on
    // Nx 22 only (Nx 24 builds in e2e.test.ts and the other Nx tests).
    if (MATRIX !== '22,24' || version === SUPPORTED[22]) {
      const build = await ws.nx(['run-many', '-t', 'build']);
      expect(build.code, build.output).toBe(0);
      expect(existsSync(join(ws.root, 'packages/a/dist/index.js'))).toBe(true);
      expect(existsSync(join(ws.root, 'packages/b/dist/index.d.ts'))).toBe(true);
      built = `, run-many build ${s(build.durationMs)}`;
    }
    console.log(`Nx ${version}: init ${s(init.durationMs)}, graph ${s(graph.durationMs)}${built}`);
  });
});

describe(`Nx ${UNSUPPORTED} (below the supported range)`, () => {
  it('npm refuses to install kiln beside it (the nx peer range)', { timeout: 600_000 }, async () => {
    await installs.get(UNSUPPORTED)!; // its folder exists; a plain install resolves again
    const dir = join(tmp, 'nx-peer');
    const tarball = join(tmp, 'kiln-nx-0.1.0.tgz');
    const ws = await freshWorkspace(dir, { nx: UNSUPPORTED, pm: 'npm', devDependencies: { '@kiln/nx': `file:${tarball}` } });
    const r = await ws.run('npm', ['install', '--dry-run'], 180_000);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('ERESOLVE');
    expect(r.output).toMatch(/peer nx@">=21"[^\n]*from @kiln\/nx/);
  });

  it('forced past that, init refuses with KILN_NX_UNSUPPORTED (version found, range, hint) and changes nothing', { timeout: 600_000 }, async () => {
    const ws = await installs.get(UNSUPPORTED)!;
    const before = await ws.readText('nx.json');
    const init = await ws.nx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
    expect(init.code).not.toBe(0);
    expect(init.output).toContain(`error KILN_NX_UNSUPPORTED: @kiln/nx 0.1.0 supports Nx ${compat.NX_MAJORS.min} to ${compat.NX_MAJORS.max}; this workspace runs Nx ${UNSUPPORTED}.`);
    expect(init.output).toMatch(/\n\s*hint: Upgrade Nx to a supported major/);
    expect(await ws.readText('nx.json')).toBe(before);
  });

  it('a plugin registered by hand fails the graph with the same message, naming kiln and the version', { timeout: 600_000 }, async () => {
    const ws = await installs.get(UNSUPPORTED)!;
    await ws.writeJson('nx.json', { plugins: ['@kiln/nx'] });
    const r = await ws.nx(['show', 'projects']);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('KILN_NX_UNSUPPORTED');
    expect(r.output).toContain(`this workspace runs Nx ${UNSUPPORTED}`);
    expect(r.output).not.toContain('object is not extensible');
  });
});
