/**
 * Where a query or a pack gets its graph: a JSONL file written by `kiln graph export` (`--graph FILE`),
 * or an export of a package directory made on the spot (`exportGraph`). With a directory, the
 * package root it belongs to is also the source tree that freshness and source text are read from.
 *
 * Several directories or graph files give one merged graph (query/merge.ts) rooted at the directories'
 * common ancestor, which is then the source tree.
 *
 * Invariants: I/O only when called; a graph file goes through `readGraph` (schema version checked,
 * known records validated, unknown kinds kept opaque); an export that checked mode refuses is a
 * KilnError carrying the export's first error (its other diagnostics are returned with it);
 * the source directory is the package root by the exporter's rule (nearest package.json upwards),
 * because every path in the graph is relative to it.
 */
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { diagnostic, KilnError, type Diagnostic } from '../../diagnostics/diagnostic.js';
import { exportGraph, type GraphSession } from '../export.js';
import { readGraph } from '../read.js';
import type { GraphMode } from '../records.js';
import { GraphIndex } from './graph-index.js';
import { mergeGraphs, type GraphPart } from './merge.js';
import type { QueryGraph, QueryHeader, QueryRecord } from './model.js';

export interface LoadGraphOptions {
  /** A codegraph JSONL file, or several (one per package: they are merged). */
  graph?: string | readonly string[];
  /**
   * A package directory: exported now when no graph file is given, and the source tree either way. Several
   * directories give one merged graph of their packages (each graph file paired with its directory by
   * package name), rooted at their common ancestor.
   */
  dir?: string | readonly string[];
  /** Export mode when exporting (default `checked`). */
  mode?: GraphMode;
  /** tsconfig file name relative to the package (as `exportGraph`). */
  tsConfig?: string;
  store?: string | false;
  workers?: number;
  /** Keep what an export learnt for the next export of the same packages (a server's reindex). */
  session?: GraphSession;
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

function list(v: string | readonly string[] | undefined): string[] {
  return v === undefined ? [] : typeof v === 'string' ? [v] : [...v];
}

async function packageNameOf(root: string): Promise<string | undefined> {
  try {
    const v = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { name?: unknown };
    return typeof v.name === 'string' ? v.name : undefined;
  } catch {
    return undefined;
  }
}

function commonAncestor(dirs: readonly string[]): string {
  let common = dirs[0]!;
  for (const d of dirs.slice(1)) {
    while (common !== dirname(common) && !(d === common || d.startsWith(common.endsWith(sep) ? common : common + sep))) common = dirname(common);
  }
  return common;
}

async function readDocument(file: string): Promise<QueryGraph> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${file} does not exist or cannot be read`, { producer: 'graph' }));
  }
  const doc = readGraph(text);
  return { header: doc.header as unknown as QueryHeader, records: doc.records as unknown as QueryRecord[] };
}

export async function loadGraph(opts: LoadGraphOptions): Promise<LoadedGraph> {
  const files = list(opts.graph);
  const dirs = list(opts.dir);
  if (files.length > 1 || dirs.length > 1) return loadMerged(files, dirs, opts);
  return loadOne({ ...opts, ...(files.length ? { graph: files[0] } : { graph: undefined }), ...(dirs.length ? { dir: dirs[0] } : { dir: undefined }) });
}

async function loadMerged(files: string[], dirs: string[], opts: LoadGraphOptions): Promise<LoadedGraph> {
  for (const d of dirs) if (!(await isDirectory(d))) throw new KilnError(diagnostic('KILN_NOT_FOUND', `${d} is not a directory`, { producer: 'graph' }));
  const roots = [...new Set(dirs.map(graphRootOf))];
  const common = roots.length ? commonAncestor(roots) : undefined;
  const prefixOf = (root: string) => relative(common!, root).split(sep).join('/');
  const parts: GraphPart[] = [];
  const diagnostics: Diagnostic[] = [];
  if (files.length) {
    const names = await Promise.all(roots.map(packageNameOf));
    for (const f of files) {
      const g = await readDocument(f);
      const pkg = typeof g.header.package === 'string' ? g.header.package : undefined;
      if (!roots.length) {
        parts.push({ graph: g, prefix: pkg ?? `graph-${parts.length + 1}` });
        continue;
      }
      const i = names.findIndex((n) => n !== undefined && n === pkg);
      if (i < 0) throw new KilnError(diagnostic('KILN_USAGE', `${f} is the graph of ${pkg ?? 'an unnamed package'}, and no directory given is that package`, { producer: 'graph' }));
      parts.push({ graph: g, prefix: prefixOf(roots[i]!) });
    }
  } else {
    for (const root of roots) {
      const one = await loadOne({ ...opts, graph: undefined, dir: root });
      diagnostics.push(...one.diagnostics);
      parts.push({ graph: { header: one.index.header, records: [...one.index.records] }, prefix: prefixOf(root) });
    }
  }
  const index = new GraphIndex(mergeGraphs(parts));
  return { index, origin: files.length ? 'file' : 'export', ...(files.length && !roots.length ? {} : common ? { sourceDir: common } : {}), diagnostics };
}

async function loadOne(opts: { graph?: string | undefined; dir?: string | undefined } & Omit<LoadGraphOptions, 'graph' | 'dir'>): Promise<LoadedGraph> {
  if (opts.dir !== undefined && !(await isDirectory(opts.dir))) {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${opts.dir} is not a directory`, { producer: 'graph' }));
  }
  const sourceDir = opts.dir !== undefined ? graphRootOf(opts.dir) : undefined;
  if (opts.graph !== undefined) {
    const index = new GraphIndex(await readDocument(opts.graph));
    return { index, origin: 'file', ...(sourceDir ? { sourceDir } : {}), diagnostics: [] };
  }
  if (opts.dir === undefined) throw new KilnError(diagnostic('KILN_USAGE', 'give a graph file (--graph FILE) or a package directory', { producer: 'graph' }));
  const result = await exportGraph(opts.dir, {
    mode: opts.mode ?? 'checked',
    ...(opts.tsConfig !== undefined ? { tsConfig: opts.tsConfig } : {}),
    ...(opts.store !== undefined ? { store: opts.store } : {}),
    ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
    ...(opts.session ? { session: opts.session } : {}),
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
