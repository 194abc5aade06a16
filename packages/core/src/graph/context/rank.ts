/**
 * Context packs, stage 3 — ranking: the candidates a pack may hold (declarations and diagnostics the
 * walk reached), scored by proximity × provenance tier × public-API boost × diagnostics-proximity boost
 * × a small penalty for degraded facts and for nested members.
 *
 * Invariants: pure; deterministic total order (score descending, then id in code-point order); every
 * factor is recorded on the candidate so `--explain` can print the product it came from.
 */
import type { GraphIndex } from '../query/graph-index.js';
import { byCodePoint, isPublic, type QueryRecord } from '../query/model.js';
import type { Reached } from './expand.js';
import type { Seed } from './seed.js';

/** Trust in a fact by provenance tier: checked facts first, syntax guesses last. */
export const PROVENANCE_WEIGHT: Readonly<Record<string, number>> = {
  compiler_checked: 1,
  compiler_unchecked: 0.92,
  manifest_declared: 0.9,
  syntax_inferred: 0.85,
};
export const UNKNOWN_PROVENANCE_WEIGHT = 0.8;
/** Reachable by a consumer of the package (it has a surface identity). */
export const PUBLIC_BOOST = 1.15;
/** A diagnostic is about it, or it is a diagnostic about something relevant. */
export const DIAGNOSTIC_BOOST = 1.1;
export const DEGRADED_FACTOR = 0.9;
/** A member (method, property) of a class or namespace, against a module-level declaration. */
export const NESTED_FACTOR = 0.9;
export const DIAGNOSTIC_ITEM_FACTOR = 0.95;

export const ITEM_KINDS: ReadonlySet<string> = new Set(['declaration', 'diagnostic']);

export interface Candidate {
  id: string;
  record: QueryRecord;
  score: number;
  proximity: number;
  reached: Reached;
  seed?: Seed;
  factors: { name: string; value: number }[];
}

export function rankCandidates(index: GraphIndex, reached: ReadonlyMap<string, Reached>, seeds: readonly Seed[]): Candidate[] {
  const seedById = new Map(seeds.map((s) => [s.id, s]));
  const out: Candidate[] = [];
  for (const r of reached.values()) {
    const rec = index.node(r.id);
    if (!rec || !ITEM_KINDS.has(rec.kind)) continue;
    const factors: { name: string; value: number }[] = [];
    const prov = typeof rec.provenance === 'string' ? rec.provenance : '';
    factors.push({ name: prov || 'no provenance', value: PROVENANCE_WEIGHT[prov] ?? UNKNOWN_PROVENANCE_WEIGHT });
    if (rec.kind === 'declaration') {
      if (isPublic(rec)) factors.push({ name: 'public API', value: PUBLIC_BOOST });
      if (typeof rec.parent === 'string' && rec.parent) factors.push({ name: 'member', value: NESTED_FACTOR });
      if (index.adjacent(rec.id, { kinds: ['diagnoses'], direction: 'in' }).length) factors.push({ name: 'has diagnostics', value: DIAGNOSTIC_BOOST });
    } else {
      factors.push({ name: 'diagnostic', value: DIAGNOSTIC_ITEM_FACTOR });
    }
    if (rec.degraded === true) factors.push({ name: 'degraded', value: DEGRADED_FACTOR });
    let score = r.proximity;
    for (const f of factors) score *= f.value;
    const c: Candidate = { id: r.id, record: rec, score, proximity: r.proximity, reached: r, factors };
    const s = seedById.get(r.id);
    if (s) c.seed = s;
    out.push(c);
  }
  out.sort((a, b) => b.score - a.score || byCodePoint(a.id, b.id));
  return out;
}
