/**
 * A graph `diagnostic` record as the diagnostic envelope (RFC 167; diagnostics/envelope.ts), so the
 * graph queries (summary, module) print and return the one record every other kiln diagnostic is.
 *
 * The record keeps the facts the envelope needs: kiln's code, the compiler's (`ts_code` → `tool`),
 * severity, producer, message, hint, and the span (→ a position location) or file (→ a file location);
 * a record with neither gets the envelope's "none" location with the reason. The outcome comes from
 * the registry, as for every envelope. A code this kiln does not know (a graph written by a newer
 * kiln) has no registry entry to take an outcome from: it gets no envelope (`envelope: null`) and is
 * printed as recorded, never dropped and never given an invented outcome.
 *
 * Invariants: pure; the text projection is `formatEnvelopeText` of the same envelope the JSON carries.
 */
import { formatEnvelopeText, NO_COMPILER_LOCATION, NO_LOCATION, type DiagnosticEnvelope, type EnvelopeLocation } from '../../diagnostics/envelope.js';
import { CODES, isDiagnosticCode, type Severity } from '../../diagnostics/codes.js';
import { DIAGNOSTIC_ENVELOPE_VERSION } from '../../version.js';
import { anchorOf, fileOf, nameOf, type QueryRecord } from './model.js';

export interface GraphDiagnosticView {
  id: string;
  code: string;
  severity: string | null;
  message: string;
  /** The record's graph anchor (`file:line` or `file:start-end`), as the other queries show. */
  anchor: string | null;
  /** The record as a diagnostic envelope; null only for a code this kiln does not know. */
  envelope: DiagnosticEnvelope | null;
}

const SEVERITIES: readonly string[] = ['error', 'warning', 'info'];
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function locationOf(r: QueryRecord, compiler: boolean): EnvelopeLocation {
  const s = r.span;
  if (s && typeof s.file === 'string' && typeof s.startLine === 'number') {
    const loc: EnvelopeLocation = { kind: 'position', file: s.file, line: s.startLine, column: typeof s.startColumn === 'number' ? s.startColumn : 1 };
    if (typeof s.endLine === 'number') loc.endLine = s.endLine;
    if (typeof s.endColumn === 'number') loc.endColumn = s.endColumn;
    return loc;
  }
  const file = fileOf(r);
  if (file) return { kind: 'file', file };
  return { kind: 'none', reason: compiler ? NO_COMPILER_LOCATION : NO_LOCATION };
}

/** The view of one `diagnostic` record: its envelope (when the code is known) and the fields it is sorted and filtered by. */
export function graphDiagnosticOf(r: QueryRecord): GraphDiagnosticView {
  const code = str(r.code) ?? nameOf(r);
  const recordedSeverity = str(r.severity);
  const view: GraphDiagnosticView = {
    id: r.id,
    code,
    severity: recordedSeverity ?? null,
    message: str(r.message) ?? '',
    anchor: anchorOf(r) ?? null,
    envelope: null,
  };
  if (!isDiagnosticCode(code)) return view;
  const entry = CODES[code];
  const tsCode = str(r.ts_code);
  const severity: Severity = recordedSeverity && SEVERITIES.includes(recordedSeverity) ? (recordedSeverity as Severity) : entry.severity;
  const e: DiagnosticEnvelope = {
    envelope: DIAGNOSTIC_ENVELOPE_VERSION,
    code,
    severity,
    outcome: entry.outcome,
    producer: str(r.producer) ?? 'graph',
    message: view.message,
    hint: str(r.hint) ?? entry.hint,
    location: locationOf(r, tsCode !== undefined),
    related: [],
  };
  if (tsCode) e.tool = { name: 'typescript', code: tsCode };
  view.severity = severity;
  view.envelope = e;
  return view;
}

/** The terminal lines of one view, indented: the envelope's text, or the record as recorded for an unknown code. */
export function graphDiagnosticText(d: GraphDiagnosticView, indent = '  '): string {
  const text = d.envelope
    ? formatEnvelopeText(d.envelope)
    : `${d.anchor ?? '(no location)'} - ${d.severity ?? '-'} ${d.code}: ${d.message}\n  (a code this kiln does not know: printed as recorded)`;
  return text
    .split('\n')
    .map((l) => indent + l)
    .join('\n');
}
