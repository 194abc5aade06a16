/**
 * Several packages' graphs as one: a monorepo's packages each export their own codegraph (paths
 * relative to their own root), and a query or a pack over several of them needs one index in which
 * `packages/client/src/index.ts` and `packages/server/src/index.ts` stay apart and edges from one
 * package to another's declarations resolve (declaration ids already name their package).
 *
 * Invariants: pure; records are copied, never mutated; every path a record carries (span files, file
 * paths, module files, diagnostic files, manifest paths) is re-rooted at the common root by its part's
 * POSIX prefix and normalised; the merged header lists the parts (package, prefix, snapshot) in the
 * order given and a snapshot id that is a digest of theirs, so it moves when any part moves; a record
 * id present in several parts is kept once (the first).
 */
import { posix } from 'node:path';
import { digestParts } from '../../digest/hash.js';
import { byCodePoint, snapshotIdOf, type QueryGraph, type QueryHeader, type QueryRecord } from './model.js';

export interface GraphPart {
  graph: QueryGraph;
  /** Where the part's package root lies, relative to the common root (POSIX; '' for the root itself). */
  prefix: string;
}

export interface MergedPart {
  package: string | null;
  prefix: string;
  snapshot: string;
}

function rebase(prefix: string, p: string): string {
  return prefix ? posix.normalize(posix.join(prefix, p)) : p;
}

function rebaseRecord(r: QueryRecord, prefix: string): QueryRecord {
  if (!prefix) return r;
  const out: QueryRecord = { ...r };
  if (r.span) out.span = { ...r.span, file: rebase(prefix, r.span.file) };
  if (typeof r.file === 'string') out.file = rebase(prefix, r.file);
  if (r.kind === 'file' && typeof r.path === 'string') out.path = rebase(prefix, r.path);
  if (r.kind === 'package' && Array.isArray(r.manifests)) {
    out.manifests = (r.manifests as { path?: unknown }[]).map((m) => (typeof m?.path === 'string' ? { ...m, path: rebase(prefix, m.path) } : m));
  }
  return out;
}

/** The parts of a merged header, or undefined for a single package's graph. */
export function partsOf(h: QueryHeader): MergedPart[] | undefined {
  return Array.isArray(h.parts) ? (h.parts as MergedPart[]) : undefined;
}

export function mergeGraphs(parts: readonly GraphPart[]): QueryGraph {
  if (parts.length === 1 && parts[0]!.prefix === '') return parts[0]!.graph;
  const headers = parts.map((p) => p.graph.header);
  const modes = [...new Set(headers.map((h) => String(h.mode ?? '')))];
  const languages = [...new Set(headers.flatMap((h) => (Array.isArray(h.languages) ? h.languages : [])))].sort(byCodePoint);
  const merged: MergedPart[] = parts.map((p) => ({ package: typeof p.graph.header.package === 'string' ? p.graph.header.package : null, prefix: p.prefix, snapshot: snapshotIdOf(p.graph.header) }));
  const files = headers.reduce((n, h) => n + (typeof h.snapshot?.files === 'number' ? h.snapshot.files : 0), 0);
  const header: QueryHeader = {
    kind: 'header',
    format: 'kiln-codegraph',
    schema_version: headers[0]?.schema_version ?? 0,
    mode: modes.length === 1 ? modes[0]! : 'mixed',
    root: '.',
    package: null,
    packages: merged.map((m) => m.package).filter((x): x is string => !!x),
    languages,
    toolchain: headers[0]?.toolchain ?? null,
    snapshot: { id: digestParts('kiln-graph-merged/1', merged.map((m) => `${m.prefix}\u0001${m.package ?? ''}\u0001${m.snapshot}`)), files },
    parts: merged,
  };
  const records: QueryRecord[] = [];
  for (const p of parts) for (const r of p.graph.records) records.push(rebaseRecord(r, p.prefix));
  return { header, records };
}
