/**
 * Write one slice to the store, if absent, as a *loose* slice: a one-slice pack plus an index entry
 * under sliceKey(...) that points at it (store/format.ts). This is the per-content API; digestTree
 * writes one pack and one manifest per run instead. Writes are atomic in cacache (temp file +
 * rename), so a process killed mid-write leaves either no entry or a complete one.
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import { sliceKey } from './format.js';
import { parserMismatch } from '../parse/parser-version.js';
import { packItemOf, writePack } from './pack.js';

export async function writeSlice(storeDir: string, slice: Slice, knownAbsent = false): Promise<void> {
  if (parserMismatch()) return; // made by another parser than the store's slices: never shared
  const key = sliceKey(slice.contentHash, slice.variant, slice.digestSchema);
  if (!knownAbsent) {
    const info = await cacache.get.info(storeDir, key);
    if (info) return;
  }
  const ref = await writePack(storeDir, [packItemOf(slice)]);
  await cacache.index.insert(storeDir, key, ref.integrity, { size: ref.size, metadata: { pack: ref.key } });
}
