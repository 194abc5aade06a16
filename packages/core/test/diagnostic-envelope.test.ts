/**
 * Issue 14, point 8 — the diagnostic envelope (RFC 167): every diagnostic kiln prints is one versioned
 * record (registry code, severity, outcome, producer, message, hint, location or why there is none,
 * related locations, the tool's own code); the JSON validates against the shipped schema; the terminal
 * text is a projection of the same record; an envelope of an unknown version, or one that does not
 * match the schema (an unknown outcome included), is refused with a code of its own — never read as
 * success. The compiler's diagnostics come from a real failing build of a fixture.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CODES,
  compileProject,
  DIAGNOSTIC_ENVELOPE_VERSION,
  diagnostic,
  envelopeSchema,
  formatDiagnostic,
  formatEnvelopeJson,
  formatEnvelopeText,
  OUTCOMES,
  readEnvelope,
  toEnvelope,
  type DiagnosticCode,
  type DiagnosticEnvelope,
} from '@kiln/core';
import { cleanup, libTree, tempDir, writeTree } from './lib/build-fixtures.js';

const codes = Object.keys(CODES) as DiagnosticCode[];
const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

/** What a consumer does with a record: parse the JSON projection and read it. */
function roundTrip(e: DiagnosticEnvelope) {
  return readEnvelope(JSON.parse(formatEnvelopeJson(e)));
}

describe('the diagnostic envelope', () => {
  it('every registry code: a valid envelope with the code\'s outcome; no location says so; text = projection of the record', () => {
    for (const code of codes) {
      const d = diagnostic(code, 'something happened', { producer: 'test' });
      const e = toEnvelope(d);
      expect(e).toMatchObject({ envelope: DIAGNOSTIC_ENVELOPE_VERSION, code, severity: CODES[code].severity, outcome: CODES[code].outcome, producer: 'test', message: 'something happened', hint: CODES[code].hint, related: [] });
      // No location: the record says so, with a reason, and the text invents none.
      expect(e.location).toEqual({ kind: 'none', reason: expect.stringMatching(/\w{4}/) });
      const read = roundTrip(e);
      expect(read, code).toEqual({ ok: true, envelope: e });
      expect(formatDiagnostic(d)).toBe(formatEnvelopeText(e));
      expect(formatEnvelopeText(e)).toBe(`${CODES[code].severity} ${code}: something happened\n  hint: ${CODES[code].hint}`);
    }
  });

  it('the schema file is the one @kiln/core exports, and pins the version, severities and outcomes to the registry', () => {
    const require = createRequire(import.meta.url);
    const shipped = JSON.parse(readFileSync(require.resolve('@kiln/core/diagnostic-envelope.schema.json'), 'utf8')) as Record<string, never>;
    expect(shipped).toEqual(envelopeSchema());
    const props = shipped['properties'] as Record<string, { const?: unknown; enum?: unknown[] }>;
    expect(props['envelope']!.const).toBe(DIAGNOSTIC_ENVELOPE_VERSION);
    expect(props['outcome']!.enum).toEqual(Object.keys(OUTCOMES));
    expect(new Set(props['severity']!.enum)).toEqual(new Set(codes.map((c) => CODES[c].severity)));
  });

  it('a position, a whole file, related locations and the tool\'s code are kept; the text links file:line:col', () => {
    const d = { ...diagnostic('KILN_TYPESCRIPT_ERROR', "Expected 1 arguments, but got 0.", { file: 'src/a.ts', line: 4, column: 1, endLine: 4, endColumn: 4, producer: 'build' }), tsCode: 'TS2554', related: [{ file: 'src/a.ts', line: 1, column: 19, message: "An argument for 'n' was not provided." }] };
    const e = toEnvelope(d);
    expect(e).toMatchObject({
      code: 'KILN_TYPESCRIPT_ERROR',
      outcome: 'failed',
      tool: { name: 'typescript', code: 'TS2554' },
      location: { kind: 'position', file: 'src/a.ts', line: 4, column: 1, endLine: 4, endColumn: 4 },
      related: [{ message: "An argument for 'n' was not provided.", location: { kind: 'position', file: 'src/a.ts', line: 1, column: 19 } }],
    });
    expect(roundTrip(e).ok).toBe(true);
    // The compiler's own diagnostic: its code where editors look for it, no kiln hint.
    expect(formatEnvelopeText(e)).toBe("src/a.ts:4:1 - error TS2554: Expected 1 arguments, but got 0.\n  src/a.ts:1:19: An argument for 'n' was not provided.");
    // Another kiln code with a compiler code shows both, and kiln's hint.
    const config = toEnvelope({ ...diagnostic('KILN_TSCONFIG_INVALID', "Unknown compiler option 'notAnOption'.", { file: 'tsconfig.lib.json', producer: 'build' }), tsCode: 'TS5023' });
    expect(config.location).toEqual({ kind: 'file', file: 'tsconfig.lib.json' });
    expect(formatEnvelopeText(config)).toBe(`tsconfig.lib.json - error KILN_TSCONFIG_INVALID (TS5023): Unknown compiler option 'notAnOption'.\n  hint: ${CODES.KILN_TSCONFIG_INVALID.hint}`);
    // A compiler diagnostic without a file says why it has none.
    expect(toEnvelope({ ...diagnostic('KILN_TSCONFIG_INVALID', 'No inputs were found.', { producer: 'build' }), tsCode: 'TS18003' }).location).toEqual({ kind: 'none', reason: expect.stringMatching(/compiler reported it without a file/) });
  });

  it('an unknown or newer envelope version is refused with KILN_ENVELOPE_UNSUPPORTED_VERSION, never read as success', () => {
    const good = toEnvelope(diagnostic('KILN_SYNTAX_ERROR', "';' expected.", { file: 'src/a.ts', line: 2, column: 5, producer: 'parse' }));
    for (const version of [DIAGNOSTIC_ENVELOPE_VERSION + 1, 0, String(DIAGNOSTIC_ENVELOPE_VERSION), null]) {
      const r = readEnvelope({ ...good, envelope: version }, 'report.json diagnostics[0]');
      expect(r.ok, String(version)).toBe(false);
      if (r.ok) continue;
      expect(r.diagnostic).toMatchObject({ code: 'KILN_ENVELOPE_UNSUPPORTED_VERSION', severity: 'error' });
      expect(r.diagnostic.message).toContain('report.json diagnostics[0]: envelope version');
      // The refusal is itself a diagnostic with an envelope: refused, and it says it has no source location.
      expect(toEnvelope(r.diagnostic)).toMatchObject({ outcome: 'refused', location: { kind: 'none' } });
    }
  });

  it('a malformed record (an unknown outcome or severity, no location, a position without a line, no version) is KILN_ENVELOPE_INVALID', () => {
    const good = toEnvelope(diagnostic('KILN_SYNTAX_ERROR', "';' expected.", { file: 'src/a.ts', line: 2, column: 5, producer: 'parse' }));
    const { location: _location, ...noLocation } = good;
    const { envelope: _version, ...noVersion } = good;
    const bad: [string, unknown, RegExp][] = [
      ['unknown outcome', { ...good, outcome: 'succeeded' }, /\/outcome must be equal to one of the allowed values \("refused"/],
      ['unknown severity', { ...good, severity: 'fatal' }, /\/severity/],
      ['no location', noLocation, /location/],
      ['no reason for no location', { ...good, location: { kind: 'none' } }, /\/location/],
      ['a position without a line', { ...good, location: { kind: 'position', file: 'src/a.ts', column: 5 } }, /\/location/],
      ['no version', noVersion, /no envelope version/],
      ['not an object', [good], /not a JSON object \(an array\)/],
    ];
    for (const [what, record, why] of bad) {
      const r = readEnvelope(record);
      expect(r.ok, what).toBe(false);
      if (r.ok) continue;
      expect(r.diagnostic.code, what).toBe('KILN_ENVELOPE_INVALID');
      expect(r.diagnostic.message, what).toMatch(why);
    }
    // Additive optional fields are read (and ignored by this reader).
    expect(readEnvelope({ ...good, expected: 'number', actual: 'string' }).ok).toBe(true);
  });

  it('a real failing build: the compiler\'s diagnostics are envelopes with kiln\'s code, the TS code as the tool\'s, ranges and related locations', async () => {
    const root = tempDir('envelope-build');
    dirs.push(root);
    writeTree(root, libTree({ 'index.ts': "export function need(n: number): number {\n  return n;\n}\nexport const bad: number = 'x';\nexport const r = need();\n" }));
    const r = await compileProject({ projectRoot: root });
    expect(r.success).toBe(false);
    const envelopes = r.diagnostics.map(toEnvelope);
    expect(envelopes.map((e) => `${e.code} ${e.tool?.code}`)).toEqual(['KILN_TYPESCRIPT_ERROR TS2322', 'KILN_TYPESCRIPT_ERROR TS2554']);
    for (const e of envelopes) expect(roundTrip(e)).toEqual({ ok: true, envelope: e });
    expect(envelopes[0]).toMatchObject({ severity: 'error', outcome: 'failed', producer: 'build', location: { kind: 'position', file: 'src/index.ts', line: 4, column: 14, endLine: 4, endColumn: 17 } });
    expect(envelopes[1]!.related).toEqual([{ message: "An argument for 'n' was not provided.", location: { kind: 'position', file: 'src/index.ts', line: 1, column: 22, endLine: 1, endColumn: 31 } }]);
    expect(envelopes.map(formatEnvelopeText)).toEqual([
      "src/index.ts:4:14 - error TS2322: Type 'string' is not assignable to type 'number'.",
      "src/index.ts:5:18 - error TS2554: Expected 1 arguments, but got 0.\n  src/index.ts:1:22: An argument for 'n' was not provided.",
    ]);
  });
});
