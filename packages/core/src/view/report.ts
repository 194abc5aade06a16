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
  /** Explanatory: digest of the header (signature/heritage) alone, to tell signature from body changes. */
  header_digest?: string;
  /** Explanatory: meaningful comments inside the declaration (`pure`, `ts-directive:@ts-ignore`, …). */
  meaningful_comments?: string[];
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
}

export interface DigestStats {
  files: number;
  /** Files parsed in this run (store misses). */
  parsed: number;
  storeHits: number;
  corruptEntries: number;
  workers: number;
  bytes: number;
  ms: number;
}

export interface DigestReport {
  kind: 'kiln-digest-report';
  version: number;
  digest_schema: number;
  extractor: number;
  package: string;
  files: FileRecord[];
  declarations: DeclarationRecord[];
  diagnostics: Diagnostic[];
  stats: DigestStats;
}
