/**
 * The code graph as the query layer reads it: one header and a list of records (the JSONL that
 * `exportGraph` writes, or a file `kiln graph export` wrote), and accessors that name the record
 * contract's fields in one place (packages/core/src/graph/schema/codegraph.schema.json is the contract;
 * every other query/context module reads fields through here, never by ad-hoc property names).
 *
 * Invariants:
 * - Pure: no I/O, nothing at import time; records are never mutated.
 * - A record whose `from` and `to` are strings is an edge, whatever its kind; every other record with an
 *   `id` is a node. Kinds this layer does not know stay in the graph as opaque nodes or edges.
 * - Edges may dangle (their target is outside the graph, or unresolved): they are kept, never dropped.
 */
import type { GraphSpan } from '../records.js';

export type { GraphSpan };

/** Node kinds that stand for a place in code rather than a thing: a use site, an import or export clause. */
export const SITE_KINDS: ReadonlySet<string> = new Set(['import', 'export', 'reference', 'call']);

export interface QueryHeader {
  kind: 'header';
  schema_version: number | string;
  toolchain?: unknown;
  mode?: string;
  root?: string;
  languages?: string[];
  snapshot?: { id?: string; files?: unknown; [k: string]: unknown };
  [k: string]: unknown;
}

export interface QueryRecord {
  kind: string;
  id: string;
  language?: string;
  provenance?: string;
  degraded?: boolean;
  span?: GraphSpan;
  from?: string;
  to?: string;
  [k: string]: unknown;
}

export interface QueryGraph {
  header: QueryHeader;
  records: QueryRecord[];
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

export function isEdgeRecord(r: QueryRecord): boolean {
  return typeof r.from === 'string' && typeof r.to === 'string';
}

/** The snapshot identity the header states ('' when it states none). */
export function snapshotIdOf(h: QueryHeader): string {
  return str(h.snapshot?.id) ?? '';
}

/** A declaration's path inside its module (`Cache.get`), when the record is a declaration. */
export function declPathOf(r: QueryRecord): string | undefined {
  return r.kind === 'declaration' ? str(r.path) ?? str(r.name) : undefined;
}

/** The declaration kind (`function`, `class`, `method`…), when the record is a declaration. */
export function declKindOf(r: QueryRecord): string | undefined {
  return str(r.decl_kind);
}

/**
 * The short name a person would type for the record: a declaration's own name (last path segment), a
 * module's or file's path, a package's name, a diagnostic's code, an import's specifier.
 */
export function nameOf(r: QueryRecord): string {
  switch (r.kind) {
    case 'declaration': {
      const n = str(r.name);
      if (n && !n.includes('.')) return n;
      const p = declPathOf(r) ?? '';
      return p.slice(p.lastIndexOf('.') + 1) || p;
    }
    case 'module':
      return str(r.module_path) ?? str(r.path) ?? r.id;
    case 'namespace': {
      // `@pkg` for the main entry, `@pkg/sub` for `./sub`
      const pkg = str(r.package) ?? '';
      const entry = str(r.entry);
      return entry === undefined ? str(r.name) ?? r.id : entry === '.' ? pkg : `${pkg}${entry.slice(1)}`;
    }
    case 'file':
      return str(r.path) ?? r.id;
    case 'package':
      return str(r.name) ?? r.id;
    case 'diagnostic':
      return str(r.code) ?? r.id;
    case 'import':
    case 'export':
      return str(r.name) ?? str(r.specifier) ?? r.id;
    default:
      return str(r.name) ?? str(r.path) ?? r.id;
  }
}

/** The file a record is about (the span's file, a file record's path, a module's file). */
export function fileOf(r: QueryRecord): string | undefined {
  return r.span?.file ?? str(r.file) ?? (r.kind === 'file' ? str(r.path) : undefined);
}

/** The module a record belongs to, as its record states it (a module path or a module id). */
export function moduleRefOf(r: QueryRecord): string | undefined {
  if (r.kind === 'module') return r.id;
  return str(r.module);
}

export function packageRefOf(r: QueryRecord): string | undefined {
  return r.kind === 'package' ? str(r.name) ?? r.id : str(r.package);
}

/** Exported surfaces (`@pkg#name`) that reach a declaration; empty when it is private. */
export function surfacesOf(r: QueryRecord): string[] {
  for (const key of ['surfaces', 'surface', 'exported_surfaces']) {
    const v = r[key];
    if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  }
  return [];
}

/** Whether a consumer of the package can reach the declaration (public API). */
export function isPublic(r: QueryRecord): boolean {
  return surfacesOf(r).length > 0 || r.exported === true;
}

/** Documentation text carried by the record, when the export includes it. */
export function docTextOf(r: QueryRecord): string | undefined {
  return str(r.doc) ?? str(r.doc_text) ?? str(r.documentation);
}

/** A `file:start-end` anchor an agent can open; undefined for records without a span. */
export function anchorOf(r: QueryRecord): string | undefined {
  const s = r.span;
  if (!s) return fileOf(r);
  return s.startLine === s.endLine ? `${s.file}:${s.startLine}` : `${s.file}:${s.startLine}-${s.endLine}`;
}

/** Code-point order: the one tie-breaker every query and pack uses (never locale-dependent). */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
