/**
 * Resolving what a person typed to one node: an exact id, a module path or file, or a name that only
 * one identifier carries. Ambiguity and absence are errors with the candidates, never a guess.
 *
 * Invariants: pure over a GraphIndex; throws KilnError (KILN_GRAPH_NODE_NOT_FOUND,
 * KILN_GRAPH_AMBIGUOUS) with candidates listed in the find ranking's order.
 */
import { diagnostic, KilnError } from '../../diagnostics/diagnostic.js';
import { findIdentifiers } from './find.js';
import type { GraphIndex } from './graph-index.js';
import { byCodePoint, nameOf, type QueryRecord } from './model.js';

function listCandidates(ids: readonly string[]): string {
  const shown = ids.slice(0, 8).join(', ');
  return ids.length > 8 ? `${shown}, … (${ids.length} in all)` : shown;
}

/** One node for `ref`: its id; else a module by path or file; else the single exact name match. */
export function resolveNode(index: GraphIndex, ref: string, producer = 'graph'): QueryRecord {
  const direct = index.node(ref);
  if (direct) return direct;
  const mod = index.findModule(ref);
  if (mod) return mod;
  const exact = findIdentifiers(index, ref, { limit: 50, kinds: ['declaration', 'module', 'namespace', 'package', 'file'] }).filter((h) => h.match === 'exact' || h.match === 'exact-ignore-case');
  const sameCase = exact.filter((h) => h.match === 'exact');
  const pick = sameCase.length > 0 ? sameCase : exact;
  if (pick.length === 1) return index.node(pick[0]!.id)!;
  if (pick.length > 1) {
    throw new KilnError(diagnostic('KILN_GRAPH_AMBIGUOUS', `"${ref}" names ${pick.length} nodes: ${listCandidates(pick.map((h) => h.id))}`, { producer }));
  }
  const near = findIdentifiers(index, ref, { limit: 5 });
  throw new KilnError(
    diagnostic('KILN_GRAPH_NODE_NOT_FOUND', `no node "${ref}" in the graph${near.length ? `; did you mean ${near.map((h) => h.id).join(', ')}?` : ''}`, { producer }),
  );
}

/** One module for `ref`: a module id, module path, file path, or a unique path suffix (`shapes`, `src/shapes`). */
export function resolveModule(index: GraphIndex, ref: string, producer = 'graph'): QueryRecord {
  const m = index.findModule(ref) ?? index.findModule(ref.replace(/^\.\//, ''));
  if (m) return m;
  const clean = ref.replace(/^\.\//, '').replace(/\.(d\.)?[cm]?[jt]sx?$/, '');
  const matches = index
    .ofKind('module')
    .filter((r) => {
      const p = nameOf(r).replace(/\.(d\.)?[cm]?[jt]sx?$/, '');
      return p === clean || p.endsWith(`/${clean}`);
    })
    .map((r) => r.id)
    .sort(byCodePoint);
  if (matches.length === 1) return index.node(matches[0]!)!;
  if (matches.length > 1) throw new KilnError(diagnostic('KILN_GRAPH_AMBIGUOUS', `"${ref}" names ${matches.length} modules: ${listCandidates(matches)}`, { producer }));
  throw new KilnError(diagnostic('KILN_GRAPH_NODE_NOT_FOUND', `no module "${ref}" in the graph`, { producer }));
}
