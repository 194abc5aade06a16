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
 *
 * `RecordSet` is where an export's records are added (graph/builder.ts and the emitters beside it):
 * it captures each group's records as they are built, replays kept groups, and enforces the two
 * invariants above (a conflict throws, built groups are frozen when the export finishes). Without a
 * memo it is a plain set of records by id, the first record of an id kept.
 */
import { compareRecords, edgeId, sortRecords, type GraphEdge, type GraphLanguage, type GraphNode, type KnownRecord, type Provenance } from './records.js';
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
  /** The other packages' files and slices references reached (view/foreign.ts ForeignFiles.fingerprint), and its version. */
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

/** An export's nodes and edges by id, and the memo's groups they are captured in and replayed from (see the header). */
export class RecordSet {
  readonly nodes = new Map<string, GraphNode>();
  readonly edges = new Map<string, GraphEdge>();
  /** Groups replayed from the memo. */
  reused = 0;
  /** The group being built, which every new record joins. */
  private capture: Group<unknown> | null = null;
  /** Groups built in this export: frozen when it finishes. */
  private readonly built: Group<unknown>[] = [];

  /** A session's groups of records of the previous export; only without a program. Dropped by `drop`. */
  constructor(public memo: GraphMemo | undefined) {}

  /** Use no memo in this export (and forget what it held). */
  drop(): void {
    const memo = this.memo;
    if (!memo) return;
    memo.files.clear();
    memo.epoch = '';
    this.memo = undefined;
  }

  /** A file's groups in the memo (which must exist). */
  groupsOf(rel: string): FileGroups {
    let g = this.memo!.files.get(rel);
    if (!g) {
      g = {};
      this.memo!.files.set(rel, g);
    }
    return g;
  }

  /** The current version of a module's export table (-1 without a memo). */
  tableVersion(rel: string): number {
    return this.memo?.tables.get(rel)?.version ?? -1;
  }

  /** Build one group with `body`, its records captured; without a memo just run it. */
  group<K>(key: K, body: () => void): Group<K> | undefined {
    if (!this.memo) {
      body();
      return undefined;
    }
    const g: Group<K> = { key, nodes: [], edges: [] };
    this.capture = g;
    try {
      body();
    } finally {
      this.capture = null;
    }
    this.built.push(g);
    return g;
  }

  replay(g: Group<unknown>): void {
    for (const n of g.nodes) {
      if (this.nodes.has(n.id)) throw new MemoConflict(n.id);
      this.nodes.set(n.id, n);
    }
    for (const e of g.edges) {
      if (this.edges.has(e.id)) throw new MemoConflict(e.id);
      this.edges.set(e.id, e);
    }
    this.reused++;
  }

  addNode(r: GraphNode): void {
    const had = this.nodes.get(r.id);
    if (had) {
      if (this.memo && Object.isFrozen(had)) throw new MemoConflict(r.id);
      return;
    }
    this.nodes.set(r.id, r);
    this.capture?.nodes.push(r);
  }

  /** Add an edge; one already there (same kind, ends and provenance) is given to `merge` instead. */
  addEdge<K extends GraphEdge['kind']>(
    kind: K,
    from: string,
    to: string,
    provenance: Provenance,
    language: GraphLanguage,
    extra: Omit<Extract<GraphEdge, { kind: K }>, 'kind' | 'id' | 'language' | 'provenance' | 'degraded' | 'from' | 'to'>,
    merge?: (into: Extract<GraphEdge, { kind: K }>) => void,
  ): void {
    const id = edgeId(kind, from, to, provenance);
    const had = this.edges.get(id) as Extract<GraphEdge, { kind: K }> | undefined;
    if (had) {
      if (this.memo && Object.isFrozen(had)) throw new MemoConflict(id);
      merge?.(had);
      return;
    }
    const e = { kind, id, language, provenance, degraded: false, from, to, ...extra } as unknown as GraphEdge;
    this.edges.set(id, e);
    this.capture?.edges.push(e);
  }

  /** Freeze the groups built, and the nodes and edges in canonical order (kept in the memo for the next export). */
  finish(): { nodes: GraphNode[]; edges: GraphEdge[] } {
    const memo = this.memo;
    for (const g of this.built) {
      for (const n of g.nodes) deepFreeze(n);
      for (const e of g.edges) deepFreeze(e);
    }
    const nodes = sortKept([...this.nodes.values()], memo?.order?.nodes, memo?.order?.kept, sortRecords);
    const edges = sortKept([...this.edges.values()], memo?.order?.edges, memo?.order?.kept, sortRecords);
    if (memo) {
      const kept = new Set<GraphNode | GraphEdge>();
      for (const r of nodes) if (Object.isFrozen(r)) kept.add(r);
      for (const r of edges) if (Object.isFrozen(r)) kept.add(r);
      memo.order = { nodes, edges, kept };
    }
    return { nodes, edges };
  }
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
