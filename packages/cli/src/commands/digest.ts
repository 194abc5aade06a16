/**
 * `kiln digest <path>`: every declaration of a package tree or file — identity, kind, language, semantic
 * and doc digests, digest schema, span. Exit 1 when a diagnostic of severity error was reported. With
 * `--format json` the report's diagnostics are diagnostic envelopes.
 */
import { Option, type Command } from 'commander';
import { digestTree, supportedDigestSchemas } from '@kiln/core';
import { EXIT_FAILURE, treeOptions, withCommonOptions, type CommonOptions, type Io, type SetExit } from '../common.js';
import { formatDiagnostics, formatDigestText, jsonReport } from '../format.js';

export function registerDigest(program: Command, io: Io, setExit: SetExit): void {
  withCommonOptions(
    program
      .command('digest')
      .description('print every declaration of a package tree or file: identity, kind, language, semantic and doc digests, digest schema, span')
      .argument('<path>', 'a package directory, a source directory or a single file')
      .addOption(new Option('--digest-schema <n>', 'digest projection to compute').choices(supportedDigestSchemas().map(String))),
  ).action(async (path: string, o: CommonOptions & { digestSchema?: string }) => {
    const report = await digestTree(path, { ...treeOptions(o, io), ...(o.digestSchema ? { digestSchema: Number(o.digestSchema) } : {}) });
    if (o.format === 'json') io.out(jsonReport(report));
    else {
      io.out(formatDigestText(report));
      if (report.diagnostics.length) io.err(formatDiagnostics(report.diagnostics));
    }
    if (report.diagnostics.some((d) => d.severity === 'error')) setExit(EXIT_FAILURE);
  });
}
