/**
 * `kiln graph neighbors <id> [--depth N] [--edges kinds] [--direction out|in|both]`: the nodes reachable
 * from one node within N edges (breadth-first), and the edges walked to reach them, each with its
 * direction as stored (from → to).
 *
 * Invariants: pure over a GraphIndex; deterministic (breadth-first in the index's adjacency order;
 * nodes listed by distance, kind, name, id; edges by kind, from, to); dangling edges are reported with
 * their missing end marked `missing: true`, never dropped; at most `limit` nodes (then `truncated`).
 */
import type { Direction, GraphIndex } from './graph-index.js';
import { resolveNode } from './lookup.js';
import { anchorOf, byCodePoint, declKindOf, nameOf } from './model.js';

export interface NeighborNode {
  id: string;
  kind: string;
  decl_kind: string | null;
  name: string;
  distance: number;
  anchor: string | null;
  provenance: string | null;
  /** The id names no node of this graph (an edge dangles there). */
  missing?: true;
}

export interface NeighborEdge {
  id: string;
  kind: string;
  from: string;
  to: string;
  provenance: string | null;
  count?: number;
}

export interface Neighborhood {
  kind: 'kiln-graph-neighbors';
  center: NeighborNode;
  depth: number;
  edge_kinds: string[] | null;
  direction: Direction;
  nodes: NeighborNode[];
  edges: NeighborEdge[];
  truncated: boolean;
}

export interface NeighborOptions {
  depth?: number;
  edges?: readonly string[];
  direction?: Direction;
  /** At most this many nodes besides the center (default 500). */
  limit?: number;
}

export function neighborhood(index: GraphIndex, ref: string, opts: NeighborOptions = {}): Neighborhood {
  const depth = opts.depth ?? 1;
  const direction = opts.direction ?? 'both';
  const limit = opts.limit ?? 500;
  const center = resolveNode(index, ref);
  const kinds = opts.edges && opts.edges.length ? [...new Set(opts.edges)].sort(byCodePoint) : undefined;

  const dist = new Map<string, number>([[center.id, 0]]);
  const edges = new Map<string, NeighborEdge>();
  let frontier = [center.id];
  let truncated = false;
  for (let d = 1; d <= depth && frontier.length && !truncated; d++) {
    const next: string[] = [];
    for (const id of frontier) {
      if (id !== center.id && !index.node(id)) continue; // do not walk on from a missing node
      for (const a of index.adjacent(id, { ...(kinds ? { kinds } : {}), direction })) {
        if (!dist.has(a.other)) {
          if (dist.size - 1 >= limit) {
            truncated = true;
            continue;
          }
          dist.set(a.other, d);
          next.push(a.other);
        }
        const e = a.edge;
        if (!edges.has(e.id)) {
          const ne: NeighborEdge = { id: e.id, kind: e.kind, from: e.from, to: e.to, provenance: e.provenance ?? null };
          if (typeof e.record.count === 'number') ne.count = e.record.count;
          edges.set(e.id, ne);
        }
      }
    }
    frontier = next;
  }
  const describe = (id: string, distance: number): NeighborNode => {
    const r = index.node(id);
    if (!r) return { id, kind: '(missing)', decl_kind: null, name: id, distance, anchor: null, provenance: null, missing: true };
    return { id, kind: r.kind, decl_kind: declKindOf(r) ?? null, name: nameOf(r), distance, anchor: anchorOf(r) ?? null, provenance: typeof r.provenance === 'string' ? r.provenance : null };
  };
  const nodes = [...dist].filter(([id]) => id !== center.id).map(([id, d]) => describe(id, d));
  nodes.sort((a, b) => a.distance - b.distance || byCodePoint(a.kind, b.kind) || byCodePoint(a.name, b.name) || byCodePoint(a.id, b.id));
  // only edges whose both ends are in the neighbourhood
  const list = [...edges.values()].filter((e) => dist.has(e.from) && dist.has(e.to));
  list.sort((a, b) => byCodePoint(a.kind, b.kind) || byCodePoint(a.from, b.from) || byCodePoint(a.to, b.to) || byCodePoint(a.id, b.id));
  return { kind: 'kiln-graph-neighbors', center: describe(center.id, 0), depth, edge_kinds: kinds ?? null, direction, nodes, edges: list, truncated };
}
