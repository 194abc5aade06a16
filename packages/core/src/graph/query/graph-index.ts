/**
 * An in-memory index over one code graph: nodes by id, by name, by file and by module; edges by kind
 * with adjacency in both directions. Every query and context pack reads the graph through it.
 *
 * Invariants:
 * - Built once from (header, records); never mutated afterwards. Pure: no I/O.
 * - Deterministic: every list it returns is in a fixed order (adjacency by edge kind, then the other
 *   end's id, then the edge id, in code-point order), independent of the records' order in the file.
 * - The first record with a given id wins; later duplicates are counted (`duplicates`), not merged.
 * - Dangling edges stay in the adjacency lists; `node(id)` is undefined for their missing end.
 */
import {
  byCodePoint,
  declPathOf,
  fileOf,
  isEdgeRecord,
  moduleRefOf,
  nameOf,
  type QueryGraph,
  type QueryHeader,
  type QueryRecord,
} from './model.js';

export interface IndexedEdge {
  id: string;
  kind: string;
  from: string;
  to: string;
  provenance?: string;
  record: QueryRecord;
}

export type Direction = 'out' | 'in' | 'both';

export interface AdjacentEdge {
  edge: IndexedEdge;
  /** 'out' when the edge leaves the node asked about, 'in' when it arrives there. */
  direction: 'out' | 'in';
  /** The id at the other end. */
  other: string;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

export class GraphIndex {
  readonly header: QueryHeader;
  /** Every record with an id, in the order of the graph (the exporter's deterministic order). */
  readonly records: readonly QueryRecord[];
  readonly nodes: ReadonlyMap<string, QueryRecord>;
  readonly edges: readonly IndexedEdge[];
  /** Records whose id repeated an earlier record's (ignored). */
  readonly duplicates: number;
  private readonly outAdj = new Map<string, IndexedEdge[]>();
  private readonly inAdj = new Map<string, IndexedEdge[]>();
  private readonly byNameLower = new Map<string, string[]>();
  private readonly byFileMap = new Map<string, string[]>();
  private readonly byModuleMap = new Map<string, string[]>();
  private readonly moduleIdsByPath = new Map<string, string[]>();
  private readonly moduleIdByFile = new Map<string, string>();

  constructor(graph: QueryGraph) {
    this.header = graph.header;
    const nodes = new Map<string, QueryRecord>();
    const edges: IndexedEdge[] = [];
    const seen = new Set<string>();
    let duplicates = 0;
    const kept: QueryRecord[] = [];
    for (const r of graph.records) {
      if (typeof r?.id !== 'string' || typeof r.kind !== 'string') continue;
      if (seen.has(r.id)) {
        duplicates++;
        continue;
      }
      seen.add(r.id);
      kept.push(r);
      if (isEdgeRecord(r)) {
        const e: IndexedEdge = { id: r.id, kind: r.kind, from: r.from!, to: r.to!, record: r };
        if (typeof r.provenance === 'string') e.provenance = r.provenance;
        edges.push(e);
      } else nodes.set(r.id, r);
    }
    this.records = kept;
    this.nodes = nodes;
    this.edges = edges;
    this.duplicates = duplicates;
    for (const e of edges) {
      push(this.outAdj, e.from, e);
      push(this.inAdj, e.to, e);
    }
    const order = (a: IndexedEdge, b: IndexedEdge, end: 'from' | 'to') => byCodePoint(a.kind, b.kind) || byCodePoint(a[end], b[end]) || byCodePoint(a.id, b.id);
    for (const list of this.outAdj.values()) list.sort((a, b) => order(a, b, 'to'));
    for (const list of this.inAdj.values()) list.sort((a, b) => order(a, b, 'from'));

    for (const r of nodes.values()) {
      if (r.kind === 'module') {
        push(this.moduleIdsByPath, nameOf(r), r.id); // several packages may each have a src/index
        const f = fileOf(r);
        if (f && !this.moduleIdByFile.has(f)) this.moduleIdByFile.set(f, r.id);
      }
    }
    for (const r of nodes.values()) {
      const names = new Set<string>([nameOf(r)]);
      const p = declPathOf(r);
      if (p) names.add(p);
      for (const n of names) push(this.byNameLower, n.toLowerCase(), r.id);
      const f = fileOf(r);
      if (f) push(this.byFileMap, f, r.id);
      const m = this.moduleIdOf(r);
      if (m && r.kind !== 'module') push(this.byModuleMap, m, r.id);
    }
    for (const list of [...this.byNameLower.values(), ...this.byFileMap.values(), ...this.byModuleMap.values()]) list.sort(byCodePoint);
  }

  node(id: string): QueryRecord | undefined {
    return this.nodes.get(id);
  }

  /** Edges at a node, optionally only of some kinds and one direction, in the index's fixed order. */
  adjacent(id: string, opts: { kinds?: ReadonlySet<string> | readonly string[]; direction?: Direction } = {}): AdjacentEdge[] {
    const kinds = opts.kinds ? new Set(opts.kinds) : undefined;
    const dir = opts.direction ?? 'both';
    const out: AdjacentEdge[] = [];
    if (dir !== 'in') for (const e of this.outAdj.get(id) ?? []) if (!kinds || kinds.has(e.kind)) out.push({ edge: e, direction: 'out', other: e.to });
    if (dir !== 'out') for (const e of this.inAdj.get(id) ?? []) if (!kinds || kinds.has(e.kind)) out.push({ edge: e, direction: 'in', other: e.from });
    return out;
  }

  degree(id: string): number {
    return (this.outAdj.get(id)?.length ?? 0) + (this.inAdj.get(id)?.length ?? 0);
  }

  /** Node ids whose name (or declaration path) equals `name`, ignoring case. */
  byName(name: string): readonly string[] {
    return this.byNameLower.get(name.toLowerCase()) ?? [];
  }

  /** Every distinct lower-cased name in the index with the ids that carry it. */
  names(): IterableIterator<[string, string[]]> {
    return this.byNameLower.entries();
  }

  /** Node ids located in a file (by span or file field), sorted. */
  inFile(file: string): readonly string[] {
    return this.byFileMap.get(file) ?? [];
  }

  /** Files the graph knows about, sorted. */
  files(): string[] {
    return [...this.byFileMap.keys()].sort(byCodePoint);
  }

  /** Node ids that belong to a module (by its id), sorted. */
  inModule(moduleId: string): readonly string[] {
    return this.byModuleMap.get(moduleId) ?? [];
  }

  /** The module id a record belongs to: its `module` field (an id or a module path), else its file's module. */
  moduleIdOf(r: QueryRecord): string | undefined {
    if (r.kind === 'module') return r.id;
    const ref = moduleRefOf(r);
    if (ref) {
      if (this.nodes.get(ref)?.kind === 'module') return ref;
      const byPath = this.moduleIdsByPath.get(ref);
      if (byPath?.length === 1) return byPath[0];
    }
    const f = fileOf(r);
    return f ? this.moduleIdByFile.get(f) : undefined;
  }

  /** A module by id, file path, or module path when only one package has it. */
  findModule(ref: string): QueryRecord | undefined {
    const direct = this.nodes.get(ref);
    if (direct?.kind === 'module') return direct;
    const byPath = this.moduleIdsByPath.get(ref);
    const id = this.moduleIdByFile.get(ref) ?? (byPath?.length === 1 ? byPath[0] : undefined);
    return id ? this.nodes.get(id) : undefined;
  }

  /** Every node of a kind, in graph order. */
  ofKind(kind: string): QueryRecord[] {
    const out: QueryRecord[] = [];
    for (const r of this.nodes.values()) if (r.kind === kind) out.push(r);
    return out;
  }
}

export function indexGraph(graph: QueryGraph): GraphIndex {
  return new GraphIndex(graph);
}
