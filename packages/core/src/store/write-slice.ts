/**
 * Write one slice to the store, if absent. Writes are atomic in cacache (temp file + rename), so a
 * process killed mid-write leaves either no entry or a complete one.
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import { sliceKey } from './format.js';

export async function writeSlice(storeDir: string, slice: Slice, knownAbsent = false): Promise<void> {
  const key = sliceKey(slice.contentHash, slice.variant, slice.digestSchema);
  if (!knownAbsent) {
    const info = await cacache.get.info(storeDir, key);
    if (info) return;
  }
  await cacache.put(storeDir, key, Buffer.from(JSON.stringify(slice)));
}
