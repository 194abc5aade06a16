/**
 * The debug store's records (SPEC §8, RFC 167): what kiln keeps about one emitted JavaScript artifact so
 * that a frame of it can be mapped back to authored source — and to the declaration that contains it —
 * long after the files on disk moved on (a semantic cache hit restores JS built from older text).
 *
 * Layout in the local store (cacache, the same directory as the slice store; keys in store/format.ts),
 * DEBUG_STORE_FORMAT:
 * - `kiln/debug/v<N>/id/<debugId>`   → the record, by the artifact's debug ID;
 * - `kiln/debug/v<N>/js/<sha256>`    → the same record, by the sha256 of the artifact's JS text (a JS
 *   file whose tool wrote no debug ID is still found by content, never by name);
 * - `kiln/debug/v<N>/blob/<sha256>`  → a source map or a retained source text, by the sha256 of its text.
 * A record's index metadata lists the blob keys it names (`{ blobs }`): gc keeps them without parsing it.
 * Every read is integrity-checked by cacache (sha512) and the text's sha256 is checked against its key.
 *
 * Invariants: a record holds no absolute path — the artifact and its sources are named relative to the
 * package root of the package that built them, and the package by name, so a copy of the package at
 * another path (node_modules, an installed tarball, another clone) finds the same record through its
 * debug ID. The declaration index is computed from the retained source text itself (the text the
 * artifact was built from), with the same extractor and identities as the build's key.
 */
import { posix, sep } from 'node:path';
import type { DeclKind, Span } from '../facts/slice.js';
import { DEBUG_STORE_FORMAT } from '../version.js';

/** One declaration of a retained source: its identity and where it was in that text. */
export interface DebugDecl {
  identity: string;
  /** Declaration path inside the module (`Cache.get`), with the slice's discriminants. */
  path: string;
  kind: DeclKind;
  /** The declaration's own semantic digest (the slice's, before imports are resolved); null when unknown. */
  semantic: string | null;
  span: Span;
}

/** A source the artifact was built from, retained in the store. */
export interface DebugSource {
  /** POSIX path relative to the package root (may climb out of it with `..`). */
  path: string;
  /** sha256 of the retained text (its blob key). */
  sha256: string;
  /** Declarations of the retained text, in document order. */
  decls: DebugDecl[];
}

export interface DebugRecord {
  format: number;
  /** The artifact's debug ID, or null when its tool wrote none (then it is found by `js` only). */
  debugId: string | null;
  /** sha256 of the JS text. */
  js: string;
  /** The package that built it (package.json `name`), and the JS file's path relative to its root. */
  package: string;
  artifact: string;
  /** sha256 of the source map text (its blob key). */
  map: string;
  /** Parallel to the map's `sources`: the retained source, or null when the map carries no text for it. */
  sources: (DebugSource | null)[];
}

export { DEBUG_KEY_PREFIX, debugBlobKey, debugIdKey, debugJsKey, isCurrentDebugKey } from '../store/format.js';

/** A platform path with POSIX separators (every path a record holds is POSIX). */
export const toPosix = (p: string): string => p.split(sep).join('/');

/**
 * The package-relative path of a map's source: `source` resolved against the map's directory
 * (`mapDir`, package-relative) and the map's `sourceRoot`. Undefined for a URL or absolute source.
 */
export function packageRelativeSource(mapDir: string, sourceRoot: string | undefined, source: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(source) && !source.startsWith('webpack:')) return undefined;
  const s = source.replace(/^webpack:\/\/[^/]*\//, '');
  if (posix.isAbsolute(s) || /^[A-Za-z]:[\\/]/.test(s)) return undefined;
  const root = sourceRoot && !/^[a-z][a-z0-9+.-]*:/i.test(sourceRoot) && !posix.isAbsolute(sourceRoot) ? sourceRoot : '';
  return posix.normalize(posix.join(mapDir || '.', root, s.split('\\').join('/')));
}

/** Whether a parsed JSON value is a record of the current format (shape-checked, not trusted). */
export function isDebugRecord(v: unknown): v is DebugRecord {
  const r = v as DebugRecord;
  return (
    !!r &&
    typeof r === 'object' &&
    r.format === DEBUG_STORE_FORMAT &&
    (r.debugId === null || typeof r.debugId === 'string') &&
    typeof r.js === 'string' &&
    typeof r.package === 'string' &&
    typeof r.artifact === 'string' &&
    typeof r.map === 'string' &&
    Array.isArray(r.sources) &&
    r.sources.every((s) => s === null || (typeof s.path === 'string' && typeof s.sha256 === 'string' && Array.isArray(s.decls)))
  );
}
