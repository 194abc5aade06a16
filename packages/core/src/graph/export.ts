/**
 * `exportGraph(packageDir, { mode })`: one package's codegraph as records (records.ts), the product of
 * `kiln graph export`. Syntax facts — files, modules, declarations with their digests, imports,
 * exports, surfaces — come from the digest pipeline (digestTree and its slices). The checker's facts —
 * compiler diagnostics, module resolution, references, calls, JSDoc links — come from a program built
 * from the package's tsconfig (checked.ts). Manifest facts come from package.json, the tsconfig
 * (`paths`, `references`) and project.json.
 *
 * Modes and provenance (records.ts `Provenance`):
 * - `checked`: the program must type-check. Any compiler error (or no usable tsconfig) fails the export
 *   with KILN_GRAPH_CHECK_FAILED and the errors; no record is produced. Facts of files in the program
 *   are `compiler_checked`; files no tsconfig includes (tests outside `include`, JS without `allowJs`)
 *   are still exported, as `syntax_inferred`, without references or calls.
 * - `allow-errors`: everything that parses is exported; compiler diagnostics become `diagnostic`
 *   records with `diagnoses` edges. A file with errors of its own (or a degraded module) has only
 *   syntax facts, `syntax_inferred`, marked degraded (`type-error`), and no references or calls. An
 *   error-free file of a program that has errors elsewhere is `compiler_unchecked`, its references and
 *   calls included: the checker resolved them, but a type flowing in from a broken module may have
 *   made one wrong or missing, so they are not claimed as checked. When the program has no error at
 *   all the records are exactly those of checked mode (only the header's `mode` differs). Without a
 *   usable tsconfig every source fact is `syntax_inferred` (KILN_GRAPH_UNCHECKED).
 * - `allow-errors` with `syntax: true` (the CLI's `--allow-errors` without `--check`): no program and
 *   no checker at all. The tsconfig is still read (manifest facts, and the compiler's module
 *   resolution for imports: `paths`, package `exports`), but every source fact is `syntax_inferred`
 *   and no compiler diagnostic exists; references are per module-level declaration, from kiln's
 *   slices (graph/syntax.ts), and there are no call or reference sites and no JSDoc links. The
 *   KILN_GRAPH_UNCHECKED diagnostic record says so. Several times faster: parsing is the cost.
 * - Manifest facts are `manifest_declared` in both modes; compiler diagnostics are `compiler_checked`
 *   (the compiler did report them); kiln's own extraction diagnostics are `syntax_inferred`.
 * - Imports: resolved by the compiler's module resolution when a program exists (tsconfig `paths`,
 *   package `exports` through node_modules links), with the file's tier; otherwise by kiln (relative
 *   paths, workspace packages by name through their package.json `exports`/`main`), `syntax_inferred`.
 *
 * Invariants: the records are a function of the package's files, manifests and toolchain — byte-for-
 * byte identical for the same inputs, at any absolute path, with the store cold, warm or off; no
 * absolute path appears in any record.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { CODES } from '../diagnostics/codes.js';
import { digestParts, sha256Hex } from '../digest/hash.js';
import type { Slice } from '../facts/slice.js';
import type { DigestReport } from '../view/report.js';
import { declarationIdentity } from '../identity/identity.js';
import { fileKind, logicalModulePath, type Language } from '../parse/language.js';
import { digestTree } from '../view/digest-tree.js';
import { defaultStoreDir } from '../store/format.js';
import { defaultWorkerCount, type DigestPool } from '../pool/pool.js';
import { DEFAULT_MAX_FILE_SIZE } from '../parse/decode.js';
import { buildOutputDirs } from '../view/files.js';
import { readPackageInfo, type PackageInfo } from '../view/package.js';
import { resolveManifestTarget, resolveInTree } from '../view/resolve.js';
import { ModuleExports, packageOfSpecifier, type ExportTable, type Target } from '../view/surface.js';
import { discoverWorkspace } from '../workspace/discover.js';
import { messageSanitizer } from '../build/compile.js';
import { DIGEST_SCHEMA, EXTRACTOR_VERSION, GRAPH_SCHEMA_VERSION } from '../version.js';
import { buildProgram, checkProgram, checkResolutionMemo, compilerResolve, createResolutionMemo, diagnosticFile, memoResolve, type ResolutionMemo, indexDecls, loadConfig, walkSites, type ConfigLoad, type DocLink, type FileDecls, type LoadedConfig, type LoadedProgram, type ProgramReuse, type Site } from './checked.js';
import { ForeignSlices, implementationOf, inside, resolveMention, type SyntaxTarget } from './syntax.js';
import { createMemo, deepFreeze, formatWithLines, MemoConflict, sortKept, type FileGroups, type Group, type GraphMemo } from './memo.js';
import { findWorkspaceRoot, Locator, type PackageRoot } from './locate.js';
import {
  codePointCompare,
  edgeId,
  exportId,
  fileId,
  formatGraph,
  importId,
  isEdgeKind,
  moduleId,
  namespaceId,
  packageId,
  snapshotId,
  sortRecords,
  type DeclarationNode,
  type DiagnosticNode,
  type GraphEdge,
  type GraphLanguage,
  type GraphMode,
  type GraphSpan,
  type HeaderRecord,
  type ImportForm,
  type ImportNode,
  type KnownRecord,
  type GraphNode,
  type PackageNode,
  type Provenance,
} from './records.js';

export interface GraphExportOptions {
  /** Default `checked`. */
  mode?: GraphMode;
  /**
   * `allow-errors` only: a tolerant export from syntax alone — no program and no checker, every source
   * fact `syntax_inferred`, references per module-level declaration from kiln's slices and no call
   * sites (graph/syntax.ts); several times faster. Default false: the program is built and checked
   * (references, calls and JSDoc links resolved by the checker, compiler diagnostics as records). The
   * CLI's `--allow-errors` sets it unless `--check` is given. Checked mode always runs the checker.
   */
  syntax?: boolean;
  /** tsconfig file name relative to the package root; default: tsconfig.lib.json, tsconfig.build.json, tsconfig.json. */
  tsConfig?: string;
  /** Store directory for slices; `false` disables it (as `digestTree`). */
  store?: string | false;
  /** Worker threads for extraction (as `digestTree`); 0 extracts on the calling thread. */
  workers?: number;
  /** A worker pool owned by the caller, shared by several exports (as `digestTree`; not closed here). */
  pool?: DigestPool;
  maxFileSize?: number;
  /**
   * Keep what this process learnt for the next export of the same package (see GraphSession): the
   * records are the same with or without it.
   */
  session?: GraphSession;
}

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

/** @internal */
export interface SessionState {
  /** This package's slices by content key (the digest's sliceCache). */
  slices: Map<string, Slice>;
  /** Other packages' slices by content key. */
  foreign: Map<string, Slice>;
  program: ProgramReuse;
  /** Reference and call sites per source file (absolute name) of the last checker run. */
  sites: Map<string, { sites: Site[]; links: DocLink[] }>;
  /** What the cached sites were computed for (package name and file list): otherwise they are dropped. */
  stamp: string;
  /** The previous export's records by group, for an export without a program (memo.ts). */
  memo?: GraphMemo;
  /** Set when this package's records could not be grouped: every export builds them whole. */
  memoOff?: boolean;
}

/** Misses digested on the calling thread rather than by a new pool (an edit or two after a previous export). */
const INLINE_MISSES = 16;

export interface GraphExportResult {
  /** False when checked mode refused the project: then `records` is empty. */
  ok: boolean;
  mode: GraphMode;
  /** Header first, then nodes and edges in canonical order (records.ts). */
  records: KnownRecord[];
  /** Everything reported, for people (stderr): the store's notices and, on failure, why. */
  diagnostics: Diagnostic[];
  /**
   * What the export did (not part of the graph): source files, how many were parsed (the rest came
   * from the store or a session), and with the checker how many were walked for references and calls
   * (the rest reused from a session's previous run), and how many groups of records (memo.ts) a
   * session's previous export gave unchanged.
   */
  stats?: { files: number; parsed: number; walked: number; reused: number; phases: GraphExportPhases };
}

/**
 * Where an export's wall time went, in ms (phases overlap nothing except `digest`, which runs while the
 * tsconfig is read and the program built and checked): `digest` the slices (read, hash, store, parse,
 * report assembly) as far as they were not ready when the program was; `config` reading the tsconfig;
 * `program` building it; `check` its diagnostics; `build` files, declarations, exports and — with the
 * checker — reference and call sites; `workspace` finding workspace packages; `imports` resolving
 * imports; `references` syntax references; `finish` sorting and the header.
 */
export interface GraphExportPhases {
  digest: number;
  config: number;
  program: number;
  check: number;
  build: number;
  workspace: number;
  imports: number;
  references: number;
  finish: number;
}

/** The JSONL text of an export (empty when it failed). */
export function graphText(result: GraphExportResult): string {
  const lines = keptLines.get(result);
  return lines ? formatWithLines(result.records, lines) : formatGraph(result.records);
}

/** A session's JSONL lines of kept records, by the result holding them (memo.ts). */
const keptLines = new WeakMap<GraphExportResult, WeakMap<object, string>>();

const PRODUCER = 'graph';
const toPosix = (p: string) => p.split(sep).join('/');
const SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

interface TsDiag {
  code: DiagnosticCode;
  tsCode: string;
  severity: 'error' | 'warning';
  message: string;
  /** Relative to the package root (absent: no location). */
  file?: string;
  absFile?: string;
  span?: GraphSpan;
}

export async function exportGraph(packageDir: string, options: GraphExportOptions = {}): Promise<GraphExportResult> {
  const mode: GraphMode = options.mode ?? 'checked';
  const phases: GraphExportPhases = { digest: 0, config: 0, program: 0, check: 0, build: 0, workspace: 0, imports: 0, references: 0, finish: 0 };
  let lap = performance.now();
  const done = (phase: keyof GraphExportPhases) => {
    const now = performance.now();
    phases[phase] += now - lap;
    lap = now;
  };
  if (mode === 'checked' && options.syntax) {
    throw new KilnError(diagnostic('KILN_USAGE', 'a graph from syntax alone is a tolerant export: it needs mode allow-errors', { producer: PRODUCER }));
  }
  const useChecker = !options.syntax;
  const start = resolve(packageDir);
  try {
    if (!statSync(start).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${packageDir} is not a directory`, { producer: PRODUCER }));
  }
  const root = packageRootOf(start);
  const sanitize = messageSanitizer(root);
  const storeDir: string | null = options.store === false ? null : options.store ?? defaultStoreDir();
  const state = options.session?.stateOf(`${root}\u0000${options.tsConfig ?? ''}`);

  // ---- syntax facts (the digest pipeline, parsing in worker threads) and the tsconfig and program
  // (this thread), overlapped: the program is built and checked once the pool has its work, then the
  // slices awaited. The view's report memo is neither read nor written: the graph needs the slices.
  let slices: ReadonlyMap<string, Slice> = new Map();
  let working!: () => void;
  const poolBusy = new Promise<void>((r) => (working = r));
  const digesting = digestTree(root, {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.pool ? { pool: options.pool } : {}),
    ...(options.maxFileSize !== undefined ? { maxFileSize: options.maxFileSize } : {}),
    reportMemo: false,
    closures: false,
    // On two cores a fresh pool (each thread loads the compiler and warms its JIT) costs more than
    // parsing on this thread, which a syntax export leaves idle (measured: tools/bench-graph.mjs).
    inlineUpTo: !useChecker && options.workers === undefined && !options.pool && defaultWorkerCount() <= 1 ? Number.MAX_SAFE_INTEGER : INLINE_MISSES,
    ...(state ? { sliceCache: state.slices } : {}),
    onProgress: () => working(),
    onSlices: (s) => {
      slices = s;
    },
  });
  digesting.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
  await Promise.race([poolBusy, digesting.then(() => undefined, () => undefined)]);
  done('digest');

  // ---- the tsconfig, and the program when the checker is wanted
  const load = loadConfig(root, options.tsConfig);
  if (options.tsConfig && load.status === 'not-found') {
    await digesting.catch(() => undefined);
    throw new KilnError(diagnostic('KILN_TSCONFIG_NOT_FOUND', `no ${options.tsConfig} in ${toPosix(relative(process.cwd(), root)) || '.'}`, { producer: PRODUCER }));
  }
  const config = load.status === 'ok' ? load.config : undefined;
  done('config');
  const configDiags: TsDiag[] = [];
  if (load.status === 'invalid') {
    for (const e of load.errors) configDiags.push(tsDiag(load.ts, e, 'KILN_TSCONFIG_INVALID', root, sanitize));
    if (!configDiags.length) {
      configDiags.push({ code: 'KILN_TSCONFIG_INVALID', tsCode: 'TS5083', severity: 'error', message: `${toPosix(relative(root, load.configPath))} could not be read`, file: toPosix(relative(root, load.configPath)) });
    }
  }
  const tsDiags: TsDiag[] = [];
  let loaded: LoadedProgram | undefined;
  if (config && useChecker) {
    let raw: readonly TS.Diagnostic[];
    try {
      loaded = buildProgram(config, state?.program);
      done('program');
      raw = checkProgram(loaded);
    } catch (e) {
      throw new KilnError(diagnostic('KILN_BUILD_COMPILER_FAILED', `the compiler failed checking the program: ${sanitize((e as Error).message)}`, { producer: PRODUCER }));
    }
    for (const d of raw) {
      if (d.category !== loaded.ts.DiagnosticCategory.Error && d.category !== loaded.ts.DiagnosticCategory.Warning) continue;
      tsDiags.push(tsDiag(loaded.ts, d, d.category === loaded.ts.DiagnosticCategory.Error ? 'KILN_TYPESCRIPT_ERROR' : 'KILN_TYPESCRIPT_WARNING', root, sanitize));
    }
  }
  done('check');
  const errors = [...configDiags, ...tsDiags].filter((d) => d.severity === 'error');
  const report = await digesting;
  const people: Diagnostic[] = [...report.diagnostics];
  const [pkg, outDirs] = await Promise.all([readPackageInfo(root), buildOutputDirs(root)]);
  done('digest');

  if (mode === 'checked' && (!loaded || errors.length)) {
    const why = load.status === 'not-found'
      ? `no tsconfig in the package (tried ${load.tried.join(', ')}): a checked graph needs a program`
      : `the project does not type-check (${errors.length} error${errors.length === 1 ? '' : 's'})`;
    const failure: Diagnostic[] = [diagnostic('KILN_GRAPH_CHECK_FAILED', why, { producer: PRODUCER })];
    if (load.status === 'not-found') failure.push(diagnostic('KILN_TSCONFIG_NOT_FOUND', `tried ${load.tried.join(', ')}`, { producer: PRODUCER }));
    for (const d of errors) failure.push(toDiagnostic(d));
    return { ok: false, mode, records: [], diagnostics: [...failure, ...people.filter((d) => d.severity === 'error')] };
  }

  const unchecked = loaded ? undefined : uncheckedReason(load, root, useChecker);
  let sites: SessionState['sites'] | undefined;
  if (state && loaded) {
    // Sites name identities of this package: they are kept only for the same package name and files.
    const stamp = JSON.stringify([pkg.name, report.files.map((f) => f.path)]);
    if (stamp !== state.stamp) state.sites.clear();
    state.stamp = stamp;
    sites = state.sites;
  }
  people.push(...[...configDiags, ...tsDiags].map(toDiagnostic));
  if (unchecked) people.push(diagnostic('KILN_GRAPH_UNCHECKED', unchecked, { producer: PRODUCER }));
  const assemble = async (memo: GraphMemo | undefined) => {
    const b = new Builder(root, pkg, slices, report.files, outDirs, config, loaded, mode, sites, memo, config && !loaded ? resolutionMemoOf(config.configPath) : undefined);
    b.build(report, [...configDiags, ...tsDiags], load, unchecked);
    done('build');
    await b.resolveWorkspace();
    done('workspace');
    b.emitImports();
    done('imports');
    if (!loaded) {
      await b.emitSyntaxReferences(new ForeignSlices(b.locator, storeDir, DIGEST_SCHEMA, options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE, state?.foreign));
    }
    done('references');
    return { records: b.finish(), walked: b.walked, reused: b.reused };
  };
  // A session keeps the groups of an export without a program (memo.ts); the checker's reuse is its own.
  if (state && (loaded || state.memoOff)) state.memo = undefined;
  const memo = state && !loaded && !state.memoOff ? (state.memo ??= createMemo()) : undefined;
  let built: Awaited<ReturnType<typeof assemble>>;
  try {
    built = await assemble(memo);
  } catch (e) {
    if (!state) throw e;
    // Whatever the memo was given is not trusted again. A conflict means this package's records
    // cannot be grouped (memo.ts): the session builds them whole from now on.
    state.memo = undefined;
    if (!(e instanceof MemoConflict)) throw e;
    state.memoOff = true;
    built = await assemble(undefined);
  }
  done('finish');
  for (const k of Object.keys(phases) as (keyof GraphExportPhases)[]) phases[k] = Math.round(phases[k] * 10) / 10;
  const result: GraphExportResult = { ok: true, mode, records: built.records, diagnostics: people, stats: { files: report.stats.files, parsed: report.stats.parsed, walked: built.walked, reused: built.reused, phases } };
  if (memo && state?.memo === memo) keptLines.set(result, memo.lines);
  return result;
}

/** Why no checker ran (the KILN_GRAPH_UNCHECKED message). */
function uncheckedReason(load: ConfigLoad, root: string, wanted: boolean): string {
  if (load.status === 'not-found') return `no tsconfig in the package (tried ${load.tried.join(', ')}): exported from syntax alone`;
  if (load.status === 'invalid') return `${toPosix(relative(root, load.configPath))} could not be used: exported from syntax alone`;
  return wanted ? 'exported from syntax alone' : 'tolerant export from syntax alone: no program was built, references are syntax_inferred and there are no call sites (add --check to run the type checker)';
}

function packageRootOf(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
    if (dirname(d) === d) return dir;
  }
}

function tsDiag(ts: typeof TS, d: TS.Diagnostic, code: DiagnosticCode, root: string, sanitize: (m: string) => string): TsDiag {
  const out: TsDiag = {
    code,
    tsCode: `TS${d.code}`,
    severity: d.category === ts.DiagnosticCategory.Error ? 'error' : 'warning',
    message: sanitize(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  };
  if (d.file) {
    out.absFile = d.file.fileName;
    out.file = diagnosticFile(root, d.file.fileName);
    if (d.start !== undefined) {
      const s = ts.getLineAndCharacterOfPosition(d.file, d.start);
      const e = ts.getLineAndCharacterOfPosition(d.file, d.start + (d.length ?? 0));
      out.span = { file: out.file, startLine: s.line + 1, startColumn: s.character + 1, endLine: e.line + 1, endColumn: e.character + 1 };
    }
  }
  return out;
}

function toDiagnostic(d: TsDiag): Diagnostic & { tsCode: string } {
  const fields: { file?: string; line?: number; column?: number; producer: string } = { producer: PRODUCER };
  if (d.file !== undefined) fields.file = d.file;
  if (d.span) {
    fields.line = d.span.startLine;
    fields.column = d.span.startColumn;
  }
  return { ...diagnostic(d.code, `${d.tsCode}: ${d.message}`, fields), tsCode: d.tsCode };
}

// ------------------------------------------------------------------ the builder

interface ImportAnswer {
  target: string | null;
  external: boolean;
  by: ImportNode['resolved_by'];
  /** The file a bare specifier resolved to: a file of this package, or another's (absolute). */
  found?: { own?: string; abs?: string };
}

interface PendingImport {
  rel: string;
  specifier: string;
  forms: Set<ImportForm>;
  typeOnly: boolean;
  bindings: { imported: string; local: string; type_only: boolean }[];
  reexports: { imported: string; exported: string }[];
  reexportAll: boolean;
}

class Builder {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly edges = new Map<string, GraphEdge>();
  private readonly tiers = new Map<string, Provenance>();
  private readonly fileErrors = new Set<string>();
  private programHasErrors = false;
  readonly locator = new Locator();
  /** Files whose sites the checker walked in this run. */
  walked = 0;
  /** (file, bare specifier) → the file it resolved to, for syntax references across packages. */
  private readonly importFiles = new Map<string, { own?: string; abs?: string }>();
  private unchecked: string | undefined;
  private readonly decls = new Map<string, FileDecls | null>();
  private readonly modules: ModuleExports;
  private readonly fileSet: Set<string>;
  private readonly pkgId: string;
  private readonly manifests: { path: string; content_hash: string }[] = [];
  private workspace: WorkspaceMap = new Map();
  private readonly pendingImports: PendingImport[] = [];
  private header!: Omit<HeaderRecord, 'snapshot' | 'counts' | 'languages' | 'degraded'>;

  constructor(
    private readonly root: string,
    private readonly pkg: PackageInfo,
    private readonly slices: ReadonlyMap<string, Slice>,
    private readonly files: { path: string; content_hash: string }[],
    private readonly outDirs: string[],
    private readonly config: LoadedConfig | undefined,
    private readonly loaded: LoadedProgram | undefined,
    private readonly mode: GraphMode,
    /** A session's sites of the previous checker run, replaced by this run's. */
    private readonly siteCache?: Map<string, { sites: Site[]; links: DocLink[] }>,
    /** A session's groups of records of the previous export (memo.ts); only without a program. */
    private memo?: GraphMemo,
    /** The module resolution answers kept for this tsconfig (checked.ts), checked before the first is used. */
    private readonly resolutions?: ResolutionMemo,
  ) {
    this.modules = new ModuleExports(slices as Map<string, Slice>);
    this.fileSet = new Set(slices.keys());
    this.pkgId = packageId(pkg.name);
  }

  // ---------------------------------------------------------------- groups (memo.ts)

  /** Groups replayed from the memo. */
  reused = 0;
  /** The group being built, which every new record joins. */
  private capture: Group<unknown> | null = null;
  /** Groups built in this export: frozen when it finishes. */
  private readonly built: Group<unknown>[] = [];
  /** Whether `resolutions` was checked against the file system in this export (once, before its first use). */
  private resolutionsChecked = false;
  /** How each file's imports resolved (a string compared between exports). */
  private readonly answers = new Map<string, string>();

  private groupsOf(rel: string): FileGroups {
    let g = this.memo!.files.get(rel);
    if (!g) {
      g = {};
      this.memo!.files.set(rel, g);
    }
    return g;
  }

  /** Build one group with `body`, its records captured; without a memo just run it. */
  private group<K>(key: K, body: () => void): Group<K> | undefined {
    if (!this.memo) {
      body();
      return undefined;
    }
    const g: Group<K> = { key, nodes: [], edges: [] };
    this.capture = g;
    try {
      body();
    } finally {
      this.capture = null;
    }
    this.built.push(g);
    return g;
  }

  private replay(g: Group<unknown>): void {
    for (const n of g.nodes) {
      if (this.nodes.has(n.id)) throw new MemoConflict(n.id);
      this.nodes.set(n.id, n);
    }
    for (const e of g.edges) {
      if (this.edges.has(e.id)) throw new MemoConflict(e.id);
      this.edges.set(e.id, e);
    }
    this.reused++;
  }

  // ---------------------------------------------------------------- helpers

  private langOf(rel: string): Language {
    return this.slices.get(rel)?.language ?? fileKind(rel)?.language ?? 'typescript';
  }

  /** Module ids and declaration identities, computed once per file (they are asked for many times). */
  private readonly modIds = new Map<string, string>();
  private readonly identities = new Map<string, string[]>();

  private modId(rel: string): string {
    let id = this.modIds.get(rel);
    if (id === undefined) {
      id = moduleId(this.langOf(rel), this.pkg.name, logicalModulePath(rel));
      this.modIds.set(rel, id);
    }
    return id;
  }

  private identityOf(rel: string, i: number): string {
    let ids = this.identities.get(rel);
    if (!ids) {
      const s = this.slices.get(rel)!;
      const module = logicalModulePath(rel);
      ids = s.decls.map((d) => declarationIdentity({ language: s.language, package: this.pkg.name, module }, d));
      this.identities.set(rel, ids);
    }
    return ids[i]!;
  }

  private tier(rel: string): Provenance {
    return this.tiers.get(rel) ?? 'syntax_inferred';
  }

  private addNode(r: GraphNode): void {
    const had = this.nodes.get(r.id);
    if (had) {
      if (this.memo && Object.isFrozen(had)) throw new MemoConflict(r.id);
      return;
    }
    this.nodes.set(r.id, r);
    this.capture?.nodes.push(r);
  }

  private addEdge<K extends GraphEdge['kind']>(
    kind: K,
    from: string,
    to: string,
    provenance: Provenance,
    language: GraphLanguage,
    extra: Omit<Extract<GraphEdge, { kind: K }>, 'kind' | 'id' | 'language' | 'provenance' | 'degraded' | 'from' | 'to'>,
    merge?: (into: Extract<GraphEdge, { kind: K }>) => void,
  ): void {
    const id = edgeId(kind, from, to, provenance);
    const had = this.edges.get(id) as Extract<GraphEdge, { kind: K }> | undefined;
    if (had) {
      if (this.memo && Object.isFrozen(had)) throw new MemoConflict(id);
      merge?.(had);
      return;
    }
    const e = { kind, id, language, provenance, degraded: false, from, to, ...extra } as unknown as GraphEdge;
    this.edges.set(id, e);
    this.capture?.edges.push(e);
  }

  /** Where a resolved file belongs: a module of this package first, else wherever the locator says. */
  private readonly places = new Map<string, ReturnType<Builder['placeOfUncached']>>();
  private placeOf(absFile: string): { external: boolean; moduleId: string; package: string } | undefined {
    if (this.places.has(absFile)) return this.places.get(absFile);
    const p = this.placeOfUncached(absFile);
    this.places.set(absFile, p);
    return p;
  }

  private placeOfUncached(absFile: string): { external: boolean; moduleId: string; package: string } | undefined {
    const rel = toPosix(relative(this.root, absFile));
    if (!rel.startsWith('../') && this.slices.has(rel)) return { external: false, moduleId: this.modId(rel), package: this.pkg.name };
    const p = this.locator.place(absFile);
    if (!p) return undefined;
    return p.external ? { external: true, moduleId: packageId(p.package), package: p.package } : { external: false, moduleId: p.moduleId, package: p.package };
  }

  /** The declarations of any source file the program knows, for resolving targets. */
  private declsOf = (sf: TS.SourceFile): FileDecls | undefined => {
    const key = sf.fileName;
    const cached = this.decls.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let out: FileDecls | null = null;
    const p = this.loaded!;
    const rel = toPosix(relative(this.root, sf.fileName));
    if (!rel.startsWith('../') && this.slices.has(rel)) {
      out = indexDecls(sf, this.slices.get(rel)!, (i) => this.identityOf(rel, i));
    } else if (!p.program.isSourceFileDefaultLibrary(sf) && !toPosix(sf.fileName).includes('/node_modules/')) {
      // A workspace package reached through a node_modules link counts as an "external library" to
      // the compiler, but its real path is a workspace source: only real node_modules paths are external.
      const slice = this.locator.sliceOf(sf.fileName);
      if (slice) out = indexDecls(sf, slice, (i) => this.locator.identityIn(sf.fileName, i));
    }
    this.decls.set(key, out);
    return out ?? undefined;
  };

  // ---------------------------------------------------------------- build

  build(report: DigestReport, diags: TsDiag[], load: ConfigLoad, unchecked?: string): void {
    const p = this.loaded;
    this.unchecked = unchecked;
    const rootPosix = toPosix(this.root);
    // Which files failed checking.
    for (const d of diags) {
      if (d.severity !== 'error') continue;
      this.programHasErrors = true;
      if (d.absFile) {
        const rel = toPosix(relative(rootPosix, toPosix(d.absFile)));
        if (!rel.startsWith('../')) this.fileErrors.add(rel);
      }
    }
    for (const f of report.files) {
      const inProgram = p ? !!p.program.getSourceFile(join(this.root, f.path)) : false;
      let tier: Provenance;
      if (!inProgram || this.fileErrors.has(f.path) || f.module.degraded) tier = 'syntax_inferred';
      else tier = this.programHasErrors ? 'compiler_unchecked' : 'compiler_checked';
      this.tiers.set(f.path, tier);
    }

    this.openMemo(report);
    this.emitPackage(load);
    const tables = this.exportTables();
    const notes = this.emitNamespaces();
    this.emitFiles(report, notes);
    this.emitModuleExports(tables);
    this.collectImports();
    if (p) this.emitSites(p);
    this.emitDiagnostics(report, diags);
    const configRel = load.status === 'ok' ? toPosix(relative(this.root, load.config.configPath)) : load.status === 'invalid' ? toPosix(relative(this.root, load.configPath)) : null;
    this.header = {
      kind: 'header',
      id: `header:${this.pkg.name}`,
      language: 'json',
      provenance: 'manifest_declared',
      format: 'kiln-codegraph',
      schema_version: GRAPH_SCHEMA_VERSION,
      mode: this.mode,
      root: '.',
      package: this.pkg.name,
      toolchain: { kiln_extractor: EXTRACTOR_VERSION, digest_schema: DIGEST_SCHEMA, typescript: load.status === 'ok' ? load.config.version : load.version },
      tsconfig: configRel,
    };
  }

  /**
   * Drop the memo's groups when what they all depend on changed (package name and entries, the source
   * files, output directories), or use no memo when two files would share a module id.
   */
  private openMemo(report: DigestReport): void {
    const memo = this.memo;
    if (!memo) return;
    const ids = new Set(report.files.map((f) => this.modId(f.path)));
    if (ids.size !== report.files.length || this.slices.size !== report.files.length) {
      memo.files.clear();
      memo.epoch = '';
      this.memo = undefined;
      return;
    }
    const epoch = JSON.stringify([this.pkg.name, this.pkg.entries, report.files.map((f) => f.path), this.outDirs]);
    if (epoch !== memo.epoch) {
      memo.epoch = epoch;
      memo.files.clear();
      memo.tables.clear();
      memo.namespaces = undefined;
    }
  }

  /**
   * Every module's export table; with a memo, each projected to what records are made of (identities
   * and kinds of the targets, before and after choosing an overload's implementation, and the packages
   * a name comes from), its version moved when the projection differs from the previous export's.
   */
  private exportTables(): Map<string, ExportTable> {
    const tables = new Map<string, ExportTable>();
    const sliceOf = (f: string) => this.slices.get(f);
    for (const rel of [...this.slices.keys()].sort(codePointCompare)) {
      const table = this.modules.exportsOf(rel);
      tables.set(rel, table);
      if (!this.memo) continue;
      const parts: string[] = [];
      for (const name of [...new Set([...table.names.keys(), ...table.external.keys()])].sort(codePointCompare)) {
        const targets = table.names.get(name) ?? [];
        parts.push(
          name,
          targets.map((t) => this.identityOf(t.file, t.decl)).join('\u0001'),
          implementationOf(targets, sliceOf).map((t) => `${this.identityOf(t.file, t.decl)}\u0002${this.slices.get(t.file)!.decls[t.decl]!.kind}`).join('\u0001'),
          [...(table.external.get(name) ?? [])].sort(codePointCompare).join('\u0001'),
        );
      }
      const projected = parts.join('\u0000');
      if (this.memo.tables.get(rel)?.projected !== projected) this.memo.tables.set(rel, { projected, version: ++this.memo.versions });
    }
    return tables;
  }

  /** The current version of a module's export table (memo.ts). */
  private tableVersion(rel: string): number {
    return this.memo?.tables.get(rel)?.version ?? -1;
  }

  private emitPackage(load: ConfigLoad): void {
    const manifestBytes = readBytes(join(this.root, 'package.json'));
    let manifest: Record<string, unknown> | null = null;
    if (manifestBytes !== undefined) {
      this.manifests.push({ path: 'package.json', content_hash: sha256Hex(manifestBytes) });
      try {
        const v = JSON.parse(manifestBytes.toString('utf8')) as unknown;
        if (v && typeof v === 'object' && !Array.isArray(v)) manifest = v as Record<string, unknown>;
      } catch {
        // reported by the digest pipeline (KILN_MANIFEST_INVALID)
      }
    }
    const dependencies: { name: string; section: string }[] = [];
    for (const section of SECTIONS) {
      const deps = manifest?.[section];
      if (!deps || typeof deps !== 'object' || Array.isArray(deps)) continue;
      for (const name of Object.keys(deps).sort(codePointCompare)) dependencies.push({ name, section });
    }
    dependencies.sort((a, b) => codePointCompare(a.name, b.name) || codePointCompare(a.section, b.section));

    let tsconfig: PackageNode['tsconfig'] = null;
    const refTargets: string[] = [];
    const configPath = load.status === 'ok' ? load.config.configPath : load.status === 'invalid' ? load.configPath : undefined;
    if (configPath) {
      const chain = [configPath];
      if (load.status === 'ok') {
        const cf = load.config.parsed.options.configFile as (TS.TsConfigSourceFile & { extendedSourceFiles?: string[] }) | undefined;
        chain.push(...(cf?.extendedSourceFiles ?? []));
      }
      for (const f of chain) {
        const bytes = readBytes(f);
        if (bytes !== undefined) this.manifests.push({ path: diagnosticFile(this.root, f), content_hash: sha256Hex(bytes) });
      }
      if (load.status === 'ok') {
        const opts = load.config.options;
        const paths: Record<string, string[]> = {};
        for (const k of Object.keys(opts.paths ?? {}).sort(codePointCompare)) paths[k] = [...opts.paths![k]!];
        const references = (load.config.parsed.projectReferences ?? []).map((r) => toPosix(relative(this.root, r.path))).sort(codePointCompare);
        tsconfig = { file: toPosix(relative(this.root, configPath)), paths, references };
        for (const r of load.config.parsed.projectReferences ?? []) {
          const dir = r.path.endsWith('.json') ? dirname(r.path) : r.path;
          const other = this.locator.packageOfDir(dir);
          if (other && other.root !== this.root) refTargets.push(other.name);
        }
      }
    }
    let project: PackageNode['project'] = null;
    const projectBytes = readBytes(join(this.root, 'project.json'));
    const implicit: string[] = [];
    if (projectBytes !== undefined) {
      this.manifests.push({ path: 'project.json', content_hash: sha256Hex(projectBytes) });
      try {
        const pj = JSON.parse(projectBytes.toString('utf8')) as { name?: unknown; tags?: unknown; implicitDependencies?: unknown };
        const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
        implicit.push(...strings(pj.implicitDependencies).filter((x) => !x.startsWith('!')));
        project = { name: typeof pj.name === 'string' ? pj.name : null, tags: strings(pj.tags).sort(codePointCompare), implicit_dependencies: strings(pj.implicitDependencies).sort(codePointCompare) };
      } catch {
        project = { name: null, tags: [], implicit_dependencies: [] };
      }
    }
    this.manifests.sort((a, b) => codePointCompare(a.path, b.path));
    const rec: PackageNode = {
      kind: 'package',
      id: this.pkgId,
      language: 'json',
      provenance: 'manifest_declared',
      degraded: !!this.pkg.invalid,
      ...(this.pkg.invalid ? { degraded_reason: 'manifest-invalid' } : {}),
      name: this.pkg.name,
      manifests: this.manifests,
      dependencies,
      entries: this.pkg.entries.map((e) => e.subpath),
      tsconfig,
      project,
    };
    this.addNode(rec);
    const via = new Map<string, Set<string>>();
    const add = (name: string, how: string) => {
      if (name === this.pkg.name) return;
      const set = via.get(name) ?? new Set<string>();
      set.add(how);
      via.set(name, set);
    };
    for (const d of dependencies) add(d.name, d.section);
    for (const r of refTargets) add(r, 'tsconfig-reference');
    for (const i of implicit) add(i, 'project.json');
    for (const [name, hows] of via) {
      this.addEdge('imports', this.pkgId, packageId(name), 'manifest_declared', 'json', { via: [...hows].sort(codePointCompare), type_only: false });
    }
  }

  private emitFiles(report: DigestReport, notes: ReadonlyMap<string, string[]>): void {
    const byFile = new Map<string, typeof report.declarations>();
    for (const d of report.declarations) {
      const list = byFile.get(d.span.file) ?? [];
      list.push(d);
      byFile.set(d.span.file, list);
    }
    for (const f of report.files) {
      const slice = this.slices.get(f.path);
      if (!slice) continue;
      const mod = this.modId(f.path);
      const records = byFile.get(f.path) ?? [];
      const reason = f.module.degraded ?? (this.fileErrors.has(f.path) ? 'type-error' : undefined);
      const namespaces = notes.get(mod) ?? [];
      let extra = '';
      if (this.memo) {
        // Everything the file's records take besides its slice: the report's view of it, its namespaces.
        const parts = [f.content_hash, f.variant, f.module.digest, reason ?? '', this.tier(f.path), namespaces.join('\u0001')];
        for (const r of records) parts.push(r.identity, r.semantic_digest ?? '', r.surface.join('\u0001'));
        extra = parts.join('\u0000');
        const kept = this.memo.files.get(f.path)?.files;
        if (kept && kept.key.slice === slice && kept.key.extra === extra) {
          this.replay(kept);
          continue;
        }
      }
      const g = this.group({ slice, extra }, () => this.emitFile(f, slice, mod, records, reason, namespaces));
      if (g) this.groupsOf(f.path).files = g;
    }
  }

  private emitFile(f: DigestReport['files'][number], slice: Slice, mod: string, records: DigestReport['declarations'], reason: string | undefined, namespaces: string[]): void {
    const tier = this.tier(f.path);
    const lang = slice.language;
    const fid = fileId(this.pkg.name, f.path);
    const degraded = reason ? { degraded: true, degraded_reason: reason } : { degraded: false };
    this.addNode({ kind: 'file', id: fid, language: lang, provenance: tier, ...degraded, package: this.pkg.name, path: f.path, variant: f.variant, content_hash: f.content_hash, module: mod });
    this.addNode({
      kind: 'module',
      id: mod,
      language: lang,
      provenance: tier,
      ...degraded,
      package: this.pkg.name,
      module_path: logicalModulePath(f.path),
      file: f.path,
      module_digest: f.module.digest,
      namespaces,
      internal: !namespaces.length,
    });
    this.addEdge('contains', this.pkgId, fid, tier, lang, {});
    this.addEdge('contains', this.pkgId, mod, tier, lang, {});
    this.addEdge('defines', fid, mod, tier, lang, {});
    slice.decls.forEach((d, i) => {
      const r = records[i];
      const id = this.identityOf(f.path, i);
      const parent = d.parent === -1 ? null : this.identityOf(f.path, d.parent);
      const rec: DeclarationNode = {
        kind: 'declaration',
        id,
        language: lang,
        provenance: tier,
        degraded: !!d.degraded,
        ...(d.degraded ? { degraded_reason: d.degraded } : {}),
        span: { file: f.path, ...d.span },
        package: this.pkg.name,
        module: mod,
        module_path: logicalModulePath(f.path),
        path: d.path,
        name: d.name,
        decl_kind: d.kind,
        parent,
        semantic_digest: r && r.identity === id ? r.semantic_digest : d.semantic,
        doc_digest: d.doc,
        digest_schema: slice.digestSchema,
        header_digest: d.signature ?? null,
        surface: r && r.identity === id ? [...r.surface] : [],
        exported_as: [...new Set(d.exportedAs ?? [])].sort(codePointCompare),
      };
      this.addNode(rec);
      this.addEdge('defines', parent ?? mod, id, tier, lang, {});
    });
  }

  /**
   * The entry points' namespaces and their exports; returns, per module, the namespaces it is part of
   * (sorted; a module in none is internal). One group: kept while every export table is.
   */
  private emitNamespaces(): Map<string, string[]> {
    const entryFiles = this.pkg.entries.map((entry) => entry.targets.map((t) => resolveManifestTarget(t, this.fileSet, this.outDirs)).find((f) => f !== undefined));
    const key = this.memo ? entryFiles.map((f) => (f === undefined ? '-' : `${f}\u0001${this.tableVersion(f)}`)).join('\u0000') : '';
    const kept = this.memo?.namespaces;
    if (kept && kept.key === key) {
      this.replay(kept);
      return kept.notes;
    }
    const moduleNamespaces = new Map<string, Set<string>>();
    const note = (mod: string, ns: string) => {
      const set = moduleNamespaces.get(mod) ?? new Set<string>();
      set.add(ns);
      moduleNamespaces.set(mod, set);
    };
    const g = this.group(key, () => {
      this.pkg.entries.forEach((entry, i) => {
        const file = entryFiles[i];
        const ns = namespaceId(this.pkg.name, entry.subpath);
        const table = file ? this.modules.exportsOf(file) : undefined;
        const names = new Set<string>([...(table?.names.keys() ?? []), ...(table?.external.keys() ?? [])]);
        const lang: GraphLanguage = file ? this.langOf(file) : 'json';
        this.addNode({
          kind: 'namespace',
          id: ns,
          language: lang,
          provenance: 'manifest_declared',
          degraded: !file,
          ...(!file ? { degraded_reason: 'entry-not-in-tree' } : {}),
          package: this.pkg.name,
          entry: entry.subpath,
          module: file ? this.modId(file) : null,
          names: [...names].sort(codePointCompare),
        });
        this.addEdge('contains', this.pkgId, ns, 'manifest_declared', 'json', {});
        if (!file || !table) return;
        this.addEdge('contains', ns, this.modId(file), 'manifest_declared', lang, {});
        note(this.modId(file), ns);
        this.exportEdges(ns, table.names, (t) => this.tier(t));
        for (const targets of table.names.values()) for (const t of targets) note(this.modId(t.file), ns);
      });
    });
    const notes = new Map<string, string[]>();
    for (const [mod, set] of moduleNamespaces) notes.set(mod, [...set].sort(codePointCompare));
    if (g && this.memo) this.memo.namespaces = { ...g, notes };
    return notes;
  }

  /** Each module's own exports: one group per module, kept while its export table is. */
  private emitModuleExports(tables: ReadonlyMap<string, ExportTable>): void {
    for (const [rel, table] of tables) {
      const version = this.tableVersion(rel);
      const kept = this.memo?.files.get(rel)?.exports;
      if (kept && kept.key === version) {
        this.replay(kept);
        continue;
      }
      const g = this.group(version, () => {
        const mod = this.modId(rel);
        const lang = this.langOf(rel);
        const tier = this.tier(rel);
        const names = new Set<string>([...table.names.keys(), ...table.external.keys()]);
        for (const name of [...names].sort(codePointCompare)) {
          const eid = exportId(mod, name);
          const targets = table.names.get(name) ?? [];
          this.addNode({
            kind: 'export',
            id: eid,
            language: lang,
            provenance: tier,
            degraded: false,
            package: this.pkg.name,
            module: mod,
            name,
            targets: [...new Set(targets.map((t) => this.identityOf(t.file, t.decl)))].sort(codePointCompare),
            external: [...(table.external.get(name) ?? [])].sort(codePointCompare),
          });
          this.addEdge('contains', mod, eid, tier, lang, {});
          for (const t of targets) this.addEdge('exports', eid, this.identityOf(t.file, t.decl), tier, lang, { names: [name] });
        }
      });
      if (g) this.groupsOf(rel).exports = g;
    }
  }

  private exportEdges(from: string, names: Map<string, { file: string; decl: number }[]>, tierOf: (file: string) => Provenance): void {
    for (const [name, targets] of names) {
      for (const t of targets) {
        const to = this.identityOf(t.file, t.decl);
        this.addEdge('exports', from, to, tierOf(t.file), this.langOf(t.file), { names: [name] }, (e) => {
          if (!e.names.includes(name)) e.names = [...e.names, name].sort(codePointCompare);
        });
      }
    }
  }

  // ---------------------------------------------------------------- imports

  private collectImports(): void {
    for (const rel of [...this.slices.keys()].sort(codePointCompare)) {
      const s = this.slices.get(rel)!;
      const bySpec = new Map<string, PendingImport>();
      const get = (specifier: string) => {
        let p = bySpec.get(specifier);
        if (!p) {
          p = { rel, specifier, forms: new Set(), typeOnly: true, bindings: [], reexports: [], reexportAll: false };
          bySpec.set(specifier, p);
        }
        return p;
      };
      for (const imp of s.imports) {
        const p = get(imp.specifier);
        p.forms.add('import');
        if (!imp.typeOnly && !(imp.bindings.length && imp.bindings.every((b) => b.typeOnly))) p.typeOnly = false;
        for (const b of imp.bindings) p.bindings.push({ imported: b.imported, local: b.local, type_only: imp.typeOnly || b.typeOnly });
      }
      for (const re of s.reexports) {
        const p = get(re.specifier);
        p.forms.add('re-export');
        if (!re.typeOnly) p.typeOnly = false;
        if (re.names === '*') p.reexportAll = true;
        else for (const n of re.names) p.reexports.push({ imported: n.imported, exported: n.exported });
      }
      for (const spec of s.dynamicImports ?? []) {
        const p = get(spec);
        p.forms.add('dynamic');
        p.typeOnly = false;
      }
      this.pendingImports.push(...bySpec.values());
    }
  }

  /**
   * Workspace packages by name, for bare specifiers kiln resolves itself: the workspace's packages,
   * and this one if it is not among them. The workspace's map is kept for the process (by workspace
   * root) while every file it was read from, and the directories packages are listed in, has the same
   * size and modification time (workspaceStamp).
   */
  async resolveWorkspace(): Promise<void> {
    const wsRoot = findWorkspaceRoot(this.root);
    let base: WorkspaceMap = new Map();
    let roots: string[] = [];
    const kept = wsRoot ? workspaceMemos.get(wsRoot) : undefined;
    if (kept && kept.stamp === workspaceStamp(wsRoot, kept.roots)) {
      base = kept.map;
      roots = kept.roots;
    } else if (wsRoot) {
      const before = workspaceStamp(wsRoot, []);
      try {
        const ws = await discoverWorkspace(wsRoot);
        for (const p of ws.projects) roots.push(join(wsRoot, p.root));
      } catch {
        // no workspace: only this package
      }
      // Stamped before the manifests are read: a change while they are read makes the next run read again.
      const stamp = workspaceStamp(wsRoot, roots);
      for (const r of roots) {
        const info = await readPackageInfo(r);
        if (!info.found || info.invalid) continue;
        if (!base.has(info.name)) base.set(info.name, { root: r, info, outDirs: await buildOutputDirs(r) });
      }
      if (before === workspaceStamp(wsRoot, [])) workspaceMemos.set(wsRoot, { stamp, roots, map: base });
    }
    this.workspace = base;
    if (roots.includes(this.root)) return;
    const info = await readPackageInfo(this.root);
    if (!info.found || info.invalid || base.has(info.name)) return;
    this.workspace = new Map(base).set(info.name, { root: this.root, info, outDirs: await buildOutputDirs(this.root) });
  }

  private kilnResolve(rel: string, specifier: string): string | undefined {
    if (specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') {
      const hit = this.modules.resolve(rel, specifier);
      if (hit) return join(this.root, hit);
      const abs = resolve(this.root, dirname(rel), specifier);
      const base = dirname(abs);
      const found = resolveInTree(posix.basename(toPosix(abs)), this.existsIn(base));
      return found ? join(base, found) : undefined;
    }
    if (specifier.startsWith('#') || specifier.startsWith('node:')) return undefined;
    // A bare specifier means the same file from every importer.
    if (this.bare.has(specifier)) return this.bare.get(specifier);
    const found = this.kilnResolveBare(specifier);
    this.bare.set(specifier, found);
    return found;
  }

  private readonly bare = new Map<string, string | undefined>();
  private readonly isFile = new Map<string, boolean>();

  /** A set-like view of the files under a directory (stat once per path and export), for resolveInTree. */
  private existsIn(dir: string): ReadonlySet<string> {
    return {
      has: (p: string) => {
        const abs = join(dir, p);
        let v = this.isFile.get(abs);
        if (v === undefined) {
          try {
            v = statSync(abs).isFile();
          } catch {
            v = false;
          }
          this.isFile.set(abs, v);
        }
        return v;
      },
    } as ReadonlySet<string>;
  }

  private kilnResolveBare(specifier: string): string | undefined {
    const name = packageOfSpecifier(specifier);
    const ws = this.workspace.get(name);
    if (!ws) return undefined;
    const sub = `.${specifier.slice(name.length)}`;
    const entry = ws.info.entries.find((e) => e.subpath === sub);
    const inTree = this.existsIn(ws.root);
    if (entry) {
      for (const t of entry.targets) {
        const f = resolveManifestTarget(t, inTree, ws.outDirs);
        if (f) return join(ws.root, f);
      }
      return undefined;
    }
    if (sub !== '.' && !ws.info.entries.length) {
      const f = resolveInTree(sub.slice(2), inTree);
      if (f) return join(ws.root, f);
    }
    return undefined;
  }

  /** How a pending import resolved: its target, and the file behind a bare specifier. */
  private answer(p: PendingImport): ImportAnswer {
    const abs = join(this.root, p.rel);
    let target: string | null = null;
    let external = false;
    let by: ImportNode['resolved_by'] = 'none';
    const resolver = this.loaded ?? this.config;
    let compiled: string | undefined;
    if (resolver && this.resolutions && !this.loaded) {
      if (!this.resolutionsChecked) {
        checkResolutionMemo(this.resolutions, JSON.stringify([resolver.configPath, this.manifests]));
        this.resolutionsChecked = true;
      }
      compiled = memoResolve(resolver, this.resolutions, abs, p.specifier);
    } else if (resolver) compiled = compilerResolve(resolver, abs, p.specifier);
    const compiledPlace = compiled ? this.placeOf(compiled) : undefined;
    let file: string | undefined;
    if (compiledPlace) {
      by = 'compiler';
      external = compiledPlace.external;
      target = compiledPlace.external ? packageId(packageOfSpecifier(p.specifier)) : compiledPlace.moduleId;
      if (!compiledPlace.external) file = compiled;
    } else {
      const own = this.kilnResolve(p.rel, p.specifier);
      const ownPlace = own ? this.placeOf(own) : undefined;
      if (ownPlace && !ownPlace.external) {
        by = 'kiln';
        target = ownPlace.moduleId;
        file = own;
      } else if (!p.specifier.startsWith('.') && !p.specifier.startsWith('#') && !p.specifier.startsWith('/')) {
        by = 'kiln';
        const name = packageOfSpecifier(p.specifier);
        external = !this.workspace.has(name);
        target = packageId(name);
      }
    }
    let found: ImportAnswer['found'];
    if (file !== undefined && !p.specifier.startsWith('.')) {
      const ownRel = inside(this.root, file);
      found = ownRel !== undefined && this.slices.has(ownRel) ? { own: ownRel } : { abs: file };
    }
    return { target, external, by, found };
  }

  emitImports(): void {
    const byFile = new Map<string, PendingImport[]>();
    for (const p of this.pendingImports) {
      const list = byFile.get(p.rel);
      if (list) list.push(p);
      else byFile.set(p.rel, [p]);
    }
    for (const [rel, pending] of byFile) {
      const answers = pending.map((p) => this.answer(p));
      pending.forEach((p, i) => {
        const found = answers[i]!.found;
        if (found) this.importFiles.set(`${rel}\u0000${p.specifier}`, found);
      });
      const slice = this.slices.get(rel)!;
      let key = '';
      if (this.memo) {
        key = answers.map((a, i) => `${pending[i]!.specifier}\u0001${a.target}\u0001${a.external}\u0001${a.by}\u0001${a.found?.own ?? ''}\u0001${a.found?.abs ?? ''}`).join('\u0000');
        this.answers.set(rel, key);
        const kept = this.memo.files.get(rel)?.imports;
        if (kept && kept.key.slice === slice && kept.key.answers === key) {
          this.replay(kept);
          continue;
        }
      }
      const g = this.group({ slice, answers: key }, () => this.emitImportsOf(rel, pending, answers));
      if (g) this.groupsOf(rel).imports = g;
    }
  }

  private emitImportsOf(rel: string, pending: PendingImport[], answers: ImportAnswer[]): void {
    const byTarget = new Map<string, { from: string; to: string; provenance: Provenance; language: Language; via: Set<string>; typeOnly: boolean }>();
    const mod = this.modId(rel);
    const lang = this.langOf(rel);
    const tier = this.tier(rel);
    pending.forEach((p, i) => {
      const { target, external, by } = answers[i]!;
      const iid = importId(mod, p.specifier);
      this.addNode({
        kind: 'import',
        id: iid,
        language: lang,
        provenance: tier,
        degraded: target === null,
        ...(target === null ? { degraded_reason: 'unresolved' } : {}),
        package: this.pkg.name,
        module: mod,
        specifier: p.specifier,
        forms: [...p.forms].sort(codePointCompare),
        type_only: p.typeOnly,
        bindings: p.bindings.sort((a, b) => codePointCompare(a.local, b.local) || codePointCompare(a.imported, b.imported)),
        reexports: p.reexports.sort((a, b) => codePointCompare(a.exported, b.exported) || codePointCompare(a.imported, b.imported)),
        reexport_all: p.reexportAll,
        target,
        external,
        resolved_by: by,
      });
      this.addEdge('contains', mod, iid, tier, lang, {});
      if (target === null || target === mod) return;
      const provenance: Provenance = by === 'compiler' ? tier : 'syntax_inferred';
      const key = `${mod}\u0000${target}\u0000${provenance}`;
      const e = byTarget.get(key) ?? { from: mod, to: target, provenance, language: lang, via: new Set<string>(), typeOnly: true };
      e.via.add(p.specifier);
      if (!p.typeOnly) e.typeOnly = false;
      byTarget.set(key, e);
    });
    for (const e of byTarget.values()) {
      this.addEdge('imports', e.from, e.to, e.provenance, e.language, { via: [...e.via].sort(codePointCompare), type_only: e.typeOnly });
    }
  }

  // ---------------------------------------------------------------- references, calls, JSDoc links

  private emitSites(p: LoadedProgram): void {
    const previous = this.siteCache ? new Map(this.siteCache) : undefined;
    this.siteCache?.clear();
    for (const rel of [...this.slices.keys()].sort(codePointCompare)) {
      const tier = this.tier(rel);
      if (tier !== 'compiler_checked' && tier !== 'compiler_unchecked') continue;
      const sf = p.program.getSourceFile(join(this.root, rel));
      if (!sf) continue;
      // A file the compiler's builder does not count as affected by the edits since the previous
      // program resolves every name as before: its sites are the previous run's.
      let walked = p.affected && !p.affected.has(sf.fileName) ? previous?.get(sf.fileName) : undefined;
      if (!walked) {
        const own = this.declsOf(sf);
        if (!own) continue;
        walked = walkSites(p, sf, own, this.declsOf);
        this.walked++;
      }
      this.siteCache?.set(sf.fileName, walked);
      const { sites, links } = walked;
      const mod = this.modId(rel);
      const lang = this.langOf(rel);
      const ordinals = new Map<string, number>();
      for (const s of sites) {
        const inId = s.in ?? mod;
        const pair = `${s.kind}:${inId}->${s.target}`;
        const n = (ordinals.get(pair) ?? 0) + 1;
        ordinals.set(pair, n);
        const id = `${pair}#${n}`;
        const span: GraphSpan = { file: rel, startLine: s.startLine, startColumn: s.startColumn, endLine: s.endLine, endColumn: s.endColumn };
        if (s.kind === 'reference') {
          this.addNode({ kind: 'reference', id, language: lang, provenance: tier, degraded: false, span, package: this.pkg.name, in: inId, target: s.target, name: s.name, type_position: s.typePosition });
          this.addEdge('references', inId, s.target, tier, lang, { count: 1, type_only: s.typePosition }, (e) => {
            e.count++;
            if (!s.typePosition) e.type_only = false;
          });
        } else {
          this.addNode({ kind: 'call', id, language: lang, provenance: tier, degraded: false, span, package: this.pkg.name, in: inId, target: s.target, name: s.name, form: s.form ?? 'call' });
          this.addEdge('calls', inId, s.target, tier, lang, { count: 1 }, (e) => {
            e.count++;
          });
        }
        this.addEdge('contains', inId, id, tier, lang, {});
      }
      for (const l of links) {
        this.addEdge('documents', l.from, l.to, tier, lang, { count: 1 }, (e) => {
          e.count++;
        });
      }
    }
  }

  // ---------------------------------------------------------------- references from syntax

  /**
   * Tolerant export without the checker: each module-level declaration's mentions (graph/syntax.ts),
   * as `references` edges, `syntax_inferred`. Files whose module is degraded (a syntax error) get
   * none, as in checker mode.
   */
  async emitSyntaxReferences(foreign: ForeignSlices): Promise<void> {
    const files = [...this.slices.keys()].sort(codePointCompare);
    const abroad = new Set<string>();
    for (const v of this.importFiles.values()) if (v.abs !== undefined) abroad.add(v.abs);
    await foreign.prepare([...abroad].sort(codePointCompare));
    if (this.memo) {
      const print = foreign.fingerprint();
      if (print !== this.memo.foreign.print) this.memo.foreign = { print, version: ++this.memo.versions };
    }
    const kindOf = (t: Target): SyntaxTarget => ({ id: this.identityOf(t.file, t.decl), kind: this.slices.get(t.file)!.decls[t.decl]!.kind });
    for (const rel of files) {
      const s = this.slices.get(rel)!;
      if (s.module.degraded) continue;
      const answers = this.answers.get(rel) ?? '';
      const deps = this.memo ? this.referenceDeps(rel, s) : '';
      const kept = this.memo?.files.get(rel)?.references;
      if (kept && kept.key.slice === s && kept.key.answers === answers && kept.key.deps === deps) {
        this.replay(kept);
        continue;
      }
      const g = this.group({ slice: s, answers, deps }, () => this.emitReferencesOf(rel, s, foreign, kindOf));
      if (g) this.groupsOf(rel).references = g;
    }
  }

  /**
   * What a file's mentions resolve through besides its own slice (resolveMention): the export tables
   * of the modules its imports name (relative, or this package by name) and, when one leads to another
   * package, that package's slices — as versions (memo.ts).
   */
  private referenceDeps(rel: string, s: Slice): string {
    const deps = new Set<string>();
    for (const imp of s.imports) {
      if (imp.specifier.startsWith('.')) {
        const file = this.modules.resolve(rel, imp.specifier);
        if (file) deps.add(`${file}\u0001${this.tableVersion(file)}`);
        continue;
      }
      const where = this.importFiles.get(`${rel}\u0000${imp.specifier}`);
      if (where?.own !== undefined) deps.add(`${where.own}\u0001${this.tableVersion(where.own)}`);
      else if (where?.abs !== undefined) deps.add(`\u0002${this.memo!.foreign.version}`);
    }
    return [...deps].sort().join('\u0000');
  }

  private emitReferencesOf(rel: string, s: Slice, foreign: ForeignSlices, kindOf: (t: Target) => SyntaxTarget): void {
    const lang = s.language;
    const perName = new Map<string, ReturnType<typeof resolveMention>>();
    const foreignFile = (specifier: string) => this.importFiles.get(`${rel}\u0000${specifier}`);
    s.decls.forEach((d, i) => {
      if (d.parent !== -1 || !d.refs?.length) return;
      const from = this.identityOf(rel, i);
      const seen = new Map<string, boolean>();
      for (const name of d.refs) {
        let mentions = perName.get(name);
        if (!mentions) {
          mentions = resolveMention(rel, s, name, this.modules, (f) => this.slices.get(f), kindOf, foreignFile, foreign);
          perName.set(name, mentions);
        }
        for (const m of mentions) {
          // The declaration itself, and what shares its name in its own module (overloads, merged
          // declarations), are not mentions of something else.
          if (m.target.id === from || (name === d.name && m.target.id.startsWith(`${this.modId(rel)}#`))) continue;
          const typeOnly = seen.get(m.target.id);
          seen.set(m.target.id, typeOnly === undefined ? m.typeOnly : typeOnly && m.typeOnly);
        }
      }
      for (const [to, typeOnly] of seen) {
        this.addEdge('references', from, to, 'syntax_inferred', lang, { count: 1, type_only: typeOnly }, (e) => {
          e.count++;
        });
      }
    });
  }

  // ---------------------------------------------------------------- diagnostics

  /** The innermost declaration of a package file containing a position, or its module. */
  private anchorOf(rel: string, line: number, column: number): string {
    const s = this.slices.get(rel);
    if (!s) return this.pkgId;
    let best = -1;
    s.decls.forEach((d, i) => {
      const sp = d.span;
      const after = line > sp.startLine || (line === sp.startLine && column >= sp.startColumn);
      const before = line < sp.endLine || (line === sp.endLine && column <= sp.endColumn);
      if (after && before) best = i; // declarations are listed parents first: the last hit is the innermost
    });
    return best >= 0 ? this.identityOf(rel, best) : this.modId(rel);
  }

  private emitDiagnostics(report: DigestReport, tsDiags: TsDiag[]): void {
    const add = (d: {
      code: DiagnosticCode;
      tsCode: string | null;
      message: string;
      producer: string;
      file?: string;
      absFile?: string;
      span?: GraphSpan;
      provenance: Provenance;
    }) => {
      const entry = CODES[d.code];
      const file = d.file ?? null;
      const where = d.span ? `${d.span.startLine}:${d.span.startColumn}` : '-';
      const id = `diagnostic:${d.code}${d.tsCode ? `/${d.tsCode}` : ''}@${file ?? '-'}:${where}#${digestParts('kiln-graph-diagnostic/1', [d.message]).slice(0, 12)}`;
      const lang: GraphLanguage = file ? (fileKind(file)?.language ?? 'json') : 'json';
      const rec: DiagnosticNode = {
        kind: 'diagnostic',
        id,
        language: lang,
        provenance: d.provenance,
        degraded: false,
        ...(d.span ? { span: d.span } : {}),
        package: this.pkg.name,
        code: d.code,
        ts_code: d.tsCode,
        severity: entry.severity,
        message: d.message,
        hint: entry.hint,
        producer: d.producer,
        file,
      };
      this.addNode(rec);
      let anchor: string = this.pkgId;
      if (file && this.slices.has(file)) anchor = d.span ? this.anchorOf(file, d.span.startLine, d.span.startColumn) : this.modId(file);
      else if (d.absFile) {
        const place = this.placeOf(d.absFile);
        if (place) anchor = place.moduleId;
      }
      this.addEdge('diagnoses', id, anchor, d.provenance, lang, {});
    };
    for (const d of report.diagnostics) {
      if (d.producer !== 'extract' && d.producer !== 'view') continue;
      const span = d.file && d.line !== undefined ? { file: d.file, startLine: d.line, startColumn: d.column ?? 1, endLine: d.line, endColumn: d.column ?? 1 } : undefined;
      add({
        code: d.code,
        tsCode: null,
        message: d.message,
        producer: d.producer,
        ...(d.file !== undefined ? { file: d.file } : {}),
        ...(span ? { span } : {}),
        provenance: d.code === 'KILN_MANIFEST_INVALID' ? 'manifest_declared' : 'syntax_inferred',
      });
    }
    for (const d of tsDiags) {
      add({
        code: d.code,
        tsCode: d.tsCode,
        message: d.message,
        producer: 'typescript',
        ...(d.file !== undefined ? { file: d.file } : {}),
        ...(d.absFile !== undefined ? { absFile: d.absFile } : {}),
        ...(d.span ? { span: d.span } : {}),
        provenance: d.code === 'KILN_TSCONFIG_INVALID' ? 'manifest_declared' : 'compiler_checked',
      });
    }
    if (this.unchecked) {
      add({ code: 'KILN_GRAPH_UNCHECKED', tsCode: null, message: this.unchecked, producer: PRODUCER, provenance: 'syntax_inferred' });
    }
  }

  // ---------------------------------------------------------------- finish

  finish(): KnownRecord[] {
    const memo = this.memo;
    for (const g of this.built) {
      for (const n of g.nodes) deepFreeze(n);
      for (const e of g.edges) deepFreeze(e);
    }
    const nodes = sortKept([...this.nodes.values()], memo?.order?.nodes, memo?.order?.kept, sortRecords);
    const edges = sortKept([...this.edges.values()], memo?.order?.edges, memo?.order?.kept, sortRecords);
    if (memo) {
      const kept = new Set<GraphNode | GraphEdge>();
      for (const r of nodes) if (Object.isFrozen(r)) kept.add(r);
      for (const r of edges) if (Object.isFrozen(r)) kept.add(r);
      memo.order = { nodes, edges, kept };
    }
    const languages = new Set<GraphLanguage>();
    let degraded = false;
    for (const r of [...nodes, ...edges]) {
      languages.add(r.language);
      if (r.degraded) degraded = true;
    }
    const snapshotEntries = [...this.files.map((f) => ({ path: f.path, content_hash: f.content_hash })), ...this.manifests];
    const { kind, id, language, provenance, ...rest } = this.header;
    const header: HeaderRecord = {
      kind,
      id,
      language,
      provenance,
      degraded,
      ...rest,
      languages: [...languages].sort(codePointCompare),
      snapshot: { id: snapshotId(snapshotEntries), files: snapshotEntries.length },
      counts: { nodes: nodes.length, edges: edges.filter((e) => isEdgeKind(e.kind)).length },
    };
    return [header, ...nodes, ...edges];
  }
}

type WorkspaceMap = Map<string, { root: string; info: PackageInfo; outDirs: string[] }>;

/** Workspace maps by workspace root, for the life of the process (resolveWorkspace). */
const workspaceMemos = new Map<string, { stamp: string; roots: string[]; map: WorkspaceMap }>();

/** The compiler's module resolution answers by tsconfig, for the life of the process (checked.ts ResolutionMemo). */
const resolutionMemos = new Map<string, ResolutionMemo>();

/**
 * Forget what this process keeps between exports outside sessions (workspace maps, module resolution
 * answers): the next export reads everything again. Kept answers are validated before use, so this is
 * never needed for correctness; tests use it to compare with an export that remembers nothing.
 */
export function forgetGraphMemos(): void {
  workspaceMemos.clear();
  resolutionMemos.clear();
}

function resolutionMemoOf(configPath: string): ResolutionMemo {
  let m = resolutionMemos.get(configPath);
  if (!m) {
    m = createResolutionMemo();
    resolutionMemos.set(configPath, m);
  }
  return m;
}

/** Size and modification time of every file a workspace map is read from, and of the directories holding the packages. */
function workspaceStamp(wsRoot: string | undefined, roots: string[]): string {
  const paths: string[] = [];
  if (wsRoot) paths.push(join(wsRoot, 'package.json'), join(wsRoot, 'pnpm-workspace.yaml'), join(wsRoot, 'nx.json'));
  for (const r of roots) {
    paths.push(dirname(r), join(r, 'package.json'), join(r, 'tsconfig.json'), join(r, 'tsconfig.lib.json'), join(r, 'tsconfig.build.json'));
  }
  return paths
    .map((p) => {
      try {
        const st = statSync(p);
        return `${st.mtimeMs}:${st.size}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}

function readBytes(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

