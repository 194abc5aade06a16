/**
 * The on-disk layout of `kiln.rep` (SPEC §7, RFC 123): every constant of the format in one place.
 * write.ts and read.ts import these and nothing else defines a size, an offset or a limit.
 *
 * All fixed-width integers are unsigned little-endian; `vu` is an unsigned LEB128 varint of at most 5
 * bytes and a value under 2^32, minimally encoded (a reader refuses padding, so one value has one
 * encoding and the bytes stay deterministic). Strings are UTF-8; "code-point order" is the byte order of
 * their UTF-8 encodings (the two agree), so the reader compares index keys without decoding them.
 * `str` = u16 length + bytes (the stable label only); `vstr` = vu length + bytes.
 *
 * Format 2:
 *
 *   offset  size  section
 *   0       16    STABLE   magic[8] "\x89KILNREP" | u32 format | u32 prefixLength
 *   16      ≤55   PREFIX   vu × 11, in PREFIX_FIELDS order: headerLength | entryCount | keysLength |
 *                          infoLength | infoRawLength | payloadCount | dictLength | dictRawLength |
 *                          payloadsLength | infoCompression | dictCompression;
 *                          prefixLength = 16 + their bytes
 *   P       H     HEADER   str package | str version (the label; the header's rest opens INFO)
 *           E×R   INDEX    entryCount fixed records, sorted by surface in code-point order, unique:
 *                          keyOffset (into KEYS; a key ends where the next record's begins, the last at
 *                          the end of KEYS) | payload (all ones: uncovered) | infoOffset (into INFO, raw).
 *                          Field widths are per file, the fewest bytes that hold the largest value the
 *                          prefix allows (recordLayout): 3 bytes a record for a small package, never
 *                          more than 12. Fixed records: a binary search reads only the ones it probes.
 *           K     KEYS     the surface identities' UTF-8 bytes without the package's name (every surface
 *                          of the package starts with it: `#name`, `/sub#name`), in index order
 *           I     INFO     one compressed block (infoCompression), decompressed at open; raw:
 *                          `vstr producer | vstr requirements.node | vu featureCount | vstr feature ×
 *                          featureCount`, then per payload `vstr name | vu rawLength` (read at open),
 *                          then per entry, in index order, `vstr declaring | vstr kind | vstr a | vstr b`
 *                          (covered: a = export, b = ""; uncovered: a = reason code, b = detail; read
 *                          only when the entry is)
 *           P×T   TABLE    payloadCount fixed records: storedLength (PAYLOADS' width) | u8 compression |
 *                          sha256[32] of the stored bytes. A payload starts where the previous ended
 *                          (the lengths add up to PAYLOADS exactly).
 *           D     DICT     the package dictionary, compressed (dictCompression), or empty: the payloads'
 *                          own code, most shared last (write.ts buildDictionary)
 *           32    SEAL     SHA-256 of STABLE..DICT (everything before the seal)
 *           L     PAYLOADS the stored payload bytes, each compressed on its own (selective loads stay
 *                          selective)
 *
 * Dictionaries. The STATIC dictionary (the generated region of dictionary.ts, ~8 KiB trained on real packages' payloads
 * and INFO by tools/train-representation-dictionary.mjs) is part of the format, like brotli's built-in
 * one: every `deflate-dict` stream may reference it. A payload's dictionary is STATIC then the package's
 * DICT; INFO's is STATIC, the package name, then KEYS (the names its identities repeat); DICT's is STATIC.
 * Each is cut to deflate's 32 KiB window from the front (the package's own bytes stay nearest).
 *
 * Versioning (RFC 123 "reject unsupported versions before interpreting version-specific metadata"):
 * the first 16 bytes (magic, format, prefixLength) and the first two header strings (package, version,
 * `str` at offset prefixLength) are the contract of EVERY format version. A reader checks the magic, then
 * the format, and refuses an unknown format having read nothing but those, naming the package and
 * version only if that label reads cleanly (else it says it could not read them). Format 1 (u32 prefix
 * fields, 12- and 52-byte records, brotli INFO, no static dictionary) is no longer read or written.
 *
 * Reading checks every count, offset and length against the bytes actually present BEFORE allocating
 * (the section lengths must add up to the file size exactly), then the SEAL over stable..dict, then the
 * structure (keys in range, sorted and unique; payload indices and ranges in range; INFO offsets inside
 * INFO's declared raw length; payload names unique, when the names are first needed). A payload's
 * SHA-256 is checked before it is decompressed or returned; every decompression is bounded by the
 * declared raw length (itself under LIMITS), so a bomb cannot allocate more. The static dictionary is
 * checked against STATIC_DICTIONARY_SHA256 before its first use.
 *
 * Encoding decision, by measurement (tools/bench-representation-format.mjs; 400 exports of generated
 * CJS code — functions with helpers, classes, constants — 400 entry payloads + 40 shared chunks, 532.8
 * KiB of code; JSON.stringify of the same content 646.4 KiB, JSON.parse 0.88 ms; Node 20.20, 2 shared
 * cores; format 2's layout, the payloads' encoding forced per row):
 *
 *   payloads       size        ×JSON  meta      open      open+all   open+3 lookups (9 payloads read)
 *   none           564.7 KiB   0.874  32.0 KiB  0.71 ms   2.1 ms     0.37 ms, 43.9 KiB read
 *   deflate        278.8 KiB   0.431  32.0 KiB  0.41 ms   6.5 ms     0.42 ms, 37.4 KiB read
 *   brotli         251.7 KiB   0.389  32.0 KiB  0.33 ms   6.2 ms     0.43 ms, 36.7 KiB read
 *   deflate-dict   113.4 KiB   0.175  35.0 KiB  0.42 ms   7.3 ms     0.58 ms, 38.8 KiB read
 *
 * (Format 1 on the same corpus: deflate-dict 122.4 KiB, 0.189×, 44.0 KiB of metadata.)
 *
 * Decision: `deflate-dict` — the only encoding under the 0.3× JSON target. Payloads are small (~1.2 KiB),
 * so compressing each alone finds little to share (brotli's built-in dictionary gets 2.4×); a preset
 * dictionary made of the package's own payload code (the most shared last, up to deflate's 32 KiB
 * window, stored once per file) lets every payload reference what its siblings share while each stays
 * separately loadable. Node 20's zlib takes preset dictionaries for deflate only (not brotli). The
 * writer also stores the file without a package dictionary and keeps the smaller (one tiny payload gains
 * nothing from it).
 *
 * Why format 2 (tools/bench-representation-size.mjs): format 1 met 0.3× from ~20 exports up but not on
 * small packages (kiln's 3- and 9-export fixture libraries 0.48× and 0.38×), where its fixed part — a
 * 56-byte prefix of u32s, 12-byte index and 52-byte table records (offsets, and names and raw lengths a
 * reader needs only once, at open), a second 32-byte hash on the package dictionary — and deflate
 * streams with nothing to reference outweighed the content. Format 2: a varint prefix, per-file record
 * widths (3 bytes an entry and 34 a payload for a small package), the header's rest and the payloads'
 * names and raw lengths inside compressed INFO, and the static dictionary (what payloads and INFO of
 * every package share: `'use strict'`, `require(`, `exports.value = `, `Object.defineProperty`, the
 * producer and feature strings, KILN_REP_UNCOVERED_* details, `typescript:` identities). Measured: the
 * 3-export fixtures 0.48 → 0.29–0.30×, the 9-export one 0.38 → 0.29×, sourcemap-codec 0.23 → 0.21×, the
 * 400-export package 0.139 → 0.113×. What stays over 0.3× is a package of one export (kiln's 1-export
 * fixtures, 0.38× and 0.42×): for `@fx/top` the payload's code alone deflates to 182 bytes and its
 * required hash is 32, against a budget of 249 (0.3× of its 830-byte JSON), leaving 35 bytes for the
 * magic, the format version, the package name and version, the requirements, the index, the key, the
 * declaring identity, kind, export and payload names, and the seal.
 *
 * Payload integrity: a payload's hash covers its stored bytes and, for `deflate-dict`, the SHA-256 of
 * the dictionary it decodes with (dictionary.ts payloadDigest): its code is a function of both, so a
 * changed KEYS or DICT behind a recomputed seal still cannot change what runs. (Format 1 kept a separate
 * hash on DICT for this; the fuzzer found that format 2 without either ran such a payload.)
 */

/** The format version this runtime reads and writes (independent of the manifest's). */
export const REPRESENTATION_FORMAT = 2;

/** `\x89KILNREP`: the high byte catches 7-bit transfers, the text a human's `head`. */
export const MAGIC = Uint8Array.of(0x89, 0x4b, 0x49, 0x4c, 0x4e, 0x52, 0x45, 0x50);

/** Offsets of the stable part: the contract of every format version. */
export const PREFIX = {
  magic: 0,
  format: 8,
  prefixLength: 12,
  /** Bytes every version has in the same place (magic, format, prefixLength). */
  stable: 16,
  /** The longest format-2 prefix (every field a 5-byte varint). */
  maxSize: 16 + 11 * 5,
} as const;

/** The prefix's varint fields, in order. */
export const PREFIX_FIELDS = [
  'headerLength',
  'entryCount',
  'keysLength',
  'infoLength',
  'infoRawLength',
  'payloadCount',
  'dictLength',
  'dictRawLength',
  'payloadsLength',
  'infoCompression',
  'dictCompression',
] as const;
export type PrefixField = (typeof PREFIX_FIELDS)[number];
export type PrefixValues = Record<PrefixField, number>;

/** The fewest bytes (1–4) of an unsigned integer that holds `max`. */
export function fieldWidth(max: number): number {
  return max <= 0xff ? 1 : max <= 0xffff ? 2 : max <= 0xffffff ? 3 : 4;
}

/** Offsets inside the index and table records, and their sizes, for one file's counts. */
export interface RecordLayout {
  index: { keyOffset: number; payload: number; infoOffset: number; size: number; keyWidth: number; payloadWidth: number; infoWidth: number };
  table: { storedLength: number; compression: number; sha256: number; size: number; payloadsWidth: number };
  /** The index's payload value meaning "uncovered": all ones in the payload field's width. */
  noPayload: number;
}

/**
 * Record layout from the prefix: each field as wide as the largest value it can hold — a key offset is
 * under keysLength, a payload index under payloadCount (all ones reserved for "uncovered"), an INFO
 * offset under infoRawLength, a payload's stored length at most payloadsLength.
 */
export function recordLayout(p: Pick<PrefixValues, 'keysLength' | 'payloadCount' | 'infoRawLength' | 'payloadsLength'>): RecordLayout {
  const kw = fieldWidth(p.keysLength);
  const pw = fieldWidth(p.payloadCount);
  const iw = fieldWidth(p.infoRawLength);
  const ow = fieldWidth(p.payloadsLength);
  return {
    index: { keyOffset: 0, payload: kw, infoOffset: kw + pw, size: kw + pw + iw, keyWidth: kw, payloadWidth: pw, infoWidth: iw },
    table: { storedLength: 0, compression: ow, sha256: ow + 1, size: ow + 33, payloadsWidth: ow },
    noPayload: 2 ** (8 * pw) - 1,
  };
}

export const SEAL_SIZE = 32;

/** A stored encoding: of each payload (the writer stores `none` when compressing does not help), and of INFO and DICT. */
export const COMPRESSION = { none: 0, deflate: 1, brotli: 2, 'deflate-dict': 3 } as const;
export type Compression = keyof typeof COMPRESSION;
export const COMPRESSION_NAMES: readonly Compression[] = ['none', 'deflate', 'brotli', 'deflate-dict'];
/** The writer's default, chosen by measurement (see the header). */
export const DEFAULT_COMPRESSION: Compression = 'deflate-dict';
/** Deflate's window: dictionary bytes further back than this are never referenced. */
export const MAX_DICTIONARY = 32768;
/** SHA-256 (hex) of format 2's static dictionary (dictionary.ts). */
export const STATIC_DICTIONARY_SHA256 = '0e4b64b6a86a49cb8d5d449b68ebc1c1a5a8d30125ead514244a88afdf3b638c';

/** The features a representation may require that this runtime supports. */
export const KNOWN_FEATURES: readonly string[] = ['cjs-payloads'];

/** Limits: a count or length over one of these is corrupt, whatever the file's size. */
export const LIMITS = {
  /** Entries in the index. */
  maxEntries: 1 << 20,
  /** Payloads in the table. */
  maxPayloads: 1 << 20,
  /** One string (UTF-8 bytes): surface identities, details, payload names. */
  maxString: 0xffff,
  /** Features in the header. */
  maxFeatures: 256,
  maxHeader: 1 << 20,
  /** KEYS, and INFO stored or raw. */
  maxKeys: 64 << 20,
  maxInfo: 64 << 20,
  /** One payload, stored or decompressed. */
  maxPayload: 64 << 20,
  /** The whole file. */
  maxTotal: 1 << 30,
} as const;

/** The integrity digest of stored payload bytes and of the sealed sections. */
export const HASH = 'sha256';

export const utf8 = new TextEncoder();
/** Fatal: invalid UTF-8 in a representation is corruption, never replaced silently. */
export const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Code-point order of two strings, via their UTF-8 bytes. */
export function compareCodePoints(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** `vu`: unsigned LEB128 of `n` (< 2^32). */
export function varUint(n: number): Buffer {
  const out: number[] = [];
  let v = n >>> 0;
  if (v !== n) throw new RangeError(`${n} is not a u32`);
  do {
    const b = v & 0x7f;
    v = Math.floor(v / 128);
    out.push(v > 0 ? b | 0x80 : b);
  } while (v > 0);
  return Buffer.from(out);
}

/**
 * Reads a `vu` at `at`: [value, next offset], or a string saying why not (past the end, over 5 bytes or
 * 2^32, or not minimal — a trailing zero group).
 */
export function readVarUint(b: Uint8Array, at: number): [number, number] | string {
  let v = 0;
  for (let i = 0; i < 5; i++) {
    if (at + i >= b.length) return 'ends inside a varint';
    const byte = b[at + i]!;
    v += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) {
      if (i > 0 && byte === 0) return 'a varint is not minimally encoded';
      if (v > 0xffffffff) return 'a varint is over 2^32';
      return [v, at + i + 1];
    }
  }
  return 'a varint is longer than 5 bytes';
}
