/**
 * `kiln graph summary`: what a graph holds — snapshot identity, mode, counts per record kind and per
 * provenance tier, degraded records, packages with their modules, and every diagnostic.
 *
 * Invariants: pure over a GraphIndex; deterministic (every list sorted in code-point order; counts as
 * plain objects with sorted keys), so two runs over the same graph print the same bytes.
 */
import { graphDiagnosticOf, type GraphDiagnosticView } from './diagnostic.js';
import type { GraphIndex } from './graph-index.js';
import { anchorOf, byCodePoint, nameOf, packageRefOf, snapshotIdOf, type QueryRecord } from './model.js';

export interface GraphSummary {
  kind: 'kiln-graph-summary';
  snapshot: string;
  schema_version: number | string;
  mode: string | null;
  languages: string[];
  toolchain: unknown;
  records: number;
  nodes: number;
  edges: number;
  /** Edges whose `to` or `from` names no node of the graph (external or unresolved). */
  dangling_edges: number;
  by_kind: Record<string, number>;
  by_provenance: Record<string, number>;
  degraded: number;
  packages: { id: string; name: string; modules: number; declarations: number }[];
  modules: { id: string; path: string; package: string | null; declarations: number; diagnostics: number }[];
  /** Every diagnostic record, as the diagnostic envelope (graph/query/diagnostic.ts). */
  diagnostics: GraphDiagnosticView[];
}

function sortedCounts(m: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of [...m.keys()].sort(byCodePoint)) out[k] = m.get(k)!;
  return out;
}

export function graphSummary(index: GraphIndex): GraphSummary {
  const byKind = new Map<string, number>();
  const byProv = new Map<string, number>();
  let degraded = 0;
  for (const r of index.records) {
    byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
    const p = typeof r.provenance === 'string' ? r.provenance : '(none)';
    byProv.set(p, (byProv.get(p) ?? 0) + 1);
    if (r.degraded === true) degraded++;
  }
  let dangling = 0;
  for (const e of index.edges) if (!index.nodes.has(e.from) || !index.nodes.has(e.to)) dangling++;

  const modules = index.ofKind('module').map((m) => {
    const members = index.inModule(m.id).map((id) => index.node(id)!);
    return {
      id: m.id,
      path: nameOf(m),
      package: packageRefOf(m) ?? null,
      declarations: members.filter((r) => r.kind === 'declaration').length,
      diagnostics: members.filter((r) => r.kind === 'diagnostic').length,
    };
  });
  modules.sort((a, b) => byCodePoint(a.path, b.path) || byCodePoint(a.id, b.id));

  const packages = index.ofKind('package').map((p) => {
    const name = nameOf(p);
    const mine = (r: QueryRecord) => packageRefOf(r) === name || packageRefOf(r) === p.id;
    return {
      id: p.id,
      name,
      modules: index.ofKind('module').filter(mine).length,
      declarations: index.ofKind('declaration').filter(mine).length,
    };
  });
  packages.sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a.id, b.id));

  const diagnostics = index.ofKind('diagnostic').map(graphDiagnosticOf);
  diagnostics.sort((a, b) => byCodePoint(a.anchor ?? '', b.anchor ?? '') || byCodePoint(a.code, b.code) || byCodePoint(a.id, b.id));

  const h = index.header;
  return {
    kind: 'kiln-graph-summary',
    snapshot: snapshotIdOf(h),
    schema_version: h.schema_version,
    mode: typeof h.mode === 'string' ? h.mode : null,
    languages: Array.isArray(h.languages) ? [...h.languages].sort(byCodePoint) : [],
    toolchain: h.toolchain ?? null,
    records: index.records.length,
    nodes: index.nodes.size,
    edges: index.edges.length,
    dangling_edges: dangling,
    by_kind: sortedCounts(byKind),
    by_provenance: sortedCounts(byProv),
    degraded,
    packages,
    modules,
    diagnostics,
  };
}
