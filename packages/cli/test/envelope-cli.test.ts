/**
 * Issue 14, point 8 — the `kiln` command's diagnostics are diagnostic envelopes, in real processes:
 * a failing command prints the text projection of its envelope, or with `--format json` the envelope
 * itself (one JSON line per diagnostic on stderr, valid against the schema) — the compiler's errors of
 * a refused checked graph included, with kiln's code and the TS code as the tool's; `--format json`
 * reports hold envelopes; and `kiln diff` refuses a recorded report whose diagnostic has an unknown
 * envelope version or outcome (exit 1, KILN_ENVELOPE_*) instead of reading it as clean.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEnvelopeText, readEnvelope, type DiagnosticEnvelope } from '@kiln/core';
import { spawnAsync, type Ran } from './lib/spawn-async.js';
import { writeTree } from '../../core/test/lib/graph-fixtures.js';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-envelope-cli-'));
const broken = join(tmp, 'broken');
const syntax = join(tmp, 'syntax');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

beforeAll(async () => {
  const tsconfig = JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: [] }, include: ['src'] });
  await writeTree(broken, {
    'package.json': JSON.stringify({ name: '@fx/broken', version: '1.0.0', type: 'module', exports: './src/index.ts' }),
    'tsconfig.json': tsconfig,
    'src/index.ts': "export function need(n: number): number {\n  return n;\n}\nexport const bad: number = 'x';\nexport const r = need();\n",
  });
  await writeTree(syntax, {
    'package.json': JSON.stringify({ name: '@fx/syntax', version: '1.0.0', type: 'module' }),
    'src/ok.ts': 'export const a = 1;\n',
    'src/broken.ts': 'export const b = (1;\n',
  });
});

function kiln(...args: string[]): Promise<Ran> {
  return spawnAsync(process.execPath, [bin, ...args], { cwd: tmp, env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
}

/** Each stderr line of a `--format json` run, read as an envelope (it must be one). */
function envelopesOf(stderr: string): DiagnosticEnvelope[] {
  return stderr
    .trim()
    .split('\n')
    .map((line, i) => {
      const r = readEnvelope(JSON.parse(line), `stderr line ${i + 1}`);
      if (!r.ok) throw new Error(r.diagnostic.message);
      return r.envelope;
    });
}

describe('kiln prints diagnostic envelopes', () => {
  it('a failing command: the text is the projection of the envelope --format json prints; no location says so', async () => {
    const [text, json] = await Promise.all([kiln('digest', 'nope', '--no-store'), kiln('digest', 'nope', '--no-store', '--format', 'json')]);
    expect(text.code).toBe(1);
    expect(json.code).toBe(1);
    const [e, ...more] = envelopesOf(json.err);
    expect(more).toEqual([]);
    expect(e).toMatchObject({ envelope: 1, code: 'KILN_NOT_FOUND', severity: 'error', outcome: 'refused', producer: 'view', related: [], location: { kind: 'none', reason: expect.any(String) } });
    expect(text.err).toBe(`${formatEnvelopeText(e!)}\n`);
    expect(text.err).toMatch(/^error KILN_NOT_FOUND: .*nope.*\n {2}hint: /);
  });

  it('a refused checked graph: every diagnostic, the compiler\'s included, as envelopes in JSON and as their projections in text', async () => {
    const [text, json] = await Promise.all([kiln('graph', 'summary', broken, '--no-store', '--workers', '0'), kiln('graph', 'summary', broken, '--no-store', '--workers', '0', '--format', 'json')]);
    expect(text.code).toBe(1);
    expect(json.code).toBe(1);
    const envelopes = envelopesOf(json.err);
    expect(envelopes.map((e) => `${e.code}${e.tool ? ` ${e.tool.name} ${e.tool.code}` : ''}`).sort()).toEqual([
      'KILN_GRAPH_CHECK_FAILED',
      'KILN_TYPESCRIPT_ERROR typescript TS2322',
      'KILN_TYPESCRIPT_ERROR typescript TS2554',
    ]);
    const ts2322 = envelopes.find((e) => e.tool?.code === 'TS2322')!;
    expect(ts2322).toMatchObject({ outcome: 'failed', producer: 'graph', location: { kind: 'position', file: 'src/index.ts', line: 4, column: 14, endLine: 4, endColumn: 17 } });
    expect(ts2322.message).toBe("Type 'string' is not assignable to type 'number'.");
    // The terminal prints the same records, in the same order, as their text projections.
    expect(text.err).toBe(`${envelopes.map(formatEnvelopeText).join('\n')}\n`);
    expect(text.err).toContain("src/index.ts:4:14 - error TS2322: Type 'string' is not assignable to type 'number'.");
  });

  it('a recorded report holds envelopes; diff reads them back, and refuses one of an unknown version or outcome', async () => {
    const recorded = join(tmp, 'syntax.json');
    const digest = await kiln('digest', syntax, '--no-store', '--workers', '0', '--format', 'json');
    expect(digest.code, digest.err).toBe(0);
    writeFileSync(recorded, digest.out);
    const report = JSON.parse(digest.out) as { version: number; diagnostics: DiagnosticEnvelope[] };
    expect(report.version).toBe(2);
    expect(report.diagnostics.length).toBeGreaterThan(0);
    for (const d of report.diagnostics) expect(readEnvelope(d).ok).toBe(true);
    expect(report.diagnostics[0]).toMatchObject({ code: 'KILN_SYNTAX_ERROR', outcome: 'degraded', location: { kind: 'position', file: 'src/broken.ts' } });

    const tampered = (name: string, change: Partial<DiagnosticEnvelope> | Record<string, unknown>) => {
      const file = join(tmp, name);
      const r = JSON.parse(readFileSync(recorded, 'utf8')) as { diagnostics: Record<string, unknown>[] };
      r.diagnostics[0] = { ...r.diagnostics[0], ...change };
      writeFileSync(file, JSON.stringify(r));
      return file;
    };
    const newer = tampered('newer.json', { envelope: 2 });
    const unknownOutcome = tampered('outcome.json', { outcome: 'succeeded' });
    const [same, refusedVersion, refusedOutcome] = await Promise.all([
      kiln('diff', recorded, syntax, '--no-store', '--workers', '0', '--format', 'json'),
      kiln('diff', newer, syntax, '--no-store', '--workers', '0'),
      kiln('diff', unknownOutcome, syntax, '--no-store', '--workers', '0', '--format', 'json'),
    ]);
    // Read back: the recorded envelopes are in the result as they were written.
    expect(same.code, same.err).toBe(0);
    const diffed = JSON.parse(same.out) as { diagnostics: DiagnosticEnvelope[] };
    expect(diffed.diagnostics).toEqual(expect.arrayContaining(report.diagnostics));
    // An unknown version is a refusal, never a clean report.
    expect(refusedVersion.code).toBe(1);
    expect(refusedVersion.out).toBe('');
    expect(refusedVersion.err).toMatch(/^error KILN_ENVELOPE_UNSUPPORTED_VERSION: .*newer\.json diagnostics\[0\]: envelope version 2; this kiln reads version 1\n {2}hint: /);
    expect(refusedOutcome.code).toBe(1);
    expect(envelopesOf(refusedOutcome.err)).toEqual([expect.objectContaining({ code: 'KILN_ENVELOPE_INVALID', outcome: 'refused', message: expect.stringMatching(/outcome\.json diagnostics\[0\]: \/outcome must be equal to one of the allowed values/) })]);
  });
});
