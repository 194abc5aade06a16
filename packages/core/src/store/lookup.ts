/**
 * Resolution of slices at lookup time: (content hash, variant) → pack → verified slice.
 *
 * A `SliceResolver` lives for one run: it reads each pack at most once (integrity-checked by
 * cacache), decodes only the slices asked for, and re-verifies each slice exactly as a per-slice read
 * would (contentHash, variant, digestSchema, extractor, shape). A pack that fails its integrity check
 * is removed; every slice that was to come from it is reported corrupt and recomputed by the caller.
 *
 * `contentMap` is the fallback that shares slices across views: the union of the registered views'
 * manifests, content → pack. It is read lazily, once, and only when a run's own manifest misses.
 */
import type { Slice } from '../facts/slice.js';
import type { Variant } from '../parse/language.js';
import { readManifest, readRegistry } from './manifest.js';
import { readPack, verifySlice, type Pack, type PackRead, type PackRef } from './pack.js';

export type Resolved =
  | { status: 'hit'; slice: Slice; json: string }
  | { status: 'miss' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unavailable'; error: unknown };

export const contentKey = (contentHash: string, variant: Variant) => `${variant}/${contentHash}`;

export class SliceResolver {
  private readonly packs = new Map<string, Promise<PackRead>>();

  constructor(
    readonly storeDir: string,
    readonly digestSchema: number,
  ) {}

  private pack(ref: PackRef): Promise<PackRead> {
    let p = this.packs.get(ref.integrity);
    if (!p) {
      p = readPack(this.storeDir, ref);
      this.packs.set(ref.integrity, p);
    }
    return p;
  }

  /** The slice of (content, variant) in the given pack, verified. */
  async resolve(ref: PackRef, contentHash: string, variant: Variant): Promise<Resolved> {
    const r = await this.pack(ref);
    if (r.status === 'missing') return { status: 'miss' };
    if (r.status === 'unavailable') return { status: 'unavailable', error: r.error };
    if (r.status === 'corrupt') return { status: 'corrupt', reason: r.reason };
    return this.fromPack(r.pack, contentHash, variant);
  }

  private fromPack(pack: Pack, contentHash: string, variant: Variant): Resolved {
    const json = pack.json(contentHash, variant, this.digestSchema);
    if (json === undefined) return { status: 'corrupt', reason: 'the pack named for this content does not hold it' };
    const v = verifySlice(json, contentHash, variant, this.digestSchema);
    return 'slice' in v ? { status: 'hit', slice: v.slice, json } : { status: 'corrupt', reason: v.reason };
  }
}

/**
 * Content → pack over the manifests of the registered views (most recent first; the first view that
 * has a content wins). `skipView` is the caller's own view, already consulted.
 */
export async function loadContentMap(storeDir: string, digestSchema: number, skipView?: string, maxViews = 16): Promise<Map<string, PackRef>> {
  const map = new Map<string, PackRef>();
  const { views } = await readRegistry(storeDir, digestSchema);
  const others = views.filter((v) => v !== skipView).slice(0, maxViews);
  const reads = await Promise.all(others.map((v) => readManifest(storeDir, v, digestSchema)));
  for (const r of reads) {
    if (r.status !== 'hit') continue; // a view gone or unreadable only means less sharing
    for (const e of r.manifest.files.values()) {
      const k = contentKey(e.contentHash, e.variant);
      if (!map.has(k)) map.set(k, r.manifest.packs[e.pack]!);
    }
  }
  return map;
}
