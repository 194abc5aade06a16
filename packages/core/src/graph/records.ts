/**
 * Codegraph records (SPEC §6, issue 4): the JSONL wire shapes of `kiln graph export`, their ids, the
 * provenance tiers, the canonical record order and the serializer. The JSON Schema in
 * schema/codegraph.schema.json is the normative form of these types; graph-schema tests keep the two
 * in step.
 *
 * Invariants:
 * - Every record has `kind`, `id`, `language`, `provenance`, `degraded`; a record with a source
 *   location has a `span` whose `file` is relative to the package root (POSIX), never absolute.
 * - Node ids are kiln's span-free identities: declarations `language:package//module#path:kind`
 *   (identity/identity.ts), modules `language:package//module`, files `file:package//path`, packages
 *   `package:name`, namespaces `namespace:package[/subpath]`, imports/exports
 *   `<module id>#import:<specifier>` / `<module id>#export:<name>`, reference and call sites
 *   `reference:<in>-><target>#<n>` / `call:<in>-><target>#<n>` (n dense per pair, in source order).
 *   Only diagnostics carry a location in their id: a diagnostic is anchored to an occurrence.
 * - Edge ids are `${kind}:${from}->${to}@${provenance}`; at most one edge per (kind, from, to,
 *   provenance): repeated sites fold into its `count`.
 * - A document is the header line, then nodes, then edges, each group ordered by kind (the order of
 *   NODE_KINDS / EDGE_KINDS) and id (code-point order). Serialization is `JSON.stringify` of objects
 *   built with a fixed key order, one per line, `\n`-terminated: the same records give the same bytes.
 */
import { digestParts } from '../digest/hash.js';
import type { DeclKind } from '../facts/slice.js';
import type { Language, Variant } from '../parse/language.js';
import type { Severity } from '../diagnostics/codes.js';

/**
 * How far a fact can be trusted, best first:
 * - `compiler_checked`: from source the TypeScript checker checked without errors (the whole program
 *   type-checks), or resolved by that checker;
 * - `compiler_unchecked`: the checker resolved it, or it comes from an error-free file, but the program
 *   as a whole has errors (tolerant mode), so a type flowing in from a broken module may have made a
 *   resolution wrong or missing;
 * - `syntax_inferred`: from the syntax alone (a file with errors, a file no tsconfig includes, no
 *   program at all), including kiln's own resolution of relative and workspace imports;
 * - `manifest_declared`: from package.json, tsconfig (`paths`, `references`) or project.json.
 */
export type Provenance = 'compiler_checked' | 'compiler_unchecked' | 'syntax_inferred' | 'manifest_declared';
export const PROVENANCE_TIERS: readonly Provenance[] = ['compiler_checked', 'compiler_unchecked', 'syntax_inferred', 'manifest_declared'];

/** Source languages, plus `json` for facts read from manifests (package.json, tsconfig, project.json). */
export type GraphLanguage = Language | 'json';

export type GraphMode = 'checked' | 'allow-errors';

export const NODE_KINDS = ['package', 'namespace', 'file', 'module', 'declaration', 'import', 'export', 'reference', 'call', 'diagnostic'] as const;
export const EDGE_KINDS = ['contains', 'defines', 'imports', 'exports', 'references', 'calls', 'documents', 'diagnoses'] as const;
export type NodeKind = (typeof NODE_KINDS)[number];
export type EdgeKind = (typeof EDGE_KINDS)[number];
export type KnownKind = 'header' | NodeKind | EdgeKind;
export const KNOWN_KINDS: readonly KnownKind[] = ['header', ...NODE_KINDS, ...EDGE_KINDS];

export function isKnownKind(kind: string): kind is KnownKind {
  return (KNOWN_KINDS as readonly string[]).includes(kind);
}
export function isEdgeKind(kind: string): kind is EdgeKind {
  return (EDGE_KINDS as readonly string[]).includes(kind);
}

/** A source location: 1-based lines and columns (UTF-16 code units), file relative to the package root. */
export interface GraphSpan {
  file: string;
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

interface RecordBase {
  id: string;
  language: GraphLanguage;
  provenance: Provenance;
  /** The fact is partial: see `degraded_reason`. */
  degraded: boolean;
  degraded_reason?: string;
  span?: GraphSpan;
}

export interface HeaderRecord extends RecordBase {
  kind: 'header';
  format: 'kiln-codegraph';
  schema_version: number;
  mode: GraphMode;
  /** Always `.`: every path in the document is relative to the exported package's root. */
  root: '.';
  package: string;
  languages: GraphLanguage[];
  toolchain: { kiln_extractor: number; digest_schema: number; typescript: string };
  /** The tsconfig the program was built from (relative), or null when none was used. */
  tsconfig: string | null;
  /** Digest of the sorted (path, content hash) list of every source file and manifest read. */
  snapshot: { id: string; files: number };
  counts: { nodes: number; edges: number };
}

export interface PackageNode extends RecordBase {
  kind: 'package';
  name: string;
  /** Manifests read (package.json, the tsconfig chain, project.json), with their content hashes. */
  manifests: { path: string; content_hash: string }[];
  /** package.json dependencies by name and section (`dependencies`, `devDependencies`, …). */
  dependencies: { name: string; section: string }[];
  /** package.json entry points (`.`, `./server`). */
  entries: string[];
  tsconfig: { file: string; paths: Record<string, string[]>; references: string[] } | null;
  project: { name: string | null; tags: string[]; implicit_dependencies: string[] } | null;
}

export interface NamespaceNode extends RecordBase {
  kind: 'namespace';
  package: string;
  /** The package.json entry subpath (`.`, `./server`): where a consumer reaches declarations. */
  entry: string;
  /** The module the entry resolves to, or null when the manifest names a file not in the tree. */
  module: string | null;
  names: string[];
}

export interface FileNode extends RecordBase {
  kind: 'file';
  package: string;
  path: string;
  variant: Variant;
  content_hash: string;
  module: string;
}

export interface ModuleNode extends RecordBase {
  kind: 'module';
  package: string;
  /** Logical module path: relative to the package root, no extension. */
  module_path: string;
  file: string;
  /** Evaluation-order digest of the module (SPEC §3). */
  module_digest: string;
  /** Namespaces (entry points) through which some declaration of this module is reachable. */
  namespaces: string[];
  /** No entry point reaches any of its declarations: a detail of the package. */
  internal: boolean;
}

export interface DeclarationNode extends RecordBase {
  kind: 'declaration';
  package: string;
  /** Module id. */
  module: string;
  module_path: string;
  path: string;
  name: string;
  decl_kind: DeclKind;
  /** Enclosing declaration id, or null at module level. */
  parent: string | null;
  semantic_digest: string | null;
  doc_digest: string | null;
  digest_schema: number;
  header_digest: string | null;
  /** Surface identities (`pkg#name`, `pkg/sub#name`) that reach it. */
  surface: string[];
  /** Names its own module exports it under. */
  exported_as: string[];
  span: GraphSpan;
}

export type ImportForm = 'dynamic' | 'import' | 're-export';

export interface ImportNode extends RecordBase {
  kind: 'import';
  package: string;
  module: string;
  specifier: string;
  forms: ImportForm[];
  /** Every form is type-only (`import type`, `export type … from`). */
  type_only: boolean;
  bindings: { imported: string; local: string; type_only: boolean }[];
  reexports: { imported: string; exported: string }[];
  reexport_all: boolean;
  /** Module id (this or another package) or `package:<name>`, or null when unresolved. */
  target: string | null;
  /** The target is a package outside the workspace. */
  external: boolean;
  /** Who resolved it: the TypeScript compiler's module resolution, kiln's own, or nobody. */
  resolved_by: 'compiler' | 'kiln' | 'none';
}

export interface ExportNode extends RecordBase {
  kind: 'export';
  package: string;
  module: string;
  name: string;
  /** Declarations it names (through local exports and re-export chains inside the package). */
  targets: string[];
  /** Packages it is re-exported from. */
  external: string[];
}

export interface SiteNode extends RecordBase {
  kind: 'reference' | 'call';
  package: string;
  /** The innermost declaration containing the site, or the module for top-level code. */
  in: string;
  /** The declaration it resolves to (this or another workspace package). */
  target: string;
  /** The name as written at the site. */
  name: string;
  span: GraphSpan;
}
export interface ReferenceNode extends SiteNode {
  kind: 'reference';
  /** Written in a type position. */
  type_position: boolean;
}
export interface CallNode extends SiteNode {
  kind: 'call';
  form: 'call' | 'new' | 'tagged-template' | 'decorator';
}

export interface DiagnosticNode extends RecordBase {
  kind: 'diagnostic';
  package: string;
  code: string;
  /** The TypeScript compiler's own code (`TS2322`) when it came from the compiler. */
  ts_code: string | null;
  severity: Severity;
  message: string;
  hint: string;
  producer: string;
  /** Relative path of the file it is about, or null when it has no location. */
  file: string | null;
}

interface EdgeBase extends RecordBase {
  from: string;
  to: string;
}
export interface ContainsEdge extends EdgeBase {
  kind: 'contains';
}
export interface DefinesEdge extends EdgeBase {
  kind: 'defines';
}
export interface ImportsEdge extends EdgeBase {
  kind: 'imports';
  /** Module imports: the specifiers; package imports: how it is declared (`dependencies`, `tsconfig-reference`, …). */
  via: string[];
  type_only: boolean;
}
export interface ExportsEdge extends EdgeBase {
  kind: 'exports';
  names: string[];
}
export interface ReferencesEdge extends EdgeBase {
  kind: 'references';
  count: number;
  type_only: boolean;
}
export interface CallsEdge extends EdgeBase {
  kind: 'calls';
  count: number;
}
export interface DocumentsEdge extends EdgeBase {
  kind: 'documents';
  count: number;
}
export interface DiagnosesEdge extends EdgeBase {
  kind: 'diagnoses';
}

export type GraphNode =
  | PackageNode
  | NamespaceNode
  | FileNode
  | ModuleNode
  | DeclarationNode
  | ImportNode
  | ExportNode
  | ReferenceNode
  | CallNode
  | DiagnosticNode;
export type GraphEdge = ContainsEdge | DefinesEdge | ImportsEdge | ExportsEdge | ReferencesEdge | CallsEdge | DocumentsEdge | DiagnosesEdge;
export type KnownRecord = HeaderRecord | GraphNode | GraphEdge;

/** A record of a kind this kiln does not know: kept as read, written back byte for byte. */
export interface OpaqueRecord {
  kind: string;
  id?: string;
  [field: string]: unknown;
}

export type GraphRecord = KnownRecord | OpaqueRecord;

// ------------------------------------------------------------------ ids

export const packageId = (name: string) => `package:${name}`;
export const fileId = (pkg: string, path: string) => `file:${pkg}//${path}`;
export const moduleId = (language: Language, pkg: string, modulePath: string) => `${language}:${pkg}//${modulePath}`;
export const namespaceId = (pkg: string, entry: string) => `namespace:${pkg}${entry === '.' ? '' : entry.slice(1)}`;
export const importId = (module: string, specifier: string) => `${module}#import:${specifier}`;
export const exportId = (module: string, name: string) => `${module}#export:${name}`;
export const edgeId = (kind: EdgeKind | string, from: string, to: string, provenance: Provenance | string) => `${kind}:${from}->${to}@${provenance}`;

/** Snapshot identity: a digest of the sorted (path, content hash) list. */
export function snapshotId(entries: { path: string; content_hash: string }[]): string {
  const sorted = [...entries].sort((a, b) => codePointCompare(a.path, b.path) || codePointCompare(a.content_hash, b.content_hash));
  return digestParts('kiln-graph-snapshot/1', sorted.flatMap((e) => [e.path, e.content_hash]));
}

// ------------------------------------------------------------------ order and serialization

export function codePointCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const RANK = new Map<string, number>(KNOWN_KINDS.map((k, i) => [k, i]));
const rankOf = (kind: string) => RANK.get(kind) ?? KNOWN_KINDS.length;

/** The canonical order of two records with ids (sortRecords): kind, then id. */
export function compareRecords(a: { kind: string; id: string }, b: { kind: string; id: string }): number {
  return rankOf(a.kind) - rankOf(b.kind) || codePointCompare(a.kind, b.kind) || codePointCompare(a.id, b.id);
}

/**
 * Canonical order: header, nodes, edges, then unknown kinds; each group by kind then id. Stable for
 * records without ids (unknown kinds keep their relative order).
 */
export function sortRecords<T extends { kind: string; id?: unknown }>(records: T[]): T[] {
  // Bucket by kind (known kinds in their order, then unknown kinds by name), then sort each bucket by
  // id; Array.prototype.sort is stable, so records with equal ids keep their relative order.
  const buckets = new Map<string, T[]>();
  for (const r of records) {
    const b = buckets.get(r.kind);
    if (b) b.push(r);
    else buckets.set(r.kind, [r]);
  }
  const kinds = [...buckets.keys()].sort((a, b) => rankOf(a) - rankOf(b) || codePointCompare(a, b));
  const idOf = (r: T) => (typeof r.id === 'string' ? r.id : '');
  const out: T[] = [];
  for (const k of kinds) {
    const b = buckets.get(k)!;
    b.sort((x, y) => codePointCompare(idOf(x), idOf(y)));
    for (const r of b) out.push(r);
  }
  return out;
}

/** One record per line, `\n`-terminated. */
export function formatGraph(records: readonly GraphRecord[]): string {
  if (!records.length) return '';
  const lines = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) lines[i] = JSON.stringify(records[i]);
  return `${lines.join('\n')}\n`;
}
