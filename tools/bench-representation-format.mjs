#!/usr/bin/env node
/**
 * Representation format benchmark (SPEC §7, §10): the measurement behind format.ts's payload encoding.
 * One run prints, side by side on the same generated representation (tools/lib/rep-corpus.mjs: N exports
 * of rollup-cjs-style code, functions with helpers, classes, constants, in entry payloads + shared chunks):
 *   - the JSON size of the same content (`JSON.stringify(representation)`) and its parse time;
 *   - the binary size per payload encoding (none / deflate / brotli) and its ratio to JSON (target ≤ 0.3);
 *   - open time (prefix, header, index, seal) and decode time for all payloads and for 3 lookups + their
 *     payloads (with the shared chunks they require), with the bytes each read;
 *   - encode time.
 * Times are medians of --reps runs after a warm-up. Usage: node tools/bench-representation-format.mjs
 * [--exports N] [--reps N]. Requires a build (`npm run build`).
 */
import { performance } from 'node:perf_hooks';
import { encodeRepresentation, openRepresentation } from '@kiln/runtime';
import { makeRepresentation } from './lib/rep-corpus.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('exports', 400);
const REPS = arg('reps', 15);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn) {
  fn(); // warm-up
  const ts = [];
  let out;
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    out = fn();
    ts.push(performance.now() - t0);
  }
  return { ms: median(ts), out };
}
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const ms = (n) => `${n.toFixed(3)} ms`;

const rep = makeRepresentation({ exports: N });
const json = JSON.stringify(rep);
const jsonBytes = Buffer.byteLength(json);
const rawCode = rep.payloads.reduce((s, p) => s + Buffer.byteLength(p.code), 0);
const jsonParse = time(() => JSON.parse(json));

// Three lookups spread over the index (first, middle, last).
const picks = [rep.entries[0], rep.entries[Math.floor(rep.entries.length / 2)], rep.entries[rep.entries.length - 1]].map((e) => e.surface);
const closure = (reader, i, seen) => {
  if (seen.has(i)) return;
  seen.add(i);
  for (const m of reader.payload(i).code.matchAll(/require\('\.\/([^']+)'\)/g)) closure(reader, reader.payloadIndex(m[1]), seen);
};

console.log(`representation: ${N} exports, ${rep.payloads.length} payloads (${rep.payloads.length - N} shared chunks), ${kb(rawCode)} of payload code`);
console.log(`JSON (JSON.stringify of the same content): ${kb(jsonBytes)}; JSON.parse ${ms(jsonParse.ms)} (the whole thing, always)`);
console.log('');
const rows = [];
for (const compression of ['none', 'deflate', 'brotli', 'deflate-dict']) {
  const enc = time(() => encodeRepresentation(rep, { compression }));
  const bytes = enc.out;
  const open = time(() => openRepresentation(bytes));
  const all = time(() => {
    const r = openRepresentation(bytes);
    for (let i = 0; i < r.payloadCount; i++) r.payload(i);
    return r.bytesRead;
  });
  const three = time(() => {
    const r = openRepresentation(bytes);
    const seen = new Set();
    for (const s of picks) closure(r, r.lookup(s).coverage.payload, seen);
    return { bytesRead: r.bytesRead, payloads: seen.size };
  });
  const r = openRepresentation(bytes);
  const meta = r.sections.total - r.sections.payloads;
  rows.push({
    encoding: compression,
    size: kb(bytes.length),
    'vs JSON': (bytes.length / jsonBytes).toFixed(3),
    'meta (prefix..seal)': kb(meta),
    encode: ms(enc.ms),
    open: ms(open.ms),
    'open+all payloads': ms(all.ms),
    'open+3 lookups': ms(three.ms),
    '3: payloads': three.out.payloads,
    '3: bytes read': kb(three.out.bytesRead),
  });
}
console.table(rows);
const best = rows.reduce((a, b) => (Number(a['vs JSON']) <= Number(b['vs JSON']) ? a : b));
console.log(`smallest: ${best.encoding} at ${best['vs JSON']}× JSON (target ≤ 0.3: ${Number(best['vs JSON']) <= 0.3 ? 'PASS' : 'MISS'})`);
