/**
 * Where a query or a pack gets its graph: a JSONL file written by `kiln graph export` (`--graph FILE`),
 * or an export of a package directory made on the spot (`exportGraph`). With a directory, the
 * package root it belongs to is also the source tree that freshness and source text are read from.
 *
 * Invariants: I/O only when called; a graph file goes through `readGraph` (schema version checked,
 * known records validated, unknown kinds kept opaque); an export that checked mode refuses is a
 * KilnError carrying the export's first error (its other diagnostics are returned with it);
 * the source directory is the package root by the exporter's rule (nearest package.json upwards),
 * because every path in the graph is relative to it.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { diagnostic, KilnError, type Diagnostic } from '../../diagnostics/diagnostic.js';
import { exportGraph } from '../export.js';
import { readGraph } from '../read.js';
import type { GraphMode } from '../records.js';
import { GraphIndex } from './graph-index.js';
import type { QueryHeader, QueryRecord } from './model.js';

export interface LoadGraphOptions {
  /** A codegraph JSONL file. */
  graph?: string;
  /** A package directory: exported now when no graph file is given; the source tree either way. */
  dir?: string;
  /** Export mode when exporting (default `checked`). */
  mode?: GraphMode;
  /** tsconfig file name relative to the package (as `exportGraph`). */
  tsConfig?: string;
  store?: string | false;
  workers?: number;
}

export interface LoadedGraph {
  index: GraphIndex;
  origin: 'file' | 'export';
  /** The package root the graph's paths are relative to, when a directory was given. */
  sourceDir?: string;
  diagnostics: Diagnostic[];
}

/** The package root of a directory, by exportGraph's rule: the nearest ancestor holding a package.json. */
export function graphRootOf(dir: string): string {
  const start = resolve(dir);
  for (let d = start; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
    if (dirname(d) === d) return start;
  }
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

export async function loadGraph(opts: LoadGraphOptions): Promise<LoadedGraph> {
  if (opts.dir !== undefined && !(await isDirectory(opts.dir))) {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${opts.dir} is not a directory`, { producer: 'graph' }));
  }
  const sourceDir = opts.dir !== undefined ? graphRootOf(opts.dir) : undefined;
  if (opts.graph !== undefined) {
    let text: string;
    try {
      text = await readFile(opts.graph, 'utf8');
    } catch {
      throw new KilnError(diagnostic('KILN_NOT_FOUND', `${opts.graph} does not exist or cannot be read`, { producer: 'graph' }));
    }
    const doc = readGraph(text);
    const index = new GraphIndex({ header: doc.header as unknown as QueryHeader, records: doc.records as unknown as QueryRecord[] });
    return { index, origin: 'file', ...(sourceDir ? { sourceDir } : {}), diagnostics: [] };
  }
  if (opts.dir === undefined) throw new KilnError(diagnostic('KILN_USAGE', 'give a graph file (--graph FILE) or a package directory', { producer: 'graph' }));
  const result = await exportGraph(opts.dir, {
    mode: opts.mode ?? 'checked',
    ...(opts.tsConfig !== undefined ? { tsConfig: opts.tsConfig } : {}),
    ...(opts.store !== undefined ? { store: opts.store } : {}),
    ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
  });
  if (!result.ok) {
    const first = result.diagnostics.find((d) => d.severity === 'error') ?? diagnostic('KILN_GRAPH_CHECK_FAILED', `${opts.dir} could not be exported`, { producer: 'graph' });
    const err = new KilnError(first);
    (err as KilnError & { diagnostics?: Diagnostic[] }).diagnostics = result.diagnostics;
    throw err;
  }
  const [header, ...records] = result.records;
  const index = new GraphIndex({ header: header as unknown as QueryHeader, records: records as unknown as QueryRecord[] });
  return { index, origin: 'export', ...(sourceDir ? { sourceDir } : {}), diagnostics: result.diagnostics };
}
