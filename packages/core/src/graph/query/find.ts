/**
 * `kiln graph find <query>`: identifiers (declarations, modules, namespaces, files, packages) whose name
 * matches a query, ranked: exact > exact ignoring case > prefix > camel-case humps (`gHSC` finds
 * `getHTTPStatusCode`, `user name` finds `getUserName`) > substring.
 *
 * Invariants: pure over a GraphIndex; deterministic total order (score, then shorter name, then name
 * and id in code-point order); scores are small integers so they print and compare exactly.
 */
import type { GraphIndex } from './graph-index.js';
import { anchorOf, byCodePoint, declKindOf, declPathOf, isPublic, nameOf, packageRefOf, type QueryRecord } from './model.js';
import { matchHumps, queryHumps, splitIdentifier } from './terms.js';

export type MatchType = 'exact' | 'exact-ignore-case' | 'prefix' | 'camel-case' | 'substring';

export interface FindHit {
  id: string;
  kind: string;
  decl_kind: string | null;
  name: string;
  /** Declaration path in its module (`Circle.scaled`), else the name. */
  path: string;
  module: string | null;
  package: string | null;
  anchor: string | null;
  provenance: string | null;
  exported: boolean;
  match: MatchType;
  score: number;
}

export interface FindOptions {
  /** At most this many hits (default 20). */
  limit?: number;
  /** Node kinds searched (default: declaration, module, namespace, file, package). */
  kinds?: readonly string[];
}

export const DEFAULT_FIND_KINDS = ['declaration', 'module', 'namespace', 'file', 'package'] as const;

const BASE: Record<MatchType, number> = { exact: 100, 'exact-ignore-case': 90, prefix: 70, 'camel-case': 55, substring: 35 };

/** How `name` matches `query`, with a score; undefined when it does not. */
export function matchName(query: string, name: string): { match: MatchType; score: number } | undefined {
  if (!query) return undefined;
  if (name === query) return { match: 'exact', score: BASE.exact };
  const q = query.toLowerCase();
  const n = name.toLowerCase();
  if (n === q) return { match: 'exact-ignore-case', score: BASE['exact-ignore-case'] };
  if (n.startsWith(q)) return { match: 'prefix', score: BASE.prefix + (name.startsWith(query) ? 3 : 0) };
  const humps = queryHumps(query);
  if (humps.length > 1 || /[A-Z]/.test(query.slice(1))) {
    const m = matchHumps(humps, splitIdentifier(name));
    if (m) return { match: 'camel-case', score: BASE['camel-case'] + (m.atStart ? 4 : 0) + (m.contiguous ? 3 : 0) };
  }
  const at = n.indexOf(q);
  if (at >= 0) {
    // a substring that starts a word of the name (`Link` in `httpBatchLink`) is worth more
    const boundary = at === 0 || /[^A-Za-z0-9]/.test(name[at - 1]!) || (/[a-z0-9]/.test(name[at - 1]!) && /[A-Z]/.test(name[at]!));
    return { match: 'substring', score: BASE.substring + (boundary ? 5 : 0) };
  }
  return undefined;
}

export function hitOf(index: GraphIndex, r: QueryRecord, match: MatchType, score: number): FindHit {
  const moduleId = index.moduleIdOf(r);
  const mod = moduleId ? index.node(moduleId) : undefined;
  return {
    id: r.id,
    kind: r.kind,
    decl_kind: declKindOf(r) ?? null,
    name: nameOf(r),
    path: declPathOf(r) ?? nameOf(r),
    module: r.kind === 'module' ? null : mod ? nameOf(mod) : null,
    package: packageRefOf(r) ?? null,
    anchor: anchorOf(r) ?? null,
    provenance: typeof r.provenance === 'string' ? r.provenance : null,
    exported: isPublic(r),
    match,
    score,
  };
}

export function findIdentifiers(index: GraphIndex, query: string, opts: FindOptions = {}): FindHit[] {
  const kinds = new Set(opts.kinds ?? DEFAULT_FIND_KINDS);
  const limit = opts.limit ?? 20;
  const q = query.trim();
  if (!q) return [];
  const best = new Map<string, { match: MatchType; score: number }>();
  for (const [, ids] of index.names()) {
    for (const id of ids) {
      const r = index.node(id)!;
      if (!kinds.has(r.kind)) continue;
      // a declaration matches by its own name or by its path in the module (`Circle.scaled`)
      const candidates = [nameOf(r)];
      const p = declPathOf(r);
      if (p && p !== candidates[0]) candidates.push(p);
      for (const name of candidates) {
        const m = matchName(q, name);
        if (!m) continue;
        let score = m.score;
        if (r.kind === 'declaration') score += 4 + (isPublic(r) ? 2 : 0) + (p && !p.includes('.') ? 1 : 0);
        const prev = best.get(id);
        if (!prev || score > prev.score) best.set(id, { match: m.match, score });
      }
    }
  }
  const hits = [...best].map(([id, m]) => hitOf(index, index.node(id)!, m.match, m.score));
  hits.sort((a, b) => b.score - a.score || a.path.length - b.path.length || byCodePoint(a.path, b.path) || byCodePoint(a.id, b.id));
  return hits.slice(0, limit);
}
