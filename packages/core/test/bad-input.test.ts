/**
 * Issue 2, point 11 — bad input gets a coded diagnostic, never a crash or a hang, and the rest of the
 * tree is still digested:
 * - syntax errors: declarations outside the broken region keep the digests they have in the unbroken
 *   file; those overlapping it have semantic_digest null, are `degraded`, and diff as 'changed';
 * - invalid UTF-8 (KILN_INVALID_UTF8), a binary file named .ts (KILN_BINARY_FILE);
 * - a 10 MB file: KILN_FILE_TOO_LARGE under the default 8 MiB limit, digested when the limit is raised;
 * - 10 000-deep nesting (brackets, parens, arrows, blocks, …): KILN_NESTING_TOO_DEEP, the other
 *   declarations of the same file still digested, the same result on the calling thread and in workers;
 * - an empty file (KILN_EMPTY_FILE); a malformed package.json (KILN_MANIFEST_INVALID).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { diffReports, digestTree, type DigestReport, type DiagnosticCode } from '@kiln/core';
import { extractSlice } from '../dist/facts/extract.js';
import { DEFAULT_MAX_FILE_SIZE } from '../dist/parse/decode.js';

const temps: string[] = [];
async function tempDir(prefix = 'kiln-bad-'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

type Files = Record<string, string | Uint8Array>;
async function makeTree(files: Files, manifest: string | null = JSON.stringify({ name: 'bad-input', exports: './src/index.ts' })): Promise<string> {
  const root = await tempDir();
  if (manifest !== null) await writeFile(join(root, 'package.json'), manifest);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(root, rel, '..'), { recursive: true });
    await writeFile(join(root, rel), content);
  }
  return root;
}

const canonical = (r: DigestReport) => JSON.stringify({ ...r, stats: undefined });
const decl = (r: DigestReport, file: string, path: string) => r.declarations.find((d) => d.span.file === file && d.path === path);
const codesFor = (r: DigestReport, file: string) => r.diagnostics.filter((d) => d.file === file).map((d) => d.code);

/** Digest on the calling thread and in workers; both must finish and agree byte for byte. */
async function digestBothWays(root: string, options: { maxFileSize?: number } = {}): Promise<DigestReport> {
  const onThread = await digestTree(root, { store: false, workers: 0, ...options });
  const inWorkers = await digestTree(root, { store: false, workers: 2, ...options });
  expect(inWorkers.stats.workers).toBeGreaterThan(0);
  expect(canonical(inWorkers)).toBe(canonical(onThread));
  return onThread;
}

const GOOD = {
  'src/index.ts': `export { helper } from './helper';\nexport function main(n: number) { return n + 1; }\n`,
  'src/helper.ts': `/** Help. */\nexport function helper(s: string) { const t = s.trim(); return t.length; }\n`,
};

// ------------------------------------------------------------------ syntax errors

const PROLOGUE = `import { dep } from './dep';
export function before(a: number) { return a + dep; }
export class Keep { private n = 1; m() { return before(this.n); } }
`;
const EPILOGUE = `
export const after = () => { const inner = (y: number) => y * 2; return inner(3); };
export function trailing() { function nested() { return 1; } return nested(); }
export interface Shape { a: string; b?: number }
`;
const UNBROKEN = 'export function broken(x: number) { return x + 1; }';
const BROKEN: Record<string, string> = {
  'missing operand': 'export function broken(x: number) { return x + ; }',
  'stray character': 'export function broken(x: number) { return x # 1; }',
  'missing parenthesis': 'export function broken(x: number) { if (x > 1 { return x; } return 0; }',
  'keyword as operand': 'export function broken(x: number) { return x + const; }',
};
const OUTSIDE = ['before', 'Keep', 'Keep.n', 'Keep.m', 'after', 'trailing', 'trailing.nested', 'Shape'];

describe('syntax errors', () => {
  it.each(Object.entries(BROKEN))('%s: only the overlapping declaration loses its digest, and it diffs as changed', async (_name, broken) => {
    const good = await makeTree({ 'src/mod.ts': PROLOGUE + UNBROKEN + EPILOGUE });
    const bad = await makeTree({ 'src/mod.ts': PROLOGUE + broken + EPILOGUE });
    const before = await digestBothWays(good);
    const after = await digestBothWays(bad);
    expect(before.diagnostics).toEqual([]);

    // Coded, located at the broken line.
    const syntax = after.diagnostics.filter((d) => d.code === 'KILN_SYNTAX_ERROR');
    expect(syntax.length).toBeGreaterThan(0);
    for (const d of syntax) expect(d).toMatchObject({ file: 'src/mod.ts', line: 4, severity: 'warning', producer: 'extract' });

    // Outside the broken region: the digests of the unbroken file.
    for (const path of OUTSIDE) {
      const b = decl(before, 'src/mod.ts', path);
      const a = decl(after, 'src/mod.ts', path);
      expect(b, path).toBeDefined();
      expect(a, path).toBeDefined();
      expect(a!.semantic_digest, path).not.toBeNull();
      expect(a!.semantic_digest, path).toBe(b!.semantic_digest);
      expect(a!.doc_digest, path).toBe(b!.doc_digest);
      expect(a!.degraded, path).toBeUndefined();
    }
    // Overlapping it: no digest, degraded.
    const hit = decl(after, 'src/mod.ts', 'broken')!;
    expect(hit).toBeDefined();
    expect(hit.semantic_digest).toBeNull();
    expect(hit.degraded).toBe('syntax-error');

    // diffReports: the broken declaration is changed in both directions, and even against itself;
    // everything else is unchanged.
    for (const [x, y] of [
      [before, after],
      [after, before],
      [after, after],
    ] as const) {
      const diff = diffReports(x, y);
      const status = Object.fromEntries(diff.declarations.map((c) => [c.identity.replace(/^.*#/, ''), c.status]));
      expect(status['broken:function']).toBe('changed');
      for (const path of OUTSIDE) expect(Object.entries(status).find(([k]) => k.startsWith(`${path}:`))?.[1], path).toBe('unchanged');
    }
  });

  it('a JavaScript file with a syntax error: same rule', async () => {
    const js = (body: string) => `export function a() { return 1; }\nexport function b(x) { ${body} }\nexport class C { m() { return a(); } }\n`;
    const before = await digestBothWays(await makeTree({ 'src/m.js': js('return x * 2;') }));
    const after = await digestBothWays(await makeTree({ 'src/m.js': js('return x * ;') }));
    expect(codesFor(after, 'src/m.js')).toContain('KILN_SYNTAX_ERROR');
    expect(decl(after, 'src/m.js', 'b')!.semantic_digest).toBeNull();
    for (const p of ['a', 'C', 'C.m']) expect(decl(after, 'src/m.js', p)!.semantic_digest).toBe(decl(before, 'src/m.js', p)!.semantic_digest);
  });
});

// ------------------------------------------------------------------ undecodable files

describe('files that are not UTF-8 source text', () => {
  const latin1 = Buffer.concat([Buffer.from('export const cafe = "caf'), Buffer.from([0xe9]), Buffer.from('";\n')]);
  const surrogate = Buffer.concat([Buffer.from('export const s = "'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('";\n')]);
  const truncatedSeq = Buffer.concat([Buffer.from('export const t = 1;\n// '), Buffer.from([0xe2, 0x82])]);
  const utf16 = Buffer.from('\ufeffexport const wide = 1;\n', 'utf16le');
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]), Buffer.alloc(256, 7)]);
  const bomUtf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('export const bom = 1;\n')]);

  it.each([
    ['latin-1 byte', 'src/latin1.ts', latin1, 'KILN_INVALID_UTF8'],
    ['encoded surrogate', 'src/surrogate.ts', surrogate, 'KILN_INVALID_UTF8'],
    ['truncated sequence at end of file', 'src/truncated.ts', truncatedSeq, 'KILN_INVALID_UTF8'],
    ['UTF-16 text', 'src/utf16.ts', utf16, 'KILN_BINARY_FILE'],
    ['an image named .ts', 'src/image.ts', png, 'KILN_BINARY_FILE'],
  ] as const)('%s → %s, the rest digested', async (_name, rel, bytes, code) => {
    const root = await makeTree({ ...GOOD, [rel]: bytes, 'src/bom.ts': bomUtf8 });
    const r = await digestBothWays(root);
    expect(codesFor(r, rel)).toEqual([code]);
    expect(r.diagnostics.find((d) => d.file === rel)).toMatchObject({ severity: 'warning' });
    // The file is in the report (its module is digested by raw content), with no declarations.
    const f = r.files.find((x) => x.path === rel)!;
    expect(f).toBeDefined();
    expect(f.module.degraded).toBe('unreadable');
    expect(r.declarations.filter((d) => d.span.file === rel)).toEqual([]);
    // Everything else, including a valid UTF-8 file with a BOM, is digested.
    expect(codesFor(r, 'src/bom.ts')).toEqual([]);
    for (const [file, path] of [
      ['src/index.ts', 'main'],
      ['src/helper.ts', 'helper'],
      ['src/bom.ts', 'bom'],
    ]) {
      expect(decl(r, file!, path!)?.semantic_digest, path).toMatch(/^[0-9a-f]+$/);
    }
  });

  it('a raw-content module still changes when its bytes change', async () => {
    const a = await digestTree(await makeTree({ 'src/x.ts': latin1 }), { store: false, workers: 0 });
    const b = await digestTree(await makeTree({ 'src/x.ts': Buffer.concat([latin1, Buffer.from('\n')]) }), { store: false, workers: 0 });
    const diff = diffReports(a, b);
    expect(diff.modules.find((m) => m.module.endsWith('src/x'))!.status).toBe('changed');
  });
});

// ------------------------------------------------------------------ size

describe('a 10 MB file', () => {
  /** 10 MB that parses fast: real declarations around one very long string and one long comment. */
  function bigFile(): string {
    const decls = Array.from({ length: 500 }, (_, i) => `export function f${i}(x: number) { return x + ${i}; }\n`).join('');
    const pad = 10_000_000 - decls.length;
    return `${decls}/* ${'c'.repeat(Math.floor(pad / 2))} */\nexport const blob = "${'b'.repeat(Math.ceil(pad / 2))}";\nexport function last() { return 1; }\n`;
  }

  it('is KILN_FILE_TOO_LARGE under the default 8 MiB limit; the rest of the tree is digested', async () => {
    const text = bigFile();
    expect(Buffer.byteLength(text)).toBeGreaterThan(DEFAULT_MAX_FILE_SIZE);
    const root = await makeTree({ ...GOOD, 'src/big.ts': text });
    const r = await digestBothWays(root);
    expect(codesFor(r, 'src/big.ts')).toEqual(['KILN_FILE_TOO_LARGE']);
    expect(r.files.find((f) => f.path === 'src/big.ts')!.module.degraded).toBe('unreadable');
    expect(decl(r, 'src/index.ts', 'main')!.semantic_digest).not.toBeNull();
    expect(decl(r, 'src/helper.ts', 'helper')!.semantic_digest).not.toBeNull();
  });

  it('is digested when the limit is raised, in reasonable time', async () => {
    const root = await makeTree({ ...GOOD, 'src/big.ts': bigFile() });
    const t0 = performance.now();
    for (const workers of [0, 1]) {
      const r = await digestTree(root, { store: false, workers, maxFileSize: 16 * 1024 * 1024 });
      expect(r.diagnostics).toEqual([]);
      const big = r.declarations.filter((d) => d.span.file === 'src/big.ts');
      expect(big.length).toBe(502);
      expect(big.every((d) => d.semantic_digest !== null)).toBe(true);
      expect(decl(r, 'src/big.ts', 'blob')!.span.startLine).toBe(502);
    }
    expect(performance.now() - t0).toBeLessThan(60_000);
  });
});

// ------------------------------------------------------------------ nesting

const N = 10_000;
const DEEP: Record<string, string> = {
  brackets: `export const deep = ${'['.repeat(N)}${']'.repeat(N)};`,
  parens: `export const deep = ${'('.repeat(N)}1${')'.repeat(N)};`,
  arrows: `export const deep = ${'() => '.repeat(N)}1;`,
  'parenthesised arrows': `export const deep = ${'(() => '.repeat(N)}1${')'.repeat(N)};`,
  blocks: `export function deep() ${'{'.repeat(N)}${'}'.repeat(N)}`,
  'if blocks': `export function deep(a: boolean) {${'if (a) {'.repeat(N)}${'}'.repeat(N)}}`,
  objects: `export const deep = ${'{ a: '.repeat(N)}1${' }'.repeat(N)};`,
  calls: `export const deep = ${'f('.repeat(N)}${')'.repeat(N)};`,
  'template literals': `export const deep = ${'`${'.repeat(N)}1${'}`'.repeat(N)};`,
  'type arguments': `export type deep = ${'Array<'.repeat(N)}number${'>'.repeat(N)};`,
  'conditional chain': `export const deep = ${'a ? b : '.repeat(N)}c;`,
  'nested functions': `export const deep = ${'function () { return '.repeat(N)}1${' }'.repeat(N)};`,
  'binary chain': `export const deep = ${'1 + '.repeat(N)}1;`,
  'class expressions': `export const deep = ${'class { m() { return '.repeat(N / 4)}1${' } }'.repeat(N / 4)};`,
};
const NEIGHBOURS = `export function first(a: number) { const g = (b: number) => b + 1; return g(a); }\n`;
const TRAILER = `\nexport class Last { run() { return first(2); } }\nexport const tail = [1, [2, [3]]];\n`;

describe('10 000-deep nesting', () => {
  it.each(Object.entries(DEEP))('%s → KILN_NESTING_TOO_DEEP; the other declarations are digested; thread = workers', async (_name, deep) => {
    const control = await digestTree(await makeTree({ 'src/m.ts': NEIGHBOURS + TRAILER }), { store: false, workers: 0 });
    const root = await makeTree({ 'src/m.ts': NEIGHBOURS + deep + TRAILER, ...GOOD });
    const r = await digestBothWays(root);
    expect(codesFor(r, 'src/m.ts')).toEqual(['KILN_NESTING_TOO_DEEP']);
    const d = decl(r, 'src/m.ts', 'deep')!;
    expect(d).toBeDefined();
    expect(d.semantic_digest).toBeNull();
    expect(d.degraded).toBe('too-deep');
    for (const p of ['first', 'Last', 'Last.run', 'tail']) {
      const got = decl(r, 'src/m.ts', p);
      expect(got, p).toBeDefined();
      expect(got!.semantic_digest, p).toBe(decl(control, 'src/m.ts', p)!.semantic_digest);
    }
    expect(decl(r, 'src/index.ts', 'main')!.semantic_digest).not.toBeNull();
    // A too-deep declaration is always changed, even against itself.
    const diff = diffReports(r, r);
    expect(diff.declarations.find((c) => c.identity.endsWith('#deep:' + d.kind))!.status).toBe('changed');
  });

  it('extractSlice gives the same slice on the calling thread as in a worker for every deep input', async () => {
    const { Worker } = await import('node:worker_threads');
    const { createRequire } = await import('node:module');
    // extractSlice's module in the built package (not on the public entry).
    const entry = join(createRequire(import.meta.url).resolve('@kiln/core'), '../facts/extract.js');
    const texts = Object.values(DEEP).map((d) => NEIGHBOURS + d + TRAILER);
    const here = texts.map((t) => JSON.stringify(extractSlice(Buffer.from(t), 'ts')));
    for (const stackSizeMb of [2, 16]) {
      const w = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         import(${JSON.stringify(pathToFileURL(entry).href)}).then(({ extractSlice }) =>
           parentPort.postMessage(workerData.map((t) => JSON.stringify(extractSlice(Buffer.from(t), 'ts')))));`,
        { eval: true, workerData: texts, resourceLimits: { stackSizeMb } },
      );
      const there = await new Promise<string[]>((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
      await w.terminate();
      expect(there).toEqual(here);
    }
  });

  it('nesting just below the limit is digested normally', async () => {
    const r = extractSlice(Buffer.from(`export const shallow = ${'['.repeat(100)}${']'.repeat(100)};\n`), 'ts');
    expect(r.diagnostics).toEqual([]);
    expect(r.decls[0]!.semantic).not.toBeNull();
  });
});

// ------------------------------------------------------------------ empty files, manifests

describe('empty files and malformed manifests', () => {
  it.each([
    ['empty', ''],
    ['whitespace only', '  \n\n\t\n'],
  ])('%s file → KILN_EMPTY_FILE, the rest digested', async (_name, text) => {
    const r = await digestBothWays(await makeTree({ ...GOOD, 'src/empty.ts': text }));
    expect(codesFor(r, 'src/empty.ts')).toEqual(['KILN_EMPTY_FILE']);
    expect(r.diagnostics.find((d) => d.file === 'src/empty.ts')!.severity).toBe('info');
    expect(r.files.find((f) => f.path === 'src/empty.ts')).toBeDefined();
    expect(decl(r, 'src/index.ts', 'main')!.semantic_digest).not.toBeNull();
  });

  it.each([
    ['trailing comma', '{ "name": "broken-manifest", }'],
    ['truncated', '{ "name": "broken-manifest", "exports": {'],
    ['not an object', '[1, 2, 3]'],
    ['empty', ''],
  ])('package.json %s → KILN_MANIFEST_INVALID, sources still digested', async (_name, manifest) => {
    const r = await digestBothWays(await makeTree(GOOD, manifest));
    const d = r.diagnostics.filter((x) => x.code === 'KILN_MANIFEST_INVALID');
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ file: 'package.json', severity: 'warning' });
    expect(r.package).toBe('(unnamed)');
    expect(decl(r, 'src/index.ts', 'main')!.semantic_digest).not.toBeNull();
    expect(decl(r, 'src/helper.ts', 'helper')!.semantic_digest).not.toBeNull();
  });
});

// ------------------------------------------------------------------ all at once

describe('every kind of bad input in one tree', () => {
  it('each file gets its code, the good files their digests, on the calling thread and in workers', async () => {
    const files: Files = {
      ...GOOD,
      'src/syntax.ts': PROLOGUE + BROKEN['missing operand'] + EPILOGUE,
      'src/latin1.ts': Buffer.from([0x65, 0x78, 0x70, 0x6f, 0x72, 0x74, 0x20, 0xe9, 0x0a]),
      'src/binary.ts': Buffer.from([0, 1, 2, 3, 0, 0, 0xff, 0xfe]),
      'src/empty.ts': '',
      'src/deep.ts': NEIGHBOURS + DEEP.brackets + TRAILER,
      'src/deep-arrows.ts': NEIGHBOURS + DEEP.arrows + TRAILER,
    };
    const clean = await digestTree(await makeTree(GOOD), { store: false, workers: 0 });
    const r = await digestBothWays(await makeTree(files, '{ "name": "x", '));
    const expected: Record<string, DiagnosticCode> = {
      'package.json': 'KILN_MANIFEST_INVALID',
      'src/syntax.ts': 'KILN_SYNTAX_ERROR',
      'src/latin1.ts': 'KILN_INVALID_UTF8',
      'src/binary.ts': 'KILN_BINARY_FILE',
      'src/empty.ts': 'KILN_EMPTY_FILE',
      'src/deep.ts': 'KILN_NESTING_TOO_DEEP',
      'src/deep-arrows.ts': 'KILN_NESTING_TOO_DEEP',
    };
    for (const [file, code] of Object.entries(expected)) expect(codesFor(r, file), file).toContain(code);
    expect(r.files.map((f) => f.path).sort()).toEqual(Object.keys(files).sort());
    for (const d of clean.declarations) {
      const got = decl(r, d.span.file, d.path);
      expect(got?.semantic_digest, d.path).toBe(d.semantic_digest);
    }
  });
});
