/**
 * Issue 10 point 2: everything that reaches a build's types without a named import is in its key (or
 * widens it). Each case builds a two-package workspace before and after one edit with the real
 * compiler and asserts both halves: where the consumer's fresh output changes its key moves, and in
 * the twin case (same mechanism, an edit that cannot change the output) its output is byte-identical
 * and its key stays.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { disposeScenarios, scenario, type WorkspaceSpec } from './lib/reach.js';

afterAll(disposeScenarios);

const TSCONFIG = (extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}) =>
  JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, rootDir: 'src', outDir: 'dist', types: [], lib: ['ES2022'], skipLibCheck: true, ...extra },
    include: ['src'],
    ...top,
  });

const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, ...extra });

function ws(dep: Record<string, string>, app: Record<string, string>, extra: Record<string, string> = {}): WorkspaceSpec {
  return {
    files: {
      'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
      'packages/dep/package.json': manifest('@x/dep'),
      'packages/dep/tsconfig.json': TSCONFIG(),
      'packages/app/package.json': manifest('@x/app', { dependencies: { '@x/dep': '*' } }),
      'packages/app/tsconfig.json': TSCONFIG(),
      ...Object.fromEntries(Object.entries(dep).map(([k, v]) => [`packages/dep/${k}`, v])),
      ...Object.fromEntries(Object.entries(app).map(([k, v]) => [`packages/app/${k}`, v])),
      ...extra,
    },
    build: ['packages/dep', 'packages/app'],
  };
}

async function expectMoves(name: string, spec: WorkspaceSpec, edit: Parameters<typeof scenario>[2]) {
  const r = await scenario(name, spec, edit);
  console.log(`${name}: keys moved ${r.moved.join(', ') || 'none'}; outputs changed ${r.outputChanged.join(', ') || 'none'} ${JSON.stringify(r.detail)}`);
  expect(r.outputChanged, `${name}: the case must change the consumer's output`).toContain('packages/app');
  expect(r.moved, `${name}: the consumer's output changed, its key must move`).toContain('@x/app');
}

async function expectStays(name: string, spec: WorkspaceSpec, edit: Parameters<typeof scenario>[2]) {
  const r = await scenario(name, spec, edit);
  console.log(`${name}: keys moved ${r.moved.join(', ') || 'none'}; outputs changed ${r.outputChanged.join(', ') || 'none'} ${JSON.stringify(r.detail)}`);
  expect(r.outputChanged, `${name}: the twin case must not change the consumer's output`).not.toContain('packages/app');
  expect(r.moved, `${name}: nothing the consumer can observe changed, its key must stay`).not.toContain('@x/app');
}

describe('global augmentation in a dependency (declare global)', () => {
  const spec = ws(
    {
      'src/index.ts': `export function one(): number { return 1; }\ndeclare global {\n  interface Array<T> {\n    /** first */\n    kilnFirst(): T | undefined;\n  }\n}\n`,
    },
    { 'src/index.ts': `import { one } from '@x/dep';\nexport const first = () => [one()].kilnFirst();\n` },
  );
  it('an augmented member type changes: the consumer key moves', () =>
    expectMoves('global-move', spec, { 'packages/dep/src/index.ts': (s) => s.replace('kilnFirst(): T | undefined', 'kilnFirst(): T | null') }));
  it('a comment inside the augmentation: the consumer key stays', () =>
    expectStays('global-stay', spec, { 'packages/dep/src/index.ts': (s) => s.replace('interface Array<T> {', 'interface Array<T> { // more') }));
});

describe('module augmentation in a subpath the consumer imports only for its side effect', () => {
  const spec = ws(
    {
      'src/index.ts': `export interface Options { a: number }\nexport function make(): Options { return { a: 1 } as Options; }\n`,
      'src/extra.ts': `declare module './index.js' {\n  interface Options {\n    b: string;\n  }\n}\nexport {};\n`,
    },
    { 'src/index.ts': `import { make } from '@x/dep';\nimport '@x/dep/extra';\nexport const b = make().b;\n` },
  );
  spec.files['packages/dep/package.json'] = manifest('@x/dep', {
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './extra': { types: './dist/extra.d.ts', default: './dist/extra.js' } },
  });
  it('the augmented member type changes: the consumer key moves', () =>
    expectMoves('augment-move', spec, { 'packages/dep/src/extra.ts': (s) => s.replace('b: string', 'b: boolean') }));
  it('a comment inside the augmentation: the consumer key stays', () =>
    expectStays('augment-stay', spec, { 'packages/dep/src/extra.ts': (s) => s.replace('b: string;', 'b: string; // the b') }));
});

describe("tsconfig `types` naming a dependency's file no one imports (a global augmentation in it)", () => {
  const spec = ws(
    {
      'src/index.ts': `const hidden = 1;\nexport const version: number = hidden;\n`,
      'src/augment.ts': `declare global {\n  interface KilnSettings {\n    mode: 'a';\n  }\n}\nexport {};\n`,
    },
    { 'src/index.ts': `export const settings = (s: KilnSettings) => s.mode;\n` },
  );
  spec.files['packages/dep/package.json'] = manifest('@x/dep', {
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './augment': { types: './dist/augment.d.ts', default: './dist/augment.js' } },
  });
  // The consumer does not list the dependency in its manifest: it reaches it through its tsconfig only.
  spec.files['packages/app/package.json'] = manifest('@x/app');
  spec.files['packages/app/tsconfig.json'] = TSCONFIG({ types: ['@x/dep/augment'] });
  it('the global interface changes: the consumer key moves', () =>
    expectMoves('types-move', spec, { 'packages/dep/src/augment.ts': (s) => s.replace("mode: 'a'", "mode: 'b'") }));
  it('a private edit elsewhere in the dependency: the consumer key stays', () =>
    expectStays('types-stay', spec, { 'packages/dep/src/index.ts': (s) => s.replace('hidden = 1', 'hidden = 2') }));
});

describe('/// <reference types> to a dependency the consumer does not import', () => {
  const spec = ws(
    {
      'src/index.ts': `export const version = 1;\n`,
      'src/augment.ts': `declare global {\n  interface KilnSettings {\n    mode: 'a';\n  }\n}\nexport {};\n`,
    },
    { 'src/index.ts': `/// <reference types="@x/dep/augment" />\nexport const settings = (s: KilnSettings) => s.mode;\n` },
  );
  spec.files['packages/dep/package.json'] = manifest('@x/dep', {
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './augment': { types: './dist/augment.d.ts', default: './dist/augment.js' } },
  });
  spec.files['packages/app/package.json'] = manifest('@x/app');
  it('the referenced global changes: the consumer key moves', () =>
    expectMoves('reftypes-move', spec, { 'packages/dep/src/augment.ts': (s) => s.replace("mode: 'a'", "mode: 'b'") }));
  it('a comment in the referenced file: the consumer key stays', () =>
    expectStays('reftypes-stay', spec, { 'packages/dep/src/augment.ts': (s) => s.replace("mode: 'a';", "mode: 'a'; // the mode") }));
});

describe('/// <reference path> to a file outside every package', () => {
  const spec = ws(
    { 'src/index.ts': `export const version = 1;\n` },
    { 'src/index.ts': `/// <reference path="../../../shared/globals.d.ts" />\nexport const mode = KILN_MODE;\n` },
    { 'shared/globals.d.ts': `declare const KILN_MODE: 'a';\n`, 'shared/other.d.ts': `declare const KILN_OTHER: 1;\n` },
  );
  spec.files['packages/app/tsconfig.json'] = TSCONFIG({ rootDir: undefined });
  it('the referenced declaration changes: the consumer key moves', () =>
    expectMoves('refpath-move', spec, { 'shared/globals.d.ts': (s) => s.replace("'a'", "'b'") }));
  it('a file beside it that nothing references: the consumer key stays', () =>
    expectStays('refpath-stay', spec, { 'shared/other.d.ts': (s) => s.replace('1', '2') }));
});

describe('ambient `declare module` from a local typeRoots folder', () => {
  const spec = ws(
    { 'src/index.ts': `export const version = 1;\n` },
    { 'src/index.ts': `import { mode } from 'virtual:kiln';\nexport const m = mode;\n` },
    {
      'types/virtual/index.d.ts': `declare module 'virtual:kiln' {\n  export const mode: 'a';\n}\n`,
      'types/unused/index.d.ts': `declare module 'virtual:unused' {\n  export const x: 1;\n}\n`,
    },
  );
  // No `types`: every folder of the typeRoots is included (TypeScript's automatic type directives).
  spec.files['packages/app/tsconfig.json'] = TSCONFIG({ types: undefined, typeRoots: ['../../types'] });
  it('the ambient module changes: the consumer key moves', () =>
    expectMoves('typeroots-move', spec, { 'types/virtual/index.d.ts': (s) => s.replace("'a'", "'b'") }));
  const explicit = structuredClone(spec);
  explicit.files['packages/app/tsconfig.json'] = TSCONFIG({ types: ['virtual'], typeRoots: ['../../types'] });
  it('with `types: ["virtual"]`, the named folder changes: the consumer key moves', () =>
    expectMoves('typeroots-explicit-move', explicit, { 'types/virtual/index.d.ts': (s) => s.replace("'a'", "'b'") }));
  it('with `types: ["virtual"]`, a folder it does not name changes: the consumer key stays', () =>
    expectStays('typeroots-explicit-stay', explicit, { 'types/unused/index.d.ts': (s) => s.replace('1', '2') }));
});

describe("an ambient module declared in a dependency's script file, reached through its emitted reference", () => {
  const spec = ws(
    {
      'src/index.ts': `/// <reference path="./ambient.d.ts" preserve="true" />\nexport const version = 1;\n`,
      'src/ambient.d.ts': `declare module 'virtual:dep' {\n  export const flavour: 'a';\n}\n`,
    },
    { 'src/index.ts': `import '@x/dep';\nimport { flavour } from 'virtual:dep';\nexport const f = flavour;\n` },
  );
  it('the ambient module changes: the consumer key moves', () =>
    expectMoves('ambient-dep-move', spec, { 'packages/dep/src/ambient.d.ts': (s) => s.replace("'a'", "'b'") }));
  it('a comment in it: the consumer key stays', () =>
    expectStays('ambient-dep-stay', spec, { 'packages/dep/src/ambient.d.ts': (s) => s.replace("'a';", "'a'; // flavour") }));
});

describe('JSON modules', () => {
  const bundler = { module: 'ESNext', moduleResolution: 'Bundler', resolveJsonModule: true };
  const spec = ws(
    { 'src/index.ts': `import data from './data.json';\nexport const config = data;\n`, 'src/data.json': `{ "a": 1 }\n`, 'README.md': 'dep\n' },
    { 'src/index.ts': `import { config } from '@x/dep';\nexport const c = config;\n` },
  );
  spec.files['packages/dep/tsconfig.json'] = TSCONFIG(bundler);
  spec.files['packages/app/tsconfig.json'] = TSCONFIG(bundler);
  it("a dependency's exported value inferred from its JSON changes type: the consumer key moves", () =>
    expectMoves('json-dep-move', spec, { 'packages/dep/src/data.json': () => `{ "a": "one" }\n` }));
  it("a dependency's file no build reads: the consumer key stays", () =>
    expectStays('json-dep-stay', spec, { 'packages/dep/README.md': () => 'dep, documented\n' }));

  const subpath = ws(
    { 'src/index.ts': `export const version = 1;\n`, 'data/config.json': `{ "a": 1 }\n`, 'data/other.json': `{ "b": 1 }\n` },
    { 'src/index.ts': `import config from '@x/dep/config.json';\nexport const c = config;\n` },
  );
  subpath.files['packages/dep/package.json'] = manifest('@x/dep', {
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './config.json': './data/config.json', './other.json': './data/other.json' },
  });
  subpath.files['packages/app/tsconfig.json'] = TSCONFIG(bundler);
  it("a JSON module imported from a dependency's subpath changes: the consumer key moves", () =>
    expectMoves('json-subpath-move', subpath, { 'packages/dep/data/config.json': () => `{ "a": true }\n` }));
  it('another JSON file of the dependency changes: the consumer key stays', () =>
    expectStays('json-subpath-stay', subpath, { 'packages/dep/data/other.json': () => `{ "b": 2 }\n` }));
});

describe("`paths` mappings into another package's sources", () => {
  const dep = { 'src/index.ts': `function helper(): number {\n  return 1;\n}\nexport function value(): number {\n  return helper();\n}\n` };
  const byName = ws(dep, { 'src/index.ts': `import { value } from '@x/dep';\nexport const v = value();\n` });
  // The program compiles the dependency's sources (and emits them beside the consumer's): no rootDir.
  byName.files['packages/app/tsconfig.json'] = TSCONFIG({ rootDir: undefined, paths: { '@x/dep': ['../dep/src/index.ts'] } });
  it('by package name: a private body edit in the mapped sources moves the consumer key', () =>
    expectMoves('paths-name-move', byName, { 'packages/dep/src/index.ts': (s) => s.replace('return 1;', 'return 2;') }));
  it('by package name: a comment edit there keeps it', () =>
    expectStays('paths-name-stay', byName, { 'packages/dep/src/index.ts': (s) => s.replace('return 1;', 'return 1; // one') }));

  const alias = ws(dep, { 'src/index.ts': `import { value } from '~dep/index.js';\nexport const v = value();\n` });
  alias.files['packages/app/package.json'] = manifest('@x/app');
  alias.files['packages/app/tsconfig.json'] = TSCONFIG({ rootDir: undefined, paths: { '~dep/*': ['../dep/src/*'] } });
  it('by an alias that names no package: a private body edit moves the consumer key', () =>
    expectMoves('paths-alias-move', alias, { 'packages/dep/src/index.ts': (s) => s.replace('return 1;', 'return 2;') }));
  it('by an alias: a comment edit keeps it', () =>
    expectStays('paths-alias-stay', alias, { 'packages/dep/src/index.ts': (s) => s.replace('return 1;', 'return 1; // one') }));
});

describe('project references with a relative import into the referenced project', () => {
  const spec = ws(
    { 'src/index.ts': `function helper(): number {\n  return 1;\n}\nexport function value(): number {\n  return helper();\n}\n` },
    { 'src/index.ts': `import { value } from '../../dep/src/index.js';\nexport const v = value();\n` },
  );
  spec.files['packages/dep/tsconfig.json'] = TSCONFIG({ composite: true });
  spec.files['packages/app/package.json'] = manifest('@x/app');
  spec.files['packages/app/tsconfig.json'] = TSCONFIG({}, { references: [{ path: '../dep' }] });
  it("the referenced project's signature changes: the consumer key moves", () =>
    expectMoves('refs-move', spec, { 'packages/dep/src/index.ts': (s) => s.replace('export function value(): number', 'export function value(): number | string') }));
  it("a private body edit in the referenced project: the consumer key stays", () =>
    expectStays('refs-stay', spec, { 'packages/dep/src/index.ts': (s) => s.replace('return 1;', 'return 2;') }));
});

describe('a symlinked source folder', () => {
  const spec = ws(
    { 'src/index.ts': `export const version = 1;\n` },
    { 'src/index.ts': `import { shared } from './linked/shared.js';\nexport const s = shared;\n` },
    { 'shared-src/shared.ts': `export const shared = (n: number) => n + 1;\n` },
  );
  spec.links = { 'packages/app/src/linked': 'shared-src' };
  it('a signature change in the linked folder: the consumer key moves', () =>
    expectMoves('symlink-move', spec, { 'shared-src/shared.ts': (s) => s.replace('(n: number) => n + 1', '(n: number) => String(n)') }));
  it('a comment in the linked folder: the consumer key stays', () =>
    expectStays('symlink-stay', spec, { 'shared-src/shared.ts': (s) => s.replace('n + 1', 'n + 1 /* next */') }));
});

describe('the JSX runtime (`jsx: react-jsx` with a workspace `jsxImportSource`), never imported by name', () => {
  const spec = ws(
    {
      'src/jsx-runtime.ts': `export namespace JSX {\n  export type Element = { kind: 'a' };\n  export interface IntrinsicElements { div: {} }\n}\nfunction make(): JSX.Element {\n  return { kind: 'a' } as JSX.Element;\n}\nexport function jsx(_type: unknown, _props: unknown): JSX.Element {\n  return make();\n}\nexport const jsxs = jsx;\nexport const Fragment = Symbol('fragment');\n`,
    },
    { 'src/index.tsx': `export const kind = (<div />).kind;\n` },
  );
  spec.files['packages/dep/package.json'] = manifest('@x/dep', { exports: { './jsx-runtime': { types: './dist/jsx-runtime.d.ts', default: './dist/jsx-runtime.js' } } });
  spec.files['packages/app/package.json'] = manifest('@x/app');
  spec.files['packages/app/tsconfig.json'] = TSCONFIG({ jsx: 'react-jsx', jsxImportSource: '@x/dep' });
  it("the runtime's element type changes: the consumer key moves", () =>
    expectMoves('jsx-move', spec, { 'packages/dep/src/jsx-runtime.ts': (s) => s.replace("export type Element = { kind: 'a' }", "export type Element = { kind: 'b' }").replace("{ kind: 'a' } as", "{ kind: 'b' } as") }));
  it("a private body edit in the runtime: the consumer key stays", () =>
    expectStays('jsx-stay', spec, { 'packages/dep/src/jsx-runtime.ts': (s) => s.replace('return make();', 'const e = make();\n  return e;') }));
});

describe('documentation on a statement that is not a declaration (found by the history check on trpc)', () => {
  // A file header JSDoc before `export * from`: tsc copies it into the `.d.ts`.
  const spec = ws(
    { 'src/index.ts': `/**\n * The the public entry.\n */\nexport * from './impl.js';\n`, 'src/impl.ts': `export const one = 1;\n` },
    { 'src/index.ts': `export const two = 2;\n` },
  );
  it("a JSDoc edit there moves the package's own key (its .d.ts changes)", async () => {
    const r = await scenario('stmt-doc-move', spec, { 'packages/dep/src/index.ts': (s) => s.replace('The the', 'The') });
    expect(r.outputChanged).toContain('packages/dep');
    expect(r.moved).toContain('@x/dep');
  });
  it('a line comment there keeps it', async () => {
    const r = await scenario('stmt-doc-stay', spec, { 'packages/dep/src/index.ts': (s) => s.replace("export * from './impl.js';", "// the implementation\nexport * from './impl.js';") });
    expect(r.outputChanged).not.toContain('packages/dep');
    expect(r.moved).not.toContain('@x/dep');
  });
});

describe('a dependency keyed whole holding a declaration too deep to digest', () => {
  it('an edit inside that declaration moves the consumer key (its file content stands in for it)', async () => {
    const { computeWorkspaceKeys } = await import('@kiln/core');
    const { mkdtemp, mkdir, writeFile, rm, symlink } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const deep = (v: number) => `function deep(a: boolean): number {\n${'if (a) {'.repeat(300)}return ${v};${'}'.repeat(300)}\nreturn 0;\n}\nexport function value(): number {\n  return deep(true);\n}\n`;
    const keyOfApp = async (v: number) => {
      const root = await mkdtemp(join(tmpdir(), 'kiln-deep-'));
      try {
        const spec = ws({ 'src/index.ts': deep(v) }, { 'src/index.ts': `import { value } from '@x/dep';\nexport const v = value();\n` });
        spec.files['packages/app/tsconfig.json'] = TSCONFIG({ rootDir: undefined, paths: { '@x/dep': ['../dep/src/index.ts'] } });
        for (const [f, t] of Object.entries(spec.files)) {
          await mkdir(join(root, f, '..'), { recursive: true });
          await writeFile(join(root, f), t);
        }
        await mkdir(join(root, 'node_modules/@x'), { recursive: true });
        await symlink('../../packages/dep', join(root, 'node_modules/@x/dep'), 'dir');
        const r = await computeWorkspaceKeys(root, { store: false, workers: 0 });
        const app = r.projects.find((p) => p.project === '@x/app')!;
        expect(app.components!.dependencies['@x/dep']!.mode).toBe('full');
        expect(r.projects.find((p) => p.project === '@x/dep')!.diagnostics.map((d) => d.code)).toContain('KILN_NESTING_TOO_DEEP');
        return app.key;
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    };
    expect(await keyOfApp(2)).not.toBe(await keyOfApp(1));
  });
});

describe("a JSON file a dependency's TypeScript only require()s (found by the history check on typescript-eslint)", () => {
  // The compiler does not follow a plain require() in a .ts file: the JSON reaches no type.
  const spec = ws(
    { 'src/index.ts': `declare function require(id: string): any;\nexport const version: string = require('../package.json').version;\n` },
    { 'src/index.ts': `import { version } from '@x/dep';\nexport const v = version;\n` },
  );
  it("a release (the dependency's package.json version) keeps the consumer key", () =>
    expectStays('require-json-stay', spec, { 'packages/dep/package.json': (s) => s.replace('"version":"1.0.0"', '"version":"1.1.0"') }));
});

describe('a dependency\'s "sideEffects" (the consumer\'s kiln.rep requires it only where used when it declares none)', () => {
  const spec = ws(
    { 'src/index.ts': `export function twice(n: number): number { return n * 2; }\n` },
    {
      'src/index.ts': `export { plain } from './plain.js';\nexport { quad } from './quad.js';\n`,
      'src/plain.ts': `export function plain(n: number): number { return n + 1; }\n`,
      'src/quad.ts': `import { twice } from '@x/dep';\nexport function quad(n: number): number { return twice(twice(n)); }\n`,
    },
  );
  spec.represent = true;
  it('the dependency declares "sideEffects": false: the consumer key moves', () =>
    expectMoves('side-effects-move', spec, { 'packages/dep/package.json': (s) => JSON.stringify({ ...JSON.parse(s), sideEffects: false }) }));
  it('a field of the dependency no build reads (description): the consumer key stays', () =>
    expectStays('side-effects-stay', spec, { 'packages/dep/package.json': (s) => JSON.stringify({ ...JSON.parse(s), description: 'a dependency' }) }));
});
