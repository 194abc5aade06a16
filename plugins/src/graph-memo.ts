/**
 * The graph memo: createNodes' answer kept across graph builds (`graph-memo.json` beside kiln's key
 * records, in node_modules/.cache/kiln), so a plugin worker whose workspace did not change answers
 * without loading @kiln/core or @nx/devkit.
 *
 * A memo answers again only for the very state it was computed in: the same config files, plugin
 * options, Node.js version and KILN_* variables (its id), the same values of the environment variables
 * the keys read, and the same stat snapshot (snapshot.ts: the walk, the probes recorded while the keys
 * were computed by fs-recording.ts, the install markers and kiln's code), compared as one digest.
 * Build-output directories no key read are left out of the walk; those a key read are compared by content.
 *
 * Invariants: any doubt is a miss (the keys are then computed as always, from the warm store). A memo is
 * written valid only when the snapshots before and after the computation agree, nothing in them changed
 * in the 2 s before, and no key read where the walk does not go; otherwise it is written with a
 * fingerprint that never matches (and a `why` for people), so the next lookup knows what to leave out and
 * what to probe. A memo that cannot be read or written costs time, never a wrong answer.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { CreateNodesResult } from '@nx/devkit';
import type { WorkspaceKeys } from '@kiln/core';
// The format constants only (no imports of its own): a memo hit still loads nothing else of core.
import { GRAPH_MEMO_FORMAT } from '@kiln/core/version';
import type { Recording } from './fs-recording.js';
import { codeUnchanged, dirIdentity, fingerprint, posixJoin, SKIPPED_DIRS, snapshot, toPosix, unwalkedDirs, type Snapshot } from './snapshot.js';

export type NodesResults = [string, CreateNodesResult][];
/** What createDependencies needs of a key: the package, and the workspace packages its key depends on. */
export interface Edges {
  project: string;
  root: string;
  dependencies: string[];
}

/** A target kiln keyed: createDependencies checks that the key reached Nx's merged configuration. */
export interface Keyed {
  root: string;
  target: string;
  key: string;
  /** kiln's own build executor (options.kilnKey) or a tool target (options.kiln.key). */
  own: boolean;
}

/** Counters for tests and diagnostics: memo hits, key computations, memos written valid. */
export const stats = { hits: 0, computed: 0, written: 0, lastWrite: '' };
/** How this process used the memo: hits, key computations, memos written valid, and why the last one was (not). */
export function graphMemoStats(): { hits: number; computed: number; written: number; lastWrite: string } {
  return { ...stats };
}

export interface Memo {
  format: number;
  id: string;
  /** Workspace-relative build-output directories the fingerprint leaves out (no key read them). */
  skip: string[];
  /**
   * Build-output directories some key read (a resolution probe of a dependency's `dist`): walked by
   * content, not by stat stamps. Without the daemon, Nx restores every cache hit's outputs, so a fully
   * cached run rewrites them with the same bytes and new inodes and times; stamps would miss every run.
   */
  byContent: string[];
  /** Absolute paths outside the walk that the computation read (stat'ed on every lookup). */
  probes: string[];
  /** The digest of the snapshot the keys were computed in; '' never matches. */
  fingerprint: string;
  /** `valid`, or why the fingerprint is '' (for people: `cat` the memo to see why it does not answer). */
  why: string;
  results: NodesResults;
  edges: Edges[];
  /** Targets keyed (for createDependencies' check that the keys landed). */
  keyed: Keyed[];
  /** Environment variables a key read (NODE_ENV, those keyed targets declare) → a digest of the value. */
  env: Record<string, string>;
}

/** The variable naming the trace file (executors/lib/trace.ts, index.ts): left out of the memo's id. */
const TRACE_VARIABLE = 'KILN_TRACE';

export const cacheDir = (workspaceRoot: string) => join(workspaceRoot, 'node_modules', '.cache', 'kiln');
const memoFile = (workspaceRoot: string) => join(cacheDir(workspaceRoot), 'graph-memo.json');

/**
 * What, besides the files, a memo answers for: the config files Nx matched (they follow .gitignore and
 * .nxignore), the plugin options, the Node.js version (which names its built-in modules, left out of
 * a key's externals) and every KILN_* variable. No environment variable changes a key
 * today (KILN_STORE and XDG_CACHE_HOME only move the content-addressed store, KILN_NO_CODE_CACHE only
 * how TypeScript is loaded); they are part of the id all the same, so a future one cannot be missed —
 * but KILN_TRACE, which names where the build timeline is written and is read by nothing that computes:
 * a traced run answers from the memo like an untraced one (and is timed as it would run).
 */
export function memoId(configFiles: readonly string[], options: object | undefined): string {
  const env = Object.keys(process.env)
    .filter((k) => k.startsWith('KILN_') && k !== TRACE_VARIABLE)
    .sort()
    .map((k) => [k, process.env[k]]);
  return JSON.stringify({ files: [...configFiles].sort(), options: options ?? {}, env, node: process.version });
}

/** An environment variable's value as a memo compares it (never stored in clear). */
function envDigest(name: string): string {
  const v = process.env[name];
  return v === undefined ? 'unset' : createHash('sha256').update(v).digest('hex').slice(0, 32);
}

/** The environment variables the keys read: NODE_ENV and what keyed targets declare. */
export function envOfKeys(keys: WorkspaceKeys): Record<string, string> {
  const names = new Set(['NODE_ENV']);
  for (const p of keys.projects) for (const t of Object.values(p.targets ?? {})) for (const n of Object.keys(t.components.env)) names.add(n);
  return Object.fromEntries([...names].sort().map((n) => [n, envDigest(n)]));
}

export async function readMemo(workspaceRoot: string): Promise<Memo | undefined> {
  try {
    const memo = JSON.parse(await readFile(memoFile(workspaceRoot), 'utf8')) as Memo;
    const strings = (a: unknown) => Array.isArray(a) && a.every((x) => typeof x === 'string');
    if (memo.format !== GRAPH_MEMO_FORMAT || typeof memo.id !== 'string' || typeof memo.fingerprint !== 'string') return undefined;
    if (!strings(memo.skip) || !strings(memo.byContent) || !strings(memo.probes) || !Array.isArray(memo.results) || !Array.isArray(memo.edges) || !Array.isArray(memo.keyed)) return undefined;
    if (!memo.env || typeof memo.env !== 'object') return undefined;
    return memo;
  } catch {
    return undefined;
  }
}

export async function lookupMemo(workspaceRoot: string, id: string): Promise<{ hit?: Memo; memo?: Memo; before?: Snapshot }> {
  const memo = await readMemo(workspaceRoot);
  const before = snapshot(workspaceRoot, memo?.skip ?? [], memo?.probes ?? [], memo?.byContent ?? []);
  const envSame = (m: Memo) => Object.entries(m.env).every(([k, v]) => envDigest(k) === v);
  if (memo && before && memo.id === id && memo.fingerprint !== '' && envSame(memo) && fingerprint(before, memo.skip, before.probes).digest === memo.fingerprint) return { hit: memo };
  return { ...(memo ? { memo } : {}), ...(before ? { before } : {}) };
}

/**
 * Writes the memo of keys just computed, valid (with a fingerprint) only if all of these hold:
 *   - the snapshot taken before anything was read (`before`) walked everything but what is skipped now;
 *   - no key read a module or file where the walk does not go (outside the workspace, node_modules);
 *   - nothing in it, and no probe, changed in the 2 s before it was stat'ed;
 *   - a snapshot taken now, after the keys, is the same (nothing changed while they were computed),
 *     and so is kiln's code.
 * Otherwise the memo is written with a fingerprint that never matches: it still tells the next lookup
 * which outputs to leave out and which probes to stat, so that one can be valid.
 */
export async function writeMemo(
  workspaceRoot: string,
  answer: Pick<Memo, 'id' | 'results' | 'edges' | 'keyed' | 'env'>,
  keys: WorkspaceKeys,
  old: Memo | undefined,
  before: Snapshot | undefined,
  recording: Recording,
): Promise<void> {
  const outputs = [...new Set([...outputsOf(answer.results), ...toolOutputsOf(keys)])];
  // Every path read, and every directory above one.
  const read = new Set<string>();
  for (const f of [...readByKeys(keys), ...recording.inside]) {
    for (let path = f; path && !read.has(path); path = path.slice(0, Math.max(0, path.lastIndexOf('/')))) read.add(path);
  }
  const skip: string[] = [];
  const byContent: string[] = [];
  for (const dir of outputs) {
    // Left out only if no key read anything in it, and it was there, the same directory, before and
    // after the keys were computed (what lists its parent saw it and did not enter). One a key read is
    // fingerprinted by its files' contents instead (see Memo.byContent).
    if (read.has(dir)) {
      byContent.push(dir);
      continue;
    }
    const pre = before?.dirs.get(dir);
    if (pre && pre === dirIdentity(join(workspaceRoot, dir))) skip.push(dir);
  }
  byContent.sort();
  const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  let digest = '';
  let why: string;
  if (!before) why = 'no snapshot before (an unreadable entry or a symbolic link to a directory)';
  else if (!(old?.skip ?? []).every((d) => skip.includes(d))) why = 'an output directory left out before is read or was replaced';
  else if (readsOutside(workspaceRoot, keys)) why = 'a key read a module or file outside the walk';
  else {
    const prior = fingerprint(before, skip, recording.probes);
    if (prior.recent) why = `changed less than 2 s before: ${prior.recent}`;
    else if (!codeUnchanged()) why = "kiln's code changed";
    // The snapshot before walked these by the last memo's list: with another list, it cannot vouch.
    else if (!sameList(old?.byContent ?? [], byContent)) why = 'the output directories fingerprinted by content changed (the next graph build can answer)';
    else {
      const now = snapshot(workspaceRoot, skip, [...recording.probes.keys()], byContent);
      if (!now || fingerprint(now, skip, now.probes).digest !== prior.digest) why = 'a file changed while the keys were computed';
      else {
        digest = prior.digest;
        why = 'valid';
      }
    }
  }
  stats.lastWrite = why;
  if (digest) stats.written++;
  const memo: Memo = { format: GRAPH_MEMO_FORMAT, ...answer, skip, byContent, probes: [...recording.probes.keys()].sort(), fingerprint: digest, why };
  const file = memoFile(workspaceRoot);
  try {
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify(memo));
    await rename(tmp, file);
  } catch {
    // A memo that cannot be written costs time on the next graph build, nothing else.
  }
}

/** The folders tool keys never read (their targets' outputs), workspace-relative: the memo may skip them. */
function toolOutputsOf(keys: WorkspaceKeys): string[] {
  return keys.projects.flatMap((p) => Object.values(p.targets ?? {}).flatMap((t) => t.outputs.map((o) => posixJoin(p.root, o))));
}

/** The inferred targets' output directories inside their project (workspace-relative, POSIX). */
function outputsOf(results: NodesResults): string[] {
  const out = new Set<string>();
  for (const [, result] of results) {
    for (const [root, project] of Object.entries(result.projects ?? {})) {
      for (const target of Object.values(project.targets ?? {})) {
        for (const o of target.outputs ?? []) {
          // `{projectRoot}/dist` (the build) or `{workspaceRoot}/dist/codegraph/{projectRoot}` (the code graph).
          const atRoot = o.startsWith('{workspaceRoot}/');
          const rel = atRoot ? posixJoin(o.slice('{workspaceRoot}/'.length).replace('{projectRoot}', root)) : posixJoin(root, o.replace('{projectRoot}', '.'));
          const inside = atRoot ? rel !== '' && rel !== '.' : rel.startsWith(`${toPosix(root)}/`);
          if (inside && !rel.split('/').includes('..') && !/[*?{[]/.test(rel)) out.add(rel);
        }
      }
    }
  }
  return [...out].sort();
}

/** Workspace-relative paths of the modules and files the keys read (modules are read in worker threads, unrecorded). */
function readByKeys(keys: WorkspaceKeys): string[] {
  const read: string[] = [];
  for (const p of keys.projects) {
    for (const id of Object.keys(p.components?.modules ?? {})) read.push(posixJoin(p.root, id.slice(id.indexOf('//') + 2))); // a logical path (`src/a`), perhaps with `#order:…`
    for (const f of Object.keys(p.components?.files ?? {})) read.push(f.startsWith('/') ? posixJoin(f.slice(1)) : posixJoin(p.root, f));
  }
  return read;
}

/** Whether some key read a module or file where the walk does not go: outside the workspace, in a skipped directory, or in the store. */
function readsOutside(workspaceRoot: string, keys: WorkspaceKeys): boolean {
  const unwalked = unwalkedDirs(workspaceRoot);
  return readByKeys(keys).some(
    (rel) => rel.split('/')[0] === '..' || isAbsolute(rel) || rel.split('/').some((part) => SKIPPED_DIRS.has(part)) || unwalked.some((d) => rel === d || rel.startsWith(`${d}/`)),
  );
}
