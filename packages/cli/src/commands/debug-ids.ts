/**
 * `kiln debug-ids <dir...>`: post-process a wrapped tool's output folders (tsdown, vite, rollup, tsc) within
 * the same task — fill each map's missing `sourcesContent` from the sources beside it, give every JS file
 * and its map one content-derived debug ID, and ingest them into the local debug store — so what Nx
 * caches carries the IDs and the sources (`"build": "tsdown && kiln debug-ids dist"`). Idempotent.
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { defaultStoreDir, formatDiagnostic, prepareDebugArtifacts, toEnvelope } from '@kiln/core/debug';
import type { Io } from '../common.js';

export function registerDebugIds(program: Command, io: Io): void {
  program
    .command('debug-ids')
    .description("give a tool's emitted JS files and maps debug IDs and retained sources, and put them in the debug store")
    .argument('<dirs...>', 'output folders to post-process (node_modules and dot folders are skipped)')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-ingest', 'write the IDs and sources into the files only; store nothing')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (dirs: string[], o: { store?: string; ingest: boolean; format: 'text' | 'json' }) => {
      const cwd = process.cwd();
      const r = await prepareDebugArtifacts({ dirs: dirs.map((d) => resolve(d)), relativeTo: cwd, ...(o.ingest ? { storeDir: o.store ?? defaultStoreDir() } : {}) });
      if (o.format === 'json') {
        io.out(JSON.stringify({ artifacts: r.artifacts, ingested: r.records.length, diagnostics: r.diagnostics.map(toEnvelope) }, null, 2));
        return;
      }
      for (const d of r.diagnostics) io.err(formatDiagnostic(d));
      const changed = r.artifacts.filter((a) => a.changed).length;
      const filled = r.artifacts.reduce((s, a) => s + a.filled, 0);
      io.out(
        `kiln debug-ids: ${r.artifacts.length} JS file${r.artifacts.length === 1 ? '' : 's'} with maps in ${dirs.join(', ')}: ${changed} updated, ${filled} source text${filled === 1 ? '' : 's'} retained${o.ingest ? `, ${r.records.length} ingested` : ''}`,
      );
    });
}
