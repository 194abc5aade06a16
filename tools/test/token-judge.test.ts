/**
 * Issue 10, point 3: the independent equivalence judge (tools/lib/token-judge.mjs), which shares no
 * code with kiln's extractor. Evidence of two kinds, as for kiln's own `compareOutputs`
 * (packages/core/test/equivalence.test.ts, whose cases these mirror):
 *
 * - real builds: a fixture library emitted by the TypeScript compiler API (a real program, `.js`,
 *   `.d.ts` and source maps into a temp dir — no kiln involved), edited and emitted again; the judge
 *   accepts what a legitimate cache hit produces (comments, a prettier reformat with other options,
 *   reordered hoisted declarations) and catches what must not be a hit (evaluation order, a value,
 *   a missing export, docs in `.d.ts`, overload order, a meaningful comment, a private body);
 * - file-level cases: one per normalisation rule and per comment rule, both directions, and bad input.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import * as prettier from 'prettier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeFile, judgeOutputs, meaningfulComment } from '../lib/token-judge.mjs';

type Tree = Record<string, string>;

const BASE: Tree = {
  'registry.ts': '/*! fixture registry v1 */\nexport const registry: string[] = [];\n',
  'index.ts': `// Module comment.
import { registry } from './registry.js';

/** Doubles a number. */
export function double(n: number): number {
  return (n * 2);
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
export const table = { 'alpha': 0x10, "beta-gamma": [1, 2, 3,], };
export const made = new Map;
export const frozen = /*#__PURE__*/ Object.freeze({ n: 1 });
export const add = (a: number) => (b: number) => (a + b);

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

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `kiln-judge-${prefix}-`));
  dirs.push(d);
  return d;
}

function writeTree(root: string, tree: Tree): void {
  for (const [rel, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

// The default library is parsed once for every emit (the fixtures are small; the lib is not).
const libCache = new Map<string, ts.SourceFile | undefined>();

/**
 * A real TypeScript program over the sources, emitted like `tsc -p` would (declarations, source maps,
 * comments kept) into `<tmp>/dist`; ESM by default, CommonJS with `cjs`.
 */
function emit(sources: Tree, { cjs = false } = {}): string {
  const root = tempDir('emit');
  writeTree(root, Object.fromEntries(Object.entries(sources).map(([k, v]) => [`src/${k}`, v])));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: '@fx/lib', version: '1.0.0', type: cjs ? 'commonjs' : 'module' }));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    types: [],
    strict: true,
    declaration: true,
    sourceMap: true,
    skipLibCheck: true,
    rootDir: join(root, 'src'),
    outDir: join(root, 'dist'),
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang, onError, fresh) => {
    if (!file.startsWith(root)) {
      if (!libCache.has(file)) libCache.set(file, getSourceFile(file, lang, onError, fresh));
      return libCache.get(file);
    }
    return getSourceFile(file, lang, onError, fresh);
  };
  const program = ts.createProgram({ rootNames: Object.keys(sources).map((k) => join(root, 'src', k)), options, host });
  const errors = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error);
  expect(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '))).toEqual([]);
  const r = program.emit();
  expect(r.emitSkipped).toBe(false);
  return join(root, 'dist');
}

function variant(edit: (index: string) => string): Tree {
  const next = edit(BASE['index.ts']!);
  expect(next, 'the edit applies').not.toBe(BASE['index.ts']);
  return { ...BASE, 'index.ts': next };
}

/** The file names a judgement's differences are about, in order. */
const files = (r: { differences: string[] }) => r.differences.map((d) => d.slice(0, d.indexOf(':')));

let base: string;
beforeAll(() => {
  base = emit(BASE);
});

describe('judgeOutputs on real tsc emits: what a cache hit may produce is equivalent', () => {
  it('the same sources emitted twice: every file compared, maps excluded', async () => {
    const r = await judgeOutputs(base, emit(BASE));
    expect(r).toEqual({ equal: true, compared: 4, differences: [] });
  });

  it('comment-only edits (line, block, trailing; not JSDoc)', async () => {
    const edited = variant((s) => s.replace('// Module comment.', '// Another comment.\n/* and a block */').replace(' // times three', '').replace('export const LIMIT', '/* limit */ export const LIMIT'));
    const out = emit(edited);
    expect(readFileSync(join(out, 'index.js'), 'utf8')).toContain('/* and a block */'); // load-bearing: tsc keeps them
    expect(await judgeOutputs(base, out)).toEqual({ equal: true, compared: 4, differences: [] });
  });

  it('a prettier reformat with other options: equivalent, and only because of the reprint', async () => {
    const format = (text: string) =>
      prettier.format(text, { parser: 'typescript', singleQuote: true, semi: false, printWidth: 40, tabWidth: 4, arrowParens: 'avoid', trailingComma: 'none', quoteProps: 'consistent' });
    const formatted: Tree = {};
    for (const [k, v] of Object.entries(BASE)) formatted[k] = await format(v);
    const out = emit(formatted);
    expect((await judgeOutputs(base, out)).differences).toEqual([]);
    // Load-bearing: tsc carries the reformat into its emit — parentheses, `new Map`, arrow
    // parameters, trailing commas — so the tokens as emitted differ; the judge's reprint equates them.
    const js = readFileSync(join(out, 'index.js'), 'utf8');
    expect(js).toContain('new Map()');
    expect(js).toContain('return n * 2;');
    const raw = await judgeFile('index.js', readFileSync(join(base, 'index.js')), readFileSync(join(out, 'index.js')), { reprint: false });
    expect(raw).toEqual([
      expect.stringMatching(/^index\.js: top-level statement \d+ \(const table\) differs \(first at `,` vs `]`\)/),
      expect.stringMatching(/^index\.js: function declaration double differs \(first at `\(` vs `n`\)/),
    ]);
  });

  it('reordered exported function declarations, interfaces and type aliases (hoisted: a set)', async () => {
    const edited = variant((s) => {
      const dbl = s.slice(s.indexOf('/** Doubles'), s.indexOf('export function triple'));
      const shape = s.slice(s.indexOf('/** A shape.'), s.indexOf('export type Id'));
      const id = 'export type Id = string;\n';
      return s.replace(dbl, '').replace(shape, '').replace(id, '').replace('registry.push', `${id}${shape}registry.push`).replace('export const LIMIT', `${dbl}export const LIMIT`);
    });
    const out = emit(edited);
    const js = readFileSync(join(out, 'index.js'), 'utf8');
    expect(js.indexOf('function double')).toBeGreaterThan(js.indexOf("registry.push('second')")); // load-bearing: it moved
    expect(await judgeOutputs(base, out)).toEqual({ equal: true, compared: 4, differences: [] });
  });
});

describe('judgeOutputs on real tsc emits: what must not be a hit is caught', () => {
  it('swapped effectful top-level statements (evaluation order)', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace("registry.push('first');\nregistry.push('second');", "registry.push('second');\nregistry.push('first');"))));
    expect(r.equal).toBe(false);
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^index\.js: the evaluation order of top-level statements differs at statement \d+ /);
  });

  it('a changed constant value, with the first differing token at line:col in each emitted file', async () => {
    const out = emit(variant((s) => s.replace('LIMIT = 10', 'LIMIT = 11')));
    const r = await judgeOutputs(base, out);
    expect(files(r)).toEqual(['index.d.ts', 'index.js']);
    const js = r.differences[1]!;
    const lines = readFileSync(join(out, 'index.js'), 'utf8').split('\n');
    const line = lines.findIndex((l) => l.includes('LIMIT = 11'));
    const col = lines[line]!.indexOf('11') + 1;
    expect(js).toBe(`index.js: top-level statement ${js.match(/statement (\d+)/)![1]} (const LIMIT) differs (first at \`10\` vs \`11\`) [A ${line + 1}:${col} \`10\` | B ${line + 1}:${col} \`11\`]`);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: declaration LIMIT differs \(first at `10` vs `11`\)/);
  });

  it('a missing export', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace('export function triple', 'function triple'))));
    expect(files(r)).toEqual(['index.d.ts', 'index.js']);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: declaration triple exists only in output A/);
    expect(r.differences[1]).toMatch(/^index\.js: function declaration triple differs \(first at `export` vs `function`\)/);
  });

  it('a JSDoc edit: the JavaScript is equivalent, the declarations are not', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace('/** Doubles a number. */', '/** Multiplies by two. */'))));
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: declaration double differs \(first at `\/\*\* Doubles a number\. \*\/` vs `\/\*\* Multiplies by two\. \*\/`\)/);
  });

  it('a JSDoc edit on an interface member', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace('/** the area */', '/** the surface */'))));
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: declaration Shape differs \(first at `\/\*\* the area \*\/`/);
  });

  it('reordered overload signatures (their order is observable)', async () => {
    const r = await judgeOutputs(
      base,
      emit(variant((s) => s.replace('export function parse(a: string): string;\nexport function parse(a: number): number;', 'export function parse(a: number): number;\nexport function parse(a: string): string;'))),
    );
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: the order of the 2 declarations named parse differs/);
  });

  it('a removed /*#__PURE__*/ annotation and an edited legal comment', async () => {
    const r = await judgeOutputs(
      base,
      emit({ 'registry.ts': BASE['registry.ts']!.replace('v1', 'v2'), 'index.ts': BASE['index.ts']!.replace('/*#__PURE__*/ ', '') }),
    );
    expect(files(r)).toEqual(['index.js', 'registry.d.ts', 'registry.js']);
    expect(r.differences[0]).toMatch(/^index\.js: top-level statement \d+ \(const frozen\) differs \(first at `\/\*#__PURE__\*\/` vs `Object`\)/);
    for (const d of r.differences.slice(1)) expect(d).toMatch(/^registry\.d?\.?[jt]s: file-level directives or legal comments before the first statement differ \[A 1:1 `! fixture registry v1` \| B 1:1 `! fixture registry v2`\]$/);
  });

  it('a private body edit: JavaScript differs at the method, declarations do not', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace('return this.#count;', 'return this.#count * 1;'))));
    expect(r.differences).toHaveLength(1);
    expect(r.differences[0]).toMatch(/^index\.js: top-level statement \d+ \(class Counter\) differs \(first at `;` vs `\*`\)/);
  });

  it('a renamed private member changes the declarations too (classes are nominal)', async () => {
    const r = await judgeOutputs(base, emit(variant((s) => s.replace(/\bstep\b/g, 'stride'))));
    expect(files(r)).toEqual(['index.d.ts', 'index.js']);
    expect(r.differences[0]).toMatch(/^index\.d\.ts: declaration Counter differs \(first at `step` vs `stride`\)/);
  });

  it('CommonJS output: reordered exported functions are NOT equivalent (exports assignments run in order)', async () => {
    const swapped = variant((s) => {
      const dbl = s.slice(s.indexOf('/** Doubles'), s.indexOf('export function triple'));
      return s.replace(dbl, '').replace('export const LIMIT', `${dbl}export const LIMIT`);
    });
    const r = await judgeOutputs(emit(BASE, { cjs: true }), emit(swapped, { cjs: true }));
    expect(files(r)).toEqual(['index.js']);
    expect(r.differences[0]).toMatch(/^index\.js: (top-level statement \d+ \(ExpressionStatement\) differs|the evaluation order)/);
  });
});

describe('judgeOutputs: directories and bad input', () => {
  it('files on one side only, other files byte for byte, maps excluded, the exclude option', async () => {
    const a = tempDir('dir-a');
    const b = tempDir('dir-b');
    writeTree(a, { 'x.js': 'export const x = 1;\n', 'x.js.map': '{"a":1}', 'data.json': '{"a":1}\n', 'only-a.js': '1;\n', 'sub/y.d.ts': 'export declare const y: 1;\n' });
    writeTree(b, { 'x.js': 'export const x = 1; // other\n', 'x.js.map': '{"b":2}', 'data.json': '{"a": 1}\n', 'only-b.txt': 'b\n', 'sub/y.d.ts': 'export declare const y: 1;\n' });
    const r = await judgeOutputs(a, b);
    expect(r).toEqual({
      equal: false,
      compared: 3,
      differences: ['data.json: differs at byte 5 (compared byte for byte)', 'only-a.js: exists only in output A', 'only-b.txt: exists only in output B'],
    });
    expect(await judgeOutputs(a, b, { exclude: (f) => f.endsWith('.json') || f.startsWith('only-') })).toEqual({ equal: true, compared: 2, differences: [] });
  });

  it('a missing directory and empty outputs are differences, never "equal", never a throw', async () => {
    const empty = tempDir('empty');
    const alsoEmpty = tempDir('empty2');
    const missing = await judgeOutputs(join(empty, 'nope'), base);
    expect(missing.equal).toBe(false);
    expect(missing.differences[0]).toBe('(output A): cannot be read (ENOENT)');
    expect(missing.differences.join('\n')).not.toContain(empty); // no absolute paths
    const none = await judgeOutputs(empty, alsoEmpty);
    expect(none).toMatchObject({ equal: false, compared: 0 });
    expect(none.differences[0]).toMatch(/nothing to compare/);
    const onlyMaps = tempDir('maps');
    writeTree(onlyMaps, { 'a.js.map': '{}' });
    expect((await judgeOutputs(onlyMaps, onlyMaps)).equal).toBe(false);
  });

  it('an unreadable file, a binary .js, invalid UTF-8 and a file that does not parse are differences with a reason', async () => {
    const a = tempDir('bad-a');
    const b = tempDir('bad-b');
    writeTree(a, { 'gone.js': 'export {};\n', 'bin.js': 'export const a = 1;\n', 'utf.d.ts': 'export declare const a: 1;\n', 'broken.js': 'export const a = (;\n' });
    writeTree(b, { 'broken.js': 'export const a = (;\n// changed\n' });
    symlinkSync(join(b, 'nowhere.js'), join(b, 'gone.js'));
    writeFileSync(join(b, 'bin.js'), Buffer.from([0x65, 0x78, 0x00, 0x01, 0xff]));
    writeFileSync(join(b, 'utf.d.ts'), Buffer.concat([Buffer.from('export declare const a: "'), Buffer.from([0xc3, 0x28]), Buffer.from('";\n')]));
    const r = await judgeOutputs(a, b);
    expect(r.equal).toBe(false);
    expect(r.compared).toBe(4);
    expect(r.differences).toEqual([
      'bin.js: B contains NUL bytes (binary); the files differ and cannot be judged by tokens',
      'broken.js: A does not parse (Expression expected. at 1:19); B does not parse (Expression expected. at 1:19); the files differ and cannot be judged by tokens',
      'gone.js: cannot be read (B: ENOENT)',
      'utf.d.ts: B is not valid UTF-8; the files differ and cannot be judged by tokens',
    ]);
    // Byte-identical files are equal whatever they hold: nothing is judged.
    expect(await judgeFile('broken.js', 'export const a = (;', 'export const a = (;')).toEqual([]);
  });
});

describe('judgeFile: normalisation rules (each one equates, and stops where meaning starts)', () => {
  const same = async (file: string, a: string, b: string) => expect(await judgeFile(file, a, b), `${a}  vs  ${b}`).toEqual([]);
  const differ = async (file: string, a: string, b: string) => {
    const d = await judgeFile(file, a, b);
    expect(d.length, `${a}  vs  ${b}: must differ`).toBeGreaterThan(0);
    return d;
  };

  it('string literals by value', async () => {
    await same('a.js', `export const a = 'x\\'y';`, `export const a = "x'y";`);
    await same('a.js', `export const a = '\\x41';`, `export const a = "A";`);
    await differ('a.js', `export const a = 'x';`, `export const a = 'y';`);
  });

  it('numeric and bigint literals by value', async () => {
    await same('a.js', 'export const a = 0x10 + 1_000 + 1.50 + 0b11n;', 'export const a = 16 + 1000 + 1.5 + 3n;');
    await differ('a.js', 'export const a = 0x10;', 'export const a = 0x11;');
    await differ('a.js', 'export const a = 1n;', 'export const a = 2n;');
  });

  it('templates and regular expressions raw (String.raw sees escapes)', async () => {
    await same('a.js', 'export const r = /a\\/b/g, t = `x${a}y`;', 'export const r = /a\\/b/g;\n'.replace(';\n', ', t = `x${ a }y`;'));
    await differ('a.js', 'export const t = String.raw`\\x41`;', 'export const t = String.raw`A`;');
    await differ('a.js', 'export const r = /a/g;', 'export const r = /a/i;');
    // Comment markers inside regular expressions, templates, strings and JSX text are not comments.
    await same('a.js', 'export const r = /\\/*x/g; // c', 'export const r = /\\/*x/g;');
    await differ('a.js', 'export const r = /\\/*x/g, t = `a // b ${r} /* c */`;', 'export const r = /\\/*y/g, t = `a // b ${r} /* c */`;');
    await differ('a.js', 'export const t = `a // b ${r} /* c */ d`;', 'export const t = `a // b ${r}  d`;');
    await differ('a.jsx', "export const x = <p>// not a comment, don't</p>;", "export const x = <p>// not a comment, do</p>;");
  });

  it('property keys: quoting and numeric spelling are spelling; a computed key is not a key', async () => {
    await same('a.js', `export const o = { 'a': 1, "b-c": 2, '1': 3, m() {} };`, `export const o = { a: 1, 'b-c': 2, 0x1: 3, 'm'() {} };`);
    await same('a.d.ts', `export interface I { 'a': string; "b-c"(): void }\n`, `export interface I { a: string; 'b-c'(): void }\n`);
    await differ('a.js', `export const o = { ['a']: 1 };`, `export const o = { b: 1 };`);
    await differ('a.js', `export const o = { a: 1 };`, `export const o = { b: 1 };`);
  });

  it('redundant parentheses, `new X`, arrow parameters, trailing commas, semicolons, empty statements', async () => {
    await same('a.js', 'export const a = (b + (c * d)), m = new Map, f = x => (x), l = [1, 2,];;\n;', 'export const a = b + c * d, m = new Map(), f = (x) => x, l = [1, 2]');
    await differ('a.js', 'export const a = (b + c) * d;', 'export const a = b + c * d;');
    await differ('a.js', 'export const l = [1, , ];', 'export const l = [1];'); // a hole is not a trailing comma
  });

  it('a leading `|` of a union type; re-indented JSDoc', async () => {
    await same('a.d.ts', 'export type A =\n  | "a"\n  | "b";\n', 'export type A = "a" | "b";\n');
    await same('a.d.ts', '/**\n * Hi.\n *   - item\n */\nexport declare const a: 1;\n', '    /**\n     * Hi.\n     *   - item\n     */\nexport declare const a: 1;\n');
    await differ('a.d.ts', 'export type A = "a" | "b";\n', 'export type A = "a" & "b";\n');
    await differ('a.d.ts', '/** Hi.\n * there */\nexport declare const a: 1;\n', '/** Hi. there */\nexport declare const a: 1;\n');
  });

  it('JSX: parentheses around an element, text whitespace as JSX produces it, empty expressions', async () => {
    await same('a.jsx', 'export const x = <p title="t">{/* c */}don\'t  stop</p>;', "export const x = (\n  <p title='t'>\n    don't  stop\n  </p>\n);");
    await differ('a.jsx', 'export const x = <p>a <b>b</b></p>;', 'export const x = <p>a<b>b</b></p>;');
    await differ('a.jsx', 'export const x = <p title="t" />;', 'export const x = <p title="u" />;');
  });

  it('the token rules also hold without the reprint (the fallback when prettier cannot print a file)', async () => {
    const asEmitted = async (file: string, a: string, b: string) => expect(await judgeFile(file, a, b, { reprint: false }), `${a}  vs  ${b}`).toEqual([]);
    await asEmitted('a.js', `export const o = { 'a': 1, "b": 2, '1': 3, m() {} };`, `export const o = { a: 1, b: 2, 0x1: 3, 'm'() {} };`);
    await asEmitted('a.d.ts', 'export type A =\n  | "a"\n  | "b";\n', 'export type A = "a" | "b";\n');
    await asEmitted('a.js', 'f();;\n;\nclass C { m() {}; }', 'f();\nclass C { m() {} }');
    expect(await judgeFile('a.js', 'if (a);\nf();', 'if (a)\nf();', { reprint: false })).not.toEqual([]); // `;` as a body is a statement
    await asEmitted('a.jsx', 'export const x = (\n  <p>\n    a\n    b\n  </p>\n);\n', 'export const x = <p>a b</p>;\n');
    expect(await judgeFile('a.jsx', 'export const x = <p>a b</p>;\n', 'export const x = <p>a  b</p>;\n', { reprint: false })).not.toEqual([]);
  });

  it('a JSDoc in a union member, on its own line on one side and inline on the other', async () => {
    await same('a.d.ts', 'export type A = {\n  /** d */\n  a: 1;\n} | {\n  b: 2;\n};\n', 'export type A = { /** d */ a: 1; } | { b: 2; };\n');
  });

  it('hoisted functions are a set in JavaScript, but two with one name keep their order; other statements are a sequence', async () => {
    await same('a.js', 'export function f() {}\nexport function g() {}\nf();', 'export function g() {}\nf();\nexport function f() {}');
    await differ('a.js', 'function f() { return 1; }\nfunction f() { return 2; }', 'function f() { return 2; }\nfunction f() { return 1; }');
    await differ('a.js', 'f();\ng();', 'g();\nf();');
    await differ('a.js', 'export class A {}\nexport class B {}', 'export class B {}\nexport class A {}');
  });

  it('in declaration files every statement is a set; same-named ones (overloads, merges) keep their order', async () => {
    await same('a.d.ts', 'export declare const a: 1;\nexport interface I {}\nexport declare class C {}\nimport "x";\n', 'import "x";\nexport declare class C {}\nexport interface I {}\nexport declare const a: 1;\n');
    await differ('a.d.ts', 'export declare function f(a: string): void;\nexport declare function f(a: number): void;\n', 'export declare function f(a: number): void;\nexport declare function f(a: string): void;\n');
    await differ('a.d.ts', 'declare module "m" { interface I { a(): void } }\ndeclare module "m" { interface I { b(): void } }\n', 'declare module "m" { interface I { b(): void } }\ndeclare module "m" { interface I { a(): void } }\n');
  });

  it('file-level directives stay in the header whatever statement comes first', async () => {
    await same('a.d.ts', '/// <reference types="node" />\nexport declare const a: 1;\nexport declare const b: 2;\n', '/// <reference types="node" />\nexport declare const b: 2;\nexport declare const a: 1;\n');
    await differ('a.d.ts', '/// <reference types="node" />\nexport declare const a: 1;\n', '/// <reference types="bun" />\nexport declare const a: 1;\n');
  });
});

describe('judgeFile: comments (a rule written for this judge)', () => {
  const kept: [string, string][] = [
    ['/*#__PURE__*/', 'export const a = /*#__PURE__*/ f();'],
    ['/*@__PURE__*/', 'export const a = /*@__PURE__*/ f();'],
    ['#__NO_SIDE_EFFECTS__', '/* #__NO_SIDE_EFFECTS__ */ export function f() {}'],
    ['a legal /*! comment', '/*! (c) kiln */\nexport const a = 1;'],
    ['@license', 'export const a = 1; /** @license MIT */\nexport const b = 2;'],
    ['@preserve', 'export const a = 1;\n/* @preserve keep me */\nexport const b = 2;'],
    ['webpackChunkName', 'export const m = import(/* webpackChunkName: "m" */ "./m.js");'],
    ['@vite-ignore', 'export const m = import(/* @vite-ignore */ u);'],
    ['/// <reference>', '/// <reference lib="dom" />\nexport const a = 1;'],
    ['/// <amd-module>', '/// <amd-module name="m" />\nexport const a = 1;'],
    ['@ts-ignore', 'export const a = 1;\n// @ts-ignore\nexport const b = a.b;'],
    ['@ts-expect-error', 'export const a = 1;\n// @ts-expect-error\nexport const b = a.b;'],
    ['@ts-nocheck', '// @ts-nocheck\nexport const a = 1;'],
    ['@jsxImportSource', '/** @jsxImportSource preact */\nexport const a = 1;'],
  ];
  it.each(kept)('%s is meaningful: adding or removing it is a difference', async (_label, withComment) => {
    const without = withComment.replace(/\/\*[^]*?\*\/ ?\n?|\/\/[^\n]*\n/g, '');
    expect(without).not.toBe(withComment);
    expect((await judgeFile('a.js', withComment, without)).length).toBeGreaterThan(0);
  });

  it.each([
    ['a line comment', 'export const a = 1; // note', 'export const a = 1;'],
    ['a block comment', 'export const a = /* note */ 1;', 'export const a = 1;'],
    ['JSDoc in JavaScript', '/** Doc. */\nexport function f() {}', 'export function f() {}'],
    ['a source map comment', 'export const a = 1;\n//# sourceMappingURL=a.js.map', 'export const a = 1;'],
    ['a comment spanning lines where ASI matters', 'export function f() { return /*\n*/ 1; }', 'export function f() { return\n 1; }'],
  ])('%s is not meaningful', async (_label, a, b) => {
    expect(await judgeFile('a.js', a, b)).toEqual([]);
  });

  it('a comment spanning lines keeps its line break (ASI): dropping it is not the same as deleting it', async () => {
    expect((await judgeFile('a.js', 'export function f() { return /*\n*/ 1; }', 'export function f() { return 1; }')).length).toBeGreaterThan(0);
  });

  it('statement boundaries are tokens: the same tokens split by ASI differently are a difference', async () => {
    // Each pair has the same token sequence; automatic semicolon insertion reads them differently.
    expect((await judgeFile('a.js', 'export function f() { return\n1; }', 'export function f() { return 1; }')).length).toBeGreaterThan(0);
    expect((await judgeFile('a.js', 'let a = 1, b = 2;\na\n++b;', 'let a = 1, b = 2;\na++\nb;')).length).toBeGreaterThan(0);
    expect((await judgeFile('a.js', 'export class C { async\nf() { return 1; } }', 'export class C { async f() { return 1; } }')).length).toBeGreaterThan(0);
    // …and where ASI and an explicit `;` read the same, so does the judge (without any reprint).
    expect(await judgeFile('a.js', 'f()\ng()\n', 'f();\ng();\n', { reprint: false })).toEqual([]);
    expect(await judgeFile('a.d.ts', 'export interface I { a: 1, b: 2 }\n', 'export interface I {\n  a: 1\n  b: 2\n}\n', { reprint: false })).toEqual([]);
  });

  it('JSDoc is documentation in declaration files, prose in JavaScript', () => {
    expect(meaningfulComment('/** Doc. */', false, true)).toBe('doc:Doc.');
    expect(meaningfulComment('/** Doc. */', false, false)).toBeUndefined();
    expect(meaningfulComment('/**/', false, true)).toBeUndefined();
  });
});
