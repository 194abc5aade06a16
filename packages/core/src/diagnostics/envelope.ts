/**
 * The diagnostic envelope (RFC 167, "Diagnostic facts and rendering"; SPEC §8): the one versioned
 * record of every diagnostic kiln prints or returns, its own and the TypeScript compiler's.
 *
 *   { envelope: 1, code, severity, outcome, producer, message, hint,
 *     location: { kind: "position", file, line, column, endLine?, endColumn? }
 *             | { kind: "file", file }            (about a whole file: no position)
 *             | { kind: "none", reason },         (no location, and why: none is invented)
 *     related: [{ message, location }],
 *     tool?: { name: "typescript", code: "TS2322" } }
 *
 * `code`, `severity` and `outcome` come from the one registry (codes.ts); a compiler diagnostic has
 * kiln's code (KILN_TYPESCRIPT_ERROR, KILN_TSCONFIG_INVALID, …) and keeps the compiler's as `tool.code`.
 *
 * Projections: `formatEnvelopeText` (the terminal: `file:line:col - error TS2322: message`, the form
 * editors and terminals link) and `JSON.stringify(envelope)`; both are functions of the envelope alone
 * (and the registry's `wraps`), so the text never says more or less than the record. Nothing parses
 * the text back.
 *
 * Reading (`readEnvelope`): a record of another envelope version, or one that does not match the
 * schema (diagnostic-envelope.schema.json: an unknown outcome or severity included), is never read as
 * success: it is refused with a coded diagnostic of its own (KILN_ENVELOPE_UNSUPPORTED_VERSION,
 * KILN_ENVELOPE_INVALID; severity error). Additive optional fields are allowed and ignored.
 *
 * Invariant: nothing is loaded at import time; ajv and the schema load on the first `readEnvelope`
 * (writers never validate at run time: the type is the contract, the tests validate).
 */
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { DIAGNOSTIC_ENVELOPE_VERSION } from '../version.js';
import { CODES, isDiagnosticCode, type CodeEntry, type DiagnosticCode, type Outcome, type Severity } from './codes.js';
import type { Diagnostic, DiagnosticRelated } from './diagnostic.js';

export type EnvelopeLocation =
  | { kind: 'position'; file: string; line: number; column: number; endLine?: number; endColumn?: number }
  | { kind: 'file'; file: string }
  | { kind: 'none'; reason: string };

export interface EnvelopeRelated {
  message: string;
  location: EnvelopeLocation;
}

export interface DiagnosticEnvelope {
  /** The envelope version (DIAGNOSTIC_ENVELOPE_VERSION). */
  envelope: number;
  /** A code of the registry (a record read back may carry a newer kiln's code). */
  code: string;
  severity: Severity;
  /** What the diagnostic means for the result (the registry's outcome of the code). */
  outcome: Outcome;
  /** Which part of kiln produced it (build, graph, cli, parse, store, …). */
  producer: string;
  message: string;
  hint: string;
  location: EnvelopeLocation;
  related: EnvelopeRelated[];
  /** The other tool whose diagnostic this is, with that tool's own code. */
  tool?: { name: string; code: string };
}

/** Why a diagnostic has no location, when its producer did not say. */
export const NO_LOCATION = 'the producer reported no source location for it';
/** Why a compiler diagnostic has no location. */
export const NO_COMPILER_LOCATION = 'the compiler reported it without a file: it is about the program or its configuration as a whole';

function locationOf(d: { file?: string; line?: number; column?: number; endLine?: number; endColumn?: number; noLocation?: string }, fallback: string): EnvelopeLocation {
  if (d.file === undefined || d.file === '') return { kind: 'none', reason: d.noLocation ?? fallback };
  if (d.line === undefined) return { kind: 'file', file: d.file };
  const loc: Extract<EnvelopeLocation, { kind: 'position' }> = { kind: 'position', file: d.file, line: d.line, column: d.column ?? 1 };
  if (d.endLine !== undefined) loc.endLine = d.endLine;
  if (d.endColumn !== undefined) loc.endColumn = d.endColumn;
  return loc;
}

/** The envelope of a diagnostic: its facts, its code's outcome from the registry, and its location or why it has none. */
export function toEnvelope(d: Diagnostic): DiagnosticEnvelope {
  const entry: CodeEntry = CODES[d.code];
  const e: DiagnosticEnvelope = {
    envelope: DIAGNOSTIC_ENVELOPE_VERSION,
    code: d.code,
    severity: d.severity,
    outcome: entry.outcome,
    producer: d.producer,
    message: d.message,
    hint: d.hint,
    location: locationOf(d, d.tsCode ? NO_COMPILER_LOCATION : NO_LOCATION),
    related: (d.related ?? []).map((r: DiagnosticRelated) => ({ message: r.message, location: locationOf(r, NO_COMPILER_LOCATION) })),
  };
  if (d.tsCode) e.tool = { name: 'typescript', code: d.tsCode };
  return e;
}

/** `file:line:col`, `file`, or nothing (no location: the text invents none). */
function locationText(l: EnvelopeLocation): string {
  return l.kind === 'position' ? `${l.file}:${l.line}:${l.column}` : l.kind === 'file' ? l.file : '';
}

/**
 * The terminal projection: `file:line:col - severity CODE: message`, related locations indented below,
 * then the hint. A code that wraps another tool's diagnostics (the registry's `wraps`: the compiler's
 * errors and warnings) shows that tool's code in its place and no hint, as the compiler prints it
 * (`src/a.ts:2:14 - error TS2322: …`); another kiln code with a tool code shows both
 * (`error KILN_TSCONFIG_INVALID (TS5023): …`).
 */
export function formatEnvelopeText(e: DiagnosticEnvelope): string {
  const where = locationText(e.location);
  const entry: CodeEntry | undefined = isDiagnosticCode(e.code) ? CODES[e.code] : undefined;
  const wrapped = e.tool !== undefined && entry?.wraps === e.tool.name;
  const shown = e.tool ? (wrapped ? e.tool.code : `${e.code} (${e.tool.code})`) : e.code;
  const head = `${where ? `${where} - ` : ''}${e.severity} ${shown}: ${e.message}`;
  const related = e.related.map((r) => {
    const w = locationText(r.location);
    return `\n  ${w ? `${w}: ` : ''}${r.message}`;
  });
  return wrapped ? head + related.join('') : `${head}${related.join('')}\n  hint: ${e.hint}`;
}

/** The JSON projection: the envelope itself, one line (a stream of them is JSON Lines). */
export function formatEnvelopeJson(e: DiagnosticEnvelope): string {
  return JSON.stringify(e);
}

// ---- reading ---------------------------------------------------------------------------------

export type EnvelopeRead = { ok: true; envelope: DiagnosticEnvelope } | { ok: false; diagnostic: Diagnostic };

const require = createRequire(import.meta.url);
let validator: ValidateFunction | undefined;
let schema: Record<string, unknown> | undefined;

/** The envelope's JSON Schema (2020-12), a fresh copy; also `@kiln/core/diagnostic-envelope.schema.json`. */
export function envelopeSchema(): Record<string, unknown> {
  schema ??= require('./envelope.schema.json') as Record<string, unknown>;
  return structuredClone(schema);
}

function validate(): ValidateFunction {
  if (!validator) {
    // ajv is CommonJS; its 2020-12 build exports the class as `default`.
    const mod = require('ajv/dist/2020') as { default: new (o: object) => { compile: (s: object) => ValidateFunction } };
    schema ??= require('./envelope.schema.json') as Record<string, unknown>;
    validator = new mod.default({ allErrors: false, strict: true }).compile(schema);
  }
  return validator;
}

function firstError(errors: ErrorObject[]): string {
  // oneOf reports its branches' failures first, then its own; the deepest path says most.
  const e = [...errors].sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
  if (!e) return 'does not match the envelope schema';
  const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${allowed ? ` (${allowed.map((v) => JSON.stringify(v)).join(', ')})` : ''}`;
}

/**
 * Read one diagnostic record: its envelope when it is one of this version that matches the schema,
 * else a coded diagnostic saying why it was refused — a failure for the caller, never a success.
 * `source` names where the record came from (a file, `report.json diagnostics[3]`), for the message.
 */
export function readEnvelope(value: unknown, source = 'a diagnostic record'): EnvelopeRead {
  const refuse = (code: DiagnosticCode, why: string): EnvelopeRead => {
    const entry = CODES[code];
    return { ok: false, diagnostic: { code, severity: entry.severity, message: `${source}: ${why}`, hint: entry.hint, producer: 'envelope', noLocation: 'it is about a record, not a place in a source file' } };
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return refuse('KILN_ENVELOPE_INVALID', `not a JSON object (${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`);
  const version = (value as { envelope?: unknown }).envelope;
  if (version === undefined) return refuse('KILN_ENVELOPE_INVALID', 'no envelope version (the field "envelope")');
  if (version !== DIAGNOSTIC_ENVELOPE_VERSION) {
    return refuse('KILN_ENVELOPE_UNSUPPORTED_VERSION', `envelope version ${JSON.stringify(version)}; this kiln reads version ${DIAGNOSTIC_ENVELOPE_VERSION}`);
  }
  const v = validate();
  if (!v(value)) return refuse('KILN_ENVELOPE_INVALID', firstError(v.errors ?? []));
  return { ok: true, envelope: value as DiagnosticEnvelope };
}
