/**
 * Diagnostics are data first: a structured record with a stable code from the registry. What kiln
 * prints or returns is the record's versioned envelope (diagnostics/envelope.ts): terminal text and
 * JSON are two projections of that one record. A diagnostic with no location says so (`file`/`line`
 * absent here, `location: { kind: "none", reason }` in the envelope) rather than inventing one. Paths
 * in diagnostics are relative to the root being digested, never absolute.
 */
import { CODES, type DiagnosticCode, type Severity } from './codes.js';
import { formatEnvelopeText, toEnvelope } from './envelope.js';

/** A related location of a diagnostic ("'x' is declared here"), as the compiler reports it. */
export interface DiagnosticRelated {
  file?: string;
  line?: number;
  column?: number;
  message: string;
}

export interface Diagnostic {
  code: DiagnosticCode;
  severity: Severity;
  message: string;
  hint: string;
  /** Relative path of the file, when the diagnostic is about one. */
  file?: string;
  /** 1-based line and column, when the diagnostic has a location. */
  line?: number;
  column?: number;
  /** Which part of kiln produced it (parse, store, pool, …). */
  producer: string;
  /** 1-based end of the range, when the producer knows it. */
  endLine?: number;
  endColumn?: number;
  /** Why there is no location, when the producer can say (the envelope says so either way). */
  noLocation?: string;
  /** The TypeScript compiler's own code (`TS2322`), when the diagnostic is the compiler's. */
  tsCode?: string;
  /** Related locations the producer reported with it. */
  related?: DiagnosticRelated[];
}

export function diagnostic(
  code: DiagnosticCode,
  message: string,
  fields: { file?: string; line?: number; column?: number; endLine?: number; endColumn?: number; noLocation?: string; producer: string },
): Diagnostic {
  const entry = CODES[code];
  const d: Diagnostic = { code, severity: entry.severity, message, hint: entry.hint, producer: fields.producer };
  if (fields.file !== undefined) d.file = fields.file;
  if (fields.line !== undefined) d.line = fields.line;
  if (fields.column !== undefined) d.column = fields.column;
  if (fields.endLine !== undefined) d.endLine = fields.endLine;
  if (fields.endColumn !== undefined) d.endColumn = fields.endColumn;
  if (fields.noLocation !== undefined && fields.file === undefined) d.noLocation = fields.noLocation;
  return d;
}

/** An error that carries a diagnostic; callers branch on `.code`, never on the message. */
export class KilnError extends Error {
  readonly code: DiagnosticCode;
  readonly diagnostic: Diagnostic;
  constructor(d: Diagnostic) {
    super(`${d.code}: ${d.message}`);
    this.name = 'KilnError';
    this.code = d.code;
    this.diagnostic = d;
  }
}

/**
 * The terminal text of a diagnostic: the text projection of its envelope (`formatEnvelopeText`), so
 * it says exactly what the JSON record says.
 */
export function formatDiagnostic(d: Diagnostic): string {
  return formatEnvelopeText(toEnvelope(d));
}
