/**
 * Reading a codegraph JSONL document: `readGraph(text)` parses every line, checks the header's schema
 * version, validates records of known kinds against the schema, and keeps records of unknown kinds as
 * opaque records. `writeGraph(doc)` gives the text back.
 *
 * Invariants: `writeGraph(readGraph(text))` is byte-identical to `text` (each line is kept as read,
 * so opaque records survive whatever key order, spacing or escapes they were written with); a known
 * record that does not match the schema, a line that is not a JSON object, or a missing header is a
 * KILN_GRAPH_INVALID error naming the line; another schema version is KILN_GRAPH_UNSUPPORTED_SCHEMA.
 */
import { diagnostic, KilnError } from '../diagnostics/diagnostic.js';
import { GRAPH_SCHEMA_VERSION } from '../version.js';
import { isKnownKind, type GraphRecord, type HeaderRecord, type KnownRecord, type OpaqueRecord } from './records.js';
import { validateGraphRecord } from './schema.js';

export interface GraphDocument {
  header: HeaderRecord;
  /** Every record after the header, in document order: known kinds and opaque ones alike. */
  records: GraphRecord[];
  /** The document's lines exactly as read (without their `\n`); blank lines included. */
  lines: string[];
}

export interface ReadGraphOptions {
  /** Validate known records against the schema (default true). */
  validate?: boolean;
}

export function isOpaqueRecord(r: GraphRecord): r is OpaqueRecord {
  return !isKnownKind(r.kind);
}

export function isKnownRecord(r: GraphRecord): r is KnownRecord {
  return isKnownKind(r.kind);
}

export function readGraph(text: string, options: ReadGraphOptions = {}): GraphDocument {
  const validate = options.validate !== false;
  const lines = text.split('\n');
  const invalid = (line: number, why: string) =>
    new KilnError(diagnostic('KILN_GRAPH_INVALID', `line ${line}: ${why}`, { producer: 'graph' }));
  let header: HeaderRecord | undefined;
  const records: GraphRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw invalid(i + 1, `not JSON (${(e as Error).message})`);
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(i + 1, 'not a JSON object');
    const kind = (value as { kind?: unknown }).kind;
    if (typeof kind !== 'string' || !kind) throw invalid(i + 1, 'a record without a kind');
    if (!header) {
      if (kind !== 'header') throw invalid(i + 1, `the first record must be the header, not "${kind}"`);
      const version = (value as { schema_version?: unknown }).schema_version;
      if (version !== GRAPH_SCHEMA_VERSION) {
        throw new KilnError(
          diagnostic('KILN_GRAPH_UNSUPPORTED_SCHEMA', `the graph has schema_version ${JSON.stringify(version)}; this kiln reads ${GRAPH_SCHEMA_VERSION}`, { producer: 'graph' }),
        );
      }
    } else if (kind === 'header') {
      throw invalid(i + 1, 'a second header');
    }
    if (validate && isKnownKind(kind)) {
      const why = validateGraphRecord(value);
      if (why) throw invalid(i + 1, `${kind} record ${JSON.stringify((value as { id?: unknown }).id ?? null)}: ${why}`);
    }
    if (!header) header = value as HeaderRecord;
    else records.push(value as GraphRecord);
  }
  if (!header) throw invalid(1, 'no header: the document is empty');
  return { header, records, lines };
}

/** The document's text: exactly what `readGraph` read. */
export function writeGraph(doc: GraphDocument): string {
  return doc.lines.join('\n');
}
