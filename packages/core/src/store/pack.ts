/**
 * Packs: many slices in one content-addressed cacache entry (see format.ts for the layout).
 *
 *   line 1   {"kind":"kiln-pack","format":2,"slices":[[contentHash,variant,digestSchema,extractor,offset,length],…]}
 *   rest     the slices' JSON, back to back; offsets and lengths in bytes from the start of the rest
 *
 * Written once, never modified (the key is the sha256 of the bytes: write-if-absent), read whole
 * with cacache's integrity check, decoded lazily: a reader parses only the slices it needs. Every
 * slice taken from a pack is re-verified against what the reader asked for (verifySlice).
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import type { Variant } from '../parse/language.js';
import { sha256Hex } from '../digest/hash.js';
import { EXTRACTOR_VERSION, STORE_FORMAT_VERSION } from '../version.js';
import { packKey } from './format.js';

/** A slice ready to be packed: its header fields and its JSON text. */
export interface PackItem {
  contentHash: string;
  variant: Variant;
  digestSchema: number;
  extractor: number;
  json: string;
}

/** Where a pack is: its cacache key (for removal and GC), integrity (for the verified read) and size. */
export interface PackRef {
  key: string;
  integrity: string;
  size: number;
}

const enc = (contentHash: string, variant: string, digestSchema: number) => `${variant}/${digestSchema}/${contentHash}`;

export function packItemOf(slice: Slice, json = JSON.stringify(slice)): PackItem {
  return { contentHash: slice.contentHash, variant: slice.variant, digestSchema: slice.digestSchema, extractor: slice.extractor, json };
}

/** Encode slices as a pack; a content that appears twice is stored once. */
export function encodePack(items: readonly PackItem[]): Buffer {
  const seen = new Set<string>();
  const header: [string, string, number, number, number, number][] = [];
  const bodies: Buffer[] = [];
  let offset = 0;
  // In content order, so the same slices always make the same pack (and the same key).
  const sorted = [...items].sort((a, b) => {
    const x = enc(a.contentHash, a.variant, a.digestSchema);
    const y = enc(b.contentHash, b.variant, b.digestSchema);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const it of sorted) {
    const k = enc(it.contentHash, it.variant, it.digestSchema);
    if (seen.has(k)) continue;
    seen.add(k);
    const body = Buffer.from(it.json, 'utf8');
    header.push([it.contentHash, it.variant, it.digestSchema, it.extractor, offset, body.length]);
    bodies.push(body);
    offset += body.length;
  }
  const head = Buffer.from(`${JSON.stringify({ kind: 'kiln-pack', format: STORE_FORMAT_VERSION, slices: header })}\n`, 'utf8');
  return Buffer.concat([head, ...bodies]);
}

/** A decoded pack header over the pack's bytes. */
export class Pack {
  private constructor(
    private readonly body: Buffer,
    private readonly index: Map<string, [number, number]>,
  ) {}

  /** Throws when the bytes are not a pack (the caller reports that as corruption). */
  static decode(data: Buffer): Pack {
    const nl = data.indexOf(10);
    if (nl < 0) throw new Error('no pack header');
    const head = JSON.parse(data.subarray(0, nl).toString('utf8')) as { kind?: unknown; format?: unknown; slices?: unknown };
    if (!head || head.kind !== 'kiln-pack' || head.format !== STORE_FORMAT_VERSION || !Array.isArray(head.slices)) throw new Error('not a kiln pack');
    const body = data.subarray(nl + 1);
    const index = new Map<string, [number, number]>();
    for (const e of head.slices as unknown[]) {
      if (!Array.isArray(e) || e.length !== 6) throw new Error('malformed pack header');
      const [h, v, d, , o, l] = e as [unknown, unknown, unknown, unknown, unknown, unknown];
      if (typeof h !== 'string' || typeof v !== 'string' || typeof d !== 'number' || typeof o !== 'number' || typeof l !== 'number' || o < 0 || l < 0 || o + l > body.length) {
        throw new Error('malformed pack header');
      }
      index.set(enc(h, v, d), [o, l]);
    }
    return new Pack(body, index);
  }

  get size(): number {
    return this.index.size;
  }

  /** The JSON text of the slice the header says is (content, variant, schema), if any. */
  json(contentHash: string, variant: Variant, digestSchema: number): string | undefined {
    const at = this.index.get(enc(contentHash, variant, digestSchema));
    return at ? this.body.toString('utf8', at[0], at[0] + at[1]) : undefined;
  }
}

/** Write a pack if absent; returns where it is. */
export async function writePack(storeDir: string, items: readonly PackItem[]): Promise<PackRef> {
  const bytes = encodePack(items);
  const key = packKey(sha256Hex(bytes));
  const info = await cacache.get.info(storeDir, key);
  if (info && info.size === bytes.length) return { key, integrity: String(info.integrity), size: bytes.length };
  const integrity = await cacache.put(storeDir, key, bytes);
  return { key, integrity: String(integrity), size: bytes.length };
}

export type PackRead = { status: 'ok'; pack: Pack } | { status: 'missing' } | { status: 'corrupt'; reason: string } | { status: 'unavailable'; reason: string; error: unknown };

/** Read and decode a pack; its bytes are verified against the integrity (sha512) by cacache. */
export async function readPack(storeDir: string, ref: PackRef): Promise<PackRead> {
  let data: Buffer;
  try {
    data = await cacache.get.byDigest(storeDir, ref.integrity, ref.size > 0 ? { size: ref.size } : {});
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'missing' };
    if (code === 'EINTEGRITY' || code === 'EBADSIZE') {
      await discardPack(storeDir, ref);
      return { status: 'corrupt', reason: `pack integrity check failed (${code})` };
    }
    return { status: 'unavailable', reason: String(code ?? 'error'), error: e };
  }
  try {
    return { status: 'ok', pack: Pack.decode(data) };
  } catch (e) {
    // Sound bytes (integrity held) that are not a pack: nothing of ours; leave the content, drop our key.
    await cacache.rm.entry(storeDir, ref.key).catch(() => undefined);
    return { status: 'corrupt', reason: `pack is not readable (${(e as Error).message})` };
  }
}

/** Remove a pack whose bytes failed their integrity check (entry and content). */
export async function discardPack(storeDir: string, ref: PackRef): Promise<void> {
  await cacache.rm.entry(storeDir, ref.key).catch(() => undefined);
  await cacache.rm.content(storeDir, ref.integrity).catch(() => undefined);
}

/**
 * Parse and verify a slice taken from the store: it must describe exactly the requested content
 * (contentHash, variant, digestSchema, extractor) and be well-formed. Returns the slice, or why not.
 */
export function verifySlice(json: string, contentHash: string, variant: Variant, digestSchema: number): { slice: Slice } | { reason: string } {
  let slice: Slice;
  try {
    slice = JSON.parse(json) as Slice;
  } catch {
    return { reason: 'entry is not valid JSON' };
  }
  if (!slice || slice.contentHash !== contentHash || slice.variant !== variant || slice.digestSchema !== digestSchema || slice.extractor !== EXTRACTOR_VERSION) {
    return { reason: 'entry does not describe the requested content' };
  }
  if (!isSliceShaped(slice)) return { reason: 'entry is not a well-formed slice' };
  return { slice };
}

/** Entries are written by kiln only, but a store is a directory anyone can write: check the shape. */
function isSliceShaped(s: Slice): boolean {
  const m = s.module as Partial<Slice['module']> | null;
  if (
    !m ||
    typeof m !== 'object' ||
    typeof m.digest !== 'string' ||
    !Array.isArray(m.order) ||
    !Array.isArray(m.pragmas) ||
    !Array.isArray(s.imports) ||
    !Array.isArray(s.reexports) ||
    !Array.isArray(s.exports) ||
    !Array.isArray(s.diagnostics) ||
    !Array.isArray(s.decls)
  ) {
    return false;
  }
  for (const d of s.decls) {
    if (
      !d ||
      typeof d !== 'object' ||
      typeof d.path !== 'string' ||
      typeof d.kind !== 'string' ||
      !(d.semantic === null || typeof d.semantic === 'string') ||
      !d.span ||
      typeof d.span !== 'object'
    ) {
      return false;
    }
  }
  return true;
}
