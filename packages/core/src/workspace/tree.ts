/**
 * Where a workspace's files are read from: the working tree (node:fs), or a git tree object without a
 * checkout (`GitTree`). Everything that reads a workspace at one state — discovery, the lockfile,
 * tsconfigs, package manifests, digesting, reach — reads through a `FileTree`, so a view of a base
 * commit is the same computation as a view of the working tree, fed other bytes.
 *
 * Invariants:
 * - paths in and out are absolute paths of the workspace as checked out here; a git tree answers for
 *   every path inside its repository exactly as a checkout of that tree would (tracked files only:
 *   nothing untracked or ignored exists in a tree object), and never writes anything;
 * - installed dependencies are not in git: a path with a `node_modules` segment, and any path outside
 *   the repository, is read from disk (the base state is read with this machine's installs, as
 *   `nx affected` reads it);
 * - a git tree knows each file's blob id without reading it (`blobOf`): a caller that recorded
 *   (blob id → content hash) never reads that blob again (view/collect.ts);
 * - blobs are read in batches (one `git cat-file --batch` for many files) and kept: at open, every
 *   manifest, config and lockfile (what discovery, tsconfigs and resolution ask one file at a time;
 *   two trees opened as a `pair` are listed at once and share that batch and one map of blobs);
 *   `preload` before a package's sources are digested; a synchronous read of anything else (a file
 *   reach follows) reads its whole directory's blobs in one batch (a process costs 20–120 ms here, and
 *   a file's neighbours are the likeliest next reads);
 * - what a git tree answers from disk (installed dependencies, paths outside the repository) can be
 *   recorded (`ofTree`'s `recordDisk`): every such question with the answer it got, so a result computed from a
 *   tree id can be kept and trusted again only while disk still answers the same (`diskAnswer`);
 * - nothing happens at import time; git runs only when a GitTree is opened or read.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';
import { sha256Hex } from '../digest/hash.js';

export type EntryKind = 'file' | 'dir';

export interface TreeEntry {
  name: string;
  /** What it is, symlinks followed; undefined for a dangling link or something else (a submodule, a socket). */
  kind: EntryKind | undefined;
  symlink: boolean;
}

export interface FileTree {
  /** `worktree`, or `git` for a tree object. */
  readonly kind: 'worktree' | 'git';
  /** What state this is, for messages and store view ids: `worktree`, or `git:<tree id>`. */
  readonly label: string;
  /** A file's bytes; undefined when there is no such file (or it cannot be read). */
  readFile(abs: string): Buffer | undefined;
  /** A file's text (UTF-8); undefined when there is no such file. */
  readText(abs: string): string | undefined;
  /** What is at a path, symlinks followed. */
  kindOf(abs: string): EntryKind | undefined;
  /** A directory's entries, sorted by name; undefined when it is not a directory. */
  list(abs: string): TreeEntry[] | undefined;
  /** The path with symlinks resolved (the path itself when nothing is linked or it does not exist). */
  realpath(abs: string): string;
  /** Whether the path itself is a symbolic link. */
  isSymlink(abs: string): boolean;
  /** The file's git blob id, where the tree knows it without reading (a git tree's tracked files). */
  blobOf(abs: string): string | undefined;
  /** Read these files ahead, in one batch where the tree can (a git tree); a no-op on disk. */
  preload(abs: readonly string[]): Promise<void>;
  /** Problems met while reading the tree (paths git has that kiln cannot name). */
  readonly diagnostics: readonly Diagnostic[];
}

// ------------------------------------------------------------------------------------- working tree

function statOf(abs: string): fs.Stats | undefined {
  try {
    return fs.statSync(abs, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The working tree, through node:fs. */
export const worktree: FileTree = {
  kind: 'worktree',
  label: 'worktree',
  diagnostics: [],
  readFile(abs) {
    try {
      return fs.readFileSync(abs);
    } catch {
      return undefined;
    }
  },
  readText(abs) {
    try {
      return fs.readFileSync(abs, 'utf8');
    } catch {
      return undefined;
    }
  },
  kindOf(abs) {
    const s = statOf(abs);
    return s?.isFile() ? 'file' : s?.isDirectory() ? 'dir' : undefined;
  },
  list(abs) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    return entries
      .map((e): TreeEntry => {
        const symlink = e.isSymbolicLink();
        const kind: EntryKind | undefined = symlink ? worktree.kindOf(join(abs, e.name)) : e.isFile() ? 'file' : e.isDirectory() ? 'dir' : undefined;
        return { name: e.name, kind, symlink };
      })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  },
  realpath(abs) {
    try {
      return fs.realpathSync(abs);
    } catch {
      return abs;
    }
  },
  isSymlink(abs) {
    try {
      return fs.lstatSync(abs).isSymbolicLink();
    } catch {
      return false;
    }
  },
  blobOf: () => undefined,
  preload: () => Promise.resolve(),
};

// ------------------------------------------------------------------------------- disk questions

/** A question a git tree answered from disk: what was asked (`read`, `kind`, `list`, `real`, `link`) of which absolute path. */
export type DiskOp = 'read' | 'kind' | 'list' | 'real' | 'link';

/** An answer of the working tree, as one comparable string (a file's bytes by their sha256). */
function encodeAnswer(op: DiskOp, value: Buffer | EntryKind | TreeEntry[] | string | boolean | undefined): string {
  if (value === undefined) return '-';
  if (op === 'read') return `sha256:${sha256Hex(value as Buffer)}`;
  if (op === 'list') return JSON.stringify(value);
  return String(value);
}

/** What the working tree answers now to a recorded disk question (compare with the recorded answer). */
export function diskAnswer(op: DiskOp, abs: string): string {
  switch (op) {
    case 'read':
      return encodeAnswer(op, worktree.readFile(abs));
    case 'kind':
      return encodeAnswer(op, worktree.kindOf(abs));
    case 'list':
      return encodeAnswer(op, worktree.list(abs));
    case 'real':
      return encodeAnswer(op, worktree.realpath(abs));
    case 'link':
      return encodeAnswer(op, worktree.isSymlink(abs));
  }
}

/** Disk questions a git tree answered while recording: `op\0abs` → answer; `unstable` when one got two answers. */
export interface DiskRecording {
  answers: Map<string, string>;
  unstable: boolean;
}

// ---------------------------------------------------------------------------------------- git tree

/** Files read at open: manifests, configs (tsconfig and other JSON), workspace and lockfiles. */
const CONFIG_FILE = /(?:^|\/)(?:[^/]+\.(?:json|jsonc|json5|ya?ml)|\.npmrc|yarn\.lock)$/;

interface GitEntry {
  mode: string;
  oid: string;
}

const GIT_TIMEOUT_MS = 60_000;
const MAX_BUFFER = 1 << 30;

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: MAX_BUFFER, timeout: GIT_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `git` as a child process that runs while this thread goes on (several at once): its stdout, or a rejection with its stderr. */
function gitAsync(cwd: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', args, { cwd, timeout: GIT_TIMEOUT_MS, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    child.stdout!.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_BUFFER) child.kill();
      else out.push(d);
    });
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolvePromise(Buffer.concat(out));
      else reject(Object.assign(new Error(`git ${args[0]} failed (${signal ?? code})`), { stderr: Buffer.concat(err).toString('utf8') }));
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

function gitFailure(e: unknown): string {
  const err = e as { stderr?: string | Buffer; message?: string };
  const text = (typeof err.stderr === 'string' ? err.stderr : err.stderr?.toString('utf8')) || err.message || String(e);
  return text.trim().split('\n')[0] ?? 'git failed';
}

/**
 * A git tree object read as a checkout of it would be, without one. `open` resolves `rev` (a commit,
 * a tag or a tree) in the repository holding `workspaceRoot`; unknown revisions are a
 * KILN_GIT_REF_UNKNOWN error, a repository without git a KILN_GIT_UNAVAILABLE one.
 */
export class GitTree implements FileTree {
  readonly kind = 'git' as const;
  readonly label: string;
  readonly diagnostics: Diagnostic[] = [];
  /** Repository-relative POSIX path → entry, for blobs and links. */
  private readonly files = new Map<string, GitEntry>();
  /** Repository-relative POSIX directory ('' for the top) → its entries' names, sorted. */
  private readonly dirs = new Map<string, string[]>();
  /** Blob id → bytes read so far; one map for the two trees of a `pair` (an id names one content). */
  private readonly blobs: Map<string, Buffer>;
  /** Blobs read so far (batched and single), for tests and stats. */
  blobsRead = 0;
  /** Entries left out of the listing because their path is not UTF-8 (KILN_GIT_PATH_NOT_UTF8). */
  unnamed = 0;
  /** Blobs git reported missing (a partial clone, a damaged repository): answers may be incomplete. */
  blobsMissing = 0;
  /** Set when the tree was opened recording (`ofTree(…, { recordDisk: true })`): its disk questions since. */
  readonly diskRecording: DiskRecording | undefined;

  private constructor(
    /** The repository's top directory (absolute). */
    readonly top: string,
    readonly treeId: string,
    recordDisk: boolean,
    blobs: Map<string, Buffer> | undefined,
  ) {
    this.label = `git:${treeId}`;
    this.blobs = blobs ?? new Map();
    if (recordDisk) this.diskRecording = { answers: new Map(), unstable: false };
  }

  static open(workspaceRoot: string, rev: string): GitTree {
    // One process for both answers (each git process costs 20–120 ms from a large Node process).
    let top: string;
    let treeId: string | undefined;
    try {
      // A revision is never an option (`rev-parse` echoes `--end-of-options` where `--verify` is not given).
      if (rev.startsWith('-')) throw new Error(`not a revision: ${rev}`);
      const out = git(workspaceRoot, ['rev-parse', '--show-toplevel', `${rev}^{tree}`]).trim().split('\n');
      top = resolve(out[0]!);
      treeId = out[1];
    } catch (e) {
      // Which failed: no repository (or no git), or no such revision.
      try {
        top = resolve(git(workspaceRoot, ['rev-parse', '--show-toplevel']).trim());
      } catch (e2) {
        throw new KilnError(diagnostic('KILN_GIT_UNAVAILABLE', `${gitFailure(e2)}`, { producer: 'workspace' }));
      }
      throw new KilnError(diagnostic('KILN_GIT_REF_UNKNOWN', `'${rev}' names no commit or tree in ${relative(process.cwd(), top) || '.'}: ${gitFailure(e)}`, { producer: 'workspace' }));
    }
    if (!treeId || !/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(treeId)) throw new KilnError(diagnostic('KILN_GIT_REF_UNKNOWN', `'${rev}' names no commit or tree`, { producer: 'workspace' }));
    return GitTree.ofTree(top, treeId);
  }

  /**
   * A tree object already resolved (its id) in the repository whose top directory is `top`. With
   * `recordDisk`, every question it answers from disk is recorded from the start (`diskRecording`):
   * what it answers from git objects is fixed by its id, the rest is in the recording.
   */
  static ofTree(top: string, treeId: string, options: { recordDisk?: boolean } = {}): GitTree {
    const tree = new GitTree(top, treeId, options.recordDisk === true, undefined);
    tree.readListing(git(top, ['ls-tree', '-r', '-t', '-z', '--full-tree', treeId]));
    tree.readBatch(tree.configBlobs());
    return tree;
  }

  /**
   * Two trees of one repository opened side by side (kiln affected's head and base), in fewer, overlapping
   * git processes: both listings at once, then the configs of both in one batch. The two keep one map
   * of blobs read (a blob id names its content: what both states hold — most manifests and configs —
   * is read once); `recordDisk` applies to the first. The same trees as two `ofTree`.
   */
  static async pair(top: string, firstId: string, secondId: string, options: { recordDisk?: boolean } = {}): Promise<[GitTree, GitTree]> {
    const list = (id: string) => gitAsync(top, ['ls-tree', '-r', '-t', '-z', '--full-tree', id]);
    const [a, b] = await Promise.all([list(firstId), list(secondId)]);
    const first = new GitTree(top, firstId, options.recordDisk === true, undefined);
    const second = new GitTree(top, secondId, false, first.blobs);
    first.readListing(a.toString('utf8'));
    second.readListing(b.toString('utf8'));
    // A blob the second's batch would miss is counted on the first too: its answers rest on them both.
    const oids = [...new Set([...first.configBlobs(), ...second.configBlobs()])];
    if (oids.length) first.takeBatch(await gitAsync(top, ['cat-file', '--batch'], oids.join('\n') + '\n'));
    return [first, second];
  }

  /** What the compiler's hosts and discovery will ask for one at a time: manifests, configs, lockfiles (their blob ids). */
  private configBlobs(): string[] {
    return [...this.files].filter(([path, e]) => e.mode !== '160000' && e.mode !== '120000' && CONFIG_FILE.test(path)).map(([, e]) => e.oid);
  }

  private readListing(out: string): void {
    const children = new Map<string, Set<string>>([['', new Set()]]);
    for (const record of out.split('\0')) {
      if (!record) continue;
      const tab = record.indexOf('\t');
      const [mode, type, oid] = record.slice(0, tab).split(' ') as [string, string, string];
      const path = record.slice(tab + 1);
      if (path.includes('\uFFFD')) {
        // Decoding replaced bytes that are not UTF-8: kiln names files by their text, so it cannot name this one.
        this.diagnostics.push(diagnostic('KILN_GIT_PATH_NOT_UTF8', `a path in ${this.label} is not valid UTF-8 (shown as ${JSON.stringify(path)}); it is left out of the view`, { producer: 'workspace' }));
        this.unnamed++;
        continue;
      }
      const slash = path.lastIndexOf('/');
      const parent = slash < 0 ? '' : path.slice(0, slash);
      const name = path.slice(slash + 1);
      let set = children.get(parent);
      if (!set) children.set(parent, (set = new Set()));
      set.add(name);
      if (type === 'tree') {
        if (!children.has(path)) children.set(path, new Set());
      } else if (type === 'blob') this.files.set(path, { mode, oid });
      else if (type === 'commit') this.files.set(path, { mode: '160000', oid }); // a submodule: neither file nor directory
    }
    for (const [dir, names] of children) this.dirs.set(dir, [...names].sort());
  }

  /** A disk answer, noted when recording; returned unchanged. */
  private disk<T extends Buffer | EntryKind | TreeEntry[] | string | boolean | undefined>(op: DiskOp, abs: string, value: T): T {
    const r = this.diskRecording;
    if (r) {
      const key = `${op}\u0000${abs}`;
      const answer = encodeAnswer(op, value);
      const had = r.answers.get(key);
      if (had === undefined) r.answers.set(key, answer);
      else if (had !== answer) r.unstable = true;
    }
    return value;
  }

  /** The repository-relative POSIX path of `abs`, or undefined when disk answers for it. */
  private relOf(abs: string): string | undefined {
    const rel = relative(this.top, resolve(abs));
    if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
    const posix = rel.split(sep).join('/');
    if (posix === 'node_modules' || posix.startsWith('node_modules/') || posix.includes('/node_modules/') || posix.endsWith('/node_modules')) return undefined;
    return posix;
  }

  /** Follow links within the tree (at most 40, as the kernel does); the entry's path and entry, or undefined. */
  private resolveRel(rel: string, depth = 0): { rel: string; entry?: GitEntry; dir?: boolean } | undefined {
    if (depth > 40) return undefined;
    // Resolve links in the directories above first.
    const parts = rel === '' ? [] : rel.split('/');
    let at = '';
    for (let i = 0; i < parts.length; i++) {
      const next = at ? `${at}/${parts[i]}` : parts[i]!;
      const e = this.files.get(next);
      if (e?.mode === '120000') {
        const target = this.blob(e.oid).toString('utf8');
        const joined = resolve(this.top, at, target, ...parts.slice(i + 1));
        const r = this.relOf(joined);
        if (r === undefined) return { rel: relative(this.top, joined).split(sep).join('/') }; // leaves the tree: disk answers
        return this.resolveRel(r, depth + 1);
      }
      if (i < parts.length - 1 && !this.dirs.has(next)) return undefined;
      at = next;
    }
    if (this.dirs.has(at)) return { rel: at, dir: true };
    const e = this.files.get(at);
    return e ? { rel: at, entry: e } : undefined;
  }

  /** A blob's bytes; `rel` (its path) lets a miss read its directory's other blobs in the same batch. */
  private blob(oid: string, rel?: string): Buffer {
    let b = this.blobs.get(oid);
    if (!b) {
      const dir = rel === undefined ? undefined : rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
      const siblings = dir === undefined ? [] : (this.dirs.get(dir) ?? []).map((n) => this.files.get(dir ? `${dir}/${n}` : n)).filter((e): e is GitEntry => !!e && e.mode !== '160000').map((e) => e.oid);
      this.readBatch([oid, ...siblings]);
      b = this.blobs.get(oid);
      if (!b) throw Object.assign(new Error(`blob ${oid} is missing from the repository`), { code: 'ENOENT' });
    }
    return b;
  }

  /** The entry a path names, links followed; `disk` when the path is read from disk. */
  private lookup(abs: string): { disk: string } | { rel: string; entry?: GitEntry; dir?: boolean } | undefined {
    const rel = this.relOf(abs);
    if (rel === undefined) return { disk: abs };
    const r = this.resolveRel(rel);
    if (!r) return undefined;
    if (!r.entry && !r.dir) {
      const again = join(this.top, r.rel);
      return this.relOf(again) === undefined ? { disk: again } : undefined;
    }
    return r;
  }

  readFile(abs: string): Buffer | undefined {
    const at = this.lookup(abs);
    if (!at) return undefined;
    if ('disk' in at) return this.disk('read', at.disk, worktree.readFile(at.disk));
    if (!at.entry || at.entry.mode === '160000') return undefined;
    try {
      return this.blob(at.entry.oid, at.rel);
    } catch {
      return undefined;
    }
  }

  readText(abs: string): string | undefined {
    return this.readFile(abs)?.toString('utf8');
  }

  kindOf(abs: string): EntryKind | undefined {
    const at = this.lookup(abs);
    if (!at) return undefined;
    if ('disk' in at) return this.disk('kind', at.disk, worktree.kindOf(at.disk));
    return at.dir ? 'dir' : at.entry && at.entry.mode !== '160000' ? 'file' : undefined;
  }

  list(abs: string): TreeEntry[] | undefined {
    const at = this.lookup(abs);
    if (!at) return undefined;
    if ('disk' in at) return this.disk('list', at.disk, worktree.list(at.disk));
    if (!at.dir) return undefined;
    const rel = this.relOf(this.realpath(abs))!;
    const names = this.dirs.get(rel) ?? [];
    return names.map((name) => {
      const child = rel ? `${rel}/${name}` : name;
      const symlink = this.files.get(child)?.mode === '120000';
      return { name, kind: this.kindOf(join(this.top, child)), symlink };
    });
  }

  realpath(abs: string): string {
    const rel = this.relOf(abs);
    if (rel === undefined) return this.disk('real', abs, worktree.realpath(abs));
    const r = this.resolveRel(rel);
    return r ? join(this.top, r.rel) : resolve(abs);
  }

  isSymlink(abs: string): boolean {
    const rel = this.relOf(abs);
    if (rel === undefined) return this.disk('link', abs, worktree.isSymlink(abs));
    return this.files.get(rel)?.mode === '120000';
  }

  blobOf(abs: string): string | undefined {
    const rel = this.relOf(abs);
    if (rel === undefined) return undefined;
    const e = this.resolveRel(rel)?.entry;
    return e && e.mode !== '160000' && e.mode !== '120000' ? e.oid : undefined;
  }

  /** Read many files' blobs with one `git cat-file --batch`. */
  preload(paths: readonly string[]): Promise<void> {
    this.readBatch(paths.map((p) => this.blobOf(p)).filter((o): o is string => o !== undefined));
    return Promise.resolve();
  }

  /** Blobs by id, in one `git cat-file --batch` (synchronous: one process, whatever the count). */
  private readBatch(ids: readonly string[]): void {
    const oids = [...new Set(ids.filter((o) => !this.blobs.has(o)))];
    if (!oids.length) return;
    this.takeBatch(execFileSync('git', ['cat-file', '--batch'], { cwd: this.top, input: oids.join('\n') + '\n', maxBuffer: MAX_BUFFER, timeout: GIT_TIMEOUT_MS, stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Keep the blobs of a `git cat-file --batch` answer. */
  private takeBatch(out: Buffer): void {
    let at = 0;
    while (at < out.length) {
      const nl = out.indexOf(10, at);
      const header = out.subarray(at, nl).toString('latin1').split(' ');
      if (header[1] === 'missing') {
        this.blobsMissing++;
        at = nl + 1;
        continue;
      }
      const size = Number(header[2]);
      this.blobs.set(header[0]!, out.subarray(nl + 1, nl + 1 + size));
      this.blobsRead++;
      at = nl + 1 + size + 1;
    }
  }

  /**
   * The repository-relative paths whose entry (mode and object id) differs between two trees of one
   * repository, or that only one has: what `git diff --name-only --no-renames` lists between them
   * (files, links, submodules), from the listings already read. Undefined when either tree left a
   * path out (not UTF-8: two such names may read alike), so the caller asks git instead.
   */
  static changedPaths(a: GitTree, b: GitTree): string[] | undefined {
    if (a.unnamed || b.unnamed) return undefined;
    const out: string[] = [];
    for (const [path, e] of a.files) {
      const f = b.files.get(path);
      if (!f || f.mode !== e.mode || f.oid !== e.oid) out.push(path);
    }
    for (const path of b.files.keys()) if (!a.files.has(path)) out.push(path);
    return out.sort();
  }

  /** Every tracked file under a directory (repository-relative POSIX paths below `abs`), for listing. */
  filesUnder(abs: string): string[] {
    const rel = this.relOf(abs);
    if (rel === undefined) return [];
    const prefix = rel ? `${rel}/` : '';
    return [...this.files.keys()].filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length)).sort();
  }
}
