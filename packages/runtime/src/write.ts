/**
 * Encodes a `Representation` into the bytes of `kiln.rep` (format.ts's layout).
 *
 * Invariants:
 * - Deterministic: the same representation (and options) gives the same bytes — INFO is built in index
 *   order, the dictionary by a total order over payloads, compression has fixed parameters, nothing time-
 *   or machine-dependent.
 * - Refuses (KILN_REP_INVALID) a model that breaks the data model's invariants rather than writing a
 *   file a reader would refuse: entries sorted in code-point order and unique, payload indices in range,
 *   payload names unique and non-empty, every string and count within format.ts's LIMITS.
 * - A payload is stored compressed only when that makes it smaller (else `none`); INFO and DICT in
 *   whichever of none, brotli and deflate-dict is smallest.
 */
import { readRepresentation } from './read.js';
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zc, deflateRawSync } from 'node:zlib';
import { repError } from './errors.js';
import { dictDictionary, infoDictionary, payloadDictionary, payloadDigest } from './dictionary.js';
import {
  COMPRESSION,
  DEFAULT_COMPRESSION,
  HASH,
  LIMITS,
  MAGIC,
  MAX_DICTIONARY,
  PREFIX,
  PREFIX_FIELDS,
  REPRESENTATION_FORMAT,
  SEAL_SIZE,
  recordLayout,
  varUint,
  type Compression,
  type PrefixValues,
} from './format.js';
import type { Representation } from './model.js';

export interface EncodeOptions {
  /** How payloads are stored (default: DEFAULT_COMPRESSION, chosen by measurement). */
  compression?: Compression;
}

function invalid(rep: Representation, message: string): never {
  throw repError('KILN_REP_INVALID', message, { package: rep.header?.package, version: rep.header?.version });
}

/** Brotli at fixed parameters (deterministic): INFO, DICT, and `brotli` payloads. */
export function brotli(raw: Uint8Array): Buffer {
  return brotliCompressSync(raw, {
    params: {
      [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
      [zc.BROTLI_PARAM_QUALITY]: zc.BROTLI_MAX_QUALITY,
      [zc.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  });
}

/** Width of the byte grams that score how much of a payload its siblings share. */
const SHARE_GRAM = 8;
/** Grams scored per file at most: beyond it, only grams whose hash is a multiple of a stride count. */
const SHARE_SAMPLE = 1 << 21;

/** FNV-1a of SHARE_GRAM bytes at `at`. */
function gramHash(b: Buffer, at: number): number {
  let h = 0x811c9dc5;
  for (let i = at; i < at + SHARE_GRAM; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * The deflate preset dictionary: the payloads' own code, least shared first and most shared last,
 * cut to deflate's 32 KiB window from the front (the most shared code nearest the data, where distances
 * are short). A payload whose code lies in the window is stored as a few back-references; one that
 * shares helpers and idioms with the window is stored as the difference. Shared = the sum, over a
 * payload's distinct SHARE_GRAM-byte grams, of how many other payloads hold the same gram (the grams
 * are sampled by hash on very large files, so the score does not depend on positions).
 *
 * By measurement (tools/bench-representation-size.mjs), against the earlier dictionary of whole lines
 * repeated across payloads: the 400-export package's payloads + dictionary 25.6 → 5.9 KB, sourcemap-
 * codec's 3.6 → 2.9 KB, the 9-export fixture's 653 → 405 B. The cost: every load reads and inflates
 * the dictionary (at most 32 KiB raw, brotli-stored, once per opened file).
 *
 * Deterministic: the order is a total order (score, then position in the table).
 */
export function buildDictionary(codes: readonly string[]): Buffer {
  const bufs = codes.map((c) => Buffer.from(c, 'utf8'));
  const total = bufs.reduce((n, b) => n + b.length, 0);
  if (total === 0) return Buffer.alloc(0);
  const stride = Math.max(1, Math.ceil(total / SHARE_SAMPLE));
  const grams = bufs.map((b) => {
    const set = new Set<number>();
    for (let i = 0; i + SHARE_GRAM <= b.length; i++) {
      const h = gramHash(b, i);
      if (h % stride === 0) set.add(h);
    }
    return set;
  });
  const owners = new Map<number, number>();
  for (const set of grams) for (const h of set) owners.set(h, (owners.get(h) ?? 0) + 1);
  const score = grams.map((set) => {
    let n = 0;
    for (const h of set) n += owners.get(h)! - 1;
    return n;
  });
  const order = bufs.map((_, i) => i).sort((a, b) => score[a]! - score[b]! || a - b);
  const parts: Buffer[] = [];
  let size = 0;
  // From the most shared back, until the window is full (the first part kept may be cut at its front).
  for (let k = order.length - 1; k >= 0 && size < MAX_DICTIONARY; k--) {
    const b = bufs[order[k]!]!;
    const take = Math.min(b.length, MAX_DICTIONARY - size);
    if (take === 0) continue;
    parts.unshift(b.subarray(b.length - take));
    size += take;
  }
  return Buffer.concat(parts, size);
}

export function compressPayload(raw: Uint8Array, compression: Compression, dictionary?: Uint8Array): Uint8Array {
  switch (compression) {
    case 'none':
      return raw;
    case 'deflate':
      return deflateRawSync(raw, { level: 9, memLevel: 9 });
    case 'deflate-dict':
      return deflateRawSync(raw, { level: 9, memLevel: 9, ...(dictionary && dictionary.length > 0 ? { dictionary } : {}) });
    case 'brotli':
      return brotli(raw);
  }
}

/** A metadata block (INFO, DICT) in whichever of none, brotli and deflate-dict is smallest (ties: that order). */
function compressBlock(raw: Buffer, dictionary: Buffer): { method: Compression; bytes: Uint8Array } {
  let best: { method: Compression; bytes: Uint8Array } = { method: 'none', bytes: raw };
  if (raw.length === 0) return best;
  for (const method of ['brotli', 'deflate-dict'] as const) {
    const bytes = compressPayload(raw, method, dictionary);
    if (bytes.length < best.bytes.length) best = { method, bytes };
  }
  return best;
}

/** Fixed-width little-endian unsigned integer `v` in `w` bytes at `at`. */
function put(b: Buffer, v: number, at: number, w: number): void {
  b.writeUIntLE(v, at, w);
}

export function encodeRepresentation(rep: Representation, opts: EncodeOptions = {}): Uint8Array {
  const compression = opts.compression ?? DEFAULT_COMPRESSION;
  if (!Object.prototype.hasOwnProperty.call(COMPRESSION, compression)) invalid(rep, `unknown compression ${String(compression)}`);
  const { header, entries, payloads } = rep;
  if (header.format !== REPRESENTATION_FORMAT) {
    invalid(rep, `header.format is ${header.format}; this writer writes format ${REPRESENTATION_FORMAT}`);
  }
  if (entries.length > LIMITS.maxEntries) invalid(rep, `${entries.length} entries (limit ${LIMITS.maxEntries})`);
  if (payloads.length > LIMITS.maxPayloads) invalid(rep, `${payloads.length} payloads (limit ${LIMITS.maxPayloads})`);

  const bytesOf = (s: unknown, what: string): Buffer => {
    if (typeof s !== 'string') invalid(rep, `${what} is not a string`);
    const b = Buffer.from(s, 'utf8');
    if (b.length > LIMITS.maxString) invalid(rep, `${what} is ${b.length} bytes (limit ${LIMITS.maxString})`);
    if (b.toString('utf8') !== s) invalid(rep, `${what} is not valid Unicode (lone surrogate)`);
    return b;
  };
  /** `str` (u16 length + bytes: the stable label only), appended to `parts`. */
  const str = (parts: Buffer[], s: unknown, what: string): number => {
    const b = bytesOf(s, what);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(b.length);
    parts.push(len, b);
    return 2 + b.length;
  };
  /** `vstr` (varint length + bytes), appended to `parts`. */
  const vstr = (parts: Buffer[], s: unknown, what: string): number => {
    const b = bytesOf(s, what);
    const len = varUint(b.length);
    parts.push(len, b);
    return len.length + b.length;
  };

  // HEADER: the stable label. The rest of the header opens INFO (compressed with it).
  const hparts: Buffer[] = [];
  str(hparts, header.package, 'header.package');
  str(hparts, header.version, 'header.version');
  const headerBytes = Buffer.concat(hparts);
  if (headerBytes.length > LIMITS.maxHeader) invalid(rep, `header is ${headerBytes.length} bytes (limit ${LIMITS.maxHeader})`);

  // The payloads' bytes (their names and raw lengths open INFO, after the header's rest).
  const names = new Set<string>();
  const raws = payloads.map((p, i) => {
    if (typeof p?.name !== 'string' || p.name.length === 0) invalid(rep, `payloads[${i}] has no name`);
    if (names.has(p.name)) invalid(rep, `payload name ${p.name} is used twice`);
    names.add(p.name);
    if (typeof p.code !== 'string') invalid(rep, `payload ${p.name}: code is not a string`);
    const raw = Buffer.from(p.code, 'utf8');
    if (raw.toString('utf8') !== p.code) invalid(rep, `payload ${p.name}: code is not valid Unicode`);
    if (raw.length > LIMITS.maxPayload) invalid(rep, `payload ${p.name} is ${raw.length} bytes (limit ${LIMITS.maxPayload})`);
    return raw;
  });
  // KEYS, INFO (entries); the index's values, written once the record widths are known.
  const keyOffsets: number[] = [];
  const payloadOf: (number | undefined)[] = [];
  const infoOffsets: number[] = [];
  const keys: Buffer[] = [];
  let keysLength = 0;
  const info: Buffer[] = [];
  let infoLength = 0;
  infoLength += vstr(info, header.producer, 'header.producer');
  infoLength += vstr(info, header.requirements.node, 'header.requirements.node');
  const features = header.requirements.features;
  if (features.length > LIMITS.maxFeatures) invalid(rep, `${features.length} features (limit ${LIMITS.maxFeatures})`);
  const fc = varUint(features.length);
  info.push(fc);
  infoLength += fc.length;
  features.forEach((f, i) => (infoLength += vstr(info, f, `header.requirements.features[${i}]`)));
  payloads.forEach((p, i) => {
    infoLength += vstr(info, p.name, `payloads[${i}].name`);
    const raw = varUint(raws[i]!.length);
    info.push(raw);
    infoLength += raw.length;
  });
  let prev: Buffer | undefined;
  entries.forEach((e, i) => {
    // Every surface identity starts with the package's name (header.package); KEYS holds the rest.
    const sep = e.surface.charAt(header.package.length);
    if (!e.surface.startsWith(header.package) || (sep !== '#' && sep !== '/')) invalid(rep, `entries[${i}].surface ${e.surface} is not a surface of ${header.package}`);
    const key = bytesOf(e.surface.slice(header.package.length), `entries[${i}].surface`);
    if (prev !== undefined) {
      const c = Buffer.compare(prev, key);
      if (c === 0) invalid(rep, `duplicate entry ${e.surface}`);
      if (c > 0) invalid(rep, `entries are not sorted in code-point order at ${e.surface}`);
    }
    prev = key;
    if (key.length === 0 || key.length > LIMITS.maxString) invalid(rep, `entries[${i}].surface has an empty or over-long name`);
    keyOffsets.push(keysLength);
    keys.push(key);
    keysLength += key.length;
    infoOffsets.push(infoLength);
    infoLength += vstr(info, e.declaring, `${e.surface} declaring`);
    infoLength += vstr(info, e.kind, `${e.surface} kind`);
    const cov = e.coverage;
    if (cov?.covered === true) {
      if (!Number.isInteger(cov.payload) || cov.payload < 0 || cov.payload >= payloads.length) {
        invalid(rep, `${e.surface}: payload index ${cov.payload} out of range (${payloads.length} payloads)`);
      }
      infoLength += vstr(info, cov.export, `${e.surface} export`);
      infoLength += vstr(info, '', `${e.surface}`);
      payloadOf.push(cov.payload);
    } else if (cov?.covered === false) {
      infoLength += vstr(info, cov.reason, `${e.surface} reason`);
      infoLength += vstr(info, cov.detail, `${e.surface} detail`);
      payloadOf.push(undefined);
    } else invalid(rep, `${e.surface}: coverage.covered is neither true nor false`);
  });
  const keysBytes = Buffer.concat(keys, keysLength);

  // PAYLOADS, DICT
  // Payloads stored with `compression`; for deflate-dict, with and without a package dictionary (the
  // static one is always there), and the smaller file wins (one tiny payload can cost more in a package
  // dictionary than it saves).
  const store = (method: Compression, packageDictionary: Buffer) => {
    const dictionary = method === 'deflate-dict' ? payloadDictionary(keysBytes, packageDictionary) : undefined;
    const stored: Uint8Array[] = [];
    const methods: Compression[] = [];
    let length = 0;
    for (const raw of raws) {
      let m: Compression = method;
      let bytes = compressPayload(raw, method, dictionary);
      if (bytes.length >= raw.length) [m, bytes] = ['none', raw];
      stored.push(bytes);
      methods.push(m);
      length += bytes.length;
    }
    const usesDict = packageDictionary.length > 0 && methods.includes('deflate-dict');
    const dictRaw = usesDict ? packageDictionary : Buffer.alloc(0);
    const dictBlock = compressBlock(dictRaw, dictDictionary());
    const window = payloadDictionary(keysBytes, dictRaw);
    return { stored, methods, length, dictRaw, dictBlock, windowDigest: createHash(HASH).update(window).digest() };
  };
  let chosen = store(compression, Buffer.alloc(0));
  if (compression === 'deflate-dict') {
    const withDict = store('deflate-dict', buildDictionary(payloads.map((p) => p.code)));
    if (withDict.length + withDict.dictBlock.bytes.length < chosen.length + chosen.dictBlock.bytes.length) chosen = withDict;
  }
  const { stored, dictRaw, dictBlock } = chosen;
  const payloadsLength = chosen.length;
  if (keysLength > LIMITS.maxKeys) invalid(rep, `KEYS is ${keysLength} bytes (limit ${LIMITS.maxKeys})`);
  if (infoLength > LIMITS.maxInfo) invalid(rep, `INFO is ${infoLength} bytes (limit ${LIMITS.maxInfo})`);
  const infoBlock = compressBlock(Buffer.concat(info, infoLength), infoDictionary(header.package, keysBytes));

  // INDEX and TABLE, in the widths the prefix implies.
  const values: PrefixValues = {
    headerLength: headerBytes.length,
    entryCount: entries.length,
    keysLength,
    infoLength: infoBlock.bytes.length,
    infoRawLength: infoLength,
    payloadCount: payloads.length,
    dictLength: dictBlock.bytes.length,
    dictRawLength: dictRaw.length,
    payloadsLength,
    infoCompression: COMPRESSION[infoBlock.method],
    dictCompression: COMPRESSION[dictBlock.method],
  };
  const layout = recordLayout(values);
  const { index: ir, table: tr } = layout;
  const index = Buffer.alloc(entries.length * ir.size);
  entries.forEach((_, i) => {
    const at = i * ir.size;
    put(index, keyOffsets[i]!, at + ir.keyOffset, ir.keyWidth);
    put(index, payloadOf[i] ?? layout.noPayload, at + ir.payload, ir.payloadWidth);
    put(index, infoOffsets[i]!, at + ir.infoOffset, ir.infoWidth);
  });
  const table = Buffer.alloc(payloads.length * tr.size);
  payloads.forEach((_, i) => {
    const bytes = stored[i]!;
    const at = i * tr.size;
    put(table, bytes.length, at + tr.storedLength, tr.payloadsWidth);
    table.writeUInt8(COMPRESSION[chosen.methods[i]!], at + tr.compression);
    payloadDigest(bytes, chosen.methods[i]!, () => chosen.windowDigest).copy(table, at + tr.sha256);
  });

  // STABLE + PREFIX
  const varints = Buffer.concat(PREFIX_FIELDS.map((f) => varUint(values[f])));
  const stable = Buffer.alloc(PREFIX.stable);
  stable.set(MAGIC, PREFIX.magic);
  stable.writeUInt32LE(REPRESENTATION_FORMAT, PREFIX.format);
  stable.writeUInt32LE(PREFIX.stable + varints.length, PREFIX.prefixLength);

  const sealed = Buffer.concat([stable, varints, headerBytes, index, keysBytes, infoBlock.bytes, table, dictBlock.bytes]);
  const total = sealed.length + SEAL_SIZE + payloadsLength;
  if (total > LIMITS.maxTotal) invalid(rep, `representation is ${total} bytes (limit ${LIMITS.maxTotal})`);
  const seal = createHash(HASH).update(sealed).digest();
  const out = Buffer.concat([sealed, seal, ...stored], total);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * The representation with its header's version set: what the pack step does to a build's unstamped
 * kiln.rep (the build is keyed without the manifest's version, so what it writes cannot carry it; the
 * pack target is keyed by the whole manifest). Decoded whole (every payload integrity-checked) and
 * encoded again, so the result is what the build would have written with that version.
 */
export function stampRepresentation(source: Uint8Array, version: string): Uint8Array {
  const rep = readRepresentation(source);
  return encodeRepresentation({ ...rep, header: { ...rep.header, version } });
}
