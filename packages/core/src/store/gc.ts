/**
 * Garbage collection of the local store (ADR 0012). Live: every pack a view manifest of this store
 * format, extractor and a supported digest schema names (all manifests in the index, not only the
 * registry's recent views), the packs of loose slices, the registries, the memoised reports of
 * views that still have a manifest, and the memoised head dependency graphs of this format written in
 * the last week (affected/closure-memo.ts; a lookup does not refresh an entry: one removed costs
 * its head one computation), and the debug records of this debug format with the maps and retained
 * sources they name (debug/record.ts). Everything else kiln wrote — packs no manifest names, manifests
 * and reports of other extractor versions or schemas, entries of older store formats — is removed;
 * then cacache's verify reclaims content that no index entry names.
 *
 * Invariant: collecting can cost a later run time, never correctness. A manifest naming a pack that is
 * gone is a miss for those files (they are parsed again). A pack written by a run that has not yet
 * written its manifest is protected by a grace period (entries younger than `graceMs` are kept).
 */
import cacache from 'cacache';
import { AFFECTED_CLOSURE_FORMAT, DIGEST_SCHEMA, EXTRACTOR_VERSION, PREVIOUS_DIGEST_SCHEMA, STORE_FORMAT_VERSION } from '../version.js';
import { decodeManifest } from './manifest.js';
import { DEBUG_KEY_PREFIX, isCurrentDebugKey } from './format.js';

export interface GcOptions {
  /** Report what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Entries younger than this are kept whatever names them (default 15 minutes). */
  graceMs?: number;
  /** For tests: the current time. */
  now?: number;
}

export interface GcResult {
  /** Index entries examined. */
  entries: number;
  manifests: number;
  /** Packs kept (named by a manifest or a loose slice, or within the grace period). */
  livePacks: number;
  /** Debug records kept (by debug ID and by JS hash) and the maps and sources they name. */
  debug: { records: number; blobs: number };
  /** Removed (or, with dryRun, to be removed): index keys by reason. */
  removed: { key: string; reason: string; size: number }[];
  /** Bytes of content cacache reclaimed (0 with dryRun). */
  reclaimedBytes: number;
  dryRun: boolean;
}

const NS = `kiln/v${STORE_FORMAT_VERSION}/`;
/** Memoised head dependency graphs (affected/closure-memo.ts) older than this are removed. */
const CLOSURE_MEMO_AGE_MS = 7 * 24 * 3600_000;

export async function collectGarbage(storeDir: string, options: GcOptions = {}): Promise<GcResult> {
  const dryRun = options.dryRun ?? false;
  const grace = options.graceMs ?? 15 * 60_000;
  const now = options.now ?? Date.now();
  const listing = (await cacache.ls(storeDir)) as Record<string, { key: string; integrity: string; size?: number; time: number; metadata?: unknown }>;
  const entries = Object.values(listing);
  const schemas = new Set([DIGEST_SCHEMA, PREVIOUS_DIGEST_SCHEMA]);
  const livePackKeys = new Set<string>();
  const liveViews = new Set<string>();
  const removed: GcResult['removed'] = [];
  const remove = (e: { key: string; size?: number }, reason: string) => removed.push({ key: e.key, reason, size: e.size ?? 0 });
  let manifests = 0;

  // Debug artifacts (debug/record.ts): records of this format are live, and so are the maps and
  // retained sources their index metadata names; entries of other debug formats, and blobs no record
  // names, are not.
  const liveBlobs = new Set<string>();
  let debugRecords = 0;
  for (const e of entries) {
    if (!e.key.startsWith(DEBUG_KEY_PREFIX)) continue;
    if (!isCurrentDebugKey(e.key)) {
      remove(e, 'debug entry of another format');
      continue;
    }
    if (!/\/(?:id|js)\/[^/]+$/.test(e.key)) continue;
    const blobs = (e.metadata as { blobs?: unknown } | undefined)?.blobs;
    if (!Array.isArray(blobs) || !blobs.every((b) => typeof b === 'string')) {
      remove(e, 'debug record without its blob list (ingested again on first use)');
      continue;
    }
    for (const b of blobs as string[]) liveBlobs.add(b);
    debugRecords++;
  }
  let debugBlobs = 0;
  for (const e of entries) {
    if (!isCurrentDebugKey(e.key) || !/\/blob\/[^/]+$/.test(e.key)) continue;
    if (liveBlobs.has(e.key) || now - e.time < grace) debugBlobs++;
    else remove(e, 'debug blob no record names');
  }

  for (const e of entries) {
    if (!e.key.startsWith('kiln/')) continue; // not ours
    if (e.key.startsWith(DEBUG_KEY_PREFIX)) continue; // above
    if (!e.key.startsWith(NS)) {
      remove(e, 'an older store format');
      continue;
    }
    const m = /^manifest\/x(\d+)\/d(\d+)\/(\w+)$/.exec(e.key.slice(NS.length));
    if (!m) continue;
    if (Number(m[1]) !== EXTRACTOR_VERSION || !schemas.has(Number(m[2]))) {
      remove(e, 'manifest of another extractor version or digest schema');
      continue;
    }
    try {
      const got = await cacache.get(storeDir, e.key);
      const manifest = decodeManifest(got.data.toString('utf8'), Number(m[2]));
      for (const p of manifest.packs) livePackKeys.add(p.key);
      liveViews.add(`${m[2]}/${m[3]}`);
      manifests++;
    } catch {
      remove(e, 'unreadable manifest (its view parses again)');
    }
  }
  for (const e of entries) {
    if (!e.key.startsWith(NS)) continue;
    const rest = e.key.slice(NS.length);
    if (rest.startsWith('slice/')) {
      const pack = (e.metadata as { pack?: unknown } | undefined)?.pack;
      if (!rest.startsWith(`slice/x${EXTRACTOR_VERSION}/`)) remove(e, 'loose slice of another extractor version');
      else if (typeof pack === 'string') livePackKeys.add(pack);
    }
  }
  let livePacks = 0;
  for (const e of entries) {
    if (!e.key.startsWith(NS)) continue;
    const rest = e.key.slice(NS.length);
    if (rest.startsWith('pack/')) {
      if (livePackKeys.has(e.key) || now - e.time < grace) livePacks++;
      else remove(e, 'pack no manifest names');
    } else if (rest.startsWith('report/')) {
      const r = /^report\/x(\d+)\/d(\d+)\/(\w+)$/.exec(rest);
      if (!r || Number(r[1]) !== EXTRACTOR_VERSION || !liveViews.has(`${r[2]}/${r[3]}`)) {
        if (!(now - e.time < grace)) remove(e, 'report of a view with no manifest');
      }
    } else if (rest.startsWith('closure/')) {
      // A memoised head graph is worth keeping while that head is still being compared.
      if (!rest.startsWith(`closure/c${AFFECTED_CLOSURE_FORMAT}/`)) remove(e, 'dependency graph of another format');
      else if (now - e.time > CLOSURE_MEMO_AGE_MS) remove(e, 'dependency graph of a head not read for a week');
    } else if (rest.startsWith('views/') && !rest.startsWith(`views/x${EXTRACTOR_VERSION}/`)) {
      remove(e, 'registry of another extractor version');
    }
  }

  let reclaimedBytes = 0;
  if (!dryRun) {
    // removeFully: drop the index bucket instead of appending a deletion line to it.
    const rmEntry = cacache.rm.entry as unknown as (dir: string, key: string, opts: { removeFully: boolean }) => Promise<unknown>;
    for (const r of removed) await rmEntry(storeDir, r.key, { removeFully: true });
    const stats = (await cacache.verify(storeDir)) as { reclaimedSize?: number };
    reclaimedBytes = stats.reclaimedSize ?? 0;
  }
  removed.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { entries: entries.length, manifests, livePacks, debug: { records: debugRecords, blobs: debugBlobs }, removed, reclaimedBytes, dryRun };
}
