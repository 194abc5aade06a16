/**
 * Issue 4 point 1 — the codegraph schema: every record an export emits (checked, tolerant with and
 * without the checker, without a tsconfig, with syntax errors) validates with ajv against
 * schema/codegraph.schema.json; the schema's version is GRAPH_SCHEMA_VERSION; the reader keeps unknown
 * kinds as opaque records and gives the text back byte for byte; bad documents are coded errors, never
 * crashes.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import AjvModule from 'ajv/dist/2020.js';
import {
  CODES,
  exportGraph,
  GRAPH_SCHEMA_VERSION,
  graphSchema,
  graphText,
  KilnError,
} from '@kiln/core';
import { EDGE_KINDS, NODE_KINDS, type KnownRecord } from '../dist/graph/records.js';
import { graphSchemaPath, graphValidatorKind, validateGraphRecord } from '../dist/graph/schema.js';
import { isOpaqueRecord, readGraph, writeGraph } from '../dist/graph/read.js';
import { GEO, writeTree } from './lib/graph-fixtures.js';

let tmp: string;
let geo: string;
let checkedText: string;
const exported: { name: string; records: KnownRecord[] }[] = [];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-graph-schema-'));
  geo = await writeTree(join(tmp, 'geo'), GEO);
  const checked = await exportGraph(geo, { store: false, workers: 0 });
  expect(checked.ok).toBe(true);
  checkedText = graphText(checked);
  exported.push({ name: 'checked', records: checked.records });

  // The same package with a type error and a file that does not parse, tolerant.
  const broken = join(tmp, 'broken');
  await cp(geo, broken, { recursive: true });
  await writeFile(join(broken, 'src/types.ts'), 'export interface Named {\n  name: string;\n}\nexport const n: number = "not a number";\n');
  await writeFile(join(broken, 'src/bad.ts'), 'export function fine() {\n  return 1;\n}\nexport function bad( {\n  return ;;; ((\n}\n');
  const tolerant = await exportGraph(broken, { mode: 'allow-errors', store: false, workers: 0 });
  expect(tolerant.ok).toBe(true);
  exported.push({ name: 'allow-errors', records: tolerant.records });
  // The same, tolerant from syntax alone (no program).
  const fromSyntax = await exportGraph(broken, { mode: 'allow-errors', syntax: true, store: false, workers: 0 });
  expect(fromSyntax.ok).toBe(true);
  exported.push({ name: 'syntax', records: fromSyntax.records });

  // No tsconfig at all: syntax only.
  const bare = join(tmp, 'bare');
  await cp(geo, bare, { recursive: true });
  await rm(join(bare, 'tsconfig.json'));
  const syntax = await exportGraph(bare, { mode: 'allow-errors', store: false, workers: 0 });
  exported.push({ name: 'no-program', records: syntax.records });
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

describe('codegraph schema', () => {
  it('is a JSON Schema 2020-12 document pinned to GRAPH_SCHEMA_VERSION, shipped in the package', async () => {
    const schema = graphSchema() as { $schema: string; $id: string; $defs: Record<string, { properties: Record<string, unknown> }> };
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toContain(`/codegraph/${GRAPH_SCHEMA_VERSION}/`);
    expect(schema.$defs.header!.properties.schema_version).toEqual({ const: GRAPH_SCHEMA_VERSION });
    for (const kind of [...NODE_KINDS, ...EDGE_KINDS, 'header']) expect(schema.$defs[kind], kind).toBeDefined();
    expect(JSON.parse(await readFile(graphSchemaPath(), 'utf8'))).toEqual(schema);
    const pkg = JSON.parse(await readFile(join(__dirname, '../package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(pkg.exports['./codegraph.schema.json']).toBe('./dist/graph/schema/codegraph.schema.json');
  });

  it('every emitted record validates with ajv (checked, allow-errors with broken files with and without the checker, no tsconfig)', () => {
    const Ajv = AjvModule as unknown as { default: new (o: object) => { compile: (s: object) => ((d: unknown) => boolean) & { errors?: unknown } } };
    const validate = new Ajv.default({ allErrors: true, strict: true }).compile(graphSchema());
    for (const { name, records } of exported) {
      const kinds = new Set(records.map((r) => r.kind));
      expect(records[0]!.kind, name).toBe('header');
      for (const r of records) {
        const ok = validate(r);
        expect(ok, `${name}: ${JSON.stringify(r)}\n${JSON.stringify(validate.errors)}`).toBe(true);
        expect(validateGraphRecord(r)).toBeNull();
      }
      // The fixtures exercise every node and edge kind between them.
      if (name === 'checked') for (const k of ['package', 'namespace', 'file', 'module', 'declaration', 'import', 'export', 'reference', 'call', 'contains', 'defines', 'imports', 'exports', 'references', 'calls', 'documents']) expect(kinds, k).toContain(k);
      if (name === 'allow-errors') for (const k of ['diagnostic', 'diagnoses']) expect(kinds, k).toContain(k);
      if (name === 'syntax') for (const k of ['diagnostic', 'diagnoses', 'references', 'imports', 'exports']) expect(kinds, k).toContain(k);
    }
  });

  it('every record has kind, id, language, provenance and degraded; declarations carry their digests', () => {
    for (const { records } of exported) {
      for (const r of records) {
        expect(typeof r.id).toBe('string');
        expect(['typescript', 'javascript', 'json']).toContain(r.language);
        expect(['compiler_checked', 'compiler_unchecked', 'syntax_inferred', 'manifest_declared']).toContain(r.provenance);
        expect(typeof r.degraded).toBe('boolean');
        if (r.kind === 'declaration') {
          expect(r).toHaveProperty('semantic_digest');
          expect(r).toHaveProperty('doc_digest');
          expect(r.digest_schema).toBe(2);
          expect(r.span.file).not.toMatch(/^\//);
        }
      }
    }
  });

  it('the schema rejects a known record with a missing or misspelt field', () => {
    const decl = exported[0]!.records.find((r) => r.kind === 'declaration')!;
    const { semantic_digest: _omit, ...missing } = decl as unknown as Record<string, unknown>;
    expect(validateGraphRecord(missing)).toMatch(/semantic_digest/);
    expect(validateGraphRecord({ ...decl, semantic_digets: 'x' })).toMatch(/semantic_digets/);
    expect(validateGraphRecord({ ...decl, provenance: 'guessed' })).toMatch(/provenance/);
    expect(validateGraphRecord({ ...decl, span: { ...(decl as { span: object }).span, file: '/abs/path.ts' } })).not.toBeNull();
    // Unknown kinds are opaque: anything with a kind passes.
    expect(validateGraphRecord({ kind: 'architecture_finding', anything: [1, 2] })).toBeNull();
  });

  it("the build ships a validator precompiled from exactly this schema; it judges every record as ajv compiling the schema here does", async () => {
    expect(graphValidatorKind()).toBe('standalone');
    const Ajv = (AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule;
    const fresh = new (Ajv as unknown as new (o: object) => { compile: (s: object) => (r: unknown) => boolean })({ allErrors: false, strict: true }).compile(JSON.parse(await readFile(graphSchemaPath(), 'utf8')));
    const samples: unknown[] = [];
    for (const { records } of exported) {
      for (const r of records) {
        const o = r as unknown as Record<string, unknown>;
        samples.push(r, { ...o, provenance: 'guessed' }, { ...o, extra_field: 1 }, { ...o, id: 42 });
      }
    }
    let valid = 0;
    for (const r of samples) {
      const ok = fresh(r);
      if (ok) valid++;
      expect(validateGraphRecord(r) === null, JSON.stringify(r).slice(0, 200)).toBe(ok);
    }
    // Both verdicts occur: a judge that says yes (or no) to everything would agree by accident.
    expect(valid).toBeGreaterThan(0);
    expect(valid).toBeLessThan(samples.length);
  });
});

describe('readGraph', () => {
  it('reads an export: header, then every record, validated', () => {
    const doc = readGraph(checkedText);
    expect(doc.header.schema_version).toBe(GRAPH_SCHEMA_VERSION);
    expect(doc.header.package).toBe('@fx/geo');
    expect(doc.records.length).toBe(doc.header.counts.nodes + doc.header.counts.edges);
    expect(writeGraph(doc)).toBe(checkedText);
  });

  it('keeps unknown kinds as opaque records and round-trips the text byte for byte', () => {
    const lines = checkedText.split('\n');
    const opaque = [
      '{"kind":"architecture_finding","id":"finding:1","evidence":["a","b"],"score":1.0,"note":"caf\\u00e9"}',
      '{ "z": 1, "kind": "risk_signal",   "2": "integer-like key first", "a": null }',
      '{"kind":"coverage_report"}',
    ];
    lines.splice(3, 0, opaque[0]!);
    lines.splice(10, 0, opaque[1]!);
    lines.splice(lines.length - 1, 0, opaque[2]!);
    const text = lines.join('\n');
    const doc = readGraph(text);
    const opaques = doc.records.filter(isOpaqueRecord);
    expect(opaques.map((r) => r.kind)).toEqual(['architecture_finding', 'risk_signal', 'coverage_report']);
    expect(opaques[0]).toMatchObject({ id: 'finding:1', evidence: ['a', 'b'], note: 'café' });
    expect(writeGraph(doc)).toBe(text);
    // Without a trailing newline too, and with CRLF line ends.
    expect(writeGraph(readGraph(text.trimEnd()))).toBe(text.trimEnd());
    const crlf = text.split('\n').join('\r\n');
    expect(writeGraph(readGraph(crlf))).toBe(crlf);
  });

  it('bad documents are coded errors naming the line', () => {
    const fail = (text: string) => {
      try {
        readGraph(text);
      } catch (e) {
        expect(e).toBeInstanceOf(KilnError);
        return e as KilnError;
      }
      throw new Error('readGraph accepted a bad document');
    };
    const [header, ...rest] = checkedText.split('\n');
    expect(fail('').code).toBe('KILN_GRAPH_INVALID');
    expect(fail(rest.join('\n')).message).toMatch(/line 1: the first record must be the header/);
    expect(fail(`${header}\nnot json\n`).message).toMatch(/line 2: not JSON/);
    expect(fail(`${header}\n[1,2]\n`).message).toMatch(/line 2: not a JSON object/);
    expect(fail(`${header}\n${header}\n`).message).toMatch(/a second header/);
    const decl = rest.find((l) => l.includes('"kind":"declaration"'))!;
    expect(fail(`${header}\n${decl.replace('"decl_kind":', '"decl_knd":')}\n`).message).toMatch(/line 2: declaration record .*decl_kind/);
    const future = fail(header!.replace(`"schema_version":${GRAPH_SCHEMA_VERSION}`, '"schema_version":99'));
    expect(future.code).toBe('KILN_GRAPH_UNSUPPORTED_SCHEMA');
    for (const code of ['KILN_GRAPH_INVALID', 'KILN_GRAPH_UNSUPPORTED_SCHEMA', 'KILN_GRAPH_CHECK_FAILED', 'KILN_GRAPH_UNCHECKED'] as const) expect(CODES[code].hint.length).toBeGreaterThan(8);
  });
});
