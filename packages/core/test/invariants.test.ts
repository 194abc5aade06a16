/**
 * The SPEC §3 invariant suite (issue 2, point 6).
 *
 * 1. One fixture folder per table row (and language): fixtures/invariants/<case>/{before,after,expect.json}.
 *    expect.json names only the edited declaration(s); the harness asserts their status, derives the
 *    Merkle ancestors that must change with them, asserts EVERY OTHER declaration unchanged, and refuses
 *    fixtures that miss a load-bearing condition (see lib/invariant-harness.ts).
 * 2. The harness is itself tested: wrong expectations and fixtures without a trailing scoped declaration
 *    or without a scope change must be rejected.
 * 3. Evaluation order: effectful top-level statements are ordered, hoisted declarations are not.
 * 4. Every meaningful-comment kind moves the digest of what contains it, added or removed; an ordinary
 *    comment in the same place moves nothing.
 * 5. digest_schema: a record made under the previous projection is a stale hit with a notice.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffReports, digestTree, DIGEST_SCHEMA, PREVIOUS_DIGEST_SCHEMA } from '@kiln/core';
import { extractSlice } from '../dist/facts/extract.js';
import type { Slice } from '../dist/facts/slice.js';
import type { Variant } from '../dist/parse/language.js';
import { checkCase, FIXTURES, listCases, readExpectation, ROWS, type CaseExpectation, type Row } from './lib/invariant-harness.js';

const cases = await listCases();

describe('SPEC §3 invariant table: fixture cases', () => {
  const summary: string[] = [];
  afterAll(() => {
    // What each case asserted, and which declaration after the edit carried the load.
    if (summary.length) console.log(`invariant fixtures:\n${summary.sort().join('\n')}`);
  });

  it('has fixtures', () => {
    expect(cases.length).toBeGreaterThanOrEqual(Object.keys(ROWS).length);
  });

  for (const name of cases) {
    it(name, async () => {
      const r = await checkCase(join(FIXTURES, name));
      expect(r.problems, `${name}:\n  ${r.problems.join('\n  ')}`).toEqual([]);
      // Positive evidence that the case asserted something on both sides of the edit.
      expect(r.othersUnchanged).toBeGreaterThan(0);
      expect(r.loadBearing.length).toBeGreaterThan(0);
      for (const lb of r.loadBearing) expect(lb.trailing, `${lb.file}: trailing declaration`).toBeTruthy();
      const exp = await readExpectation(name);
      summary.push(
        `  ${name.padEnd(24)} ${exp.row.padEnd(13)} edited ${exp.edits.map((e) => `${e.path}=${e.status}`).join(',')}; ` +
          `${r.othersUnchanged}/${r.checked} others unchanged; ` +
          r.loadBearing.map((lb) => `${lb.file}@${lb.editLine} → ${lb.trailing}`).join('; '),
      );
    });
  }

  it('covers every row of the table, in TypeScript, and the JS and TSX variants', async () => {
    const byRow = new Map<Row, Set<string>>();
    for (const name of cases) {
      const exp = await readExpectation(name);
      const lang = /-(ts|js|tsx)$/.exec(name)?.[1];
      expect(lang, `${name}: case names end in -ts, -js or -tsx`).toBeDefined();
      (byRow.get(exp.row) ?? byRow.set(exp.row, new Set()).get(exp.row)!).add(lang!);
    }
    for (const row of Object.keys(ROWS) as Row[]) {
      expect(byRow.get(row)?.has('ts'), `row "${ROWS[row].change}" has a TypeScript case`).toBe(true);
    }
    const langs = new Set([...byRow.values()].flatMap((s) => [...s]));
    expect([...langs].sort()).toEqual(['js', 'ts', 'tsx']);
    // At least the rows that are easiest to get wrong exist in all three.
    for (const row of ['comment', 'documentation', 'reformat', 'body', 'signature'] as Row[]) {
      expect([...(byRow.get(row) ?? [])].sort(), `row ${row}`).toEqual(['js', 'ts', 'tsx']);
    }
  });
});

// ------------------------------------------------------------------------------------------------

describe('the invariant harness rejects what it must', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kiln-inv-harness-'));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('a wrong expectation for the edited declaration fails', async () => {
    const exp = await readExpectation('body-ts');
    const wrong: CaseExpectation = { ...exp, row: 'comment', edits: exp.edits.map((e) => ({ ...e, status: 'unchanged' })) };
    const r = await checkCase(join(FIXTURES, 'body-ts'), wrong);
    expect(r.problems.some((p) => p.includes('#LruCache.get:method: expected unchanged') && p.includes('got changed'))).toBe(true);
    // The parent moved too (Merkle), and nothing said so: that is a problem as well.
    expect(r.problems.some((p) => p.includes('#LruCache:class: expected unchanged (not edited), got changed'))).toBe(true);
  });

  it('an expectation of change where nothing changed fails', async () => {
    const exp = await readExpectation('comment-add-ts');
    const wrong: CaseExpectation = { ...exp, row: 'body', edits: exp.edits.map((e) => ({ ...e, status: 'changed' })) };
    const r = await checkCase(join(FIXTURES, 'comment-add-ts'), wrong);
    expect(r.problems.some((p) => p.includes('#LruCache.get:method: expected changed') && p.includes('got unchanged'))).toBe(true);
    expect(r.problems.some((p) => p.includes('must add or remove a scope'))).toBe(true);
  });

  it('a status that does not fit the row fails', async () => {
    const exp = await readExpectation('doc-add-ts');
    const r = await checkCase(join(FIXTURES, 'doc-add-ts'), { ...exp, row: 'comment' });
    expect(r.problems.some((p) => p.includes('row "comment" requires'))).toBe(true);
  });

  async function makeCase(name: string, before: string, after: string, exp: CaseExpectation): Promise<string> {
    const dir = join(tmp, name);
    for (const [side, text] of [['before', before], ['after', after]] as const) {
      await mkdir(join(dir, side, 'src'), { recursive: true });
      await writeFile(join(dir, side, 'package.json'), JSON.stringify({ name: 'inv-bad' }));
      await writeFile(join(dir, side, 'src', 'm.ts'), text);
    }
    await writeFile(join(dir, 'expect.json'), JSON.stringify(exp));
    return dir;
  }

  it('a fixture without a declaration after the edit fails', async () => {
    const head = 'export function first(n: number) {\n  if (n) {\n    return 1;\n  }\n  return 0;\n}\n\n';
    const dir = await makeCase(
      'no-trailing',
      `${head}export function last(n: number) {\n  return n + 1;\n}\n`,
      `${head}export function last(n: number) {\n  if (n < 0) {\n    return 0;\n  }\n  return n + 1;\n}\n`,
      { row: 'body', description: 'edit in the last declaration', edits: [{ module: 'src/m', path: 'last', kind: 'function', status: 'changed' }] },
    );
    const r = await checkCase(dir);
    expect(r.problems.some((p) => p.includes('no declaration is positioned after the edit'))).toBe(true);
  });

  it('a fixture whose trailing declaration owns no scope fails', async () => {
    const tail = '\nexport const LIMIT = 3;\nexport type Mode = "a" | "b";\n';
    const dir = await makeCase(
      'flat-trailing',
      `export function f(n: number) {\n  return n + 1;\n}\n${tail}`,
      `export function f(n: number) {\n  if (n < 0) {\n    return 0;\n  }\n  return n + 1;\n}\n${tail}`,
      { row: 'body', description: 'trailing declarations are flat', edits: [{ module: 'src/m', path: 'f', kind: 'function', status: 'changed' }] },
    );
    const r = await checkCase(dir);
    expect(r.problems.some((p) => p.includes('own no nested scope'))).toBe(true);
  });

  it('a body-change fixture that neither adds nor removes a scope fails', async () => {
    const tail = '\nexport function g(n: number) {\n  if (n) {\n    return 1;\n  }\n  return 2;\n}\n';
    const dir = await makeCase(
      'no-scope-change',
      `export function f(n: number) {\n  return n + 1;\n}\n${tail}`,
      `export function f(n: number) {\n  return n + 2;\n}\n${tail}`,
      { row: 'body', description: 'literal change only', edits: [{ module: 'src/m', path: 'f', kind: 'function', status: 'changed' }] },
    );
    const r = await checkCase(dir);
    expect(r.problems).toEqual([expect.stringContaining('must add or remove a scope')]);
  });
});

// ------------------------------------------------------------------------------------------------

interface SliceDelta {
  /** `path:kind` of declarations whose semantic digest moved (or that exist on one side only). */
  changed: string[];
  moduleChanged: boolean;
}

function slice(text: string, variant: Variant, digestSchema?: number): Slice {
  const s = extractSlice(Buffer.from(text), variant, digestSchema === undefined ? {} : { digestSchema });
  expect(s.diagnostics, `input must parse cleanly:\n${text}`).toEqual([]);
  for (const d of s.decls) expect(d.semantic, `${d.path} has a digest`).not.toBeNull();
  return s;
}

function delta(a: string, b: string, variant: Variant, digestSchema?: number): SliceDelta {
  const sa = slice(a, variant, digestSchema);
  const sb = slice(b, variant, digestSchema);
  const ma = new Map(sa.decls.map((d) => [`${d.path}:${d.kind}`, d.semantic]));
  const mb = new Map(sb.decls.map((d) => [`${d.path}:${d.kind}`, d.semantic]));
  const changed = [...new Set([...ma.keys(), ...mb.keys()])].filter((k) => ma.get(k) !== mb.get(k)).sort();
  return { changed, moduleChanged: sa.module.digest !== sb.module.digest };
}

describe('evaluation order is meaning; hoisting is not', () => {
  const TAIL = '\nexport function tail(n: number) {\n  if (n > 0) {\n    return n;\n  }\n  return 0;\n}\n';

  it('reordering two effectful top-level statements changes the module digest (declarations unchanged)', () => {
    const head = "import { register } from './registry';\n";
    const a = `${head}register('a');\nregister('b');\n${TAIL}`;
    const b = `${head}register('b');\nregister('a');\n${TAIL}`;
    expect(delta(a, b, 'ts')).toEqual({ changed: [], moduleChanged: true });
  });

  it('reordering two variable initialisers changes the module digest, not the declarations', () => {
    const head = "import { init } from './init';\n";
    const a = `${head}export const first = init('a');\nexport const second = init('b');\n${TAIL}`;
    const b = `${head}export const second = init('b');\nexport const first = init('a');\n${TAIL}`;
    expect(delta(a, b, 'ts')).toEqual({ changed: [], moduleChanged: true });
  });

  it('reordering two side-effect imports changes the module digest', () => {
    expect(delta(`import './polyfill';\nimport './app';\n${TAIL}`, `import './app';\nimport './polyfill';\n${TAIL}`, 'ts')).toEqual({ changed: [], moduleChanged: true });
  });

  it('reordering two classes with static blocks changes the module digest', () => {
    const A = 'class A {\n  static {\n    log("A");\n  }\n}\n';
    const B = 'class B {\n  static {\n    log("B");\n  }\n}\n';
    expect(delta(`${A}${B}${TAIL}`, `${B}${A}${TAIL}`, 'ts')).toEqual({ changed: [], moduleChanged: true });
  });

  it('reordering two hoisted function declarations changes nothing', () => {
    const f = 'export function f(n: number) {\n  return g(n) + 1;\n}\n';
    const g = 'export function g(n: number) {\n  if (n) {\n    return f(n - 1);\n  }\n  return 0;\n}\n';
    const head = "import { x } from './x';\nconsole.log(x);\n";
    expect(delta(`${head}${f}${g}${TAIL}`, `${head}${g}${f}${TAIL}`, 'ts')).toEqual({ changed: [], moduleChanged: false });
    expect(delta(`${f}${g}`, `${g}${f}`, 'js')).toEqual({ changed: [], moduleChanged: false });
  });

  it('reordering interfaces and type aliases changes nothing', () => {
    const i = 'export interface I {\n  a: T;\n}\n';
    const t = 'export type T = string | I[];\n';
    expect(delta(`${i}${t}${TAIL}`, `${t}${i}${TAIL}`, 'ts')).toEqual({ changed: [], moduleChanged: false });
  });

  it('moving an effectful statement across a hoisted function is still unobservable', () => {
    const f = 'export function f() {\n  return 1;\n}\n';
    expect(delta(`${f}console.log(1);\n${TAIL}`, `console.log(1);\n${f}${TAIL}`, 'ts')).toEqual({ changed: [], moduleChanged: false });
  });
});

// ------------------------------------------------------------------------------------------------

/**
 * One meaningful-comment case: `template` has `@@` where the comment goes; a trailing declaration that
 * owns a scope always follows the site. `target` is the declaration path that contains the comment (its
 * ancestors change with it), or `module` for file-level pragmas.
 */
interface CommentCase {
  name: string;
  variant: Variant;
  template: string;
  comment: string;
  ordinary: string;
  target: string;
}

const TS_TAIL = '\nexport function tail(n: number) {\n  if (n > 0) {\n    return n;\n  }\n  return 0;\n}\n';
const JS_TAIL = '\nexport function tail(n) {\n  if (n > 0) {\n    return n;\n  }\n  return 0;\n}\n';

const COMMENT_CASES: CommentCase[] = [
  {
    name: '/*#__PURE__*/ on a call',
    variant: 'ts',
    template: `import { make } from './make';\nexport const value = @@make();\n${TS_TAIL}`,
    comment: '/*#__PURE__*/ ',
    ordinary: '/* plain */ ',
    target: 'value:variable',
  },
  {
    name: '/* @__PURE__ */ on a new expression inside a function',
    variant: 'ts',
    template: `export function build() {\n  return @@new Map<string, number>();\n}\n${TS_TAIL}`,
    comment: '/* @__PURE__ */ ',
    ordinary: '/* plain */ ',
    target: 'build:function',
  },
  {
    name: '/*@__NO_SIDE_EFFECTS__*/ on a function declaration',
    variant: 'ts',
    template: `import { x } from './x';\n@@export function build() {\n  return { x };\n}\n${TS_TAIL}`,
    comment: '/*@__NO_SIDE_EFFECTS__*/\n',
    ordinary: '/* plain */\n',
    target: 'build:function',
  },
  {
    name: '/*#__NO_SIDE_EFFECTS__*/ on the first statement of the file',
    variant: 'ts',
    template: `@@export function build() {\n  return {};\n}\n${TS_TAIL}`,
    comment: '/*#__NO_SIDE_EFFECTS__*/\n',
    ordinary: '/* plain */\n',
    target: 'build:function',
  },
  {
    name: '/*#__NO_SIDE_EFFECTS__*/ on an arrow function',
    variant: 'js',
    template: `import { x } from './x';\nexport const build = @@() => ({ x });\n${JS_TAIL}`,
    comment: '/*#__NO_SIDE_EFFECTS__*/ ',
    ordinary: '/* plain */ ',
    target: 'build:variable',
  },
  {
    name: 'webpack magic comment in import()',
    variant: 'ts',
    template: `export function load() {\n  return import(@@'./chunk');\n}\n${TS_TAIL}`,
    comment: '/* webpackChunkName: "chunk" */ ',
    ordinary: '/* the chunk */ ',
    target: 'load:function',
  },
  {
    name: '// @ts-ignore inside a method',
    variant: 'ts',
    template: `export class Reader {\n  read(o: object): number {\n    @@return (o as { x: number }).x;\n  }\n\n  other() {\n    return 1;\n  }\n}\n${TS_TAIL}`,
    comment: '// @ts-ignore\n    ',
    ordinary: '// ignore this\n    ',
    target: 'Reader.read:method',
  },
  {
    name: '// @ts-ignore on the first statement of the file',
    variant: 'ts',
    template: `@@export const n: number = JSON.parse('1');\n${TS_TAIL}`,
    comment: '// @ts-ignore\n',
    ordinary: '// ignore this\n',
    target: 'n:variable',
  },
  {
    name: '// @ts-expect-error inside a function',
    variant: 'ts',
    template: `export function f(): number {\n  @@return 'one';\n}\n${TS_TAIL}`,
    comment: '// @ts-expect-error: the test says so\n  ',
    ordinary: '// expect an error here\n  ',
    target: 'f:function',
  },
  {
    name: '// @ts-nocheck (file level)',
    variant: 'ts',
    template: `@@import { x } from './x';\nexport function f() {\n  return x;\n}\n${TS_TAIL}`,
    comment: '// @ts-nocheck\n',
    ordinary: '// no check\n',
    target: 'module',
  },
  {
    name: '/// <reference types="node" /> (file level)',
    variant: 'ts',
    template: `@@export function f() {\n  return process.pid;\n}\n${TS_TAIL}`,
    comment: '/// <reference types="node" />\n',
    ordinary: '// reference types node\n',
    target: 'module',
  },
  {
    name: '/** @jsx h */ pragma (file level)',
    variant: 'tsx',
    template: `@@import { h } from 'preact';\nexport function App() {\n  return <div className="app" />;\n}\n${TS_TAIL}`,
    comment: '/** @jsx h */\n',
    ordinary: '/** jsx h */\n',
    target: 'module',
  },
  {
    name: '/** @jsxImportSource preact */ pragma (file level)',
    variant: 'tsx',
    template: `@@export function App() {\n  return <div className="app" />;\n}\n${TS_TAIL}`,
    comment: '/** @jsxImportSource preact */\n',
    ordinary: '/** uses preact */\n',
    target: 'module',
  },
  {
    name: '/** @jsx h */ pragma in a .jsx file',
    variant: 'jsx',
    template: `@@import { h } from 'preact';\nexport function App() {\n  return <div className="app" />;\n}\n${JS_TAIL}`,
    comment: '/** @jsx h */\n',
    ordinary: '/** jsx h */\n',
    target: 'module',
  },
  {
    name: 'legal comment /*! … */ inside a function',
    variant: 'ts',
    template: `export function f() {\n  @@return 1;\n}\n${TS_TAIL}`,
    comment: '/*! (c) kiln authors */\n  ',
    ordinary: '/* (c) kiln authors */\n  ',
    target: 'f:function',
  },
  {
    name: 'legal comment /*! … */ at the top of the file',
    variant: 'ts',
    template: `@@export function f() {\n  return 1;\n}\n${TS_TAIL}`,
    comment: '/*! kiln v1 | MIT */\n',
    ordinary: '/* kiln v1 | MIT */\n',
    target: 'module',
  },
  {
    name: '@license comment before a declaration',
    variant: 'ts',
    template: `import { x } from './x';\n@@export const y = x + 1;\n${TS_TAIL}`,
    comment: '/**\n * @license MIT\n */\n',
    ordinary: '/**\n * MIT licensed\n */\n',
    target: 'y:variable',
  },
  {
    name: '@preserve comment inside a class member',
    variant: 'ts',
    template: `export class K {\n  m() {\n    @@return 1;\n  }\n}\n${TS_TAIL}`,
    comment: '/* @preserve keep this */\n    ',
    ordinary: '/* keep this */\n    ',
    target: 'K.m:method',
  },
  {
    name: 'JSDoc @type on a variable in JavaScript',
    variant: 'js',
    template: `export function f() {\n  return 1;\n}\n@@export const n = f();\n${JS_TAIL}`,
    comment: '/** @type {number} */\n',
    ordinary: '/** The number. */\n',
    target: 'n:variable',
  },
  {
    name: 'JSDoc @type on a let in JavaScript',
    variant: 'js',
    template: `export function f() {\n  return 1;\n}\n@@let n = f();\n${JS_TAIL}`,
    comment: '/** @type {number | undefined} */\n',
    ordinary: '/** The number. */\n',
    target: 'n:variable',
  },
  {
    name: 'JSDoc @param {string} on a function in JavaScript',
    variant: 'js',
    template: `import { x } from './x';\n@@export function greet(name) {\n  return 'hi ' + name + x;\n}\n${JS_TAIL}`,
    comment: '/**\n * @param {string} name\n */\n',
    ordinary: '/**\n * Greets name.\n */\n',
    target: 'greet:function',
  },
  {
    name: 'JSDoc @param {string} on a class method in JavaScript',
    variant: 'js',
    template: `export class G {\n  @@greet(name) {\n    return 'hi ' + name;\n  }\n\n  other() {\n    return 1;\n  }\n}\n${JS_TAIL}`,
    comment: '/**\n   * @param {string} name\n   */\n  ',
    ordinary: '/**\n   * Greets name.\n   */\n  ',
    target: 'G.greet:method',
  },
];

function withAncestors(target: string): string[] {
  const segs = target.split(':')[0]!.split('.');
  // Ancestors are classes here; the fixture harness derives them from the report instead.
  return [target, ...segs.slice(0, -1).map((_, i) => `${segs.slice(0, i + 1).join('.')}:class`)].sort();
}

describe('meaningful comments move the digest of what contains them; ordinary comments do not', () => {
  for (const c of COMMENT_CASES) {
    const without = c.template.replace('@@', '');
    const withIt = c.template.replace('@@', c.comment);
    const ordinary = c.template.replace('@@', c.ordinary);
    const expected: SliceDelta = c.target === 'module' ? { changed: [], moduleChanged: true } : { changed: withAncestors(c.target), moduleChanged: false };

    it(`${c.name}: added`, () => {
      expect(delta(without, withIt, c.variant)).toEqual(expected);
    });
    it(`${c.name}: removed`, () => {
      expect(delta(withIt, without, c.variant)).toEqual(expected);
    });
    it(`${c.name}: an ordinary comment in its place changes nothing`, () => {
      expect(delta(without, ordinary, c.variant)).toEqual({ changed: [], moduleChanged: false });
    });
  }

  it('covers every kind the SPEC lists', () => {
    const names = COMMENT_CASES.map((c) => c.name).join('\n');
    for (const kind of ['__PURE__', '__NO_SIDE_EFFECTS__', 'webpack', '@ts-ignore', '@ts-expect-error', '@ts-nocheck', '<reference', '@jsx h', '@jsxImportSource', '/*!', '@license', '@preserve', '@type', '@param']) {
      expect(names).toContain(kind);
    }
  });
});

// ------------------------------------------------------------------------------------------------

describe('moves resolve imports: digests fold resolved targets, not specifiers as written', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kiln-inv-move-'));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  // SPEC §3 puts *resolved* import targets in the digest: moving a declaration that uses an import
  // into another folder (`./hash` becomes `../hash`, same target) is a move, not removed + added.
  it('moving a declaration that uses an import into a subfolder is "moved"', async () => {
    const before = join(FIXTURES, 'move-ts', 'before');
    const after = join(tmp, 'after');
    await cp(before, after, { recursive: true });
    const fp = 'export function fingerprint(key: string | number): string {\n  return hash(String(key));\n}\n\n';
    const cache = await readFile(join(after, 'src', 'cache.ts'), 'utf8');
    expect(cache).toContain(fp);
    await writeFile(join(after, 'src', 'cache.ts'), cache.replace(fp, ''));
    await mkdir(join(after, 'src', 'util'), { recursive: true });
    await writeFile(join(after, 'src', 'util', 'fingerprint.ts'), `import { hash } from '../hash';\n\n${fp}`);
    const opts = { store: false as const, workers: 0 };
    const d = diffReports(await digestTree(before, opts), await digestTree(after, opts));
    const fpChanges = d.declarations.filter((c) => c.identity.endsWith('#fingerprint:function'));
    expect(fpChanges.map((c) => c.status)).toEqual(['moved']);
  });

  it('pointing the same import name at another module changes the digest of the declarations that use it', async () => {
    const before = join(FIXTURES, 'move-ts', 'before');
    const after = join(tmp, 'retarget');
    await cp(before, after, { recursive: true });
    const cache = await readFile(join(after, 'src', 'cache.ts'), 'utf8');
    const m = /from '\.\/hash(\.js)?'/.exec(cache);
    expect(m, 'fixture imports ./hash').not.toBeNull();
    await writeFile(join(after, 'src', 'hash2.ts'), await readFile(join(after, 'src', 'hash.ts'), 'utf8'));
    await writeFile(join(after, 'src', 'cache.ts'), cache.replace(m![0], "from './hash2'"));
    const opts = { store: false as const, workers: 0 };
    const d = diffReports(await digestTree(before, opts), await digestTree(after, opts));
    expect(d.declarations.find((c) => c.identity.endsWith('src/cache#fingerprint:function'))?.status).toBe('changed');
  });
});

// ------------------------------------------------------------------------------------------------

describe('digest_schema: the previous projection gives stale hits with a notice', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'kiln-inv-schema-'));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const opts = (digestSchema?: number) => ({ store: false as const, workers: 0, ...(digestSchema === undefined ? {} : { digestSchema }) });

  it('the schemas under test are the current one and its predecessor', () => {
    expect(DIGEST_SCHEMA).toBe(2);
    expect(PREVIOUS_DIGEST_SCHEMA).toBe(1);
  });

  it('a report made under schema 1 carries it on every declaration, and its digests are not schema-2 digests', async () => {
    const dir = join(FIXTURES, 'body-ts', 'before');
    const old = await digestTree(dir, opts(1));
    const current = await digestTree(dir, opts());
    expect(old.digest_schema).toBe(1);
    expect(old.declarations.length).toBeGreaterThan(5);
    for (const d of old.declarations) expect(d.digest_schema).toBe(1);
    for (const d of current.declarations) expect(d.digest_schema).toBe(2);
    const cur = new Map(current.declarations.map((d) => [d.identity, d.semantic_digest]));
    for (const d of old.declarations) expect(d.semantic_digest, d.identity).not.toBe(cur.get(d.identity));
  });

  it('comparing a schema-1 record with the tree recomputed under schema 1 marks matches stale and says so', async () => {
    const dir = join(FIXTURES, 'body-ts', 'before');
    const old = await digestTree(dir, opts(1));
    const recomputed = await digestTree(dir, opts(1));
    const d = diffReports(old, recomputed, { staleSchema: 1 });
    expect(d.declarations.length).toBe(old.declarations.length);
    for (const c of d.declarations) {
      expect(c.status, c.identity).toBe('unchanged');
      expect(c.stale, c.identity).toBe(true);
    }
    expect(d.diagnostics.map((x) => x.code)).toContain('KILN_DIGEST_STALE_SCHEMA');

    // Against an edited tree: the edited method and its class are changed (not stale), the rest stale hits.
    const edited = await digestTree(join(FIXTURES, 'body-ts', 'after'), opts(1));
    const e = diffReports(old, edited, { staleSchema: 1 });
    const changed = e.declarations.filter((c) => c.status === 'changed').map((c) => c.identity.split('#')[1]).sort();
    expect(changed).toEqual(['LruCache.get:method', 'LruCache:class']);
    for (const c of e.declarations) expect(!!c.stale, c.identity).toBe(c.status !== 'changed');
    expect(e.diagnostics.map((x) => x.code)).toContain('KILN_DIGEST_STALE_SCHEMA');

    // Without the stale option, nothing is flagged and no notice is given.
    const plain = diffReports(old, recomputed);
    expect(plain.declarations.some((c) => c.stale)).toBe(false);
    expect(plain.diagnostics.map((x) => x.code)).not.toContain('KILN_DIGEST_STALE_SCHEMA');
  });

  it('schema 1 ignores meaningful comments, schema 2 does not', async () => {
    const src = (pure: boolean) =>
      `import { make } from './make';\nexport const value = ${pure ? '/*#__PURE__*/ ' : ''}make();\n${TS_TAIL}`;
    for (const [side, pure] of [['a', false], ['b', true]] as const) {
      await mkdir(join(tmp, side, 'src'), { recursive: true });
      await writeFile(join(tmp, side, 'package.json'), JSON.stringify({ name: 'inv-schema' }));
      await writeFile(join(tmp, side, 'src', 'm.ts'), src(pure));
    }
    const status = (r: ReturnType<typeof diffReports>) => Object.fromEntries(r.declarations.map((c) => [c.identity.split('#')[1], c.status]));
    const under1 = diffReports(await digestTree(join(tmp, 'a'), opts(1)), await digestTree(join(tmp, 'b'), opts(1)), { staleSchema: 1 });
    expect(status(under1)).toEqual({ 'value:variable': 'unchanged', 'tail:function': 'unchanged' });
    const under2 = diffReports(await digestTree(join(tmp, 'a'), opts()), await digestTree(join(tmp, 'b'), opts()));
    expect(status(under2)).toEqual({ 'value:variable': 'changed', 'tail:function': 'unchanged' });
    // The same holds for one file through extractSlice.
    expect(delta(src(false), src(true), 'ts', 1)).toEqual({ changed: [], moduleChanged: false });
    expect(delta(src(false), src(true), 'ts', 2)).toEqual({ changed: ['value:variable'], moduleChanged: false });
  });
});

