/**
 * Identity collisions (issue 2, point 8; SPEC §2): over the TypeScript lib `.d.ts` files plus the
 * mutation-test corpus, no two declarations may share an identity unless they really are the same
 * declaration. The analysis lives in tools/lib/collisions.mjs (shared with
 * tools/identity-collisions.mjs, which prints the full table).
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error — plain ESM tool module, no type declarations
import { analyzeCollisions, classCounts, collisionCorpus, formatReport } from '../lib/collisions.mjs';

interface Member {
  file: string;
  path: string;
  kind: string;
  ordinal?: number;
  semantic: string | null;
}
interface Group {
  identity: string;
  members: Member[];
  sameIdentity?: boolean;
}

/** Class-3 groups: the members that needed an ordinal (or share one identity) have one digest. */
function reallyIdentical(g: Group): boolean {
  const subsets = new Map<string, Member[]>();
  for (const m of g.members) {
    if (!g.sameIdentity && m.ordinal === undefined) continue;
    const seg = g.sameIdentity ? '' : m.path.slice(0, m.path.lastIndexOf('#'));
    (subsets.get(seg) ?? subsets.set(seg, []).get(seg)!).push(m);
  }
  return subsets.size > 0 && [...subsets.values()].every((ms) => ms.length >= 2 && ms.every((m) => m.semantic !== null && m.semantic === ms[0]!.semantic));
}

describe('identity collisions', () => {
  it('the analysis tells the four classes apart (synthetic package)', () => {
    const file = (rel: string, text: string) => ({ abs: `/synthetic/pkg/${rel}`, rel, packageName: 'synthetic', group: 'synthetic', text });
    const r = analyzeCollisions([
      file(
        'a.ts',
        `export function f(a: string): void;
export function f(a: number): void;
export function f(a: any) {}
export function outer(x: boolean) {
  if (x) { function helper() { return 1 } return helper() }
  else { function helper() { return 2 } return helper() }
}
declare function d(e: Event): boolean;
declare function d(e: Event): boolean;
`,
      ),
      // Two files of one language mapping to one module path: a real collision the tool must see.
      file('b.ts', 'export const v = 1;\n'),
      file('b.tsx', 'export const v = 2;\n'),
    ]);
    const ids = (k: string) => (r.classes[k] as Group[]).map((g) => g.identity);
    expect(ids('signature')).toEqual(['typescript:synthetic//a#f:function']);
    expect(ids('ordinal')).toEqual(['typescript:synthetic//a#outer.helper:function']);
    expect(ids('identical')).toEqual(['typescript:synthetic//a#d:function']);
    expect(ids('real')).toEqual(['typescript:synthetic//b#v:variable']);
    expect(ids('crossFile')).toEqual(['typescript:synthetic//b#v:variable']);
    for (const g of r.classes.identical as Group[]) expect(reallyIdentical(g)).toBe(true);
  });

  it('the TypeScript lib .d.ts files and the real-code corpus have no real collision', () => {
    const corpus = collisionCorpus();
    expect(corpus.length).toBeGreaterThanOrEqual(400);
    const r = analyzeCollisions(corpus);
    const counts = classCounts(r);
    console.log(formatReport(r, { examples: 2 }));
    console.log(`identity collision classes: ${JSON.stringify(counts)}`);
    expect(r.declarations).toBeGreaterThan(10_000);
    // (4): equal final identity, different digest.
    expect((r.classes.real as Group[]).map((g) => `${g.identity}: ${g.members.map((m) => `${m.file} ${m.semantic}`).join(' vs ')}`)).toEqual([]);
    // (3): "identical" means identical.
    for (const g of r.classes.identical as Group[]) expect(reallyIdentical(g), g.identity).toBe(true);
    // Overloads of the lib files are the bulk of class (1): the analysis is not vacuous.
    expect(counts.signature.groups).toBeGreaterThan(50);
  });
});
