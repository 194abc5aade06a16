/**
 * Opaque workspace packages (issue 10, points 1 and 7): a workspace package kiln does not build as a
 * TypeScript project (no tsconfig) — plain JS with hand-written or generated declarations, a napi-rs
 * or wasm-pack package, `types`/`exports` pointing at committed files. A dependent observes what it
 * ships, so that is what keys the dependent:
 *   - the files `npm pack` would put in its tarball, by npm's own rules (npm-packlist: `files`,
 *     .npmignore/.gitignore — the workspace root's too, as `npm pack -w` reads them —, always-included
 *     files, `main`/`bin`/`browser`);
 *   - its declaration, JS and TS files digested semantically by kiln's own digests (declarations with
 *     their docs, module digests — which hold evaluation order), so a comment edit or a reformat is not
 *     a change; plus the order of same-named declarations (overloads, merged interfaces: consumers
 *     resolve in that order);
 *   - every other shipped file by its bytes (JSON, `.node`, `.wasm`, CSS, README…);
 *   - files of the package that shipped files import but npm would not ship (a broken `files` list):
 *     a dependent's build in the workspace reads them, so they key it like shipped files, with a warning;
 *   - the manifest fields consumers resolve through, and the surfaces (workspace) or lockfile versions
 *     (external) of the packages its files import — supplied by the caller, which knows about cycles.
 *
 * Invariants:
 *   - no absolute path enters a part, a reason or a diagnostic: paths are relative to the package root
 *     (parts) or the workspace root (diagnostics), errors are reported by their code;
 *   - nothing kiln cannot read becomes a constant: a file that cannot be read contributes its size and
 *     modification time, a directory npm's rules cannot be evaluated in widens the list to every file
 *     under the package; each with a coded diagnostic. Errs on the side of moving;
 *   - a package's content is read once per key computation (memoised by root); the digest of its
 *     surface is assembled by the caller's context (SurfaceCalculator), which may do that more than once
 *     where a dependency cycle closes.
 */
import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { createHash, randomUUID } from 'node:crypto';
import { join, posix, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import packlist from 'npm-packlist';
import normalizePackageBin from 'npm-normalize-package-bin';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { digestParts } from '../digest/hash.js';
import { fileKind } from '../parse/language.js';
import { typescript } from '../parse/typescript.js';
import { digestTree } from '../view/digest-tree.js';
import { gitIgnoredPaths } from '../view/git-state.js';
import type { DigestReport } from '../view/report.js';
import type { WorkspaceProject } from '../workspace/discover.js';
import { listFiles } from '../workspace/list-files.js';
import { GitTree, type FileTree } from '../workspace/tree.js';
import type { DependencySurface } from './unit-key.js';

/** What an opaque package ships, read once. */
export interface OpaqueContent {
  /** Key material, paths relative to the package root, in a fixed order. */
  parts: string[];
  /** Packages its shipped sources import (`import`, `require`, `import()`, `/// <reference types>`), sorted. */
  packages: string[];
  counts: { shipped: number; semantic: number; bytes: number };
}

/** Manifest fields a consumer resolves or runs through, beyond the surface fields every dependency keys on. */
const CONSUMER_FIELDS = ['typesVersions', 'imports', 'browser', 'sideEffects', 'bin'] as const;
/** Shipped files that are machine code or a binary format: keyed by bytes, and told so (KILN_OPAQUE_BINARY). */
const BINARY_EXTENSIONS = /\.(node|wasm)$/;
/** How much of a file is looked at for NUL bytes to call it binary (as git does). */
const BINARY_SNIFF = 8000;
/**
 * npm-packlist settles only through its walker's events: a case it does not handle (a manifest shape
 * packTree does not foresee) would leave the key computation waiting for ever. Past this, the list
 * widens to every file instead.
 */
const PACKLIST_TIMEOUT_MS = 60_000;
/** Rounds of following imports into files the package does not ship (each digests its sources again). */
const IMPORT_ROUNDS = 8;
/** How shipped sources' relative specifiers are resolved: as a bundler or TypeScript would, JS and JSON included. */
const RESOLUTION: TS.CompilerOptions = { moduleResolution: 100 /* Bundler */, module: 99 /* ESNext */, allowJs: true, resolveJsonModule: true, allowArbitraryExtensions: true, noEmit: true };
/** At most this many source files are digested on the calling thread rather than by a new worker pool. */
const INLINE_UP_TO = 32;

export interface OpaqueOptions {
  store?: string | false;
  workers?: number;
  /**
   * The state read, when not the working tree: a git tree (workspace/tree.ts). npm's file list reads
   * the disk, so there a package is keyed wider — every tracked file under it by blob id, and every
   * package its manifest names — which can only move a key more often, never less.
   */
  tree?: FileTree;
}

/** Reads opaque packages of one workspace, each once; collects their diagnostics. */
export class OpaquePackages {
  private readonly memo = new Map<string, Promise<OpaqueContent>>();
  private readonly found: Diagnostic[] = [];

  constructor(
    private readonly workspaceRoot: string,
    private readonly options: OpaqueOptions = {},
  ) {}

  content(project: WorkspaceProject): Promise<OpaqueContent> {
    let m = this.memo.get(project.root);
    if (!m) {
      m = readOpaque(this.workspaceRoot, project, this.options, this.found);
      this.memo.set(project.root, m);
    }
    return m;
  }

  /** Diagnostics of every package read so far, sorted (paths relative to the workspace root). */
  diagnostics(): Diagnostic[] {
    return [...this.found].sort((a, b) => (a.file ?? '').localeCompare(b.file ?? '') || a.code.localeCompare(b.code) || a.message.localeCompare(b.message));
  }
}

/**
 * An opaque package at a git state: every tracked file under it by blob id, every package its manifest
 * names. Imports of packages the manifest does not name are not followed here: `kiln affected` runs a
 * target that depends on an opaque package on its full closure instead of its key (affected/).
 */
function readOpaqueFromGit(dir: string, project: WorkspaceProject, tree: GitTree): OpaqueContent {
  const files = tree.filesUnder(dir).filter((f) => !f.split('/').includes('node_modules'));
  const parts = ['list:git-tree', ...files.map((f) => `git:${f}:${tree.blobOf(join(dir, f)) ?? 'link'}`)];
  const manifest = project.manifest ?? {};
  const names = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const n of Object.keys((manifest[field] as Record<string, unknown> | undefined) ?? {})) names.add(n);
  }
  return { parts, packages: [...names].sort(), counts: { shipped: files.length, semantic: 0, bytes: files.length } };
}

/**
 * The surface of an opaque package: its manifest as consumers resolve it, what it ships, and what its
 * files import. `reach` gives the key part of an imported package (`ws:<name>:<digest>`,
 * `ws:<name>:cycle`, `ext:<name>@<version>`), or undefined for a Node builtin.
 */
export async function opaqueSurface(
  project: WorkspaceProject,
  manifestSurface: string,
  content: OpaqueContent,
  reach: (pkg: string) => Promise<string | undefined>,
): Promise<DependencySurface> {
  const manifest = project.manifest ?? {};
  const names = (field: string) => Object.keys((manifest[field] as Record<string, unknown> | undefined) ?? {});
  const dependencyNames = [...new Set([...names('dependencies'), ...names('peerDependencies'), ...names('optionalDependencies')])].sort();
  const parts = [
    manifestSurface,
    project.manifestError ?? '',
    JSON.stringify(CONSUMER_FIELDS.map((f) => [f, manifest[f] ?? null])),
    `deps:${dependencyNames.join(',')}`,
    ...content.parts,
  ];
  for (const pkg of content.packages) {
    if (pkg === project.name) continue;
    const part = await reach(pkg);
    if (part !== undefined) parts.push(part);
  }
  const { shipped, semantic, bytes } = content.counts;
  return {
    digest: digestParts('kiln-surface-opaque/2', parts),
    mode: 'full',
    reason: `not built by kiln: keyed by the ${shipped} files it ships (${semantic} digested semantically, ${bytes} by bytes)`,
    exports: {},
  };
}

async function readOpaque(workspaceRoot: string, project: WorkspaceProject, options: OpaqueOptions, found: Diagnostic[]): Promise<OpaqueContent> {
  const dir = join(workspaceRoot, project.root);
  if (options.tree && options.tree.kind === 'git') return readOpaqueFromGit(dir, project, options.tree as GitTree);
  const at = (rel: string) => posix.join(project.root, rel);
  const parts: string[] = [];
  const diagnostics: Diagnostic[] = [];
  const unreadable = async (rel: string, why: string): Promise<string> => {
    const stamp = await statStamp(join(dir, rel));
    diagnostics.push(
      diagnostic('KILN_OPAQUE_UNREADABLE', `${at(rel)}: ${why}; keyed by its size and modification time (${stamp === 'missing' ? 'it no longer exists' : 'any write moves them'})`, {
        file: at(rel),
        producer: 'key',
      }),
    );
    return stamp;
  };

  // 1. What it ships: npm's own list, or — where npm's rules cannot be evaluated — every file.
  let shipped: string[];
  try {
    shipped = await withTimeout(
      // As `npm pack -w` from the workspace root: ignore files between the root and the package count too.
      packlist(packTree(dir, project.manifest), project.root === '.' ? { path: resolve(dir) } : { path: resolve(dir), prefix: resolve(workspaceRoot), workspaces: [resolve(dir)] }),
      PACKLIST_TIMEOUT_MS,
    );
    shipped = shipped.map((f) => f.split(sep).join('/').replace(/^\.\//, ''));
  } catch (e) {
    const listed = await listEverything(dir);
    shipped = listed.files;
    parts.push('list:every-file');
    diagnostics.push(
      diagnostic('KILN_OPAQUE_PACKLIST_FAILED', `${project.root}: npm's file list could not be computed (${errorCode(e)}); every file under the package keys its dependents`, {
        file: project.root,
        producer: 'key',
      }),
    );
    // A directory's stamp does not move when a file inside it is written: what it holds cannot be
    // known, so the key never repeats (a fresh value) until it can be listed.
    for (const d of listed.unreadableDirs) {
      diagnostics.push(diagnostic('KILN_OPAQUE_UNREADABLE', `${at(d)}: the directory could not be listed; its dependents' keys never repeat (no cache hit) until it can be`, { file: at(d), producer: 'key' }));
      parts.push(`unreadable-dir:${d}:${randomUUID()}`);
    }
  }
  // The root manifest is keyed by its fields (opaqueSurface): a version bump is not a change.
  shipped = [...new Set(shipped)].filter((f) => f !== 'package.json').sort();
  parts.push(`shipped:${shipped.length}`);

  // 2. Sources, semantically — with, to a fixpoint, the package's files they import that npm would not
  // ship: the package is broken once published, but in the workspace a dependent's build reads them.
  let sourceSet = new Set<string>();
  let report: DigestReport | undefined;
  for (let round = 0; ; round++) {
    const sources = shipped.filter((f) => fileKind(f));
    sourceSet = new Set(sources);
    report = undefined;
    if (!sources.length) break;
    try {
      report = await digestTree(dir, {
        files: sources,
        inlineUpTo: INLINE_UP_TO,
        ...(options.store !== undefined ? { store: options.store } : {}),
        ...(options.workers !== undefined ? { workers: options.workers } : {}),
      });
    } catch (e) {
      // Not expected (the directory exists); every source is then keyed by its bytes below.
      diagnostics.push(diagnostic('KILN_OPAQUE_UNREADABLE', `${project.root}: its sources could not be digested (${errorCode(e)}); keyed by their bytes`, { file: project.root, producer: 'key' }));
      sourceSet.clear();
      break;
    }
    const more = await unshippedImports(dir, report, new Set(shipped));
    for (const [rel, importer] of more) {
      diagnostics.push(
        diagnostic('KILN_OPAQUE_UNSHIPPED_IMPORT', `${at(rel)} is imported by ${at(importer)}, but ${project.name} does not ship it (npm pack leaves it out); it keys the package's dependents all the same`, {
          file: at(rel),
          producer: 'key',
        }),
      );
    }
    if (!more.size) break;
    shipped = [...shipped, ...more.keys()].sort();
    // Past the last round, what was found last is keyed by its bytes (below) rather than followed.
    if (round === IMPORT_ROUNDS) break;
  }
  const records = new Map((report?.files ?? []).map((f) => [f.path, f]));
  const declsByFile = new Map<string, NonNullable<typeof report>['declarations']>();
  for (const d of report?.declarations ?? []) (declsByFile.get(d.span.file) ?? declsByFile.set(d.span.file, []).get(d.span.file)!).push(d);
  for (const d of report?.diagnostics ?? []) {
    // A file that could not be read is told about below, with what keys it instead.
    if (d.code === 'KILN_READ_FAILED' && d.file && sourceSet.has(d.file)) continue;
    diagnostics.push({ ...d, ...(d.file ? { file: at(d.file) } : {}) });
  }

  // 3. Every shipped file, in order: semantic digests for sources, bytes for the rest.
  let semantic = 0;
  let bytes = 0;
  const binaries: string[] = [];
  for (const rel of shipped) {
    const f = sourceSet.has(rel) ? records.get(rel) : undefined;
    if (f) {
      semantic++;
      parts.push(`src:${rel}:${f.module.degraded ? `degraded:${f.content_hash}` : f.module.digest}|${f.module.docs ?? ''}`);
      const decls = declsByFile.get(rel) ?? [];
      // As a set: the module digest and the order parts below say what order means.
      for (const d of [...decls].sort((x, y) => (x.identity < y.identity ? -1 : x.identity > y.identity ? 1 : 0))) {
        parts.push(`decl:${rel}:${d.identity}:${d.semantic_digest === null ? `degraded:${f.content_hash}` : d.semantic_digest}|${d.doc_digest ?? ''}`);
      }
      // Order the module digest leaves out but a consumer sees: same-named module-level declarations
      // (overloads, merged interfaces). Other reorderings that run differently (initialisers, classes)
      // are in the module digest; hoisted functions can be reordered unseen.
      const top = decls
        .filter((d) => d.module_level)
        .sort((x, y) => x.span.startLine - y.span.startLine || x.span.startColumn - y.span.startColumn);
      const byName = new Map<string, string[]>();
      for (const d of top) {
        const name = d.path.replace(/(~[0-9a-f]{8})?(#\d+)?$/, '');
        (byName.get(name) ?? byName.set(name, []).get(name)!).push(d.identity);
      }
      for (const [name, ids] of byName) if (ids.length > 1) parts.push(`order:${rel}#${name}:${digestParts('kiln-order/1', ids)}`);
      continue;
    }
    bytes++;
    try {
      const h = await hashFile(join(dir, rel));
      parts.push(`bytes:${rel}:${h.hash}`);
      if (h.binary || BINARY_EXTENSIONS.test(rel)) binaries.push(rel);
    } catch (e) {
      parts.push(`unreadable:${rel}:${await unreadable(rel, `could not be read (${errorCode(e)})`)}`);
    }
  }
  for (const rel of binaries) {
    diagnostics.push(
      diagnostic('KILN_OPAQUE_BINARY', `${at(rel)}: a binary file shipped by ${project.name}, which kiln does not build; its dependents are keyed by its bytes`, { file: at(rel), producer: 'key' }),
    );
  }

  // 4. Shipped files git ignores are build products: the key reflects whatever was built last.
  const ignored = await gitIgnoredPaths(dir, shipped);
  if (ignored?.size) {
    const list = shipped.filter((f) => ignored.has(f));
    diagnostics.push(
      diagnostic(
        'KILN_OPAQUE_BUILD_PRODUCT',
        `${project.name} ships ${list.length} file(s) git ignores (${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''}): its dependents are keyed by them as they are on disk now`,
        { file: at(list[0]!), producer: 'key' },
      ),
    );
  }

  found.push(...diagnostics);
  const packages = [...new Set((report?.files ?? []).flatMap((f) => f.external_packages))].sort();
  return { parts, packages, counts: { shipped: shipped.length, semantic, bytes } };
}

/**
 * Files of the package that its digested sources name by relative path — imports, re-exports, `import()`,
 * `require()`, import types, `/// <reference path>`, imported assets — and that are not in `shipped`:
 * file → the first file naming it. Each specifier is taken both as the compiler resolves it (`./x.js`
 * → `x.d.ts`) and literally (the `x.js` that runs). Files outside the package are not followed.
 */
async function unshippedImports(dir: string, report: DigestReport, shipped: ReadonlySet<string>): Promise<Map<string, string>> {
  const ts = typescript();
  const out = new Map<string, string>();
  const consider = async (rel: string | undefined, importer: string) => {
    if (!rel || rel.startsWith('../') || rel === '..' || shipped.has(rel) || out.has(rel) || rel.split('/').includes('node_modules')) return;
    const st = await lstat(join(dir, rel)).catch(() => null);
    if (st?.isFile()) out.set(rel, importer);
  };
  const rootAbs = resolve(dir);
  for (const f of report.files) {
    const from = posix.dirname(f.path);
    const specs = (f.specifiers ?? []).filter((x) => x.startsWith('./') || x.startsWith('../') || x === '.' || x === '..');
    for (const p of f.module.pragmas) {
      const m = /^triple-slash:<reference\s+path\s*=\s*["']([^"']+)["']/.exec(p);
      if (m) specs.push(m[1]!.startsWith('.') ? m[1]! : `./${m[1]!}`);
    }
    for (const spec of specs) {
      await consider(posix.normalize(posix.join(from, spec)), f.path);
      const resolved = ts.resolveModuleName(spec, join(rootAbs, f.path), RESOLUTION, ts.sys).resolvedModule?.resolvedFileName;
      if (resolved) await consider(relative(rootAbs, resolved).split(sep).join('/'), f.path);
    }
    for (const a of f.asset_imports) await consider(a, f.path);
  }
  return out;
}

/**
 * The minimal @npmcli/arborist root node npm-packlist reads: its path and normalised manifest, no
 * edges (bundled dependencies live in node_modules; their versions key through the lockfile).
 * Fields npm-packlist iterates are made the shape it expects, so a malformed manifest cannot throw
 * inside its file-system callbacks.
 */
function packTree(dir: string, manifest: Record<string, unknown> | null): Parameters<typeof packlist>[0] {
  const pkg: Record<string, unknown> = { ...(manifest ?? {}) };
  delete pkg.bundleDependencies;
  delete pkg.bundledDependencies;
  if (pkg.files !== undefined) pkg.files = Array.isArray(pkg.files) ? pkg.files.filter((f): f is string => typeof f === 'string') : undefined;
  for (const f of ['main', 'browser'] as const) if (typeof pkg[f] !== 'string') delete pkg[f];
  normalizePackageBin(pkg);
  return { path: resolve(dir), package: pkg, isProjectRoot: true, edgesOut: new Map() };
}

/** Every regular file under `dir` except node_modules and VCS folders; directories that cannot be listed. */
/** Everything under a package but version-control and dependency folders (workspace/list-files.ts). */
function listEverything(dir: string): Promise<{ files: string[]; unreadableDirs: string[] }> {
  return listFiles(dir, { skipDirNames: OPAQUE_SKIPPED_DIRS });
}

const OPAQUE_SKIPPED_DIRS = new Set(['node_modules', '.git', '.hg', '.svn']);

async function hashFile(path: string): Promise<{ hash: string; binary: boolean }> {
  const h = createHash('sha256');
  let binary: boolean | undefined;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    binary ??= chunk.subarray(0, BINARY_SNIFF).includes(0);
    h.update(chunk);
  }
  return { hash: h.digest('hex'), binary: binary ?? false };
}

/** `size:mtime` of a path kiln cannot read, or `missing`: moves whenever the file is written. */
async function statStamp(path: string): Promise<string> {
  try {
    const st = await lstat(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** An error as its code (`EACCES`), never its message: messages carry absolute paths. */
function errorCode(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : e instanceof Error ? e.name : 'error';
}
