/**
 * Pack a built package into the npm tarball it publishes (issue 15 point 8, SPEC §7): npm's own rules
 * decide what the tarball holds — `npm pack` itself runs, so `files`, `.npmignore` and what npm always
 * adds (package.json, README, LICENSE, the `main` and `bin` files) are exactly npm's — and kiln checks the
 * result before it is kept: every entry the manifest names, the executable representation (`kiln.rep`
 * beside the main entry, `representationRelPath`), every JavaScript, declaration and source map file
 * the build wrote in the main entry's directory, and the map each packed JavaScript/declaration file
 * points at (`//# sourceMappingURL=`). A `files` that would leave one out fails with
 * KILN_PACK_INCOMPLETE; one missing on disk with KILN_PACK_NOT_BUILT; npm's own failure KILN_PACK_FAILED.
 *
 * Invariants:
 *   - the tarball is packed into a fresh temporary directory and moved into `outDir` only once checked,
 *     so a refused pack leaves `outDir` without a tarball (and the previous one removed: `outDir` is
 *     emptied first, so it always holds exactly the tarball of the current manifest, or nothing);
 *   - lifecycle scripts do not run (`--ignore-scripts`): the build target produced the files, and a
 *     `prepack`/`prepare` script would build again outside Nx's graph and cache;
 *   - the tarball's kiln.rep carries the manifest's version (`stampRepresentation`): the build's is
 *     unstamped because the build is keyed without the version; the build's file is put back as it was;
 *   - no absolute path in what is returned for printing (paths are package-relative); the tarball is
 *     npm's (fixed mtimes), so the same files give the same bytes.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix, relative, resolve, sep } from 'node:path';
import { representationRelPath, stampRepresentation } from '@kiln/runtime';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';

export interface PackOptions {
  /** Absolute package directory (holds package.json). */
  packageRoot: string;
  /** Absolute directory the tarball goes into; emptied first. */
  outDir: string;
  /** Require `kiln.rep` (default true). */
  representation?: boolean;
  /** The npm command (default `npm` on the PATH). */
  npm?: string;
}

export interface PackedFile {
  path: string;
  size: number;
}

export interface PackResult {
  success: boolean;
  diagnostics: Diagnostic[];
  /** Absolute path of the tarball written (success only). */
  file?: string;
  /** npm's file name for it, e.g. `fx-base-0.1.0.tgz`. */
  filename?: string;
  name?: string;
  version?: string;
  files?: PackedFile[];
  size?: number;
  unpackedSize?: number;
  integrity?: string;
}

/** A file the tarball must carry, and why (package-relative POSIX path). */
export interface RequiredFile {
  path: string;
  why: string;
}

const JS_FILE = /\.(c|m)?js$/;
const BUILT_FILE = /\.((c|m)?js|d\.(c|m)?ts|map)$/;

/** Package-relative POSIX path of a manifest path (`./dist/a.js` → `dist/a.js`); undefined if outside. */
function norm(p: string): string | undefined {
  const n = posix.normalize(p.split('\\').join('/'));
  if (n.startsWith('/') || n === '..' || n.startsWith('../')) return undefined;
  return n.replace(/^\.\//, '').replace(/\/$/, '');
}

/** Every concrete path the manifest names (patterns with `*` are checked through their directory instead). */
export function manifestEntries(manifest: Record<string, unknown>): RequiredFile[] {
  const out: RequiredFile[] = [];
  const add = (p: unknown, why: string) => {
    if (typeof p !== 'string' || p.includes('*')) return;
    const n = norm(p);
    if (n && n !== '.') out.push({ path: n, why });
  };
  const walk = (v: unknown, at: string, depth: number) => {
    if (depth > 8 || v === null || v === undefined) return;
    if (typeof v === 'string') return add(v, at);
    if (Array.isArray(v)) return v.forEach((x) => walk(x, at, depth + 1));
    if (typeof v === 'object') for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, `${at}[${JSON.stringify(k)}]`, depth + 1);
  };
  for (const f of ['main', 'module', 'types', 'typings']) add(manifest[f], `the manifest's "${f}"`);
  if (typeof manifest.bin === 'string') add(manifest.bin, `the manifest's "bin"`);
  else if (manifest.bin && typeof manifest.bin === 'object') for (const [k, v] of Object.entries(manifest.bin)) add(v, `the manifest's bin "${k}"`);
  walk(manifest.exports, 'exports', 0);
  return out;
}

/** The built files under `dir` (package-relative), recursively, without node_modules. */
function builtFilesUnder(packageRoot: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string, depth: number) => {
    if (depth > 32) return;
    let entries;
    try {
      entries = readdirSync(join(packageRoot, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(r, depth + 1);
      } else if (e.isFile() && BUILT_FILE.test(e.name)) out.push(r);
    }
  };
  walk(dir, 0);
  return out.sort();
}

/** The map a JavaScript or declaration file points at (package-relative), if a relative file. */
function mapOf(packageRoot: string, file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(packageRoot, file), 'utf8');
  } catch {
    return undefined;
  }
  const m = /\/\/[#@] sourceMappingURL=([^\s'"]+)\s*$/.exec(text.slice(-4096));
  if (!m || /^[a-z]+:/i.test(m[1]!)) return undefined; // data: or absolute URL
  return norm(posix.join(posix.dirname(file), decodeURIComponent(m[1]!)));
}

/**
 * What the tarball must carry, given the package on disk and (when known) the files npm packs: the
 * manifest's entries, kiln.rep, the built files of the main entry's directory (unless that is the
 * package root, where sources and tools live too), and the map of every packed JS/declaration file.
 */
export function requiredPackFiles(packageRoot: string, manifest: Record<string, unknown>, packed: readonly string[] = [], representation = true): RequiredFile[] {
  const req = new Map<string, string>();
  const add = (path: string, why: string) => {
    if (!req.has(path)) req.set(path, why);
  };
  for (const e of manifestEntries(manifest)) add(e.path, e.why);
  const rep = representationRelPath(manifest);
  if (representation) add(rep, "the package's executable representation");
  const mainDir = posix.dirname(rep);
  if (mainDir !== '.') for (const f of builtFilesUnder(packageRoot, mainDir)) add(f, `built into ${mainDir}/`);
  for (const f of [...packed, ...req.keys()]) {
    if (!(JS_FILE.test(f) || /\.d\.(c|m)?ts$/.test(f))) continue;
    const map = mapOf(packageRoot, f);
    if (map && existsSync(join(packageRoot, map))) add(map, `the source map of ${f}`);
  }
  return [...req].map(([path, why]) => ({ path, why })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

interface NpmPackJson {
  name: string;
  version: string;
  filename: string;
  files: { path: string; size: number }[];
  size: number;
  unpackedSize: number;
  integrity: string;
}

function runNpm(npm: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(npm, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr) || (err && code === 1 ? err.message : '') });
    });
  });
}

/** `npm pack` the package into `outDir`, refusing a tarball that leaves out what the build produced. */
export async function packPackage(options: PackOptions): Promise<PackResult> {
  const { packageRoot, outDir } = options;
  const representation = options.representation ?? true;
  const where = { producer: 'pack', noLocation: 'about the package as a whole' };
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
  } catch (e) {
    return { success: false, diagnostics: [diagnostic('KILN_PACK_FAILED', `package.json: ${(e as Error).message}`, where)] };
  }
  const label = `${String(manifest.name ?? '(unnamed)')}@${String(manifest.version ?? '(no version)')}`;
  // Before npm runs: what the manifest names and kiln.rep must exist (npm would pack a broken package).
  const missing = requiredPackFiles(packageRoot, manifest, [], representation).filter((r) => !existsSync(join(packageRoot, r.path)));
  if (missing.length) {
    return { success: false, diagnostics: missing.map((m) => diagnostic('KILN_PACK_NOT_BUILT', `${label}: ${m.path} (${m.why}) does not exist`, where)) };
  }
  // outDir is emptied: it must not hold the package (or the workspace) itself.
  const inside = relative(resolve(outDir), resolve(packageRoot));
  if (inside === '' || (!inside.startsWith('..') && !inside.startsWith(sep) && !/^[A-Za-z]:/.test(inside))) {
    return { success: false, diagnostics: [diagnostic('KILN_PACK_FAILED', `${label}: the tarball's directory ${outDir === packageRoot ? 'is' : 'contains'} the package directory, and it is emptied before packing`, where)] };
  }
  await rm(outDir, { recursive: true, force: true });
  // The build writes kiln.rep unstamped (it is keyed without the manifest's version); the tarball's is
  // stamped with the version this pack publishes. Stamped in place for npm and put back afterwards,
  // so the build's cached output stays what the build wrote.
  const repFile = join(packageRoot, representationRelPath(manifest));
  let unstamped: Buffer | undefined;
  if (representation && typeof manifest.version === 'string' && existsSync(repFile)) {
    const bytes = readFileSync(repFile);
    let stamped: Uint8Array;
    try {
      stamped = stampRepresentation(bytes, manifest.version);
    } catch (e) {
      return { success: false, diagnostics: [diagnostic('KILN_PACK_FAILED', `${label}: ${representationRelPath(manifest)} cannot be stamped with the version: ${(e as Error).message}`, where)] };
    }
    unstamped = bytes;
    await writeFile(repFile, stamped);
  }
  const tmp = await mkdtemp(join(tmpdir(), 'kiln-pack-'));
  try {
    const r = await runNpm(options.npm ?? 'npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], packageRoot);
    let packed: NpmPackJson | undefined;
    try {
      const parsed = JSON.parse(r.stdout) as NpmPackJson[];
      packed = Array.isArray(parsed) && parsed.length === 1 ? parsed[0] : undefined;
    } catch {
      packed = undefined;
    }
    if (r.code !== 0 || !packed || !Array.isArray(packed.files)) {
      const why = (r.stderr || r.stdout).trim().split('\n').slice(-6).join('\n');
      return { success: false, diagnostics: [diagnostic('KILN_PACK_FAILED', `${label}: npm pack exited ${r.code}${why ? `: ${why}` : ''}`, where)] };
    }
    const inTarball = new Set(packed.files.map((f) => f.path));
    const left = requiredPackFiles(packageRoot, manifest, [...inTarball], representation).filter((q) => !inTarball.has(q.path));
    if (left.length) {
      // Without `files`, npm applies the package's .npmignore or, where it has none, the .gitignore files
      // (the package's and, in a workspace, those above it: a root `dist` line excludes every build).
      const files = Array.isArray(manifest.files)
        ? `"files": ${JSON.stringify(manifest.files)}`
        : existsSync(join(packageRoot, '.npmignore'))
          ? 'its .npmignore'
          : 'npm\'s ignore rules (no "files", no .npmignore: the .gitignore files of the package and the workspace apply)';
      return {
        success: false,
        diagnostics: left.map((q) => diagnostic('KILN_PACK_INCOMPLETE', `${label}: ${files} leaves ${q.path} (${q.why}) out of the tarball`, where)),
      };
    }
    await mkdir(outDir, { recursive: true });
    const file = join(outDir, packed.filename);
    await rename(join(tmp, packed.filename), file).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EXDEV') throw e; // the temporary directory is on another device
      await copyFile(join(tmp, packed!.filename), file);
    });
    return {
      success: true,
      diagnostics: [],
      file,
      filename: packed.filename,
      name: packed.name,
      version: packed.version,
      files: packed.files.map((f) => ({ path: f.path, size: f.size })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      size: packed.size,
      unpackedSize: packed.unpackedSize,
      integrity: packed.integrity,
    };
  } finally {
    if (unstamped) await writeFile(repFile, unstamped);
    await rm(tmp, { recursive: true, force: true });
  }
}

/** npm-style summary of a packed tarball: one line per file, then name, size and count. */
export function describePack(r: PackResult, relativeTo?: string): string {
  if (!r.success || !r.files) return '';
  const kb = (n: number) => (n < 1024 ? `${n}B` : `${(n / 1024).toFixed(1)}kB`);
  const lines = r.files.map((f) => `  ${kb(f.size).padStart(8)}  ${f.path}`);
  const file = relativeTo && r.file ? relative(relativeTo, r.file).split(sep).join('/') : r.filename;
  lines.push(`${r.name}@${r.version}: ${file} (${r.files.length} files, ${kb(r.size ?? 0)} packed, ${kb(r.unpackedSize ?? 0)} unpacked; ${r.integrity})`);
  return lines.join('\n');
}
