/**
 * A slice: the facts of one file's *content*. It is a pure function of (content, variant, extractor
 * version, digest schema) — it must not depend on the file's path, on any other file, or on the
 * machine — so the store can share it across worktrees and clones. Paths and packages are attached
 * only when slices are assembled into a view (see view/).
 */
import type { Language, Variant } from '../parse/language.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';

export interface Span {
  /** 1-based line and column of the first token, and of the end. Provenance only: never in a digest. */
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
}

/** Declaration kinds. Language-neutral names; `static-` marks static class members. */
export type DeclKind =
  | 'function'
  | 'class'
  | 'interface'
  | 'type'
  | 'enum'
  | 'const-enum'
  | 'namespace'
  | 'variable'
  | 'export-default'
  | 'export-equals'
  | 'method'
  | 'static-method'
  | 'property'
  | 'static-property'
  | 'getter'
  | 'static-getter'
  | 'setter'
  | 'static-setter'
  | 'constructor'
  | 'index-signature'
  | 'static-block';

export interface DeclFact {
  /** Declaration path inside the module, e.g. `Cache.get` or `outer.helper`. */
  path: string;
  /** The declared name alone (last path segment without discriminants). */
  name: string;
  kind: DeclKind;
  /** Signature digest (short hex), present only when needed to separate overloads/merged declarations. */
  sig?: string;
  /** Dense 1-based discriminant among same-named siblings in one enclosing declaration, only when needed. */
  ordinal?: number;
  /** Index of the enclosing declaration in `decls`, or -1 at module level. */
  parent: number;
  /** Semantic digest (hex), or null when it cannot be computed (then the declaration counts as changed). */
  semantic: string | null;
  /** Digest of the documentation (JSDoc), or null when the declaration has none. */
  doc: string | null;
  /**
   * Digest of the declaration's header alone (modifiers, type parameters, parameters, return type,
   * heritage), so a reader can tell a signature change from a body change. Explanatory only: the
   * semantic digest covers it too.
   */
  signature?: string;
  /**
   * Imports this declaration (or a nested one) uses, as `specifier\u0000importedName`, sorted. The
   * view folds their *resolved* targets into the reported semantic digest, so the digest follows what
   * an import means, not how its path is spelled from this file.
   */
  uses?: string[];
  /**
   * Module-level declarations only. `shape`: digest of what a consumer of the module can observe of
   * it (see digest/shape.ts `emitShape`): the signature when its type is written down, everything when
   * it is inferred. `shapeRefs`: module-level names and imported bindings that shape mentions;
   * `refs`: those the whole declaration mentions (names, resolved when the view is assembled).
   */
  shape?: string;
  shapeRefs?: string[];
  refs?: string[];
  /** Meaningful comments inside this declaration (values), for explaining why its digest moved. */
  comments?: string[];
  /** Why the semantic digest could not be computed. */
  degraded?: 'syntax-error' | 'too-deep';
  /** Names this declaration is exported under from its module (`default` for a default export). */
  exportedAs?: string[];
  /** Whether its type is inferred from its body (an unannotated exported const/function result). */
  span: Span;
}

export interface ImportFact {
  specifier: string;
  typeOnly: boolean;
  /** Binding names: `default`, `*` (namespace), or the imported name; `local` is the local alias. */
  bindings: { imported: string; local: string; typeOnly: boolean }[];
}

export interface ReExportFact {
  specifier: string;
  typeOnly: boolean;
  /** `*` for `export * from`, otherwise each name: imported (or `*` for `export * as ns`) → exported. */
  names: { imported: string; exported: string }[] | '*';
}

export interface LocalExportFact {
  /** The exported name. */
  exported: string;
  /** The local binding it refers to (a declaration path or an imported local name). */
  local: string;
}

export interface ModuleFact {
  /**
   * Digest of what running the module observably does apart from its declarations' own contents:
   * the evaluation order of effectful top-level statements, the digests of top-level statements that
   * are not declarations, and file-level pragmas. Reordering hoisted declarations does not move it.
   */
  digest: string;
  /** Evaluation order, as a list of readable entries (declaration paths or `stmt:<digest8>`). */
  order: string[];
  /** Statements whose position is unobservable (hoisted, type-only), sorted. */
  hoisted: string[];
  /** File-level meaningful comments (`/// <reference>`, `@ts-nocheck`, `@jsx…`, leading legal comments). */
  pragmas: string[];
  /**
   * Digest of the JSDoc on top-level statements that are not declarations (`export * from`, export
   * lists, imports — a file header before them), anchored to each statement; absent when there is
   * none. Documentation, not meaning: kept out of `digest`, but a `.d.ts` carries it.
   */
  docs?: string;
  degraded?: 'syntax-error' | 'too-deep' | 'unreadable';
}

export interface SliceDiagnostic {
  code: DiagnosticCode;
  message: string;
  line?: number;
  column?: number;
}

export interface Slice {
  extractor: number;
  digestSchema: number;
  language: Language;
  variant: Variant;
  /** sha256 of the file bytes (hex). */
  contentHash: string;
  module: ModuleFact;
  decls: DeclFact[];
  imports: ImportFact[];
  reexports: ReExportFact[];
  exports: LocalExportFact[];
  /** Specifiers of dynamic imports, `require` calls and import types, sorted. */
  dynamicImports: string[];
  /**
   * Of those, the ones named only by `require()` calls, sorted; absent when none. In a TypeScript file
   * the compiler does not follow a plain `require()` (its result is not typed from the module), so what
   * it names cannot reach the file's types or a consumer's.
   */
  requireOnly?: string[];
  diagnostics: SliceDiagnostic[];
}
