/**
 * Issue 3, point 2 (build) and point 9 (type error, missing tsconfig): `compileProject` on real
 * fixture libraries in temp directories — emitted products, comment handling, source maps, failures
 * with coded diagnostics, clean outputs, and byte-identical output from two clones at different paths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SourceMap } from 'node:module';
import { compileProject, type CompileResult } from '@kiln/core';
import { blankNonMeaningfulComments, listComments } from '../dist/compile/blank-comments.js';
import { compareOutputs, formatDifference } from '../dist/compile/equivalence.js';
import { extractSlice } from '../dist/facts/extract.js';
import { fileKind } from '../dist/parse/language.js';
// @ts-expect-error — plain ESM helper shared with tools/, no type declarations
import { loadCorpus } from '../../../tools/lib/corpus.mjs';
import { cleanup, JSX_SHIM, libTree, listTree, makeLib, read, referenceBuild, tempDir, writeTree, type Tree } from './lib/build-fixtures.js';
import { oracleComments } from './lib/comments-oracle.js';

/** Real comments carry DROPME (they must not reach the JavaScript); lookalikes in code carry KEEPME. */
const SOURCES: Tree = {
  'index.ts': `/*! @fx/lib — MIT licence */
// DROPME line comment
import { helper } from './helper.js';
export { Widget } from './widget.js';

/**
 * Makes a number.
 * @param n how many
 */
export function make(n: number /* DROPME inline */): number {
  // DROPME body comment
  return helper(n) /* DROPME trailing */ + 1;
}

/** Options of the widget. */
export interface Options {
  /** the timeout in milliseconds */
  timeout: number;
}

export const lazy = () => import(/* webpackChunkName: "helper" */ './helper.js');
export const dynamic = (p: string) => import(/* @vite-ignore */ p);
export const made = /*#__PURE__*/ make(2);
/*@__NO_SIDE_EFFECTS__*/ export function pure(): number {
  return 1;
}
/** @license Apache-2.0 */
export const licensed = 1;
export const pattern = /\\/\\* KEEPME-regex \\*\\//g;
export const text = \`// KEEPME-template \${'/* KEEPME-string */'}\`;
export function early(): number | undefined {
  return /* DROPME a comment with a newline
  */ undefined;
}
`,
  'helper.ts': `export function helper(n: number): number {
  return n * 2; // DROPME
}
`,
  'widget.tsx': `export function Widget(props: { label: string }) {
  return <div title="// KEEPME-attr">// KEEPME-jsx-text {/* DROPME jsx */} {props.label}</div>;
}
`,
  'jsx-shim.d.ts': JSX_SHIM,
};

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

function lib(prefix: string, sources: Tree = SOURCES, extra: Tree = {}): string {
  const root = makeLib(prefix, sources, extra);
  dirs.push(root);
  return root;
}

describe('compileProject: a library', () => {
  let root: string;
  let result: CompileResult;
  beforeAll(async () => {
    root = lib('build');
    result = await compileProject({ projectRoot: root });
  });

  it('emits JavaScript, declarations and source maps into the declared outDir', () => {
    expect(result.diagnostics).toEqual([]);
    expect(result.success).toBe(true);
    expect(result.tsconfig).toBe('tsconfig.lib.json');
    expect(result.outputDirs).toEqual(['dist']);
    expect(result.typescript.version).toMatch(/^\d+\.\d+\.\d+/);
    const files = listTree(join(root, 'dist'));
    expect(files).toEqual([
      'helper.d.ts', 'helper.js', 'helper.js.map',
      'index.d.ts', 'index.js', 'index.js.map',
      'widget.d.ts', 'widget.js', 'widget.js.map',
    ]);
    expect(result.emitted).toEqual(files.map((f) => `dist/${f}`));
  });

  it('keeps meaningful comments in the JavaScript and removes every other comment', () => {
    const js = read(root, 'dist/index.js');
    for (const kept of [
      '/*! @fx/lib — MIT licence */',
      '/*#__PURE__*/ make(2)',
      '/*@__NO_SIDE_EFFECTS__*/',
      '/* webpackChunkName: "helper" */',
      '/* @vite-ignore */',
      '/** @license Apache-2.0 */',
    ]) {
      expect(js).toContain(kept);
    }
    for (const f of ['index.js', 'helper.js', 'widget.js']) {
      const text = read(root, `dist/${f}`);
      expect(text, f).not.toContain('DROPME');
      expect(text, f).not.toMatch(/\/\*\*\s*\n\s*\* Makes a number/); // JSDoc prose is documentation, not output
      // Every comment left is meaningful, apart from the debug ID (SPEC §8) and the source-map link.
      const left = listComments(text, 'js').filter((c) => !c.kept).map((c) => text.slice(c.pos, c.end));
      expect(left, f).toEqual([expect.stringMatching(/^\/\/# debugId=[0-9a-f-]{36}$/), `//# sourceMappingURL=${f}.map`]);
    }
    // Comment lookalikes inside code are code.
    expect(js).toContain('KEEPME-regex');
    expect(js).toContain('// KEEPME-template');
    expect(js).toContain('/* KEEPME-string */');
    const widget = read(root, 'dist/widget.js');
    expect(widget).toContain('// KEEPME-attr');
    expect(widget).toContain('// KEEPME-jsx-text');
    // A removed comment that spanned lines still ends the line: `return` stays a bare return.
    expect(js).toMatch(/return;\s*\n\s*undefined;/);
  });

  it('writes declarations with their JSDoc', () => {
    const dts = read(root, 'dist/index.d.ts');
    expect(dts).toContain(' * Makes a number.\n * @param n how many\n */\nexport declare function make(n: number): number;');
    expect(dts).toContain('/** Options of the widget. */\nexport interface Options {');
    expect(dts).toContain('/** the timeout in milliseconds */');
    expect(dts).not.toContain('DROPME');
  });

  it('is what the compiler emits itself, minus non-meaningful comments (SPEC §4 equivalence)', async () => {
    const ref = tempDir('ref');
    dirs.push(ref);
    expect(referenceBuild(root, ref).errors).toBe(0);
    // Not vacuous: the compiler's own output has the comments kiln removes.
    expect(readFileSync(join(ref, 'index.js'), 'utf8')).toContain('DROPME');
    // JSDoc in emitted JavaScript is documentation, not output (the .d.ts carries it); in JavaScript the
    // extractor reads JSDoc tags as checkJs types, so the reference's JSDoc blocks are removed after
    // the fact — by blanking the compiler's *output*, not kiln's input path.
    for (const f of ['index.js', 'helper.js', 'widget.js']) {
      writeFileSync(join(ref, f), blankNonMeaningfulComments(readFileSync(join(ref, f), 'utf8'), 'js'));
    }
    const cmp = await compareOutputs(join(root, 'dist'), ref);
    expect(cmp.differences.map(formatDifference)).toEqual([]);
    expect(cmp.compared).toBe(6);
    expect(cmp.excluded).toEqual(['helper.js.map', 'index.js.map', 'widget.js.map']);
  });

  it('writes valid source maps: relative sources, exact positions', () => {
    let checked = 0;
    for (const name of ['index', 'helper', 'widget']) {
      const js = read(root, `dist/${name}.js`);
      const mapText = read(root, `dist/${name}.js.map`);
      const map = JSON.parse(mapText) as { version: number; file: string; sources: string[]; sourceRoot?: string; mappings: string };
      expect(map.version).toBe(3);
      expect(map.file).toBe(`${name}.js`);
      const src = name === 'widget' ? 'widget.tsx' : `${name}.ts`;
      expect(map.sources).toEqual([`../src/${src}`]);
      expect(map.sourceRoot ?? '').toBe('');
      expect(js.trimEnd().endsWith(`//# sourceMappingURL=${name}.js.map`)).toBe(true);
      expect(mapText).not.toContain(root);
      // Identifiers in the output map back to the same identifier in the authored source.
      const source = read(root, `src/${src}`);
      const sourceLines = source.split('\n');
      const sm = new SourceMap(map as never);
      const lines = js.split('\n');
      for (const id of ['make', 'helper', 'pure', 'early', 'Widget', 'props', 'label', 'made', 'lazy']) {
        lines.forEach((line, l) => {
          for (const m of line.matchAll(new RegExp(`\\b${id}\\b`, 'g'))) {
            const e = sm.findEntry(l, m.index!) as { generatedLine?: number; generatedColumn?: number; originalLine?: number; originalColumn?: number };
            if (e.generatedLine !== l || e.generatedColumn !== m.index) continue; // no segment starts here
            const at = sourceLines[e.originalLine!]!.slice(e.originalColumn!);
            expect(at.startsWith(id), `${name}.js ${l + 1}:${m.index! + 1} ${id} → ${src} ${e.originalLine! + 1}:${e.originalColumn! + 1} "${at.slice(0, 20)}"`).toBe(true);
            checked++;
          }
        });
      }
    }
    expect(checked).toBeGreaterThan(10);
  });
});

describe('compileProject: failures are coded diagnostics', () => {
  it('a type error fails the build with the TS code and its location, and writes nothing', async () => {
    const root = lib('type-error', { 'index.ts': 'export const ok = 1;\n' });
    expect((await compileProject({ projectRoot: root })).success).toBe(true);
    expect(existsSync(join(root, 'dist/index.js'))).toBe(true);
    writeFileSync(join(root, 'src/bad.ts'), '// a type error on line 3\n\nexport const n: number = "not a number";\n');
    const r = await compileProject({ projectRoot: root, relativeTo: join(root, '..') });
    expect(r.success).toBe(false);
    expect(r.emitted).toEqual([]);
    expect(r.diagnostics).toHaveLength(1);
    const d = r.diagnostics[0]!;
    expect(d).toMatchObject({
      code: 'KILN_TYPESCRIPT_ERROR',
      severity: 'error',
      tsCode: 'TS2322',
      file: `${basename(root)}/src/bad.ts`,
      line: 3,
      column: 14,
      producer: 'build',
    });
    expect(d.message).toContain(`Type 'string' is not assignable to type 'number'`);
    // noEmitOnError semantics: no output of this build, and none of the previous one, survives.
    expect(listTree(join(root, 'dist'))).toEqual([]);
  });

  it('a declaration-emit error fails the build too', async () => {
    const root = lib('decl-error', { 'index.ts': 'export const x = new (class { private p = 1; })();\n' });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(false);
    expect(r.diagnostics.map((d) => d.tsCode)).toContain('TS4094');
    expect(r.diagnostics[0]).toMatchObject({ code: 'KILN_TYPESCRIPT_ERROR', file: 'src/index.ts', line: 1 });
    expect(listTree(join(root, 'dist'))).toEqual([]);
  });

  it('a missing tsconfig is KILN_TSCONFIG_NOT_FOUND, naming what was tried', async () => {
    const root = tempDir('no-tsconfig');
    dirs.push(root);
    writeTree(root, { 'package.json': '{"name":"x"}', 'src/index.ts': 'export const a = 1;\n' });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(false);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ code: 'KILN_TSCONFIG_NOT_FOUND', severity: 'error' });
    expect(r.diagnostics[0]!.message).toContain('tsconfig.lib.json, tsconfig.build.json, tsconfig.json');
    const named = await compileProject({ projectRoot: root, tsconfig: 'tsconfig.app.json' });
    expect(named.diagnostics[0]).toMatchObject({ code: 'KILN_TSCONFIG_NOT_FOUND' });
    expect(named.diagnostics[0]!.message).toContain('tsconfig.app.json');
  });

  it('an invalid tsconfig is KILN_TSCONFIG_INVALID with the compiler code', async () => {
    const root = lib('bad-tsconfig', { 'index.ts': 'export const a = 1;\n' }, {
      'tsconfig.lib.json': '{ "compilerOptions": { "outDir": "dist", "notAnOption": true }, "include": ["src"] }',
    });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(false);
    expect(r.diagnostics[0]).toMatchObject({ code: 'KILN_TSCONFIG_INVALID', tsCode: 'TS5023', file: 'tsconfig.lib.json', line: 1 });
    writeFileSync(join(root, 'tsconfig.lib.json'), '{ "compilerOptions": { "outDir": "dist" }, "include": ["nothing-here"] }');
    const empty = await compileProject({ projectRoot: root });
    expect(empty.diagnostics[0]).toMatchObject({ code: 'KILN_TSCONFIG_INVALID', tsCode: 'TS18003' });
  });

  it('a tsconfig without outDir is KILN_BUILD_NO_OUTDIR (nothing is emitted next to the sources)', async () => {
    const root = lib('no-outdir', { 'index.ts': 'export const a = 1;\n' }, {
      'tsconfig.lib.json': '{ "compilerOptions": { "module": "NodeNext", "types": [] }, "include": ["src"] }',
    });
    const r = await compileProject({ projectRoot: root });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['KILN_BUILD_NO_OUTDIR']);
    expect(existsSync(join(root, 'src/index.js'))).toBe(false);
  });

  it('compiler messages name files relative to the project, never by absolute path', async () => {
    const root = lib('rootdir', { 'index.ts': "export { b } from '../other/b.js';\n" }, { 'other/b.ts': 'export const b = 1;\n' });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(false);
    const d = r.diagnostics.find((x) => x.tsCode === 'TS6059')!;
    expect(d).toBeDefined();
    expect(d.message).toContain("'other/b.ts'");
    expect(JSON.stringify(r.diagnostics)).not.toContain(root);
  });
});

describe('compileProject: outputs', () => {
  it('removes outputs of sources that no longer exist', async () => {
    const root = lib('stale', { 'index.ts': 'export const a = 1;\n' }, { 'dist/removed.js': 'export const old = 1;\n' });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(true);
    expect(listTree(join(root, 'dist'))).toEqual(['index.d.ts', 'index.js', 'index.js.map']);
  });

  it('never removes a directory that holds sources; only replaces its own outputs, with a warning', async () => {
    // Outputs next to the sources (TypeScript excludes the outDir from inputs unless told otherwise).
    const tsconfig = JSON.parse(TSCONFIG_WITH({ outDir: 'src' })) as Record<string, unknown>;
    const root = lib('outdir-src', { 'index.ts': 'export const a = 1;\n', 'keep.txt': 'not a build output\n' }, {
      'tsconfig.lib.json': JSON.stringify({ ...tsconfig, exclude: [] }),
    });
    // The fixture's package.json points at dist/, which this build does not write: not read here.
    const r = await compileProject({ projectRoot: root, exports: false });
    expect(r.success).toBe(true);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['KILN_BUILD_OUTDIR_NOT_CLEANED']);
    expect(listTree(join(root, 'src'))).toEqual(['index.d.ts', 'index.js', 'index.js.map', 'index.ts', 'keep.txt']);
  });

  it('an outDir given by the caller replaces the tsconfig one and takes declarationDir along', async () => {
    const root = lib('outdir-option', { 'index.ts': 'export const a = 1;\n' }, {
      'tsconfig.lib.json': TSCONFIG_WITH({ declarationDir: 'dist/types' }),
    });
    const r = await compileProject({ projectRoot: root, outDir: 'build/out', exports: false });
    expect(r.success).toBe(true);
    expect(r.outputDirs).toEqual(['build/out']);
    expect(listTree(join(root, 'build/out'))).toEqual(['index.js', 'index.js.map', 'types/index.d.ts']);
    expect(existsSync(join(root, 'dist'))).toBe(false);
  });

  it('an outDir outside the project is fine: relative paths that climb to the root are not absolute', async () => {
    const root = lib('outside', { 'index.ts': 'export const a = 1;\n' });
    const out = tempDir('outside-out');
    dirs.push(out);
    const r = await compileProject({ projectRoot: root, outDir: join(out, 'dist'), exports: false });
    expect(r.diagnostics).toEqual([]);
    expect(JSON.parse(readFileSync(join(out, 'dist/index.js.map'), 'utf8')).sources[0]).toMatch(/^(\.\.\/)+.*\/src\/index\.ts$/);
  });

  it("an outDir elsewhere than package.json's entry points is KILN_EXPORTS_TARGET_MISSING, nothing written (no second folder)", async () => {
    const root = lib('outdir-vs-manifest', { 'index.ts': 'export const a = 1;\n' });
    const r = await compileProject({ projectRoot: root, outDir: 'build/out' });
    expect(r.success).toBe(false);
    expect(r.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['KILN_EXPORTS_TARGET_MISSING', 'main points at dist/index.js, which does not exist and is outside the build output (build/out)'],
      ['KILN_EXPORTS_TARGET_MISSING', 'types points at dist/index.d.ts, which does not exist and is outside the build output (build/out)'],
    ]);
    expect(existsSync(join(root, 'build'))).toBe(false);
  });

  it('flags an absolute sourceRoot, which would make clones disagree', async () => {
    const root = lib('abs-root', { 'index.ts': 'export const a = 1;\n' }, {
      'tsconfig.lib.json': TSCONFIG_WITH({ sourceRoot: '/somewhere/absolute' }),
    });
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(true);
    expect(r.diagnostics.map((d) => [d.code, d.file])).toEqual([['KILN_BUILD_ABSOLUTE_PATH', 'dist/index.js.map']]);
  });
});

describe('compileProject: two clones at different paths', () => {
  it('produce byte-identical outputs with no absolute path in them', async () => {
    const a = tempDir('clone-a');
    const b = tempDir('clone-b-with-a-longer-name');
    dirs.push(a, b);
    const rootA = join(a, 'lib');
    const rootB = join(b, 'nested', 'deeper', 'lib');
    for (const r of [rootA, rootB]) {
      mkdirSync(r, { recursive: true });
      writeTree(r, libTree(SOURCES, { 'tsconfig.lib.json': TSCONFIG_WITH({ declarationMap: true, inlineSources: true }) }));
    }
    const [ra, rb] = await Promise.all([compileProject({ projectRoot: rootA }), compileProject({ projectRoot: rootB })]);
    expect(ra.diagnostics).toEqual([]);
    expect(rb.diagnostics).toEqual([]);
    const files = listTree(join(rootA, 'dist'));
    expect(files).toEqual(listTree(join(rootB, 'dist')));
    expect(files).toContain('index.d.ts.map');
    for (const f of files) {
      const x = readFileSync(join(rootA, 'dist', f));
      const y = readFileSync(join(rootB, 'dist', f));
      expect(x.equals(y), f).toBe(true);
      for (const p of [a, b, rootA, rootB]) expect(x.includes(p), `${f} contains ${p}`).toBe(false);
    }
    // With inlineSources, maps carry the authored text (comments included), not what the emitter saw.
    const map = JSON.parse(read(rootA, 'dist/index.js.map')) as { sourcesContent: string[] };
    expect(map.sourcesContent).toEqual([read(rootA, 'src/index.ts')]);
  });
});

describe('comment discovery', () => {
  it('finds exactly the comments an independent tokeniser finds, in the tricky places', () => {
    const cases: [string, 'ts' | 'tsx'][] = [
      ['const r = /\\/\\/ no/g; // c1\nconst t = `a ${ /* c2 */ x /* c3 */ } // no ${y}`;\nconst d = a / b / c; // c4\n', 'ts'],
      ['function f() { /* c1 */ }\ntry { g(); } catch { // c2\n}\nconst e = { /* c3 */ };\n', 'ts'],
      ['const a = <div a="//x" b={/* c1 */ 1}>// text /* no */ {/* c2 */} <br /* c3 */ /></div>; // c4\n', 'tsx'],
      ['#!/usr/bin/env node\n/** doc */ export const a = 1 /* c1 */, b = 2; // c2\n/* c3 */', 'ts'],
    ];
    for (const [text, variant] of cases) {
      const found = listComments(text, variant).map((c) => text.slice(c.pos, c.end));
      expect(found, text).toEqual(oracleComments(text, variant).map((c) => text.slice(c.pos, c.end)));
      expect(found.every((c) => !c.includes('no')), text).toBe(true);
    }
  });

  it('on the real-code corpus: agrees with the oracle, and blanking never changes code', () => {
    const failures: string[] = [];
    let files = 0;
    let comments = 0;
    for (const e of loadCorpus() as { abs: string }[]) {
      const kind = fileKind(e.abs);
      if (!kind) continue;
      const text = readFileSync(e.abs, 'utf8');
      files++;
      const mine = listComments(text, kind.variant).map((c) => `${c.pos}:${c.end}`);
      const oracle = oracleComments(text, kind.variant).map((c) => `${c.pos}:${c.end}`);
      comments += mine.length;
      if (mine.join() !== oracle.join()) failures.push(`${e.abs}: ${mine.length} comments, oracle ${oracle.length}`);
      // JavaScript keeps its JSDoc here: in JavaScript, JSDoc types are part of the meaning.
      const keepDocs = kind.variant === 'js' || kind.variant === 'jsx';
      const blanked = blankNonMeaningfulComments(text, kind.variant, { keepDocs });
      if (blanked.length !== text.length) {
        failures.push(`${e.abs}: length changed`);
        continue;
      }
      const breaks = (s: string) => [...s.matchAll(/[\r\n\u2028\u2029]/g)].map((m) => m.index).join();
      if (breaks(blanked) !== breaks(text)) failures.push(`${e.abs}: line breaks moved`);
      const before = extractSlice(Buffer.from(text), kind.variant);
      const after = extractSlice(Buffer.from(blanked), kind.variant);
      if (before.module.digest !== after.module.digest) failures.push(`${e.abs}: module digest moved`);
      const sem = (s: typeof before) => s.decls.map((d) => `${d.path}:${d.kind}:${d.semantic}`).join('\n');
      if (sem(before) !== sem(after)) failures.push(`${e.abs}: a declaration digest moved`);
      // What is left is only what emit keeps.
      if (listComments(blanked, kind.variant, { keepDocs }).some((c) => !c.kept)) failures.push(`${e.abs}: a non-meaningful comment survived`);
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(files).toBeGreaterThan(500);
    expect(comments).toBeGreaterThan(10_000);
  });
});

function TSCONFIG_WITH(options: Record<string, unknown>): string {
  const base = JSON.parse(libTree({})['tsconfig.lib.json']!) as { compilerOptions: Record<string, unknown> };
  return JSON.stringify({ ...base, compilerOptions: { ...base.compilerOptions, ...options } }, null, 2);
}
