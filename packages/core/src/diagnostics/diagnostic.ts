/**
 * Diagnostics are data first: a structured record with a stable code from the registry. Terminal and
 * JSON output are two projections of the same record. A diagnostic with no location says so
 * (`file`/`line` absent) rather than inventing one. Paths in diagnostics are relative to the root
 * being digested, never absolute.
 */
import { CODES, type DiagnosticCode, type Severity } from './codes.js';

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
}

export function diagnostic(
  code: DiagnosticCode,
  message: string,
  fields: { file?: string; line?: number; column?: number; producer: string },
): Diagnostic {
  const entry = CODES[code];
  const d: Diagnostic = { code, severity: entry.severity, message, hint: entry.hint, producer: fields.producer };
  if (fields.file !== undefined) d.file = fields.file;
  if (fields.line !== undefined) d.line = fields.line;
  if (fields.column !== undefined) d.column = fields.column;
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

export function formatDiagnostic(d: Diagnostic): string {
  const where = d.file ? `${d.file}${d.line !== undefined ? `:${d.line}:${d.column ?? 1}` : ''}: ` : '';
  return `${where}${d.severity} ${d.code}: ${d.message}\n  hint: ${d.hint}`;
}
