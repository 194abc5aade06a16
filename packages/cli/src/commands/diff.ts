/**
 * `kiln diff <before> <after>`: two versions compared declaration by declaration, with a reason for
 * each. A side is a directory or file digested now, or (before) a JSON report recorded with `kiln digest
 * --format json`; a report of the previous digest schema is compared by digesting the other side in it.
 * A recorded report's diagnostics are diagnostic envelopes: each is read with `readEnvelope`, and one of
 * an unknown envelope version or not of the schema refuses the report (exit 1), never reads as clean.
 * Exit 1 when a diagnostic of severity error was reported.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  DIGEST_REPORT_VERSION,
  DIGEST_SCHEMA,
  KilnError,
  PREVIOUS_DIGEST_SCHEMA,
  diagnostic,
  diffReports,
  digestTree,
  readEnvelope,
  supportedDigestSchemas,
  type Diagnostic,
  type DiagnosticEnvelope,
  type DigestReport,
} from '@kiln/core';
import { EXIT_FAILURE, treeOptions, withCommonOptions, type CommonOptions, type Io, type SetExit } from '../common.js';
import { formatDiagnostics, formatDiffText, jsonReport } from '../format.js';

/** A side: its report, and its diagnostics (a recorded report's as the envelopes it holds). */
interface Side {
  report: DigestReport;
  diagnostics: (Diagnostic | DiagnosticEnvelope)[];
}

/** A recorded JSON report (from `kiln digest --format json`) or a directory to digest now. */
async function loadSide(path: string, o: CommonOptions, io: Io, schema?: number): Promise<Side> {
  let st;
  try {
    st = await stat(path);
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${path} does not exist`, { producer: 'cli' }));
  }
  if (st.isFile() && path.endsWith('.json')) {
    let parsed: DigestReport;
    try {
      parsed = JSON.parse(await readFile(path, 'utf8')) as DigestReport;
    } catch (e) {
      throw new KilnError(diagnostic('KILN_RECORD_INVALID', `${path}: ${(e as Error).message}`, { producer: 'cli' }));
    }
    if (parsed?.kind !== 'kiln-digest-report' || parsed.version !== DIGEST_REPORT_VERSION || !Array.isArray(parsed.declarations)) {
      throw new KilnError(diagnostic('KILN_RECORD_INVALID', `${path} is not a kiln digest report of version ${DIGEST_REPORT_VERSION}`, { producer: 'cli' }));
    }
    const recorded: unknown[] = Array.isArray(parsed.diagnostics) ? parsed.diagnostics : [];
    const diagnostics: DiagnosticEnvelope[] = [];
    for (const [i, d] of recorded.entries()) {
      const read = readEnvelope(d, `${path} diagnostics[${i}]`);
      // A diagnostic that cannot be read is not a clean report: refuse it, with the reader's code.
      if (!read.ok) throw new KilnError(read.diagnostic);
      diagnostics.push(read.envelope);
    }
    return { report: { ...parsed, diagnostics: [] }, diagnostics };
  }
  const report = await digestTree(path, { ...treeOptions(o, io), ...(schema !== undefined ? { digestSchema: schema } : {}) });
  return { report, diagnostics: report.diagnostics };
}

export function registerDiff(program: Command, io: Io, setExit: SetExit): void {
  withCommonOptions(
    program
      .command('diff')
      .description('compare two versions declaration by declaration: added, removed, changed, re-documented, moved, unchanged — and why')
      .argument('<before>', 'directory, file, or a JSON report recorded with `kiln digest --format json`')
      .argument('<after>', 'directory or file')
      .option('--all', 'list unchanged declarations too'),
  ).action(async (beforePath: string, afterPath: string, o: CommonOptions & { all?: boolean }) => {
    const { report: before, diagnostics: beforeDiagnostics } = await loadSide(beforePath, o, io);
    const diagnostics: (Diagnostic | DiagnosticEnvelope)[] = [];
    let staleSchema: number | undefined;
    if (before.digest_schema !== DIGEST_SCHEMA) {
      if (before.digest_schema === PREVIOUS_DIGEST_SCHEMA) staleSchema = before.digest_schema;
      else {
        throw new KilnError(
          diagnostic('KILN_DIGEST_UNSUPPORTED_SCHEMA', `${beforePath} was recorded with digest_schema ${before.digest_schema}; this kiln computes ${supportedDigestSchemas().join(' and ')}`, { producer: 'cli' }),
        );
      }
    }
    const { report: after, diagnostics: afterDiagnostics } = await loadSide(afterPath, o, io, staleSchema);
    const result = diffReports(before, after, staleSchema !== undefined ? { staleSchema } : {});
    diagnostics.push(...beforeDiagnostics, ...afterDiagnostics, ...result.diagnostics);
    if (o.format === 'json') io.out(jsonReport({ ...result, diagnostics }));
    else {
      io.out(formatDiffText(result, !!o.all));
      if (diagnostics.length) io.err(formatDiagnostics(diagnostics));
    }
    if (diagnostics.some((d) => d.severity === 'error')) setExit(EXIT_FAILURE);
  });
}
