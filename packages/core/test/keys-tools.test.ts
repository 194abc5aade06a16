/**
 * Issue 11 point 2: keys of targets kiln does not run. A two-package workspace (`@x/base` ← `@x/app`)
 * whose app builds with a real tool — tsdown, tsup, vite library mode, rollup, plain tsc — is keyed
 * and built before and after one edit: a comment, a private body edit in the dependency, a signature
 * edit in the dependency, a config edit. Where the key stays, the fresh build must be equivalent to the
 * one before by the independent judge (tools/lib/token-judge.mjs, which shares no code with kiln):
 * never a false hit. Where the edit reaches the output, the key must move.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { computeWorkspaceKeys, type ToolTargetSpec } from '@kiln/core';
import { judgeOutputs } from '../../../tools/lib/token-judge.mjs';
import { linkNodeModules } from '../../../tools/testing/workspace.mjs';

const run = promisify(execFile);
const temps: string[] = [];
afterAll(async () => {
  if (!process.env.KILN_TEST_KEEP) await Promise.all(temps.map((t) => rm(t, { recursive: true, force: true })));
});

type Files = Record<string, string>;
type Edit = Record<string, (s: string) => string>;

interface ToolCase {
  files: Files;
  /** Build commands per package root, in order (dependencies first): [bin, ...args]. */
  builds: [string, string[]][];
  /** The app's keyed target. */
  spec: ToolTargetSpec;
}

interface State {
  key: string;
  dir: string;
}

/** The files in a fresh temp workspace, with the repository's node_modules linked; returns its root. */
async function materialize(name: string, files: Files): Promise<string> {
  const root = join(await mkdtemp(join(tmpdir(), `kiln-tools-${name}-`)), 'ws');
  temps.push(dirname(root));
  for (const [f, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, f)), { recursive: true });
    await writeFile(join(root, f), text);
  }
  await linkNodeModules(root);
  return root;
}

async function state(name: string, c: ToolCase, edit: Edit = {}): Promise<State> {
  const files = { ...c.files };
  for (const [f, change] of Object.entries(edit)) {
    const after = change(files[f]!);
    if (after === files[f]) throw new Error(`edit of ${f} changed nothing`);
    files[f] = after;
  }
  const root = await materialize(name, files);
  // The key first: it must not depend on whether a build ran.
  const keys = await computeWorkspaceKeys(root, { store: false, workers: 0, targets: { 'packages/app': [c.spec] } });
  const app = keys.projects.find((p) => p.root === 'packages/app')!;
  const key = app.targets?.[c.spec.name]?.key;
  if (!key) throw new Error(`${name}: no key for the app's target: ${JSON.stringify(app.diagnostics)}`);
  for (const [pkg, [bin, args]] of c.builds.map(([p, cmd]) => [p, cmd] as const)) {
    try {
      await run(join(root, 'node_modules/.bin', bin), args, { cwd: join(root, pkg), env: { ...process.env, NODE_ENV: 'production' }, timeout: 120_000 });
    } catch (e) {
      throw new Error(`${name}: ${bin} ${args.join(' ')} in ${pkg} failed: ${(e as { stderr?: string }).stderr ?? e}`);
    }
  }
  return { key, dir: join(root, 'packages/app/dist') };
}

const befores = new Map<ToolCase, Promise<State>>();
async function compare(name: string, c: ToolCase, edit: Edit) {
  let b = befores.get(c);
  if (!b) befores.set(c, (b = state(`${name}-a`, c)));
  const before = await b;
  const after = await state(`${name}-b`, c, edit);
  const judged = await judgeOutputs(before.dir, after.dir);
  console.log(`${name}: key ${before.key === after.key ? 'stays' : 'moves'}; outputs ${judged.equal ? 'equivalent' : `differ (${judged.differences[0]})`}`);
  return { moved: before.key !== after.key, judged };
}

/** The key stays, and the fresh output is equivalent to the one it would restore. */
async function expectHit(name: string, c: ToolCase, edit: Edit) {
  const r = await compare(name, c, edit);
  expect(r.judged.compared, `${name}: nothing compared`).toBeGreaterThan(0);
  expect(r.judged.differences, `${name}: a hit whose fresh build differs is a false hit`).toEqual([]);
  expect(r.moved, `${name}: nothing the build can observe changed`).toBe(false);
}

async function expectMiss(name: string, c: ToolCase, edit: Edit) {
  const r = await compare(name, c, edit);
  expect(r.moved, `${name}: the edit reaches the output, the key must move`).toBe(true);
  return r;
}

const pkg = (name: string, extra: Record<string, unknown> = {}) => JSON.stringify({ name, version: '1.0.0', type: 'module', ...extra }, null, 2);
const TSCONFIG = JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, declaration: true, skipLibCheck: true, types: [], lib: ['ES2022'] }, include: ['src'] });
const BASE_TS = `function normalize(s: string): string {\n  return s.trim();\n}\nexport function greet(name: string): string {\n  return \`Hello, \${normalize(name)}\`;\n}\n`;
const APP_TS = `import { greet } from '@x/base';\n// the app\nexport const hello = (n: string) => greet(n);\nexport function shout(n: string): string {\n  return hello(n).toUpperCase();\n}\n`;

/** A TypeScript app over a TypeScript base whose `exports` point at its source (bundlers read it). */
function tsWorkspace(appExtra: Files, script: string, appDeps: 'dependencies' | 'devDependencies' = 'dependencies'): Files {
  return {
    'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
    'packages/base/package.json': pkg('@x/base', { exports: { '.': './src/index.ts' } }),
    'packages/base/tsconfig.json': TSCONFIG,
    'packages/base/src/index.ts': BASE_TS,
    'packages/app/package.json': pkg('@x/app', { [appDeps]: { '@x/base': '*' }, scripts: { build: script }, exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
    'packages/app/tsconfig.json': TSCONFIG,
    'packages/app/src/index.ts': APP_TS,
    ...appExtra,
  };
}

const BUILD: ToolTargetSpec = { name: 'build', command: '', script: 'build', outputs: ['{projectRoot}/dist'] };
const comment: Edit = { 'packages/app/src/index.ts': (s) => s.replace('// the app', '// the app, now documented\n/* and a block */') };
const privateBody: Edit = { 'packages/base/src/index.ts': (s) => s.replace('return s.trim();', 'return s.trim().normalize();') };
// The return type flows into the app's inferred `hello`: its declaration output changes.
const signature: Edit = { 'packages/base/src/index.ts': (s) => s.replace('export function greet(name: string): string', 'export function greet(name: string): `Hello, ${string}`') };

/** The key moves, and the fresh output does differ (the case is not a conservative miss). */
async function expectObservedMiss(name: string, c: ToolCase, edit: Edit) {
  const r = await expectMiss(name, c, edit);
  expect(r.judged.equal, `${name}: the edit should reach the output`).toBe(false);
}

describe('tsdown (keeps `dependencies` external)', () => {
  const c: ToolCase = {
    files: tsWorkspace({ 'packages/app/tsdown.config.ts': `import { defineConfig } from 'tsdown';\nexport default defineConfig({ entry: ['src/index.ts'], format: ['esm'], dts: true, clean: true });\n` }, 'tsdown'),
    builds: [['packages/app', ['tsdown', []]]],
    spec: BUILD,
  };
  it('a comment edit: hit, equivalent output', () => expectHit('tsdown-comment', c, comment));
  it("a private body edit in the dependency (external): hit, equivalent output", () => expectHit('tsdown-private', c, privateBody));
  it('a signature edit in the dependency: miss, and the output differs', () => expectObservedMiss('tsdown-signature', c, signature));
  it('a config edit: miss', () => expectMiss('tsdown-config', c, { 'packages/app/tsdown.config.ts': (s) => s.replace("format: ['esm']", "format: ['esm'], minify: true") }));
});

describe('tsdown with the dependency in devDependencies (bundled)', () => {
  const c: ToolCase = {
    files: tsWorkspace({ 'packages/app/tsdown.config.ts': `import { defineConfig } from 'tsdown';\nexport default defineConfig({ entry: ['src/index.ts'], format: ['esm'], dts: false, clean: true });\n` }, 'tsdown', 'devDependencies'),
    builds: [['packages/app', ['tsdown', []]]],
    spec: BUILD,
  };
  it('a private body edit in the bundled dependency: miss', async () => {
    const r = await expectMiss('tsdown-bundled-private', c, privateBody);
    expect(r.judged.equal, 'the dependency is bundled: its body is in the output').toBe(false);
  });
});

describe('tsup (keeps `dependencies` external)', () => {
  const c: ToolCase = {
    files: tsWorkspace({ 'packages/app/tsup.config.ts': `export default { entry: ['src/index.ts'], format: ['esm'], dts: true, clean: true };\n` }, 'tsup'),
    builds: [['packages/app', ['tsup', []]]],
    spec: BUILD,
  };
  it('a comment edit: hit, equivalent output', () => expectHit('tsup-comment', c, comment));
  it('a private body edit in the dependency (external): hit, equivalent output', () => expectHit('tsup-private', c, privateBody));
  it('a signature edit in the dependency: miss, and the output differs', () => expectObservedMiss('tsup-signature', c, signature));
  it('a config edit: miss', () => expectMiss('tsup-config', c, { 'packages/app/tsup.config.ts': (s) => s.replace("format: ['esm']", "format: ['esm'], minify: true") }));
});

describe('vite library mode (bundles its dependencies)', () => {
  const c: ToolCase = {
    files: tsWorkspace(
      { 'packages/app/vite.config.ts': `import { defineConfig } from 'vite';\nexport default defineConfig({ build: { lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' }, minify: false } });\n` },
      'vite build',
    ),
    builds: [['packages/app', ['vite', ['build', '--logLevel', 'error']]]],
    spec: BUILD,
  };
  it('a comment edit: hit, equivalent output', () => expectHit('vite-comment', c, comment));
  it('a private body edit in the dependency (bundled): miss', async () => {
    const r = await expectMiss('vite-private', c, privateBody);
    expect(r.judged.equal, 'vite bundles the dependency: its body is in the output').toBe(false);
  });
  it('a config edit: miss', () => expectMiss('vite-config', c, { 'packages/app/vite.config.ts': (s) => s.replace('minify: false', "minify: 'esbuild'") }));
  it('an HTML/CSS-like asset the sources import: miss', () => expectMiss('vite-asset', { ...c, files: { ...c.files, 'packages/app/src/index.ts': `import text from './note.txt?raw';\n${APP_TS}export const note = text;\n`, 'packages/app/src/note.txt': 'one\n', 'packages/app/src/env.d.ts': `declare module '*?raw' { const s: string; export default s; }\n` } }, { 'packages/app/src/note.txt': () => 'two\n' }));
});

describe("vite library mode whose config keeps dependencies external (asked of vite's resolved config)", () => {
  // As vite-plugin-externalize-deps does (and wrappers over it): `external` from the manifest's dependencies.
  const VITE_EXT = `import { defineConfig } from 'vite';\nimport pkg from './package.json' with { type: 'json' };\nconst deps = Object.keys(pkg.dependencies ?? {});\nexport default defineConfig({ build: { lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' }, minify: false, rollupOptions: { external: (id) => deps.some((d) => id === d || id.startsWith(d + '/')) } } });\n`;
  const c: ToolCase = {
    files: tsWorkspace({ 'packages/app/vite.config.ts': VITE_EXT }, 'vite build'),
    builds: [['packages/app', ['vite', ['build', '--logLevel', 'error']]]],
    spec: BUILD,
  };
  it("a private body edit in the dependency (external by vite's config): hit, equivalent output", () => expectHit('vite-ext-private', c, privateBody));
  it('a signature edit in the dependency: miss', () => expectMiss('vite-ext-signature', c, signature));
  it('the dependency moved to devDependencies (now bundled): a private body edit misses, and the output differs', async () => {
    const dev: ToolCase = { ...c, files: tsWorkspace({ 'packages/app/vite.config.ts': VITE_EXT }, 'vite build', 'devDependencies') };
    const r = await expectMiss('vite-ext-dev-private', dev, privateBody);
    expect(r.judged.equal, 'vite bundles it now: its body is in the output').toBe(false);
  });
  it("the verdict is vite's, recorded in the key's components", async () => {
    const root = await materialize('vite-verdict', c.files);
    const keys = await computeWorkspaceKeys(root, { store: false, workers: 0, targets: { 'packages/app': [c.spec] } });
    const t = keys.projects.find((p) => p.root === 'packages/app')!.targets!.build!;
    expect(t.components).toMatchObject({ bundles: 'vite-config', viteExternal: ['@x/base'] });
    expect(t.components.dependencies['@x/base']!.mode).toBe('surface');
  });
});

describe('rollup (JavaScript, its config)', () => {
  const c: ToolCase = {
    files: {
      'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
      'packages/app/package.json': pkg('@x/app', { scripts: { build: 'rollup -c' } }),
      'packages/app/rollup.config.mjs': `export default { input: 'src/index.js', output: { file: 'dist/index.js', format: 'es' } };\n`,
      'packages/app/src/index.js': `import { twice } from './math.js';\n// the app\nexport const four = twice(2);\n`,
      'packages/app/src/math.js': `export function twice(n) {\n  return n * 2;\n}\n`,
    },
    builds: [['packages/app', ['rollup', ['-c', '--silent']]]],
    spec: BUILD,
  };
  it('a comment edit: hit, equivalent output', () => expectHit('rollup-comment', c, { 'packages/app/src/index.js': (s) => s.replace('// the app', '// the app, documented') }));
  it('a body edit: miss', () => expectMiss('rollup-body', c, { 'packages/app/src/math.js': (s) => s.replace('n * 2', 'n + n') }));
  it('a file outside the project that the config imports: miss, and the output differs', () =>
    expectObservedMiss(
      'rollup-shared',
      {
        ...c,
        files: {
          ...c.files,
          'shared/banner.mjs': `export const banner = '/*! shared v1 */';\n`,
          'packages/app/rollup.config.mjs': `import { banner } from '../../shared/banner.mjs';\nexport default { input: 'src/index.js', output: { file: 'dist/index.js', format: 'es', banner } };\n`,
        },
      },
      { 'shared/banner.mjs': (s) => s.replace('v1', 'v2') },
    ));
  it('a config edit: miss', () => expectMiss('rollup-config', c, { 'packages/app/rollup.config.mjs': (s) => s.replace("format: 'es'", "format: 'es', banner: '/*! v1 */'") }));
});

describe('plain tsc from a script (never bundles)', () => {
  const c: ToolCase = {
    files: {
      'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
      'packages/base/package.json': pkg('@x/base', { exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, scripts: { build: 'tsc -p tsconfig.json' } }),
      'packages/base/tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, declaration: true, outDir: 'dist', rootDir: 'src', types: [], lib: ['ES2022'], skipLibCheck: true }, include: ['src'] }),
      'packages/base/src/index.ts': BASE_TS,
      'packages/app/package.json': pkg('@x/app', { dependencies: { '@x/base': '*' }, scripts: { build: 'tsc -p tsconfig.json' } }),
      'packages/app/tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true, declaration: true, outDir: 'dist', rootDir: 'src', types: [], lib: ['ES2022'], skipLibCheck: true }, include: ['src'] }),
      'packages/app/src/index.ts': APP_TS,
    },
    builds: [
      ['packages/base', ['tsc', ['-p', 'tsconfig.json']]],
      ['packages/app', ['tsc', ['-p', 'tsconfig.json']]],
    ],
    spec: BUILD,
  };
  it('the tool and its version are in the key; tsc never bundles', async () => {
    const root = await materialize('tsc-words', c.files);
    const keys = await computeWorkspaceKeys(root, { store: false, workers: 0, targets: { 'packages/app': [c.spec] } });
    const t = keys.projects.find((p) => p.root === 'packages/app')!.targets!.build!.components;
    expect(t.tools).toEqual({ typescript: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(t.bundles).toBe('never');
    expect(t.command).toBe('build: tsc -p tsconfig.json');
  });
  it('a comment edit: hit, equivalent output', () => expectHit('tsc-comment', c, comment));
  it('a private body edit in the dependency: hit, equivalent output', () => expectHit('tsc-private', c, privateBody));
  it('a signature edit in the dependency: miss, and the output differs', () => expectObservedMiss('tsc-signature', c, signature));
  it('a tsconfig edit: miss', () => expectMiss('tsc-config', c, { 'packages/app/tsconfig.json': (s) => s.replace('"declaration":true', '"declaration":true,"declarationMap":true') }));
});
