/**
 * Digest a tree: the view assembly. Reads and hashes every source file, takes slices from the store
 * where their content is known, sends the rest to the worker pool (paths, not contents), then attaches
 * what slices must not know — package, module path, surface identities — and returns a report.
 *
 * Invariants: the report is a function of the files' contents and relative paths only (sorted, no
 * absolute paths); a store miss, hit or corrupt entry gives the same report.
 *
 * Traced (trace/) as one `digest` span per tree (its package directory relative to the working
 * directory, its counts), with collect.ts's spans, the report memo's `store read`/`store write` and
 * `assemble` inside.
 */
import { stat } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { Slice } from '../facts/slice.js';
import { fileKind, logicalModulePath } from '../parse/language.js';
import { DEFAULT_MAX_FILE_SIZE } from '../parse/decode.js';
import { defaultStoreDir, viewIdOf, type GitViewState } from '../store/format.js';
import { defaultWorkerCount, type DigestPool } from '../pool/pool.js';
import { collectSlices } from './collect.js';
import { declarationIdentity } from '../identity/identity.js';
import { DIGEST_REPORT_VERSION, DIGEST_SCHEMA, EXTRACTOR_VERSION } from '../version.js';
import { buildOutputDirs, listSourceFiles } from './files.js';
import { gitTreeState, type GitTreeState } from './git-state.js';
import type { FileTree } from '../workspace/tree.js';
import { readPackageInfo, type PackageInfo } from './package.js';
import { computeSurfaces, ModuleExports, packageOfSpecifier } from './surface.js';
import { digestParts } from '../digest/hash.js';
import { readManifest, type ManifestRead } from '../store/manifest.js';
import { readViewReport, reportInput, viewReportWrites, writeViewReport, type ReportInput } from './report-memo.js';
import type { DeclarationRecord, DigestReport, EntryRecord, FileRecord } from './report.js';
import { annotate, begin, end, endFailed, span, tracing } from '../trace/record.js';

export interface DigestTreeOptions {
  /** Store directory; `false` disables the store. Default: KILN_STORE or the user cache dir. */
  store?: string | false;
  /** Worker threads; default: the machine's parallelism. 0 digests on the calling thread. */
  workers?: number;
  digestSchema?: number;
  maxFileSize?: number;
  /**
   * Digest exactly these files (relative to the package root, e.g. a tsconfig's file list) instead
   * of every source file under the target directory.
   */
  files?: string[];
  /**
   * A pool owned by the caller, shared across several trees (it is not closed here). Without it a
   * pool is created for this tree's misses and closed before returning.
   */
  pool?: DigestPool;
  /** Called as files complete. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Use and keep the view's memoised report (view/report-memo.ts; default true with a store). Off,
   * every run decodes its slices and assembles.
   */
  reportMemo?: boolean;
  /**
   * Resolve each module-level declaration's `refs` and `shape_refs` (default true): what the closure
   * keys are computed from. False leaves them out of the report (the codegraph does not read them;
   * resolving them is a third of assembly) and turns the report memo off, which keeps whole reports.
   */
  closures?: boolean;
  /**
   * Receives the slices the report is assembled from, keyed by relative path (the codegraph export
   * reads their imports and exports). Given, the memoised report is not used: slices are decoded.
   */
  onSlices?: (slices: ReadonlyMap<string, Slice>) => void;
  /** At most this many misses are digested on the calling thread rather than by a new pool (collect.ts). */
  inlineUpTo?: number;
  /** Slices decoded earlier in this process, by content key; afterwards this run's (collect.ts). */
  sliceCache?: Map<string, Slice>;
  /**
   * Reconcile from git's status and index where the tree is a git checkout (view/git-state.ts): the
   * file list from git, and files git vouches for unread. The report is the same either way. `auto`
   * (the default, with a store) uses git for views whose last manifest named at least
   * GIT_SYNC_MIN_FILES files: below that, listing and hashing is as fast as git's fixed cost (a few
   * git processes, ~25–40 ms here). `KILN_GIT_SYNC=0` turns git off, `KILN_GIT_SYNC=1` makes it the default.
   */
  git?: boolean | 'auto';
  /**
   * Read the files from this tree instead of the working tree: a git tree object
   * (workspace/tree.ts), for a view of another state without a checkout. Needs `files`; the store
   * keeps such views apart from the working tree's (viewIdOf's `state`), and every file's blob id is
   * known from the tree, so a blob whose content the store has seen is never read again.
   */
  tree?: FileTree;
  /**
   * With `tree`: which git view of the package the store keeps it under (default `git`). A caller
   * reading two git states side by side (kiln affected: `git:base`) names the second, so each keeps
   * its own manifest and memoised report; each looks the other's up by content.
   */
  gitView?: GitViewState;
}

/**
 * Views at least this large sync from git by default. Measured on trpc (warm page cache, 2 cores):
 * git's answer costs about as much as listing and hashing 900 files; with a cold page cache, or
 * larger trees, git wins by the reads it saves.
 */
export const GIT_SYNC_MIN_FILES = 1000;

interface Located {
  packageRoot: string;
  files: string[];
  /** Git's view of the target directory, when the files were listed from it. */
  git?: GitTreeState;
}

/** The package root of `target` and, unless the caller names the files itself (`list` false), its source files. */
async function locate(target: string, useGit: (packageRoot: string) => Promise<boolean>, list = true): Promise<Located> {
  const abs = resolve(target);
  let st;
  try {
    st = await stat(abs);
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${target} does not exist`, { producer: 'view' }));
  }
  const startDir = st.isDirectory() ? abs : dirname(abs);
  let packageRoot = startDir;
  for (let dir = startDir; ; dir = dirname(dir)) {
    try {
      await stat(join(dir, 'package.json'));
      packageRoot = dir;
      break;
    } catch {
      if (dirname(dir) === dir) break;
    }
  }
  if (st.isDirectory() && list) {
    const outDirs = await buildOutputDirs(packageRoot);
    const skipped = outDirs.map((d) => relative(abs, join(packageRoot, d)));
    const git = (await useGit(packageRoot)) ? await gitTreeState(abs, skipped) : null;
    const rel = git ? git.files : await listSourceFiles(abs, skipped);
    const prefix = relative(packageRoot, abs).split(sep).join('/');
    const under = (f: string) => (prefix ? `${prefix}/${f}` : f);
    if (git && prefix) git.blobs = new Map([...git.blobs].map(([f, b]) => [under(f), b]));
    return { packageRoot, files: rel.map(under), ...(git ? { git } : {}) };
  }
  return { packageRoot, files: [relative(packageRoot, abs).split(sep).join('/')] };
}

export function digestTree(target: string, options: DigestTreeOptions = {}): Promise<DigestReport> {
  return span('digest', () => digestTreeTraced(target, options));
}

async function digestTreeTraced(target: string, options: DigestTreeOptions): Promise<DigestReport> {
  const t0 = performance.now();
  const tree = options.tree && options.tree.kind !== 'worktree' ? options.tree : undefined;
  const gitView: GitViewState = options.gitView ?? 'git';
  const schema = options.digestSchema ?? DIGEST_SCHEMA;
  const maxFileSize = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  const storeDir: string | null = options.store === false ? null : options.store ?? defaultStoreDir();
  // Git's view pays off only against a manifest (a store) that is large enough (see `git`). The
  // manifest is read here once, as soon as the package root is known, and handed to collectSlices.
  let manifestRead: ManifestRead | undefined;
  let useGit = false;
  const decideGit = async (root: string): Promise<boolean> => {
    const mode = options.git ?? (process.env.KILN_GIT_SYNC === '1' ? true : 'auto');
    if (storeDir === null || mode === false) return false;
    manifestRead = await span('store read', () => readManifest(storeDir, viewIdOf(root), schema), 'what', 'manifest');
    useGit = mode === true || (manifestRead.status === 'hit' && manifestRead.manifest.files.size >= GIT_SYNC_MIN_FILES);
    return useGit && !options.files;
  };
  let packageRoot: string;
  let files: string[];
  let git: GitTreeState | undefined;
  let vouched: ReadonlyMap<string, string> | undefined;
  if (tree) {
    // Another state, from git objects: the caller names the package root and its files.
    if (!options.files) throw new Error('digestTree: a tree other than the working tree needs `files`');
    packageRoot = resolve(target);
    files = [...new Set(options.files.filter((f) => fileKind(f)))].sort();
    if (storeDir !== null) manifestRead = await span('store read', () => readManifest(storeDir, viewIdOf(packageRoot, gitView), schema), 'what', 'manifest');
    // The tree's own blob ids: exact for the bytes it serves (no checkout conversion in between).
    vouched = new Map(
      files.flatMap((f) => {
        const b = tree.blobOf(join(packageRoot, f));
        return b ? [[f, b] as [string, string]] : [];
      }),
    );
  } else {
    const located = await locate(target, decideGit, !options.files);
    packageRoot = located.packageRoot;
    if (storeDir !== null && options.git !== false && !manifestRead) await decideGit(packageRoot); // a file target
    files = options.files ? [...new Set(options.files.filter((f) => fileKind(f)))].sort() : located.files;
    git = (options.files && useGit ? await gitTreeState(packageRoot, await buildOutputDirs(packageRoot)) : located.git) ?? undefined;
    vouched = git?.blobs;
  }
  const viewId = viewIdOf(packageRoot, tree ? gitView : undefined);
  if (tracing()) annotate('package', relative(process.cwd(), packageRoot).split(sep).join('/') || '.');
  const pkg = await readPackageInfo(packageRoot, tree);
  const diagnostics: Diagnostic[] = [];
  if (pkg.invalid) diagnostics.push(diagnostic('KILN_MANIFEST_INVALID', `package.json: ${pkg.invalid}`, { file: 'package.json', producer: 'view' }));
  // With an explicit list (a tsconfig's files), no path of this machine: the caller names the project.
  if (!files.length) diagnostics.push(diagnostic('KILN_NO_SOURCES', options.files ? 'the file list names no TypeScript or JavaScript source' : `no sources under ${relative(process.cwd(), resolve(target)) || '.'}`, { producer: 'view' }));

  // Lookup and write phases (view/collect.ts): store hits through the view's manifest, misses to the
  // pool (started as soon as there is work for it), new slices written back as one pack + manifest.
  const targetRel = relative(packageRoot, resolve(target)).split(sep).join('/');
  const fileScope = options.files ? new Set(files) : files.length === 1 && files[0] === targetRel ? new Set(files) : undefined;
  const inScope = fileScope ? (rel: string) => fileScope.has(rel) : (rel: string) => targetRel === '' || rel.startsWith(`${targetRel}/`);
  const outDirs = await buildOutputDirs(packageRoot, tree);
  // A warm run whose every file matches the view's manifest: the report assembled last time for
  // exactly these contents, if there is one (view/report-memo.ts); otherwise assembled below and kept.
  let memo: { input: string; writes: number; report?: DigestReport } | undefined;
  const memoOn = options.reportMemo !== false && options.closures !== false;
  const memoInput = (entries: ReportInput['files']) =>
    reportInput({ pkg, outDirs, files: entries, diagnostics, digestSchema: schema, maxFileSize });
  const diagnosticsBeforeCollect = diagnostics.length;
  const collected = await collectSlices({
    packageRoot,
    files,
    inScope,
    schema,
    maxFileSize,
    storeDir,
    workers: options.pool ? options.pool.threads : options.workers ?? defaultWorkerCount(),
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.inlineUpTo !== undefined ? { inlineUpTo: options.inlineUpTo } : {}),
    ...(options.sliceCache ? { sliceCache: options.sliceCache } : {}),
    ...(vouched ? { vouched } : {}),
    ...(manifestRead ? { manifestRead } : {}),
    ...(tree ? { tree } : {}),
    viewId,
    // The same package at other states, which share most contents: the working tree's view and the
    // git views (the default one's neighbour is `git:base`, a named one's the default).
    related: tree ? [viewIdOf(packageRoot), viewIdOf(packageRoot, gitView === 'git' ? 'git:base' : 'git')] : [viewIdOf(packageRoot, 'git'), viewIdOf(packageRoot, 'git:base')],
    diagnostics,
    ...(storeDir !== null && memoOn && !options.onSlices
      ? {
          memo: async (entries: ReportInput['files']) => {
            const input = memoInput(entries);
            const got = await span('store read', () => readViewReport(storeDir, viewId, schema, input), 'what', 'report memo');
            memo = { input, writes: got.writes, ...(got.status === 'hit' ? { report: got.report } : {}) };
            return got.status === 'hit';
          },
        }
      : {}),
  });
  const { slices, parsed, storeHits, corrupt, workers, bytes: bytesTotal } = collected;
  options.onSlices?.(slices);

  let report: DigestReport;
  if (collected.memoHit && memo?.report) report = memo.report;
  else {
    // Kept when this run was clean (nothing reported by the store, the pool or a read) and complete;
    // the input is taken before assembly adds the slices' own diagnostics.
    const keep =
      storeDir !== null && memoOn && diagnostics.length === diagnosticsBeforeCollect && files.every((rel) => slices.has(rel))
        ? memo?.input ?? memoInput(files.map((rel) => ({ rel, contentHash: slices.get(rel)!.contentHash, variant: slices.get(rel)!.variant })))
        : undefined;
    const assembling = begin('assemble');
    try {
      report = assemble(pkg, packageRoot, files, slices, diagnostics, schema, outDirs, options.closures !== false);
    } catch (e) {
      endFailed(assembling, e);
      throw e;
    }
    end(assembling);
    if (keep !== undefined) {
      try {
        const r = report;
        await span('store write', async () => writeViewReport(storeDir!, viewId, schema, keep, r, memo?.writes ?? (await viewReportWrites(storeDir!, viewId, schema))), 'what', 'report memo');
      } catch {
        // A memo is an optimisation: the next run assembles again.
      }
    }
  }
  report.stats = {
    files: files.length,
    parsed,
    storeHits,
    corruptEntries: corrupt,
    workers,
    bytes: bytesTotal,
    ms: Math.round(performance.now() - t0),
    sync: tree ? 'tree' : git ? 'git' : 'scan',
    vouched: collected.vouched,
  };
  if (tracing()) {
    annotate('files', files.length);
    annotate('parsed', parsed);
    annotate('store_hits', storeHits);
    annotate('memo', collected.memoHit === true);
  }
  return report;
}

function assemble(
  pkg: PackageInfo,
  _packageRoot: string,
  files: string[],
  slices: Map<string, Slice>,
  diagnostics: Diagnostic[],
  schema: number,
  outDirs: string[],
  closures: boolean,
): DigestReport {
  const fileSet = new Set(slices.keys());
  const modules = new ModuleExports(slices);
  const surfaces = computeSurfaces(pkg, modules, fileSet, outDirs);
  // Identities of a file's declarations, computed once per file (references name them many times).
  const identities = new Map<string, string[]>();
  const identitiesOf = (file: string): string[] => {
    let ids = identities.get(file);
    if (!ids) {
      const s = slices.get(file)!;
      const place = { language: s.language, package: pkg.name, module: logicalModulePath(file) };
      ids = s.decls.map((d) => declarationIdentity(place, d));
      identities.set(file, ids);
    }
    return ids;
  };
  const identityOf = (file: string, decl: number): string => identitiesOf(file)[decl]!;
  const refCache = new Map<string, Map<string, string[]>>();
  const fileRecords: FileRecord[] = [];
  const declarations: DeclarationRecord[] = [];
  for (const rel of files) {
    const slice = slices.get(rel);
    if (!slice) continue;
    const module = logicalModulePath(rel);
    fileRecords.push({
      path: rel,
      language: slice.language,
      variant: slice.variant,
      content_hash: slice.contentHash,
      module: { ...slice.module, identity: `${slice.language}:${pkg.name}//${module}` },
      external_packages: externalPackagesOf(slice),
      asset_imports: assetImportsOf(rel, slice, modules),
      specifiers: specifiersOf(slice),
      ...requiredAssets(rel, slice, modules),
      ...(mayBeScript(slice) ? { script: true } : {}),
    });
    for (const d of slice.diagnostics) {
      diagnostics.push(diagnostic(d.code, d.message, { file: rel, line: d.line, column: d.column, producer: 'extract' }));
    }
    const bySurface = surfaces.byDecl.get(rel);
    const ids = identitiesOf(rel);
    const refsOf = (names: string[] | undefined) => (names ? resolveRefs(rel, slice, names, modules, identityOf, refCache) : undefined);
    slice.decls.forEach((d, i) => {
      const rec: DeclarationRecord = {
        identity: ids[i]!,
        language: slice.language,
        package: pkg.name,
        module,
        path: d.path,
        kind: d.kind,
        semantic_digest: d.semantic === null || !d.uses ? d.semantic : resolvedDigest(d.semantic, d.uses, rel, modules, slice.digestSchema),
        doc_digest: d.doc,
        digest_schema: slice.digestSchema,
        surface: bySurface?.get(i) ?? [],
        span: { file: rel, ...d.span },
      };
      if (d.degraded) rec.degraded = d.degraded;
      if (d.parent === -1) rec.module_level = true;
      if (d.signature) rec.header_digest = d.signature;
      if (d.comments) rec.meaningful_comments = d.comments;
      if (d.shape) {
        rec.shape_digest = d.shape;
        if (closures) {
          rec.shape_refs = refsOf(d.shapeRefs) ?? [];
          rec.refs = refsOf(d.refs) ?? [];
        }
      }
      declarations.push(rec);
    });
  }
  diagnostics.sort((a, b) => (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0) || a.code.localeCompare(b.code));
  const entries: EntryRecord[] = [...surfaces.entries].map(([subpath, table]) => ({
    subpath,
    names: [...table.names.keys()].sort(),
    external: [...new Set([...table.starExternal, ...[...table.external.values()].flatMap((s) => [...s])])].sort(),
    unresolved: [...table.unresolved].sort(),
  }));
  for (const subpath of surfaces.missingEntries) entries.push({ subpath, names: [], external: [], unresolved: [], missing: true });
  entries.sort((a, b) => (a.subpath < b.subpath ? -1 : a.subpath > b.subpath ? 1 : 0));
  return {
    kind: 'kiln-digest-report',
    entries,
    version: DIGEST_REPORT_VERSION,
    digest_schema: schema,
    extractor: EXTRACTOR_VERSION,
    package: pkg.name,
    files: fileRecords,
    declarations,
    diagnostics,
    stats: { files: 0, parsed: 0, storeHits: 0, corruptEntries: 0, workers: 0, bytes: 0, ms: 0 },
  };
}

/**
 * Fold the resolved targets of the imports a declaration uses into its digest. A relative import
 * resolves to the logical module it names inside the package (`./hash.js` from `src/a.ts` and
 * `../hash.js` from `src/sub/b.ts` are both `src/hash`); a bare specifier (another package) stays as
 * written — which package version it means is the unit key's business (lockfile), not the digest's.
 */
function resolvedDigest(semantic: string, uses: string[], file: string, modules: ModuleExports, schema: number): string {
  const targets = uses.map((u) => {
    const [specifier, imported] = u.split('\u0000') as [string, string];
    if (!specifier.startsWith('.')) return `pkg:${specifier}#${imported}`;
    const hit = modules.resolve(file, specifier);
    const target = hit ? logicalModulePath(hit) : `unresolved:${logicalModulePath(posix.join(posix.dirname(file), specifier))}`;
    return `mod:${target}#${imported}`;
  });
  return digestParts(`kiln-resolved/${schema}`, [semantic, ...targets.sort()]);
}

/** Relative imports that name no source file but a file with another extension (`.json`, `.css`). */
function assetImportsOf(file: string, slice: Slice, modules: ModuleExports): string[] {
  const specs = [...slice.imports.map((i) => i.specifier), ...slice.reexports.map((r) => r.specifier), ...(slice.dynamicImports ?? [])];
  const out = new Set<string>();
  for (const spec of specs) {
    if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
    if (modules.resolve(file, spec)) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    if (/\.[A-Za-z0-9]+$/.test(target) && !fileKind(target)) out.add(target);
  }
  return [...out].sort();
}

/**
 * Non-source files a TypeScript file names only in `require()` calls: the compiler does not follow
 * them for types (nor copy them), so they cannot reach a consumer's types through this file.
 */
function requiredAssets(file: string, slice: Slice, modules: ModuleExports): { asset_requires?: string[] } {
  if (!slice.requireOnly?.length || slice.language !== 'typescript') return {};
  const only = new Set(slice.requireOnly);
  const statically = new Set([...slice.imports.map((i) => i.specifier), ...slice.reexports.map((r) => r.specifier)]);
  const out = new Set<string>();
  for (const spec of only) {
    if (statically.has(spec) || !(spec.startsWith('./') || spec.startsWith('../')) || modules.resolve(file, spec)) continue;
    out.add(posix.normalize(posix.join(posix.dirname(file), spec)));
  }
  return out.size ? { asset_requires: [...out].sort() } : {};
}

/** Every module specifier a file names: imports, re-exports, `import()`, `require()`, import types. */
function specifiersOf(slice: Slice): string[] {
  return [...new Set([...slice.imports.map((i) => i.specifier), ...slice.reexports.map((r) => r.specifier), ...(slice.dynamicImports ?? [])])].sort();
}

/**
 * No import, re-export or export of any kind: the file may be a script, whose top-level declarations
 * are global (TypeScript makes a file a module by any of these; a `.d.ts` without them is a script).
 * Over-approximate on purpose — a module without them (`moduleDetection: force`) is also listed.
 */
function mayBeScript(slice: Slice): boolean {
  return !slice.imports.length && !slice.reexports.length && !slice.exports.length && !slice.decls.some((d) => d.parent === -1 && d.exportedAs?.length);
}

/** Packages a file reads, by name (`@scope/pkg`, `pkg`); node: builtins are not packages. */
function externalPackagesOf(slice: Slice): string[] {
  const specs = [
    ...slice.imports.map((i) => i.specifier),
    ...slice.reexports.map((r) => r.specifier),
    ...(slice.dynamicImports ?? []),
  ].filter((s) => !s.startsWith('.') && !s.startsWith('/') && !s.startsWith('node:') && !s.startsWith('#'));
  const out = new Set(specs.map(packageOfSpecifier));
  for (const p of slice.module.pragmas) {
    const m = /types\s*=\s*"([^"]+)"/.exec(p);
    if (m && p.startsWith('triple-slash:')) out.add(m[1]!.startsWith('@') ? packageOfSpecifier(m[1]!) : `@types/${packageOfSpecifier(m[1]!)}`);
  }
  return [...out].sort();
}

/**
 * Resolve the names a module-level declaration mentions to what they mean: identities of
 * declarations in the package (same module, or through imports and re-export chains), `ext:<pkg>`
 * for other packages, `unresolved:<module>` for a relative import that names no file of the package.
 * Names that are neither module-level declarations nor imports were filtered out by the extractor.
 */
/** Module-level declarations of a slice by name (indices in order), built once per slice. */
const topLevelCache = new WeakMap<Slice, Map<string, number[]>>();
function topLevelByName(slice: Slice): Map<string, number[]> {
  let m = topLevelCache.get(slice);
  if (!m) {
    m = new Map();
    slice.decls.forEach((d, i) => {
      if (d.parent !== -1) return;
      const list = m!.get(d.name);
      if (list) list.push(i);
      else m!.set(d.name, [i]);
    });
    topLevelCache.set(slice, m);
  }
  return m;
}

/**
 * @param cache file → name → what the name resolves to, for one assembly: a name resolves the same
 *   way for every declaration of its file.
 */
function resolveRefs(
  file: string,
  slice: Slice,
  names: string[],
  modules: ModuleExports,
  identityOf: (file: string, decl: number) => string,
  cache: Map<string, Map<string, string[]>>,
): string[] {
  let perName = cache.get(file);
  if (!perName) cache.set(file, (perName = new Map()));
  const out = new Set<string>();
  for (const name of names) {
    let resolved = perName.get(name);
    if (!resolved) {
      resolved = resolveName(file, slice, name, modules, identityOf);
      perName.set(name, resolved);
    }
    for (const r of resolved) out.add(r);
  }
  return [...out].sort();
}

function resolveName(
  file: string,
  slice: Slice,
  name: string,
  modules: ModuleExports,
  identityOf: (file: string, decl: number) => string,
): string[] {
  const out = new Set<string>();
  {
    const topLevel = topLevelByName(slice);
    for (const i of topLevel.get(name) ?? []) out.add(identityOf(file, i));
    for (const imp of slice.imports) {
      const b = imp.bindings.find((x) => x.local === name);
      if (!b) continue;
      if (!imp.specifier.startsWith('.')) {
        out.add(`ext:${packageOfSpecifier(imp.specifier)}`);
        continue;
      }
      const target = modules.resolve(file, imp.specifier);
      if (!target) {
        out.add(`unresolved:${logicalModulePath(posix.join(posix.dirname(file), imp.specifier))}`);
        continue;
      }
      const table = modules.exportsOf(target);
      const found = b.imported === '*' ? [...table.names.values()].flat() : table.names.get(b.imported) ?? [];
      for (const t of found) out.add(identityOf(t.file, t.decl));
      const ext = b.imported === '*' ? [...table.external.values()].flatMap((s) => [...s]) : [...(table.external.get(b.imported) ?? [])];
      for (const p of ext) out.add(`ext:${p}`);
      if (!found.length && !ext.length) {
        // Not exported by name: it may come through `export * from 'pkg'`, or the module lies.
        if (table.starExternal.size) for (const p of table.starExternal) out.add(`ext:${p}`);
        else out.add(`unresolved:${logicalModulePath(target)}#${b.imported}`);
      }
      for (const u of table.unresolved) out.add(`unresolved:${u}`);
    }
  }
  return [...out];
}
