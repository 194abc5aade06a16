/**
 * The on-disk layout of `kiln.rep` (SPEC §7, RFC 123): every constant of the format in one place.
 * write.ts and read.ts import these and nothing else defines a size, an offset or a limit.
 *
 * All integers are unsigned little-endian. Strings are UTF-8; "code-point order" is the byte order of
 * their UTF-8 encodings (the two agree), so the reader compares index keys without decoding them.
 * `str` = u16 length + bytes.
 *
 *   offset  size  section
 *   0       56    PREFIX   magic[8] "\x89KILNREP" | u32 format | u32 prefixLength (=56) |
 *                          u32 headerLength | u32 entryCount | u32 keysLength | u32 infoLength |
 *                          u32 infoRawLength | u32 payloadCount | u32 dictLength | u32 dictRawLength |
 *                          u32 payloadsLength | u32 flags (0)
 *   56      H     HEADER   str package | str version | str producer | str requirements.node |
 *                          u16 featureCount | str feature × featureCount
 *           E×12  INDEX    entryCount fixed records, sorted by surface in code-point order, unique:
 *                          u32 keyOffset (into KEYS; a key ends where the next record's begins, the
 *                          last at the end of KEYS) | u32 payload (0xFFFFFFFF: uncovered) | u32
 *                          infoOffset (into INFO, raw)
 *           K     KEYS     the surface identities' UTF-8 bytes without the package's name (every surface
 *                          of the package starts with it: `#name`, `/sub#name`), in index order: all a
 *                          binary search reads
 *           I     INFO     one brotli block; raw, a sequence of records: per entry `str declaring |
 *                          str kind | str a | str b` (covered: a = export, b = ""; uncovered: a = reason
 *                          code, b = detail), per payload `str name`. Decompressed once, on first use.
 *           P×52  TABLE    payloadCount fixed records: u32 nameOffset (into INFO) | u32 offset (into
 *                          PAYLOADS) | u32 storedLength | u32 rawLength | u8 compression | 3 zero bytes |
 *                          sha256[32] of the stored bytes
 *           D     DICT     empty when no payload uses it, else sha256[32] of the block | the deflate
 *                          preset dictionary as a brotli block (the payloads' own code, most shared
 *                          last, up to 32 KiB: write.ts buildDictionary). Its own hash, checked before
 *                          it is decompressed: a
 *                          payload's code depends on its stored bytes AND the dictionary, so both are
 *                          verified before anything is decoded.
 *           32    SEAL     SHA-256 of PREFIX..DICT (everything before the seal)
 *           L     PAYLOADS the stored payload bytes, each compressed on its own (selective loads stay
 *                          selective)
 *
 * Versioning (RFC 123 "reject unsupported versions before interpreting version-specific metadata"):
 * the first 16 bytes (magic, format, prefixLength) and the first two header strings (package, version,
 * at offset prefixLength) are the contract of EVERY format version. A reader checks the magic, then the
 * format, and refuses an unknown format having read nothing but those, naming the package and version
 * only if that label reads cleanly (else it says it could not read them).
 *
 * Reading checks every count, offset and length against the bytes actually present BEFORE allocating
 * (the section lengths must add up to the file size exactly), then the SEAL over prefix..dict, then the
 * structure (keys in range, sorted and unique; payload indices and ranges in range; INFO offsets inside
 * INFO's declared raw length; payload names unique, when the names are first needed). A payload's
 * SHA-256 is checked before it is decompressed or returned; every decompression is bounded by the
 * declared raw length (itself under LIMITS), so a bomb cannot allocate more.
 *
 * Encoding decision, by measurement (tools/bench-representation-format.mjs; 400 exports of generated
 * CJS code — functions with helpers, classes, constants — 400 entry payloads + 40 shared chunks, 532.8
 * KiB of code; JSON.stringify of the same content 646.4 KiB, JSON.parse 0.98 ms; Node 20.20, 2 shared
 * cores, medians of 15):
 *
 *   payloads       size        ×JSON  meta      open      open+all   open+3 lookups (9 payloads read)
 *   none           573.7 KiB   0.888  41.0 KiB  0.27 ms   1.9 ms     0.52 ms, 52.9 KiB read
 *   deflate        287.8 KiB   0.445  41.0 KiB  0.10 ms   5.3 ms     0.44 ms, 46.4 KiB read
 *   brotli         260.7 KiB   0.403  41.0 KiB  0.12 ms   7.0 ms     0.43 ms, 45.7 KiB read
 *   deflate-dict   122.4 KiB   0.189  44.0 KiB  0.20 ms   8.2 ms     0.55 ms, 47.8 KiB read
 *
 * Decision: `deflate-dict` — the only encoding under the 0.3× JSON target. Payloads are small (~1.2 KiB),
 * so compressing each alone finds little to share (brotli's built-in dictionary gets 2.4×); a preset
 * dictionary made of the package's own payload code (the most shared last, up to deflate's 32 KiB
 * window, brotli-stored once per file) lets every payload reference what its siblings share while each
 * stays separately loadable. Node 20's zlib takes preset dictionaries for deflate only (not brotli). The
 * writer also stores the file without a dictionary and keeps the smaller (one tiny payload gains nothing
 * from it). An earlier dictionary of whole lines repeated across payloads reached only 0.272× here and
 * 0.33–0.35× on 20–100-export packages (tools/bench-representation-size.mjs), where this one gives
 * 0.16–0.27×; an earlier layout (one string table, 48-byte index records, raw) spent 92 KiB on metadata
 * and reached only 0.485× with brotli payloads, hence KEYS raw for the binary search and everything else
 * in one brotli INFO block. The price: every load reads and inflates the dictionary (3 KiB stored here),
 * and decoding all 440 payloads is slower than JSON.parse of the whole file (each payload is hashed and
 * inflated on its own), which is the case the format is not for.
 *
 * Below a few kilobytes of JSON the target is out of reach of any encoding: on kiln's 1–3-export fixture
 * libraries even brotli-11 of the whole JSON document (no selective load at all) is 0.38–0.60× of it, and
 * the payloads' code brotli-compressed with their raw hashes and no metadata at all is 0.17–0.28×
 * (bench-representation-size.mjs prints both floors beside kiln.rep).
 */

/** The format version this runtime reads and writes (independent of the manifest's). */
export const REPRESENTATION_FORMAT = 1;

/** `\x89KILNREP`: the high byte catches 7-bit transfers, the text a human's `head`. */
export const MAGIC = Uint8Array.of(0x89, 0x4b, 0x49, 0x4c, 0x4e, 0x52, 0x45, 0x50);

/** Offsets in the prefix. The first three are the contract of every format version. */
export const PREFIX = {
  magic: 0,
  format: 8,
  prefixLength: 12,
  headerLength: 16,
  entryCount: 20,
  keysLength: 24,
  infoLength: 28,
  infoRawLength: 32,
  payloadCount: 36,
  dictLength: 40,
  dictRawLength: 44,
  payloadsLength: 48,
  flags: 52,
  /** Size of the v1 prefix. */
  size: 56,
  /** Bytes every version has in the same place (magic, format, prefixLength). */
  stable: 16,
} as const;

/** Index record. */
export const INDEX_RECORD = {
  keyOffset: 0,
  payload: 4,
  infoOffset: 8,
  size: 12,
} as const;

/** Payload table record. */
export const TABLE_RECORD = {
  nameOffset: 0,
  offset: 4,
  storedLength: 8,
  rawLength: 12,
  compression: 16,
  sha256: 20,
  size: 52,
} as const;

export const SEAL_SIZE = 32;
export const NO_PAYLOAD = 0xffffffff;

/** A payload's stored encoding (per payload: the writer stores `none` when compressing does not help). */
export const COMPRESSION = { none: 0, deflate: 1, brotli: 2, 'deflate-dict': 3 } as const;
export type Compression = keyof typeof COMPRESSION;
export const COMPRESSION_NAMES: readonly Compression[] = ['none', 'deflate', 'brotli', 'deflate-dict'];
/** The writer's default, chosen by measurement (see the header). */
export const DEFAULT_COMPRESSION: Compression = 'deflate-dict';
/** Deflate's window: a preset dictionary longer than this is never used. */
export const MAX_DICTIONARY = 32768;

/** The features a representation may require that this runtime supports. */
export const KNOWN_FEATURES: readonly string[] = ['cjs-payloads'];

/** Limits: a count or length over one of these is corrupt, whatever the file's size. */
export const LIMITS = {
  /** Entries in the index. */
  maxEntries: 1 << 20,
  /** Payloads in the table. */
  maxPayloads: 1 << 20,
  /** One string (UTF-8 bytes): surface identities, details, payload names (a u16 length). */
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
