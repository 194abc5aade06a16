/**
 * Closure digests over module-level declarations of one package (SPEC §4):
 *   closure(n) = H(shape(n), closure(d) for d in deps(n) ordered by identity)
 * with a strongly connected component folded as one unit. Two flavours: the *shape* closure follows
 * what a consumer observes (`shape_digest`, `shape_refs`); the *full* closure follows meaning
 * (`semantic_digest`, `refs`) for consumers that include the code (bundlers, tests).
 *
 * A declaration whose digest could not be computed contributes its file's content hash (it changes
 * whenever its bytes do); an unresolved edge is reported so the caller can fall back to the whole
 * package. Other packages appear as `ext:<name>` tokens for the caller to resolve.
 */
import { digestParts } from '../digest/hash.js';
import type { DeclarationRecord, DigestReport } from '../view/report.js';

export interface ClosureResult {
  /** identity → closure digest (module-level declarations only). */
  digests: Map<string, string>;
  /** identity → packages (`ext:` stripped) its closure reaches. */
  external: Map<string, Set<string>>;
  /** identity → unresolved references its closure reaches. */
  unresolved: Map<string, Set<string>>;
}

export type ClosureFlavour = 'shape' | 'full';

export function computeClosures(report: DigestReport, flavour: ClosureFlavour): ClosureResult {
  const contentHash = new Map(report.files.map((f) => [f.path, f.content_hash]));
  const nodes = report.declarations.filter((d) => d.module_level);
  const byId = new Map(nodes.map((d) => [d.identity, d]));
  const own = (d: DeclarationRecord): string => {
    if (d.semantic_digest === null) return `degraded:${contentHash.get(d.span.file)}`;
    if (flavour === 'shape') return d.shape_digest ?? `semantic:${d.semantic_digest}`;
    return `semantic:${d.semantic_digest}:${d.doc_digest ?? ''}`;
  };
  const edgesOf = (d: DeclarationRecord): string[] => {
    if (d.semantic_digest === null) return [];
    // Without a shape (no facts about references), the declaration reaches its whole module.
    const refs = flavour === 'shape' ? d.shape_refs : d.refs;
    if (refs) return refs;
    return nodes.filter((n) => n.module === d.module && n.identity !== d.identity).map((n) => n.identity);
  };

  // Tarjan's SCC, iterative over a sorted node order so the result never depends on input order.
  const order = [...byId.keys()].sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const sccOf = new Map<string, number>();
  const sccs: string[][] = [];
  let counter = 0;
  for (const start of order) {
    if (index.has(start)) continue;
    const work: { id: string; edges: string[]; i: number }[] = [];
    const push = (id: string) => {
      index.set(id, counter);
      low.set(id, counter);
      counter++;
      stack.push(id);
      onStack.add(id);
      work.push({ id, edges: edgesOf(byId.get(id)!).filter((e) => byId.has(e)).sort(), i: 0 });
    };
    push(start);
    while (work.length) {
      const top = work[work.length - 1]!;
      if (top.i < top.edges.length) {
        const next = top.edges[top.i++]!;
        if (!index.has(next)) push(next);
        else if (onStack.has(next)) low.set(top.id, Math.min(low.get(top.id)!, index.get(next)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!;
        low.set(parent.id, Math.min(low.get(parent.id)!, low.get(top.id)!));
      }
      if (low.get(top.id) === index.get(top.id)) {
        const members: string[] = [];
        let m: string;
        do {
          m = stack.pop()!;
          onStack.delete(m);
          sccOf.set(m, sccs.length);
          members.push(m);
        } while (m !== top.id);
        sccs.push(members.sort());
      }
    }
  }

  // Tarjan emits components in reverse topological order: successors are always finished first.
  const sccDigest: string[] = [];
  const sccExternal: Set<string>[] = [];
  const sccUnresolved: Set<string>[] = [];
  sccs.forEach((members, c) => {
    const ext = new Set<string>();
    const unresolved = new Set<string>();
    const succ = new Set<number>();
    const parts: string[] = [];
    for (const id of members) {
      const d = byId.get(id)!;
      parts.push(`node:${id}:${own(d)}`);
      for (const e of edgesOf(d)) {
        if (e.startsWith('ext:')) ext.add(e.slice(4));
        else if (e.startsWith('unresolved:')) unresolved.add(e.slice(11));
        else if (byId.has(e)) {
          const s = sccOf.get(e)!;
          if (s !== c) succ.add(s);
        } else unresolved.add(e); // an identity that is not a module-level declaration of this report
      }
    }
    for (const s of [...succ].sort((a, b) => a - b)) {
      for (const x of sccExternal[s]!) ext.add(x);
      for (const x of sccUnresolved[s]!) unresolved.add(x);
    }
    const succDigests = [...succ].map((s) => sccDigest[s]!).sort();
    sccDigest[c] = digestParts(`kiln-closure-${flavour}/1`, [...parts, 'deps', ...succDigests, 'ext', ...[...ext].sort(), 'unresolved', ...[...unresolved].sort()]);
    sccExternal[c] = ext;
    sccUnresolved[c] = unresolved;
  });

  const digests = new Map<string, string>();
  const external = new Map<string, Set<string>>();
  const unresolvedOut = new Map<string, Set<string>>();
  for (const [id, c] of sccOf) {
    digests.set(id, sccDigest[c]!);
    external.set(id, sccExternal[c]!);
    unresolvedOut.set(id, sccUnresolved[c]!);
  }
  return { digests, external, unresolved: unresolvedOut };
}

