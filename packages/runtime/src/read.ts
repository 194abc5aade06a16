/**
 * Opens `kiln.rep` (format.ts's layout) and reads it selectively with explicit positioned reads,
 * counting every byte read (`bytesRead`), so that looking up 3 entries of 400 and loading their payloads
 * provably reads the prefix, header, index (KEYS, INFO, TABLE, DICT), seal and those payloads only.
 *
 * Invariants:
 * - Synchronous on purpose: a payload's `require('./x')` inside node:vm must load another payload
 *   synchronously, so the whole read path is `fs.readSync` at explicit positions.
 * - Refusal order: no file → KILN_REP_NOT_FOUND; bad magic → KILN_REP_NOT_A_REPRESENTATION; unknown
 *   format → KILN_REP_UNSUPPORTED_VERSION having read only the stable prefix and the label; then sizes
 *   (every count and length checked against the bytes present before anything is allocated) →
 *   KILN_REP_CORRUPT; then the seal → KILN_REP_INTEGRITY; then the structure → KILN_REP_CORRUPT.
 * - A payload's SHA-256 is checked before it is decompressed or returned (KILN_REP_INTEGRITY); it is
 *   decompressed with its declared raw length as the output bound, so a bomb cannot allocate more.
 * - Only RepError leaves this module for any input bytes (the fuzz suite holds it to that).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { brotliDecompressSync, inflateRawSync } from 'node:zlib';
import { RepError, repError, type RepErrorCode } from './errors.js';
import { dictDictionary, infoDictionary, payloadDictionary, payloadDigest } from './dictionary.js';
import {
  COMPRESSION,
  COMPRESSION_NAMES,
  HASH,
  LIMITS,
  MAGIC,
  MAX_DICTIONARY,
  PREFIX,
  PREFIX_FIELDS,
  REPRESENTATION_FORMAT,
  SEAL_SIZE,
  readVarUint,
  recordLayout,
  utf8Strict,
  type Compression,
  type PrefixValues,
  type RecordLayout,
} from './format.js';
import type { RepEntry, RepHeader, RepPayload, Representation } from './model.js';

/** Where a payload's stored bytes are and what they should be (the table record, decoded). */
export interface RepPayloadInfo {
  name: string;
  /** Absolute offset of the stored bytes in the file. */
  offset: number;
  storedLength: number;
  rawLength: number;
  compression: Compression;
  /** Hex SHA-256 of the stored bytes. */
  sha256: string;
}

/** Byte lengths of the sections, as the prefix declares them (and the file confirms). */
export interface RepSections {
  prefix: number;
  header: number;
  index: number;
  keys: number;
  info: number;
  table: number;
  dict: number;
  seal: number;
  payloads: number;
  total: number;
}

export interface RepReader {
  readonly header: RepHeader;
  readonly entryCount: number;
  readonly payloadCount: number;
  readonly sections: RepSections;
  /** Bytes read from the source so far (open + lookups + payloads). */
  readonly bytesRead: number;
  /** Binary search of the index by surface identity; decodes only the entry found. */
  lookup(surface: string): RepEntry | undefined;
  /** Every entry, in index order (for inspection). */
  entries(): RepEntry[];
  /** Payload `i`: stored bytes read, integrity checked, then decompressed; cached. */
  payload(i: number): RepPayload;
  payloadInfo(i: number): RepPayloadInfo;
  /** Index of the payload with this name, if any. */
  payloadIndex(name: string): number | undefined;
  close(): void;
}

export interface OpenOptions {
  /** Checked against the file size before anything is allocated (default LIMITS.maxTotal). */
  maxTotal?: number;
  /**
   * The version to name when the representation is unstamped (its header's version is empty): a build's
   * own kiln.rep leaves the version to the pack step, because the build is keyed without it; pass the
   * version of the package.json beside it. A stamped header's version always wins.
   */
  version?: string;
}

interface Source {
  size: number;
  read(pos: number, len: number): Buffer;
  close(): void;
}

function fileSource(path: string): Source {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw repError('KILN_REP_NOT_FOUND', `no representation at ${path}`, {}, e);
    throw repError('KILN_REP_UNREADABLE', `cannot open ${path}: ${(e as Error).message}`, {}, e);
  }
  let size: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
  } catch (e) {
    closeSync(fd);
    throw repError('KILN_REP_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`, {}, e);
  }
  let open = true;
  return {
    size,
    read(pos, len) {
      const buf = Buffer.allocUnsafe(len);
      let got = 0;
      while (got < len) {
        let n: number;
        try {
          n = readSync(fd, buf, got, len - got, pos + got);
        } catch (e) {
          throw repError('KILN_REP_UNREADABLE', `cannot read ${path}: ${(e as Error).message}`, {}, e);
        }
        if (n === 0) throw repError('KILN_REP_CORRUPT', `${path} ended at byte ${pos + got} (it changed while being read)`);
        got += n;
      }
      return buf;
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

function bytesSource(bytes: Uint8Array): Source {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { size: b.length, read: (pos, len) => b.subarray(pos, pos + len), close() {} };
}

/** Reads a stable-contract string (u16 length + UTF-8) at `pos`, or undefined when it does not read cleanly. */
function tryLabelString(src: Source, pos: number, count: (n: number) => void, allowEmpty = false): [string, number] | undefined {
  if (pos + 2 > src.size) return undefined;
  const len = src.read(pos, 2).readUInt16LE(0);
  count(2);
  if (len === 0 && allowEmpty) return ['', pos + 2];
  if (len === 0 || pos + 2 + len > src.size) return undefined;
  const b = src.read(pos + 2, len);
  count(len);
  try {
    return [utf8Strict.decode(b), pos + 2 + len];
  } catch {
    return undefined;
  }
}

/** Opens a representation from a file path or its bytes. Throws RepError (only) on any refusal. */
export function openRepresentation(source: string | Uint8Array, opts: OpenOptions = {}): RepReader {
  const src = typeof source === 'string' ? fileSource(source) : bytesSource(source);
  try {
    return new Reader(src, opts);
  } catch (e) {
    src.close();
    throw e;
  }
}

/** Opens, reads every entry and payload, closes: the decoded model (round trips encodeRepresentation). */
export function readRepresentation(source: string | Uint8Array, opts?: OpenOptions): Representation {
  const r = openRepresentation(source, opts);
  try {
    const payloads: RepPayload[] = [];
    for (let i = 0; i < r.payloadCount; i++) payloads.push(r.payload(i));
    return { header: r.header, entries: r.entries(), payloads };
  } finally {
    r.close();
  }
}

class Reader implements RepReader {
  header: RepHeader;
  readonly entryCount: number;
  readonly payloadCount: number;
  readonly sections: RepSections;
  bytesRead = 0;
  private readonly src: Source;
  /** INDEX, KEYS, INFO (stored), TABLE and DICT (stored): read once, at open, behind the seal. */
  private readonly index: Buffer;
  private readonly keys: Buffer;
  private readonly infoStored: Buffer;
  private readonly infoRawLength: number;
  private readonly infoCompression: Compression;
  private infoRaw: Buffer | undefined;
  private readonly layout: RecordLayout;
  private readonly table: Buffer;
  private readonly dictStored: Buffer;
  private readonly dictRawLength: number;
  private readonly dictCompression: Compression;
  private dictRaw: Buffer | undefined;
  private readonly payloadsStart: number;
  private readonly cache = new Map<number, RepPayload>();
  /** Per payload, from INFO and the table at open: its name, offset in PAYLOADS and raw length. */
  private payloadRecords: { name: string; offset: number; rawLength: number }[] = [];
  private names = new Map<string, number>();

  constructor(src: Source, opts: OpenOptions) {
    this.src = src;
    const size = src.size;
    const count = (n: number) => (this.bytesRead += n);
    const read = (pos: number, len: number) => {
      count(len);
      return src.read(pos, len);
    };
    const maxTotal = Math.min(opts.maxTotal ?? LIMITS.maxTotal, LIMITS.maxTotal);

    // 1. Magic: anything that does not start with it is not a representation at all.
    const head = read(0, Math.min(size, PREFIX.stable));
    if (head.length < MAGIC.length || !head.subarray(0, MAGIC.length).equals(MAGIC)) {
      throw repError('KILN_REP_NOT_A_REPRESENTATION', `not a kiln representation (the first ${MAGIC.length} bytes are not its magic)`);
    }
    if (head.length < PREFIX.stable) throw repError('KILN_REP_CORRUPT', `truncated: ${size} bytes, shorter than the format prefix`);

    // 2. Format version, before anything version-specific. Only the stable label is read to name it.
    const format = head.readUInt32LE(PREFIX.format);
    if (format !== REPRESENTATION_FORMAT) {
      const prefixLength = head.readUInt32LE(PREFIX.prefixLength);
      let label: { pkg: string; version: string } | undefined;
      if (prefixLength >= PREFIX.stable && prefixLength <= LIMITS.maxHeader) {
        const pkg = tryLabelString(src, prefixLength, count);
        const ver = pkg && tryLabelString(src, pkg[1], count, true); // empty: unstamped (a build's own kiln.rep)
        if (pkg && ver) label = { pkg: pkg[0], version: ver[0] !== '' ? ver[0] : (opts.version ?? 'unstamped') };
      }
      const requirement = `representation format ${REPRESENTATION_FORMAT}`;
      throw repError(
        'KILN_REP_UNSUPPORTED_VERSION',
        label
          ? `${label.pkg}@${label.version}: its representation is format ${format}; this runtime reads format ${REPRESENTATION_FORMAT}`
          : `representation format ${format} (the package and version could not be read); this runtime reads format ${REPRESENTATION_FORMAT}`,
        { package: label?.pkg, version: label?.version, requirement },
      );
    }

    // 3. Sizes: every declared length checked against the bytes present before allocating.
    if (size > maxTotal) throw repError('KILN_REP_CORRUPT', `${size} bytes, over the limit of ${maxTotal}`);
    const corrupt = (m: string): never => {
      throw repError('KILN_REP_CORRUPT', m);
    };
    const over = (what: string, n: number, limit: number) => {
      if (n > limit) corrupt(`${what} ${n}, over the limit of ${limit}`);
    };
    const prefixLength = head.readUInt32LE(PREFIX.prefixLength);
    if (prefixLength < PREFIX.stable + PREFIX_FIELDS.length || prefixLength > PREFIX.maxSize) corrupt(`prefix length ${prefixLength}, outside ${PREFIX.stable + PREFIX_FIELDS.length}..${PREFIX.maxSize}`);
    if (size < prefixLength) corrupt(`truncated: ${size} bytes, shorter than the ${prefixLength}-byte prefix`);
    const prefix = Buffer.concat([head, read(PREFIX.stable, prefixLength - PREFIX.stable)]);
    const v = {} as PrefixValues;
    let at: number = PREFIX.stable;
    for (const f of PREFIX_FIELDS) {
      const r = readVarUint(prefix, at);
      if (typeof r === 'string') corrupt(`the prefix ${r} (${f})`);
      [v[f], at] = r as [number, number];
    }
    if (at !== prefixLength) corrupt(`the prefix's fields end at byte ${at}, not at its declared length ${prefixLength}`);
    const { headerLength, entryCount, keysLength, infoLength, infoRawLength, payloadCount, dictLength, dictRawLength, payloadsLength } = v;
    over('header length', headerLength, LIMITS.maxHeader);
    over('entry count', entryCount, LIMITS.maxEntries);
    over('payload count', payloadCount, LIMITS.maxPayloads);
    over('KEYS length', keysLength, LIMITS.maxKeys);
    over('INFO length', infoLength, LIMITS.maxInfo);
    over('INFO raw length', infoRawLength, LIMITS.maxInfo);
    over('DICT raw length', dictRawLength, MAX_DICTIONARY);
    over('DICT length', dictLength, 2 * MAX_DICTIONARY);
    over('payloads length', payloadsLength, LIMITS.maxTotal);
    for (const f of ['infoCompression', 'dictCompression'] as const) if (v[f] >= COMPRESSION_NAMES.length) corrupt(`unknown ${f} ${v[f]}`);
    if ((dictLength === 0) !== (dictRawLength === 0)) corrupt('DICT lengths disagree');
    const layout = recordLayout(v);
    const indexLength = entryCount * layout.index.size;
    const tableLength = payloadCount * layout.table.size;
    const lengths = [prefixLength, headerLength, indexLength, keysLength, infoLength, tableLength, dictLength];
    const sealAt = lengths.reduce((x, y) => x + y, 0);
    const total = sealAt + SEAL_SIZE + payloadsLength; // < 2^53: every term is bounded above
    if (total !== size) corrupt(`the sections add up to ${total} bytes but the representation has ${size}${total > size ? ' (truncated)' : ''}`);
    this.sections = {
      prefix: prefixLength,
      header: headerLength,
      index: indexLength,
      keys: keysLength,
      info: infoLength,
      table: tableLength,
      dict: dictLength,
      seal: SEAL_SIZE,
      payloads: payloadsLength,
      total,
    };
    this.layout = layout;

    // 4. The seal over stable..dict.
    const meta = read(prefixLength, sealAt + SEAL_SIZE - prefixLength);
    const digest = createHash(HASH).update(prefix).update(meta.subarray(0, sealAt - prefixLength)).digest();
    if (!timingSafeEqual(digest, meta.subarray(sealAt - prefixLength))) {
      throw repError('KILN_REP_INTEGRITY', 'the header and index do not match their integrity hash (the file was altered after it was written)');
    }

    // 5. Structure. The header first, so later refusals can name the package.
    let p = 0;
    const hb = meta.subarray(0, headerLength);
    const hstr = (what: string): string => {
      if (p + 2 > hb.length) corrupt(`header ends inside ${what}`);
      const len = hb.readUInt16LE(p);
      if (p + 2 + len > hb.length) corrupt(`header ends inside ${what}`);
      const s = decode(hb.subarray(p + 2, p + 2 + len), what);
      p += 2 + len;
      return s;
    };
    const pkg = hstr('the package name');
    const stamped = hstr('the version');
    const version = stamped !== '' ? stamped : (opts.version ?? '');
    if (p !== hb.length) corrupt(`${hb.length - p} unexpected bytes at the end of the header`);
    // The rest of the header opens INFO; filled in below, once INFO is in hand.
    this.header = { format, producer: '', package: pkg, version, requirements: { node: '', features: [] } };
    const bad = (m: string): never => {
      throw repError('KILN_REP_CORRUPT', `${pkg}@${version}: ${m}`, { package: pkg, version });
    };

    let o = headerLength;
    this.index = meta.subarray(o, (o += indexLength));
    this.keys = meta.subarray(o, (o += keysLength));
    this.infoStored = meta.subarray(o, (o += infoLength));
    this.infoRawLength = infoRawLength;
    this.infoCompression = COMPRESSION_NAMES[v.infoCompression]!;
    this.table = meta.subarray(o, (o += tableLength));
    this.dictStored = meta.subarray(o, (o += dictLength));
    this.dictRawLength = dictRawLength;
    this.dictCompression = COMPRESSION_NAMES[v.dictCompression]!;
    this.payloadsStart = sealAt + SEAL_SIZE;
    this.entryCount = entryCount;
    this.payloadCount = payloadCount;

    // Records: in range, keys contiguous (each starts where the previous ended, and is not empty),
    // sorted and unique.
    const ir = layout.index;
    const tr = layout.table;
    let keyEnd = 0;
    let prevInfo = 0;
    let prev: Buffer | undefined;
    for (let i = 0; i < entryCount; i++) {
      const at = i * ir.size;
      const keyOff = uint(this.index, at + ir.keyOffset, ir.keyWidth);
      const next = i + 1 < entryCount ? uint(this.index, at + ir.size + ir.keyOffset, ir.keyWidth) : keysLength;
      if (keyOff !== keyEnd || next <= keyOff || next > keysLength || next - keyOff > LIMITS.maxString) bad(`index entry ${i}'s key is not where the previous one ended`);
      keyEnd = next;
      const payload = uint(this.index, at + ir.payload, ir.payloadWidth);
      if (payload !== layout.noPayload && payload >= payloadCount) bad(`index entry ${i} names payload ${payload} of ${payloadCount}`);
      const infoOff = uint(this.index, at + ir.infoOffset, ir.infoWidth);
      if (infoOff >= infoRawLength) bad(`index entry ${i} points outside INFO`);
      if (i > 0 && infoOff <= prevInfo) bad(`index entry ${i}'s INFO offset is not after the previous entry's`);
      prevInfo = infoOff;
      const key = this.keys.subarray(keyOff, keyEnd);
      if (prev !== undefined) {
        const c = Buffer.compare(prev, key);
        if (c === 0) bad(`index entry ${i} duplicates the previous surface`);
        if (c > 0) bad(`index entry ${i} is out of code-point order`);
      }
      prev = key;
    }
    if (keyEnd !== keysLength) bad(`${keysLength - keyEnd} bytes of KEYS belong to no entry`);
    // Payload ranges: each starts where the previous ended; together they are PAYLOADS exactly.
    let end = 0;
    const offsets: number[] = [];
    for (let i = 0; i < payloadCount; i++) {
      const at = i * tr.size;
      const stored = uint(this.table, at + tr.storedLength, tr.payloadsWidth);
      const comp = this.table[at + tr.compression]!;
      if (stored > payloadsLength - end) bad(`payload ${i} lies outside the payload section`);
      if (stored > LIMITS.maxPayload) bad(`payload ${i} is over the size limit`);
      if (comp >= COMPRESSION_NAMES.length) bad(`payload ${i} has unknown compression ${comp}`);
      offsets.push(end);
      end += stored;
    }
    if (end !== payloadsLength) bad(`${payloadsLength - end} bytes of PAYLOADS belong to no payload`);

    // 6. INFO's head: the header's rest (what a consumer checks before anything runs), then the payloads'
    // names and raw lengths. The entries' strings follow, read where their index records say, when asked.
    const c = infoCursor(this.info, 0, bad, this.header);
    const vu = (what: string) => c.vu(what);
    const vstr = (what: string) => c.vstr(what);
    const producer = vstr('the producer');
    const node = vstr('requirements.node');
    const featureCount = vu('the feature count');
    if (featureCount > LIMITS.maxFeatures) bad(`feature count ${featureCount}, over the limit of ${LIMITS.maxFeatures}`);
    const features: string[] = [];
    for (let i = 0; i < featureCount; i++) features.push(vstr(`feature ${i}`));
    this.header = { format, producer, package: pkg, version, requirements: { node, features } };
    const names = new Map<string, number>();
    this.payloadRecords = [];
    for (let i = 0; i < payloadCount; i++) {
      const name = vstr(`payload ${i}'s name`);
      const rawLength = vu(`payload ${i}'s raw length`);
      if (name.length === 0) bad(`payload ${i} has no name`);
      if (names.has(name)) bad(`payload name ${name} is used twice`);
      names.set(name, i);
      const stored = uint(this.table, i * tr.size + tr.storedLength, tr.payloadsWidth);
      const comp = this.table[i * tr.size + tr.compression]!;
      if (rawLength > LIMITS.maxPayload) bad(`payload ${i} is over the size limit`);
      if (comp === COMPRESSION.none && rawLength !== stored) bad(`payload ${i} is stored uncompressed but its lengths differ`);
      this.payloadRecords.push({ name, offset: offsets[i]!, rawLength });
    }
    // The entries' strings start here, in index order (the index loop checked the offsets increase).
    if (entryCount > 0 && uint(this.index, ir.infoOffset, ir.infoWidth) !== c.pos) bad(`index entry 0's INFO offset is not where the entries' strings begin`);
    this.names = names;
  }

  private get subject() {
    return { package: this.header.package, version: this.header.version };
  }

  /** A compressed block of the sealed metadata, bounded by its declared raw length. */
  private inflateBlock(stored: Buffer, rawLength: number, method: Compression, dictionary: () => Buffer, what: string): Buffer {
    let raw: Buffer;
    try {
      raw = decompress(stored, method, rawLength, dictionary);
    } catch (e) {
      if (e instanceof RepError) throw e;
      throw repError('KILN_REP_CORRUPT', `${this.header.package}@${this.header.version}: ${what} does not decompress`, this.subject, e);
    }
    if (raw.length !== rawLength) {
      throw repError('KILN_REP_CORRUPT', `${this.header.package}@${this.header.version}: ${what} decompresses to ${raw.length} bytes, not ${rawLength}`, this.subject);
    }
    return raw;
  }

  private get info(): Buffer {
    return (this.infoRaw ??= this.inflateBlock(this.infoStored, this.infoRawLength, this.infoCompression, () => infoDictionary(this.header.package, this.keys), 'INFO'));
  }

  /** The package's DICT (raw; the seal checked its stored bytes at open). */
  private get dictionary(): Buffer {
    return (this.dictRaw ??= this.inflateBlock(this.dictStored, this.dictRawLength, this.dictCompression, dictDictionary, 'the dictionary'));
  }

  /** A payload's deflate dictionary: the static one, then DICT. */
  private payloadDict: Buffer | undefined;
  private payloadDictDigest: Buffer | undefined;
  private get payloadDictionary(): Buffer {
    return (this.payloadDict ??= payloadDictionary(this.keys, this.dictionary));
  }

  /** INFO strings at `pos` (`vstr` each). */
  private infoStrings(pos: number, n: number, what: string): string[] {
    const bad = (m: string): never => {
      throw repError('KILN_REP_CORRUPT', `${this.header.package}@${this.header.version}: ${m}`, this.subject);
    };
    const c = infoCursor(this.info, pos, bad, this.header);
    const out: string[] = [];
    for (let k = 0; k < n; k++) out.push(c.vstr(what));
    return out;
  }

  private key(i: number): Buffer {
    const ir = this.layout.index;
    const at = i * ir.size;
    const off = uint(this.index, at + ir.keyOffset, ir.keyWidth);
    const end = i + 1 < this.entryCount ? uint(this.index, at + ir.size + ir.keyOffset, ir.keyWidth) : this.keys.length;
    return this.keys.subarray(off, end);
  }

  private entryAt(i: number): RepEntry {
    const ir = this.layout.index;
    const at = i * ir.size;
    const surface = this.header.package + decode(this.key(i), `index entry ${i}`, this.header);
    const [declaring, kind, a, b] = this.infoStrings(uint(this.index, at + ir.infoOffset, ir.infoWidth), 4, surface) as [string, string, string, string];
    const payload = uint(this.index, at + ir.payload, ir.payloadWidth);
    if (payload !== this.layout.noPayload) {
      return { surface, declaring, kind, coverage: { covered: true, payload, export: a } };
    }
    return { surface, declaring, kind, coverage: { covered: false, reason: a, detail: b } };
  }

  lookup(surface: string): RepEntry | undefined {
    // KEYS holds each surface without the package's name, which every surface of the package starts with.
    if (!surface.startsWith(this.header.package)) return undefined;
    const key = Buffer.from(surface.slice(this.header.package.length), 'utf8');
    let lo = 0;
    let hi = this.entryCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(this.key(mid), key);
      if (c === 0) return this.entryAt(mid);
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  entries(): RepEntry[] {
    const out: RepEntry[] = [];
    for (let i = 0; i < this.entryCount; i++) out.push(this.entryAt(i));
    return out;
  }

  payloadInfo(i: number): RepPayloadInfo {
    this.checkPayloadIndex(i);
    const tr = this.layout.table;
    const at = i * tr.size;
    const t = this.table;
    const rec = this.payloadRecords[i]!;
    return {
      name: rec.name,
      offset: this.payloadsStart + rec.offset,
      storedLength: uint(t, at + tr.storedLength, tr.payloadsWidth),
      rawLength: rec.rawLength,
      compression: COMPRESSION_NAMES[t.readUInt8(at + tr.compression)]!,
      sha256: t.subarray(at + tr.sha256, at + tr.sha256 + 32).toString('hex'),
    };
  }

  payloadIndex(name: string): number | undefined {
    return this.names.get(name);
  }

  payload(i: number): RepPayload {
    const hit = this.cache.get(i);
    if (hit) return hit;
    const info = this.payloadInfo(i);
    const where = `${this.header.package}@${this.header.version}: payload ${info.name}`;
    this.bytesRead += info.storedLength;
    const stored = this.src.read(info.offset, info.storedLength);
    // Integrity before anything else looks at the bytes.
    const at = i * this.layout.table.size + this.layout.table.sha256;
    const digest = payloadDigest(stored, info.compression, () => (this.payloadDictDigest ??= createHash(HASH).update(this.payloadDictionary).digest()));
    if (!timingSafeEqual(digest, this.table.subarray(at, at + 32))) {
      throw repError('KILN_REP_INTEGRITY', `${where} does not match its integrity hash (the file was altered after it was written)`, {
        ...this.subject,
        requirement: info.name,
      });
    }
    let raw: Buffer;
    try {
      raw = decompress(stored, info.compression, info.rawLength, () => this.payloadDictionary);
    } catch (e) {
      if (e instanceof RepError) throw e;
      throw repError('KILN_REP_CORRUPT', `${where} does not decompress (${(e as Error).message})`, this.subject, e);
    }
    if (raw.length !== info.rawLength) throw repError('KILN_REP_CORRUPT', `${where} decompresses to ${raw.length} bytes, not ${info.rawLength}`, this.subject);
    const p: RepPayload = { name: info.name, code: decode(raw, where, this.header) };
    this.cache.set(i, p);
    return p;
  }

  private checkPayloadIndex(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.payloadCount) {
      throw new RangeError(`payload index ${i} out of range (${this.payloadCount} payloads)`);
    }
  }

  close(): void {
    this.src.close();
  }
}

/** A cursor over INFO's raw bytes: `vu` and `vstr` from `pos` on, refusing through `bad` what runs past the end. */
function infoCursor(info: Buffer, pos: number, bad: (m: string) => never, header: RepHeader) {
  const vu = (what: string): number => {
    const r = readVarUint(info, pos);
    if (typeof r === 'string') return bad(`${what}: INFO ${r}`);
    pos = r[1];
    return r[0];
  };
  return {
    get pos() {
      return pos;
    },
    vu,
    vstr(what: string): string {
      const len = vu(what);
      if (len > info.length - pos) bad(`${what} runs past INFO`);
      const s = decode(info.subarray(pos, pos + len), what, header);
      pos += len;
      return s;
    },
  };
}

/** A fixed-width (1–4 byte) little-endian unsigned integer: plain byte reads, cheap before the JIT warms up. */
function uint(b: Buffer, at: number, w: number): number {
  switch (w) {
    case 1:
      return b[at]!;
    case 2:
      return b[at]! | (b[at + 1]! << 8);
    case 3:
      return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
    default:
      return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
  }
}

/** Stored bytes decompressed by `method`, never to more than `rawLength` bytes (a bomb cannot allocate more). */
function decompress(stored: Buffer, method: Compression, rawLength: number, dictionary: () => Buffer): Buffer {
  const bound = { maxOutputLength: Math.max(1, rawLength) };
  switch (method) {
    case 'none':
      return stored;
    case 'deflate':
      return inflateRawSync(stored, bound);
    case 'deflate-dict':
      return inflateRawSync(stored, { ...bound, dictionary: dictionary() });
    case 'brotli':
      return brotliDecompressSync(stored, bound);
  }
}

function decode(b: Buffer, what: string, header?: RepHeader): string {
  try {
    return utf8Strict.decode(b);
  } catch {
    const code: RepErrorCode = 'KILN_REP_CORRUPT';
    const who = header ? `${header.package}@${header.version}: ` : '';
    throw repError(code, `${who}${what} is not valid UTF-8`, header ? { package: header.package, version: header.version } : {});
  }
}
