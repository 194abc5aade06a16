/**
 * Identity finalisation (SPEC §2): turns the walk's declarations into span-free identity paths once
 * all of them are known, since separating siblings needs the whole sibling set.
 *
 * Invariants:
 * - A path is built from names, kinds, signature digests and dense ordinals only: no span, offset or
 *   traversal counter; an ordinal counts same-named siblings within their own parent, in source order.
 * - A signature digest or ordinal is added only where siblings collide: a declaration with a unique
 *   (name, kind) among its siblings keeps its plain name.
 */
import type { DeclFact } from '../facts/slice.js';
import { nameSegment } from '../digest/canonical.js';

/** A declaration as the walk registered it: its fact (path, sig and ordinal are set here), name and node. */
export interface IdentifiedDecl<N> {
  fact: DeclFact;
  name: string;
  node: N;
  hasBody: boolean;
}

/**
 * Separate same-named siblings: within one parent, declarations sharing (name, kind) get a
 * signature digest — implementations keep none when they are the only one with a body — and any
 * that still collide get a dense ordinal in source order. A name shared by siblings of different
 * kinds (class + interface merge) marks the kind in its children's path prefix.
 */
export function finalizeIdentities<N>(decls: readonly IdentifiedDecl<N>[], signatureOf: (node: N) => string): void {
  const byParent = new Map<number, number[]>();
  decls.forEach((p, i) => {
    const list = byParent.get(p.fact.parent);
    if (list) list.push(i);
    else byParent.set(p.fact.parent, [i]);
  });
  const prefixOf = new Map<number, string>();
  const visitParent = (parent: number) => {
    const children = byParent.get(parent) ?? [];
    const groups = new Map<string, number[]>();
    const kindsByName = new Map<string, Set<string>>();
    for (const i of children) {
      const p = decls[i]!;
      const key = `${p.name}\u0000${p.fact.kind}`;
      (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
      (kindsByName.get(p.name) ?? kindsByName.set(p.name, new Set()).get(p.name)!).add(p.fact.kind);
    }
    const parentPrefix = parent === -1 ? '' : `${prefixOf.get(parent)}.`;
    const segment = new Map<number, string>();
    for (const members of groups.values()) {
      for (const i of members) segment.set(i, nameSegment(decls[i]!.name));
      if (members.length < 2) continue;
      // Same-named implementations (local functions in two branches, duplicate JS functions) are
      // told apart by a dense ordinal only; overload signatures and merged declarations by their
      // signature, the single implementation of an overload set keeping the plain name.
      const withBody = members.filter((i) => decls[i]!.hasBody);
      const needSig = withBody.length === members.length ? [] : members.filter((i) => !(withBody.length === 1 && withBody[0] === i));
      for (const i of needSig) {
        const sig = signatureOf(decls[i]!.node);
        decls[i]!.fact.sig = sig;
        segment.set(i, `${segment.get(i)}~${sig}`);
      }
      const bySeg = new Map<string, number[]>();
      for (const i of members) (bySeg.get(segment.get(i)!) ?? bySeg.set(segment.get(i)!, []).get(segment.get(i)!)!).push(i);
      for (const same of bySeg.values()) {
        if (same.length < 2) continue;
        same.forEach((i, n) => {
          decls[i]!.fact.ordinal = n + 1;
          segment.set(i, `${segment.get(i)}#${n + 1}`);
        });
      }
    }
    for (const i of children) {
      const p = decls[i]!;
      p.fact.path = parentPrefix + segment.get(i)!;
      const kindMark = (kindsByName.get(p.name)?.size ?? 1) > 1 ? `@${p.fact.kind}` : '';
      prefixOf.set(i, p.fact.path + kindMark);
    }
    for (const i of children) visitParent(i);
  };
  visitParent(-1);
}
