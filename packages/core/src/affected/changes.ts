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
import { GitTree } from '../workspace/tree.js';

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
  /**
   * The two states' git trees, when the head is a revision (opened here: their listings also say
   * what changed). The head's records what it answers from disk (closure-memo.ts); the base's shares
   * its blobs (a blob id names its content: what both states hold is read once).
   */
  trees?: { base: GitTree; head: GitTree };
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

/**
 * What a range whose base is the head itself or one of its parents (one commit, the usual CI push)
 * needs, from one git process: the top directory, shallowness, both commits and their trees. The
 * merge-base of an ancestor with its descendant is that ancestor, so no `merge-base` runs. Undefined
 * when git cannot answer (an unknown revision, no repository) or the base is not such a parent: the
 * general path below then asks step by step and says precisely what failed.
 */
function quickStates(workspaceRoot: string, baseRef: string, head: string | undefined): { top: string; shallow: boolean; base: string; head?: string; baseTree: string; headTree?: string } | undefined {
  if (baseRef.startsWith('-') || head?.startsWith('-')) return undefined;
  const rev = head ?? 'HEAD';
  let out: string[];
  try {
    out = git(workspaceRoot, ['rev-parse', '--show-toplevel', '--is-shallow-repository', `${baseRef}^{commit}`, `${rev}^{commit}`, `${baseRef}^{tree}`, ...(head ? [`${head}^{tree}`] : []), `${rev}^@`]).trim().split('\n');
  } catch {
    return undefined;
  }
  const [t, s, base, headCommit, baseTree, ...rest] = out;
  const headTree = head ? rest.shift() : undefined;
  const oid = (x: string | undefined) => !!x && /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(x);
  if (!t || (s !== 'true' && s !== 'false') || !oid(base) || !oid(headCommit) || !oid(baseTree) || (head && !oid(headTree)) || !rest.every(oid)) return undefined;
  if (base !== headCommit && !rest.includes(base!)) return undefined;
  return { top: resolve(t), shallow: s === 'true', base: base!, ...(head ? { head: headCommit!, headTree: headTree! } : {}), baseTree: baseTree! };
}

export async function resolveStates(workspaceRoot: string, opts: { base?: string; head?: string }): Promise<AffectedStates> {
  const baseRef = opts.base ?? defaultBaseOf(workspaceRoot);
  const quick = quickStates(workspaceRoot, baseRef, opts.head);
  if (quick) return withChanges(workspaceRoot, { ...quick, baseFrom: baseRef });
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
  return withChanges(workspaceRoot, { top, base, baseFrom, ...(head ? { head, headTree: headTree! } : {}), baseTree: baseTree! });
}

/** The states with what changed between them (and, for a head revision, both git trees). */
async function withChanges(workspaceRoot: string, s: Omit<AffectedStates, 'changed' | 'trees'>): Promise<AffectedStates> {
  if (s.head === undefined || s.headTree === undefined) return { ...s, changed: changedPaths(workspaceRoot, s.top, s.base, undefined) };
  const [head, base] = await GitTree.pair(s.top, s.headTree, s.baseTree, { recordDisk: true });
  const listed = GitTree.changedPaths(base, head);
  return { ...s, changed: listed ? workspacePaths(workspaceRoot, s.top, listed) : changedPaths(workspaceRoot, s.top, s.base, s.head), trees: { base, head } };
}

/** Paths that differ between the base commit and the head (a commit, or the working tree with its untracked files), workspace-relative, sorted. */
function changedPaths(workspaceRoot: string, top: string, base: string, head: string | undefined): string[] {
  // -z: paths as bytes, no quoting; --no-renames: a move is a deletion and an addition (both matter).
  const diffArgs = ['-c', 'core.quotepath=off', 'diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', base, ...(head ? [head] : []), '--'];
  const paths = new Set(git(top, diffArgs).split('\0').filter(Boolean));
  if (!head) for (const p of git(top, ['ls-files', '-z', '--others', '--exclude-standard']).split('\0').filter(Boolean)) paths.add(p);
  return workspacePaths(workspaceRoot, top, [...paths]);
}

/** Repository-relative paths as workspace-relative ones (`../…` outside it), sorted. */
function workspacePaths(workspaceRoot: string, top: string, paths: readonly string[]): string[] {
  const rootRel = relative(top, resolve(workspaceRoot)).split(sep).join('/');
  return paths.map((p) => (rootRel ? (p.startsWith(`${rootRel}/`) ? p.slice(rootRel.length + 1) : relative(rootRel, p).split(sep).join('/')) : p)).sort();
}
