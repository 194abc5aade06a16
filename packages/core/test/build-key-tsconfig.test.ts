/**
 * Issue 11, point 5: the build key reads the tsconfig kiln's own build target compiles. The target's
 * `tsConfig` option is read from the workspace's own definitions (project.json, package.json `nx`),
 * in every spelling Nx accepts, and `buildKeyTsconfig` picks the file in the executor's order: the
 * target's option, else the plugin option, else the default search. Configurations that switch
 * tsconfigs are reported (one key cannot follow them). The end-to-end check — the key moves with the
 * named file and not with the unused default, under real Nx — is executors/build/test/build-layouts.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { buildKeyTsconfig, readTargetDefinitions } from '@kiln/core';
import { cleanup, tempDir, writeTree } from './lib/build-fixtures.js';

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

function workspace(project: Record<string, unknown>, manifest: Record<string, unknown> = {}): string {
  const ws = tempDir('key-tsconfig');
  dirs.push(ws);
  writeTree(ws, {
    'libs/a/project.json': JSON.stringify(project),
    'libs/a/package.json': JSON.stringify({ name: '@fx/a', ...manifest }),
  });
  return ws;
}

const kiln = (options: Record<string, unknown>, configurations?: Record<string, unknown>) => ({
  targets: { build: { executor: '@kiln/nx:build', options, ...(configurations ? { configurations } : {}) } },
});

describe("kiln's build target: the tsconfig it names", () => {
  it.each([
    ['{projectRoot}/tsconfig.build.json', 'tsconfig.build.json'],
    ['libs/a/tsconfig.build.json', 'tsconfig.build.json'],
    ['{workspaceRoot}/libs/a/config/tsconfig.lib.json', 'config/tsconfig.lib.json'],
    ['./libs/a/tsconfig.json', 'tsconfig.json'],
  ])('%s → %s (project-relative)', (option, expected) => {
    const ws = workspace(kiln({ tsConfig: option }));
    const def = readTargetDefinitions(ws, 'libs/a', ['build']).targets.get('build')!;
    expect(def.executor).toBe('@kiln/nx:build');
    expect(def.spec).toBeUndefined();
    expect(def.tsconfig).toBe(expected);
    expect(buildKeyTsconfig([def], 'tsconfig.other.json')).toBe(expected);
  });

  it('no tsConfig option: the plugin option, else the default search (undefined)', () => {
    const ws = workspace(kiln({}));
    const def = readTargetDefinitions(ws, 'libs/a', ['build']).targets.get('build')!;
    expect(def.tsconfig).toBeUndefined();
    expect(buildKeyTsconfig([def], 'tsconfig.build.json')).toBe('tsconfig.build.json');
    expect(buildKeyTsconfig([def])).toBeUndefined();
    expect(buildKeyTsconfig([undefined])).toBeUndefined();
  });

  it('package.json nx.targets is read like project.json; project.json options win', () => {
    const ws = workspace({ targets: { build: { options: { tsConfig: '{projectRoot}/tsconfig.project.json' } } } }, { nx: kiln({ tsConfig: '{projectRoot}/tsconfig.pkg.json' }) });
    expect(readTargetDefinitions(ws, 'libs/a', ['build']).targets.get('build')!.tsconfig).toBe('tsconfig.project.json');
  });

  it('configurations that switch tsconfigs are named; one naming the same file is not', () => {
    const ws = workspace(kiln({ tsConfig: '{projectRoot}/tsconfig.lib.json' }, { production: { tsConfig: '{projectRoot}/tsconfig.prod.json' }, same: { tsConfig: 'libs/a/tsconfig.lib.json' }, other: { outputPath: 'x' } }));
    expect(readTargetDefinitions(ws, 'libs/a', ['build']).targets.get('build')!.tsconfigConfigurations).toEqual(['production']);
  });

  it("a tool target's tsConfig is not the build key's (its tool key reads the file by content)", () => {
    const ws = workspace({ targets: { build: { executor: '@nx/js:tsc', options: { tsConfig: '{projectRoot}/tsconfig.lib.json' } } } });
    const def = readTargetDefinitions(ws, 'libs/a', ['build']).targets.get('build')!;
    expect(def.spec).toBeDefined();
    expect(def.tsconfig).toBeUndefined();
    expect(buildKeyTsconfig([def], 'tsconfig.x.json')).toBe('tsconfig.x.json');
  });
});
