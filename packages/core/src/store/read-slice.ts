/**
 * Read one slice from the store. Every read is integrity-checked by cacache (sha512 of the entry);
 * a failed check or an undecodable entry is reported as `KILN_STORE_CORRUPT`, the entry is removed,
 * and the caller recomputes — a corrupted store costs time, never correctness.
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import { sliceKey } from './format.js';
import { storeErrorText } from './error-text.js';
import { EXTRACTOR_VERSION } from '../version.js';
import type { Variant } from '../parse/language.js';

export type ReadResult =
  | { status: 'hit'; slice: Slice }
  | { status: 'miss' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unavailable'; reason: string };

export async function readSlice(storeDir: string, contentHash: string, variant: Variant, digestSchema: number): Promise<ReadResult> {
  const key = sliceKey(contentHash, variant, digestSchema);
  let data: Buffer;
  try {
    ({ data } = await cacache.get(storeDir, key));
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'miss' };
    if (code === 'EINTEGRITY' || code === 'EBADSIZE') {
      await discard(storeDir, key);
      return { status: 'corrupt', reason: `integrity check failed (${code})` };
    }
    return { status: 'unavailable', reason: storeErrorText(e) };
  }
  let slice: Slice;
  try {
    slice = JSON.parse(data.toString('utf8')) as Slice;
  } catch {
    await discard(storeDir, key);
    return { status: 'corrupt', reason: 'entry is not valid JSON' };
  }
  if (!slice || slice.contentHash !== contentHash || slice.variant !== variant || slice.digestSchema !== digestSchema || slice.extractor !== EXTRACTOR_VERSION) {
    await discard(storeDir, key, false);
    return { status: 'corrupt', reason: 'entry does not describe the requested content' };
  }
  if (!isSliceShaped(slice)) {
    await discard(storeDir, key, false);
    return { status: 'corrupt', reason: 'entry is not a well-formed slice' };
  }
  return { status: 'hit', slice };
}

/** Entries are written by kiln only, but a store is a directory anyone can write: check the shape. */
function isSliceShaped(s: Slice): boolean {
  const m = s.module as Partial<Slice['module']> | null;
  return (
    !!m &&
    typeof m === 'object' &&
    typeof m.digest === 'string' &&
    Array.isArray(m.order) &&
    Array.isArray(m.pragmas) &&
    Array.isArray(s.imports) &&
    Array.isArray(s.reexports) &&
    Array.isArray(s.exports) &&
    Array.isArray(s.diagnostics) &&
    Array.isArray(s.decls) &&
    s.decls.every(
      (d) =>
        !!d &&
        typeof d === 'object' &&
        typeof d.path === 'string' &&
        typeof d.kind === 'string' &&
        (d.semantic === null || typeof d.semantic === 'string') &&
        !!d.span &&
        typeof d.span === 'object',
    )
  );
}

/**
 * Remove the key's entry, and its content unless the content is sound (well-formed data that merely
 * does not belong under this key is content-addressed and may be another key's valid slice).
 */
async function discard(storeDir: string, key: string, removeContent = true): Promise<void> {
  try {
    const info = await cacache.get.info(storeDir, key);
    await cacache.rm.entry(storeDir, key);
    if (removeContent && info?.integrity) await cacache.rm.content(storeDir, info.integrity);
  } catch {
    // Best effort: a stale index line is harmless, the next read re-verifies.
  }
}
