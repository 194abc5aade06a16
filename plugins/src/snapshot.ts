/**
 * Stat snapshots of a workspace, the state a graph memo answers for (graph-memo.ts): stamps (kind,
 * size, mtime, ctime, inode, device; nanoseconds) of
 *   - the walk:   every file and directory listing of the workspace but node_modules, .git, .nx, the
 *                 store when it lies inside, and the output directories a memo leaves out;
 *   - probes:     paths outside the walk that a computation read (fs-recording.ts);
 *   - fixed:      the package managers' install markers, and kiln's own code (its dist and the
 *                 TypeScript it parses with) as this process loaded it.
 * A write or a rename changes a file's ctime (which no tool can set), a new, removed or renamed entry
 * changes a listing. A stamp changed less than 2 s before it was taken is `recent`: a file system whose
 * clock is coarser than the write rate could give two contents one stamp.
 *
 * Invariants: every stat goes through node:fs as loaded (`fsSync`), so a recording never sees the
 * snapshot's own reads; a snapshot that cannot vouch for the workspace (an unreadable entry, a symbolic
 * link to a directory) is `undefined`, never a partial one. The only I/O at import is one stat of this
 * module (kiln's code as loaded).
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, statSync, type BigIntStats } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** node:fs as loaded, before any recording wraps it: the snapshot's own stats are never recorded. */
export const fsSync = { statSync, lstatSync, readdirSync, readFileSync };

/** Files changed this recently may be followed by a same-timestamp write (coarse file-system clocks): not memoised. */
const RACY_NS = 2_000_000_000n;
/** Directories the walk never enters, wherever they are (what a key reads there is a probe). */
export const SKIPPED_DIRS = new Set(['node_modules', '.git', '.nx']);
/** The package managers' records of an install: rewritten whenever node_modules changes through them. */
const INSTALL_MARKERS = ['node_modules/.package-lock.json', 'node_modules/.modules.yaml', 'node_modules/.yarn-state.yml', 'node_modules/.yarn-integrity'];

/**
 * kiln's slice store (`KILN_STORE`, else the user cache directory, as @kiln/core places it), when it
 * lies inside the workspace: content-addressed, never a key input, and written by every computation.
 */
export function storeDir(): string {
  return resolve(process.env.KILN_STORE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kiln', 'store'));
}

/** Workspace-relative directories the walk leaves out besides SKIPPED_DIRS: the store, if inside. */
export function unwalkedDirs(workspaceRoot: string): string[] {
  const rel = relative(workspaceRoot, storeDir());
  return rel && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) ? [toPosix(rel)] : [];
}

export const toPosix = (p: string) => p.split(sep).join('/');
export const posixJoin = (...parts: string[]) => toPosix(join(...parts));

export interface Stamp {
  text: string;
  /** Changed less than RACY_NS before it was taken. */
  recent: boolean;
}

export interface Snapshot {
  /** The walk: workspace-relative path (so skipped outputs can be left out) and stamp. */
  walk: { path: string; stamp: Stamp }[];
  /** Install markers and kiln's code. */
  fixed: Stamp[];
  /** Probe path → stamp. */
  probes: Map<string, Stamp>;
  /** Every directory the walk met (entered, or left out as `skip`) → its identity (device, inode, birth time). */
  dirs: Map<string, string>;
}

export function stampOf(s: BigIntStats | undefined, now: bigint, error?: string): Stamp {
  if (!s) return { text: error ?? 'missing', recent: false };
  const kind = s.isDirectory() ? 'd' : s.isFile() ? 'f' : 'o';
  return { text: `${kind}${s.size}:${s.mtimeNs}:${s.ctimeNs}:${s.ino}:${s.dev}`, recent: now - s.ctimeNs < RACY_NS || now - s.mtimeNs < RACY_NS };
}

export const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** A file of a by-content directory: its kind, size and bytes' digest (never racy: bytes are compared, not times). */
function contentStamp(abs: string, stat: Stamp): Stamp {
  if (!stat.text.startsWith('f')) return { text: stat.text.replace(/:.*/, ''), recent: false };
  try {
    return { text: `c${createHash('sha256').update(fsSync.readFileSync(abs)).digest('hex')}`, recent: false };
  } catch (e) {
    return { text: errorText(e), recent: false };
  }
}

/** The stamp of a path (following links), or `missing` / `error:CODE`. */
function stampPath(abs: string, now = nowNs()): Stamp {
  try {
    return stampOf(fsSync.statSync(abs, { bigint: true, throwIfNoEntry: false }), now);
  } catch (e) {
    return stampOf(undefined, now, errorText(e));
  }
}

export const errorText = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' ? 'missing' : `error:${code ?? 'unknown'}`;
};

export function dirIdentity(abs: string): string | null {
  try {
    const s = fsSync.lstatSync(abs, { bigint: true, throwIfNoEntry: false });
    return s?.isDirectory() ? `${s.dev}:${s.ino}:${s.birthtimeNs}` : null;
  } catch {
    return null;
  }
}

/** The digest of a snapshot without the walk entries inside `skip`, with these probes; `recent` if any part is. */
export function fingerprint(snap: Snapshot, skip: string[], probes: Map<string, Stamp>): { digest: string; recent: string | undefined } {
  const left = new Set(skip);
  const inside = (path: string) => {
    if (!left.size) return false;
    for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) if (left.has(path.slice(0, i))) return true;
    return left.has(path);
  };
  const parts: Stamp[] = [...snap.walk.filter((e) => !inside(e.path)).map((e) => ({ text: `walk ${e.path} ${e.stamp.text}`, recent: e.stamp.recent })), ...snap.fixed];
  for (const [path, s] of probes) parts.push({ text: `probe ${path} ${s.text}`, recent: s.recent });
  const hash = createHash('sha256');
  for (const text of parts.map((p) => p.text).sort()) hash.update(`${text}\n`);
  return { digest: hash.digest('hex'), recent: parts.find((p) => p.recent)?.text };
}

/**
 * A snapshot: the walk (all but node_modules, .git, .nx and `skip`), the install markers and kiln's
 * code, and `probes`. `undefined` when it cannot vouch for the workspace (an unreadable directory, a
 * symbolic link to a directory: the walk does not follow them, readers may).
 */
export function snapshot(workspaceRoot: string, skip: string[], probes: string[], byContent: string[] = []): Snapshot | undefined {
  // Synchronous: a few thousand stats cost a few milliseconds this way, several times that through
  // the thread pool; the worker has nothing else to do meanwhile.
  try {
    const now = nowNs();
    const left = new Set(skip);
    const unwalked = new Set(unwalkedDirs(workspaceRoot));
    const walk: Snapshot['walk'] = [];
    const dirs = new Map<string, string>();
    const contentDirs = new Set(byContent);
    const visit = (dir: string, rel: string, content: boolean): boolean => {
      for (const e of fsSync.readdirSync(dir, { withFileTypes: true })) {
        const abs = join(dir, e.name);
        const relPath = rel ? `${rel}/${e.name}` : e.name;
        if (SKIPPED_DIRS.has(e.name) || unwalked.has(relPath)) continue;
        if (e.isDirectory()) {
          const id = dirIdentity(abs);
          if (id) dirs.set(relPath, id);
          if (left.has(relPath)) continue;
          const inContent = content || contentDirs.has(relPath);
          // Its listing is its entries; by content, a re-created directory is the same directory.
          walk.push({ path: relPath, stamp: { text: inContent ? 'dir' : `dir ${id}`, recent: false } });
          if (!visit(abs, relPath, inContent)) return false;
          continue;
        }
        const stamp = stampPath(abs, now);
        if (stamp.text.startsWith('d')) return false; // a linked directory (readers may follow it, the walk does not)
        walk.push({ path: relPath, stamp: content ? contentStamp(abs, stamp) : stamp });
      }
      return true;
    };
    if (!visit(workspaceRoot, '', false)) return undefined;
    const code = processCode();
    if (!code) return undefined;
    const fixed = INSTALL_MARKERS.map((m) => {
      const stamp = stampPath(join(workspaceRoot, m), now);
      return { text: `marker ${m} ${stamp.text}`, recent: stamp.recent };
    });
    return {
      walk,
      fixed: [...fixed, ...code],
      probes: new Map(probes.map((p) => [p, stampPath(p, now)])),
      dirs,
    };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// kiln's code: stamped once per process, as loaded

const SELF = fileURLToPath(import.meta.url);
/**
 * This module's stamp when it was loaded (a later rebuild must not pass for the code that runs). The
 * plugin's modules are loaded together (index.js imports them all), so one stands for the others.
 */
const selfAtLoad = (() => {
  try {
    return stampOf(fsSync.statSync(SELF, { bigint: true }), nowNs()).text;
  } catch {
    return 'unknown';
  }
})();

let codeStamps: Stamp[] | undefined;
/** kiln's code as this process runs it: stamped at its first lookup (before @kiln/core is loaded). */
const processCode = () => (codeStamps ??= stampCode());

/**
 * Every file of this package's dist and of @kiln/core's that can be loaded or read at run time (not
 * source maps, declarations or build info), and the TypeScript that parses tsconfigs and sources.
 */
function stampCode(): Stamp[] | undefined {
  try {
    const files: string[] = [];
    for (const dir of kilnCodeDirs()) {
      for (const f of fsSync.readdirSync(dir, { recursive: true, withFileTypes: true })) {
        if (!f.isDirectory() && !/\.(map|d\.ts|tsbuildinfo)$/.test(f.name)) files.push(join(f.parentPath, f.name));
      }
    }
    const ts = createRequire(coreEntry());
    files.push(ts.resolve('typescript/package.json'), ts.resolve('typescript'));
    const now = nowNs();
    const stamps = files.sort().map((f) => [f, stampPath(f, now)] as const);
    if (stamps.find(([f]) => f === SELF)?.[1].text !== selfAtLoad) return undefined;
    return stamps.map(([f, s]) => ({ text: `code ${f} ${s.text}`, recent: s.recent }));
  } catch {
    return undefined;
  }
}

/** Whether kiln's code on disk is still what this process stamped (and so what it ran). */
export function codeUnchanged(): boolean {
  const was = processCode();
  const is = stampCode();
  return !!was && !!is && was.length === is.length && was.every((s, i) => s.text === is[i]!.text);
}

export function kilnCodeDirs(): string[] {
  // This package's dist (this file is dist/plugins/src/snapshot.js) and @kiln/core's.
  return [resolve(dirname(SELF), '..', '..'), dirname(coreEntry())];
}

const coreEntry = () => createRequire(import.meta.url).resolve('@kiln/core');
