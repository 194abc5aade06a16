/**
 * The Nx plugin's pieces called as Nx calls them: createNodesV2 on a real workspace copy (inferred
 * build target, key in options, no raw inputs), createDependencies, and the init generator on an Nx
 * Tree (registers the plugin once; running it twice changes nothing).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readJson } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { createDependencies, createNodesV2 } from '@kiln/nx';
import initGenerator from '../dist/generators/init/generator.js';
import schema from '../../../generators/init/schema.json';

const FIXTURE = resolve(__dirname, '../../../fixtures/workspace-basic');
/** `ws`: the fixture as it is (each library has a plain `nx:run-commands` tsc build); `bare`: no build targets at all. */
let ws: string;
let bare: string;
beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), 'kiln-plugin-'));
  await cp(FIXTURE, ws, { recursive: true, filter: (s) => !s.includes('node_modules') });
  bare = await mkdtemp(join(tmpdir(), 'kiln-plugin-bare-'));
  await cp(FIXTURE, bare, { recursive: true, filter: (s) => !s.includes('node_modules') });
  for (const f of files.slice(1)) {
    const json = JSON.parse(await readFile(join(bare, f), 'utf8'));
    delete json.nx;
    await writeFile(join(bare, f), JSON.stringify(json, null, 2));
  }
  process.env.KILN_STORE = join(ws, '.store');
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(bare, { recursive: true, force: true });
});

const files = ['package.json', 'libs/base/package.json', 'libs/left/package.json', 'libs/right/package.json', 'libs/top/package.json', 'libs/tail/package.json'];
const ctx = (root: string) => ({ workspaceRoot: root, nxJsonConfiguration: {} }) as never;

describe('createNodesV2', () => {
  it("keys the build targets the workspace defines: no executor of its own (Nx merges it with theirs), the key in an object option, no raw inputs, the kiln-keyed tag", async () => {
    const [, fn] = createNodesV2;
    const results = new Map(await fn(files, { addBuildTargets: true }, ctx(ws)));
    const keys = new Set<string>();
    for (const f of files.slice(1)) {
      const root = f.replace('/package.json', '');
      const project = results.get(f)!.projects![root]!;
      expect(project.tags).toEqual(['kiln-keyed']);
      const build = project.targets!.build!;
      // Not kiln's executor even though addBuildTargets is on: the workspace has a build target.
      expect(Object.keys(build).sort()).toEqual(['inputs', 'options']);
      expect(build.inputs).toEqual([{ externalDependencies: [] }]);
      expect(build.options.kiln.key).toMatch(/^[0-9a-f]{32}$/);
      keys.add(build.options.kiln.key);
    }
    expect(keys.size).toBe(5);
    expect(new Map(await fn(files, { addBuildTargets: true }, ctx(ws)))).toEqual(results);
    // Another name keyed on request; a name the workspace does not define gets nothing.
    const named = new Map(await fn(files, { targets: ['build', 'lint'] }, ctx(ws)));
    expect(Object.keys(named.get('libs/base/package.json')!.projects!['libs/base']!.targets!).sort()).toEqual(['build', 'codegraph']);
  });

  it('adds no build target where the workspace has none, unless asked', async () => {
    const [, fn] = createNodesV2;
    const results = new Map(await fn(files, {}, ctx(bare)));
    const targets = results.get('libs/base/package.json')!.projects!['libs/base']!.targets!;
    expect(Object.keys(targets)).toEqual(['codegraph']);
    expect(results.get('libs/base/package.json')!.projects!['libs/base']!.tags).toBeUndefined();
  });

  it("adds no build target whose output another target of the project declares (a restore of one would delete the other's files)", async () => {
    const [, fn] = createNodesV2;
    const f = join(bare, 'libs/base/package.json');
    const original = await readFile(f, 'utf8');
    await writeFile(f, JSON.stringify({ ...JSON.parse(original), nx: { targets: { 'build:types': { executor: 'nx:run-commands', options: { command: 'tsc -p libs/base/tsconfig.lib.json' }, outputs: ['{projectRoot}/dist/types'] } } } }, null, 2));
    try {
      const results = new Map(await fn(files, { addBuildTargets: true }, ctx(bare)));
      expect(Object.keys(results.get('libs/base/package.json')!.projects!['libs/base']!.targets!)).toEqual(['codegraph']);
      expect(Object.keys(results.get('libs/left/package.json')!.projects!['libs/left']!.targets!).sort()).toEqual(['build', 'codegraph', 'pack']);
    } finally {
      await writeFile(f, original);
    }
  });

  it('infers a build target per TypeScript library with the kiln key in its options and no raw inputs (addBuildTargets)', async () => {
    const [, fn] = createNodesV2;
    const results = await fn(files, { addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never);
    const byFile = new Map(results);
    expect(byFile.get('package.json')).toEqual({}); // the workspace root is not a library
    const base = byFile.get('libs/base/package.json')!.projects!['libs/base']!.targets!.build!;
    expect(base).toMatchObject({
      executor: '@kiln/nx:build',
      inputs: [{ externalDependencies: [] }],
      outputs: ['{projectRoot}/dist'],
      dependsOn: ['^build'],
      cache: true,
      options: { tsConfig: '{projectRoot}/tsconfig.lib.json', outputPath: '{projectRoot}/dist' },
    });
    expect(base.options.kilnKey).toMatch(/^[0-9a-f]{32}$/);
    const keys = files.slice(1).map((f) => byFile.get(f)!.projects![f.replace('/package.json', '')]!.targets!.build!.options.kilnKey);
    expect(new Set(keys).size).toBe(5);
    // Determinism: the same workspace gives the same keys.
    const again = await fn(files, { addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never);
    expect(again).toEqual(results);
  });

  it('infers a codegraph target whose hash covers what a graph records (raw files of the project and its dependencies), unless turned off', async () => {
    const [, fn] = createNodesV2;
    const results = new Map(await fn(files, { addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never));
    const left = results.get('libs/left/package.json')!.projects!['libs/left']!.targets!;
    expect(left.codegraph).toMatchObject({
      executor: '@kiln/nx:codegraph',
      inputs: ['{projectRoot}/**/*', { fileset: '{projectRoot}/**/*', dependencies: true }, '{workspaceRoot}/tsconfig*.json', { dependentTasksOutputFiles: '**/*.d.ts', transitive: true }],
      outputs: ['{workspaceRoot}/dist/codegraph/{projectRoot}'],
      dependsOn: ['^build'],
      cache: true,
      options: { outputFile: 'dist/codegraph/libs/left/codegraph.jsonl', tsConfig: '{projectRoot}/tsconfig.lib.json', toolchain: expect.stringMatching(/^extractor\d+\/digest\d+\/graph\d+$/) },
    });
    const off = new Map(await fn(files, { codegraphTargetName: false, addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never));
    expect(Object.keys(off.get('libs/left/package.json')!.projects!['libs/left']!.targets!)).toEqual(['build', 'pack']);
    const renamed = new Map(await fn(files, { codegraphTargetName: 'graph', buildTargetName: 'compile', addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never));
    const t = renamed.get('libs/left/package.json')!.projects!['libs/left']!.targets!;
    expect(Object.keys(t).sort()).toEqual(['compile', 'graph', 'pack']);
    expect(t.graph!.dependsOn).toEqual(['^compile']);
    expect(t.compile!.dependsOn).toEqual(['^compile']);
    expect(t.pack!.dependsOn).toEqual(['compile']);
  });

  it('infers a pack target where kiln builds (with addBuildTargets, or addPackTargets), keyed by the manifest, npm\'s ignore files from the workspace root down, what `files` adds and the build outputs', async () => {
    const [, fn] = createNodesV2;
    const c = { workspaceRoot: bare, nxJsonConfiguration: {} } as never;
    const f = join(bare, 'libs/left/package.json');
    const original = await readFile(f, 'utf8');
    try {
      // No `files`: npm publishes the whole directory, so every file of the project is an input.
      const whole = new Map(await fn(files, { addBuildTargets: true }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!;
      expect(whole.pack).toEqual({
        executor: '@kiln/nx:pack',
        inputs: ['{projectRoot}/package.json', '{projectRoot}/.npmignore', '{projectRoot}/**/.npmignore', '{projectRoot}/**/.gitignore', '{workspaceRoot}/.npmignore', '{workspaceRoot}/.gitignore', '{workspaceRoot}/libs/.npmignore', '{workspaceRoot}/libs/.gitignore', '{projectRoot}/LICENCE*', '{projectRoot}/LICENSE*', '{projectRoot}/README*', '{projectRoot}/**/*', { dependentTasksOutputFiles: '**/*', transitive: false }, { externalDependencies: [] }],
        outputs: ['{workspaceRoot}/dist/packs/{projectRoot}'],
        dependsOn: ['build'],
        cache: true,
        options: { outputPath: 'dist/packs/libs/left' },
        metadata: expect.objectContaining({ description: expect.stringContaining('npm tarball') }),
      });
      // `files`: the build's folder through its outputs, anything else by its files; a README present is named.
      await writeFile(f, JSON.stringify({ ...JSON.parse(original), files: ['dist', 'assets/', '!dist/x.js'] }, null, 2));
      await writeFile(join(bare, 'libs/left/readme.markdown'), '# left\n');
      const listed = new Map(await fn(files, { addBuildTargets: true }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!;
      expect(listed.pack!.inputs).toEqual([
        '{projectRoot}/package.json',
        '{projectRoot}/.npmignore',
        '{projectRoot}/**/.npmignore',
        '{projectRoot}/**/.gitignore',
        '{workspaceRoot}/.npmignore',
        '{workspaceRoot}/.gitignore',
        '{workspaceRoot}/libs/.npmignore',
        '{workspaceRoot}/libs/.gitignore',
        '{projectRoot}/LICENCE*',
        '{projectRoot}/LICENSE*',
        '{projectRoot}/README*',
        '{projectRoot}/readme.markdown',
        '{projectRoot}/assets',
        '{projectRoot}/assets/**/*',
        { dependentTasksOutputFiles: '**/*', transitive: false },
        { externalDependencies: [] },
      ]);
      // Off, renamed, private.
      expect(new Map(await fn(files, { addBuildTargets: true, addPackTargets: false }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!.pack).toBeUndefined();
      expect(Object.keys(new Map(await fn(files, { addBuildTargets: true, packTargetName: 'tarball' }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!).sort()).toEqual(['build', 'codegraph', 'tarball']);
      // addPackTargets alone packs only where kiln's executor builds: the bare fixture has no build target.
      expect(new Map(await fn(files, { addPackTargets: true }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!.pack).toBeUndefined();
      await writeFile(f, JSON.stringify({ ...JSON.parse(original), private: true }, null, 2));
      expect(new Map(await fn(files, { addBuildTargets: true }, c)).get('libs/left/package.json')!.projects!['libs/left']!.targets!.pack).toBeUndefined();
    } finally {
      await writeFile(f, original);
      await rm(join(bare, 'libs/left/readme.markdown'), { force: true });
    }
  });

  it("no per-state value in the codegraph target: Nx hashes every target's configuration into each task of the project", async () => {
    // A body edit moves the project's unit key; if the codegraph carried it, the project's keyed build
    // (whose own key may hold, e.g. a tool that keeps the edited dependency external) would rerun.
    const [, fn] = createNodesV2;
    const graphOf = async () => new Map(await fn(files, { addBuildTargets: true }, { workspaceRoot: bare, nxJsonConfiguration: {} } as never)).get('libs/base/package.json')!.projects!['libs/base']!.targets!;
    const before = await graphOf();
    const file = join(bare, 'libs/base/src/math.ts');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace('return n * 2;', 'return n + n;'));
    try {
      const after = await graphOf();
      expect(after.build!.options.kilnKey, 'the edit moved the unit key').not.toBe(before.build!.options.kilnKey);
      expect(after.codegraph).toEqual(before.codegraph);
    } finally {
      await writeFile(file, text);
    }
  });

  it('createDependencies adds the workspace edges kiln resolved', async () => {
    const projects = Object.fromEntries(files.slice(1).map((f) => {
      const root = f.replace('/package.json', '');
      return [`@fx/${root.split('/')[1]}`, { root }];
    }));
    const deps = await createDependencies({}, { workspaceRoot: ws, projects, nxJsonConfiguration: {}, fileMap: {}, filesToProcess: {}, externalNodes: {} } as never);
    const edges = deps.map((d) => `${d.source}->${d.target}`).sort();
    expect(edges).toEqual(['@fx/left->@fx/base', '@fx/right->@fx/base', '@fx/tail->@fx/top', '@fx/top->@fx/left', '@fx/top->@fx/right']);
  });
});

describe('init generator', () => {
  it('registers the plugin and the executor target default once; a second run changes nothing', async () => {
    const tree = createTreeWithEmptyWorkspace();
    await initGenerator(tree, { skipFormat: true });
    const first = readJson(tree, 'nx.json');
    expect(first.plugins).toContain('@kiln/nx');
    expect(first.targetDefaults['@kiln/nx:build']).toEqual({ inputs: [{ externalDependencies: [] }], cache: true, dependsOn: ['^build'] });
    // The workspace's own build default stays first; kiln's filtered entry wins for keyed projects.
    const build = first.targetDefaults.build as unknown[];
    expect(Array.isArray(build)).toBe(true);
    expect(build.at(-1)).toEqual({ filter: { projects: ['tag:kiln-keyed'] }, inputs: [{ externalDependencies: [] }] });
    expect(first.plugins).toContain('@kiln/nx'); // no options: the defaults
    await initGenerator(tree, { skipFormat: true });
    expect(readJson(tree, 'nx.json')).toEqual(first);
    expect(first.plugins.filter((p: unknown) => p === '@kiln/nx')).toHaveLength(1);
  });

  it("upgrades the executor default an earlier kiln wrote (inputs: [] hashed every external dependency), keeping the rest of it", async () => {
    const tree = createTreeWithEmptyWorkspace();
    const nx = readJson(tree, 'nx.json');
    nx.targetDefaults = { '@kiln/nx:build': { inputs: [], cache: true, dependsOn: ['^build'], outputs: ['{options.outputPath}'] } };
    tree.write('nx.json', JSON.stringify(nx));
    await initGenerator(tree, { skipFormat: true });
    expect(readJson(tree, 'nx.json').targetDefaults['@kiln/nx:build']).toEqual({ inputs: [{ externalDependencies: [] }], cache: true, dependsOn: ['^build'], outputs: ['{options.outputPath}'] });
    // A default the workspace chose itself is left alone.
    const own = readJson(tree, 'nx.json');
    own.targetDefaults['@kiln/nx:build'] = { inputs: ['production'] };
    tree.write('nx.json', JSON.stringify(own));
    await initGenerator(tree, { skipFormat: true });
    expect(readJson(tree, 'nx.json').targetDefaults['@kiln/nx:build']).toEqual({ inputs: ['production'] });
  });

  it('keeps environment and runtime inputs of the workspace default in its entry; --addBuildTargets and --targets become plugin options', async () => {
    const tree = createTreeWithEmptyWorkspace();
    const nx = readJson(tree, 'nx.json');
    nx.targetDefaults = { build: { inputs: ['production', '^production', { env: 'API_URL' }, { runtime: 'node -v' }], cache: true }, bundle: { dependsOn: ['^bundle'] } };
    tree.write('nx.json', JSON.stringify(nx));
    await initGenerator(tree, { skipFormat: true, addBuildTargets: true, targets: ['build', 'bundle'] });
    const after = readJson(tree, 'nx.json');
    expect(after.targetDefaults.build).toEqual([nx.targetDefaults.build, { filter: { projects: ['tag:kiln-keyed'] }, inputs: [{ externalDependencies: [] }, { env: 'API_URL' }, { runtime: 'node -v' }] }]);
    expect(after.targetDefaults.bundle).toEqual([{ dependsOn: ['^bundle'] }, { filter: { projects: ['tag:kiln-keyed'] }, inputs: [{ externalDependencies: [] }] }]);
    expect(after.plugins).toEqual([{ plugin: '@kiln/nx', options: { targets: ['build', 'bundle'], addBuildTargets: true } }]);
    await initGenerator(tree, { skipFormat: true });
    expect(readJson(tree, 'nx.json')).toEqual(after);
  });

  it('warns about keyed targets whose own definition declares inputs, naming the file', async () => {
    const tree = createTreeWithEmptyWorkspace();
    tree.write('libs/a/project.json', JSON.stringify({ name: 'a', targets: { build: { command: 'tsc', inputs: ['production'] }, test: { inputs: ['default'] } } }));
    tree.write('libs/b/package.json', JSON.stringify({ name: 'b', nx: { targets: { build: { outputs: ['{projectRoot}/dist'] } } } }));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      await initGenerator(tree, { skipFormat: true });
      const lines = warn.mock.calls.map((c) => String(c[0]));
      expect(lines.filter((l) => l.includes('declares its own inputs'))).toEqual([expect.stringContaining('libs/a/project.json - warning KILN_TARGET_INPUTS_SHADOWED: target "build" declares its own inputs ["production"]')]);
    } finally {
      warn.mockRestore();
    }
  });

  it('--addPackTargets becomes a plugin option only when given, false included (unset, the plugin follows addBuildTargets)', async () => {
    const tree = createTreeWithEmptyWorkspace();
    await initGenerator(tree, { skipFormat: true, addBuildTargets: true, addPackTargets: false });
    expect(readJson(tree, 'nx.json').plugins).toEqual([{ plugin: '@kiln/nx', options: { addBuildTargets: true, addPackTargets: false } }]);
    await initGenerator(tree, { skipFormat: true, addPackTargets: true });
    expect(readJson(tree, 'nx.json').plugins).toEqual([{ plugin: '@kiln/nx', options: { addBuildTargets: true, addPackTargets: true } }]);
    const other = createTreeWithEmptyWorkspace();
    await initGenerator(other, { skipFormat: true, addBuildTargets: true });
    expect(readJson(other, 'nx.json').plugins).toEqual([{ plugin: '@kiln/nx', options: { addBuildTargets: true } }]);
  });

  it('keeps a plugin entry given in object form and does not add a second one', async () => {
    const tree = createTreeWithEmptyWorkspace();
    const nx = readJson(tree, 'nx.json');
    nx.plugins = [{ plugin: '@kiln/nx', options: { buildTargetName: 'compile' } }];
    tree.write('nx.json', JSON.stringify(nx));
    await initGenerator(tree, { skipFormat: true });
    expect(readJson(tree, 'nx.json').plugins).toEqual([{ plugin: '@kiln/nx', options: { buildTargetName: 'compile' } }]);
  });

  it('schema.json describes exactly the options of the schema type', () => {
    expect(Object.keys(schema.properties)).toEqual(['skipFormat', 'targets', 'addBuildTargets', 'addPackTargets']);
    for (const p of Object.values(schema.properties)) expect((p as { description: string }).description.length).toBeGreaterThan(10);
  });
});

describe('the CommonJS entry Nx loads', () => {
  it('is an extensible object that forwards every hook the plugin exports, with the same file pattern', async () => {
    const { createRequire } = await import('node:module');
    const entry = createRequire(__filename)('@kiln/nx') as Record<string, unknown>;
    const plugin = (await import('../dist/plugins/src/index.js')) as Record<string, unknown>;
    expect(Object.isExtensible(entry)).toBe(true); // Nx up to 22.6 sets plugin.name on it
    const hooks = Object.keys(plugin).filter((k) => typeof plugin[k] === 'function' || k === 'createNodesV2');
    for (const hook of ['createNodesV2', 'createDependencies', 'postTasksExecution']) expect(hooks).toContain(hook);
    for (const hook of hooks.filter((k) => ['createNodesV2', 'createNodes', 'createDependencies', 'preTasksExecution', 'postTasksExecution'].includes(k))) {
      expect(entry[hook], hook).toBeDefined();
    }
    expect((entry.createNodesV2 as [string])[0]).toBe((plugin.createNodesV2 as [string])[0]);
    expect(entry.createNodes).toBe(entry.createNodesV2);
  });
});
