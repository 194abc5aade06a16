/**
 * Fuzzing the reader and the consumer with fast-check (SPEC §10 "malformed representations get a coded
 * diagnostic — no crash, no hang"): a few thousand mutated files (tools/lib/rep-fuzz.mjs: bit flips,
 * truncations, out-of-range offsets and lengths, unsorted and duplicated index records, huge counts,
 * resealed structural edits). For each: only RepError with a registered code is thrown, the case is
 * quick, and no payload whose bytes were broken is ever evaluated. tools/fuzz-representation.mjs runs
 * the same with ≥ 100,000 cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODES } from '@kiln/core';
import { applyMutations, caseArb, makeCorpora, runCase } from '../../../tools/lib/rep-fuzz.mjs';

const corpora = makeCorpora();
const codes = new Set(Object.keys(CODES));

describe('fuzzing the representation reader and consumer', () => {
  it('the intact corpora load every covered entry (the oracle sees evaluations)', () => {
    for (const c of corpora) {
      const r = runCase(c, c.bytes, { codes });
      expect(r.violations).toEqual([]);
      expect(r.outcome).toBe('OK');
      expect(r.evaluated).toBe(c.payloads.length);
    }
  });

  it('5,000 mutations: only registered RepErrors, quick, never evaluating a broken payload', () => {
    const counts = new Map<string, number>();
    let slowest = 0;
    fc.assert(
      fc.property(caseArb, ({ corpus, mutations }) => {
        const c = corpora[corpus]!;
        const r = runCase(c, applyMutations(c, mutations), { codes, maxMs: 1000 });
        counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
        slowest = Math.max(slowest, r.ms);
        if (r.violations.length > 0) throw new Error(r.violations.join('\n'));
      }),
      { numRuns: 5000, seed: 20261202 },
    );
    // The mutations reach every kind of refusal the reader makes, and some files still load.
    for (const code of ['KILN_REP_CORRUPT', 'KILN_REP_INTEGRITY', 'KILN_REP_NOT_A_REPRESENTATION', 'KILN_REP_UNSUPPORTED_VERSION']) {
      expect(counts.get(code) ?? 0, code).toBeGreaterThan(0);
    }
    expect(slowest).toBeLessThan(1000);
  });
});
