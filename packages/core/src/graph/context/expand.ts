/**
 * Context packs, stage 2 — expansion: from the seeds over the graph's edges, with weights by edge kind
 * and direction (a call or reference carries more than an import, an import more than containment).
 * A node's proximity is its best path's product (seed score × edge weights × a per-hop decay × a
 * hub damping), plus a bounded bonus for further independent neighbours that lead to it.
 *
 * Invariants: pure; deterministic (a max-product best-first search with ties broken by id in
 * code-point order; the support bonus sums neighbours in the index's adjacency order); proximity is in
 * (0, 1]; every reached node keeps the edge it was reached by, so `--explain` can show the path.
 * Walks only through declarations, modules and diagnostics: packages, namespaces, files, import/export
 * clauses and use sites are either hubs (every node hangs off them) or twins of a module, and would
 * blur proximity.
 */
import type { GraphIndex } from '../query/graph-index.js';
import { byCodePoint } from '../query/model.js';
import type { Seed } from './seed.js';

/** Weight of following an edge of a kind, forwards (from → to) and backwards (to → from). */
export const EDGE_WEIGHTS: Readonly<Record<string, { out: number; in: number }>> = {
  calls: { out: 1.0, in: 0.85 }, // the callee of something relevant; its callers
  references: { out: 0.85, in: 0.7 },
  diagnoses: { out: 0.9, in: 0.9 }, // a diagnostic and what it is about
  documents: { out: 0.6, in: 0.5 }, // {@link X}
  imports: { out: 0.5, in: 0.4 }, // module → module
  defines: { out: 0.45, in: 0.6 }, // module → declaration, class → member
};
/** Multiplied in per hop, on top of the edge weight (not for `diagnoses`: a diagnostic annotates its node). */
export const HOP_DECAY = 0.5;
/** A type-only reference carries this much of a value reference. */
export const TYPE_ONLY_FACTOR = 0.85;
/** Nodes walked through. */
export const WALK_KINDS: ReadonlySet<string> = new Set(['declaration', 'module', 'diagnostic']);
/** Paths longer than this many edges are not followed. */
export const MAX_HOPS = 3;
/** Below this a path is not followed further. */
const FLOOR = 0.004;
/** At most this share of (1 − best) is added for independent supporting neighbours. */
const SUPPORT_SHARE = 0.3;

export interface Reached {
  id: string;
  /** Best-path product. */
  best: number;
  /** Best path plus the support bonus, in (0, 1]. */
  proximity: number;
  hops: number;
  /** The seed the best path starts from. */
  seed: string;
  /** The step that reached this node on its best path; absent for a seed. */
  via?: { from: string; edge: string; direction: 'out' | 'in'; weight: number };
}

function damping(n: number): number {
  // up to 9 siblings of a kind: none; a module defining 36 declarations: half; 100: 0.3
  return n <= 9 ? 1 : 3 / Math.sqrt(n);
}

interface Step {
  to: string;
  edge: string;
  direction: 'out' | 'in';
  weight: number;
}

/** Walkable steps per node, computed once per graph index (an index never changes). */
const stepCaches = new WeakMap<GraphIndex, Map<string, Step[]>>();

function stepsFrom(index: GraphIndex, id: string, cache: Map<string, Step[]>): Step[] {
  const hit = cache.get(id);
  if (hit) return hit;
  const adj = index.adjacent(id).filter((a) => EDGE_WEIGHTS[a.edge.kind] && WALK_KINDS.has(index.node(a.other)?.kind ?? ''));
  const counts = new Map<string, number>();
  for (const a of adj) counts.set(`${a.edge.kind}/${a.direction}`, (counts.get(`${a.edge.kind}/${a.direction}`) ?? 0) + 1);
  const steps = adj.map((a) => {
    let w = EDGE_WEIGHTS[a.edge.kind]![a.direction];
    if (a.edge.record.type_only === true) w *= TYPE_ONLY_FACTOR;
    w *= damping(counts.get(`${a.edge.kind}/${a.direction}`)!);
    return { to: a.other, edge: a.edge.kind, direction: a.direction, weight: w };
  });
  cache.set(id, steps);
  return steps;
}

/** A binary max-heap on (score, then smaller id first). */
class Heap {
  private a: { id: string; score: number; hops: number }[] = [];
  get size() {
    return this.a.length;
  }
  private before(x: { id: string; score: number }, y: { id: string; score: number }) {
    return x.score > y.score || (x.score === y.score && byCodePoint(x.id, y.id) < 0);
  }
  push(v: { id: string; score: number; hops: number }) {
    const a = this.a;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop() {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }
}

export function expandSeeds(index: GraphIndex, seeds: readonly Seed[], opts: { maxHops?: number } = {}): Map<string, Reached> {
  const maxHops = opts.maxHops ?? MAX_HOPS;
  const reached = new Map<string, Reached>();
  const tentative = new Map<string, Reached>();
  const heap = new Heap();
  let cache = stepCaches.get(index);
  if (!cache) stepCaches.set(index, (cache = new Map()));
  for (const s of seeds) {
    if (!index.node(s.id)) continue;
    const prev = tentative.get(s.id);
    if (!prev || s.score > prev.best) {
      tentative.set(s.id, { id: s.id, best: s.score, proximity: s.score, hops: 0, seed: s.id });
      heap.push({ id: s.id, score: s.score, hops: 0 });
    }
  }
  while (heap.size) {
    const top = heap.pop();
    if (reached.has(top.id)) continue;
    const cur = tentative.get(top.id)!;
    if (cur.best !== top.score) continue; // a stale entry
    reached.set(top.id, cur);
    if (cur.hops >= maxHops) continue;
    for (const st of stepsFrom(index, top.id, cache)) {
      if (reached.has(st.to)) continue;
      // a diagnostic annotates what it is about: reaching one costs its edge weight, not a step
      const score = cur.best * st.weight * (st.edge === 'diagnoses' ? 1 : HOP_DECAY);
      if (score < FLOOR) continue;
      const prev = tentative.get(st.to);
      if (!prev || score > prev.best || (score === prev.best && byCodePoint(top.id, prev.via?.from ?? '') < 0)) {
        tentative.set(st.to, { id: st.to, best: score, proximity: score, hops: cur.hops + 1, seed: cur.seed, via: { from: top.id, edge: st.edge, direction: st.direction, weight: st.weight } });
        heap.push({ id: st.to, score, hops: cur.hops + 1 });
      }
    }
  }
  // support: other reached neighbours that lead here, noisy-OR, bounded to a share of what is left
  const seedScore = new Map(seeds.map((s) => [s.id, s.score]));
  for (const r of reached.values()) {
    let miss = 1;
    for (const st of stepsFrom(index, r.id, cache!)) {
      if (st.to === r.via?.from) continue;
      const other = reached.get(st.to);
      if (!other || other.via?.from === r.id) continue; // not an echo of this node itself
      miss *= 1 - other.best * st.weight * HOP_DECAY;
    }
    const own = seedScore.get(r.id);
    const best = own !== undefined ? Math.max(own, r.best) : r.best;
    r.proximity = best + SUPPORT_SHARE * (1 - miss) * (1 - best);
  }
  return reached;
}
