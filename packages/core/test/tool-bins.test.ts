/**
 * Which package a target's command runs (key/tool-key.ts `packageOfBin`) and which source file a
 * manifest target was built from (view/resolve.ts `resolveManifestTarget`), on real inputs: a pnpm
 * install's `.bin` shims (shell scripts, not links — tsdown was once keyed as an unknown tool, so every
 * workspace dependency counted as bundled), npm's links, and vite's per-format output folders.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageOfBin } from '../dist/key/tool-key.js';
import { resolveManifestTarget } from '../dist/view/resolve.js';
// @ts-expect-error: a plain .mjs helper
import { packageManagers, freshEnv } from '../../../tools/testing/fresh-workspace.mjs';
// @ts-expect-error: a plain .mjs helper
import { exec } from '../../../tools/testing/workspace.mjs';

let tmp: string;
let path: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-bins-'));
  path = await packageManagers(join(tmp, 'pms'));
}, 240_000);
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** A workspace with one package that depends on `semver` (a package with a bin), installed by `pm`. */
async function workspace(pm: 'pnpm' | 'npm'): Promise<string> {
  const ws = join(tmp, pm);
  await mkdir(join(ws, 'packages/app'), { recursive: true });
  await writeFile(join(ws, 'package.json'), JSON.stringify({ name: 'ws', private: true, ...(pm === 'npm' ? { workspaces: ['packages/*'] } : {}) }));
  if (pm === 'pnpm') await writeFile(join(ws, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n');
  await writeFile(join(ws, 'packages/app/package.json'), JSON.stringify({ name: '@ws/app', version: '1.0.0', devDependencies: { semver: '7.7.2' } }));
  const r = await exec(pm, ['install', '--ignore-scripts'], { cwd: ws, env: freshEnv({ path }), timeoutMs: 180_000 });
  expect(r.code, r.output).toBe(0);
  return ws;
}

describe('the package a bin belongs to', () => {
  it("pnpm: the project's .bin entry is a shell shim, and names the package it execs", async () => {
    const ws = await workspace('pnpm');
    const shim = join(ws, 'packages/app/node_modules/.bin/semver');
    expect(lstatSync(shim).isSymbolicLink(), 'pnpm writes a shim file, not a link').toBe(false);
    expect(packageOfBin('semver', join(ws, 'packages/app'), ws)).toBe('semver');
  });

  it('npm: the hoisted .bin entry is a link to the package', async () => {
    const ws = await workspace('npm');
    expect(lstatSync(join(ws, 'node_modules/.bin/semver')).isSymbolicLink()).toBe(true);
    expect(packageOfBin('semver', join(ws, 'packages/app'), ws)).toBe('semver');
  });
});

describe('manifest targets back to their sources', () => {
  const files = new Set(['src/index.ts', 'src/utils.ts', 'src/server/index.ts']);
  it("a bundler's format folder (vite library mode's dist/esm, dist/cjs) maps to src", () => {
    expect(resolveManifestTarget('./dist/esm/index.d.ts', files, [])).toBe('src/index.ts');
    expect(resolveManifestTarget('./dist/cjs/index.cjs', files, [])).toBe('src/index.ts');
    expect(resolveManifestTarget('./dist/esm/server/index.js', files, [])).toBe('src/server/index.ts');
  });
  it('only well-known format names, and a real folder of that name wins', () => {
    expect(resolveManifestTarget('./dist/legacy/index.js', files, [])).toBeUndefined();
    expect(resolveManifestTarget('./dist/esm/index.js', new Set([...files, 'src/esm/index.ts']), [])).toBe('src/esm/index.ts');
  });
});
