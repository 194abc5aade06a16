/**
 * Context packs, freshness: does the graph still describe the working tree? Compares every file the
 * graph read (source files and manifests, with their content hashes) with the tree: a file whose
 * content hash differs is `changed`, one that is gone is `deleted`, and a source file the exporter
 * would read that the graph does not know is `added`. Any of them makes the graph `stale`.
 *
 * A merged graph (several packages, query/merge.ts) is compared part by part under its common root.
 *
 * Invariants: reads files only when called (never at import); paths reported are the graph's own
 * (relative, POSIX), sorted in code-point order; no absolute path enters the result; without a source
 * directory the status is `unknown`, never `fresh`.
 */
import { readFile } from 'node:fs/promises';
import { join, posix, relative, sep } from 'node:path';
import { sha256Hex } from '../../digest/hash.js';
import { buildOutputDirs, listSourceFiles } from '../../view/files.js';
import type { GraphIndex } from '../query/graph-index.js';
import { partsOf } from '../query/merge.js';
import { byCodePoint, snapshotIdOf } from '../query/model.js';

export type FreshnessStatus = 'fresh' | 'stale' | 'unknown';

export interface Freshness {
  status: FreshnessStatus;
  snapshot: string;
  /** Files compared (sources and manifests the graph read). */
  checked: number;
  changed: string[];
  added: string[];
  deleted: string[];
}

/** Every (path, content hash) the graph says it read: file records and the package's manifests. */
export function graphFiles(index: GraphIndex): Map<string, string> {
  const files = new Map<string, string>();
  for (const r of index.nodes.values()) {
    if (r.kind === 'file' && typeof r.path === 'string' && typeof r.content_hash === 'string') files.set(r.path, r.content_hash);
    if (r.kind === 'package' && Array.isArray(r.manifests)) {
      for (const m of r.manifests as { path?: unknown; content_hash?: unknown }[]) {
        if (typeof m?.path === 'string' && typeof m.content_hash === 'string') files.set(m.path, m.content_hash);
      }
    }
  }
  return files;
}

export async function checkFreshness(index: GraphIndex, sourceDir?: string): Promise<Freshness> {
  const snapshot = snapshotIdOf(index.header);
  if (sourceDir === undefined) return { status: 'unknown', snapshot, checked: 0, changed: [], added: [], deleted: [] };
  const files = graphFiles(index);
  const changed: string[] = [];
  const deleted: string[] = [];
  const paths = [...files.keys()].sort(byCodePoint);
  await Promise.all(
    paths.map(async (p) => {
      // a manifest outside the package (../../tsconfig.base.json) is compared like any other file
      let bytes: Buffer;
      try {
        bytes = await readFile(join(sourceDir, p));
      } catch {
        deleted.push(p);
        return;
      }
      if (sha256Hex(bytes) !== files.get(p)) changed.push(p);
    }),
  );
  // the source files each package's export would read now (a merged graph: each part's root)
  const current: string[] = [];
  for (const prefix of (partsOf(index.header) ?? [{ prefix: '' }]).map((p) => p.prefix)) {
    const dir = prefix ? join(sourceDir, prefix) : sourceDir;
    try {
      const outDirs = await buildOutputDirs(dir);
      const listed = await listSourceFiles(dir, outDirs.map((d) => relative(dir, join(dir, d)).split(sep).join('/')));
      for (const f of listed) current.push(prefix ? posix.join(prefix, f) : f);
    } catch {
      // an unreadable tree: its graph files are reported deleted above already
    }
  }
  const added = current.filter((p) => !files.has(p));
  changed.sort(byCodePoint);
  deleted.sort(byCodePoint);
  added.sort(byCodePoint);
  const stale = changed.length + deleted.length + added.length > 0;
  return { status: stale ? 'stale' : 'fresh', snapshot, checked: paths.length, changed, added, deleted };
}
