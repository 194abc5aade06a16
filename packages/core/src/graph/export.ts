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
 * This module runs an export (digest, tsconfig, program, check, then the records); the records are
 * built by builder.ts (package, files, declarations, exports), imports.ts with resolve.ts (imports),
 * references.ts (sites and syntax references) and diagnostics.ts, into memo.ts's RecordSet; what
 * the export reads of other packages comes from the workspace view holding the package
 * (view/kept-views.ts, view/foreign.ts), sliced through its store (from syntax, and its pool) — with
 * the checker, every program file outside the package looked up in memory and the store before
 * records are built (builder.ts `loadForeign`), the files the checker then asks for and were not found
 * extracted on demand and written to the store before the export returns;
 * what a process keeps between exports is session.ts (per session), the kept workspace views and
 * resolve.ts's resolution answers (per process).
 *
 * Invariants: the records are a function of the package's files, manifests and toolchain — byte-for-
 * byte identical for the same inputs, at any absolute path, with the store cold, warm or off; no
 * absolute path appears in any record.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { Slice } from '../facts/slice.js';
import { digestTree } from '../view/digest-tree.js';
import { defaultWorkerCount, type DigestPool } from '../pool/pool.js';
import { buildOutputDirs } from '../view/files.js';
import { readPackageInfo } from '../view/package.js';
import { openPackageWorkspace } from '../view/kept-views.js';
import { messageSanitizer } from '../workspace/messages.js';
import { buildProgram, checkProgram, loadConfig, type LoadedProgram } from './checked.js';
import { formatWithLines, MemoConflict, type GraphMemo } from './memo.js';
import { formatGraph, type GraphMode, type KnownRecord } from './records.js';
import { GraphSession, sessionMemo, sessionSites } from './session.js';
import { checkFailure, compilerDiagnostics, configDiagnostics, emitDiagnostics, PRODUCER, toDiagnostic, uncheckedReason, type TsDiag } from './diagnostics.js';
import { ImportResolver, processForeignSlices, resolutionMemoOf } from './resolve.js';
import { Builder } from './builder.js';
import { collectImports, emitImports } from './imports.js';
import { emitSites, emitSyntaxReferences } from './references.js';
import { span, spanSince } from '../trace/record.js';

export { createGraphSession, GraphSession } from './session.js';
export { forgetGraphMemos } from './resolve.js';

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
   * (the rest reused from a session's previous run), how many groups of records (memo.ts) a
   * session's previous export gave unchanged, and the files of other packages read (`foreign`).
   */
  stats?: { files: number; parsed: number; walked: number; reused: number; foreign: GraphExportForeign; phases: GraphExportPhases };
}

/**
 * Files of other packages an export read (view/foreign.ts `ForeignCounts`). `files`: from syntax, the
 * files references follow (each with a slice); with the checker, the program's files outside the
 * package (and the sources their build output maps to), every one looked up in a session's memory and
 * the store, whether the checker then asks for it or not. `parsed`: of them, parsed — not found there.
 * `inline`: of those, extracted on the calling thread when the checker asked for them (with the checker
 * all of `parsed`, only files it asked for; from syntax 0: its misses go through the pool). Every
 * slice parsed is written to the store: a second export of unchanged files parses none.
 */
export interface GraphExportForeign {
  files: number;
  parsed: number;
  inline: number;
}

/**
 * Where an export's wall time went, in ms (phases overlap nothing except `digest`, which runs while the
 * tsconfig is read and the program built and checked): `digest` the slices (read, hash, store, parse,
 * report assembly) as far as they were not ready when the program was; `config` reading the tsconfig;
 * `program` building it; `check` its diagnostics; `foreign` looking up the slices of other packages'
 * files the program holds (memory, store) and, at the end, writing those extracted on demand to the
 * store; `build` files, declarations, exports and — with the checker — reference and call sites (and
 * the on-demand extraction of other packages' files the checker asks for); `workspace` finding
 * workspace packages; `imports` resolving imports; `references` syntax references (with other
 * packages' slices they need); `finish` sorting and the header.
 */
export interface GraphExportPhases {
  digest: number;
  config: number;
  program: number;
  check: number;
  foreign: number;
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

const toPosix = (p: string) => p.split(sep).join('/');

/** Traced (trace/) as one `graph export` span holding a span per phase (`graph check`, …) and the digest's spans. */
export function exportGraph(packageDir: string, options: GraphExportOptions = {}): Promise<GraphExportResult> {
  return span('graph export', () => exportGraphTraced(packageDir, options));
}

async function exportGraphTraced(packageDir: string, options: GraphExportOptions): Promise<GraphExportResult> {
  const mode: GraphMode = options.mode ?? 'checked';
  const phases: GraphExportPhases = { digest: 0, config: 0, program: 0, check: 0, foreign: 0, build: 0, workspace: 0, imports: 0, references: 0, finish: 0 };
  let lap = performance.now();
  const done = (phase: keyof GraphExportPhases) => {
    const now = performance.now();
    phases[phase] += now - lap;
    spanSince(`graph ${phase}`, lap);
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
  const state = options.session?.stateOf(`${root}\u0000${options.tsConfig ?? ''}`);

  // On two cores a fresh pool (each thread loads the compiler and warms its JIT) costs more than
  // parsing on this thread, which a syntax export leaves idle (measured: tools/bench-graph.mjs).
  const inlineAll = !useChecker && options.workers === undefined && !options.pool && defaultWorkerCount() <= 1;

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
    inlineUpTo: inlineAll ? Number.MAX_SAFE_INTEGER : INLINE_MISSES,
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
  const configDiags = configDiagnostics(load, root, sanitize);
  let tsDiags: TsDiag[] = [];
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
    tsDiags = compilerDiagnostics(loaded.ts, raw, root, sanitize);
  }
  done('check');
  const errors = [...configDiags, ...tsDiags].filter((d) => d.severity === 'error');
  const report = await digesting;
  const people: Diagnostic[] = [...report.diagnostics];
  const [pkg, outDirs] = await Promise.all([readPackageInfo(root), buildOutputDirs(root)]);
  done('digest');

  if (mode === 'checked' && (!loaded || errors.length)) {
    return { ok: false, mode, records: [], diagnostics: [...checkFailure(load, errors), ...people.filter((d) => d.severity === 'error')] };
  }

  const unchecked = loaded ? undefined : uncheckedReason(load, root, useChecker);
  const sites = state && loaded ? sessionSites(state, pkg.name, report.files) : undefined;
  people.push(...[...configDiags, ...tsDiags].map(toDiagnostic));
  if (unchecked) people.push(diagnostic('KILN_GRAPH_UNCHECKED', unchecked, { producer: PRODUCER }));
  const diags = [...configDiags, ...tsDiags];
  // Records in this order: package, namespaces, files, module exports (builder.ts), sites
  // (references.ts), diagnostics, imports, syntax references; then sorted (records.ts).
  // The workspace holding the package, for everything about other packages: the same store, and
  // the same choice of pool as this package's digest.
  const workspace = await openPackageWorkspace(root, { ...(options.store !== undefined ? { store: options.store } : {}), ...(options.workers !== undefined || inlineAll ? { workers: inlineAll ? 0 : options.workers } : {}) });
  done('workspace');
  const assemble = async (memo: GraphMemo | undefined) => {
    const foreign = workspace.view.foreign({ ...(options.maxFileSize !== undefined ? { maxFileSize: options.maxFileSize } : {}), memory: state ? state.foreign : processForeignSlices() });
    const b = new Builder({ root, pkg, slices, files: report.files, outDirs, loaded, mode, memo, foreign });
    // The checker asks for other packages' declarations synchronously: their slices are loaded first.
    await b.loadForeign();
    done('foreign');
    b.build(report, diags, load);
    const pending = collectImports(slices);
    const walked = loaded ? emitSites(b, loaded, sites) : 0;
    emitDiagnostics(b, report, diags, unchecked);
    done('build');
    const imports = emitImports(b, pending, new ImportResolver(b, workspace.packages, loaded ?? config, config && !loaded ? resolutionMemoOf(config.configPath) : undefined));
    done('imports');
    if (!loaded) await emitSyntaxReferences(b, imports, foreign);
    done('references');
    // What the checker had extracted on demand, into the store for the next export.
    await foreign.keep();
    done('foreign');
    return { records: b.finish(), walked, reused: b.out.reused, foreign: { ...foreign.counts } };
  };
  // A session keeps the groups of an export without a program (memo.ts); the checker's reuse is its own.
  const memo = state ? sessionMemo(state, !!loaded) : undefined;
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
  } finally {
    // The view may be kept for the next export; its pool, if one was started, is not.
    await workspace.view.close();
  }
  done('finish');
  for (const k of Object.keys(phases) as (keyof GraphExportPhases)[]) phases[k] = Math.round(phases[k] * 10) / 10;
  const result: GraphExportResult = { ok: true, mode, records: built.records, diagnostics: people, stats: { files: report.stats.files, parsed: report.stats.parsed, walked: built.walked, reused: built.reused, foreign: built.foreign, phases } };
  if (memo && state?.memo === memo) keptLines.set(result, memo.lines);
  return result;
}

function packageRootOf(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
    if (dirname(d) === d) return dir;
  }
}
