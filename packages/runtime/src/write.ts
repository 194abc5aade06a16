/**
 * Encodes a `Representation` into the bytes of `kiln.rep` (format.ts's layout).
 *
 * Invariants:
 * - Deterministic: the same representation (and options) gives the same bytes — the string table is
 *   built in first-use order, compression has fixed parameters, nothing time- or machine-dependent.
 * - Refuses (KILN_REP_INVALID) a model that breaks the data model's invariants rather than writing a
 *   file a reader would refuse: entries sorted in code-point order and unique, payload indices in range,
 *   payload names unique and non-empty, every string and count within format.ts's LIMITS.
 * - A payload is stored compressed only when that makes it smaller.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zc, deflateRawSync } from 'node:zlib';
import { repError } from './errors.js';
import {
  COMPRESSION,
  DEFAULT_COMPRESSION,
  HASH,
  INDEX_RECORD,
  LIMITS,
  MAGIC,
  NO_PAYLOAD,
  PREFIX,
  REPRESENTATION_FORMAT,
  SEAL_SIZE,
  TABLE_RECORD,
  type Compression,
} from './format.js';
import type { Representation } from './model.js';

export interface EncodeOptions {
  /** How payloads are stored (default: DEFAULT_COMPRESSION, chosen by measurement). */
  compression?: Compression;
}

function invalid(rep: Representation, message: string): never {
  throw repError('KILN_REP_INVALID', message, { package: rep.header?.package, version: rep.header?.version });
}

export function compressPayload(raw: Uint8Array, compression: Compression): Uint8Array {
  switch (compression) {
    case 'none':
      return raw;
    case 'deflate':
      return deflateRawSync(raw, { level: 9, memLevel: 9 });
    case 'brotli':
      return brotliCompressSync(raw, {
        params: {
          [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
          [zc.BROTLI_PARAM_QUALITY]: zc.BROTLI_MAX_QUALITY,
          [zc.BROTLI_PARAM_SIZE_HINT]: raw.length,
        },
      });
  }
}

export function encodeRepresentation(rep: Representation, opts: EncodeOptions = {}): Uint8Array {
  const compression = opts.compression ?? DEFAULT_COMPRESSION;
  if (!(compression in COMPRESSION)) invalid(rep, `unknown compression ${String(compression)}`);
  const { header, entries, payloads } = rep;
  if (header.format !== REPRESENTATION_FORMAT) {
    invalid(rep, `header.format is ${header.format}; this writer writes format ${REPRESENTATION_FORMAT}`);
  }
  if (entries.length > LIMITS.maxEntries) invalid(rep, `${entries.length} entries (limit ${LIMITS.maxEntries})`);
  if (payloads.length > LIMITS.maxPayloads) invalid(rep, `${payloads.length} payloads (limit ${LIMITS.maxPayloads})`);

  const str = (s: unknown, what: string): Buffer => {
    if (typeof s !== 'string') invalid(rep, `${what} is not a string`);
    const b = Buffer.from(s, 'utf8');
    if (b.length > LIMITS.maxString) invalid(rep, `${what} is ${b.length} bytes (limit ${LIMITS.maxString})`);
    if (b.toString('utf8') !== s) invalid(rep, `${what} is not valid Unicode (lone surrogate)`);
    return b;
  };

  // HEADER
  const hparts: Buffer[] = [];
  const hstr = (s: unknown, what: string) => {
    const b = str(s, what);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(b.length);
    hparts.push(len, b);
  };
  hstr(header.package, 'header.package');
  hstr(header.version, 'header.version');
  hstr(header.producer, 'header.producer');
  hstr(header.requirements.node, 'header.requirements.node');
  const features = header.requirements.features;
  if (features.length > LIMITS.maxFeatures) invalid(rep, `${features.length} features (limit ${LIMITS.maxFeatures})`);
  const fc = Buffer.alloc(2);
  fc.writeUInt16LE(features.length);
  hparts.push(fc);
  features.forEach((f, i) => hstr(f, `header.requirements.features[${i}]`));
  const headerBytes = Buffer.concat(hparts);
  if (headerBytes.length > LIMITS.maxHeader) invalid(rep, `header is ${headerBytes.length} bytes (limit ${LIMITS.maxHeader})`);

  // STRINGS: deduplicated, in first-use order (deterministic).
  const strings: Buffer[] = [];
  let stringsLength = 0;
  const seen = new Map<string, [number, number]>();
  const ref = (s: unknown, what: string): [number, number] => {
    const b = str(s, what);
    const key = b.toString('latin1');
    let r = seen.get(key);
    if (r === undefined) {
      r = [stringsLength, b.length];
      seen.set(key, r);
      strings.push(b);
      stringsLength += b.length;
    }
    return r;
  };

  // INDEX
  const index = Buffer.alloc(entries.length * INDEX_RECORD.size);
  let prev: Buffer | undefined;
  entries.forEach((e, i) => {
    const at = i * INDEX_RECORD.size;
    const surface = str(e.surface, `entries[${i}].surface`);
    if (prev !== undefined) {
      const c = Buffer.compare(prev, surface);
      if (c === 0) invalid(rep, `duplicate entry ${e.surface}`);
      if (c > 0) invalid(rep, `entries are not sorted in code-point order at ${e.surface}`);
    }
    prev = surface;
    const refs: [number, number][] = [ref(e.surface, 'surface'), ref(e.declaring, `${e.surface} declaring`), ref(e.kind, `${e.surface} kind`)];
    const cov = e.coverage;
    if (cov.covered === true) {
      if (!Number.isInteger(cov.payload) || cov.payload < 0 || cov.payload >= payloads.length) {
        invalid(rep, `${e.surface}: payload index ${cov.payload} out of range (${payloads.length} payloads)`);
      }
      refs.push(ref(cov.export, `${e.surface} export`), [0, 0]);
    } else if (cov.covered === false) {
      refs.push(ref(cov.reason, `${e.surface} reason`), ref(cov.detail, `${e.surface} detail`));
    } else invalid(rep, `${e.surface}: coverage.covered is neither true nor false`);
    refs.forEach(([o, l], k) => {
      index.writeUInt32LE(o, at + k * 8);
      index.writeUInt32LE(l, at + k * 8 + 4);
    });
    index.writeUInt32LE(cov.covered ? 1 : 0, at + INDEX_RECORD.covered);
    index.writeUInt32LE(cov.covered ? cov.payload : NO_PAYLOAD, at + INDEX_RECORD.payload);
  });

  // TABLE and PAYLOADS
  const table = Buffer.alloc(payloads.length * TABLE_RECORD.size);
  const stored: Uint8Array[] = [];
  const names = new Set<string>();
  let payloadsLength = 0;
  payloads.forEach((p, i) => {
    if (typeof p.name !== 'string' || p.name.length === 0) invalid(rep, `payloads[${i}] has no name`);
    if (names.has(p.name)) invalid(rep, `payload name ${p.name} is used twice`);
    names.add(p.name);
    if (typeof p.code !== 'string') invalid(rep, `payload ${p.name}: code is not a string`);
    const raw = Buffer.from(p.code, 'utf8');
    if (raw.toString('utf8') !== p.code) invalid(rep, `payload ${p.name}: code is not valid Unicode`);
    if (raw.length > LIMITS.maxPayload) invalid(rep, `payload ${p.name} is ${raw.length} bytes (limit ${LIMITS.maxPayload})`);
    let method: Compression = compression;
    let bytes = compressPayload(raw, compression);
    if (bytes.length >= raw.length) [method, bytes] = ['none', raw];
    const at = i * TABLE_RECORD.size;
    const [no, nl] = ref(p.name, `payloads[${i}].name`);
    table.writeUInt32LE(no, at + TABLE_RECORD.name);
    table.writeUInt32LE(nl, at + TABLE_RECORD.name + 4);
    table.writeUInt32LE(payloadsLength, at + TABLE_RECORD.offset);
    table.writeUInt32LE(bytes.length, at + TABLE_RECORD.storedLength);
    table.writeUInt32LE(raw.length, at + TABLE_RECORD.rawLength);
    table.writeUInt8(COMPRESSION[method], at + TABLE_RECORD.compression);
    createHash(HASH).update(bytes).digest().copy(table, at + TABLE_RECORD.sha256);
    stored.push(bytes);
    payloadsLength += bytes.length;
  });
  if (stringsLength > LIMITS.maxStrings) invalid(rep, `string table is ${stringsLength} bytes (limit ${LIMITS.maxStrings})`);

  // PREFIX
  const prefix = Buffer.alloc(PREFIX.size);
  prefix.set(MAGIC, PREFIX.magic);
  prefix.writeUInt32LE(REPRESENTATION_FORMAT, PREFIX.format);
  prefix.writeUInt32LE(PREFIX.size, PREFIX.prefixLength);
  prefix.writeUInt32LE(headerBytes.length, PREFIX.headerLength);
  prefix.writeUInt32LE(entries.length, PREFIX.entryCount);
  prefix.writeUInt32LE(stringsLength, PREFIX.stringsLength);
  prefix.writeUInt32LE(payloads.length, PREFIX.payloadCount);
  prefix.writeUInt32LE(payloadsLength, PREFIX.payloadsLength);
  prefix.writeUInt32LE(0, PREFIX.flags);

  const sealed = Buffer.concat([prefix, headerBytes, index, ...strings, table]);
  const total = sealed.length + SEAL_SIZE + payloadsLength;
  if (total > LIMITS.maxTotal) invalid(rep, `representation is ${total} bytes (limit ${LIMITS.maxTotal})`);
  const seal = createHash(HASH).update(sealed).digest();
  const out = Buffer.concat([sealed, seal, ...stored], total);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
