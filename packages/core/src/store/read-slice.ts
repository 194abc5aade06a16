/**
 * Read one slice from the store. Every read is integrity-checked by cacache (sha512 of the entry);
 * a failed check or an undecodable entry is reported as `KILN_STORE_CORRUPT`, the entry is removed,
 * and the caller recomputes — a corrupted store costs time, never correctness.
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import { sliceKey } from './format.js';
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
    return { status: 'unavailable', reason: `${code ?? 'error'}: ${(e as Error).message}` };
  }
  let slice: Slice;
  try {
    slice = JSON.parse(data.toString('utf8')) as Slice;
  } catch {
    await discard(storeDir, key);
    return { status: 'corrupt', reason: 'entry is not valid JSON' };
  }
  if (!slice || slice.contentHash !== contentHash || slice.variant !== variant || slice.digestSchema !== digestSchema) {
    await discard(storeDir, key);
    return { status: 'corrupt', reason: 'entry does not describe the requested content' };
  }
  return { status: 'hit', slice };
}

async function discard(storeDir: string, key: string): Promise<void> {
  try {
    const info = await cacache.get.info(storeDir, key);
    await cacache.rm.entry(storeDir, key);
    if (info?.integrity) await cacache.rm.content(storeDir, info.integrity);
  } catch {
    // Best effort: a stale index line is harmless, the next read re-verifies.
  }
}
