/**
 * The executable representation's data model (SPEC §7, RFC 123): what a package's build writes beside
 * its manifest as `kiln.rep`, and what a consumer reads back. The binary layout is format.ts's; this is
 * the decoded shape both sides agree on.
 *
 * Invariants:
 * - `entries` are keyed by surface identity (`@scope/pkg#name`, `@scope/pkg/sub#name`: package, export
 *   subpath, exported name — the manifest's public surface) and sorted by it in code-point order, unique.
 *   Every surface the manifest's entry points export has an entry: covered, or uncovered with a reason.
 * - Aliases, re-exports and facades of one declaration are separate entries with the same `declaring`
 *   identity and the same payload index: a projection never gets a payload of its own.
 * - A payload is a CommonJS module body (what a bundler's `cjs` output writes for one chunk). It reaches
 *   another payload only through `require('./<name>')` with that payload's `name`, and another package
 *   only through `require('<bare specifier>')`, which the consumer resolves. Module-level state that two
 *   exports share lives in one payload both require, evaluated once per consumer context: shared, never
 *   duplicated.
 * - Nothing private is indexed: only surface identities and their declaring identities. Payload code
 *   holds the private helpers a covered export needs, never build-session state or absolute paths.
 */

/** What a consumer must support to run the payloads. */
export interface RepRequirements {
  /** Lowest Node.js version the payloads run on (`major.minor.patch`). */
  node: string;
  /**
   * Capabilities the payloads use beyond the format itself (e.g. `cjs-payloads`); a consumer refuses a
   * representation that requires one it does not know, naming it.
   */
  features: string[];
}

export interface RepHeader {
  /** The representation format version (REPRESENTATION_FORMAT), independent of the manifest's. */
  format: number;
  /** Who wrote it: `@kiln/core <version>`. */
  producer: string;
  /** The package's manifest name and version. */
  package: string;
  version: string;
  requirements: RepRequirements;
}

export type RepCoverage =
  /** Covered: `payload` is the index of the payload whose `module.exports[export]` is the value. */
  | { covered: true; payload: number; export: string }
  /** Uncovered: a reason code of the registry (KILN_REP_UNCOVERED_*) and a line saying what was found. */
  | { covered: false; reason: string; detail: string };

export interface RepEntry {
  /** Surface identity: how consumers reach it (the index key). */
  surface: string;
  /** The declaring declaration's identity (kiln's identity key), shared by aliases and re-exports. */
  declaring: string;
  /** The declaration kind (function, class, const, type, interface, …). */
  kind: string;
  coverage: RepCoverage;
}

export interface RepPayload {
  /** The name other payloads require it by (`./<name>`), unique in the representation. */
  name: string;
  /** The CommonJS module body, UTF-8. */
  code: string;
}

export interface Representation {
  header: RepHeader;
  entries: RepEntry[];
  payloads: RepPayload[];
}
