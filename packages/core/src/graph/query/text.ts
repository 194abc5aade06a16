/**
 * Text projections of the graph queries (summary, find, module, neighbors), shared by the CLI and the
 * MCP server. The JSON output is the query result itself; these are views of the same data (a
 * diagnostic is printed as its envelope's text projection, graph/query/diagnostic.ts).
 *
 * Invariants: pure; deterministic (they print the results in the order the queries return them).
 */
import { graphDiagnosticText } from './diagnostic.js';
import type { FindHit } from './find.js';
import type { ModuleView } from './module-view.js';
import type { Neighborhood } from './neighbors.js';
import type { GraphSummary } from './summary.js';

const PROV_SHORT: Record<string, string> = { compiler_checked: 'checked', compiler_unchecked: 'unchecked', syntax_inferred: 'syntax', manifest_declared: 'manifest' };
const prov = (p: string | null) => (p ? PROV_SHORT[p] ?? p : '-');

export function formatSummaryText(s: GraphSummary): string {
  const lines: string[] = [];
  lines.push(`snapshot ${s.snapshot || '(none)'}  schema ${s.schema_version}  mode ${s.mode ?? '-'}  languages ${s.languages.join(', ') || '-'}`);
  lines.push(`${s.records} records: ${s.nodes} nodes, ${s.edges} edges (${s.dangling_edges} dangling), ${s.degraded} degraded`);
  lines.push('', 'by kind:');
  for (const [k, n] of Object.entries(s.by_kind)) lines.push(`  ${String(n).padStart(7)}  ${k}`);
  lines.push('', 'by provenance:');
  for (const [k, n] of Object.entries(s.by_provenance)) lines.push(`  ${String(n).padStart(7)}  ${k}`);
  lines.push('', `packages (${s.packages.length}):`);
  for (const p of s.packages) lines.push(`  ${p.name}  ${p.modules} modules, ${p.declarations} declarations`);
  lines.push('', `modules (${s.modules.length}):`);
  for (const m of s.modules) lines.push(`  ${m.path.padEnd(32)} ${String(m.declarations).padStart(4)} declarations${m.diagnostics ? `, ${m.diagnostics} diagnostics` : ''}`);
  lines.push('', `diagnostics (${s.diagnostics.length}):`);
  for (const d of s.diagnostics) lines.push(graphDiagnosticText(d));
  return lines.join('\n');
}

export function formatFindText(query: string, hits: FindHit[]): string {
  if (hits.length === 0) return `no identifier matches "${query}"`;
  const lines = hits.map((h) => {
    const what = h.kind === 'declaration' ? `${h.decl_kind ?? 'declaration'} ${h.path}` : `${h.kind} ${h.path}`;
    const where = h.anchor ?? h.module ?? '';
    return `${String(h.score).padStart(3)}  ${h.match.padEnd(17)} ${what}${h.exported ? ' (exported)' : ''}  ${where}\n       ${h.id}`;
  });
  return lines.join('\n');
}

export function formatModuleText(m: ModuleView): string {
  const lines: string[] = [];
  lines.push(`module ${m.path}  (${m.file ?? 'no file'}; package ${m.package ?? '-'}; ${prov(m.provenance)}${m.degraded ? '; degraded' : ''}${m.internal ? '; internal' : ''})`);
  lines.push(`  id ${m.id}`);
  lines.push('', `declarations (${m.declarations.length}):`);
  for (const d of m.declarations) {
    const depth = d.path.split('.').length - 1;
    lines.push(`  ${'  '.repeat(depth)}${d.decl_kind ?? 'declaration'} ${d.path}${d.exported ? ' [exported]' : ''}  ${d.anchor ?? ''}  ${prov(d.provenance)}${d.degraded ? ' degraded' : ''}`);
  }
  lines.push('', `imports (${m.imports.length}):`);
  for (const i of m.imports) {
    const target = i.target_path ?? i.target ?? (i.external ? 'external' : 'unresolved');
    lines.push(`  ${i.specifier} → ${target}${i.type_only ? ' (type only)' : ''}${i.bindings.length ? `: ${i.bindings.join(', ')}` : ''}`);
  }
  lines.push('', `exports (${m.exports.length}):`);
  for (const e of m.exports) lines.push(`  ${e.name}${e.targets.length ? ` → ${e.targets.join(', ')}` : ''}`);
  lines.push('', `imported by (${m.imported_by.length}):`);
  for (const i of m.imported_by) lines.push(`  ${i.path}${i.via.length ? ` via ${i.via.join(', ')}` : ''}`);
  if (m.diagnostics.length) {
    lines.push('', `diagnostics (${m.diagnostics.length}):`);
    for (const d of m.diagnostics) lines.push(graphDiagnosticText(d));
  }
  return lines.join('\n');
}

export function formatNeighborsText(n: Neighborhood): string {
  const lines: string[] = [];
  const c = n.center;
  lines.push(`${c.kind} ${c.decl_kind ? `${c.decl_kind} ` : ''}${c.name}  ${c.anchor ?? ''}`);
  lines.push(`  id ${c.id}`);
  lines.push(`depth ${n.depth}, edges ${n.edge_kinds?.join(',') ?? 'all'}, direction ${n.direction}: ${n.nodes.length} nodes, ${n.edges.length} edges${n.truncated ? ' (truncated)' : ''}`);
  const short = new Map<string, string>([[c.id, '@']]);
  n.nodes.forEach((x, i) => short.set(x.id, `n${i + 1}`));
  lines.push('', 'nodes:');
  for (const x of n.nodes) {
    lines.push(`  ${short.get(x.id)!.padEnd(5)} ${x.distance}  ${x.kind}${x.decl_kind ? ` ${x.decl_kind}` : ''} ${x.name}${x.missing ? ' (not in the graph)' : ''}  ${x.anchor ?? ''}  ${prov(x.provenance)}`);
    lines.push(`          ${x.id}`);
  }
  lines.push('', 'edges (from → to):');
  for (const e of n.edges) lines.push(`  ${short.get(e.from) ?? e.from} —${e.kind}${e.count && e.count > 1 ? `×${e.count}` : ''}→ ${short.get(e.to) ?? e.to}  ${prov(e.provenance)}`);
  lines.push('', '(@ is the center)');
  return lines.join('\n');
}
