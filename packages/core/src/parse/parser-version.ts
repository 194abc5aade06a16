/**
 * Which TypeScript parser this process would extract with, read from the installed package's
 * package.json (the same resolution `typescript()` uses, without loading the 9 MB compiler), and
 * whether the store may be shared with it. Read lazily, once per process; no I/O at import time.
 *
 * Invariant: a slice in the store was made by EXTRACTOR_PARSER_VERSION; a process with another parser
 * neither reads nor writes the store (view/collect.ts, graph/syntax.ts, store/read-slice.ts,
 * store/write-slice.ts), so slices of two parsers never meet.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { EXTRACTOR_PARSER_VERSION } from '../version.js';

let observed: string | undefined;

/** The installed `typescript` version ('unknown' when it cannot be read). */
export function installedParserVersion(): string {
  if (observed === undefined) {
    try {
      const req = createRequire(import.meta.url);
      const pkg = JSON.parse(readFileSync(req.resolve('typescript/package.json'), 'utf8')) as { version?: unknown };
      observed = typeof pkg.version === 'string' ? pkg.version : 'unknown';
    } catch {
      observed = 'unknown';
    }
  }
  return observed;
}

/** Why the store must not be used with this parser, or undefined when it may. */
export function parserMismatch(): string | undefined {
  const v = installedParserVersion();
  return v === EXTRACTOR_PARSER_VERSION
    ? undefined
    : `the installed typescript is ${v}, but this kiln extracts with typescript ${EXTRACTOR_PARSER_VERSION}: the local store is off for this run (slices of two parsers must not be mixed)`;
}

/** @internal Tests only: pretend the installed parser is `version` (undefined: read it again). */
export function setObservedParserVersionForTesting(version: string | undefined): void {
  observed = version;
}
