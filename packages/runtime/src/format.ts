/**
 * The on-disk layout of `kiln.rep` (SPEC §7, RFC 123): every constant of the format in one place.
 * write.ts and read.ts import these and nothing else defines a size, an offset or a limit.
 *
 * All integers are unsigned little-endian. Strings are UTF-8; "code-point order" is the byte order of
 * their UTF-8 encodings (the two agree), so the reader compares index keys without decoding them.
 *
 *   offset  size  section
 *   0       40    PREFIX   magic[8] "\x89KILNREP" | u32 format | u32 prefixLength (=40) |
 *                          u32 headerLength | u32 entryCount | u32 stringsLength | u32 payloadCount |
 *                          u32 payloadsLength | u32 flags (0)
 *   40      H     HEADER   str package | str version | str producer | str requirements.node |
 *                          u16 featureCount | str feature × featureCount        (str = u16 length + bytes)
 *           E×40  INDEX    entryCount fixed records, sorted by surface in code-point order, unique:
 *                          ref surface | ref declaring | ref kind | ref a | ref b | u32 covered (0|1) |
 *                          u32 payload (covered; 0xFFFFFFFF when uncovered)
 *                          (ref = u32 offset + u32 length into STRINGS; covered: a = export, b = empty;
 *                          uncovered: a = reason code, b = detail)
 *           S     STRINGS  the UTF-8 string table the refs point into (deduplicated, first-use order)
 *           P×56  TABLE    payloadCount fixed records: ref name | u32 offset (into PAYLOADS) |
 *                          u32 storedLength | u32 rawLength | u8 compression | 3 zero bytes |
 *                          sha256[32] of the stored bytes
 *           32    SEAL     SHA-256 of PREFIX..TABLE (everything before the seal)
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
 * (the section lengths must add up to the file size exactly), then the SEAL over prefix..table, then
 * the structure (string refs in range, keys sorted and unique, payload indices and ranges in range,
 * payload names unique). A payload's SHA-256 is checked before it is decompressed or returned.
 *
 * Encoding decision, by measurement (tools/bench-representation-format.mjs; 400 exports of generated
 * CJS code — functions with helpers, classes, constants — 400 entry payloads + 40 shared chunks;
 * Node 20.20, one run):
 *   MEASURED_NUMBERS
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
  stringsLength: 24,
  payloadCount: 28,
  payloadsLength: 32,
  flags: 36,
  /** Size of the v1 prefix. */
  size: 40,
  /** Bytes every version has in the same place (magic, format, prefixLength). */
  stable: 16,
} as const;

/** Index record: five string refs, covered, payload. */
export const INDEX_RECORD = {
  surface: 0,
  declaring: 8,
  kind: 16,
  a: 24,
  b: 32,
  covered: 40,
  payload: 44,
  size: 48,
} as const;

/** Payload table record. */
export const TABLE_RECORD = {
  name: 0,
  offset: 8,
  storedLength: 12,
  rawLength: 16,
  compression: 20,
  sha256: 24,
  size: 56,
} as const;

export const SEAL_SIZE = 32;
export const NO_PAYLOAD = 0xffffffff;

export const COMPRESSION = { none: 0, deflate: 1, brotli: 2 } as const;
export type Compression = keyof typeof COMPRESSION;
export const COMPRESSION_NAMES: readonly Compression[] = ['none', 'deflate', 'brotli'];
/** The writer's default, chosen by measurement (see the header). */
export const DEFAULT_COMPRESSION: Compression = 'brotli';

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
  /** Header strings and features. */
  maxFeatures: 256,
  maxHeader: 1 << 20,
  /** The string table. */
  maxStrings: 64 << 20,
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
