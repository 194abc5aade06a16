/**
 * `kiln diff <before> <after>`: two versions compared declaration by declaration, with a reason for
 * each. A side is a directory or file digested now, or (before) a JSON report recorded with `kiln digest
 * --format json`; a report of the previous digest schema is compared by digesting the other side in it.
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
  supportedDigestSchemas,
  type Diagnostic,
  type DigestReport,
} from '@kiln/core';
import { EXIT_FAILURE, treeOptions, withCommonOptions, type CommonOptions, type Io, type SetExit } from '../common.js';
import { formatDiagnostics, formatDiffText } from '../format.js';

/** A recorded JSON report (from `kiln digest --format json`) or a directory to digest now. */
async function loadSide(path: string, o: CommonOptions, io: Io, schema?: number): Promise<DigestReport> {
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
    return parsed;
  }
  return digestTree(path, { ...treeOptions(o, io), ...(schema !== undefined ? { digestSchema: schema } : {}) });
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
    const before = await loadSide(beforePath, o, io);
    const diagnostics: Diagnostic[] = [];
    let staleSchema: number | undefined;
    if (before.digest_schema !== DIGEST_SCHEMA) {
      if (before.digest_schema === PREVIOUS_DIGEST_SCHEMA) staleSchema = before.digest_schema;
      else {
        throw new KilnError(
          diagnostic('KILN_DIGEST_UNSUPPORTED_SCHEMA', `${beforePath} was recorded with digest_schema ${before.digest_schema}; this kiln computes ${supportedDigestSchemas().join(' and ')}`, { producer: 'cli' }),
        );
      }
    }
    const after = await loadSide(afterPath, o, io, staleSchema);
    const result = diffReports(before, after, staleSchema !== undefined ? { staleSchema } : {});
    diagnostics.push(...before.diagnostics, ...after.diagnostics, ...result.diagnostics);
    if (o.format === 'json') io.out(JSON.stringify({ ...result, diagnostics }, null, 2));
    else {
      io.out(formatDiffText(result, !!o.all));
      if (diagnostics.length) io.err(formatDiagnostics(diagnostics));
    }
    if (diagnostics.some((d) => d.severity === 'error')) setExit(EXIT_FAILURE);
  });
}
