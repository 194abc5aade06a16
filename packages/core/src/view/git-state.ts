/**
 * A tree as git sees it, so that a sync reads only what git cannot vouch for. From `git status` (the
 * working tree against the index: modified, deleted, untracked and ignored paths) and the index
 * (`git ls-files --stage`: every tracked path with its blob id), one call each, it gives
 *   - the tree's source files, exactly the list listSourceFiles would walk (the same skip rules, via
 *     view/files.ts `sourcePathRules`; ignored files included, since a build reads them too);
 *   - for each file git vouches for, its blob id: a tracked regular file that git reports unchanged
 *     in the working tree, so its bytes are that blob's.
 * A caller that recorded (blob id → content hash) when it last read such a file knows its content
 * hash without reading it (view/collect.ts); everything else is read and hashed as before.
 *
 * Soundness invariants:
 * - A blob id is trusted only where the bytes on disk *are* the blob: no line-ending conversion or
 *   filter is configured (a `core.autocrlf`, `core.eol` or `filter.*` setting turns vouching off for
 *   every file), git reports no checkout attribute for the path (`git check-attr`: text, eol, crlf,
 *   filter, ident, working-tree-encoding — from any attributes file, the repository's, info/, the
 *   user's or the system's), the entry is a plain cached entry (not skip-worktree, assume-unchanged or
 *   unmerged) and git's status does not list it.
 * - An association is recorded only after checking it: the caller hashes the bytes it read the git way
 *   (`gitBlobId`) and keeps the blob id only if it is the one git gave. A file saved between git's
 *   answer and the read is therefore never associated with the wrong content.
 * - Anything unexpected (no git, not a work tree, a submodule in the tree, a path that is not valid
 *   UTF-8, a git error or timeout) returns null: the caller lists and hashes the tree itself.
 * Deletions need nothing special: a deleted file is not in the list, so it leaves the view.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { listSourceFilesUnder, sourcePathRules } from './files.js';

export interface GitTreeState {
  /** Source files, relative to the directory asked about (POSIX), sorted as listSourceFiles sorts. */
  files: string[];
  /** Files git vouches for → their blob id (hex: 40 digits for SHA-1 repositories, 64 for SHA-256). */
  blobs: Map<string, string>;
  /** Why some or all tracked files are not vouched for (checkout conversion), when that is so. */
  noVouching?: string;
}

/** Environment switch: `KILN_GIT_SYNC=0` makes every sync list and hash the tree itself (`1` makes git the default: view/digest-tree.ts). */
export function gitSyncEnabled(): boolean {
  return process.env.KILN_GIT_SYNC !== '0';
}

/** Git's object id for these bytes as a blob (`git hash-object`), in the repository's hash algorithm. */
export function gitBlobId(bytes: Uint8Array, idLength: number): string {
  const h = createHash(idLength === 64 ? 'sha256' : 'sha1');
  h.update(`blob ${bytes.length}\u0000`);
  h.update(bytes);
  return h.digest('hex');
}

interface GitRun {
  code: number;
  out: string;
}

const GIT_TIMEOUT_MS = 30_000;

function git(cwd: string, args: string[], input?: string): Promise<GitRun | null> {
  return new Promise((done) => {
    const child = execFile(
      'git',
      args,
      {
        cwd,
        encoding: 'utf8',
        maxBuffer: 512 * 1024 * 1024,
        timeout: GIT_TIMEOUT_MS,
        windowsHide: true,
        // No index refresh written back (a read-only query), no pager, no localised messages.
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_PAGER: 'cat', LC_ALL: 'C' },
      },
      (error, stdout) => {
        if (!error) return done({ code: 0, out: stdout });
        const code = (error as { code?: unknown }).code;
        done(typeof code === 'number' ? { code, out: stdout ?? '' } : null); // spawn failure, timeout, signal
      },
    );
    if (input !== undefined) {
      child.stdin?.on('error', () => undefined); // a git that exits early: its status says what happened
      child.stdin?.end(input);
    }
  });
}

/** Attributes under which a checkout may write other bytes than the blob's. */
const CHECKOUT_ATTRIBUTES = ['text', 'eol', 'crlf', 'filter', 'ident', 'working-tree-encoding'];

/** Whether some ancestor of `dir` (or itself) has a `.git` entry: no git process for a tree outside git. */
function insideGitCheckout(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return true;
    if (dirname(d) === d) return false;
  }
}

function split0(out: string): string[] {
  const parts = out.split('\u0000');
  if (parts.at(-1) === '') parts.pop();
  return parts;
}

/**
 * Git's view of the source files under `dir` (`extraSkipped` as listSourceFiles takes it), or null
 * when git cannot give it.
 */
export async function gitTreeState(dir: string, extraSkipped: string[] = []): Promise<GitTreeState | null> {
  if (!gitSyncEnabled() || !insideGitCheckout(dir)) return null;
  const [where, index, status, config] = await Promise.all([
    git(dir, ['rev-parse', '--is-inside-work-tree', '--show-prefix']),
    git(dir, ['ls-files', '--stage', '-v', '-z', '--', '.']),
    git(dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames', '--', '.']),
    git(dir, ['config', '-z', '--get-regexp', '^(core\\.(autocrlf|eol)|filter\\..*)$']),
  ]);
  if (!where || where.code !== 0 || !index || index.code !== 0 || !status || status.code !== 0 || !config) return null;
  // `git config --get-regexp` exits 1 when nothing matches, which is the answer we hope for.
  if (config.code !== 0 && config.code !== 1) return null;
  const [inside, prefixLine] = where.out.split('\n');
  if (inside !== 'true' || prefixLine === undefined) return null;
  if ([index.out, status.out].some((o) => o.includes('\uFFFD'))) return null; // a path that is not UTF-8
  const prefix = prefixLine; // '' at the top, else 'a/b/' (status paths are relative to the top)
  const rules = sourcePathRules(extraSkipped);

  let noVouching: string | undefined;
  if (config.code === 0 && config.out.trim()) noVouching = `git config sets ${split0(config.out).map((l) => l.split('\n')[0]).join(', ')}`;

  // The index: "<tag> <mode> <id> <stage>\t<path>", paths relative to `dir`.
  const tracked = new Map<string, { mode: string; id: string; tag: string }>();
  const unmerged = new Set<string>();
  for (const line of split0(index.out)) {
    const tab = line.indexOf('\t');
    const [tag, mode, id, stage] = line.slice(0, tab).split(' ');
    const rel = line.slice(tab + 1);
    if (tab < 0 || !tag || !mode || !id || !stage) return null;
    if (mode === '160000') {
      // A submodule: listSourceFiles walks into its files, which this index does not list.
      if (rules.walks(rel)) return null;
      continue;
    }
    if (stage !== '0') unmerged.add(rel);
    tracked.set(rel, { mode, id, tag });
  }

  // Status: "XY <path>" (relative to the top); X = index vs HEAD, Y = working tree vs index.
  const worktreeChanged = new Map<string, string>(); // tracked path → Y
  const extra = new Set<string>(); // untracked or ignored files
  const dirs: string[] = []; // untracked or ignored directories git did not descend into
  for (const entry of split0(status.out)) {
    const xy = entry.slice(0, 2);
    let rel = entry.slice(3);
    if (!rel.startsWith(prefix)) return null;
    rel = rel.slice(prefix.length);
    if (xy === '??' || xy === '!!') {
      if (rel.endsWith('/')) dirs.push(rel.slice(0, -1));
      else extra.add(rel);
    } else {
      worktreeChanged.set(rel, xy[1]!);
    }
  }

  const files = new Set<string>();
  const blobs = new Map<string, string>();
  const isRegularFile = (rel: string): boolean => {
    try {
      return lstatSync(join(dir, ...rel.split('/'))).isFile();
    } catch {
      return false;
    }
  };
  for (const [rel, t] of tracked) {
    if (!rules.lists(rel) || t.mode === '120000') continue; // symlinks are never listed
    const y = worktreeChanged.get(rel);
    const plain = t.tag === 'H' && !unmerged.has(rel) && (y === undefined || y === ' ');
    if (plain) {
      files.add(rel);
      if (!noVouching) blobs.set(rel, t.id);
    } else if (isRegularFile(rel)) {
      files.add(rel); // changed, skip-worktree, assume-unchanged or unmerged: read it
    }
  }
  if (blobs.size) {
    // Any checkout attribute on a path, from whichever attributes file: that file is read, not vouched for.
    const attrs = await git(dir, ['check-attr', '-z', '--stdin', ...CHECKOUT_ATTRIBUTES], [...blobs.keys()].map((rel) => `${rel}\u0000`).join(''));
    if (!attrs || attrs.code !== 0) return null;
    const parts = split0(attrs.out); // path, attribute, value, path, attribute, value, …
    const converted = new Set<string>();
    for (let i = 0; i + 2 < parts.length; i += 3) if (parts[i + 2] !== 'unspecified') converted.add(parts[i]!);
    for (const rel of converted) blobs.delete(rel);
    if (converted.size) noVouching = `${converted.size} tracked file${converted.size === 1 ? ' has' : 's have'} checkout attributes (${CHECKOUT_ATTRIBUTES.join(', ')})`;
  }
  for (const rel of extra) if (rules.lists(rel) && isRegularFile(rel)) files.add(rel);
  for (const d of dirs) {
    // A directory of untracked or ignored files (an ignore pattern named it, or it is a nested
    // repository): the same walk listSourceFiles does, from there.
    if (!rules.walks(d)) continue;
    try {
      for (const rel of await listSourceFilesUnder(dir, d, extraSkipped)) files.add(rel);
    } catch {
      return null;
    }
  }
  return { files: [...files].sort(), blobs, ...(noVouching ? { noVouching } : {}) };
}

/**
 * Which of `paths` (relative to `dir`) git ignores and does not track — build products such as a
 * `.node` from cargo — or null when git cannot say (no git, not a work tree, an error). One process.
 */
export async function gitIgnoredPaths(dir: string, paths: readonly string[]): Promise<Set<string> | null> {
  if (!paths.length || !insideGitCheckout(dir)) return null;
  // Tracked files are never reported (without --no-index): a committed file is not a build product.
  const run = await git(dir, ['check-ignore', '-z', '--stdin'], `${paths.join('\u0000')}\u0000`);
  if (!run || (run.code !== 0 && run.code !== 1)) return null; // 1: none ignored
  return new Set(split0(run.out));
}
