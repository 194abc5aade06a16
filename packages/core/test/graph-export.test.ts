/**
 * Issue 4 points 2 (export half), 3 and 10 (graph part) — `exportGraph` on real files with the real
 * TypeScript compiler: deterministic bytes (twice, at two absolute paths, store cold/warm/off, no
 * absolute path anywhere); checked mode resolves calls and references through imports to the right
 * declaration identities, and refuses a project with a type error (coded); tolerant mode on the same
 * project records the diagnostics and no reference or call for the broken module while keeping its
 * file, module and declarations; a file with a syntax error still yields its records; a monorepo whose
 * packages see each other only through a tsconfig `paths` alias, and an npm workspace importing by
 * package name (`exports`), get their import edges.
 */
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportGraph, formatModuleText, formatSummaryText, graphSummary, graphText, moduleView, type GraphExportResult } from '@kiln/core';
import { formatEnvelopeText, readEnvelope } from '../dist/diagnostics/envelope.js';
import { GraphIndex } from '../dist/graph/query/graph-index.js';
import type { QueryHeader, QueryRecord } from '../dist/graph/query/model.js';
import { readGraph } from '../dist/graph/read.js';
import type { KnownRecord } from '../dist/graph/records.js';
import { ALIAS_MONOREPO, GEO, NPM_WORKSPACE, writeTree } from './lib/graph-fixtures.js';

let tmp: string;
let geo: string;
let checked: GraphExportResult;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-graph-export-'));
  geo = await writeTree(join(tmp, 'geo'), GEO);
  checked = await exportGraph(geo, { store: false, workers: 0 });
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

const P = 'typescript:@fx/geo//src';
const byKind = <K extends KnownRecord['kind']>(records: KnownRecord[], kind: K) => records.filter((r): r is Extract<KnownRecord, { kind: K }> => r.kind === kind);
const edge = (records: KnownRecord[], kind: string, from: string, to: string) =>
  records.find((r) => r.kind === kind && 'from' in r && r.from === from && r.to === to) as (KnownRecord & { from: string; to: string; count?: number }) | undefined;

async function copyOf(name: string, edit?: (dir: string) => Promise<void>): Promise<string> {
  const dir = join(tmp, name);
  await cp(geo, dir, { recursive: true });
  await edit?.(dir);
  return dir;
}

describe('exportGraph: determinism', () => {
  it('the same inputs give byte-identical JSONL: twice, at two absolute paths, store off, cold and warm', async () => {
    const text = graphText(checked);
    expect(checked.ok).toBe(true);
    expect(graphText(await exportGraph(geo, { store: false, workers: 0 }))).toBe(text);
    const elsewhere = join(tmp, 'x', 'deeper', 'path', 'geo');
    await mkdir(join(elsewhere, '..'), { recursive: true });
    await cp(geo, elsewhere, { recursive: true });
    expect(graphText(await exportGraph(elsewhere, { store: false, workers: 0 }))).toBe(text);
    const store = join(tmp, 'store');
    const cold = await exportGraph(geo, { store, workers: 1 });
    const warm = await exportGraph(geo, { store, workers: 1 });
    expect(graphText(cold)).toBe(text);
    expect(graphText(warm)).toBe(text);
    // From a subdirectory: the package root is found, the graph is the package's.
    expect(graphText(await exportGraph(join(geo, 'src'), { store: false, workers: 0 }))).toBe(text);
  });

  it('a corrupted store is reported (not in the graph) and the slices rebuilt: the same bytes', async () => {
    const store = join(tmp, 'store-corrupt');
    await exportGraph(geo, { store, workers: 0 });
    const damaged: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (p.includes('content-v2')) {
          await chmod(p, 0o644);
          await writeFile(p, Buffer.alloc((await stat(p)).size, 0x7b));
          damaged.push(p);
        }
      }
    };
    await walk(store);
    expect(damaged.length).toBeGreaterThan(0);
    const r = await exportGraph(geo, { store, workers: 0 });
    expect(r.diagnostics.map((d) => d.code)).toContain('KILN_STORE_CORRUPT');
    expect(graphText(r)).toBe(graphText(checked));
  });

  it('no absolute path anywhere; the header says what produced it', () => {
    const text = graphText(checked);
    expect(text).not.toContain(geo);
    expect(text).not.toContain(tmpdir());
    expect(text).not.toContain(resolve(__dirname, '../../..'));
    expect(text.endsWith('\n')).toBe(true);
    const header = checked.records[0]!;
    expect(header).toMatchObject({
      kind: 'header',
      id: 'header:@fx/geo',
      schema_version: 1,
      mode: 'checked',
      root: '.',
      package: '@fx/geo',
      tsconfig: 'tsconfig.json',
      languages: ['javascript', 'json', 'typescript'],
      toolchain: { kiln_extractor: expect.any(Number), digest_schema: 2, typescript: expect.stringMatching(/^\d+\.\d+/) },
      snapshot: { id: expect.stringMatching(/^[0-9a-f]{32}$/), files: 8 }, // 6 sources + package.json + tsconfig.json
    });
    const h = header as Extract<KnownRecord, { kind: 'header' }>;
    expect(h.counts.nodes + h.counts.edges).toBe(checked.records.length - 1);
  });

  it('the snapshot identity moves with any source or manifest byte, nothing else', async () => {
    const snap = (r: GraphExportResult) => (r.records[0] as Extract<KnownRecord, { kind: 'header' }>).snapshot.id;
    const comment = await copyOf('comment', (d) => writeFile(join(d, 'src/types.ts'), '// a comment\nexport interface Named {\n  name: string;\n}\n'));
    expect(snap(await exportGraph(comment, { store: false, workers: 0 }))).not.toBe(snap(checked));
    const manifest = await copyOf('manifest', (d) => writeFile(join(d, 'package.json'), `${GEO['package.json']}\n`));
    expect(snap(await exportGraph(manifest, { store: false, workers: 0 }))).not.toBe(snap(checked));
  });
});

describe('exportGraph: checked mode', () => {
  it('records files, modules and declarations with their digests and surfaces', () => {
    const r = checked.records;
    const circle = r.find((x) => x.id === `${P}/shapes#Circle:class`);
    expect(circle).toMatchObject({
      kind: 'declaration',
      provenance: 'compiler_checked',
      degraded: false,
      language: 'typescript',
      module: `${P}/shapes`,
      module_path: 'src/shapes',
      path: 'Circle',
      decl_kind: 'class',
      parent: null,
      digest_schema: 2,
      surface: ['@fx/geo#Circle'],
      exported_as: ['Circle'],
      span: { file: 'src/shapes.ts', startLine: 8, startColumn: 1 },
    });
    expect((circle as { semantic_digest: string }).semantic_digest).toMatch(/^[0-9a-f]{32}$/);
    expect(r.find((x) => x.id === `${P}/math#double:function`)).toMatchObject({ doc_digest: expect.stringMatching(/^[0-9a-f]{32}$/), surface: ['@fx/geo/math#double'] });
    expect(r.find((x) => x.id === `${P}/shapes#Circle.area:method`)).toMatchObject({ parent: `${P}/shapes#Circle:class` });
    expect(edge(r, 'defines', `${P}/shapes#Circle:class`, `${P}/shapes#Circle.area:method`)).toBeDefined();
    expect(edge(r, 'defines', `${P}/shapes`, `${P}/shapes#Circle:class`)).toBeDefined();
    expect(edge(r, 'defines', 'file:@fx/geo//src/shapes.ts', `${P}/shapes`)).toBeDefined();
    expect(edge(r, 'contains', 'package:@fx/geo', `${P}/shapes`)).toBeDefined();
    // Namespaces: the package.json entry points, and what each exports.
    expect(r.find((x) => x.id === 'namespace:@fx/geo')).toMatchObject({ provenance: 'manifest_declared', entry: '.', module: `${P}/index`, names: ['Circle', 'Shape', 'triple', 'unit', 'registry'].sort() });
    expect(edge(r, 'exports', 'namespace:@fx/geo', `${P}/shapes#Circle:class`)).toMatchObject({ names: ['Circle'] });
    expect(r.find((x) => x.id === `${P}/shapes`)).toMatchObject({ namespaces: ['namespace:@fx/geo'], internal: false });
    expect(r.find((x) => x.id === `${P}/types`)).toMatchObject({ namespaces: [], internal: true });
  });

  it('resolves a cross-module call and a reference through an import to the declarations they mean', () => {
    const r = checked.records;
    const call = edge(r, 'calls', `${P}/shapes#Circle.area:method`, `${P}/math#double:function`);
    expect(call).toMatchObject({ provenance: 'compiler_checked', count: 1 });
    const site = byKind(r, 'call').find((c) => c.in === `${P}/shapes#Circle.area:method` && c.target === `${P}/math#double:function`);
    expect(site).toMatchObject({ id: `call:${P}/shapes#Circle.area:method->${P}/math#double:function#1`, name: 'double', form: 'call', span: { file: 'src/shapes.ts', startLine: 12, startColumn: 18 } });
    expect(edge(r, 'contains', `${P}/shapes#Circle.area:method`, site!.id)).toBeDefined();
    // A reference through an import: `PI2` in Circle.area is math's PI2, not a name.
    expect(edge(r, 'references', `${P}/shapes#Circle.area:method`, `${P}/math#PI2:variable`)).toMatchObject({ provenance: 'compiler_checked', type_only: false });
    // A type-only import, referenced in a heritage clause.
    expect(edge(r, 'references', `${P}/shapes#Circle:class`, `${P}/types#Named:interface`)).toMatchObject({ type_only: true });
    // An overloaded call resolves to the overload the checker picked (its signature-discriminated identity).
    const fmt = byKind(r, 'calls').find((c) => c.from === `${P}/shapes#Circle.label:method` && c.to.includes('#fmt'));
    expect(fmt?.to).toMatch(/#fmt~[0-9a-f]+:function$/);
    // `new Circle(1)` calls the constructor; top-level code belongs to the module.
    expect(edge(r, 'calls', `${P}/shapes#unit:function`, `${P}/shapes#Circle.constructor:constructor`)).toBeDefined();
    expect(edge(r, 'calls', `${P}/index`, `${P}/shapes#unit:function`)).toBeDefined();
    // A call is not also a reference; locals and library names are not targets.
    expect(edge(r, 'references', `${P}/shapes#Circle.area:method`, `${P}/math#double:function`)).toBeUndefined();
    expect(byKind(r, 'references').some((e) => e.to.includes('Math'))).toBe(false);
    // JSDoc {@link} names documented declarations.
    expect(edge(r, 'documents', `${P}/math#double:function`, `${P}/math#triple:function`)).toBeDefined();
    expect(edge(r, 'documents', `${P}/math#double:function`, `${P}/math#PI2:variable`)).toBeDefined();
  });

  it('records imports with their compiler resolution, re-exports and exports', () => {
    const r = checked.records;
    expect(r.find((x) => x.id === `${P}/shapes#import:./math.js`)).toMatchObject({
      kind: 'import',
      forms: ['import'],
      target: `${P}/math`,
      resolved_by: 'compiler',
      external: false,
      bindings: [
        { imported: 'PI2', local: 'PI2', type_only: false },
        { imported: 'double', local: 'double', type_only: false },
        { imported: 'fmt', local: 'fmt', type_only: false },
      ],
    });
    expect(edge(r, 'imports', `${P}/shapes`, `${P}/types`)).toMatchObject({ type_only: true, via: ['./types.js'], provenance: 'compiler_checked' });
    expect(r.find((x) => x.id === `${P}/index#import:./shapes.js`)).toMatchObject({ forms: ['import', 're-export'], reexport_all: true });
    expect(r.find((x) => x.id === `${P}/index#export:Circle`)).toMatchObject({ kind: 'export', targets: [`${P}/shapes#Circle:class`] });
    expect(edge(r, 'exports', `${P}/index#export:triple`, `${P}/math#triple:function`)).toBeDefined();
    // Manifest facts.
    expect(r.find((x) => x.id === 'package:@fx/geo')).toMatchObject({
      provenance: 'manifest_declared',
      language: 'json',
      dependencies: [{ name: 'left-pad', section: 'dependencies' }],
      entries: ['.', './math'],
      tsconfig: { file: 'tsconfig.json', paths: {}, references: [] },
    });
    expect(edge(r, 'imports', 'package:@fx/geo', 'package:left-pad')).toMatchObject({ provenance: 'manifest_declared', via: ['dependencies'] });
  });

  it('files the tsconfig does not include are exported from syntax, without references or calls', () => {
    const r = checked.records;
    for (const id of ['file:@fx/geo//test/geo.test.ts', 'file:@fx/geo//src/legacy.js']) expect(r.find((x) => x.id === id)?.provenance).toBe('syntax_inferred');
    expect(r.find((x) => x.id === 'javascript:@fx/geo//src/legacy#old:function')).toMatchObject({ language: 'javascript', provenance: 'syntax_inferred' });
    expect(byKind(r, 'call').some((c) => c.span.file.startsWith('test/'))).toBe(false);
    // Its import is still resolved (by the compiler's module resolution), with the file's tier.
    expect(edge(r, 'imports', 'typescript:@fx/geo//test/geo.test', `${P}/index`)).toMatchObject({ provenance: 'syntax_inferred' });
  });
});

describe('exportGraph: a type error', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await copyOf('type-error', async (d) => {
      await writeFile(
        join(d, 'src/shapes.ts'),
        GEO['src/shapes.ts']!.replace('return fmt(this.area());', "const n: number = 'four';\n    return fmt(this.area() + n);"),
      );
    });
  });

  it('checked mode fails with KILN_GRAPH_CHECK_FAILED and the compiler error; no record', async () => {
    const r = await exportGraph(dir, { store: false, workers: 0 });
    expect(r.ok).toBe(false);
    expect(r.records).toEqual([]);
    expect(graphText(r)).toBe('');
    expect(r.diagnostics[0]).toMatchObject({ code: 'KILN_GRAPH_CHECK_FAILED', severity: 'error' });
    expect(r.diagnostics).toContainEqual(expect.objectContaining({ code: 'KILN_TYPESCRIPT_ERROR', tsCode: 'TS2322', file: 'src/shapes.ts', line: 15 }));
  });

  it('allow-errors records the diagnostic and no reference/call of the broken module, but keeps its file, module and declarations', async () => {
    const r = await exportGraph(dir, { mode: 'allow-errors', store: false, workers: 0 });
    expect(r.ok).toBe(true);
    const records = r.records;
    expect(records[0]).toMatchObject({ mode: 'allow-errors', degraded: true });
    const diag = byKind(records, 'diagnostic').find((d) => d.ts_code === 'TS2322');
    expect(diag).toMatchObject({ code: 'KILN_TYPESCRIPT_ERROR', severity: 'error', file: 'src/shapes.ts', provenance: 'compiler_checked', span: { file: 'src/shapes.ts', startLine: 15 } });
    expect(edge(records, 'diagnoses', diag!.id, `${P}/shapes#Circle.label:method`)).toBeDefined();
    // The broken module: syntax facts only, marked.
    expect(records.find((x) => x.id === `${P}/shapes`)).toMatchObject({ kind: 'module', provenance: 'syntax_inferred', degraded: true, degraded_reason: 'type-error' });
    expect(records.find((x) => x.id === 'file:@fx/geo//src/shapes.ts')).toMatchObject({ provenance: 'syntax_inferred', degraded: true });
    expect(records.find((x) => x.id === `${P}/shapes#Circle.area:method`)).toMatchObject({ kind: 'declaration', provenance: 'syntax_inferred', semantic_digest: expect.any(String) });
    const fromShapes = (id: string) => id.startsWith(`${P}/shapes`);
    expect(records.filter((x) => (x.kind === 'reference' || x.kind === 'call') && fromShapes(x.in))).toEqual([]);
    expect(records.filter((x) => (x.kind === 'references' || x.kind === 'calls') && fromShapes(x.from))).toEqual([]);
    // Error-free modules of a program with errors: resolved, but not claimed as checked.
    expect(edge(records, 'calls', `${P}/index`, `${P}/shapes#unit:function`)).toMatchObject({ provenance: 'compiler_unchecked' });
    expect(records.find((x) => x.id === `${P}/math`)).toMatchObject({ provenance: 'compiler_unchecked', degraded: false });
    expect(records.some((x) => x.provenance === 'compiler_checked' && x.kind !== 'diagnostic' && x.kind !== 'diagnoses')).toBe(false);
  });

  it('the graph queries print and return each recorded diagnostic as the diagnostic envelope; an unknown code as recorded', async () => {
    const r = await exportGraph(dir, { mode: 'allow-errors', store: false, workers: 0 });
    const unknown = { kind: 'diagnostic', id: 'diagnostic:KILN_FROM_THE_FUTURE@-:-#0', language: 'json', provenance: 'compiler_checked', degraded: false, package: '@fx/geo', code: 'KILN_FROM_THE_FUTURE', ts_code: null, severity: 'warning', message: 'a newer kiln said this', hint: '', producer: 'graph', file: null };
    const doc = readGraph(graphText(r) + JSON.stringify(unknown) + '\n');
    const idx = new GraphIndex({ header: doc.header as unknown as QueryHeader, records: doc.records as unknown as QueryRecord[] });
    const s = graphSummary(idx);
    const ts = s.diagnostics.find((d) => d.envelope?.tool?.code === 'TS2322')!;
    expect(ts.envelope).toMatchObject({ code: 'KILN_TYPESCRIPT_ERROR', severity: 'error', outcome: expect.any(String), location: { kind: 'position', file: 'src/shapes.ts', line: 15 } });
    expect(readEnvelope(ts.envelope).ok).toBe(true);
    for (const d of s.diagnostics) if (d.envelope) expect(readEnvelope(d.envelope), d.id).toMatchObject({ ok: true });
    const text = formatSummaryText(s);
    // The compiler's form (file:line:col - error TS2322: …), the same text every other kiln command prints.
    expect(text).toContain(`  ${formatEnvelopeText(ts.envelope!).split('\n')[0]}`);
    expect(text).toMatch(/ {2}src\/shapes\.ts:15:\d+ - error TS2322: /);
    expect(s.diagnostics.find((d) => d.code === 'KILN_FROM_THE_FUTURE')).toMatchObject({ envelope: null, severity: 'warning', message: 'a newer kiln said this' });
    expect(text).toContain('(no location) - warning KILN_FROM_THE_FUTURE: a newer kiln said this');
    const m = moduleView(idx, 'src/shapes');
    expect(m.diagnostics.map((d) => d.envelope?.tool?.code)).toContain('TS2322');
    expect(formatModuleText(m)).toMatch(/ {2}src\/shapes\.ts:15:\d+ - error TS2322: /);
  });

  it('allow-errors on a clean project gives the checked records (only the header mode differs)', async () => {
    const tolerant = await exportGraph(geo, { mode: 'allow-errors', store: false, workers: 0 });
    expect(graphText(tolerant)).toBe(graphText(checked).replace('"mode":"checked"', '"mode":"allow-errors"'));
  });
});

describe('exportGraph: bad input', () => {
  it('a file with a syntax error still yields file, module and declaration records plus diagnostics', async () => {
    const dir = await copyOf('syntax', (d) => writeFile(join(d, 'src/bad.ts'), 'export function fine() {\n  return 1;\n}\n\nexport function broken( {\n  return ;;; ((\n}\n'));
    const checkedBad = await exportGraph(dir, { store: false, workers: 0 });
    expect(checkedBad.ok).toBe(false);
    const r = await exportGraph(dir, { mode: 'allow-errors', store: false, workers: 0 });
    expect(r.ok).toBe(true);
    const records = r.records;
    expect(records.find((x) => x.id === 'file:@fx/geo//src/bad.ts')).toMatchObject({ provenance: 'syntax_inferred', degraded: true });
    expect(records.find((x) => x.id === `${P}/bad`)).toMatchObject({ kind: 'module', degraded: true });
    expect(records.find((x) => x.id === `${P}/bad#fine:function`)).toMatchObject({ kind: 'declaration', degraded: false, semantic_digest: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const broken = records.find((x) => x.kind === 'declaration' && x.path === 'broken');
    expect(broken).toMatchObject({ degraded: true, degraded_reason: 'syntax-error', semantic_digest: null });
    const diags = byKind(records, 'diagnostic').filter((d) => d.file === 'src/bad.ts');
    expect(diags.map((d) => d.code)).toEqual(expect.arrayContaining(['KILN_SYNTAX_ERROR', 'KILN_TYPESCRIPT_ERROR']));
    expect(diags.find((d) => d.code === 'KILN_SYNTAX_ERROR')).toMatchObject({ producer: 'extract', provenance: 'syntax_inferred' });
    for (const d of diags) expect(byKind(records, 'diagnoses').some((e) => e.from === d.id)).toBe(true);
  });

  it('without a tsconfig: checked mode refuses (coded), allow-errors exports syntax facts only', async () => {
    const dir = await copyOf('no-tsconfig', (d) => rm(join(d, 'tsconfig.json')));
    const refused = await exportGraph(dir, { store: false, workers: 0 });
    expect(refused.ok).toBe(false);
    expect(refused.diagnostics.map((d) => d.code)).toEqual(['KILN_GRAPH_CHECK_FAILED', 'KILN_TSCONFIG_NOT_FOUND']);
    const r = await exportGraph(dir, { mode: 'allow-errors', store: false, workers: 0 });
    expect(r.ok).toBe(true);
    expect(r.records[0]).toMatchObject({ tsconfig: null });
    const sourceFacts = r.records.filter((x) => x.provenance !== 'manifest_declared' && x.kind !== 'header');
    expect(new Set(sourceFacts.map((x) => x.provenance))).toEqual(new Set(['syntax_inferred']));
    expect(byKind(r.records, 'call')).toEqual([]);
    expect(byKind(r.records, 'diagnostic').map((d) => d.code)).toContain('KILN_GRAPH_UNCHECKED');
    // kiln's own resolution still links relative imports.
    expect(edge(r.records, 'imports', `${P}/shapes`, `${P}/math`)).toMatchObject({ provenance: 'syntax_inferred' });
    expect(r.records.find((x) => x.id === `${P}/shapes#import:./math.js`)).toMatchObject({ resolved_by: 'kiln' });
  });

  it('a named tsconfig that does not exist is a coded error', async () => {
    await expect(exportGraph(geo, { tsConfig: 'tsconfig.nope.json', store: false, workers: 0 })).rejects.toMatchObject({ code: 'KILN_TSCONFIG_NOT_FOUND' });
    await expect(exportGraph(join(tmp, 'missing'), { store: false, workers: 0 })).rejects.toMatchObject({ code: 'KILN_NOT_FOUND' });
  });
});

describe('exportGraph: across packages', () => {
  it('an alias-only monorepo (tsconfig paths, no dependency, no link) gets its import, call and reference edges', async () => {
    const mono = await writeTree(join(tmp, 'alias'), ALIAS_MONOREPO);
    const r = await exportGraph(join(mono, 'packages/b'), { store: false, workers: 0 });
    expect(r.ok).toBe(true);
    const records = r.records;
    expect(records.find((x) => x.id === 'typescript:@mono/b//src/main#import:@alias/a')).toMatchObject({ target: 'typescript:@mono/a//src/index', resolved_by: 'compiler', external: false });
    expect(edge(records, 'imports', 'typescript:@mono/b//src/main', 'typescript:@mono/a//src/index')).toMatchObject({ provenance: 'compiler_checked', via: ['@alias/a'] });
    expect(edge(records, 'calls', 'typescript:@mono/b//src/main#hello:variable', 'typescript:@mono/a//src/index#greet:function')).toMatchObject({ provenance: 'compiler_checked' });
    expect(edge(records, 'references', 'typescript:@mono/b//src/main#loud:variable', 'typescript:@mono/a//src/index#GREETING:variable')).toBeDefined();
    expect(records.find((x) => x.id === 'package:@mono/b')).toMatchObject({ tsconfig: { paths: { '@alias/a': ['../a/src/index.ts'] } } });
    // Only b's own files are b's records; a's identities are the targets.
    expect(byKind(records, 'file').map((f) => f.path)).toEqual(['src/main.ts']);
    expect(graphText(r)).not.toContain(mono);
  });

  it('manifest facts: package.json dependencies, the tsconfig chain and references, project.json — manifest_declared', async () => {
    const ws = await writeTree(join(tmp, 'ws-manifests'), {
      ...NPM_WORKSPACE,
      'packages/b/project.json': JSON.stringify({ name: 'b', tags: ['type:app', 'scope:web'], implicitDependencies: ['@ws/c', '!@ws/d'] }),
      'packages/b/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { noEmit: true }, include: ['src'], references: [{ path: '../a' }] }),
      'tsconfig.base.json': JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] } }),
    });
    const r = await exportGraph(join(ws, 'packages/b'), { mode: 'allow-errors', store: false, workers: 0 });
    const pkg = r.records.find((x) => x.id === 'package:@ws/b');
    expect(pkg).toMatchObject({
      provenance: 'manifest_declared',
      dependencies: [{ name: '@ws/a', section: 'dependencies' }],
      tsconfig: { file: 'tsconfig.json', references: ['../a'] },
      project: { name: 'b', tags: ['scope:web', 'type:app'], implicit_dependencies: ['!@ws/d', '@ws/c'] },
    });
    expect((pkg as { manifests: { path: string }[] }).manifests.map((m) => m.path)).toEqual(['../../tsconfig.base.json', 'package.json', 'project.json', 'tsconfig.json']);
    expect(edge(r.records, 'imports', 'package:@ws/b', 'package:@ws/a')).toMatchObject({ provenance: 'manifest_declared', via: ['dependencies', 'tsconfig-reference'] });
    expect(edge(r.records, 'imports', 'package:@ws/b', 'package:@ws/c')).toMatchObject({ via: ['project.json'] });
    expect(edge(r.records, 'imports', 'package:@ws/b', 'package:@ws/d')).toBeUndefined();
  });

  it('an npm workspace importing by package name resolves through package.json exports: by the compiler through the link, by kiln without it', async () => {
    const ws = await writeTree(join(tmp, 'ws'), NPM_WORKSPACE);
    // No node_modules link: the compiler cannot resolve it (allow-errors), kiln can (workspace + exports).
    const unlinked = await exportGraph(join(ws, 'packages/b'), { mode: 'allow-errors', store: false, workers: 0 });
    expect(unlinked.records.find((x) => x.id === 'typescript:@ws/b//src/main#import:@ws/a')).toMatchObject({ target: 'typescript:@ws/a//src/index', resolved_by: 'kiln' });
    expect(edge(unlinked.records, 'imports', 'typescript:@ws/b//src/main', 'typescript:@ws/a//src/index')).toMatchObject({ provenance: 'syntax_inferred' });
    expect(byKind(unlinked.records, 'diagnostic').map((d) => d.ts_code)).toContain('TS2307');
    expect(edge(unlinked.records, 'imports', 'package:@ws/b', 'package:@ws/a')).toMatchObject({ provenance: 'manifest_declared', via: ['dependencies'] });
    // As npm links it: the checker resolves through `exports` (types condition) to a's source.
    await mkdir(join(ws, 'node_modules/@ws'), { recursive: true });
    await symlink(join(ws, 'packages/a'), join(ws, 'node_modules/@ws/a'), 'dir');
    const linked = await exportGraph(join(ws, 'packages/b'), { store: false, workers: 0 });
    expect(linked.ok).toBe(true);
    expect(linked.records.find((x) => x.id === 'typescript:@ws/b//src/main#import:@ws/a')).toMatchObject({ target: 'typescript:@ws/a//src/index', resolved_by: 'compiler' });
    expect(edge(linked.records, 'calls', 'typescript:@ws/b//src/main#hello:variable', 'typescript:@ws/a//src/index#greet:function')).toMatchObject({ provenance: 'compiler_checked' });
  });
});
