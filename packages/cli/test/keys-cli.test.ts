/**
 * `kiln keys` and `kiln explain-miss` as a user runs them, on a copy of the fixture workspace: without
 * Nx, in an npm workspace and a pnpm workspace alike.
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAsync, type Ran } from './lib/spawn-async.js';
import { recordBuilt } from '@kiln/core';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-keys-cli-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

function kiln(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8', env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The same real process, without blocking: a test starts its independent commands together. */
function kilnAsync(cwd: string, ...args: string[]): Promise<Ran> {
  return spawnAsync(process.execPath, [bin, ...args], { cwd, env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
}

/** The fixture workspace; `bare`: without the libraries' own build targets (kiln's executor builds them). */
async function workspace(name: string, { bare = false } = {}): Promise<string> {
  const dir = join(tmp, name);
  await cp(join(root, 'fixtures/workspace-basic'), dir, { recursive: true, filter: (s) => !s.includes('node_modules') });
  if (bare) {
    for (const lib of ['base', 'left', 'right', 'top', 'tail']) {
      const f = join(dir, 'libs', lib, 'package.json');
      const json = JSON.parse(await readFile(f, 'utf8'));
      delete json.nx;
      await writeFile(f, JSON.stringify(json, null, 2));
    }
  }
  return dir;
}

describe('kiln keys', () => {
  it('prints every package key with its components, text and JSON, with no absolute path', async () => {
    const ws = await workspace('keys');
    const [text, jsonRun] = await Promise.all([kilnAsync(ws, 'keys'), kilnAsync(ws, 'keys', '--format', 'json')]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^npm workspace: 5 projects/m);
    expect(text.out).toMatch(/@fx\/left {2}\(libs\/left\) {2}build key [0-9a-f]{12}/);
    expect(text.out).toMatch(/dependency {3}@fx\/base {2}surface [0-9a-f]{12} \(surface, 9 exports\)/);
    const json = JSON.parse(jsonRun.out);
    expect(json.projects).toHaveLength(5);
    expect(json.projects[0].components.toolchain.typescript).toBe('5.9.3');
    expect(JSON.stringify(json)).not.toContain(tmp);
    // The libraries' own build targets (nx:run-commands tsc) are keyed too: tsc never bundles.
    expect(text.out).toMatch(/@fx\/left:build {2}\(libs\/left\) {2}target key [0-9a-f]{12} {2}— tsc -p libs\/left\/tsconfig.lib.json/);
    expect(text.out).toMatch(/tools {8}typescript@5\.9\.3; workspace dependencies by surface \(never bundled\)/);
    expect(json.projects[1].targets.build.components).toMatchObject({ runner: 'tool', bundles: 'never', tools: { typescript: '5.9.3' } });
  });

  it('warns when a keyed target declares inputs of its own', async () => {
    const ws = await workspace('shadowed');
    const f = join(ws, 'libs/top/package.json');
    const json = JSON.parse(await readFile(f, 'utf8'));
    json.nx.targets.build.inputs = ['production', '^production'];
    await writeFile(f, JSON.stringify(json, null, 2));
    const r = kiln(ws, 'keys');
    expect(r.code).toBe(0);
    // A coded diagnostic (issue 14 point 8: every diagnostic is an envelope), about the file that declares them.
    expect(r.err).toMatch(/libs\/top\/package\.json - warning KILN_TARGET_INPUTS_SHADOWED: @fx\/top:build declares its own inputs in package.json#nx/);
    expect(r.err.match(/declares its own inputs/g)).toHaveLength(1);
    // A record of the other kind of key (the build key, where the target is tool-keyed): explained, not a crash.
    const top = JSON.parse(kiln(ws, 'keys', '--format', 'json').out).projects.find((p: { project: string }) => p.project === '@fx/top');
    await recordBuilt(ws, '@fx/top', 'build', top.key);
    const e = kiln(ws, 'explain-miss', '@fx/top:build');
    expect(e.code, e.err).toBe(0);
    expect(e.out).toMatch(/the key moved .* because:\n {2}file {10}added {4}package\.json/);
  });

  it('works in a pnpm workspace without Nx, with the same keys', async () => {
    const npmWs = await workspace('npm-ws');
    const pnpmWs = await workspace('pnpm-ws');
    await rm(join(pnpmWs, 'nx.json'));
    await rm(join(pnpmWs, 'package-lock.json'));
    const pkg = JSON.parse(await readFile(join(pnpmWs, 'package.json'), 'utf8'));
    delete pkg.workspaces;
    await writeFile(join(pnpmWs, 'package.json'), JSON.stringify(pkg, null, 2));
    await writeFile(join(pnpmWs, 'pnpm-workspace.yaml'), "packages:\n  - 'libs/*'\n");
    await writeFile(
      join(pnpmWs, 'pnpm-lock.yaml'),
      "lockfileVersion: '9.0'\n\nimporters:\n\n  .:\n    devDependencies:\n      typescript:\n        specifier: 5.9.3\n        version: 5.9.3\n\npackages:\n\n  typescript@5.9.3:\n    resolution: {integrity: sha512-x}\n",
    );
    const [aRun, bRun] = await Promise.all([kilnAsync(npmWs, 'keys', '--format', 'json'), kilnAsync(pnpmWs, 'keys', '--format', 'json')]);
    const a = JSON.parse(aRun.out);
    const b = JSON.parse(bRun.out);
    expect(b.kind).toBe('pnpm');
    expect(b.projects.map((p: { key: string }) => p.key)).toEqual(a.projects.map((p: { key: string }) => p.key));
  });
});

describe('kiln explain-miss', () => {
  it('says nothing moved for a hit, and names what moved for a miss', async () => {
    const ws = await workspace('explain', { bare: true });
    const never = kiln(ws, 'explain-miss', '@fx/base:build');
    expect(never.code).toBe(0);
    expect(never.out).toMatch(/no build recorded/);

    // What the build executor does after a successful build: remember the key it built with.
    const keys = JSON.parse(kiln(ws, 'keys', '--format', 'json').out);
    for (const p of keys.projects) await recordBuilt(ws, p.project, 'build', p.key);

    const hit = kiln(ws, 'explain-miss', '@fx/left:build');
    expect(hit.out).toMatch(/nothing moved/);

    const greet = join(ws, 'libs/base/src/greet.ts');
    const src = await readFile(greet, 'utf8');
    await writeFile(greet, src.replace('export function greet(name: string): string', 'export function greet(name: string, loud = false): string').replace('Greets a person by name.', 'Greets a person by name, loudly if asked.'));
    const miss = kiln(ws, 'explain-miss', '@fx/base:build');
    expect(miss.out).toMatch(/the key moved/);
    expect(miss.out).toMatch(/declaration +changed +typescript:@fx\/base\/\/src\/greet#greet:function\n\s+semantic digest moved/);
    const dep = kiln(ws, 'explain-miss', '@fx/left:build', '--format', 'json');
    const result = JSON.parse(dep.out);
    expect(result.status).toBe('miss');
    expect(result.changes).toEqual([
      expect.objectContaining({ category: 'dependency', subject: '@fx/base', change: 'changed', detail: expect.stringMatching(/public surface changed: @fx\/base#greet/) }),
    ]);
    const tail = JSON.parse(kiln(ws, 'explain-miss', '@fx/tail:build', '--format', 'json').out);
    expect(tail.status).toBe('hit');
  });

  it("explains a target kiln keys but does not run (the workspace's own nx:run-commands tsc build)", async () => {
    const ws = await workspace('explain-tool');
    const never = JSON.parse(kiln(ws, 'explain-miss', '@fx/base:build', '--format', 'json').out);
    expect(never).toMatchObject({ status: 'never-built', keyed: 'package.json#nx (nx:run-commands)' });
    // What the plugin's postTasksExecution records after a run: the key each task ran with.
    const runs = await Promise.all(['base', 'left'].map((lib) => kilnAsync(ws, 'explain-miss', `@fx/${lib}:build`, '--format', 'json')));
    for (const [i, lib] of ['base', 'left'].entries()) {
      const k = JSON.parse(runs[i]!.out).key;
      await recordBuilt(ws, `@fx/${lib}`, 'build', k);
    }
    expect(JSON.parse(kiln(ws, 'explain-miss', '@fx/left:build', '--format', 'json').out).status).toBe('hit');
    const greet = join(ws, 'libs/base/src/greet.ts');
    await writeFile(greet, (await readFile(greet, 'utf8')).replace('export function greet(name: string): string', 'export function greet(name: string, loud = false): string'));
    const miss = kiln(ws, 'explain-miss', '@fx/base:build');
    expect(miss.out).toMatch(/declaration +changed +typescript:@fx\/base\/\/src\/greet#greet:function\n\s+semantic digest moved/);
    const dep = JSON.parse(kiln(ws, 'explain-miss', '@fx/left:build', '--format', 'json').out);
    expect(dep.status).toBe('miss');
    expect(dep.changes).toEqual([expect.objectContaining({ category: 'dependency', subject: '@fx/base', detail: expect.stringMatching(/public surface changed: @fx\/base#greet/) })]);
  });

  it('rejects bad specs with exit 2 and unknown projects with exit 1', async () => {
    const ws = await workspace('bad');
    const [noColon, other, unknown] = await Promise.all([
      kilnAsync(ws, 'explain-miss', 'nocolon'),
      kilnAsync(ws, 'explain-miss', '@fx/base:test'),
      kilnAsync(ws, 'explain-miss', '@fx/nope:build'),
    ]);
    expect(noColon.code).toBe(2);
    expect(other.code).toBe(0);
    expect(other.out).toMatch(/^@fx\/base:test: not keyed by kiln — the project defines no "test" target/);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/KILN_NOT_FOUND/);
  });
});
