/**
 * The two states `kiln affected` compares, and the paths that differ between them, from git: the
 * base (default: the merge-base of `defaultBase` from nx.json, else `main`, with the head — as
 * `nx affected` takes it) and the head (a revision, or the working tree with its uncommitted and
 * untracked files).
 *
 * Invariants: nothing is written (no checkout, no fetch); paths are workspace-relative POSIX; a path
 * git reports outside the workspace root is kept as `../…` (it can still reach the workspace); a
 * revision git cannot find is KILN_GIT_REF_UNKNOWN, or KILN_GIT_SHALLOW when the clone is shallow.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { diagnostic, KilnError } from '../diagnostics/diagnostic.js';

export interface AffectedStates {
  /** The repository's top directory. */
  top: string;
  /** The base commit (full id) and how it was chosen. */
  base: string;
  baseFrom: string;
  /** The head commit, or undefined for the working tree. */
  head?: string;
  /** Tree objects of the base and (when a revision) the head commit. */
  baseTree: string;
  headTree?: string;
  /** Paths that differ between base and head, workspace-relative POSIX, sorted. */
  changed: string[];
}

const MAX_BUFFER = 1 << 30;

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: MAX_BUFFER, timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

function firstLine(e: unknown): string {
  const err = e as { stderr?: string; message?: string };
  return ((err.stderr || err.message || String(e)).trim().split('\n')[0] ?? '').replace(/^fatal: /, '');
}

/** `defaultBase` from nx.json (as `nx affected` reads it), else `main`. */
export function defaultBaseOf(workspaceRoot: string): string {
  try {
    const nx = JSON.parse(readFileSync(join(workspaceRoot, 'nx.json'), 'utf8')) as { defaultBase?: unknown; affected?: { defaultBase?: unknown } };
    const b = nx.defaultBase ?? nx.affected?.defaultBase;
    if (typeof b === 'string' && b) return b;
  } catch {
    // No nx.json, or unreadable: the default.
  }
  return 'main';
}

/** Resolve one revision to a commit id; unknown → KILN_GIT_REF_UNKNOWN (KILN_GIT_SHALLOW in a shallow clone). */
function commitOf(top: string, rev: string, shallow: boolean, role: string): string {
  if (rev.startsWith('-')) throw new KilnError(diagnostic('KILN_GIT_REF_UNKNOWN', `--${role} ${rev}: not a revision`, { producer: 'affected' }));
  try {
    return git(top, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]).trim();
  } catch {
    if (shallow) throw new KilnError(diagnostic('KILN_GIT_SHALLOW', `--${role} ${rev} is not in this shallow clone`, { producer: 'affected' }));
    throw new KilnError(diagnostic('KILN_GIT_REF_UNKNOWN', `--${role} ${rev} names no commit in this repository`, { producer: 'affected' }));
  }
}

export function resolveStates(workspaceRoot: string, opts: { base?: string; head?: string }): AffectedStates {
  let top: string;
  let shallow: boolean;
  try {
    // One process for both (a git process costs 20–120 ms from a large Node process).
    const [t, s] = git(workspaceRoot, ['rev-parse', '--show-toplevel', '--is-shallow-repository']).trim().split('\n');
    top = resolve(t!);
    shallow = s === 'true';
  } catch (e) {
    throw new KilnError(diagnostic('KILN_GIT_UNAVAILABLE', firstLine(e), { producer: 'affected' }));
  }
  const head = opts.head === undefined ? undefined : commitOf(top, opts.head, shallow, 'head');
  const baseRef = opts.base ?? defaultBaseOf(workspaceRoot);
  const baseCommit = commitOf(top, baseRef, shallow, 'base');
  let base: string;
  try {
    base = git(top, ['merge-base', baseCommit, head ?? 'HEAD']).trim();
  } catch {
    if (shallow) {
      throw new KilnError(
        diagnostic('KILN_GIT_SHALLOW', `${baseRef} and ${opts.head ?? 'HEAD'} have no common ancestor in this shallow clone: the history between them was not fetched`, { producer: 'affected' }),
      );
    }
    throw new KilnError(diagnostic('KILN_GIT_REF_UNKNOWN', `${baseRef} and ${opts.head ?? 'HEAD'} have no common ancestor`, { producer: 'affected' }));
  }
  const baseFrom = base === baseCommit ? baseRef : `merge-base of ${baseRef} and ${opts.head ?? 'HEAD'}`;
  const [baseTree, headTree] = git(top, ['rev-parse', `${base}^{tree}`, ...(head ? [`${head}^{tree}`] : [])]).trim().split('\n');
  // -z: paths as bytes, no quoting; --no-renames: a move is a deletion and an addition (both matter).
  const diffArgs = ['-c', 'core.quotepath=off', 'diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', base, ...(head ? [head] : []), '--'];
  const paths = new Set(git(top, diffArgs).split('\0').filter(Boolean));
  if (!head) for (const p of git(top, ['ls-files', '-z', '--others', '--exclude-standard']).split('\0').filter(Boolean)) paths.add(p);
  const rootRel = relative(top, resolve(workspaceRoot)).split(sep).join('/');
  const changed = [...paths]
    .map((p) => (rootRel ? (p.startsWith(`${rootRel}/`) ? p.slice(rootRel.length + 1) : relative(rootRel, p).split(sep).join('/')) : p))
    .sort();
  return { top, base, baseFrom, ...(head ? { head, headTree: headTree! } : {}), baseTree: baseTree!, changed };
}
