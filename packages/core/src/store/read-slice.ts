/**
 * Read one slice by content (the per-content API; digestTree resolves whole views through manifests,
 * see view/digest-tree.ts). Looks for a loose slice (writeSlice) first, then in the packs named by
 * the registered views' manifests. Every read is integrity-checked by cacache (sha512); a failed
 * check or an entry that does not describe the requested content is reported as `corrupt`, the bad
 * entry is removed, and the caller recomputes — a corrupted store costs time, never correctness.
 */
import cacache from 'cacache';
import type { Slice } from '../facts/slice.js';
import { sliceKey } from './format.js';
import { parserMismatch } from '../parse/parser-version.js';
import { storeErrorText } from './error-text.js';
import type { Variant } from '../parse/language.js';
import { contentKey, loadContentMap, SliceResolver } from './lookup.js';
import type { PackRef } from './pack.js';

export type ReadResult =
  | { status: 'hit'; slice: Slice }
  | { status: 'miss' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unavailable'; reason: string };

export async function readSlice(storeDir: string, contentHash: string, variant: Variant, digestSchema: number): Promise<ReadResult> {
  const mismatch = parserMismatch();
  if (mismatch) return { status: 'unavailable', reason: mismatch };
  const key = sliceKey(contentHash, variant, digestSchema);
  let ref: PackRef | undefined;
  try {
    const info = await cacache.get.info(storeDir, key);
    if (info) {
      const pack = (info.metadata as { pack?: unknown } | undefined)?.pack;
      if (typeof pack !== 'string') {
        await cacache.rm.entry(storeDir, key).catch(() => undefined);
        return { status: 'corrupt', reason: 'loose entry does not name a pack' };
      }
      ref = { key: pack, integrity: String(info.integrity), size: typeof info.size === 'number' ? info.size : 0 };
    } else {
      ref = (await loadContentMap(storeDir, digestSchema)).get(contentKey(contentHash, variant));
    }
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'miss' };
    return { status: 'unavailable', reason: storeErrorText(e) };
  }
  if (!ref) return { status: 'miss' };
  const r = await new SliceResolver(storeDir, digestSchema).resolve(ref, contentHash, variant);
  if (r.status === 'hit') return { status: 'hit', slice: r.slice };
  if (r.status === 'miss') return { status: 'miss' };
  if (r.status === 'unavailable') return { status: 'unavailable', reason: storeErrorText(r.error) };
  await cacache.rm.entry(storeDir, key).catch(() => undefined);
  return { status: 'corrupt', reason: r.reason };
}
