/**
 * The local store's layout (STORE_FORMAT_VERSION 2): ADR 0012's two levels on top of cacache.
 *
 * Storage level — content-addressed *packs* of slices. A slice is a pure function of (content hash,
 * parser variant, extractor version, digest schema) and of nothing else (no path, no machine). The
 * slices a run extracts are written together as one pack (store/pack.ts): one cacache entry whose key
 * is the sha256 of its bytes (`kiln/v2/pack/<sha256>`), written if absent, integrity-checked (sha512)
 * by cacache on every read. A pack's header lists what each slice in it is (content hash, variant,
 * schema, extractor) and where it lies, so a pack is self-describing.
 *
 * Identity level — one *manifest* per view (store/manifest.ts): `{relative path → content hash,
 * variant, pack}` for the files of one package root in one working tree, plus the packs it uses. A
 * warm run reads its manifest and the few packs it names: O(1) entries, however many files. A cold
 * run writes one pack and one manifest: O(1) entries.
 *
 * A view is identified by `viewId` = a hash of the package root's absolute path. It appears only in
 * the manifest's cacache *key* (a local file name under index-v5/, hashed again by cacache); no
 * absolute path is ever stored, reported, or part of a digest or a key that leaves the machine. Two
 * clones at different paths are two views: each has its own manifest, and they share packs.
 *
 * Sharing across views — the registry of views (`kiln/v2/views/...`, one entry per extractor and
 * schema) lists the views that wrote a manifest, most recent first. A run whose own manifest does not
 * know a file's content looks the content up in the manifests of the other registered views (a
 * content map: content hash → pack), so a new clone or worktree reuses what its siblings extracted;
 * that costs O(views) reads, once per run, and only when something missed the run's own manifest.
 *
 * Assembled reports — one entry per view (`kiln/v2/report/...`, view/report-memo.ts): the report last
 * assembled for it, with the digest of everything the assembly read; used only on an exact match.
 *
 * Debug artifacts — records of emitted JS files and the maps and retained sources they name
 * (`kiln/debug/v<N>/…`, debug/record.ts), under their own format version (DEBUG_STORE_FORMAT).
 *
 * Dependency graphs — one entry per head state `kiln affected` read (`kiln/v2/closure/...`,
 * affected/closure-memo.ts), named by the digest of everything the graph was computed from.
 *
 * Single slices — `writeSlice`/`readSlice` keep the per-content API: a *loose* slice is a one-slice
 * pack plus an index entry under `sliceKey(...)` pointing at it. digestTree never writes loose
 * entries (that would be one entry per file again); readSlice finds a content's slice either loose or
 * through the registered views' manifests.
 *
 * Every read re-verifies the slice itself (contentHash, variant, digestSchema, extractor, shape)
 * exactly as the v1 per-slice store did: a manifest or pack that lies costs a re-parse, never a
 * wrong digest.
 *
 * Garbage collection (store/gc.ts, `kiln store gc`): live = the packs every manifest in the index names
 * (and loose slices' packs); everything else under `kiln/v2/` of no use to this extractor is removed,
 * then `cacache.verify` reclaims unreferenced content. Manifests are rewritten only when they change, and
 * repacked when they name too many packs or packs mostly dead (see view/collect.ts), so dead packs
 * accumulate slowly.
 * Deleting the store directory is always safe.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AFFECTED_CLOSURE_FORMAT, DEBUG_STORE_FORMAT, STORE_FORMAT_VERSION, EXTRACTOR_VERSION } from '../version.js';
import { sha256Hex } from '../digest/hash.js';
import type { Variant } from '../parse/language.js';

const NS = `kiln/v${STORE_FORMAT_VERSION}`;

/** Key of a loose slice (writeSlice/readSlice): what the slice is a pure function of, and nothing else. */
export function sliceKey(contentHash: string, variant: Variant, digestSchema: number): string {
  return `${NS}/slice/x${EXTRACTOR_VERSION}/d${digestSchema}/${variant}/${contentHash}`;
}

/** Key of a pack: the sha256 of its bytes (content-addressed; same bytes, same key). */
export function packKey(packSha256: string): string {
  return `${NS}/pack/${packSha256}`;
}

/**
 * A view's identifier: a hash of its package root's absolute path. Local to this machine by nature
 * (it only names the view's manifest in the local store) and never stored in any entry's content.
 * A package read from git objects (workspace/tree.ts) is another view of the same root (`state`
 * 'git'): its manifest follows the states read from git, the working tree's its own. A caller that
 * reads two git states side by side names the second (`git:base`, kiln affected's base): one
 * manifest per sequence of states, so the two do not overwrite each other's entries run after run.
 */
export function viewIdOf(absolutePackageRoot: string, state?: GitViewState): string {
  return sha256Hex(`kiln-view\u0000${absolutePackageRoot}${state ? `\u0000${state}` : ''}`).slice(0, 32);
}

export function manifestKey(viewId: string, digestSchema: number): string {
  return `${NS}/manifest/x${EXTRACTOR_VERSION}/d${digestSchema}/${viewId}`;
}

export function registryKey(digestSchema: number): string {
  return `${NS}/views/x${EXTRACTOR_VERSION}/d${digestSchema}`;
}

/** Which git view of a package root: `git`, or a named second sequence of git states (`git:base`). */
export type GitViewState = 'git' | `git:${string}`;

/** Key of a view's memoised report (view/report-memo.ts says what the entry holds). */
export function viewReportKey(viewId: string, digestSchema: number): string {
  return `${NS}/report/x${EXTRACTOR_VERSION}/d${digestSchema}/${viewId}`;
}

/** Key of a memoised head dependency graph (affected/closure-memo.ts): its input digest names it. */
export function closureMemoKey(inputDigest: string): string {
  return `${NS}/closure/c${AFFECTED_CLOSURE_FORMAT}/${inputDigest}`;
}

/**
 * Debug artifacts (debug/record.ts says what the entries hold): a record by debug ID and by the sha256
 * of its JS text, and blobs (maps, retained sources) by the sha256 of their text. Records carry the
 * blob keys they name in their index metadata (`{ blobs: string[] }`), so gc keeps what they name
 * without reading them.
 */
const DEBUG_NS = `kiln/debug/v${DEBUG_STORE_FORMAT}`;
export const DEBUG_KEY_PREFIX = 'kiln/debug/';
export const debugIdKey = (id: string): string => `${DEBUG_NS}/id/${id.toLowerCase()}`;
export const debugJsKey = (sha256: string): string => `${DEBUG_NS}/js/${sha256}`;
export const debugBlobKey = (sha256: string): string => `${DEBUG_NS}/blob/${sha256}`;
/** Whether a store key is a debug entry of the current debug format. */
export const isCurrentDebugKey = (key: string): boolean => key.startsWith(`${DEBUG_NS}/`);

/** Where the store lives: --store, then KILN_STORE, then the user cache directory. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KILN_STORE) return env.KILN_STORE;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'kiln', 'store');
}
