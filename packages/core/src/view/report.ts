/**
 * The digest report: everything `kiln digest` knows about one package tree, as data. JSON output is
 * this object; text output is a projection of it. No absolute path appears anywhere in it.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { DeclKind, ModuleFact, Span } from '../facts/slice.js';
import type { Language, Variant } from '../parse/language.js';

export interface DeclarationRecord {
  identity: string;
  language: Language;
  package: string;
  module: string;
  path: string;
  kind: DeclKind;
  semantic_digest: string | null;
  doc_digest: string | null;
  digest_schema: number;
  degraded?: string;
  /** Declared at module level (not nested in another declaration). */
  module_level?: boolean;
  /** Explanatory: digest of the header (signature/heritage) alone, to tell signature from body changes. */
  header_digest?: string;
  /** Explanatory: meaningful comments inside the declaration (`pure`, `ts-directive:@ts-ignore`, …). */
  meaningful_comments?: string[];
  /**
   * Module-level declarations: digest of what a consumer observes (signature if written down,
   * everything if inferred), and what that shape and the whole declaration mention — identities in
   * this package, `ext:<package>`, or `unresolved:<module>`. The two lists are absent from a report
   * assembled without closures (digestTree `closures: false`).
   */
  shape_digest?: string;
  shape_refs?: string[];
  refs?: string[];
  /** Surface identities (package + export subpath + exported name) that reach this declaration. */
  surface: string[];
  /** Provenance only: where it is now. Never part of identity or digest. */
  span: Span & { file: string };
}

export interface FileRecord {
  path: string;
  language: Language;
  variant: Variant;
  content_hash: string;
  module: ModuleFact & { identity: string };
  /** Packages this file reads (static, dynamic and type imports, re-exports, `/// <reference types>`). */
  external_packages: string[];
  /** Non-source files it imports by relative path (`./data.json`), package-relative. */
  asset_imports: string[];
  /** Of `asset_imports`, those a TypeScript file names only in `require()` calls (not followed for types). */
  asset_requires?: string[];
  /** Every module specifier it names (imports, re-exports, `import()`, `require()`, import types), sorted. */
  specifiers?: string[];
  /**
   * It has no import, re-export or export: it may be a script, whose top-level declarations are
   * global — a consumer that reaches the file sees them without importing anything.
   */
  script?: boolean;
}

/** One public entry point of the package (`exports` subpath, or `.` from main/types). */
export interface EntryRecord {
  subpath: string;
  /** Names importable from it. */
  names: string[];
  /** Packages it re-exports from (wholly or by name). */
  external: string[];
  /** Relative re-exports that name no file of the package. */
  unresolved: string[];
  /** The manifest names it, but its target is not a source of the tree. */
  missing?: boolean;
}

export interface DigestStats {
  files: number;
  /** Files parsed in this run (store misses). */
  parsed: number;
  storeHits: number;
  corruptEntries: number;
  workers: number;
  /** Bytes read (files git vouched for are not read). */
  bytes: number;
  ms: number;
  /**
   * How the file list and content hashes were reconciled: from git's status and index, by listing and
   * hashing, or from a git tree object (`tree`: another state, read without a checkout).
   */
  sync?: 'git' | 'scan' | 'tree';
  /** Files whose content hash came from the view's manifest on git's word, unread (view/git-state.ts). */
  vouched?: number;
}

export interface DigestReport {
  kind: 'kiln-digest-report';
  version: number;
  digest_schema: number;
  extractor: number;
  package: string;
  entries: EntryRecord[];
  files: FileRecord[];
  declarations: DeclarationRecord[];
  diagnostics: Diagnostic[];
  stats: DigestStats;
}
