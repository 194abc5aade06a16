/**
 * The package users install: pack @kiln/core and @kiln/nx as npm would publish them, install the
 * tarballs (not the repository's folders) into a fresh Nx workspace, and run `nx g @kiln/nx:init` and
 * builds through them — every path in executors.json and generators.json must resolve from the tarball.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, disposeAll, exec, KILN_ROOT, type Workspace } from '../../../tools/testing/workspace.mjs';

let tmp: string;
let tarballs: Record<string, string>;
let ws: Workspace;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-pack-'));
  const packed = await exec('npm', ['pack', '--json', '--pack-destination', tmp, '-w', '@kiln/core', '-w', '@kiln/nx'], { cwd: KILN_ROOT, timeoutMs: 120_000 });
  expect(packed.code, packed.stderr).toBe(0);
  const list = JSON.parse(packed.stdout) as { name: string; filename: string; files: { path: string }[] }[];
  tarballs = Object.fromEntries(list.map((p) => [p.name, join(tmp, p.filename.replace(/^@/, '').replace('/', '-'))]));
  const nx = list.find((p) => p.name === '@kiln/nx')!;
  const files = nx.files.map((f) => f.path);
  for (const f of ['executors.json', 'generators.json', 'dist/plugins/src/index.js', 'dist/executors/build/impl.js', 'dist/executors/build/schema.json', 'dist/generators/init/generator.js', 'dist/generators/init/schema.json']) {
    expect(files, f).toContain(f);
  }
  expect(files.some((f) => f.startsWith('src/') || f.includes('/test/'))).toBe(false);
  ws = await createWorkspace('workspace-basic', {
    prepare: async (w) => {
      await w.removePackageNxConfig();
      // Replace the repository links with the unpacked tarballs.
      for (const [name, tgz] of Object.entries(tarballs)) {
        const dir = w.path(`node_modules/${name}`);
        await rm(dir, { recursive: true, force: true });
        await mkdir(dir, { recursive: true });
        const x = await exec('tar', ['-xzf', tgz, '-C', dir, '--strip-components=1'], { cwd: w.root });
        expect(x.code, x.stderr).toBe(0);
      }
    },
  });
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await rm(tmp, { recursive: true, force: true });
});

describe('installed from the packed tarballs', () => {
  it('nx g @kiln/nx:init registers the plugin and builds run through the installed executor', async () => {
    const init = await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
    expect(init.code).toBe(0);
    expect((await ws.readJson('nx.json')).plugins).toContainEqual({ plugin: '@kiln/nx', options: { addBuildTargets: true } });
    const first = await ws.runNx(['run-many', '-t', 'build']);
    expect(first.executed).toHaveLength(5);
    const second = await ws.runNx(['run-many', '-t', 'build']);
    expect(second.localHits).toHaveLength(5);
    expect((await ws.node(`import { run } from '@fx/tail'; console.log(run('Ada'));`)).trim()).toMatch(/^Hello, Ada!/);
  });
});
