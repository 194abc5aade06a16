/**
 * `GraphSession`: what one process keeps between exports of the same package, so an edit-and-export
 * loop (a watch loop, an MCP server's reindex, a benchmark) does only the work the edit needs.
 *
 * Invariants: a session is an optimisation only — an export with a session gives the records of one
 * without (the one known exception is documented on GraphSession); a session's state is keyed by
 * package root and tsconfig name, and what it keeps is dropped when what it was computed for changes
 * (the sites' stamp here, the memo's epoch and versions in memo.ts, the program's reuse in checked.ts).
 */
import type { Slice } from '../facts/slice.js';
import type { DocLink, ProgramReuse, Site } from './checked.js';
import { createMemo, type GraphMemo } from './memo.js';

/**
 * What one process keeps between exports of the same package (a watch loop, an MCP server's reindex,
 * a benchmark's edit-and-export): the decoded slices (an unchanged file costs neither a parse nor a
 * store read), other packages' slices, and with the checker the parsed source files and the last
 * builder program (a rebuild parses only edited files, re-checks only the files the compiler's builder
 * says are affected, and walks only those for references and calls, keeping the others' sites);
 * without a program, the previous records in groups, replayed where their inputs are unchanged
 * (memo.ts), and the records it returns are frozen and shared with later results. An
 * export with a session gives the records of one without, with one known exception: the wording of a
 * compiler diagnostic the builder re-checked (tolerant `check` on a project with errors) can list a
 * union's members in another order, because the compiler numbers types in the order it meets them.
 * Checked mode has no diagnostic records, so its records are always the same. The first edit of a
 * file in a session also walks its importers: the builder learns declaration signatures then.
 */
export class GraphSession {
  private readonly states = new Map<string, SessionState>();

  /** @internal */
  stateOf(key: string): SessionState {
    let st = this.states.get(key);
    if (!st) {
      st = { slices: new Map(), foreign: new Map(), program: { files: new Map() }, sites: new Map(), stamp: '' };
      this.states.set(key, st);
    }
    return st;
  }
}

export function createGraphSession(): GraphSession {
  return new GraphSession();
}

/** Reference and call sites per source file (absolute name) of a checker run. */
export type SiteCache = Map<string, { sites: Site[]; links: DocLink[] }>;

/** @internal */
export interface SessionState {
  /** This package's slices by content key (the digest's sliceCache). */
  slices: Map<string, Slice>;
  /** Other packages' slices by content key. */
  foreign: Map<string, Slice>;
  program: ProgramReuse;
  /** Reference and call sites per source file (absolute name) of the last checker run. */
  sites: SiteCache;
  /** What the cached sites were computed for (package name and file list): otherwise they are dropped. */
  stamp: string;
  /** The previous export's records by group, for an export without a program (memo.ts). */
  memo?: GraphMemo;
  /** Set when this package's records could not be grouped: every export builds them whole. */
  memoOff?: boolean;
}

/**
 * The session's sites of the previous checker run, to be replaced by this run's. Sites name identities
 * of this package: they are kept only for the same package name and files.
 */
export function sessionSites(state: SessionState, packageName: string, files: readonly { path: string }[]): SiteCache {
  const stamp = JSON.stringify([packageName, files.map((f) => f.path)]);
  if (stamp !== state.stamp) state.sites.clear();
  state.stamp = stamp;
  return state.sites;
}

/**
 * The session's groups of records for this export (memo.ts): only an export without a program has
 * them (the checker's reuse is its own), and none once the package's records could not be grouped.
 */
export function sessionMemo(state: SessionState, withProgram: boolean): GraphMemo | undefined {
  if (withProgram || state.memoOff) state.memo = undefined;
  return !withProgram && !state.memoOff ? (state.memo ??= createMemo()) : undefined;
}
