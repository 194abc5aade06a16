/**
 * The codegraph's diagnostics: the tsconfig's and the compiler's diagnostics collected as `TsDiag`
 * (messages sanitized, locations relative to the package root), turned into diagnostics for people
 * (stderr) and into `diagnostic` records with a `diagnoses` edge to what they are about (the innermost
 * declaration at their position, else the module, else the package).
 *
 * Invariants: no absolute path reaches a message or a record (messageSanitizer, `file` relative to the
 * package root; `absFile` is only used to place a diagnostic, never written); a record's id is a
 * function of its code, location and message; compiler diagnostics are `compiler_checked` (the
 * compiler did report them), tsconfig ones `manifest_declared`, kiln's own extraction diagnostics
 * `syntax_inferred`.
 */
import { relative, sep } from 'node:path';
import type * as TS from 'typescript';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { CODES, type DiagnosticCode } from '../diagnostics/codes.js';
import { digestParts } from '../digest/hash.js';
import { fileKind } from '../parse/language.js';
import type { DigestReport } from '../view/report.js';
import { diagnosticFile, type ConfigLoad } from './checked.js';
import type { Builder } from './builder.js';
import type { DiagnosticNode, GraphLanguage, GraphSpan, Provenance } from './records.js';

/** The producer of the graph's own diagnostics. */
export const PRODUCER = 'graph';
const toPosix = (p: string) => p.split(sep).join('/');

/** A tsconfig or compiler diagnostic, as the graph keeps it. */
export interface TsDiag {
  code: DiagnosticCode;
  tsCode: string;
  severity: 'error' | 'warning';
  message: string;
  /** Relative to the package root (absent: no location). */
  file?: string;
  absFile?: string;
  span?: GraphSpan;
}

/** The tsconfig's own diagnostics (none unless it could not be used). */
export function configDiagnostics(load: ConfigLoad, root: string, sanitize: (m: string) => string): TsDiag[] {
  const out: TsDiag[] = [];
  if (load.status !== 'invalid') return out;
  for (const e of load.errors) out.push(tsDiag(load.ts, e, 'KILN_TSCONFIG_INVALID', root, sanitize));
  if (!out.length) {
    out.push({ code: 'KILN_TSCONFIG_INVALID', tsCode: 'TS5083', severity: 'error', message: `${toPosix(relative(root, load.configPath))} could not be read`, file: toPosix(relative(root, load.configPath)) });
  }
  return out;
}

/** The compiler's errors and warnings (suggestions and messages are dropped). */
export function compilerDiagnostics(ts: typeof TS, raw: readonly TS.Diagnostic[], root: string, sanitize: (m: string) => string): TsDiag[] {
  const out: TsDiag[] = [];
  for (const d of raw) {
    if (d.category !== ts.DiagnosticCategory.Error && d.category !== ts.DiagnosticCategory.Warning) continue;
    out.push(tsDiag(ts, d, d.category === ts.DiagnosticCategory.Error ? 'KILN_TYPESCRIPT_ERROR' : 'KILN_TYPESCRIPT_WARNING', root, sanitize));
  }
  return out;
}

function tsDiag(ts: typeof TS, d: TS.Diagnostic, code: DiagnosticCode, root: string, sanitize: (m: string) => string): TsDiag {
  const out: TsDiag = {
    code,
    tsCode: `TS${d.code}`,
    severity: d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning',
    message: sanitize(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  };
  if (d.file) {
    out.absFile = d.file.fileName;
    out.file = diagnosticFile(root, d.file.fileName);
    if (d.start !== undefined) {
      const s = ts.getLineAndCharacterOfPosition(d.file, d.start);
      const e = ts.getLineAndCharacterOfPosition(d.file, d.start + (d.length ?? 0));
      out.span = { file: out.file, startLine: s.line + 1, startColumn: s.character + 1, endLine: e.line + 1, endColumn: e.character + 1 };
    }
  }
  return out;
}

/** A TsDiag for people (stderr): kiln's code, the compiler's as `tsCode` (the envelope's tool code). */
export function toDiagnostic(d: TsDiag): Diagnostic & { tsCode: string } {
  const fields: Parameters<typeof diagnostic>[2] = { producer: PRODUCER };
  if (d.file !== undefined) fields.file = d.file;
  if (d.span) {
    fields.line = d.span.startLine;
    fields.column = d.span.startColumn;
    fields.endLine = d.span.endLine;
    fields.endColumn = d.span.endColumn;
  }
  return { ...diagnostic(d.code, d.message, fields), tsCode: d.tsCode };
}

/** Why checked mode refused the project (KILN_GRAPH_CHECK_FAILED), with its errors. */
export function checkFailure(load: ConfigLoad, errors: readonly TsDiag[]): Diagnostic[] {
  const why = load.status === 'not-found'
    ? `no tsconfig in the package (tried ${load.tried.join(', ')}): a checked graph needs a program`
    : `the project does not type-check (${errors.length} error${errors.length === 1 ? '' : 's'})`;
  const failure: Diagnostic[] = [diagnostic('KILN_GRAPH_CHECK_FAILED', why, { producer: PRODUCER })];
  if (load.status === 'not-found') failure.push(diagnostic('KILN_TSCONFIG_NOT_FOUND', `tried ${load.tried.join(', ')}`, { producer: PRODUCER }));
  for (const d of errors) failure.push(toDiagnostic(d));
  return failure;
}

/** Why no checker ran (the KILN_GRAPH_UNCHECKED message). */
export function uncheckedReason(load: ConfigLoad, root: string, wanted: boolean): string {
  if (load.status === 'not-found') return `no tsconfig in the package (tried ${load.tried.join(', ')}): exported from syntax alone`;
  if (load.status === 'invalid') return `${toPosix(relative(root, load.configPath))} could not be used: exported from syntax alone`;
  return wanted ? 'exported from syntax alone' : 'tolerant export from syntax alone: no program was built, references are syntax_inferred and there are no call sites (add --check to run the type checker)';
}

/** The innermost declaration of a package file containing a position, or its module. */
function anchorOf(b: Builder, rel: string, line: number, column: number): string {
  const s = b.slices.get(rel);
  if (!s) return b.pkgId;
  let best = -1;
  s.decls.forEach((d, i) => {
    const sp = d.span;
    const after = line > sp.startLine || (line === sp.startLine && column >= sp.startColumn);
    const before = line < sp.endLine || (line === sp.endLine && column <= sp.endColumn);
    if (after && before) best = i; // declarations are listed parents first: the last hit is the innermost
  });
  return best >= 0 ? b.identityOf(rel, best) : b.modId(rel);
}

/** The `diagnostic` records: kiln's extraction diagnostics, the tsconfig's and compiler's, and why no checker ran. */
export function emitDiagnostics(b: Builder, report: DigestReport, tsDiags: TsDiag[], unchecked: string | undefined): void {
  const add = (d: {
    code: DiagnosticCode;
    tsCode: string | null;
    message: string;
    producer: string;
    file?: string;
    absFile?: string;
    span?: GraphSpan;
    provenance: Provenance;
  }) => {
    const entry = CODES[d.code];
    const file = d.file ?? null;
    const where = d.span ? `${d.span.startLine}:${d.span.startColumn}` : '-';
    const id = `diagnostic:${d.code}${d.tsCode ? `/${d.tsCode}` : ''}@${file ?? '-'}:${where}#${digestParts('kiln-graph-diagnostic/1', [d.message]).slice(0, 12)}`;
    const lang: GraphLanguage = file ? (fileKind(file)?.language ?? 'json') : 'json';
    const rec: DiagnosticNode = {
      kind: 'diagnostic',
      id,
      language: lang,
      provenance: d.provenance,
      degraded: false,
      ...(d.span ? { span: d.span } : {}),
      package: b.pkg.name,
      code: d.code,
      ts_code: d.tsCode,
      severity: entry.severity,
      message: d.message,
      hint: entry.hint,
      producer: d.producer,
      file,
    };
    b.out.addNode(rec);
    let anchor: string = b.pkgId;
    if (file && b.slices.has(file)) anchor = d.span ? anchorOf(b, file, d.span.startLine, d.span.startColumn) : b.modId(file);
    else if (d.absFile) {
      const place = b.placeOf(d.absFile);
      if (place) anchor = place.moduleId;
    }
    b.out.addEdge('diagnoses', id, anchor, d.provenance, lang, {});
  };
  for (const d of report.diagnostics) {
    if (d.producer !== 'extract' && d.producer !== 'view') continue;
    const span = d.file && d.line !== undefined ? { file: d.file, startLine: d.line, startColumn: d.column ?? 1, endLine: d.line, endColumn: d.column ?? 1 } : undefined;
    add({
      code: d.code,
      tsCode: null,
      message: d.message,
      producer: d.producer,
      ...(d.file !== undefined ? { file: d.file } : {}),
      ...(span ? { span } : {}),
      provenance: d.code === 'KILN_MANIFEST_INVALID' ? 'manifest_declared' : 'syntax_inferred',
    });
  }
  for (const d of tsDiags) {
    add({
      code: d.code,
      tsCode: d.tsCode,
      message: d.message,
      producer: 'typescript',
      ...(d.file !== undefined ? { file: d.file } : {}),
      ...(d.absFile !== undefined ? { absFile: d.absFile } : {}),
      ...(d.span ? { span: d.span } : {}),
      provenance: d.code === 'KILN_TSCONFIG_INVALID' ? 'manifest_declared' : 'compiler_checked',
    });
  }
  if (unchecked) {
    add({ code: 'KILN_GRAPH_UNCHECKED', tsCode: null, message: unchecked, producer: PRODUCER, provenance: 'syntax_inferred' });
  }
}
