/**
 * Issue 10, points 1 and 7 — opaque workspace dependencies: a workspace package kiln does not build
 * as TypeScript (no tsconfig) keys its dependents by what it ships (npm's file list): declaration and
 * JS files semantically, every other shipped file by its bytes, its manifest surface, and what its
 * files import. One real workspace per shape in a temp directory, real `computeWorkspaceKeys`; where a
 * key must move, a real compile of the dependent (the TypeScript compiler API, as `tsc -p`) shows that
 * its output really changes. Then bad input: unreadable files and directories, a 10 MB `.d.ts`, a
 * `.node` binary, a dependency cycle through an opaque package, a malformed manifest — coded
 * diagnostics, no crash or hang, and keys that err on the side of moving.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWorkspaceKeys, type WorkspaceKeys } from '@kiln/core';
import { referenceBuild } from './lib/build-fixtures.js';
import { git } from './lib/git-repo.js';

const REPO = resolve(__dirname, '../../..');
type Files = Record<string, string | Buffer>;

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-keys-opaque-'));
  chmodSync(tmp, 0o755); // the unprivileged run below must reach it
});
afterAll(async () => {
  await chmodAll(tmp);
  await rm(tmp, { recursive: true, force: true });
});

const APP_TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022'],
    types: [],
    strict: true,
    rootDir: 'src',
    outDir: 'dist',
    declaration: true,
    skipLibCheck: true, // only the emit is compared; checking lib .d.ts files is most of a compile
  },
  include: ['src/**/*.ts'],
});

/** A TypeScript library of the workspace (kiln builds it) named `@fx/<name>`. */
function tsPackage(name: string, deps: string[], sources: Record<string, string>): Files {
  const out: Files = {
    [`packages/${name}/package.json`]: JSON.stringify({
      name: `@fx/${name}`,
      version: '1.0.0',
      type: 'module',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      dependencies: Object.fromEntries(deps.map((d) => [d, '*'])),
    }),
    [`packages/${name}/tsconfig.lib.json`]: APP_TSCONFIG,
  };
  for (const [f, text] of Object.entries(sources)) out[`packages/${name}/src/${f}`] = text;
  return out;
}

/** The dependent: `@fx/app`, whose inferred exports print the dependency's types into its `.d.ts`. */
const app = (dep: string, source: string): Files => tsPackage('app', [dep], { 'index.ts': source });

/** An opaque package at packages/<dir>: its package.json and files, nothing kiln builds. */
function opaquePackage(dir: string, manifest: Record<string, unknown>, files: Files): Files {
  const out: Files = { [`packages/${dir}/package.json`]: JSON.stringify({ version: '1.0.0', ...manifest }, null, 2) };
  for (const [f, v] of Object.entries(files)) out[`packages/${dir}/${f}`] = v;
  return out;
}

let count = 0;
/** A workspace in a fresh directory: root manifest, the files, and node_modules links for the compiler. */
function workspace(files: Files): string {
  const dir = join(tmp, `ws-${++count}`);
  const all: Files = { 'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }), ...files };
  for (const [rel, v] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), v);
  }
  // Link every workspace package as npm would, so a real compile of a dependent resolves them.
  for (const rel of Object.keys(all).filter((f) => /^packages\/[^/]+\/package\.json$/.test(f))) {
    const name = JSON.parse(String(all[rel])).name as string;
    const link = join(dir, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join('..', ...(name.startsWith('@') ? ['..'] : []), dirname(rel)), link);
  }
  return dir;
}

const keys = (dir: string): Promise<WorkspaceKeys> => computeWorkspaceKeys(dir, { store: false, workers: 0 });
const keyOf = (r: Pick<WorkspaceKeys, 'projects'>, project = '@fx/app'): string => {
  const k = r.projects.find((p) => p.project === project)?.key;
  expect(k, `${project} has a key`).toMatch(/^[0-9a-f]{32}$/);
  return k!;
};
const appKey = async (dir: string, project = '@fx/app') => keyOf(await keys(dir), project);
const codes = (r: Pick<WorkspaceKeys, 'diagnostics'>) => r.diagnostics.map((d) => d.code);

async function edit(dir: string, rel: string, f: (s: string) => string): Promise<void> {
  const path = join(dir, rel);
  const before = await readFile(path, 'utf8');
  const after = f(before);
  expect(after, `edit of ${rel} changed nothing`).not.toBe(before);
  await writeFile(path, after);
}

/** The key of @fx/app before and after `change`, in the same workspace. */
async function around(dir: string, change: () => Promise<void>, project = '@fx/app'): Promise<{ before: string; after: string }> {
  const before = await appKey(dir, project);
  await change();
  return { before, after: await appKey(dir, project) };
}

/** What the TypeScript compiler emits for @fx/app's declaration file (fresh build, outside the tree). */
let emits = 0;
function emittedDts(dir: string, file = 'index.d.ts'): string {
  const out = join(tmp, `emit-${++emits}`);
  const { errors } = referenceBuild(join(dir, 'packages/app'), out);
  expect(errors, 'the dependent compiles').toBe(0);
  return readFileSync(join(out, file), 'utf8');
}

// --- shapes -----------------------------------------------------------------------------------

/** Plain JS with a hand-written `.d.ts` (CommonJS, `main` + `types`). */
const PLAIN = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts' }, {
  'index.js': "'use strict';\n// Adds two numbers.\nexports.sum = function sum(a, b) {\n  return a + b;\n};\n",
  'index.d.ts': '/** Adds two numbers. */\nexport declare function sum(a: number, b: number): number;\n',
});
const APP_SUM = app('@fx/native', "import { sum } from '@fx/native';\nexport const total = () => sum(1, 2);\n");

/** napi-rs: a JS loader, a hand-written `.d.ts`, a platform `.node` addon, `files` whitelisting them. */
const NODE_ADDON = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0]), Buffer.from('napi addon v1')]);
const NAPI = opaquePackage(
  'napi',
  { name: '@fx/napi', main: 'index.js', types: 'index.d.ts', files: ['index.js', 'index.d.ts', '*.node'], napi: { name: 'napi' } },
  {
    'index.js':
      "const { join } = require('node:path');\n// napi-rs loader: the addon for this platform.\nconst binding = require(join(__dirname, `napi.${process.platform}-${process.arch}.node`));\nmodule.exports.hash = binding.hash;\n",
    'index.d.ts': '/* auto-generated by NAPI-RS */\nexport declare function hash(input: string): number\n',
    'napi.linux-x64.node': NODE_ADDON,
    'Cargo.toml': '[package]\nname = "napi"\n',
    'src/lib.rs': 'pub fn hash() {}\n',
  },
);
const APP_NAPI = app('@fx/napi', "import { hash } from '@fx/napi';\nexport const h = (s: string) => hash(s);\n");

/** wasm-pack: ESM glue in pkg/, its `.d.ts`, the `.wasm` module. */
const WASM_BYTES = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05]);
const WASM = opaquePackage(
  'wasm',
  { name: '@fx/wasm', type: 'module', files: ['pkg'], module: 'pkg/wasm_lib.js', main: 'pkg/wasm_lib.js', types: 'pkg/wasm_lib.d.ts', sideEffects: ['./pkg/wasm_lib.js'] },
  {
    'pkg/wasm_lib.js': "import * as wasm from './wasm_lib_bg.wasm';\nexport * from './wasm_lib_bg.js';\nimport { __wbg_set_wasm } from './wasm_lib_bg.js';\n__wbg_set_wasm(wasm);\n",
    'pkg/wasm_lib_bg.js': 'let wasm;\nexport function __wbg_set_wasm(val) {\n  wasm = val;\n}\n/**\n * @param {number} n\n * @returns {number}\n */\nexport function fib(n) {\n  return wasm.fib(n);\n}\n',
    'pkg/wasm_lib.d.ts': '/* tslint:disable */\n/* eslint-disable */\nexport function fib(n: number): number;\n',
    'pkg/wasm_lib_bg.wasm': WASM_BYTES,
    'pkg/wasm_lib_bg.wasm.d.ts': '/* tslint:disable */\nexport const memory: WebAssembly.Memory;\nexport function fib(a: number): number;\n',
    'src/lib.rs': '#[wasm_bindgen] pub fn fib() {}\n',
  },
);
const APP_WASM = app('@fx/wasm', "import { fib } from '@fx/wasm';\nexport const f10 = () => fib(10);\n");

/** A dual package: `exports` with `types` conditions on committed `.d.mts` / `.d.cts`. */
const DUAL = opaquePackage(
  'dual',
  {
    name: '@fx/dual',
    exports: {
      '.': {
        import: { types: './index.d.mts', default: './index.mjs' },
        require: { types: './index.d.cts', default: './index.cjs' },
      },
    },
  },
  {
    'index.mjs': 'export const level = () => 1;\n',
    'index.cjs': 'exports.level = () => 1;\n',
    'index.d.mts': 'export declare const level: () => number;\n',
    'index.d.cts': 'export declare const level: () => number;\n',
  },
);
const APP_DUAL = app('@fx/dual', "import { level } from '@fx/dual';\nexport const lv = () => level();\n");

describe('opaque workspace dependencies: what they ship keys their dependents', () => {
  it("the issue's repro: `number` → `string` in a hand-written index.d.ts moves the dependent's key, and its fresh build really differs", async () => {
    const dir = workspace({ ...PLAIN, ...APP_SUM });
    const before = emittedDts(dir);
    expect(before).toContain('export declare const total: () => number;');
    const k = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('b: number): number;', 'b: number): string;')));
    expect(emittedDts(dir)).toContain('export declare const total: () => string;');
    expect(k.after).not.toBe(k.before);
  });

  it('plain JS + .d.ts: a `//` comment and a prettier reformat of index.d.ts and index.js keep the key (and the output)', async () => {
    const dir = workspace({ ...PLAIN, ...APP_SUM });
    const output = emittedDts(dir);
    const prettier = await import('prettier');
    const k = await around(dir, async () => {
      await edit(dir, 'packages/native/index.d.ts', (s) => `// Hand-written declarations.\n${s}`.replace('sum(a: number, b: number)', 'sum(a: number,   b: number) // two numbers\n'));
      for (const [f, parser] of [['index.d.ts', 'typescript'], ['index.js', 'babel']] as const) {
        await edit(dir, `packages/native/${f}`, (s) => s.replace(/\n/g, '\n\n'));
        const p = join(dir, 'packages/native', f);
        await writeFile(p, await prettier.format(await readFile(p, 'utf8'), { parser, semi: false, singleQuote: true, tabWidth: 4, printWidth: 30 }));
      }
      expect(await readFile(join(dir, 'packages/native/index.js'), 'utf8')).not.toContain('return a + b;');
    });
    expect(emittedDts(dir)).toBe(output);
    expect(k.after).toBe(k.before);
  });

  it('plain JS: what its JS runs changing moves the key; a JSDoc edit in the .d.ts moves it too (the consumer sees docs)', async () => {
    const dir = workspace({ ...PLAIN, ...APP_SUM });
    const js = await around(dir, () => edit(dir, 'packages/native/index.js', (s) => s.replace('a + b', 'a - b')));
    expect(js.after).not.toBe(js.before);
    const doc = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('Adds two numbers.', 'Adds two integers.')));
    expect(doc.after).not.toBe(doc.before);
  });

  it('declaration order: swapping overloads in the .d.ts moves the key (and the output); swapping two unrelated declarations does not', async () => {
    const native = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts' }, {
      'index.js': 'function pick(x) {\n  return x;\n}\nfunction unused() {}\nconst first = [];\nconst second = first.concat(1);\nexports.pick = pick;\nexports.one = 1;\nexports.two = second.length + 1;\n',
      'index.d.ts': 'export declare function pick(x: number): number;\nexport declare function pick(x: number | string): string;\nexport declare const one: 1;\nexport declare const two: 2;\n',
    });
    const dir = workspace({ ...native, ...app('@fx/native', "import { pick } from '@fx/native';\nexport const p = () => pick(1);\n") });
    const before = emittedDts(dir);
    expect(before).toContain('p: () => number');
    const unrelated = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('export declare const one: 1;\nexport declare const two: 2;', 'export declare const two: 2;\nexport declare const one: 1;')));
    expect(unrelated.after).toBe(unrelated.before);
    // In the JS: hoisted functions reordered run the same; initialisers reordered do not.
    const hoisted = await around(dir, () => edit(dir, 'packages/native/index.js', (s) => s.replace('function pick(x) {\n  return x;\n}\nfunction unused() {}', 'function unused() {}\nfunction pick(x) {\n  return x;\n}')));
    expect(hoisted.after).toBe(hoisted.before);
    const initialisers = await around(dir, () => edit(dir, 'packages/native/index.js', (s) => s.replace('const first = [];\nconst second = first.concat(1);', 'const second = first.concat(1);\nconst first = [];')));
    expect(initialisers.after).not.toBe(initialisers.before);
    const overloads = await around(dir, () =>
      edit(dir, 'packages/native/index.d.ts', (s) => s.replace('export declare function pick(x: number): number;\nexport declare function pick(x: number | string): string;', 'export declare function pick(x: number | string): string;\nexport declare function pick(x: number): number;')),
    );
    expect(emittedDts(dir)).toContain('p: () => string');
    expect(overloads.after).not.toBe(overloads.before);
  });

  it('napi-rs-like: the .node addon is keyed by its bytes (KILN_OPAQUE_BINARY), the loader and index.d.ts semantically', async () => {
    const dir = workspace({ ...NAPI, ...APP_NAPI });
    const r = await keys(dir);
    const binary = r.diagnostics.find((d) => d.code === 'KILN_OPAQUE_BINARY');
    expect(binary?.file).toBe('packages/napi/napi.linux-x64.node');
    expect(binary?.severity).toBe('info');
    expect(r.projects.find((p) => p.project === '@fx/app')!.components!.dependencies['@fx/napi']!.reason).toMatch(/3 files it ships \(2 digested semantically, 1 by bytes\)/);
    const comment = await around(dir, () => edit(dir, 'packages/napi/index.js', (s) => s.replace('// napi-rs loader', '// The napi-rs loader')));
    expect(comment.after).toBe(comment.before);
    const addon = await around(dir, () => writeFile(join(dir, 'packages/napi/napi.linux-x64.node'), Buffer.concat([NODE_ADDON, Buffer.from([0])]).fill(0x41, 12, 13)));
    expect(addon.after).not.toBe(addon.before);
    const before = emittedDts(dir);
    const dts = await around(dir, () => edit(dir, 'packages/napi/index.d.ts', (s) => s.replace('): number', '): bigint')));
    expect(emittedDts(dir)).not.toBe(before);
    expect(dts.after).not.toBe(dts.before);
  });

  it('napi-rs-like: sources it does not ship (Cargo.toml, src/lib.rs) keep the key', async () => {
    const dir = workspace({ ...NAPI, ...APP_NAPI });
    const k = await around(dir, async () => {
      await edit(dir, 'packages/napi/src/lib.rs', (s) => s.replace('hash()', 'hash(input: &str)'));
      await edit(dir, 'packages/napi/Cargo.toml', (s) => `${s}version = "2.0.0"\n`);
    });
    expect(k.after).toBe(k.before);
  });

  it('a .node that git ignores (a cargo build product) but `files` ships is keyed by its bytes, with KILN_OPAQUE_BUILD_PRODUCT', async () => {
    const dir = workspace({ ...NAPI, ...APP_NAPI, '.gitignore': 'node_modules\n*.node\ntarget/\n' });
    git(dir, 'init', '-q');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'init');
    const r = await keys(dir);
    const d = r.diagnostics.find((x) => x.code === 'KILN_OPAQUE_BUILD_PRODUCT');
    expect(d?.file).toBe('packages/napi/napi.linux-x64.node');
    expect(d?.message).toContain('@fx/napi');
    const k = await around(dir, () => writeFile(join(dir, 'packages/napi/napi.linux-x64.node'), Buffer.concat([NODE_ADDON, Buffer.from('rebuilt')])));
    expect(k.after).not.toBe(k.before);
    // Committed files are not build products.
    expect(r.diagnostics.filter((x) => x.code === 'KILN_OPAQUE_BUILD_PRODUCT').map((x) => x.message).join()).not.toContain('index.d.ts');
  });

  it('wasm-pack-like: the .wasm bytes and a type in pkg/*.d.ts move the key; a reformat of the JS glue does not', async () => {
    const dir = workspace({ ...WASM, ...APP_WASM });
    const glue = await around(dir, () => edit(dir, 'packages/wasm/pkg/wasm_lib_bg.js', (s) => s.replace('export function fib(n) {\n  return wasm.fib(n);\n}', 'export function fib(n) { return wasm.fib(n) }')));
    expect(glue.after).toBe(glue.before);
    const wasm = await around(dir, () => writeFile(join(dir, 'packages/wasm/pkg/wasm_lib_bg.wasm'), Buffer.concat([WASM_BYTES, Buffer.from([7])])));
    expect(wasm.after).not.toBe(wasm.before);
    const before = emittedDts(dir);
    expect(before).toContain('f10: () => number');
    const dts = await around(dir, () => edit(dir, 'packages/wasm/pkg/wasm_lib.d.ts', (s) => s.replace('fib(n: number): number', 'fib(n: number): bigint')));
    expect(emittedDts(dir)).toContain('f10: () => bigint');
    expect(dts.after).not.toBe(dts.before);
    const r = await keys(dir);
    expect(r.diagnostics.find((d) => d.code === 'KILN_OPAQUE_BINARY')?.file).toBe('packages/wasm/pkg/wasm_lib_bg.wasm');
  });

  it('exports map with `types` conditions: a type change in the committed .d.mts moves the key (and the output); a comment in the .d.cts does not', async () => {
    const dir = workspace({ ...DUAL, ...APP_DUAL });
    const comment = await around(dir, () => edit(dir, 'packages/dual/index.d.cts', (s) => `// CommonJS flavour\n${s}`));
    expect(comment.after).toBe(comment.before);
    expect(emittedDts(dir)).toContain('lv: () => number');
    const mts = await around(dir, () => edit(dir, 'packages/dual/index.d.mts', (s) => s.replace('() => number', '() => bigint')));
    expect(emittedDts(dir)).toContain('lv: () => bigint');
    expect(mts.after).not.toBe(mts.before);
    // The condition itself: pointing `import.types` elsewhere is a manifest change consumers resolve through.
    const cond = await around(dir, () => edit(dir, 'packages/dual/package.json', (s) => s.replace('"types": "./index.d.mts"', '"types": "./index.d.cts"')));
    expect(cond.after).not.toBe(cond.before);
  });

  it('a `files` whitelist: an un-shipped file changing keeps the key, a shipped one moves it; .npmignore and always-shipped files follow npm', async () => {
    const whitelisted = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts', files: ['index.js', 'index.d.ts', 'data/'] }, {
      'index.js': "exports.sum = (a, b) => a + b;\nexports.table = require('./data/table.json');\n",
      'index.d.ts': 'export declare function sum(a: number, b: number): number;\nexport declare const table: { n: number };\n',
      'data/table.json': '{ "n": 1 }\n',
      'internal.d.ts': 'export declare const secret: number;\n',
      'scripts/gen.js': 'console.log("generating");\n',
      'README.md': '# native\n',
    });
    const dir = workspace({ ...whitelisted, ...APP_SUM });
    const unshipped = await around(dir, async () => {
      await edit(dir, 'packages/native/internal.d.ts', (s) => s.replace('number', 'string'));
      await edit(dir, 'packages/native/scripts/gen.js', (s) => s.replace('generating', 'regenerating'));
    });
    expect(unshipped.after).toBe(unshipped.before);
    const json = await around(dir, () => edit(dir, 'packages/native/data/table.json', (s) => s.replace('1', '2')));
    expect(json.after).not.toBe(json.before);
    const readme = await around(dir, () => edit(dir, 'packages/native/README.md', (s) => `${s}More.\n`));
    expect(readme.after, 'README is always in the tarball').not.toBe(readme.before);
    const shipped = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('{ n: number }', '{ n: number; m: number }')));
    expect(shipped.after).not.toBe(shipped.before);

    // No `files`: .npmignore decides.
    const ignoring = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts' }, {
      'index.js': 'exports.sum = (a, b) => a + b;\n',
      'index.d.ts': 'export declare function sum(a: number, b: number): number;\n',
      '.npmignore': 'test/\n',
      'test/sum.test.js': "require('..').sum(1, 2);\n",
    });
    const dir2 = workspace({ ...ignoring, ...APP_SUM });
    const test = await around(dir2, () => edit(dir2, 'packages/native/test/sum.test.js', (s) => s.replace('1, 2', '2, 3')));
    expect(test.after).toBe(test.before);
  });

  it('a shipped .d.ts importing a file `files` leaves out: KILN_OPAQUE_UNSHIPPED_IMPORT, and that file keys the dependent (its build reads it)', async () => {
    const broken = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts', files: ['index.js', 'index.d.ts'] }, {
      'index.js': "module.exports = require('./impl.js');\n",
      'index.d.ts': "/// <reference path=\"./globals.d.ts\" />\nexport * from './impl.js';\n",
      'impl.d.ts': "export declare function sum(a: number, b: number): number;\nexport { table } from './more.js';\n",
      'impl.js': "exports.sum = (a, b) => a + b;\nexports.table = require('./data.json');\n",
      'more.d.ts': 'export declare const table: { n: number };\n',
      'data.json': '{ "n": 1 }\n',
      'globals.d.ts': 'declare var NATIVE_VERSION: string;\n',
      'unrelated.d.ts': 'export declare const nobody: number;\n',
    });
    const dir = workspace({ ...broken, ...APP_SUM });
    const r = await keys(dir);
    const found = r.diagnostics.filter((d) => d.code === 'KILN_OPAQUE_UNSHIPPED_IMPORT').map((d) => d.file);
    expect(found.sort()).toEqual(['packages/native/data.json', 'packages/native/globals.d.ts', 'packages/native/impl.d.ts', 'packages/native/impl.js', 'packages/native/more.d.ts']);
    const before = emittedDts(dir);
    const impl = await around(dir, () => edit(dir, 'packages/native/impl.d.ts', (s) => s.replace('b: number): number;', 'b: number): string;')));
    expect(emittedDts(dir)).not.toBe(before);
    expect(impl.after).not.toBe(impl.before);
    const comment = await around(dir, () => edit(dir, 'packages/native/impl.d.ts', (s) => `// not shipped, still read\n${s}`));
    expect(comment.after).toBe(comment.before);
    for (const [rel, f] of [['more.d.ts', (s: string) => s.replace('n: number', 'n: 1')], ['globals.d.ts', (s: string) => s.replace('string', 'number')], ['data.json', (s: string) => s.replace('1', '2')]] as const) {
      const k = await around(dir, () => edit(dir, `packages/native/${rel}`, f));
      expect(k.after, rel).not.toBe(k.before);
    }
    const nobody = await around(dir, () => edit(dir, 'packages/native/unrelated.d.ts', (s) => s.replace('number', 'string')));
    expect(nobody.after, 'a file neither shipped nor imported').toBe(nobody.before);
  });

  it('a version bump of the opaque package keeps the key; a new dependency of it moves it', async () => {
    const dir = workspace({ ...PLAIN, ...APP_SUM });
    const bump = await around(dir, () => edit(dir, 'packages/native/package.json', (s) => s.replace('"version": "1.0.0"', '"version": "1.1.0"')));
    expect(bump.after).toBe(bump.before);
    const dep = await around(dir, () => edit(dir, 'packages/native/package.json', (s) => s.replace('"main"', '"dependencies": { "left-pad": "^1.0.0" },\n  "main"')));
    expect(dep.after).not.toBe(dep.before);
  });

  it('what its files import reaches the key: a workspace package they import (its surface) and an external one (its lockfile version)', async () => {
    const native = opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts', dependencies: { '@fx/base': '*', 'ext-lib': '^1.0.0' } }, {
      'index.js': "exports.level = require('@fx/base').LEVEL;\n",
      'index.d.ts': "import { LEVEL } from '@fx/base';\nimport type { Opt } from 'ext-lib';\nexport declare const level: typeof LEVEL;\nexport declare const opt: Opt;\n",
    });
    const lock = (v: string) => JSON.stringify({ name: 'ws', lockfileVersion: 3, packages: { '': { name: 'ws' }, 'node_modules/ext-lib': { version: v } } });
    const dir = workspace({
      ...native,
      ...tsPackage('base', [], { 'index.ts': 'export const LEVEL = 2 as const;\nexport function unrelated(): number {\n  return 1;\n}\n' }),
      ...app('@fx/native', "import { level } from '@fx/native';\nexport const lv = level;\n"),
      'package-lock.json': lock('1.0.0'),
    });
    const body = await around(dir, () => edit(dir, 'packages/base/src/index.ts', (s) => s.replace('return 1;', 'return 1 + 0;')));
    expect(body.after, 'a private body edit in base is not in its surface').toBe(body.before);
    const level = await around(dir, () => edit(dir, 'packages/base/src/index.ts', (s) => s.replace('LEVEL = 2', 'LEVEL = 3')));
    expect(level.after).not.toBe(level.before);
    const ext = await around(dir, () => edit(dir, 'package-lock.json', (s) => s.replace('"1.0.0"', '"1.1.0"')));
    expect(ext.after).not.toBe(ext.before);
  });

  it('two clones at different paths compute the same keys, and no absolute path enters the result', async () => {
    const files = { ...NAPI, ...APP_NAPI, ...WASM, ...tsPackage('both', ['@fx/wasm', '@fx/dual'], { 'index.ts': "export { fib } from '@fx/wasm';\nexport { level } from '@fx/dual';\n" }), ...DUAL };
    const a = workspace(files);
    const b = workspace(files);
    const ra = await keys(a);
    const rb = await keys(b);
    expect(ra.projects.map((p) => [p.project, p.key])).toEqual(rb.projects.map((p) => [p.project, p.key]));
    expect(ra.projects.filter((p) => p.key).length).toBe(2);
    for (const r of [ra, rb]) expect(JSON.stringify(r)).not.toContain(tmp);
  });
});

// --- bad input ----------------------------------------------------------------------------------

/** Restore permissions so the directory can be removed. */
async function chmodAll(dir: string): Promise<void> {
  const { readdir, stat } = await import('node:fs/promises');
  const walk = async (p: string): Promise<void> => {
    await chmod(p, 0o755).catch(() => undefined);
    if ((await stat(p).catch(() => null))?.isDirectory()) for (const e of await readdir(p).catch(() => [])) await walk(join(p, e));
  };
  await walk(dir);
}

/**
 * Keys computed by a process that permission bits apply to. Root reads a chmod-000 file anyway, so as
 * root the computation runs in a child process as `nobody` (Node's spawn sets its uid); otherwise here.
 */
function keysUnprivileged(dir: string, targets?: Record<string, unknown[]>): Pick<WorkspaceKeys, 'projects' | 'diagnostics'> | 'skip' {
  const script = `import { computeWorkspaceKeys } from '@kiln/core';
const targets = process.argv[2] ? JSON.parse(process.argv[2]) : undefined;
const r = await computeWorkspaceKeys(process.argv[1], { store: false, workers: 0, ...(targets ? { targets } : {}) });
process.stdout.write(JSON.stringify({ projects: r.projects, diagnostics: r.diagnostics }));`;
  const asRoot = process.getuid?.() === 0;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script, dir, ...(targets ? [JSON.stringify(targets)] : [])], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? '', HOME: tmp, KILN_GIT_SYNC: '0' },
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  if (child.error && asRoot && (child.error as NodeJS.ErrnoException).code === 'EPERM') {
    console.log(`unreadable-file case skipped: running as root and cannot switch to an unprivileged user (${child.error.message})`);
    return 'skip';
  }
  expect(child.error, 'no hang, no spawn failure').toBeUndefined();
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
}

describe('opaque dependencies on bad input: coded diagnostics, no crash or hang, keys that err on moving', () => {
  it('a shipped file nobody can read: KILN_OPAQUE_UNREADABLE, a key, and the key moves when the file is written', async () => {
    const dir = workspace({ ...PLAIN, ...APP_SUM });
    await chmodAll(dir);
    const readable = keysUnprivileged(dir);
    if (readable === 'skip') return;
    expect(codes(readable)).not.toContain('KILN_OPAQUE_UNREADABLE');
    const file = join(dir, 'packages/native/index.d.ts');
    await chmod(file, 0o000);
    const r1 = keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    const d = r1.diagnostics.find((x) => x.code === 'KILN_OPAQUE_UNREADABLE');
    expect(d?.file).toBe('packages/native/index.d.ts');
    expect(d?.message).toContain('EACCES');
    expect(JSON.stringify(r1)).not.toContain(tmp);
    expect(keyOf(r1)).not.toBe(keyOf(readable));
    // Unread, it still moves: the edit, made by someone who can write it.
    await writeFile(file, (await readFile(file, 'utf8')).replace('b: number): number;', 'b: number): string;'));
    await chmod(file, 0o000);
    const r2 = keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    expect(keyOf(r2)).not.toBe(keyOf(r1));
  });

  it('a directory nobody can list: KILN_OPAQUE_PACKLIST_FAILED, every file keys, and adding a file to it moves the key', async () => {
    const dir = workspace({
      ...opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts' }, {
        'index.js': "exports.sum = (a, b) => a + b;\n",
        'index.d.ts': 'export declare function sum(a: number, b: number): number;\n',
        'lib/extra.js': 'exports.x = 1;\n',
      }),
      ...APP_SUM,
    });
    await chmodAll(dir);
    const lib = join(dir, 'packages/native/lib');
    await chmod(lib, 0o000);
    const r1 = keysUnprivileged(dir);
    if (r1 === 'skip') return;
    expect(codes(r1)).toEqual(expect.arrayContaining(['KILN_OPAQUE_PACKLIST_FAILED', 'KILN_OPAQUE_UNREADABLE']));
    expect(r1.diagnostics.find((x) => x.code === 'KILN_OPAQUE_UNREADABLE')?.file).toBe('packages/native/lib');
    await chmod(lib, 0o755);
    await writeFile(join(lib, 'more.js'), 'exports.y = 2;\n');
    await chmod(lib, 0o000);
    const r2 = keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    expect(keyOf(r2)).not.toBe(keyOf(r1));
    // A file edited in place inside it leaves the directory's own stamp as it was: the key never
    // repeats while the directory cannot be listed (it once was keyed by that stamp: a wrong hit).
    await chmod(lib, 0o755);
    await writeFile(join(lib, 'extra.js'), 'exports.x = 2;\n');
    await chmod(lib, 0o000);
    const r2b = keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    expect(keyOf(r2b)).not.toBe(keyOf(r2));
    expect(keyOf(keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>), 'nothing changed, still no repeat').not.toBe(keyOf(r2b));
    // The readable files still key semantically: the edit moves it too.
    await edit(dir, 'packages/native/index.d.ts', (s) => s.replace('b: number): number;', 'b: number): string;'));
    const r3 = keysUnprivileged(dir) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    expect(keyOf(r3)).not.toBe(keyOf(r2));
  });

  it("a directory nobody can list under a tool-keyed project: KILN_TOOL_INPUT_UNREADABLE, and that target's key never repeats", async () => {
    const dir = workspace({
      ...tsPackage('tool', [], { 'index.ts': 'export const one = 1;\n' }),
    });
    const manifest = JSON.parse(readFileSync(join(dir, 'packages/tool/package.json'), 'utf8'));
    writeFileSync(join(dir, 'packages/tool/package.json'), JSON.stringify({ ...manifest, scripts: { build: 'node build.mjs' } }));
    mkdirSync(join(dir, 'packages/tool/assets'));
    writeFileSync(join(dir, 'packages/tool/assets/banner.txt'), 'v1\n');
    await chmodAll(dir);
    const targets = { 'packages/tool': [{ name: 'build', command: '', script: 'build', outputs: ['{projectRoot}/dist'] }] };
    const toolKey = (r: Pick<WorkspaceKeys, 'projects'>) => r.projects.find((p) => p.root === 'packages/tool')?.targets?.build?.key;
    const readable = keysUnprivileged(dir, targets);
    if (readable === 'skip') return;
    expect(toolKey(readable)).toMatch(/^[0-9a-f]{32}$/);
    expect(toolKey(keysUnprivileged(dir, targets) as Pick<WorkspaceKeys, 'projects'>), 'readable: the key repeats').toBe(toolKey(readable));
    await chmod(join(dir, 'packages/tool/assets'), 0o000);
    const r1 = keysUnprivileged(dir, targets) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    const d = r1.projects.flatMap((p) => p.diagnostics).find((x) => x.code === 'KILN_TOOL_INPUT_UNREADABLE');
    expect(d?.file).toBe('packages/tool/assets');
    const r2 = keysUnprivileged(dir, targets) as Pick<WorkspaceKeys, 'projects' | 'diagnostics'>;
    expect(toolKey(r2), 'unreadable: never the same key twice').not.toBe(toolKey(r1));
    expect(JSON.stringify(r1)).not.toContain(tmp);
  });

  it('a 10 MB .d.ts: KILN_FILE_TOO_LARGE at its workspace path, digested by its bytes, so even a comment edit moves the key', async () => {
    let big = '// generated\n';
    for (let i = 0; big.length < 10 * 1024 * 1024; i++) big += `export declare function f${i}(x: number): number;\n`;
    const dir = workspace({
      ...opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts' }, {
        'index.js': "module.exports = require('./big.js');\n",
        'index.d.ts': "export * from './big.js';\n",
        'big.d.ts': big,
        'big.js': 'exports.f0 = (x) => x;\n',
      }),
      ...app('@fx/native', "import { f0 } from '@fx/native';\nexport const g = f0;\n"),
    });
    const t0 = performance.now();
    const r = await keys(dir);
    console.log(`10 MB .d.ts keyed in ${Math.round(performance.now() - t0)} ms`);
    const d = r.diagnostics.find((x) => x.code === 'KILN_FILE_TOO_LARGE');
    expect(d?.file).toBe('packages/native/big.d.ts');
    const k = await around(dir, () => edit(dir, 'packages/native/big.d.ts', (s) => s.replace('// generated', '// generated, do not edit')));
    expect(k.after).not.toBe(k.before);
  });

  it('a dependency cycle through an opaque package: KILN_OPAQUE_CYCLE, it terminates, and a surface that closed the cycle is not reused where it would hide a change', async () => {
    // a-first → b (TS) ⇄ native (opaque) ← z-last. a-first is keyed first: native's surface is then
    // computed inside b's, where b stands as `cycle`. z-last sees b only through native.
    const dir = workspace({
      ...tsPackage('a-first', ['@fx/b'], { 'index.ts': "import { LEVEL } from '@fx/b';\nexport const a = LEVEL;\n" }),
      ...tsPackage('b', ['@fx/native'], { 'index.ts': "export { level } from '@fx/native';\nexport const LEVEL = 2 as const;\n" }),
      ...opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts', dependencies: { '@fx/b': '*' } }, {
        'index.js': "exports.level = require('@fx/b').LEVEL;\n",
        'index.d.ts': "import { LEVEL } from '@fx/b';\nexport declare const level: typeof LEVEL;\n",
      }),
      ...tsPackage('z-last', ['@fx/native'], { 'index.ts': "import { level } from '@fx/native';\nexport const z = level;\n" }),
    });
    const r = await keys(dir);
    const cycle = r.diagnostics.filter((d) => d.code === 'KILN_OPAQUE_CYCLE');
    expect(cycle).toHaveLength(1);
    expect(cycle[0]!.message).toContain('@fx/b → @fx/native → @fx/b');
    expect(cycle[0]!.file).toBe('packages/native');
    const again = await keys(dir);
    expect(again.projects.map((p) => p.key)).toEqual(r.projects.map((p) => p.key));
    // LEVEL reaches z-last's output through native's `typeof LEVEL`: its key must move.
    const z = await around(dir, () => edit(dir, 'packages/b/src/index.ts', (s) => s.replace('LEVEL = 2', 'LEVEL = 3')), '@fx/z-last');
    expect(z.after).not.toBe(z.before);
    const a = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('typeof LEVEL', 'typeof LEVEL | 0')), '@fx/a-first');
    expect(a.after, 'a-first reaches native through b').not.toBe(a.before);
  });

  it('the same rule for a package keyed whole (its sources compiled by the dependent): one computed where a cycle closed is not reused', async () => {
    // p's `exports` names its .ts source, so a dependent compiles p whole. x → p → x: a-first keys x
    // first, and p is keyed whole inside x's surface, where x stands as `cycle`. z-last sees x only
    // through p's sources.
    const p = tsPackage('p', ['@fx/x'], { 'index.ts': "import { X } from '@fx/x';\nexport const fromX = X;\n" });
    const pManifest = JSON.parse(String(p['packages/p/package.json']));
    p['packages/p/package.json'] = JSON.stringify({ ...pManifest, exports: { '.': './src/index.ts' }, main: undefined, types: undefined });
    const dir = workspace({
      ...tsPackage('a-first', ['@fx/x'], { 'index.ts': "import { X } from '@fx/x';\nexport const a = X;\n" }),
      ...tsPackage('x', ['@fx/p'], { 'index.ts': "import { fromX } from '@fx/p';\nexport const X = 2 as const;\nexport const again = (): number => fromX;\n" }),
      ...p,
      ...tsPackage('z-last', ['@fx/p'], { 'index.ts': "import { fromX } from '@fx/p';\nexport const z = fromX;\n" }),
    });
    const r = await keys(dir);
    expect(r.projects.find((q) => q.project === '@fx/z-last')!.components!.dependencies['@fx/p']!.reason).toBe('a dependent compiles its sources');
    const z = await around(dir, () => edit(dir, 'packages/x/src/index.ts', (s) => s.replace('X = 2', 'X = 3')), '@fx/z-last');
    expect(z.after).not.toBe(z.before);
  });

  it('two opaque packages importing each other: it terminates with a key, and an edit on either side moves the dependent', async () => {
    const dir = workspace({
      ...opaquePackage('p', { name: '@fx/p', main: 'index.js', types: 'index.d.ts' }, {
        'index.js': "exports.p = 1; exports.q = () => require('@fx/q').q;\n",
        'index.d.ts': "export declare const p: 1;\nexport { q } from '@fx/q';\n",
      }),
      ...opaquePackage('q', { name: '@fx/q', main: 'index.js', types: 'index.d.ts' }, {
        'index.js': "exports.q = 2; exports.p = () => require('@fx/p').p;\n",
        'index.d.ts': "export declare const q: 2;\nexport { p } from '@fx/p';\n",
      }),
      ...app('@fx/p', "import { q } from '@fx/p';\nexport const x = q;\n"),
    });
    const r = await keys(dir);
    expect(codes(r)).toContain('KILN_OPAQUE_CYCLE');
    const q = await around(dir, () => edit(dir, 'packages/q/index.d.ts', (s) => s.replace('q: 2', 'q: 3')));
    expect(q.after).not.toBe(q.before);
    const p = await around(dir, () => edit(dir, 'packages/p/index.d.ts', (s) => s.replace('p: 1', 'p: 4')));
    expect(p.after).not.toBe(p.before);
  });

  it('a malformed manifest (files as a string, bin as an array, bundleDependencies: true) neither crashes nor hangs the file list', async () => {
    const dir = workspace({
      ...opaquePackage('native', { name: '@fx/native', main: 'index.js', types: 'index.d.ts', files: 'index.js', bin: ['./cli.js'], bundleDependencies: true, dependencies: { 'left-pad': '*' } }, {
        'index.js': 'exports.sum = (a, b) => a + b;\n',
        'index.d.ts': 'export declare function sum(a: number, b: number): number;\n',
        'cli.js': '#!/usr/bin/env node\n',
      }),
      ...APP_SUM,
    });
    const k = await around(dir, () => edit(dir, 'packages/native/index.d.ts', (s) => s.replace('): number', '): string')));
    expect(k.after).not.toBe(k.before);
  });
});
