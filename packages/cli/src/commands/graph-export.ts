/**
 * `kiln graph export <dir> [--allow-errors [--check]] [--out FILE] [--tsconfig NAME]`: one package's
 * codegraph as JSONL (records from @kiln/core `exportGraph`), to stdout or a file. Diagnostics go to
 * stderr. Checked mode (the default) builds and type-checks the program; `--allow-errors` is a tolerant
 * export from syntax alone (no program: every source fact `syntax_inferred`); `--allow-errors --check`
 * is tolerant with the type checker (error-free files `compiler_unchecked`, compiler diagnostics as
 * records).
 *
 * Exit codes as every kiln command: 0 a graph was written (in --allow-errors mode even when the
 * project has errors: they are records of the graph), 1 checked mode refused a project that does not
 * type-check, or a missing path; 2 usage.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { diagnostic, exportGraph, formatDiagnostic, graphText, KilnError, type GraphExportOptions } from '@kiln/core';
import { TRACE_FLAGS, TRACE_HELP, type Io } from '../common.js';

/** Diagnostics printed on stderr for a graph that was exported (all of them are records in it). */
const MAX_PRINTED = 20;

interface ExportCliOptions {
  allowErrors?: boolean;
  check?: boolean;
  out?: string;
  tsconfig?: string;
  store?: string | false;
  workers?: string;
}

/** Adds `export` under the `graph` command. `setExit` records the process exit code. */
export function registerGraphExport(graph: Command, io: Io, setExit: (code: number) => void): void {
  graph
    .command('export')
    .description('write the codegraph of a package as JSONL: header, nodes (package, namespace, file, module, declaration, import, export, reference, call, diagnostic) and edges, each with its provenance')
    .argument('<dir>', 'the package directory (its package.json and tsconfig)')
    .option('--allow-errors', 'tolerant: export whatever parses, from syntax alone (no program; every source fact syntax_inferred, references per declaration, no call sites)')
    .option('--check', 'with --allow-errors: build the program and run the type checker (references and calls it resolves, compiler diagnostics as records; broken modules get syntax facts only); checked mode always does')
    .option('--out <file>', 'write the JSONL to this file instead of stdout')
    .option('--tsconfig <name>', 'tsconfig file name relative to the package (default: tsconfig.lib.json, tsconfig.build.json, tsconfig.json)')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'do not read or write the local store')
    .option('--workers <n>', 'worker threads for parsing (default: one per core but one, at least 1; 0 = no pool)')
    .option(TRACE_FLAGS, TRACE_HELP)
    .action(async (dir: string, o: ExportCliOptions) => {
      const options: GraphExportOptions = { mode: o.allowErrors ? 'allow-errors' : 'checked' };
      if (o.allowErrors && !o.check) options.syntax = true;
      if (o.tsconfig !== undefined) options.tsConfig = o.tsconfig;
      if (o.store === false) options.store = false;
      else if (typeof o.store === 'string') options.store = o.store;
      if (o.workers !== undefined) {
        const n = Number(o.workers);
        if (!Number.isInteger(n) || n < 0) throw new KilnError(diagnostic('KILN_USAGE', `--workers must be an integer ≥ 0, got "${o.workers}"`, { producer: 'cli' }));
        options.workers = n;
      }
      const result = await exportGraph(dir, options);
      // A refused export prints every error (they are why); an exported graph holds its diagnostics as
      // records, so the terminal gets the first few and a count, not hundreds of lines.
      const shown = result.ok ? result.diagnostics.slice(0, MAX_PRINTED) : result.diagnostics;
      if (shown.length) io.err(shown.map(formatDiagnostic).join('\n'));
      if (shown.length < result.diagnostics.length) {
        io.err(`… and ${result.diagnostics.length - shown.length} more diagnostic(s), recorded in the graph as \`diagnostic\` records (kiln graph summary lists them by code)`);
      }
      if (!result.ok) {
        setExit(1);
        return;
      }
      const text = graphText(result);
      if (o.out === undefined) {
        io.out(text);
        return;
      }
      const file = resolve(o.out);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      const header = result.records[0]!;
      const counts = header.kind === 'header' ? header.counts : { nodes: 0, edges: 0 };
      io.out(`${o.out}: ${counts.nodes} nodes, ${counts.edges} edges (${result.mode}${header.kind === 'header' ? `, snapshot ${header.snapshot.id.slice(0, 12)}` : ''})`);
    });
}
