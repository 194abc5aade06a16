/**
 * Identity (SPEC §2): overloads and merged declarations separated by signature digest, nested
 * declarations with dense per-parent discriminants, surface identities through exports/main and
 * re-export chains — and no span, offset or counter in any identity.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digestTree } from '@kiln/core';
import { extractSlice } from '../dist/facts/extract.js';

const tmp = mkdtempSync(join(tmpdir(), 'kiln-identity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

const ids = (src: string, variant: 'ts' | 'js' = 'ts') =>
  extractSlice(Buffer.from(src), variant).decls.map((d) => `${d.path}:${d.kind}`);

describe('identity', () => {
  it('separates overload signatures by signature digest; the implementation keeps the plain name', () => {
    const src = `export function parse(x: string): number;\nexport function parse(x: number): number;\nexport function parse(x: any) { return +x; }\n`;
    const paths = ids(src);
    expect(paths).toHaveLength(3);
    expect(paths[2]).toBe('parse:function');
    expect(paths[0]).toMatch(/^parse~[0-9a-f]{8}:function$/);
    expect(paths[1]).toMatch(/^parse~[0-9a-f]{8}:function$/);
    expect(paths[0]).not.toBe(paths[1]);
    // Editing the implementation body or moving the overloads keeps every identity.
    const edited = `export function parse(x: number): number;\n\nexport function parse(x: string): number;\nexport function parse(x: any) { return Number(x) + 0; }\n`;
    expect(new Set(ids(edited))).toEqual(new Set(paths));
  });

  it('separates merged interfaces and namespaces by signature digest, and kinds never collide', () => {
    const src = `interface Box { a: string }\ninterface Box { b: number }\nnamespace Box { export const c = 1 }\nclass K {}\ninterface K { x: 1 }\n`;
    const paths = ids(src);
    expect(paths.filter((p) => p.startsWith('Box~') && p.endsWith(':interface'))).toHaveLength(2);
    expect(paths).toContain('Box:namespace');
    expect(paths).toContain('Box@namespace.c:variable'); // children of a name shared by kinds carry the kind
    expect(paths).toContain('K:class');
    expect(paths).toContain('K:interface');
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('numbers same-named nested declarations densely within their own enclosing declaration', () => {
    const src = `export function outer(x: boolean) {\n  if (x) { function helper() { return 1; } return helper(); }\n  else { function helper() { return 2; } return helper(); }\n}\nexport function other() { function helper() { return 3; } return helper(); }\n`;
    const paths = ids(src);
    expect(paths).toEqual(['outer:function', 'outer.helper#1:function', 'outer.helper#2:function', 'other:function', 'other.helper:function']);
    // Inserting code before (a new declaration, blank lines, a new scope) does not renumber anything.
    const shifted = `export const first = () => { if (Math.random()) { return [1]; } return []; };\n\n\n${src}`;
    expect(ids(shifted).slice(1)).toEqual(paths);
  });

  it('names class members, static members, accessors, private names, computed names and namespace members', () => {
    const src = `export class C {\n  static count = 0;\n  #secret = 1;\n  count = 1;\n  constructor() {}\n  get value() { return 1 }\n  set value(v) {}\n  static create() { return new C() }\n  create() { function local() {} }\n  [Symbol.iterator]() {}\n  'quoted name'() {}\n  static { C.count++ }\n}\nexport namespace N.Inner { export function f() {} }\ndeclare module "virtual:mod" { export const v: number }\n`;
    expect(ids(src)).toEqual([
      'C:class',
      'C.count:static-property',
      'C.#secret:property',
      'C.count:property',
      'C.constructor:constructor',
      'C.value:getter',
      'C.value:setter',
      'C.create:static-method',
      'C.create:method',
      'C.create@method.local:function', // the name is shared by a static and an instance method
      'C.[Symbol.iterator]:method',
      'C."quoted name":method',
      'C.static:static-block',
      'N:namespace',
      'N.f:function',
      '"virtual:mod":namespace',
      '"virtual:mod".v:variable',
    ]);
  });

  it('gives identities no span, offset or counter: the same declarations at other positions have the same identities', () => {
    const a = `export const x = 1;\nexport function f() { return x; }\nexport class Q { m() {} }\n`;
    const b = `\n\n// moved around\nexport class Q {\n\n  m() {}\n}\nexport function f() {\n  return x;\n}\nexport const x = 1;\n`;
    expect(new Set(ids(a))).toEqual(new Set(ids(b)));
  });

  it('derives surface identities from package.json exports and follows re-export chains to the declaring declaration', async () => {
    const dir = tree('surface', {
      'package.json': JSON.stringify({ name: '@acme/util', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' }, './server': './dist/server/main.js' } }),
      'tsconfig.json': '{ "compilerOptions": { "outDir": "dist", "rootDir": "src" } }',
      'src/index.ts': `export * from './strings.js';\nexport { parse as parseNumber, type Parsed } from './numbers.js';\nimport { internalOnly } from './internal.js';\nexport { internalOnly as exposed };\nexport default function main() {}\n`,
      'src/strings.ts': `export function upper(s: string) { return s.toUpperCase(); }\nexport { lower } from './lower.js';\nexport default 'not re-exported by export *';\n`,
      'src/lower.ts': `export const lower = (s: string) => s.toLowerCase();\n`,
      'src/numbers.ts': `export type Parsed = number;\nexport function parse(s: string): Parsed { return Number(s); }\nexport function notExported() {}\n`,
      'src/internal.ts': `export function internalOnly() {}\n`,
      'src/server/main.ts': `import { upper } from '../strings.js';\nexport const handler = () => upper('x');\nexport { upper as shout };\n`,
      'dist/index.js': `export const stale = 'build output is not a source';\n`,
    });
    const report = await digestTree(dir, { store: false, workers: 0 });
    const surface = (path: string, module: string) => report.declarations.find((d) => d.path === path && d.module === module)?.surface;
    expect(report.files.map((f) => f.path)).not.toContain('dist/index.js');
    expect(surface('upper', 'src/strings')).toEqual(['@acme/util#upper', '@acme/util/server#shout']);
    expect(surface('lower', 'src/lower')).toEqual(['@acme/util#lower']);
    expect(surface('parse', 'src/numbers')).toEqual(['@acme/util#parseNumber']);
    expect(surface('Parsed', 'src/numbers')).toEqual(['@acme/util#Parsed']);
    expect(surface('internalOnly', 'src/internal')).toEqual(['@acme/util#exposed']);
    expect(surface('main', 'src/index')).toEqual(['@acme/util#default']);
    expect(surface('handler', 'src/server/main')).toEqual(['@acme/util/server#handler']);
    expect(surface('notExported', 'src/numbers')).toEqual([]);
    expect(surface('default', 'src/strings')).toEqual([]); // `export *` never re-exports default
    for (const d of report.declarations) expect(d.identity.startsWith(`typescript:@acme/util//${d.module}#`)).toBe(true);
  });

  it('maps bundler outputs (dist/*.mjs, *.cjs, *.d.mts, *.d.cts) back to .ts sources', async () => {
    const dir = tree('bundled', {
      'package.json': JSON.stringify({ name: 'bundled', exports: { '.': { import: { types: './dist/index.d.mts', default: './dist/index.mjs' }, require: { types: './dist/index.d.cts', default: './dist/index.cjs' } } } }),
      'src/index.ts': `export function hello(): string { return 'hi'; }\n`,
    });
    const report = await digestTree(dir, { store: false, workers: 0 });
    expect(report.entries).toEqual([{ subpath: '.', names: ['hello'], external: [], unresolved: [] }]);
    expect(report.declarations[0]!.surface).toEqual(['bundled#hello']);
  });

  it('uses main when there is no exports map, and never includes the package version', async () => {
    const v1 = tree('main-v1', { 'package.json': JSON.stringify({ name: 'plain', version: '1.0.0', main: 'lib/index.js' }), 'lib/index.js': `exports.x = 1;\nexport function f() {}\n` });
    const v2 = tree('main-v2', { 'package.json': JSON.stringify({ name: 'plain', version: '2.3.4', main: 'lib/index.js' }), 'lib/index.js': `exports.x = 1;\nexport function f() {}\n` });
    const [a, b] = await Promise.all([digestTree(v1, { store: false, workers: 0 }), digestTree(v2, { store: false, workers: 0 })]);
    expect(a.declarations[0]).toMatchObject({ identity: 'javascript:plain//lib/index#f:function', surface: ['plain#f'] });
    expect(b.declarations.map((d) => d.identity)).toEqual(a.declarations.map((d) => d.identity));
  });
});
