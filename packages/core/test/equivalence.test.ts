/**
 * Issue 3, point 5 (the soundness check machinery): `compareOutputs` implements SPEC §4's
 * equivalence of build outputs. Two kinds of evidence:
 *
 * - real builds: a fixture library compiled by `compileProject`, then edited and compiled again; the
 *   check accepts what must be a cache hit (comments, reformatting, reordered hoisted declarations)
 *   and catches what must not (evaluation order, a changed value, a missing export, docs in `.d.ts`,
 *   overload order, a private body);
 * - file-level cases for each normalisation the digests make, and for the reporting.
 *
 * Every comparison of real builds here, and every file-level case, is also judged by the independent
 * judge (tools/lib/token-judge.mjs, issue 10 point 3: the scanner's tokens after a prettier reprint,
 * no code shared with the extractor); the two must agree on the verdict and on which files differ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { dirname, join } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import * as prettier from 'prettier';
import { compileProject, KilnError } from '@kiln/core';
import { checkAgainstFreshBuild } from '../dist/compile/soundness.js';
import { compareOutputFiles, compareOutputs, differenceDiagnostic, formatDifference, type CompareResult, type OutputDifference } from '../dist/compile/equivalence.js';
import { cleanup, makeLib, tempDir, writeTree, type Tree } from './lib/build-fixtures.js';
import { judgeFile, judgeOutputs } from '../../../tools/lib/token-judge.mjs';

const BASE: Tree = {
  'registry.ts': 'export const registry: string[] = [];\n',
  'index.ts': `// Module comment.
import { registry } from './registry.js';

/** Doubles a number. */
export function double(n: number): number {
  return n * 2;
}

export function triple(n: number): number {
  return n * 3; // times three
}

/** A shape. */
export interface Shape {
  /** the area */
  area(): number;
}

export type Id = string;

export function parse(a: string): string;
export function parse(a: number): number;
export function parse(a: string | number): string | number {
  return a;
}

registry.push('first');
registry.push('second');

export const LIMIT = 10;
export const label = (n: number) => \`#\${n}\`;

export class Counter {
  #count = 0;
  private step = 1;
  next(): number {
    this.#count += this.step;
    return this.#count;
  }
}
`,
};

type Edit = (index: string) => string;

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

async function build(sources: Tree, extra: Tree = {}): Promise<string> {
  const root = makeLib('equiv', sources, extra);
  dirs.push(root);
  const r = await compileProject({ projectRoot: root });
  expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return join(root, 'dist');
}

function variant(edit: Edit): Tree {
  const next = edit(BASE['index.ts']!);
  expect(next, 'the edit applies').not.toBe(BASE['index.ts']);
  return { ...BASE, 'index.ts': next };
}

function summary(r: CompareResult): string[] {
  return r.differences.map((d) => `${d.file} ${d.reason}${d.declaration ? ` ${d.declaration}` : ''}`);
}

/** compareOutputs, cross-checked by the independent judge on the same outputs. */
async function compareBoth(a: string, b: string, options: { exclude?: (file: string) => boolean } = {}): Promise<CompareResult> {
  const r = await compareOutputs(a, b, options);
  const j = await judgeOutputs(a, b, options);
  const kiln = { equal: r.equal, compared: r.compared, files: [...new Set(r.differences.map((d) => d.file))].sort() };
  const judge = { equal: j.equal, compared: j.compared, files: [...new Set(j.differences.map((d) => d.slice(0, d.indexOf(':'))))].sort() };
  expect(judge, `the two judges disagree\n  compareOutputs: ${r.differences.map(formatDifference).join('\n    ') || 'equal'}\n  token judge: ${j.differences.join('\n    ') || 'equal'}`).toEqual(kiln);
  return r;
}

let base: string;
beforeAll(async () => {
  base = await build(BASE);
});

describe('compareOutputs on real builds: what must be a hit is equivalent', () => {
  it('the same sources built twice', async () => {
    const r = await compareBoth(base, await build(BASE));
    expect(r.differences).toEqual([]);
    expect(r.equal).toBe(true);
    expect(r.compared).toBe(4);
    expect(r.excluded).toEqual(['index.js.map', 'registry.js.map']);
  });

  it('comment-only edits', async () => {
    const edited = variant((s) => s.replace('// Module comment.', '// Another comment.\n/* and a block */').replace('// times three', ''));
    const r = await compareBoth(base, await build(edited));
    expect(r.differences.map(formatDifference)).toEqual([]);
  });

  it('documented members named by a quoted key, in either quote style (a comment inside a computed name)', async () => {
    const src = (q: string, c: string) => ({ 'index.ts': `export interface Opts {\n  /** Everything after the separator. */\n  ${q}--${q}?: string[];\n  /** Iterate. */\n  [${c}Symbol.iterator]?: () => Iterator<string>;\n}\n` });
    const r = await compareBoth(await build(src("'", '')), await build(src('"', '/* it */ ')));
    expect(r.differences.map(formatDifference)).toEqual([]);
  });

  it('a prettier reformat with other options (quotes, semicolons, width, parentheses)', async () => {
    const format = (text: string) =>
      prettier.format(text, { parser: 'typescript', singleQuote: false, semi: false, printWidth: 40, arrowParens: 'always', trailingComma: 'all' });
    const formatted: Tree = {};
    for (const [k, v] of Object.entries(BASE)) formatted[k] = await format(v);
    expect(formatted['index.ts']).not.toBe(BASE['index.ts']);
    const r = await compareBoth(base, await build(formatted));
    expect(r.differences.map(formatDifference)).toEqual([]);
  });

  it('reordered exported function declarations, interfaces and type aliases (hoisted: a set)', async () => {
    const edited = variant((s) => {
      const dbl = s.slice(s.indexOf('/** Doubles'), s.indexOf('export function triple'));
      const shape = s.slice(s.indexOf('/** A shape.'), s.indexOf('export type Id'));
      const id = 'export type Id = string;\n';
      return s.replace(dbl, '').replace(shape, '').replace(id, '').replace('registry.push', `${id}${shape}registry.push`).replace('export const LIMIT', `${dbl}export const LIMIT`);
    });
    const r = await compareBoth(base, await build(edited));
    expect(r.differences.map(formatDifference)).toEqual([]);
  });
});

describe('compareOutputs on real builds: what must not be a hit is caught', () => {
  it('swapped effectful top-level statements (evaluation order)', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace("registry.push('first');\nregistry.push('second');", "registry.push('second');\nregistry.push('first');"))));
    expect(summary(r)).toEqual(['index.js order']);
    const d = r.differences[0]!;
    expect(d.a).toMatchObject({ text: 'registry' });
    expect(d.message).toMatch(/evaluation order/);
  });

  it('a changed constant value, with the first differing token', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace('LIMIT = 10', 'LIMIT = 11'))));
    expect(summary(r)).toEqual(['index.d.ts declaration-changed LIMIT', 'index.js declaration-changed LIMIT']);
    const js = r.differences.find((d) => d.file === 'index.js')!;
    expect(js.a?.text).toBe('10');
    expect(js.b?.text).toBe('11');
    expect(js.a?.line).toBe(js.b?.line);
  });

  it('a missing export', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace('export function triple', 'function triple'))));
    expect(summary(r)).toEqual(['index.d.ts declaration-only-in-a triple', 'index.js declaration-changed triple']);
    expect(r.differences[1]!.a?.text).toBe('export');
  });

  it('a JSDoc edit: the JavaScript is equivalent, the declarations are not', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace('/** Doubles a number. */', '/** Multiplies by two. */'))));
    expect(summary(r)).toEqual(['index.d.ts docs double']);
    expect(r.differences[0]!.a?.text).toBe('/** Doubles a number. */');
  });

  it('a JSDoc edit on an interface member (no declaration of its own)', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace('/** the area */', '/** the surface */'))));
    expect(summary(r)).toEqual(['index.d.ts docs Shape.area']);
  });

  it('reordered overload signatures (their order is observable)', async () => {
    const r = await compareBoth(
      base,
      await build(variant((s) => s.replace('export function parse(a: string): string;\nexport function parse(a: number): number;', 'export function parse(a: number): number;\nexport function parse(a: string): string;'))),
    );
    expect(summary(r)).toEqual(['index.d.ts order parse']);
  });

  it('a private body edit: JavaScript differs at the method, declarations do not', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace('return this.#count;', 'return this.#count * 1;'))));
    expect(summary(r)).toEqual(['index.js declaration-changed Counter.next']);
  });

  it('a renamed private member changes the declarations too (classes are nominal)', async () => {
    const r = await compareBoth(base, await build(variant((s) => s.replace(/\bstep\b/g, 'stride'))));
    expect(summary(r)).toContain('index.d.ts declaration-only-in-a Counter.step');
    expect(summary(r)).toContain('index.d.ts declaration-only-in-b Counter.stride');
  });
});

describe('compareOutputs: directories', () => {
  it('reports files present on one side only, compares other files byte for byte, ignores maps', async () => {
    const a = tempDir('dir-a');
    const b = tempDir('dir-b');
    dirs.push(a, b);
    writeTree(a, { 'x.js': 'export const x = 1;\n', 'x.js.map': '{"a":1}', 'data.json': '{"a":1}\n', 'only-a.js': '1;\n', 'sub/y.d.ts': 'export declare const y: 1;\n' });
    writeTree(b, { 'x.js': "export const x = 1; // other\n", 'x.js.map': '{"b":2}', 'data.json': '{"a": 1}\n', 'only-b.txt': 'b\n', 'sub/y.d.ts': 'export declare const y: 1;\n' });
    const r = await compareBoth(a, b);
    expect(summary(r)).toEqual(['data.json bytes', 'only-a.js only-in-a', 'only-b.txt only-in-b']);
    expect(r.excluded).toEqual(['x.js.map']);
    expect(r.compared).toBe(3);
    const ex = await compareBoth(a, b, { exclude: (f) => f.endsWith('.json') || f.startsWith('only-') });
    expect(ex.equal).toBe(true);
  });

  it('a missing directory is a coded error', async () => {
    const empty = tempDir('missing');
    dirs.push(empty);
    await expect(compareOutputs(join(empty, 'nope'), base)).rejects.toMatchObject({ code: 'KILN_NOT_FOUND' });
    await expect(compareOutputs(join(base, 'index.js'), base)).rejects.toBeInstanceOf(KilnError);
  });

  it('CommonJS output: reordered exported functions are NOT equivalent (exports object key order)', async () => {
    const cjs = (sources: Tree) => build(sources, { 'package.json': JSON.stringify({ name: '@fx/cjs', version: '1.0.0', type: 'commonjs' }) });
    const swapped = variant((s) => {
      const dbl = s.slice(s.indexOf('/** Doubles'), s.indexOf('export function triple'));
      return s.replace(dbl, '').replace('export const LIMIT', `${dbl}export const LIMIT`);
    });
    const r = await compareBoth(await cjs(BASE), await cjs(swapped));
    // `exports.double = double; exports.triple = triple;` are assignments in source order, so
    // Object.keys(require(…)) observes the order: not a hoisted declaration, not a set.
    expect(summary(r)).toEqual(['index.js order']);
  });
});

describe('compareOutputFiles: normalisation is exactly the digests’', () => {
  const eq = (file: string, a: string, b: string) => compareOutputFiles(file, Buffer.from(a), Buffer.from(b));
  it.each([
    ['quote style', `export const a = 'x';`, `export const a = "x";`],
    ['numeric spelling', `export const a = 0x10 + 1_000;`, `export const a = 16 + 1000;`],
    ['redundant parentheses', `export const a = (b + (c * d));`, `export const a = b + c * d;`],
    ['property-key quoting', `export const o = { 'a': 1, "b-c": 2 };`, `export const o = { a: 1, 'b-c': 2 };`],
    ['new X vs new X()', `export const m = new Map;`, `export const m = new Map();`],
    ['comments and whitespace', `/* x */ export   const a =\n 1; // y\n//# sourceMappingURL=a.js.map`, `export const a = 1;`],
    ['empty statements', `export const a = 1;;\n;`, `export const a = 1;`],
    ['hoisted function order', `export function f() {}\nexport function g() {}`, `export function g() {}\nexport function f() {}`],
  ])('%s: equivalent (and so says the independent judge)', async (_label, a, b) => {
    expect(eq('a.js', a, b)).toEqual([]);
    expect(await judgeFile('a.js', a, b)).toEqual([]);
  });

  it.each([
    ['a string value', `export const a = 'x';`, `export const a = 'y';`, 'declaration-changed'],
    ['an operator', `export const a = b + c;`, `export const a = b - c;`, 'declaration-changed'],
    ['parentheses that change precedence', `export const a = (b + c) * d;`, `export const a = b + c * d;`, 'declaration-changed'],
    ['a /*#__PURE__*/ annotation', `export const a = /*#__PURE__*/ f();`, `export const a = f();`, 'declaration-changed'],
    ['a legal comment', `/*! MIT */\nexport const a = 1;`, `export const a = 1;`, 'module'],
    ['an expression statement', `f(1);`, `f(2);`, 'module'],
    ['let vs const', `export let a = 1;`, `export const a = 1;`, 'declaration-changed'],
  ])('%s: a difference (and so says the independent judge)', async (_label, a, b, reason) => {
    const d = eq('a.js', a, b);
    expect(d.map((x) => x.reason)).toEqual([reason]);
    expect(await judgeFile('a.js', a, b)).toHaveLength(1);
  });

  it('a file that cannot be digested is equivalent only when byte-equal', async () => {
    const broken = 'export const a = (;\n';
    expect(eq('a.js', broken, broken)).toEqual([]);
    expect(eq('a.js', broken, `${broken}// x\n`).map((d) => d.reason)).toEqual(['undigestible']);
    expect(await judgeFile('a.js', broken, broken)).toEqual([]);
    expect(await judgeFile('a.js', broken, `${broken}// x\n`)).toHaveLength(1);
  });

  it('merged interfaces: order among same-named declarations is compared, docs are anchored', async () => {
    const i1 = 'export interface I { f(a: string): void }\nexport interface I { f(a: number): void }\n';
    const i2 = 'export interface I { f(a: number): void }\nexport interface I { f(a: string): void }\n';
    expect(eq('a.d.ts', i1, i2).map((d) => d.reason)).toEqual(['order']);
    expect(await judgeFile('a.d.ts', i1, i2)).toHaveLength(1);
    const doc1 = 'export declare function g(/** first */ a: string, b: string): void;\n';
    const doc2 = 'export declare function g(a: string, /** first */ b: string): void;\n';
    const d = eq('a.d.ts', doc1, doc2);
    expect(d.map((x) => [x.reason, x.declaration])).toEqual([['docs', 'g.a']]);
    expect(await judgeFile('a.d.ts', doc1, doc2)).toHaveLength(1);
    // Re-indented documentation is the same documentation.
    const hi = ['/**\n * Hi.\n */\nexport declare const a: 1;\n', '    /** Hi. */\nexport declare const a: 1;\n'] as const;
    expect(eq('a.d.ts', ...hi)).toEqual([]);
    expect(await judgeFile('a.d.ts', ...hi)).toEqual([]);
  });

  it('differences become KILN_OUTPUTS_DIFFER diagnostics located in output B', () => {
    const [d] = eq('lib/a.js', 'export const a = 1;\n', '\nexport const a = 2;\n') as [OutputDifference];
    const diag = differenceDiagnostic(d);
    expect(diag).toMatchObject({ code: 'KILN_OUTPUTS_DIFFER', severity: 'error', file: 'lib/a.js', line: 2, column: 18 });
    expect(formatDifference(d)).toBe('lib/a.js: declaration-changed a: variable a differs (first difference: `1` vs `2`) [A 1:18 `1` | B 2:18 `2`]');
  });
});


describe('checkAgainstFreshBuild: the soundness check of a cache hit', () => {
  it('passes when the outputs found equal a fresh build (comment edit after the build), and fails on a stale artifact', async () => {
    const dist = await build(BASE);
    const root = dirname(dist);
    const index = join(root, 'src/index.ts');
    // A comment-only edit: the outputs of the earlier build are what a fresh build writes.
    writeFileSync(index, readFileSync(index, 'utf8').replace('// Module comment.', '// Edited comment.'));
    const ok = await checkAgainstFreshBuild({ projectRoot: root });
    expect(ok.build.success).toBe(true);
    expect(ok.differences).toEqual([]);
    expect(ok.equal).toBe(true);
    expect(ok.compared).toBe(4);
    // A value edit without a rebuild: the outputs found are stale — a false hit, caught and located.
    writeFileSync(index, readFileSync(index, 'utf8').replace('LIMIT = 10', 'LIMIT = 12'));
    const stale = await checkAgainstFreshBuild({ projectRoot: root });
    expect(stale.equal).toBe(false);
    expect(stale.differences.map((d) => `${d.file} ${d.reason} ${d.declaration} ${d.a?.text}→${d.b?.text}`)).toEqual([
      'dist/index.d.ts declaration-changed LIMIT 10→12',
      'dist/index.js declaration-changed LIMIT 10→12',
    ]);
    // The directory now holds the fresh build.
    expect(readFileSync(join(dist, 'index.js'), 'utf8')).toContain('LIMIT = 12');
  });

  it('reports a fresh build that fails instead of comparing', async () => {
    const dist = await build(BASE);
    const root = dirname(dist);
    writeFileSync(join(root, 'src/index.ts'), 'export const n: number = "x";\n');
    const r = await checkAgainstFreshBuild({ projectRoot: root });
    expect(r.equal).toBe(false);
    expect(r.build.success).toBe(false);
    expect(r.build.diagnostics[0]).toMatchObject({ tsCode: 'TS2322' });
  });
});
