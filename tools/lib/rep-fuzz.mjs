/**
 * The representation fuzzer's corpus, mutations and oracle, shared by packages/runtime/test/fuzz.test.ts
 * (a few thousand cases in the suite) and tools/fuzz-representation.mjs (≥ 100,000).
 *
 * Corpus: small representations (tools/lib/rep-corpus.mjs with `marker: true`: every payload's module
 * body records its own name in `globalThis.__kilnRepEvaluated`) in each payload encoding.
 * Mutations (fast-check): bit flips and byte sets anywhere or in the payloads, truncations, appended
 * junk, prefix varints re-encoded with interesting values (huge counts, off-by-one lengths; prefixLength
 * following or not) or overwritten in place (overlong, unterminated, padded), index and table record
 * fields set (located by tools/lib/rep-layout.mjs, not by the reader), index records swapped (unsorted) or duplicated, metadata bit flips — the structural
 * ones optionally RESEALED (the seal recomputed) so the checks behind the seal are reached too.
 * Oracle, per case: open the mutated bytes and load every entry in a fresh consumer; then
 *   1. anything thrown is a RepError whose code is in `codes` (the registry) — no other exception;
 *   2. no payload was evaluated unless its original stored bytes are intact in the mutated file (a payload
 *      whose bytes were broken never runs, even when they still decompress to running code);
 *   3. the case took less than `maxMs`.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createConsumer, encodeRepresentation, openRepresentation, PREFIX, PREFIX_FIELDS, RepError, varUint } from '@kiln/runtime';
import { makeRepresentation } from './rep-corpus.mjs';
import { layoutOf } from './rep-layout.mjs';

export function makeCorpora() {
  return ['deflate-dict', 'none', 'brotli', 'deflate'].map((compression, k) => {
    const rep = makeRepresentation({ exports: 10, shared: 3, marker: true, uncovered: 2, seed: 11 + k, pkg: '@fuzz/pkg' });
    const bytes = Buffer.from(encodeRepresentation(rep, { compression }));
    const r = openRepresentation(bytes);
    const layout = layoutOf(bytes);
    const payloads = [];
    for (let i = 0; i < r.payloadCount; i++) {
      const info = r.payloadInfo(i);
      payloads.push({ name: info.name, stored: bytes.subarray(info.offset, info.offset + info.storedLength) });
    }
    r.close();
    const { sealAt, indexAt, tableAt, payloadsAt } = layout;
    return { compression, rep, bytes, layout, sealAt, indexAt, tableAt, payloadsAt, payloads, surfaces: rep.entries.map((e) => e.surface) };
  });
}

const u32 = fc.oneof(
  fc.constantFrom(0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff),
  fc.integer({ min: 0, max: 4096 }),
  fc.nat({ max: 0xffffffff }),
);
const pos = fc.nat({ max: 1 << 20 });
const bit = fc.integer({ min: 0, max: 7 });

const simple = fc.oneof(
  fc.record({ kind: fc.constant('flip'), pos, bit }),
  fc.record({ kind: fc.constant('flipPayload'), pos, bit }),
  fc.record({ kind: fc.constant('setPayload'), pos, value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('set'), pos, value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate'), len: pos }),
  fc.record({ kind: fc.constant('append'), bytes: fc.uint8Array({ maxLength: 16 }) }),
  // A prefix varint re-encoded with another value (the prefix grows or shrinks, prefixLength follows or not),
  // or its bytes overwritten in place (overlong, unterminated, padded varints).
  fc.record({ kind: fc.constant('prefixField'), field: fc.constantFrom(...PREFIX_FIELDS), value: u32, fixLength: fc.boolean(), reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('prefixDelta'), field: fc.constantFrom(...PREFIX_FIELDS), delta: fc.integer({ min: -3, max: 3 }), fixLength: fc.boolean(), reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('prefixBytes'), field: fc.constantFrom(...PREFIX_FIELDS), bytes: fc.uint8Array({ minLength: 1, maxLength: 5 }), reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('prefixLength'), value: u32, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('indexField'), entry: pos, field: fc.constantFrom('key', 'payload', 'info'), value: u32, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('tableField'), payload: pos, field: fc.constantFrom('stored', 'compression', 'sha256'), value: u32, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('swapIndex'), i: pos, j: pos, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('dupIndex'), i: pos, j: pos, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('swapTable'), i: pos, j: pos, reseal: fc.boolean() }),
  fc.record({ kind: fc.constant('metaFlip'), pos, bit, reseal: fc.constant(true) }),
);

/** One case: which corpus, and one to three mutations applied in order. */
export const caseArb = fc.record({ corpus: fc.nat({ max: 3 }), mutations: fc.array(simple, { minLength: 1, maxLength: 3 }) });

function writeField(b, at, value, width) {
  if (at + width > b.length) return;
  b.writeUIntLE(value % 2 ** (8 * width), at, width);
}

/** The mutated bytes (a fresh Buffer). */
export function applyMutations(corpus, mutations) {
  let b = Buffer.from(corpus.bytes);
  const entries = corpus.surfaces.length;
  const payloads = corpus.payloads.length;
  const { layout } = corpus;
  let reseal = false;
  let shift = 0; // how far a re-encoded prefix field moved everything after it
  const resize = (field, value, fixLength) => {
    const [at, len] = layout.fields[field];
    if (at + len > b.length) return;
    const enc = varUint(value >>> 0);
    b = Buffer.concat([b.subarray(0, at), enc, b.subarray(at + len)]);
    shift += enc.length - len;
    if (fixLength && b.length >= PREFIX.stable) b.writeUInt32LE(layout.prefixLength + shift, PREFIX.prefixLength);
  };
  for (const m of mutations) {
    const n = b.length;
    switch (m.kind) {
      case 'flip':
        if (n > 0) b[m.pos % n] ^= 1 << m.bit;
        break;
      case 'set':
        if (n > 0) b[m.pos % n] = m.value;
        break;
      case 'flipPayload':
      case 'setPayload': {
        const span = Math.min(n, corpus.bytes.length) - corpus.payloadsAt;
        if (span <= 0) break;
        const at = corpus.payloadsAt + (m.pos % span);
        if (m.kind === 'flipPayload') b[at] ^= 1 << m.bit;
        else b[at] = m.value === b[at] ? (m.value + 1) & 0xff : m.value;
        break;
      }
      case 'truncate':
        b = b.subarray(0, m.len % (n + 1));
        break;
      case 'append':
        b = Buffer.concat([b, m.bytes]);
        break;
      case 'prefixField':
        resize(m.field, m.value, m.fixLength);
        reseal ||= m.reseal;
        break;
      case 'prefixDelta':
        resize(m.field, Math.max(0, layout.fields[m.field][2] + m.delta), m.fixLength);
        reseal ||= m.reseal;
        break;
      case 'prefixBytes': {
        const [at, len] = layout.fields[m.field];
        for (let k = 0; k < Math.min(len, m.bytes.length) && at + k < n; k++) b[at + k] = m.bytes[k];
        reseal ||= m.reseal;
        break;
      }
      case 'prefixLength':
        if (n >= PREFIX.stable) b.writeUInt32LE(m.value >>> 0, PREFIX.prefixLength);
        reseal ||= m.reseal;
        break;
      case 'indexField': {
        const w = layout.index[m.field];
        const off = m.field === 'key' ? 0 : m.field === 'payload' ? layout.index.key : layout.index.key + layout.index.payload;
        if (entries > 0) writeField(b, shift + corpus.indexAt + (m.entry % entries) * layout.index.size + off, m.value, w);
        reseal ||= m.reseal;
        break;
      }
      case 'tableField': {
        const [off, w] = m.field === 'stored' ? [0, layout.table.stored] : m.field === 'compression' ? [layout.table.stored, 1] : [layout.table.stored + 1 + (m.value % 32), 1];
        if (payloads > 0) writeField(b, shift + corpus.tableAt + (m.payload % payloads) * layout.table.size + off, m.value, w);
        reseal ||= m.reseal;
        break;
      }
      case 'swapIndex':
      case 'dupIndex':
      case 'swapTable': {
        const [base, size, count] = m.kind === 'swapTable' ? [shift + corpus.tableAt, layout.table.size, payloads] : [shift + corpus.indexAt, layout.index.size, entries];
        if (count < 2) break;
        const i = base + (m.i % count) * size;
        const j = base + (m.j % count) * size;
        if (Math.max(i, j) + size > n) break;
        const a = Buffer.from(b.subarray(i, i + size));
        b.copy(b, i, j, j + size); // record j over record i (a duplicate) …
        if (m.kind !== 'dupIndex') a.copy(b, j); // … and record i over record j (a swap)
        reseal ||= m.reseal;
        break;
      }
      case 'metaFlip': {
        const from = layout.prefixLength + shift;
        const span = Math.min(n, corpus.sealAt + shift) - from;
        if (span > 0) b[from + (m.pos % span)] ^= 1 << m.bit;
        reseal ||= m.reseal;
        break;
      }
    }
  }
  // The seal recomputed as the corpus's layout places it: the checks behind the seal are then reached.
  const sealAt = corpus.sealAt + shift;
  if (reseal && sealAt > 0 && b.length >= sealAt + 32) createHash('sha256').update(b.subarray(0, sealAt)).digest().copy(b, sealAt);
  return b;
}

/**
 * Runs one mutated file through the reader and a consumer. Returns the outcome (the first refusal's
 * code, or OK), the violations found, and the time taken.
 */
export function runCase(corpus, bytes, { codes, maxMs = 2000 }) {
  const t0 = performance.now();
  const violations = [];
  const outcomes = [];
  const evaluated = new Set();
  const note = (e) => {
    if (!(e instanceof RepError)) violations.push(`non-RepError thrown: ${e?.stack ?? String(e)}`);
    else if (!codes.has(e.code)) violations.push(`unregistered code ${e.code}`);
    outcomes.push(e instanceof RepError ? e.code : 'NON_REP_ERROR');
  };
  let reader;
  try {
    reader = openRepresentation(bytes);
  } catch (e) {
    note(e);
  }
  if (reader) {
    try {
      const consumer = createConsumer(reader, { realm: 'isolated', context: { __kilnRepEvaluated: evaluated } });
      const surfaces = new Set(corpus.surfaces);
      try {
        for (const e of reader.entries()) surfaces.add(e.surface);
      } catch (e) {
        note(e);
      }
      for (const s of surfaces) {
        try {
          consumer.load(s);
        } catch (e) {
          note(e);
        }
      }
    } catch (e) {
      note(e);
    }
    reader.close();
  }
  // 2. Evaluated ⇒ intact: a payload runs only from its original stored bytes.
  for (const name of evaluated) {
    const orig = corpus.payloads.find((p) => p.name === name);
    if (!orig || bytes.indexOf(orig.stored) < 0) violations.push(`payload ${name} was evaluated although its stored bytes are broken`);
  }
  const ms = performance.now() - t0;
  if (ms > maxMs) violations.push(`took ${ms.toFixed(0)} ms`);
  // The corpus's uncovered entries refuse in every intact file: the outcome is the first other one.
  const outcome = outcomes.find((c) => c !== 'KILN_REP_UNCOVERED') ?? 'OK';
  return { outcome, outcomes, violations, ms, evaluated: evaluated.size };
}
