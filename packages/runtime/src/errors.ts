/**
 * The representation's refusals as data (SPEC §7, §8): a function builds the record (code, message,
 * hint, and the package/version/requirement it concerns when known), then `RepError` carries it.
 *
 * Invariants:
 * - Every code here is registered in @kiln/core's one registry (packages/core/src/diagnostics/codes.ts)
 *   with the same hint; the runtime cannot import core (it depends on Node built-ins only), so the hints
 *   are repeated here and a test holds the two equal.
 * - The per-reason codes of uncovered entries (KILN_REP_UNCOVERED_<REASON>) are the producer's; this
 *   module only names them in a record's `reason`.
 */

/** Code → hint. Alphabetical, as the registry. */
export const REP_HINTS = {
  KILN_REP_CORRUPT: 'Rebuild and republish the package; a representation is only ever written whole by its build, so a damaged copy is not repairable in place.',
  KILN_REP_INTEGRITY: 'Reinstall the package (the copy on disk was altered after it was written); if a fresh install fails the same way, the package must be rebuilt and republished.',
  KILN_REP_INVALID: 'This is a bug in the producer of the representation (kiln\'s build); report it with the package that triggered it.',
  KILN_REP_NOT_A_REPRESENTATION: 'Point the consumer at the kiln.rep file beside the built JavaScript of the package\'s main entry (`representationPath`); a package built without kiln has none.',
  KILN_REP_NOT_CALLABLE: 'Read the export\'s value instead of calling it (`load()`; `kiln call <pkg>#<export>` with no --args prints it), or call a function export; a class export is constructed (`construct()`; `kiln call` does it for you).',
  KILN_REP_NOT_FOUND: 'Build the package with kiln (its build writes kiln.rep beside the built JavaScript of the main entry), or run `kiln represent <package dir>` after the package\'s own build tool; or install a version published with one. A route that does not need a representation can import the package instead.',
  KILN_REP_NO_SUCH_EXPORT: 'Check the surface identity (`pkg#name`, `pkg/subpath#name`) against the package\'s exports; `kiln inspect representation <pkg>` lists every indexed entry.',
  KILN_REP_PAYLOAD_FAILED: 'The error the payload code threw is attached as the cause; importing the built package directly shows whether the package itself fails the same way.',
  KILN_REP_REQUIREMENT_UNMET: 'Upgrade Node.js or @kiln/runtime to one that meets the named requirement, or use a version of the package whose representation this consumer supports.',
  KILN_REP_UNCOVERED: 'The entry\'s reason code says why the build could not cover it; import the package on a route that does not need a representation, or change the export so it can be covered.',
  KILN_REP_UNREADABLE: 'Check that the path is a readable file (permissions, not a directory).',
  KILN_REP_UNSUPPORTED_VERSION: 'Install a @kiln/runtime that reads this format version, or a version of the package built by a kiln whose format this runtime reads; the package itself stays usable on routes that do not need a representation.',
} as const;

export type RepErrorCode = keyof typeof REP_HINTS;

export interface RepErrorRecord {
  code: RepErrorCode;
  message: string;
  hint: string;
  /** The package and version concerned, when they could be read. */
  package?: string;
  version?: string;
  /** The requirement that was not met (a format version, `node >=x.y.z`, a feature, a surface). */
  requirement?: string;
  /** For KILN_REP_UNCOVERED: the entry's reason code (KILN_REP_UNCOVERED_*) and detail. */
  reason?: string;
  detail?: string;
}

export interface RepSubject {
  package?: string | undefined;
  version?: string | undefined;
  requirement?: string | undefined;
  reason?: string | undefined;
  detail?: string | undefined;
}

/** The record of a refusal; `subject` fields that are undefined are left out (never invented). */
export function repErrorRecord(code: RepErrorCode, message: string, subject: RepSubject = {}): RepErrorRecord {
  const rec: RepErrorRecord = { code, message, hint: REP_HINTS[code] };
  if (subject.package !== undefined) rec.package = subject.package;
  if (subject.version !== undefined) rec.version = subject.version;
  if (subject.requirement !== undefined) rec.requirement = subject.requirement;
  if (subject.reason !== undefined) rec.reason = subject.reason;
  if (subject.detail !== undefined) rec.detail = subject.detail;
  return rec;
}

export class RepError extends Error {
  readonly code: RepErrorCode;
  readonly hint: string;
  readonly package: string | undefined;
  readonly version: string | undefined;
  readonly requirement: string | undefined;
  readonly record: RepErrorRecord;
  constructor(record: RepErrorRecord, options?: { cause?: unknown }) {
    super(`${record.code}: ${record.message}`, options);
    this.name = 'RepError';
    this.code = record.code;
    this.hint = record.hint;
    this.package = record.package;
    this.version = record.version;
    this.requirement = record.requirement;
    this.record = record;
  }
  toJSON(): RepErrorRecord {
    return this.record;
  }
}

/** Builds the record and returns the error to throw (`throw repError(...)`). */
export function repError(code: RepErrorCode, message: string, subject?: RepSubject, cause?: unknown): RepError {
  return new RepError(repErrorRecord(code, message, subject), cause === undefined ? undefined : { cause });
}

export function isRepError(e: unknown): e is RepError {
  return e instanceof RepError;
}
