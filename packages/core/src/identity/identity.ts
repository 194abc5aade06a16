/**
 * Declaration identity (SPEC §2): language, package name (never the version), logical module path,
 * declaration path, kind — and, inside the path, a signature digest or dense ordinal only where
 * siblings share a name. No span, offset or traversal counter ever enters it.
 */
import type { DeclKind } from '../facts/slice.js';
import type { Language } from '../parse/language.js';

export interface Identity {
  language: Language;
  package: string;
  module: string;
  path: string;
  kind: DeclKind;
}

/** The canonical string form: stable, unambiguous, used as the key everywhere. */
export function identityKey(id: Identity): string {
  return `${id.language}:${id.package}//${id.module}#${id.path}:${id.kind}`;
}

/** Where a declaration lives: its module's language, package name and logical module path. */
export interface DeclarationPlace {
  language: Language;
  package: string;
  module: string;
}

/** The identity key of a slice's declaration (its path and kind) at its place: the one way to assemble it. */
export function declarationIdentity(place: DeclarationPlace, decl: { path: string; kind: DeclKind }): string {
  return identityKey({ language: place.language, package: place.package, module: place.module, path: decl.path, kind: decl.kind });
}

/** A surface identity: how consumers reach a declaration — package, export subpath, exported name. */
export interface SurfaceIdentity {
  package: string;
  /** `.` or `./sub` as in package.json `exports`. */
  entry: string;
  name: string;
}

export function surfaceKey(s: SurfaceIdentity): string {
  return `${s.package}${s.entry === '.' ? '' : s.entry.slice(1)}#${s.name}`;
}
