/**
 * Per-view manifests and the registry of views (see format.ts for the layout and the reasoning).
 *
 * A manifest maps each relative path of one view (a package root in one working tree) to the
 * content hash and variant it had when last digested, and to the pack holding that content's slice:
 *
 *   {"kind":"kiln-manifest","format":2,"extractor":E,"digestSchema":S,
 *    "packs":[[key,integrity,size],…],"files":[[relativePath,contentHash,variant,packIndex(,blob)],…]}
 *
 * `blob` (optional) is the git blob id of exactly the bytes that were hashed (checked when they were
 * read, view/git-state.ts): while git vouches that the file still is that blob, its content hash is
 * known without reading it. Readers that predate it ignore a fifth element; entries without it are read.
 *
 * It is single-writer per view by construction (one view = one working tree's package root); if two
 * runs on one view race, the last write wins and the other's entries cost a re-parse next time —
 * never a wrong answer, since every hit is checked against the file's current content hash and the
 * slice itself is re-verified. Manifests carry relative paths only; the view's identity (a hash of
 * its absolute root) is only in the key. Rewritten only when something changed.
 */
import cacache from 'cacache';
import type { Variant } from '../parse/language.js';
import { EXTRACTOR_VERSION, STORE_FORMAT_VERSION } from '../version.js';
import { manifestKey, registryKey } from './format.js';
import { writeEntry } from './entry.js';
import type { PackRef } from './pack.js';

export interface ManifestEntry {
  contentHash: string;
  variant: Variant;
  /** Index into `packs`. */
  pack: number;
  /** Git blob id of the bytes hashed, verified at read time (view/git-state.ts), if known. */
  blob?: string;
}

export interface Manifest {
  packs: PackRef[];
  files: Map<string, ManifestEntry>;
}

export type ManifestRead =
  | { status: 'hit'; manifest: Manifest; text: string; writes: number }
  | { status: 'miss' }
  | { status: 'corrupt'; reason: string }
  | { status: 'unavailable'; error: unknown };

const VARIANTS = new Set(['ts', 'tsx', 'dts', 'js', 'jsx']);
const BLOB_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function encodeManifest(m: Manifest, digestSchema: number): string {
  // Canonical: packs in key order, files in path order. The same manifest is the same text however
  // its entries were gathered (a partial write keeps other entries in another order), so an unchanged
  // manifest is never written again as new bytes.
  const order = m.packs.map((_, i) => i).sort((a, b) => (m.packs[a]!.key < m.packs[b]!.key ? -1 : m.packs[a]!.key > m.packs[b]!.key ? 1 : a - b));
  const at = new Map(order.map((old, i) => [old, i]));
  const files = [...m.files].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([rel, e]) => (e.blob ? [rel, e.contentHash, e.variant, at.get(e.pack)!, e.blob] : [rel, e.contentHash, e.variant, at.get(e.pack)!]));
  return JSON.stringify({
    kind: 'kiln-manifest',
    format: STORE_FORMAT_VERSION,
    extractor: EXTRACTOR_VERSION,
    digestSchema,
    packs: order.map((i) => [m.packs[i]!.key, m.packs[i]!.integrity, m.packs[i]!.size]),
    files,
  });
}

/** Throws when the text is not a manifest of this format, extractor and schema. */
export function decodeManifest(text: string, digestSchema: number): Manifest {
  const j = JSON.parse(text) as { kind?: unknown; format?: unknown; extractor?: unknown; digestSchema?: unknown; packs?: unknown; files?: unknown };
  if (!j || j.kind !== 'kiln-manifest' || j.format !== STORE_FORMAT_VERSION || j.extractor !== EXTRACTOR_VERSION || j.digestSchema !== digestSchema) {
    throw new Error('not a manifest of this store format, extractor and digest schema');
  }
  if (!Array.isArray(j.packs) || !Array.isArray(j.files)) throw new Error('malformed manifest');
  const packs: PackRef[] = [];
  for (const p of j.packs as unknown[]) {
    if (!Array.isArray(p) || typeof p[0] !== 'string' || typeof p[1] !== 'string' || typeof p[2] !== 'number') throw new Error('malformed manifest');
    packs.push({ key: p[0], integrity: p[1], size: p[2] });
  }
  const files = new Map<string, ManifestEntry>();
  for (const f of j.files as unknown[]) {
    if (
      !Array.isArray(f) ||
      typeof f[0] !== 'string' ||
      typeof f[1] !== 'string' ||
      typeof f[2] !== 'string' ||
      !VARIANTS.has(f[2]) ||
      typeof f[3] !== 'number' ||
      !(f[3] >= 0 && f[3] < packs.length) ||
      (f[4] !== undefined && (typeof f[4] !== 'string' || !BLOB_ID.test(f[4])))
    ) {
      throw new Error('malformed manifest');
    }
    files.set(f[0], { contentHash: f[1], variant: f[2] as Variant, pack: f[3], ...(f[4] !== undefined ? { blob: f[4] as string } : {}) });
  }
  return { packs, files };
}

export async function readManifest(storeDir: string, viewId: string, digestSchema: number): Promise<ManifestRead> {
  const key = manifestKey(viewId, digestSchema);
  let got: { data: Buffer; metadata?: unknown; integrity: string };
  try {
    got = (await cacache.get(storeDir, key)) as typeof got;
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'miss' };
    if (code === 'EINTEGRITY' || code === 'EBADSIZE') {
      await discard(storeDir, key, true);
      return { status: 'corrupt', reason: `manifest integrity check failed (${code})` };
    }
    return { status: 'unavailable', error: e };
  }
  const text = got.data.toString('utf8');
  try {
    const manifest = decodeManifest(text, digestSchema);
    const writes = typeof (got.metadata as { writes?: unknown })?.writes === 'number' ? (got.metadata as { writes: number }).writes : 0;
    return { status: 'hit', manifest, text, writes };
  } catch (e) {
    await discard(storeDir, key, false);
    return { status: 'corrupt', reason: `manifest is not readable (${(e as Error).message})` };
  }
}

/** Replace the view's manifest (text from encodeManifest). */
export async function writeManifest(storeDir: string, viewId: string, digestSchema: number, text: string, previousWrites = 0): Promise<void> {
  const key = manifestKey(viewId, digestSchema);
  const writes = previousWrites + 1;
  await writeEntry(storeDir, key, Buffer.from(text, 'utf8'), { writes });
}

// ------------------------------------------------------------------ registry of views

/** How many views the registry remembers (most recent first). */
export const REGISTRY_LIMIT = 32;

/** The registered views, most recent first; an unreadable registry is dropped and counts as empty. */
export async function readRegistry(storeDir: string, digestSchema: number): Promise<{ views: string[]; writes: number }> {
  const key = registryKey(digestSchema);
  try {
    const got = await cacache.get(storeDir, key);
    const j = JSON.parse(got.data.toString('utf8')) as { kind?: unknown; views?: unknown };
    if (!j || j.kind !== 'kiln-views' || !Array.isArray(j.views) || !j.views.every((v) => typeof v === 'string')) throw new Error('malformed');
    const writes = typeof (got.metadata as { writes?: unknown })?.writes === 'number' ? (got.metadata as { writes: number }).writes : 0;
    return { views: j.views as string[], writes };
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') await discard(storeDir, key, code === 'EINTEGRITY' || code === 'EBADSIZE');
    return { views: [], writes: 0 };
  }
}

/** Registrations in flight per store: a process registers one view at a time (see registerView). */
const registering = new Map<string, Promise<void>>();

/**
 * Put the view first in the registry (read-modify-write: a race with another process only costs
 * sharing, never correctness). Within a process, registrations run one after the other: a view
 * digesting its packages concurrently would otherwise keep only the last of them.
 */
export function registerView(storeDir: string, digestSchema: number, viewId: string): Promise<void> {
  const key = `${storeDir}\u0000${digestSchema}`;
  const next = (registering.get(key) ?? Promise.resolve()).then(() => registerNow(storeDir, digestSchema, viewId));
  const settled = next.catch(() => undefined);
  registering.set(key, settled);
  void settled.then(() => {
    if (registering.get(key) === settled) registering.delete(key);
  });
  return next;
}

async function registerNow(storeDir: string, digestSchema: number, viewId: string): Promise<void> {
  const { views, writes } = await readRegistry(storeDir, digestSchema);
  const at = views.indexOf(viewId);
  if (at >= 0 && at < REGISTRY_LIMIT / 2) return; // known and recent enough: no write
  const next = [viewId, ...views.filter((v) => v !== viewId)].slice(0, REGISTRY_LIMIT);
  const key = registryKey(digestSchema);
  await writeEntry(storeDir, key, Buffer.from(JSON.stringify({ kind: 'kiln-views', views: next }), 'utf8'), { writes: writes + 1 });
}

async function discard(storeDir: string, key: string, removeContent: boolean): Promise<void> {
  try {
    const info = await cacache.get.info(storeDir, key);
    await cacache.rm.entry(storeDir, key);
    if (removeContent && info?.integrity) await cacache.rm.content(storeDir, info.integrity);
  } catch {
    // Best effort: the next read re-verifies.
  }
}
