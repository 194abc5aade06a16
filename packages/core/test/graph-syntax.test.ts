/**
 * Issue 4 points 3 and 9 — the tolerant export from syntax alone (`mode: 'allow-errors', syntax:
 * true`; `kiln graph export --allow-errors` without `--check`): no program is built, so nothing may
 * claim the checker. Every source fact is `syntax_inferred`; references are per module-level
 * declaration, resolved from kiln's slices (same module, relative imports through export chains,
 * imports the compiler's module resolution or kiln's resolves into another workspace package); no
 * call or reference sites, no calls edges. Records validate against the schema, are deterministic
 * (twice, at another path, store off/cold/warm, other packages' slices from the store or extracted)
 * and hold no absolute path. A project with type errors is exported without compiler diagnostics.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import AjvModule from 'ajv/dist/2020.js';
import { exportGraph, graphSchema, graphText, type GraphExportResult } from '@kiln/core';
import type { KnownRecord } from '../dist/graph/records.js';
import { ALIAS_MONOREPO, GEO, NPM_WORKSPACE, writeTree } from './lib/graph-fixtures.js';

let tmp: string;
let geo: string;
let syntax: GraphExportResult;
let checked: GraphExportResult;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-graph-syntax-'));
  geo = await writeTree(join(tmp, 'geo'), GEO);
  syntax = await exportGraph(geo, { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
  checked = await exportGraph(geo, { store: false, workers: 0 });
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

const P = 'typescript:@fx/geo//src';
type EdgeRecord = KnownRecord & { from: string; to: string; count?: number; type_only?: boolean };
const edge = (records: KnownRecord[], kind: string, from: string, to: string) =>
  records.find((r) => r.kind === kind && 'from' in r && r.from === from && r.to === to) as EdgeRecord | undefined;
const Ajv = AjvModule as unknown as { default: new (o: object) => { compile: (s: object) => ((d: unknown) => boolean) & { errors?: unknown } } };
const validate = new Ajv.default({ allErrors: true, strict: true }).compile(graphSchema());

function expectSyntaxOnly(records: KnownRecord[]): void {
  for (const r of records) {
    expect(validate(r), `${JSON.stringify(r)}\n${JSON.stringify(validate.errors)}`).toBe(true);
    if (r.kind === 'header' || r.provenance === 'manifest_declared') continue;
    expect(r.provenance, r.id).toBe('syntax_inferred');
  }
  expect(records.some((r) => r.kind === 'reference' || r.kind === 'call' || r.kind === 'calls' || r.kind === 'documents')).toBe(false);
}

describe('tolerant export from syntax', () => {
  it('validates against the schema; no fact claims the checker; the header and a diagnostic record say so', () => {
    expect(syntax.ok).toBe(true);
    expectSyntaxOnly(syntax.records);
    expect(syntax.records[0]).toMatchObject({ kind: 'header', mode: 'allow-errors', tsconfig: 'tsconfig.json', package: '@fx/geo' });
    const unchecked = syntax.records.find((r) => r.kind === 'diagnostic' && r.code === 'KILN_GRAPH_UNCHECKED');
    expect(unchecked).toMatchObject({ provenance: 'syntax_inferred', severity: 'warning', message: expect.stringMatching(/^tolerant export from syntax alone/) });
    expect(syntax.diagnostics.map((d) => d.code)).toContain('KILN_GRAPH_UNCHECKED');
  });

  it('references per module-level declaration, resolved through imports and export chains; type_only only when certain', () => {
    const r = syntax.records;
    // Circle.area calls double and reads PI2: mentions of the class, resolved through `./math.js`.
    expect(edge(r, 'references', `${P}/shapes#Circle:class`, `${P}/math#double:function`)).toMatchObject({ provenance: 'syntax_inferred', type_only: false, count: 1 });
    expect(edge(r, 'references', `${P}/shapes#Circle:class`, `${P}/math#PI2:variable`)).toMatchObject({ type_only: false });
    // A type-only import of an interface, and a same-module interface: certainly type-only.
    expect(edge(r, 'references', `${P}/shapes#Circle:class`, `${P}/types#Named:interface`)).toMatchObject({ type_only: true });
    expect(edge(r, 'references', `${P}/shapes#unit:function`, `${P}/shapes#Shape:interface`)).toMatchObject({ type_only: true });
    expect(edge(r, 'references', `${P}/shapes#unit:function`, `${P}/shapes#Circle:class`)).toMatchObject({ type_only: false });
    // An overloaded function: the name means its implementation (the last of its declarations).
    const fmt = r.filter((x) => x.kind === 'references' && x.from === `${P}/shapes#Circle:class` && x.to.startsWith(`${P}/math#fmt`));
    const fmtDecls = r.filter((x) => x.kind === 'declaration' && x.id.startsWith(`${P}/math#fmt`)) as Extract<KnownRecord, { kind: 'declaration' }>[];
    expect(fmtDecls.length).toBe(3);
    const last = fmtDecls.reduce((a, b) => (b.span!.startLine > a.span!.startLine ? b : a));
    expect(fmt.map((x) => (x as EdgeRecord).to)).toEqual([last.id]);
    // Top-level statements belong to no declaration: `registry.set('unit', unit()…)` is not registry's.
    expect(edge(r, 'references', `${P}/index#registry:variable`, `${P}/shapes#unit:function`)).toBeUndefined();
    // A file outside the tsconfig is still read (test/ imports through ../src/index.js and its `export *`).
    expect(edge(r, 'references', 'typescript:@fx/geo//test/geo.test#checked:variable', `${P}/shapes#unit:function`)).toMatchObject({ provenance: 'syntax_inferred' });
    // No self edges; no library names.
    expect(r.some((x) => x.kind === 'references' && x.from === x.to)).toBe(false);
    expect(r.some((x) => x.kind === 'references' && /Math|String|Map/.test(x.to.split('#')[1] ?? ''))).toBe(false);
  });

  it('every syntax reference between module-level declarations is one the checker also finds on a clean project', () => {
    const decls = new Map(checked.records.filter((x) => x.kind === 'declaration').map((d) => [d.id, d as Extract<KnownRecord, { kind: 'declaration' }>]));
    const top = (id: string): string => {
      let d = decls.get(id);
      while (d?.parent) d = decls.get(d.parent);
      return d?.id ?? id;
    };
    // Compared by name: a call of an overloaded function resolves to the overload the checker picked.
    const unsig = (id: string) => id.replace(/~[0-9a-f]+:/, ':');
    const fromChecker = new Set<string>();
    for (const e of checked.records) if ((e.kind === 'references' || e.kind === 'calls') && decls.has(e.from)) fromChecker.add(`${top(e.from)} ${unsig(top(e.to))}`);
    const inProgram = new Set(checked.records.filter((x) => x.kind === 'file' && x.provenance === 'compiler_checked').map((x) => (x as { path: string }).path));
    const fromSyntax = syntax.records.filter((e): e is EdgeRecord => e.kind === 'references' && inProgram.has(decls.get(e.from)?.span?.file ?? ''));
    expect(fromSyntax.length).toBeGreaterThan(5);
    for (const e of fromSyntax) expect(fromChecker, `${e.from} -> ${e.to}`).toContain(`${e.from} ${unsig(top(e.to))}`);
  });

  it('files, modules, declarations, imports and exports are those of the checked graph, with the syntax tier', () => {
    const ids = (res: GraphExportResult, kinds: string[]) => res.records.filter((x) => kinds.includes(x.kind)).map((x) => x.id).sort();
    const kinds = ['file', 'module', 'declaration', 'import', 'export', 'namespace', 'package'];
    expect(ids(syntax, kinds)).toEqual(ids(checked, kinds));
    // Imports: the compiler's module resolution without a program, with the file's (syntax) tier.
    expect(syntax.records.find((x) => x.id === `${P}/shapes#import:./math.js`)).toMatchObject({ target: `${P}/math`, resolved_by: 'compiler', provenance: 'syntax_inferred' });
    expect(edge(syntax.records, 'imports', `${P}/shapes`, `${P}/types`)).toMatchObject({ type_only: true, provenance: 'syntax_inferred' });
    const decl = (res: GraphExportResult) => res.records.find((x) => x.id === `${P}/shapes#Circle:class`) as Record<string, unknown>;
    const { provenance: _a, ...fromSyntax } = decl(syntax);
    const { provenance: _b, ...fromChecker } = decl(checked);
    expect(fromSyntax).toEqual(fromChecker);
  });

  it('deterministic: twice, at another absolute path, store off, cold and warm; no absolute path', async () => {
    const text = graphText(syntax);
    expect(graphText(await exportGraph(geo, { mode: 'allow-errors', syntax: true, store: false, workers: 0 }))).toBe(text);
    const elsewhere = join(tmp, 'x', 'y', 'geo');
    await mkdir(join(elsewhere, '..'), { recursive: true });
    await cp(geo, elsewhere, { recursive: true });
    expect(graphText(await exportGraph(elsewhere, { mode: 'allow-errors', syntax: true, store: false, workers: 0 }))).toBe(text);
    const store = join(tmp, 'store');
    expect(graphText(await exportGraph(geo, { mode: 'allow-errors', syntax: true, store, workers: 1 }))).toBe(text);
    expect(graphText(await exportGraph(geo, { mode: 'allow-errors', syntax: true, store, workers: 1 }))).toBe(text);
    expect(text).not.toContain(geo);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain(resolve(__dirname, '../../..'));
  });

  it('is a tolerant export: asking checked mode for it is a usage error', async () => {
    await expect(exportGraph(geo, { syntax: true, store: false, workers: 0 })).rejects.toMatchObject({ code: 'KILN_USAGE' });
  });

  it('a project with a type error is exported whole, without compiler diagnostics; a syntax error still yields its records', async () => {
    const dir = join(tmp, 'broken');
    await cp(geo, dir, { recursive: true });
    await writeFile(join(dir, 'src/types.ts'), "export interface Named {\n  name: string;\n}\nexport const n: number = 'x';\n");
    await writeFile(join(dir, 'src/bad.ts'), 'export function fine() {\n  return 1;\n}\nexport function bad( {\n  return ;;; ((\n}\n');
    const r = await exportGraph(dir, { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
    expect(r.ok).toBe(true);
    expectSyntaxOnly(r.records);
    const diags = r.records.filter((x): x is Extract<KnownRecord, { kind: 'diagnostic' }> => x.kind === 'diagnostic');
    expect(diags.some((d) => d.code === 'KILN_TYPESCRIPT_ERROR')).toBe(false);
    expect(diags.find((d) => d.code === 'KILN_SYNTAX_ERROR')).toMatchObject({ file: 'src/bad.ts', producer: 'extract' });
    expect(r.records.find((x) => x.id === `${P}/types#n:variable`)).toMatchObject({ kind: 'declaration', provenance: 'syntax_inferred', degraded: false });
    expect(r.records.find((x) => x.id === `${P}/bad#fine:function`)).toMatchObject({ kind: 'declaration' });
    // A module that does not parse gets no references (as with the checker).
    expect(r.records.some((x) => x.kind === 'references' && x.from.startsWith(`${P}/bad#`))).toBe(false);
    expect(edge(r.records, 'references', `${P}/shapes#Circle:class`, `${P}/types#Named:interface`)).toBeDefined();
  });
});

describe('tolerant export from syntax, across packages', () => {
  it('an alias-only monorepo: the import resolves through tsconfig paths (no program) and references reach the other package', async () => {
    const mono = await writeTree(join(tmp, 'alias'), ALIAS_MONOREPO);
    const r = await exportGraph(join(mono, 'packages/b'), { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
    expectSyntaxOnly(r.records);
    expect(r.records.find((x) => x.id === 'typescript:@mono/b//src/main#import:@alias/a')).toMatchObject({ target: 'typescript:@mono/a//src/index', resolved_by: 'compiler', provenance: 'syntax_inferred' });
    expect(edge(r.records, 'references', 'typescript:@mono/b//src/main#hello:variable', 'typescript:@mono/a//src/index#greet:function')).toMatchObject({ provenance: 'syntax_inferred', type_only: false });
    expect(edge(r.records, 'references', 'typescript:@mono/b//src/main#loud:variable', 'typescript:@mono/a//src/index#GREETING:variable')).toBeDefined();
    expect(graphText(r)).not.toContain(mono);
  });

  it('an npm workspace without links: kiln resolves the package by name and follows its export chains; the store changes nothing', async () => {
    const ws = await writeTree(join(tmp, 'ws'), {
      ...NPM_WORKSPACE,
      'packages/a/src/index.ts': "export * from './greet.js';\nexport type { Greeting } from './types.js';\n",
      'packages/a/src/greet.ts': "import type { Greeting } from './types.js';\nexport function greet(name: string): Greeting {\n  return `hello ${name}`;\n}\n",
      'packages/a/src/types.ts': 'export type Greeting = string;\n',
      'packages/b/src/main.ts': "import { greet, type Greeting } from '@ws/a';\n\nexport const hello: Greeting = greet('b');\n",
    });
    const b = join(ws, 'packages/b');
    const r = await exportGraph(b, { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
    expectSyntaxOnly(r.records);
    expect(r.records.find((x) => x.id === 'typescript:@ws/b//src/main#import:@ws/a')).toMatchObject({ target: 'typescript:@ws/a//src/index', resolved_by: 'kiln' });
    expect(edge(r.records, 'references', 'typescript:@ws/b//src/main#hello:variable', 'typescript:@ws/a//src/greet#greet:function')).toMatchObject({ type_only: false });
    expect(edge(r.records, 'references', 'typescript:@ws/b//src/main#hello:variable', 'typescript:@ws/a//src/types#Greeting:type')).toMatchObject({ type_only: true });
    // a's slices from the store (a exported first) or extracted here: the same bytes.
    const store = join(tmp, 'ws-store');
    await exportGraph(join(ws, 'packages/a'), { mode: 'allow-errors', syntax: true, store, workers: 0 });
    expect(graphText(await exportGraph(b, { mode: 'allow-errors', syntax: true, store, workers: 0 }))).toBe(graphText(r));
    // Linked as npm does: the compiler's resolution finds it; the same references.
    await mkdir(join(ws, 'node_modules/@ws'), { recursive: true });
    await symlink(join(ws, 'packages/a'), join(ws, 'node_modules/@ws/a'), 'dir');
    const linked = await exportGraph(b, { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
    expect(linked.records.find((x) => x.id === 'typescript:@ws/b//src/main#import:@ws/a')).toMatchObject({ resolved_by: 'compiler' });
    const refs = (res: GraphExportResult) => res.records.filter((x) => x.kind === 'references').map((x) => x.id);
    expect(refs(linked)).toEqual(refs(r));
  });
});
