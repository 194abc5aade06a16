/**
 * The head's dependency graph (closure.ts `dependencyGraph`) kept in the store per state, so a warm
 * `kiln affected` whose head it has seen looks the graph up instead of loading every project (their
 * tsconfigs, digest reports, reach and the imports of all their sources: most of a warm run's time).
 *
 * What the graph is computed from, and how each part is covered:
 *   - the head's files: a git tree object (workspace/tree.ts), named by its tree id — content-addressed,
 *     so the same id is the same files;
 *   - what that tree answers from disk (installed dependencies under node_modules, paths outside the
 *     repository): recorded from the tree's opening on (`recordDisk` of `GitTree.pair`), each question with the
 *     answer it got, and asked again on every lookup (`diskAnswer`) — one answer that differs is a miss;
 *   - how it is computed: kiln's code (`codeFingerprint`, every .js file of @kiln/core's build), the
 *     packages it runs on as installed (each dependency of @kiln/core — TypeScript among them — by its
 *     version, and TypeScript's compiler file by size and modification time), the extractor version
 *     and digest schema, this module's format (AFFECTED_CLOSURE_FORMAT);
 *   - the caller's choices: the workspace root, the current directory, the preferred tsconfig per
 *     project.
 * All of it but the disk answers is hashed into the entry's key (store/format.ts `closureMemoKey`).
 *
 * Invariants: a memo is used only for exactly the input it was computed from, and only while every
 * recorded disk answer is still the same; it is written only from a computation whose reading was
 * complete (the caller's `complete`: no blob git could not give, no read or worker failure, no disk
 * question that got two answers). Anything unreadable, damaged or foreign is a miss — it costs the
 * computation, never a wrong graph. Nothing here runs at import time.
 */
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedParserVersion } from '../parse/parser-version.js';
import { digestParts } from '../digest/hash.js';
import { dropEntry, entryInfo, readEntry, writeEntry } from '../store/entry.js';
import { closureMemoKey } from '../store/format.js';
import { codeFingerprint } from '../view/report-memo.js';
import { AFFECTED_CLOSURE_FORMAT, DIGEST_SCHEMA, EXTRACTOR_VERSION } from '../version.js';
import { diskAnswer, type DiskOp, type DiskRecording, type GitTree } from '../workspace/tree.js';
import type { DependencyGraph } from './closure.js';

const KIND = 'kiln-affected-closure';
const DISK_OPS = new Set<string>(['read', 'kind', 'list', 'real', 'link']);

interface Entry {
  kind: typeof KIND;
  format: number;
  input: string;
  /** Project root → [dependency root, how][], in the graph's order. */
  graph: [string, [string, string][]][];
  /** Disk questions the computation asked through the tree: [op, absolute path, answer]. */
  disk: [string, string, string][];
}

/** The digest of everything but disk a head's graph is computed from (see the header). */
export function closureMemoInput(workspaceRoot: string, tree: GitTree, tsconfigs: Record<string, string> | undefined): string {
  const prefs = Object.entries(tsconfigs ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return digestParts('kiln-affected-closure', [
    String(AFFECTED_CLOSURE_FORMAT),
    codeFingerprint(),
    installedParserVersion(),
    dependencyStamp(),
    String(EXTRACTOR_VERSION),
    String(DIGEST_SCHEMA),
    tree.top,
    tree.treeId,
    resolve(workspaceRoot),
    process.cwd(),
    JSON.stringify(prefs),
  ]);
}

let stamp: string | undefined;
/**
 * @kiln/core's dependencies as this process resolves them (name@version each), and TypeScript's
 * compiler file (size, modification time: a patched compiler keeps its version). Read once per process.
 */
function dependencyStamp(): string {
  if (stamp !== undefined) return stamp;
  const req = createRequire(import.meta.url);
  const parts: string[] = [];
  try {
    const own = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const name of Object.keys(own.dependencies ?? {}).sort()) {
      let version = 'unresolved';
      try {
        version = String((JSON.parse(readFileSync(req.resolve(`${name}/package.json`), 'utf8')) as { version?: unknown }).version);
      } catch {
        // A package without an exported package.json: its version stays unknown, the same each run.
      }
      parts.push(`${name}@${version}`);
    }
    const ts = statSync(req.resolve('typescript'));
    parts.push(`typescript:${ts.size}:${ts.mtimeMs}`);
  } catch (e) {
    parts.push(`unreadable:${String(e)}:${Date.now()}`); // never equal to another run's: no memo
  }
  return (stamp = parts.join('\n'));
}

/** The memoised graph for `input`, if there is one and disk still answers as it did; otherwise undefined. */
export async function readClosureMemo(storeDir: string, input: string): Promise<DependencyGraph | undefined> {
  const key = closureMemoKey(input);
  let info;
  try {
    info = await entryInfo(storeDir, key);
  } catch {
    return undefined;
  }
  if (!info) return undefined;
  let entry: Entry;
  try {
    const j = JSON.parse((await readEntry(storeDir, key)).toString('utf8')) as Partial<Entry>;
    if (j?.kind !== KIND || j.format !== AFFECTED_CLOSURE_FORMAT || j.input !== input || !wellFormed(j)) throw new Error('not a memoised graph of this input');
    entry = j as Entry;
  } catch (e) {
    // Damaged or foreign: drop it (the next computation writes it again).
    await dropEntry(storeDir, key, info.integrity, e);
    return undefined;
  }
  for (const [op, abs, answer] of entry.disk) if (diskAnswer(op as DiskOp, abs) !== answer) return undefined;
  return new Map(entry.graph.map(([root, deps]) => [root, new Map(deps)]));
}

/** Keep a head's graph for `input` with the disk answers it was computed with (best effort; `complete` false writes nothing). */
export async function writeClosureMemo(storeDir: string, input: string, graph: DependencyGraph, recording: DiskRecording, complete: boolean): Promise<boolean> {
  if (!complete || recording.unstable) return false;
  const disk: Entry['disk'] = [...recording.answers].map(([k, answer]) => {
    const nul = k.indexOf('\u0000');
    return [k.slice(0, nul), k.slice(nul + 1), answer];
  });
  const entry: Entry = { kind: KIND, format: AFFECTED_CLOSURE_FORMAT, input, graph: [...graph].map(([root, deps]) => [root, [...deps]]), disk };
  try {
    await writeEntry(storeDir, closureMemoKey(input), Buffer.from(JSON.stringify(entry), 'utf8'), { writes: 1, input });
    return true;
  } catch {
    return false; // a memo is an optimisation: the next run computes again
  }
}

function wellFormed(j: Partial<Entry>): boolean {
  const str = (x: unknown) => typeof x === 'string';
  return (
    Array.isArray(j.graph) &&
    j.graph.every((r) => Array.isArray(r) && r.length === 2 && str(r[0]) && Array.isArray(r[1]) && r[1].every((d) => Array.isArray(d) && d.length === 2 && str(d[0]) && str(d[1]))) &&
    Array.isArray(j.disk) &&
    j.disk.every((d) => Array.isArray(d) && d.length === 3 && DISK_OPS.has(d[0]) && str(d[1]) && str(d[2]))
  );
}
