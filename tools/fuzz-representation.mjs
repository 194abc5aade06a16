#!/usr/bin/env node
/**
 * Representation fuzzer (SPEC §10 "malformed representations get a coded diagnostic — no crash, no
 * hang"): runs ≥ 100,000 mutated kiln.rep files (tools/lib/rep-fuzz.mjs: corpus, fast-check mutations,
 * oracle) through the reader and a consumer and prints the count per outcome code, the slowest case and
 * the peak heap. Exits non-zero on any violation: an exception other than a RepError with a code of
 * core's registry, a payload evaluated although its stored bytes were broken, or a case over --max-ms.
 * fast-check shrinks a violating case to a minimal one before it is printed.
 *
 * Usage: node tools/fuzz-representation.mjs [--runs N] [--seed S] [--max-ms MS]. Requires a build.
 */
import fc from 'fast-check';
import { CODES } from '@kiln/core';
import { cliArgs } from './lib/cli-args.mjs';
import { applyMutations, caseArb, makeCorpora, runCase } from './lib/rep-fuzz.mjs';

const HELP = `Usage: node tools/fuzz-representation.mjs [--runs N] [--seed S] [--max-ms MS]   (requires \`npm run build\`)
  --runs N     mutated files to run (default 100000)
  --seed S     fast-check seed (default 20261202)
  --max-ms MS  a case slower than this is a violation (default 2000)
`;
const { int } = cliArgs({ runs: { type: 'string', default: '100000' }, seed: { type: 'string', default: '20261202' }, 'max-ms': { type: 'string', default: '2000' } }, HELP);
const runs = int('runs', 1);
const seed = int('seed', 0);
const maxMs = int('max-ms', 1);

const corpora = makeCorpora();
const codes = new Set(Object.keys(CODES));
const counts = new Map();
let slowest = { ms: 0 };
let peakHeap = 0;
let evaluatedCases = 0;
let n = 0;
const t0 = performance.now();

let failure;
try {
  fc.assert(
    fc.property(caseArb, (c) => {
      const corpus = corpora[c.corpus];
      const r = runCase(corpus, applyMutations(corpus, c.mutations), { codes, maxMs });
      n++;
      counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
      if (r.evaluated > 0) evaluatedCases++;
      if (r.ms > slowest.ms) slowest = { ms: r.ms, outcome: r.outcome, corpus: corpus.compression, mutations: c.mutations.map((m) => m.kind).join('+') };
      if (n % 1000 === 0) peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      if (r.violations.length > 0) throw new Error(r.violations.join('\n'));
    }),
    { numRuns: runs, seed },
  );
} catch (e) {
  failure = e;
}
peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);

const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
console.log(`kiln.rep fuzz: ${n} cases (seed ${seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s over ${corpora.length} corpora (${corpora.map((c) => `${c.compression} ${c.bytes.length} B`).join(', ')})`);
console.log('outcome per case (the first refusal other than the corpus\'s own uncovered entries):');
for (const [code, k] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${code.padEnd(32)} ${String(k).padStart(7)}`);
console.log(`cases in which some payload was evaluated: ${evaluatedCases}`);
console.log(`slowest case: ${slowest.ms.toFixed(2)} ms (${slowest.outcome}, ${slowest.corpus}, ${slowest.mutations})`);
console.log(`peak heap (sampled every 1000 cases): ${mb(peakHeap)}; rss now ${mb(process.memoryUsage().rss)}`);
if (failure) {
  console.error(`VIOLATION:\n${failure.message}`);
  process.exit(1);
}
console.log('violations: 0');
