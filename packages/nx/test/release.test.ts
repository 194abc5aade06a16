/**
 * Issue 15, point 8 — the README's `nx release` flow, run: Nx versions, kiln packs. A fresh workspace
 * installed from the npm registry as a user has it (tools/testing/fresh-workspace.mjs) with Nx Release's
 * own plugin `@nx/js` and kiln's packed tarball, nothing linked from this repository:
 *   1. `nx g @kiln/nx:init --addBuildTargets`, `release.projects` in nx.json, `nx run-many -t build`;
 *   2. `nx release version 1.0.1` writes the new version into every manifest (Nx's own version actions);
 *   3. `nx run-many -t pack`: every build is a hit (a version is not in a build's key), every pack reruns
 *      (the whole manifest is in its key), and each tarball carries the new version in its manifest and in
 *      its kiln.rep's header, while the build's own kiln.rep stays unstamped.
 * The judge reads the tarballs with `tar` and the kiln.rep label (format version, package, version) from
 * its bytes — not with kiln's reader.
 *
 * @nx/js is published up to 23.3.1 on the registry these machines reach (no 24.x), and it must match the
 * workspace's `nx` exactly, so the flow runs on Nx 23.3.1 (a major kiln supports).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { packSelfContained } from '../../../tools/pack.mjs';
import { freshEnv, freshWorkspace } from '../../../tools/testing/fresh-workspace.mjs';

const NX = '23.3.1';
type Fresh = Awaited<ReturnType<typeof freshWorkspace>>;
let tmp: string;
let ws: Fresh;

/** The package and version in a kiln.rep's label: the u32 prefix length at byte 12, then two u16-length strings. */
function labelOf(b: Buffer): { pkg: string; version: string } {
  const at = b.readUInt32LE(12);
  const n = b.readUInt16LE(at);
  const m = b.readUInt16LE(at + 2 + n);
  return { pkg: b.subarray(at + 2, at + 2 + n).toString('utf8'), version: b.subarray(at + 4 + n, at + 4 + n + m).toString('utf8') };
}
const fromTarball = (tgz: string, file: string) => execFileSync('tar', ['xzf', tgz, '-O', `package/${file}`], { maxBuffer: 64 << 20 });

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-release-'));
  const tarball: string = packSelfContained('@kiln/nx', tmp);
  ws = await freshWorkspace(join(tmp, 'ws'), { nx: NX, pm: 'npm', devDependencies: { '@kiln/nx': `file:${tarball}`, '@nx/js': NX }, env: freshEnv() });
  // What a published library declares: its build output (`files`; the root .gitignore's `dist` would
  // otherwise leave the build out: npm applies a workspace's ignore files without `files`) and an entry
  // point; and a range Nx Release keeps when it bumps @fresh/a (its default refuses to widen an exact pin).
  const a = await ws.readJson('packages/a/package.json');
  await ws.writeJson('packages/a/package.json', { ...a, files: ['dist'] });
  const b = await ws.readJson('packages/b/package.json');
  await ws.writeJson('packages/b/package.json', { ...b, exports: a.exports, files: ['dist'], dependencies: { '@fresh/a': '^1.0.0' } });
  await writeFile(join(ws.root, '.gitignore'), 'node_modules\ndist\n.nx\n');
  const install = await ws.run('npm', ['install'], 300_000);
  expect(install.code, install.output).toBe(0);
  const init = await ws.nx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
  expect(init.code, init.output).toBe(0);
  // The libraries Nx Release versions (named, as a workspace does: unnamed, Nx 23.3.1 versioned only @fresh/a).
  const nxJson = await ws.readJson('nx.json');
  await ws.writeJson('nx.json', { ...nxJson, release: { projects: ['@fresh/a', '@fresh/b'] } });
  for (const args of [['add', '-A'], ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'kiln']]) {
    const g = await ws.run('git', args);
    expect(g.code, g.output).toBe(0);
  }
}, 420_000);

afterAll(async () => {
  if (tmp && process.env.KILN_KEEP_TEMP !== '1') await rm(tmp, { recursive: true, force: true });
});

it('nx release version, then nx run-many -t pack: builds hit, packs rerun, tarballs carry the new version in the manifest and in kiln.rep', async () => {
  const shown = await ws.nx(['show', 'project', '@fresh/a', '--json']);
  expect(shown.code, shown.output).toBe(0);
  expect(Object.keys(JSON.parse(shown.stdout).targets)).toEqual(expect.arrayContaining(['build', 'pack', 'nx-release-publish']));

  const build = await ws.nx(['run-many', '-t', 'build']);
  expect(build.code, build.output).toBe(0);

  const version = await ws.nx(['release', 'version', '1.0.1']);
  expect(version.code, version.output).toBe(0);
  for (const p of ['a', 'b']) expect((await ws.readJson(`packages/${p}/package.json`)).version, version.output).toBe('1.0.1');
  expect((await ws.readJson('packages/b/package.json')).dependencies).toEqual({ '@fresh/a': '^1.0.0' });

  const pack = await ws.nx(['run-many', '-t', 'pack']);
  expect(pack.code, pack.output).toBe(0);
  // A version is not in a build's key: both builds are restored; the packs (keyed by the whole manifest) run.
  for (const p of ['a', 'b']) {
    expect(pack.output).toMatch(new RegExp(`nx run @fresh/${p}:build\\s+\\[(local|existing outputs match the) cache`));
    expect(pack.output).not.toMatch(new RegExp(`nx run @fresh/${p}:pack\\s+\\[(local|existing outputs match the) cache`));
    const tgz = join(ws.root, `dist/packs/packages/${p}/fresh-${p}-1.0.1.tgz`);
    expect(existsSync(tgz), pack.output).toBe(true);
    expect(JSON.parse(fromTarball(tgz, 'package.json').toString('utf8')).version).toBe('1.0.1');
    expect(labelOf(fromTarball(tgz, 'dist/kiln.rep'))).toEqual({ pkg: `@fresh/${p}`, version: '1.0.1' });
    // The build's own kiln.rep (a cached output) is left as the build wrote it: unstamped.
    expect(labelOf(await readFile(join(ws.root, `packages/${p}/dist/kiln.rep`)))).toEqual({ pkg: `@fresh/${p}`, version: '' });
  }
}, 300_000);
