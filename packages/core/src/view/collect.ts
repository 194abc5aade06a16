/**
 * The lookup and write phases of digesting a view: every file's slice, from the store where its
 * content is known, from the worker pool otherwise (paths, not contents), and what this run learnt
 * written back as O(1) store entries (store/format.ts: one pack of the new slices, one manifest).
 *
 * Lookup, on this thread:
 *   1. read the view's manifest (one entry);
 *   2. read and hash every file, except those git vouches for (view/git-state.ts) whose blob id is the
 *      one the manifest recorded with their content hash; a file whose (content hash, variant) is what
 *      the manifest recorded is a hit, to be taken from the pack the manifest names;
 *   3. a file the manifest does not know (new, edited, moved) is looked up by content: in the packs of
 *      this view's manifest, then of the other registered views (loaded once, lazily);
 *   4. what is still unknown is a miss: taken from the slices the caller extracted itself when its
 *      content is among them (`given`), else left without a slice when the run only looks up
 *      (`lookupOnly`), else sent to the pool as soon as there is enough to keep it busy: the pool
 *      starts while the rest of the files are still being hashed, so the workers load the compiler
 *      while this thread looks up (the pool is sized min(workers, misses known by then));
 *   5. hits are resolved pack by pack (each pack read once, integrity-checked) and every slice is
 *      re-verified (content hash, variant, digest schema, extractor, shape); a hit that fails is
 *      reported KILN_STORE_CORRUPT and becomes a miss.
 * Write, after all slices are known: one pack with the new slices (write-if-absent, content-addressed),
 * then the view's manifest (only if it changed; repacked into one pack when it names too many packs
 * or mostly dead bytes), then the view's entry in the registry of views (only if it is not there).
 * The manifest's entries for the files in scope (`inScope`) are this run's — a file in scope it has no
 * slice for (removed, unreadable) loses its entry — except that a lookup-only run keeps the entries of
 * the files it did not find; entries out of scope are kept as they were.
 *
 * Invariant: the slices are the same whatever the store holds: a store miss, hit or corrupt entry
 * only changes where a slice comes from, never what it is.
 *
 * Trace spans (trace/): `store read` (the manifest, other views', the hits' packs), `lookup` (steps 2–4),
 * `slice` per file digested here (`read`, `parse`, `digest` inside), `wait` (this thread waiting on the
 * pool, whose workers' own spans come back with their results), `pool close`, `store write`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { Slice } from '../facts/slice.js';
import { extractSlice } from '../facts/extract.js';
import { fileKind, type Variant } from '../parse/language.js';
import { sha256Hex } from '../digest/hash.js';
import { viewIdOf } from '../store/format.js';
import { encodeManifest, readManifest, registerView, writeManifest, type Manifest, type ManifestEntry, type ManifestRead } from '../store/manifest.js';
import { packItemOf, writePack, type PackItem, type PackRef } from '../store/pack.js';
import { contentKey, loadContentMap, SliceResolver, type Resolved } from '../store/lookup.js';
import { readErrorText, storeErrorText } from '../store/error-text.js';
import { createDigestPool, type DigestPool } from '../pool/pool.js';
import type { DigestTask, DigestTaskResult } from '../pool/worker.js';
import { EXTRACTOR_VERSION } from '../version.js';
import { gitBlobId } from './git-state.js';
import type { FileTree } from '../workspace/tree.js';
import { parserMismatch } from '../parse/parser-version.js';
import { begin, end, endFailed, ingestSpans, span, spanSince, tracing } from '../trace/record.js';

/** A manifest naming more packs than this is rewritten over one pack (warm reads stay O(1)). */
const MAX_PACKS_PER_VIEW = 8;

export interface CollectOptions {
  packageRoot: string;
  /** Relative paths (POSIX), sorted. */
  files: string[];
  /** Which relative paths this run is authoritative for (its manifest entries outside stay as they are). */
  inScope: (rel: string) => boolean;
  schema: number;
  maxFileSize: number;
  storeDir: string | null;
  /** Worker threads wanted when no pool is given; 0 digests on the calling thread. */
  workers: number;
  /** A caller-owned pool (not closed here). */
  pool?: DigestPool;
  onProgress?: (done: number, total: number) => void;
  diagnostics: Diagnostic[];
  /**
   * Asked when every file matched the store and nothing was reported, before any slice is read: true
   * means the caller has its answer for exactly these contents (view/report-memo.ts), and no slice
   * is decoded.
   */
  memo?: (files: { rel: string; contentHash: string; variant: Variant }[]) => Promise<boolean>;
  /**
   * At most this many misses are digested on the calling thread instead of starting a pool (a pool
   * costs each new thread a compiler load, far more than parsing one edited file). Default 0.
   */
  inlineUpTo?: number;
  /**
   * Slices already decoded in this process, by content key (store/lookup.ts `contentKey`): a file
   * whose content is there and matches the view's manifest (or any file, without a store) is taken
   * from it without reading the store. Afterwards it holds exactly this run's slices (a caller keeps
   * it between runs of one view).
   */
  sliceCache?: Map<string, Slice>;
  /**
   * Files git vouches for → their blob id (view/git-state.ts). Such a file whose manifest entry
   * recorded the same blob id is not read: its content hash is the recorded one.
   */
  vouched?: ReadonlyMap<string, string>;
  /** The view's manifest as the caller already read it (readManifest), so it is not read twice. */
  manifestRead?: ManifestRead;
  /** The view's id in the store (store/format.ts viewIdOf); default: the package root's. */
  viewId?: string;
  /**
   * Views whose manifests are consulted first when a file's content is not in this view's: the same
   * package at another state (the working tree's view for a git tree's, and back), which shares most
   * contents. Then every registered view, as for any view.
   */
  related?: string[];
  /**
   * Where files are read from, when not the working tree: a git tree (workspace/tree.ts). Its files
   * are read on this thread (in one batch, before the scan) and handed to workers as bytes.
   */
  tree?: FileTree;
  /**
   * Look up only: a file whose slice is neither in the store nor `given` is not digested — it has no
   * slice in the result, is not counted as parsed, and its manifest entry, if any, stays as it was
   * (the run is authoritative only for the files it found). No pool is started.
   */
  lookupOnly?: boolean;
  /**
   * Slices this process extracted itself, by content key (store/lookup.ts `contentKey`): a file the
   * view's manifest does not know, or whose entry fails, whose content is here takes this slice as if
   * it had been digested now (written to this run's pack and the manifest), without being parsed.
   */
  given?: ReadonlyMap<string, Slice>;
}

export interface Collected {
  slices: Map<string, Slice>;
  parsed: number;
  storeHits: number;
  corrupt: number;
  workers: number;
  bytes: number;
  /** The caller's memo answered (`memo` returned true): `slices` is empty. */
  memoHit?: boolean;
  /** Files whose content hash came from the manifest on git's word, without reading them. */
  vouched: number;
}

interface Known {
  contentHash: string;
  variant: Variant;
  /** Where its slice is in the store (set for hits, and for misses once the run's pack is written). */
  pack?: PackRef;
  /** The slice's JSON, for a repack. */
  json?: string;
  /** Git blob id of the bytes that were hashed (verified), for the manifest. */
  blob?: string;
}

export async function collectSlices(o: CollectOptions): Promise<Collected> {
  const { packageRoot, files, schema, maxFileSize, diagnostics } = o;
  let storeDir = o.storeDir;
  const slices = new Map<string, Slice>();
  const known = new Map<string, Known>();
  const newItems = new Map<string, PackItem>();
  let storeHits = 0;
  let corrupt = 0;
  let bytes = 0;
  let parsed = 0;
  let vouchedHits = 0;
  let done = 0;
  // Blob ids checked against the bytes read this run (rel → blob id and the content hash of those bytes).
  const verified = new Map<string, { blob: string; contentHash: string }>();
  const blobOf = (rel: string, contentHash: string): string | undefined => {
    const v = verified.get(rel);
    return v && v.contentHash === contentHash ? v.blob : undefined;
  };
  const progress = () => o.onProgress?.(++done, files.length);
  // A store that cannot be used is reported once, then left alone for the rest of the run.
  const storeUnavailable = (reason: string) => {
    if (!diagnostics.some((d) => d.code === 'KILN_STORE_UNAVAILABLE')) diagnostics.push(diagnostic('KILN_STORE_UNAVAILABLE', reason, { producer: 'store' }));
    storeDir = null;
  };
  const reportCorrupt = (rel: string | undefined, reason: string) => {
    corrupt++;
    diagnostics.push(
      diagnostic('KILN_STORE_CORRUPT', rel ? `slice for ${rel}: ${reason}; recomputed` : `${reason}; its files are looked up by content`, {
        ...(rel ? { file: rel } : {}),
        producer: 'store',
      }),
    );
  };

  // A process extracting with another TypeScript than the one the store's slices were made by must not share them.
  const mismatch = storeDir ? parserMismatch() : undefined;
  if (mismatch) {
    diagnostics.push(diagnostic('KILN_PARSER_MISMATCH', mismatch, { producer: 'store' }));
    storeDir = null;
  }

  // ---------------------------------------------------------------- 1. the view's manifest
  const view = o.viewId ?? viewIdOf(packageRoot);
  let own: Manifest | undefined;
  let ownText: string | undefined;
  let ownWrites = 0;
  if (storeDir) {
    const m = o.manifestRead ?? (await span('store read', () => readManifest(storeDir!, view, schema), 'what', 'manifest'));
    if (m.status === 'hit') {
      own = m.manifest;
      ownText = m.text;
      ownWrites = m.writes;
    } else if (m.status === 'corrupt') reportCorrupt(undefined, `manifest of this view: ${m.reason}`);
    else if (m.status === 'unavailable') storeUnavailable(storeErrorText(m.error));
  }
  const resolver = storeDir ? new SliceResolver(storeDir, schema) : undefined;
  let byContent: Map<string, PackRef> | undefined;
  const contentMap = async (): Promise<Map<string, PackRef>> => (byContent ??= await span('store read', readContentMap, 'what', 'other views'));
  const readContentMap = async (): Promise<Map<string, PackRef>> => {
    const map = new Map<string, PackRef>();
    if (own) for (const e of own.files.values()) map.set(contentKey(e.contentHash, e.variant), own.packs[e.pack]!);
    for (const id of storeDir ? o.related ?? [] : []) {
      const r = await readManifest(storeDir!, id, schema).catch(() => undefined);
      if (r?.status !== 'hit') continue;
      for (const e of r.manifest.files.values()) {
        const k = contentKey(e.contentHash, e.variant);
        if (!map.has(k)) map.set(k, r.manifest.packs[e.pack]!);
      }
    }
    if (storeDir) {
      try {
        for (const [k, ref] of await loadContentMap(storeDir, schema, view)) if (!map.has(k)) map.set(k, ref);
      } catch {
        // Other views are an optimisation: unreadable ones only mean less sharing.
      }
    }
    return map;
  };

  // ---------------------------------------------------------------- dispatch of misses
  const wanted = o.pool ? o.pool.threads : o.workers;
  let pool: DigestPool | undefined = o.pool;
  let poolThreads = 0;
  const queue: { rel: string; variant: Variant }[] = [];
  const inline: { rel: string; variant: Variant }[] = [];
  const tasks: Promise<void>[] = [];
  const withJson = () => storeDir !== null;

  const onResult = (rel: string, r: DigestTaskResult) => {
    if (r.readError) diagnostics.push(diagnostic('KILN_READ_FAILED', r.readError, { file: rel, producer: 'pool' }));
    if (r.storeError) storeUnavailable(r.storeError);
    const slice = r.slice ?? (r.json !== undefined ? (JSON.parse(r.json) as Slice) : undefined);
    if (slice) {
      slices.set(rel, slice);
      learn(rel, slice, r.json);
    }
  };
  const learn = (rel: string, slice: Slice, json?: string) => {
    if (!storeDir) return;
    const k = contentKey(slice.contentHash, slice.variant);
    const text = json ?? JSON.stringify(slice);
    if (!newItems.has(k)) newItems.set(k, packItemOf(slice, text));
    // A worker reads the file again: the blob id holds only if it saw the bytes this thread checked.
    const blob = blobOf(rel, slice.contentHash);
    known.set(rel, { contentHash: slice.contentHash, variant: slice.variant, json: text, ...(blob ? { blob } : {}) });
  };
  const dispatch = (p: DigestPool, rel: string, variant: Variant) => {
    // Traced, a task names its file and its worker's spans come back with the result (pool/worker.ts).
    const traced = tracing();
    const sent = traced ? performance.now() : 0;
    const task: DigestTask = { file: join(packageRoot, rel), ...(o.tree ? { bytes: read(rel) } : {}), variant, digestSchema: schema, maxFileSize, storeDir: null, json: withJson() };
    if (traced) task.trace = rel;
    const t = p
      .run(task)
      .then(
        (r) => {
          if (r.trace && r.worker) ingestSpans(r.worker.threadId, r.trace);
          onResult(rel, r);
        },
        (e: Error) => {
          // The worker's spans of this file never came back: what is known is marked, not dropped.
          if (traced) spanSince('slice', sent, { file: rel, incomplete: true, reason: `worker failed: ${e.message}` });
          diagnostics.push(diagnostic('KILN_WORKER_FAILED', e.message, { file: rel, producer: 'pool' }));
        },
      )
      .then(progress);
    t.catch(() => undefined); // observed by Promise.all below; never an unhandled rejection
    tasks.push(t);
  };
  const inlineUpTo = o.inlineUpTo ?? 0;
  const flush = (force: boolean) => {
    if (!queue.length) return;
    if (!pool) {
      // Start our own pool once there is work for every thread (and more than is worth doing here),
      // or at the end of the scan; a few misses at the end are digested on this thread.
      if (!force && (queue.length < wanted || queue.length <= inlineUpTo)) return;
      if (force && queue.length <= inlineUpTo && !o.pool && parsed <= inlineUpTo) {
        inline.push(...queue.splice(0));
        return;
      }
      poolThreads = Math.min(wanted, queue.length);
      pool = createDigestPool(poolThreads);
    }
    for (const m of queue.splice(0)) dispatch(pool, m.rel, m.variant);
  };
  const pending: { rel: string; variant: Variant; contentHash: string; ref: PackRef; result?: Promise<Resolved> }[] = [];
  // With a memo, slices are read only once some file missed (the memo cannot answer then) or the memo
  // declined; without one, each pack read starts while this thread hashes on.
  let deferred = o.memo !== undefined;
  const startResolving = () => {
    deferred = false;
    for (const p of pending) p.result ??= resolver!.resolve(p.ref, p.contentHash, p.variant);
  };
  const diagnosticsBefore = diagnostics.length;
  let ownHits = 0;
  // Files a lookup-only run did not find (`lookupOnly`): their manifest entries are left alone.
  const missed = new Set<string>();
  /** A slice the caller gave for this content (`given`), taken as this run's own; false when none. */
  const takeGiven = (rel: string, variant: Variant, contentHash: string): boolean => {
    const g = o.given?.get(contentKey(contentHash, variant));
    if (!g || g.digestSchema !== schema) return false;
    slices.set(rel, g);
    learn(rel, g);
    progress();
    return true;
  };
  const miss = (rel: string, variant: Variant, contentHash: string) => {
    if (takeGiven(rel, variant, contentHash)) return;
    if (o.lookupOnly) {
      missed.add(rel);
      progress();
      return;
    }
    parsed++;
    if (deferred) startResolving();
    if (wanted === 0) inline.push({ rel, variant });
    else {
      queue.push({ rel, variant });
      if (o.pool) flush(true);
      else flush(false);
    }
  };

  // A git tree's files are read ahead in one batch: those the manifest cannot vouch for by blob id.
  const tree = o.tree;
  const read = (rel: string): Buffer => {
    if (!tree) return readFileSync(join(packageRoot, rel));
    const b = tree.readFile(join(packageRoot, rel));
    if (!b) throw Object.assign(new Error(`${rel}: not in ${tree.label}`), { code: 'ENOENT' });
    return b;
  };
  if (tree) await tree.preload(files.filter((rel) => !(storeDir && own && o.vouched?.get(rel) === own.files.get(rel)?.blob && o.vouched?.get(rel) !== undefined)).map((rel) => join(packageRoot, rel)));

  try {
    // -------------------------------------------------------------- 2–4. hash, look up, dispatch
    const hit = (rel: string, variant: Variant, contentHash: string, ref: PackRef) => {
      pending.push({ rel, variant, contentHash, ref, ...(deferred ? {} : { result: resolver!.resolve(ref, contentHash, variant) }) });
    };
    let sinceYield = 0;
    await span('lookup', async () => {
      for (const rel of files) {
        const variant = fileKind(rel)!.variant;
        const blob = storeDir ? o.vouched?.get(rel) : undefined;
        if (blob !== undefined) {
          const e = own?.files.get(rel);
          if (e && e.blob === blob && e.variant === variant) {
            // Git vouches the file is this blob, whose bytes hashed to e.contentHash when it was read.
            vouchedHits++;
            ownHits++;
            verified.set(rel, { blob, contentHash: e.contentHash });
            const cached = o.sliceCache?.get(contentKey(e.contentHash, variant));
            if (cached && !deferred) {
              slices.set(rel, cached);
              known.set(rel, { contentHash: e.contentHash, variant, pack: own!.packs[e.pack]!, blob });
              storeHits++;
              progress();
            } else hit(rel, variant, e.contentHash, own!.packs[e.pack]!);
            continue;
          }
        }
        let data: Buffer;
        try {
          // Synchronous: for many small files one blocking read is several times cheaper than the four
          // thread-pool round trips of fs/promises readFile.
          data = read(rel);
        } catch (e) {
          diagnostics.push(diagnostic('KILN_READ_FAILED', readErrorText(e), { file: rel, producer: 'view' }));
          progress();
          continue;
        }
        bytes += data.length;
        if (storeDir) {
          const contentHash = sha256Hex(data);
          if (blob !== undefined && gitBlobId(data, blob.length) === blob) verified.set(rel, { blob, contentHash });
          const e: ManifestEntry | undefined = own?.files.get(rel);
          if (e && e.contentHash === contentHash && e.variant === variant) {
            ownHits++;
            const cached = o.sliceCache?.get(contentKey(contentHash, variant));
            if (cached && !deferred) {
              // Decoded earlier in this process, from the pack the manifest names: no store read.
              slices.set(rel, cached);
              const b = blobOf(rel, contentHash);
              known.set(rel, { contentHash, variant, pack: own!.packs[e.pack]!, ...(b ? { blob: b } : {}) });
              storeHits++;
              progress();
            } else hit(rel, variant, contentHash, own!.packs[e.pack]!);
          } else if (!takeGiven(rel, variant, contentHash)) {
            const ref = (await contentMap()).get(contentKey(contentHash, variant));
            if (ref) hit(rel, variant, contentHash, ref);
            else miss(rel, variant, contentHash);
          }
        } else {
          // Hashed only when something is kept by content (the slice hashes the bytes again).
          const contentHash = o.sliceCache || o.given ? sha256Hex(data) : '';
          const cached = o.sliceCache?.get(contentKey(contentHash, variant));
          if (cached) {
            slices.set(rel, cached);
            progress();
          } else miss(rel, variant, contentHash);
        }
        // Let the pool receive its first tasks (and load the compiler) while this thread hashes on.
        if (++sinceYield === 64) {
          sinceYield = 0;
          await new Promise<void>((r) => setImmediate(r));
        }
      }
    }, 'files', files.length);
    flush(true);
    if (deferred) {
      if (diagnostics.length === diagnosticsBefore && ownHits === files.length && pending.length === files.length && (await o.memo!(pending.map((p) => ({ rel: p.rel, contentHash: p.contentHash, variant: p.variant }))))) {
        for (let i = 0; i < pending.length; i++) progress();
        if (storeDir && [...verified.keys()].some((rel) => own!.files.get(rel)?.blob !== verified.get(rel)!.blob)) {
          // Newly verified blob ids are worth keeping even when nothing else changed.
          for (const p of pending) {
            const blob = blobOf(p.rel, p.contentHash);
            known.set(p.rel, { contentHash: p.contentHash, variant: p.variant, pack: p.ref, ...(blob ? { blob } : {}) });
          }
          try {
            await span('store write', () => writeBack(storeDir!));
          } catch (e) {
            storeUnavailable(storeErrorText(e));
          }
        }
        return { slices, parsed: 0, storeHits: pending.length, corrupt: 0, workers: 0, bytes, memoHit: true, vouched: vouchedHits };
      }
      startResolving();
    }

    // -------------------------------------------------------------- 5. resolve hits
    if (pending.length) await span('store read', async () => {
      for (const p of pending) {
        const r = await p.result!;
        if (r.status === 'hit') {
          slices.set(p.rel, r.slice);
          const b = blobOf(p.rel, p.contentHash);
          known.set(p.rel, { contentHash: p.contentHash, variant: p.variant, pack: p.ref, json: r.json, ...(b ? { blob: b } : {}) });
          storeHits++;
          progress();
          continue;
        }
        if (r.status === 'corrupt') reportCorrupt(p.rel, r.reason);
        else if (r.status === 'unavailable') storeUnavailable(storeErrorText(r.error));
        miss(p.rel, p.variant, p.contentHash);
      }
    }, 'what', 'slices');
    flush(true);

    // Digest on the calling thread (workers: 0).
    for (const m of inline) {
      const here = begin('slice', 'file', m.rel);
      let data: Buffer;
      const reading = begin('read');
      try {
        data = read(m.rel);
      } catch (e) {
        // Removed or made unreadable since it was hashed.
        end(reading, 'error', readErrorText(e));
        end(here);
        diagnostics.push(diagnostic('KILN_READ_FAILED', readErrorText(e), { file: m.rel, producer: 'view' }));
        progress();
        continue;
      }
      end(reading);
      let slice: Slice;
      try {
        slice = extractSlice(data, m.variant, { digestSchema: schema, maxFileSize });
      } catch (e) {
        endFailed(here, e);
        throw e;
      }
      end(here);
      slices.set(m.rel, slice);
      learn(m.rel, slice);
      progress();
    }
    if (tasks.length) await span('wait', () => Promise.all(tasks), 'tasks', tasks.length);
  } finally {
    if (pool && !o.pool) await span('pool close', () => pool!.destroy());
  }

  // ---------------------------------------------------------------- write: one pack, one manifest
  if (storeDir) {
    try {
      await span('store write', () => writeBack(storeDir!));
    } catch (e) {
      storeUnavailable(storeErrorText(e));
    }
  }

  if (o.sliceCache) {
    o.sliceCache.clear();
    for (const s of slices.values()) o.sliceCache.set(contentKey(s.contentHash, s.variant), s);
  }
  const workers = o.pool ? Math.min(o.pool.threads, parsed) : poolThreads;
  return { slices, parsed, storeHits, corrupt, workers, bytes, vouched: vouchedHits };

  async function writeBack(dir: string): Promise<void> {
    let fresh: PackRef | undefined;
    if (newItems.size) fresh = await writePack(dir, [...newItems.values()]);
    // This run's files, then what the old manifest knows outside this run's scope.
    const entries = new Map<string, Known>();
    for (const [rel, k] of known) entries.set(rel, k.pack ? k : { ...k, pack: fresh });
    if (own) {
      for (const [rel, e] of own.files) {
        if ((!o.inScope(rel) || missed.has(rel)) && !entries.has(rel)) entries.set(rel, { contentHash: e.contentHash, variant: e.variant, pack: own.packs[e.pack]!, ...(e.blob ? { blob: e.blob } : {}) });
      }
    }
    // A lookup-only run that found nothing for a view without a manifest has nothing to say.
    if (!own && !entries.size && o.lookupOnly) return;
    let manifest = toManifest(entries);
    // Repack when the manifest names too many packs, or packs mostly holding other slices, and every
    // entry is this run's (its JSON is at hand).
    const live = [...entries.values()].reduce((s, k) => s + (k.json?.length ?? 0), 0);
    const referenced = manifest.packs.reduce((s, p) => s + p.size, 0);
    const allHere = [...entries.values()].every((k) => k.json !== undefined);
    if (allHere && manifest.packs.length > 1 && (manifest.packs.length > MAX_PACKS_PER_VIEW || referenced > 4 * live + (1 << 20))) {
      const items = new Map<string, PackItem>();
      for (const k of entries.values()) {
        const ck = contentKey(k.contentHash, k.variant);
        // Every slice at hand was extracted or verified under this extractor version.
        if (!items.has(ck)) items.set(ck, { contentHash: k.contentHash, variant: k.variant, digestSchema: schema, extractor: EXTRACTOR_VERSION, json: k.json! });
      }
      const one = await writePack(dir, [...items.values()]);
      for (const k of entries.values()) k.pack = one;
      manifest = toManifest(entries);
    }
    const text = encodeManifest(manifest, schema);
    if (text !== ownText) {
      await writeManifest(dir, view, schema, text, ownWrites);
      await registerView(dir, schema, view);
    }
  }
}

function toManifest(entries: Map<string, Known>): Manifest {
  const packs: PackRef[] = [];
  const at = new Map<string, number>();
  const files = new Map<string, ManifestEntry>();
  for (const [rel, k] of entries) {
    if (!k.pack) continue;
    let i = at.get(k.pack.integrity);
    if (i === undefined) {
      i = packs.length;
      packs.push(k.pack);
      at.set(k.pack.integrity, i);
    }
    files.set(rel, { contentHash: k.contentHash, variant: k.variant, pack: i, ...(k.blob ? { blob: k.blob } : {}) });
  }
  return { packs, files };
}
