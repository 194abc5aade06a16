/**
 * What a GraphSession keeps of its previous tolerant export from syntax, so a one-file edit rebuilds
 * only the records that can have changed: each source file's records come in groups (its file, module
 * and declarations; its module's exports; its imports; its references), each group kept with the
 * inputs it was built from and replayed when they are equal, plus the package's namespaces as one
 * group. The previous canonical order and the JSONL line of every kept record are kept too.
 *
 * Export tables (which follow re-export chains across files) are compared once per export, projected
 * to what records take from them, and versioned: a module's export group, the namespaces and the
 * references of the files importing a module are kept while the versions they read are. So a body
 * edit rebuilds the edited file's groups; a new export also rebuilds the groups of the modules whose
 * tables it reaches and of their importers.
 *
 * Invariants:
 * - a group is replayed only when every input it was built from is equal (compared by value, or by
 *   the identity of a slice, which is a function of the file's content); otherwise it is rebuilt: the
 *   records are those of an export without a session;
 * - a group's records belong to it alone: their ids start with its file's or module's id, and the
 *   module ids of a package are checked to be distinct before anything is replayed. A collision found
 *   anyway (an id already taken when a group is replayed, or a merge into a kept record) throws
 *   `MemoConflict` and the export is built again without the memo;
 * - kept records are frozen (deeply): neither a later export nor a caller holding a previous result
 *   can change them, so a kept JSONL line always matches its record.
 */
import { compareRecords, type GraphEdge, type GraphNode, type KnownRecord } from './records.js';
import type { Slice } from '../facts/slice.js';

export type GroupRecord = GraphNode | GraphEdge;

/** One group's records and the inputs they were built from. */
export interface Group<K> {
  key: K;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** A file's groups (see the header); each is absent until built. */
export interface FileGroups {
  /** The file, module and declaration records: the slice and what the report and namespaces say of the file. */
  files?: Group<{ slice: Slice; extra: string }>;
  /** The module's export records: the version of its export table. */
  exports?: Group<number>;
  /** The import records: the slice and how each specifier resolved. */
  imports?: Group<{ slice: Slice; answers: string }>;
  /**
   * The syntax reference edges: the slice, the answers, and the versions of what its mentions resolve
   * through (`deps`: the export tables of the modules it imports, other packages' slices).
   */
  references?: Group<{ slice: Slice; answers: string; deps: string }>;
}

export interface GraphMemo {
  /** Package name, entries, source files and output directories the groups were built for. */
  epoch: string;
  /**
   * Each file's export table, projected to what records are made of, with a version that changes
   * with it (numbers from `versions`, never reused).
   */
  tables: Map<string, { projected: string; version: number }>;
  versions: number;
  /** The other packages' files and slices references reached (ForeignSlices.fingerprint), and its version. */
  foreign: { print: string; version: number };
  /** The namespaces group: the versions of the entry points' export tables. */
  namespaces?: Group<string> & { notes: Map<string, string[]> };
  files: Map<string, FileGroups>;
  /** The previous export's records in canonical order (nodes, then edges), and the same as sets. */
  order?: { nodes: GraphNode[]; edges: GraphEdge[]; kept: Set<GroupRecord> };
  /** The JSONL line of each kept record. */
  lines: WeakMap<object, string>;
}

export function createMemo(): GraphMemo {
  return { epoch: '', tables: new Map(), versions: 0, foreign: { print: '', version: 0 }, files: new Map(), lines: new WeakMap() };
}

/** Thrown when replaying would not give the records of a build without the memo (see the header). */
export class MemoConflict extends Error {
  constructor(id: string) {
    super(`record ${id} belongs to two groups`);
  }
}

/** Freeze a record and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

/**
 * `sortRecords` for a builder's nodes or edges (unique ids, known kinds) when most of them were in the
 * previous export: those keep their previous relative order (their kind and id did not change), the
 * rest are sorted and merged in.
 */
export function sortKept<T extends { kind: string; id: string }>(records: T[], previous: readonly T[] | undefined, kept: ReadonlySet<unknown> | undefined, sortAll: (r: T[]) => T[]): T[] {
  if (!previous || !kept) return sortAll(records);
  const current = new Set<unknown>(records);
  const old = previous.filter((r) => current.has(r));
  const fresh = sortAll(records.filter((r) => !kept.has(r)));
  if (!fresh.length) return old;
  const out = new Array<T>(old.length + fresh.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < old.length && j < fresh.length) out[k++] = compareRecords(old[i]!, fresh[j]!) <= 0 ? old[i++]! : fresh[j++]!;
  while (i < old.length) out[k++] = old[i++]!;
  while (j < fresh.length) out[k++] = fresh[j++]!;
  return out;
}

/** The JSONL text of records, reusing the kept line of every frozen record. */
export function formatWithLines(records: readonly KnownRecord[], lines: WeakMap<object, string>): string {
  if (!records.length) return '';
  const out = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let line = lines.get(r);
    if (line === undefined) {
      line = JSON.stringify(r);
      if (Object.isFrozen(r)) lines.set(r, line);
    }
    out[i] = line;
  }
  return `${out.join('\n')}\n`;
}
