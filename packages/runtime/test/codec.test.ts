/**
 * The kiln.rep codec (SPEC §7): round trip from bytes and from a file, determinism, the selective-load
 * proof by bytes read (3 lookups of 400), every refusal of the reader and the writer with its code, and
 * the runtime's hints held equal to core's registry.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  encodeRepresentation,
  openRepresentation,
  readRepresentation,
  REP_HINTS,
  PREFIX,
  REPRESENTATION_FORMAT,
  STATIC_DICTIONARY_SHA256,
  staticDictionary,
  type Representation,
} from '@kiln/runtime';
import { layoutOf } from '../../../tools/lib/rep-layout.mjs';
import { sameContentAsJsonBytes } from '../../../tools/lib/rep-json.mjs';
import { refusal } from './lib/refusal.js';
import { CODES } from '@kiln/core';
import { makeRepresentation } from '../../../tools/lib/rep-corpus.mjs';

const dir = mkdtempSync(join(tmpdir(), 'kiln-rep-codec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const big: Representation = makeRepresentation({ exports: 400, uncovered: 5 });
const bigBytes = encodeRepresentation(big);
const lay = layoutOf(bigBytes);

describe('round trip', () => {
  it('decodes from bytes exactly what was encoded', () => {
    expect(readRepresentation(bigBytes)).toEqual(big);
  });

  it('decodes from a file exactly what was encoded', () => {
    const file = join(dir, 'kiln.rep');
    writeFileSync(file, bigBytes);
    expect(readRepresentation(file)).toEqual(big);
  });

  it.each(['none', 'deflate', 'brotli', 'deflate-dict'] as const)('round trips with %s payloads', (compression) => {
    const rep = makeRepresentation({ exports: 30, seed: 7 });
    expect(readRepresentation(encodeRepresentation(rep, { compression }))).toEqual(rep);
  });

  it('round trips edge content: no entries, no payloads, astral surfaces, empty code', () => {
    const rep: Representation = {
      header: { format: 2, producer: 'p', package: 'é', version: '0.0.0', requirements: { node: '20.0.0', features: [] } },
      entries: [
        { surface: 'é#a', declaring: 'x', kind: 'const', coverage: { covered: true, payload: 0, export: 'a' } },
        { surface: 'é#\uffff', declaring: 'y', kind: 'const', coverage: { covered: false, reason: 'KILN_REP_UNCOVERED_X', detail: '' } },
        { surface: 'é#😀', declaring: 'y', kind: 'const', coverage: { covered: true, payload: 0, export: '😀' } },
      ],
      payloads: [{ name: 'a.js', code: '' }],
    };
    expect(readRepresentation(encodeRepresentation(rep))).toEqual(rep);
    const empty: Representation = { ...rep, entries: [], payloads: [] };
    expect(readRepresentation(encodeRepresentation(empty))).toEqual(empty);
  });

  it('is deterministic: the same input gives the same bytes', () => {
    const again = encodeRepresentation(makeRepresentation({ exports: 400, uncovered: 5 }));
    expect(Buffer.from(again).equals(Buffer.from(bigBytes))).toBe(true);
  });

  // Hash stability: the bytes of format 2 for a fixed model, pinned. A change here changes every
  // package's kiln.rep for the same inputs — a new REPRESENTATION_FORMAT, or at least a KEY_SCHEMA bump
  // (packages/core/src/version.ts) so no build output cached under the old bytes is restored.
  it.each([
    [{ exports: 30, seed: 7 }, 8507, '908c8f7329487eb904179f1e36b31c7eff3dbaf45544cf4990e9d277548ea59a'],
    [{ exports: 3, seed: 2 }, 1620, '6c7bf8423e61c4cb393a3b3bf3de740eabfd0811f4ad482ec5c68b593abcceec'],
  ])('is stable: %o encodes to the pinned bytes', (opts, length, sha256) => {
    const bytes = encodeRepresentation(makeRepresentation(opts));
    expect(bytes.length).toBe(length);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);
  });
});

describe('selective loading (3 of 400)', () => {
  it('reads only the prefix, header, index and the payloads it loads (and those they require)', () => {
    const file = join(dir, 'sel.rep');
    writeFileSync(file, bigBytes);
    const r = openRepresentation(file);
    const s = r.sections;
    const meta = s.prefix + s.header + s.index + s.keys + s.info + s.table + s.dict + s.seal;
    expect(r.bytesRead).toBe(meta);
    const covered = big.entries.filter((e) => e.coverage.covered);
    const picks = [covered[3]!, covered[200]!, covered[covered.length - 1]!];
    const loaded = new Set<number>();
    const load = (i: number) => {
      if (loaded.has(i)) return;
      loaded.add(i);
      for (const m of r.payload(i).code.matchAll(/require\('\.\/([^']+)'\)/g)) load(r.payloadIndex(m[1]!)!);
    };
    for (const e of picks) {
      const found = r.lookup(e.surface)!;
      expect(found).toEqual(e);
      load((found.coverage as { payload: number }).payload);
    }
    expect(loaded.size).toBeGreaterThanOrEqual(3);
    expect(loaded.size).toBeLessThanOrEqual(9);
    const payloadBytes = [...loaded].reduce((n, i) => n + r.payloadInfo(i).storedLength, 0);
    expect(r.bytesRead).toBeLessThanOrEqual(meta + payloadBytes);
    expect(r.bytesRead).toBe(meta + payloadBytes);
    expect(r.bytesRead).toBeLessThan(s.total * 0.4);
    // A miss reads nothing more.
    const before = r.bytesRead;
    expect(r.lookup('@acme/ledger#nope')).toBeUndefined();
    expect(r.bytesRead).toBe(before);
    r.close();
  });
});

/** CommonJS payloads as the producer writes them for a package of similar modules (helpers, state, classes). */
function similarModules(n: number): Representation {
  const payloads = [{ name: 's-shared.js', code: `'use strict';\n\nconst entries=new Map;function record(key,n){const next=(entries.get(key)??0)+n;entries.set(key,next);return next}function pad(s,width=8,fill=" "){return s.length>=width?s:fill.repeat(width-s.length)+s}\n\nexports.pad = pad;\nexports.record = record;\n` }];
  const entries: Representation['entries'] = [];
  for (let m = 0; m < n; m++) {
    payloads.push({
      name: `e-${m}.js`,
      code: `'use strict';\n\nvar shared = require('./s-shared.js');\n\nlet calls=0;const cache=new Map;function weights${m}(n){const hit=cache.get(n);if(hit)return hit;const out=[];for(let i=0;i<n;i++)out.push(i*${m + 3}%17/17);cache.set(n,out);return out}const NAME_${m}="module-${m}";const LIMITS_${m}=Object.freeze({lo:-${m + 1},hi:${(m + 1) * 10},tags:["t${m}a","t${m}b"]});function scale${m}(x,factor=${m + 1}){calls++;return Math.min(LIMITS_${m}.hi*100,Math.max(LIMITS_${m}.lo*100,x*factor))}function score${m}(xs){const w=weights${m}(xs.length);return xs.reduce((acc,x,i)=>acc+x*w[i],0)}function label${m}(n,width=6){shared.record("label${m}",1);return shared.pad(String(n),width,"0")+"-"+NAME_${m}}function parse${m}(s){const n=Number.parseFloat(s);if(Number.isNaN(n))throw new RangeError(\`parse${m}: not a number: \${s}\`);return n}class Acc${m}{name;total=0;constructor(name=NAME_${m}){this.name=name}add(x){this.total+=scale${m}(x,1);return this}get value(){return this.total}}\n\nexports.Acc${m} = Acc${m};\nexports.label${m} = label${m};\nexports.parse${m} = parse${m};\nexports.scale${m} = scale${m};\nexports.score${m} = score${m};\n`,
    });
    for (const name of [`Acc${m}`, `label${m}`, `parse${m}`, `scale${m}`, `score${m}`]) {
      entries.push({ surface: `@acme/similar#${name}`, declaring: `typescript:@acme/similar//src/m${m}#${name}:${name.startsWith('Acc') ? 'class' : 'function'}`, kind: name.startsWith('Acc') ? 'class' : 'function', coverage: { covered: true, payload: m + 1, export: name } });
    }
  }
  entries.sort((a, b) => (Buffer.compare(Buffer.from(a.surface), Buffer.from(b.surface))));
  return { header: { format: 2, producer: 'test', package: '@acme/similar', version: '1.0.0', requirements: { node: '20.19.0', features: ['cjs-payloads'] } }, entries, payloads };
}

/** The same content as one JSON document, each payload with its SHA-256 in hex (bench-representation-size's measure). */
const asJson = (rep: Representation) => sameContentAsJsonBytes(rep);

describe('size (issue 15 point 2: at most 0.3× the same content as JSON)', () => {
  it.each([4, 8, 20])('a package of %i similar modules stays under 0.3× JSON: the dictionary is the payloads\' own code', (n) => {
    const rep = similarModules(n);
    const bytes = encodeRepresentation(rep);
    expect(readRepresentation(bytes)).toEqual(rep);
    expect(bytes.length / asJson(rep)).toBeLessThanOrEqual(0.3);
    const file = join(dir, `similar-${n}.rep`);
    writeFileSync(file, bytes);
    const r = openRepresentation(file);
    expect(r.sections.dict).toBeGreaterThan(0);
    r.close();
  });

  it('never larger than without a package dictionary: a tiny payload references the static dictionary only', () => {
    for (const n of [1, 2, 4, 8]) {
      const rep = similarModules(n);
      expect(encodeRepresentation(rep).length).toBeLessThanOrEqual(encodeRepresentation(rep, { compression: 'deflate' }).length);
    }
    const rep = similarModules(1);
    rep.payloads = [{ name: 'e-0.js', code: "'use strict';\n\nexports.value = 42;\n" }];
    rep.entries = rep.entries.map((e) => ({ ...e, coverage: { covered: true, payload: 0, export: 'value' } }));
    const bytes = encodeRepresentation(rep);
    expect(readRepresentation(bytes)).toEqual(rep);
    const file = join(dir, 'one.rep');
    writeFileSync(file, bytes);
    const r = openRepresentation(file);
    expect(r.sections.dict).toBe(0);
    expect(r.payloadInfo(0).compression).toBe('deflate-dict');
    r.close();
  });

  it("the static dictionary is format 2's: pinned by its SHA-256, and a payload of common boilerplate is a few back-references into it", () => {
    expect(createHash('sha256').update(staticDictionary()).digest('hex')).toBe(STATIC_DICTIONARY_SHA256);
    const rep = similarModules(1);
    rep.payloads = [{ name: 'e-0.js', code: "'use strict';\n\nObject.defineProperty(exports, '__esModule', { value: true });\n\nexports.value = 42;\n" }];
    rep.entries = rep.entries.map((e) => ({ ...e, coverage: { covered: true, payload: 0, export: 'value' } }));
    const r = openRepresentation(encodeRepresentation(rep));
    // Without a dictionary deflate stores these 86 bytes in ~70; the static dictionary holds the idiom.
    expect(r.payloadInfo(0).storedLength).toBeLessThan(40);
    r.close();
  });
});

function patched(bytes: Uint8Array, f: (b: Buffer) => void): Buffer {
  const b = Buffer.from(bytes);
  f(b);
  return b;
}

describe('refusals when reading', () => {
  it('no file: KILN_REP_NOT_FOUND', () => {
    expect(refusal(() => openRepresentation(join(dir, 'missing', 'kiln.rep'))).code).toBe('KILN_REP_NOT_FOUND');
  });

  it("no file: the hint says where kiln.rep is written and how a package another tool built gets one", () => {
    // The trpc trial: @trpc/server rebuilt by tsdown (which empties dist/) had no dist/kiln.rep, and the
    // hint sent the reader to 'kiln.rep beside package.json' (it is beside the main entry's built JS,
    // representationPath) with kiln's own build as the only way to get one.
    const e = refusal(() => openRepresentation(join(dir, 'missing', 'dist', 'kiln.rep')));
    expect(e.hint).toContain('kiln represent <package dir>');
    expect(e.hint).toContain('built JavaScript of the main entry');
    expect(e.hint).not.toContain('beside package.json');
    expect(REP_HINTS.KILN_REP_NOT_A_REPRESENTATION).not.toContain('package.json');
  });

  it('a directory: KILN_REP_UNREADABLE', () => {
    mkdirSync(join(dir, 'adir'));
    expect(refusal(() => openRepresentation(join(dir, 'adir'))).code).toBe('KILN_REP_UNREADABLE');
  });

  it('bad magic, or too short for it: KILN_REP_NOT_A_REPRESENTATION', () => {
    expect(refusal(() => openRepresentation(patched(bigBytes, (b) => (b[1] = 0)))).code).toBe('KILN_REP_NOT_A_REPRESENTATION');
    expect(refusal(() => openRepresentation(new Uint8Array(0))).code).toBe('KILN_REP_NOT_A_REPRESENTATION');
    expect(refusal(() => openRepresentation(Buffer.from('{"header":{}}'))).code).toBe('KILN_REP_NOT_A_REPRESENTATION');
  });

  it('a future (or the former) format version is refused naming the package and version, having read only the label', () => {
    const future = patched(bigBytes, (b) => b.writeUInt32LE(REPRESENTATION_FORMAT + 1, PREFIX.format));
    let e = refusal(() => openRepresentation(future));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect(e.package).toBe('@acme/ledger');
    expect(e.version).toBe('1.4.2');
    expect(e.requirement).toBe(`representation format ${REPRESENTATION_FORMAT}`);
    expect(e.message).toContain('@acme/ledger@1.4.2');
    expect(e.message).toContain(`format ${REPRESENTATION_FORMAT + 1}`);
    // From a file too.
    const file = join(dir, 'future.rep');
    writeFileSync(file, future);
    e = refusal(() => openRepresentation(file));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    // A label that does not read cleanly: refused all the same, and says so instead of naming anything.
    const noLabel = patched(future, (b) => b.writeUInt32LE(0xfffffff0, PREFIX.prefixLength));
    e = refusal(() => openRepresentation(noLabel));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect(e.package).toBeUndefined();
    expect(e.message).toContain('could not be read');
    // Version 0 is not supported either, nor format 1 (its u32 prefix, 12- and 52-byte records).
    expect(refusal(() => openRepresentation(patched(bigBytes, (b) => b.writeUInt32LE(0, PREFIX.format)))).code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    e = refusal(() => openRepresentation(patched(bigBytes, (b) => b.writeUInt32LE(1, PREFIX.format))));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect(e.message).toContain('@acme/ledger@1.4.2: its representation is format 1');
  });

  it('truncated anywhere: KILN_REP_CORRUPT (before any allocation from its counts)', () => {
    for (const n of [12, 20, lay.prefixLength - 1, lay.prefixLength, 100, 5000, bigBytes.length - 1]) {
      expect(refusal(() => openRepresentation(bigBytes.subarray(0, n))).code, `at ${n}`).toBe('KILN_REP_CORRUPT');
    }
    const trailing = Buffer.concat([bigBytes, Buffer.from([0])]);
    expect(refusal(() => openRepresentation(trailing)).code).toBe('KILN_REP_CORRUPT');
  });

  it('huge counts, overlong or padded varints: KILN_REP_CORRUPT', () => {
    for (const name of ['entryCount', 'payloadCount', 'headerLength', 'infoRawLength', 'payloadsLength']) {
      const [at, len] = lay.fields[name]!;
      // The same number of bytes, every group's continuation bit set but the last: the largest value that fits.
      const e = refusal(() => openRepresentation(patched(bigBytes, (b) => b.fill(0xff, at, at + len - 1).writeUInt8(0x7f, at + len - 1))));
      expect(e.code, name).toBe('KILN_REP_CORRUPT');
    }
    // A value written with a trailing zero group (not minimal): refused, so one file has one encoding.
    const [at] = lay.fields.dictCompression!;
    const padded = Buffer.concat([bigBytes.subarray(0, at), Buffer.from([bigBytes[at]! | 0x80, 0]), bigBytes.subarray(at + 1)]);
    padded.writeUInt32LE(lay.prefixLength + 1, PREFIX.prefixLength);
    expect(refusal(() => openRepresentation(padded)).message).toContain('not minimally encoded');
  });

  // Structural damage behind a recomputed seal: the checks after the seal refuse it on their own.
  const { sealAt, indexAt, tableAt } = lay;
  const resealed = (f: (b: Buffer) => void) =>
    patched(bigBytes, (b) => {
      f(b);
      createHash('sha256').update(b.subarray(0, sealAt)).digest().copy(b, sealAt);
    });
  const ix = lay.index;
  const rec = (i: number) => indexAt + i * ix.size;
  const tab = (i: number) => tableAt + i * lay.table.size;
  const payloadsLength = lay.fields.payloadsLength![2];
  it.each([
    ['two index records swapped (unsorted)', 'not where the previous one ended', (b: Buffer) => {
      const a = Buffer.from(b.subarray(rec(10), rec(11)));
      b.copy(b, rec(10), rec(11), rec(12));
      a.copy(b, rec(11));
    }],
    ['an index record duplicated', 'not where the previous one ended', (b: Buffer) => b.copy(b, rec(11), rec(10), rec(11))],
    ['a payload index out of range', 'names payload', (b: Buffer) => b.writeUIntLE(lay.fields.payloadCount![2], rec(20) + ix.key, ix.payload)],
    ['a key offset out of range', 'not where the previous one ended', (b: Buffer) => b.writeUIntLE(2 ** (8 * ix.key) - 1, rec(20), ix.key)],
    ['an INFO offset out of range', 'outside INFO', (b: Buffer) => b.writeUIntLE(2 ** (8 * ix.info) - 1, rec(20) + ix.key + ix.payload, ix.info)],
    ['an INFO offset in range but another entry\'s', "INFO offset is not after the previous entry's", (b: Buffer) => b.copy(b, rec(20) + ix.key + ix.payload, rec(19) + ix.key + ix.payload, rec(20))],
    ['a payload length out of range', 'lies outside the payload section', (b: Buffer) => b.writeUIntLE(payloadsLength, tab(7), lay.table.stored)],
    ['a payload length one short (the lengths no longer add up)', 'belong to no payload', (b: Buffer) => b.writeUIntLE(b.readUIntLE(tab(7), lay.table.stored) - 1, tab(7), lay.table.stored)],
    ['an unknown compression', 'unknown compression', (b: Buffer) => b.writeUInt8(9, tab(7) + lay.table.stored)],
  ])('%s, resealed: KILN_REP_CORRUPT naming the package', (_, says, f) => {
    const e = refusal(() => openRepresentation(resealed(f)));
    expect(e.code).toBe('KILN_REP_CORRUPT');
    expect(e.package).toBe('@acme/ledger');
    expect(e.message).toContain(says);
  });

  it('an entry count one higher, resealed: KILN_REP_CORRUPT (the sections no longer add up)', () => {
    const [at] = lay.fields.entryCount!;
    const e = refusal(() => openRepresentation(resealed((b) => (b[at]! += 1))));
    expect(e.code).toBe('KILN_REP_CORRUPT');
  });

  // Keys that stay contiguous but break the order: only the sort check can see them.
  it.each([
    ['out of order', '#e'],
    ['duplicated', '#a'],
  ])('index keys %s (contiguous, resealed): KILN_REP_CORRUPT', (_, second) => {
    const e = (surface: string) => ({ surface, declaring: 'd', kind: 'const', coverage: { covered: false as const, reason: 'R', detail: '' } });
    const rep: Representation = { header: { ...big.header, package: 'p' }, entries: [e('p#a'), e('p#b'), e('p#d')], payloads: [] };
    const bytes = encodeRepresentation(rep);
    const { keysAt, sealAt: at } = layoutOf(bytes);
    const b = Buffer.from(bytes);
    // KEYS holds each surface without the package's name.
    expect(b.subarray(keysAt, keysAt + 6).toString()).toBe('#a#b#d');
    b.write(second, keysAt + 2);
    createHash('sha256').update(b.subarray(0, at)).digest().copy(b, at);
    expect(refusal(() => openRepresentation(b)).code).toBe('KILN_REP_CORRUPT');
  });

  it('an altered payload dictionary: KILN_REP_INTEGRITY when opening (the seal covers it); resealed, KILN_REP_CORRUPT before any payload that needs it is decoded', () => {
    expect(lay.fields.dictLength![2]).toBeGreaterThan(32);
    expect(refusal(() => openRepresentation(patched(bigBytes, (b) => (b[lay.dictAt + 20]! ^= 4)))).code).toBe('KILN_REP_INTEGRITY');
    const r = openRepresentation(resealed((b) => (b[lay.dictAt + 20]! ^= 4)));
    const e = refusal(() => r.payload(7));
    expect(e.code).toBe('KILN_REP_CORRUPT');
    expect(e.message).toContain('dictionary');
  });

  it("a payload's hash binds it to the dictionary it decodes with: KEYS altered (still sorted) and resealed, every deflate-dict payload is refused before it is decoded", () => {
    // KEYS is part of a payload's dictionary (format.ts): changed bytes there change what the payload's
    // stored bytes decode to, although the stored bytes themselves are intact.
    // (A package small enough that KEYS is inside deflate's window: the 400-export one's own code fills it.)
    const bytes = encodeRepresentation(makeRepresentation({ exports: 12, seed: 9 }));
    const l = layoutOf(bytes);
    const r0 = openRepresentation(bytes);
    const i = [...Array(r0.payloadCount).keys()].find((k) => r0.payloadInfo(k).compression === 'deflate-dict')!;
    expect(i).toBeDefined();
    expect(() => r0.payload(i)).not.toThrow();
    const b = Buffer.from(bytes);
    b[l.infoAt - 1]! += 1; // the last key's last byte: raising it keeps the keys sorted and unique
    createHash('sha256').update(b.subarray(0, l.sealAt)).digest().copy(b, l.sealAt);
    const r = openRepresentation(b);
    const e = refusal(() => r.payload(i));
    expect(e.code).toBe('KILN_REP_INTEGRITY');
    expect(e.requirement).toBe(r0.payloadInfo(i).name);
  });

  it('an altered header or index: KILN_REP_INTEGRITY when opening', () => {
    const e = refusal(() => openRepresentation(patched(bigBytes, (b) => (b[lay.indexAt + 3]! ^= 0x20))));
    expect(e.code).toBe('KILN_REP_INTEGRITY');
  });

  it('an altered payload: KILN_REP_INTEGRITY naming it, when it is loaded (and only then)', () => {
    const r0 = openRepresentation(bigBytes);
    const info = r0.payloadInfo(100);
    const bad = patched(bigBytes, (b) => (b[info.offset + 5]! ^= 1));
    const r = openRepresentation(bad);
    expect(() => r.payload(99)).not.toThrow();
    const e = refusal(() => r.payload(100));
    expect(e.code).toBe('KILN_REP_INTEGRITY');
    expect(e.package).toBe('@acme/ledger');
    expect(e.requirement).toBe(info.name);
  });
});

describe('refusals when writing (KILN_REP_INVALID)', () => {
  const small = () => makeRepresentation({ exports: 5, seed: 3 });
  it.each([
    ['unsorted entries', (r: Representation) => r.entries.reverse()],
    ['a duplicate entry', (r: Representation) => r.entries.splice(1, 0, r.entries[0]!)],
    ['a payload index out of range', (r: Representation) => ((r.entries[0]!.coverage as { payload: number }).payload = 99)],
    ['a duplicate payload name', (r: Representation) => (r.payloads[1]!.name = r.payloads[0]!.name)],
    ['an empty payload name', (r: Representation) => (r.payloads[1]!.name = '')],
    ['a string over the limit', (r: Representation) => (r.entries[0]!.declaring = 'x'.repeat(70000))],
    ['another format', (r: Representation) => (r.header.format = REPRESENTATION_FORMAT + 1)],
    ['UTF-16 order instead of code points', (r: Representation) => {
      r.entries = [
        { surface: 'p#😀', declaring: 'a', kind: 'k', coverage: { covered: false, reason: 'R', detail: '' } },
        { surface: 'p#\uffff', declaring: 'b', kind: 'k', coverage: { covered: false, reason: 'R', detail: '' } },
      ];
    }],
  ])('%s', (_, mutate) => {
    const rep = small();
    mutate(rep);
    expect(refusal(() => encodeRepresentation(rep)).code).toBe('KILN_REP_INVALID');
  });
});

describe('the runtime codes and core registry', () => {
  it('every RepError code is registered in core with the same hint', () => {
    for (const [code, hint] of Object.entries(REP_HINTS)) {
      const entry = (CODES as Record<string, { hint: string; severity: string }>)[code];
      expect(entry, code).toBeDefined();
      expect(entry!.hint, code).toBe(hint);
      expect(entry!.severity).toBe('error');
    }
  });

  it('a refusal is data first: the record carries code, hint, package and version', () => {
    const e = refusal(() => openRepresentation(patched(bigBytes, (b) => b.writeUInt32LE(9, PREFIX.format))));
    expect(JSON.parse(JSON.stringify(e))).toEqual({
      code: 'KILN_REP_UNSUPPORTED_VERSION',
      message: e.message.replace(/^KILN_REP_UNSUPPORTED_VERSION: /, ''),
      hint: REP_HINTS.KILN_REP_UNSUPPORTED_VERSION,
      package: '@acme/ledger',
      version: '1.4.2',
      requirement: `representation format ${REPRESENTATION_FORMAT}`,
    });
  });
});
