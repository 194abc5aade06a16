/**
 * `compileProject`: compile one TypeScript library with the TypeScript compiler API into its output
 * directory — JavaScript without non-meaningful comments, `.d.ts` with JSDoc, source maps — and return
 * the compiler's diagnostics as structured kiln diagnostics. This is the core of the Nx `build`
 * executor (executors/build), usable without Nx.
 *
 * Decisions (each is tested in packages/core/test/build.test.ts):
 *
 * - **Which compiler.** The workspace's own `typescript`, resolved from the project directory (what
 *   the lockfile pins, so a TypeScript upgrade changes the output and the key, SPEC §4), falling back
 *   to the one kiln ships (workspace/typescript.ts). `result.typescript` says which version compiled.
 *
 * - **Comments.** `removeComments: true` would drop `/*#__PURE__*\/`, `/*@__NO_SIDE_EFFECTS__*\/` and
 *   bundler magic comments, so the program is compiled with `removeComments: false` and comments are
 *   removed from the *input* of the JavaScript emit instead: after type-checking, the text of every
 *   emitted source file is swapped for a copy whose non-meaningful comments are blanked to spaces
 *   (same length, line terminators kept — see blank-comments.ts), the JavaScript is emitted, and the
 *   original text is put back. Positions are untouched, so diagnostics and source maps are exact, and
 *   the meaningful list is `classifyComment`'s, the one the semantic digest uses. The declaration
 *   emit runs on the original text, because the declaration emitter copies JSDoc from it (it prints
 *   only JSDoc-style and `/*!` comments anyway). Alternatives rejected: a second program over blanked
 *   text — the JavaScript emit asks the checker about every file, so it type-checks twice (measured on
 *   kiln's own core sources, 220 KB in 35 files, minimum of 5 runs: a plain tsc-style build 2.2 s,
 *   `compileProject` 1.8 s including writes, with a second program 3.1 s); and a custom transformer —
 *   the printer re-reads comments from the source text by position, so a transformer can only
 *   suppress them node by node, losing a `/*#__PURE__*\/` that shares a node's leading trivia with a
 *   removed comment. Finding the comments costs ~20 MB/s (blank-comments.ts), noise beside checking.
 *
 * - **Errors emit nothing.** kiln builds with `noEmitOnError` semantics: if the compiler reports any
 *   error (options, syntax, types, declaration emit), no file is written and the result is
 *   `success: false`. TypeScript's default would still write JavaScript, and an output written by a
 *   failed build looks exactly like a good one to everything that reads the directory afterwards (a
 *   dependent's type-check, a test run, a manual `node` run). Outputs are built in memory and written
 *   only when the whole build succeeded.
 *
 * - **Clean output.** By default the output directory is removed before the build (what `@nx/js:tsc`
 *   calls `deleteOutputPath`), so a file left by a source that was since renamed or deleted never
 *   reaches the Nx cache: a cached artifact must equal a fresh build's. The directory is removed only
 *   when that is safe — it does not contain the project root or any input file; otherwise only the
 *   files this build would write are removed, with a warning. A failed build therefore leaves no
 *   output that looks like its result.
 *
 * - **Debug IDs and retained sources** (SPEC §8). Every JavaScript file and its map carry one debug ID
 *   derived from their content (`//# debugId=` / `"debugId"`, debug/debug-id.ts), and every map carries
 *   `sourcesContent` with the authored text (`inlineSources`, restored from the blanked text below), so a
 *   map restored by a cache hit describes the source it was built from, whatever the working tree holds.
 *
 * - **Forced options.** `declaration`, `sourceMap` (separate `.map` files; `inlineSourceMap` off),
 *   `inlineSources` and
 *   `removeComments: false` are forced — the build's products are defined by SPEC §5, not by the
 *   tsconfig; `noEmit`/`emitDeclarationOnly` are overridden, `noEmitOnError` is implemented as above.
 *   A `.tsbuildinfo` is never written: the Nx cache is the incremental layer, and a build-info file
 *   from a plain program build records nothing useful.
 *
 * - **Deterministic, path-free.** Source maps name their sources relative to the map and carry no
 *   absolute `sourceRoot`; diagnostics name files relative to `relativeTo`. Emitted files are checked
 *   for this machine's absolute project path (`KILN_BUILD_ABSOLUTE_PATH`), so two clones at different
 *   paths produce byte-identical output or say why not.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { blankSourceFileComments } from './blank-comments.js';
import { findTsconfig, TSCONFIG_CANDIDATES } from '../workspace/tsconfig.js';
import { resolveTypeScript } from '../workspace/typescript.js';
import { messageSanitizer } from '../workspace/messages.js';
import picomatch from 'picomatch';
import { planLayouts, type Layout, type ModuleFormat } from './package-layout.js';
import { findCjsBlockers, indexOutputs, writeLayouts } from './formats.js';
import { injectDebugIds } from '../debug/inject.js';
import { annotate, span, spanSince, tracing } from '../trace/record.js';

/**
 * Files the build does not compile or emit unless the `exclude` option says otherwise: tests, type
 * tests, benchmarks, test folders, and tool configuration at the project root — whatever the
 * tsconfig includes. Globs (picomatch) over paths relative to the project root.
 */
export const DEFAULT_BUILD_EXCLUDE: readonly string[] = [
  '**/*.{test,spec,test-d,spec-d,bench}.{ts,tsx,mts,cts,js,jsx,mjs,cjs}',
  '**/__tests__/**',
  '**/__mocks__/**',
  '{test,tests}/**',
  '*.config.{ts,mts,cts,js,mjs,cjs}',
  '*.config.*.{ts,mts,cts,js,mjs,cjs}',
];

export interface CompileOptions {
  /** The project (package) directory; absolute, or relative to the current directory. */
  projectRoot: string;
  /** tsconfig path relative to `projectRoot`; default: the first of TSCONFIG_CANDIDATES that exists. */
  tsconfig?: string;
  /** Output directory (relative to `projectRoot`, or absolute); default: the tsconfig's `outDir`. */
  outDir?: string;
  /** Remove the output directory before building (default true; see the module header). */
  clean?: boolean;
  /** Directory that diagnostic and output paths are reported relative to (default: `projectRoot`). */
  relativeTo?: string;
  /**
   * Module formats to write (`esm`, `cjs`); default: what the package.json entry points ask for,
   * and otherwise what the tsconfig emits. See package-layout.ts.
   */
  formats?: ModuleFormat[];
  /** Read package.json `exports`/`main`/`module`/`types`/`bin` and write every build path they name (default true). */
  exports?: boolean;
  /** Globs (relative to the project root) of files not compiled or emitted; default DEFAULT_BUILD_EXCLUDE. */
  exclude?: readonly string[];
}

/** A directory of outputs in one format, as the result reports it. */
export interface BuiltLayout {
  kind: 'js' | 'dts';
  format: ModuleFormat;
  /** Relative to `relativeTo`. */
  dir: string;
  ext: string;
}

/** A related location of a compiler diagnostic ("'x' is declared here"). */
export interface RelatedLocation {
  file?: string;
  line?: number;
  column?: number;
  message: string;
}

/** A kiln diagnostic that came from the TypeScript compiler carries the compiler's own code. */
export interface BuildDiagnostic extends Diagnostic {
  /** The compiler's code, e.g. `TS2322`. */
  tsCode?: string;
  related?: RelatedLocation[];
}

export interface CompileResult {
  success: boolean;
  /** Errors first, then warnings, each group in file/position order. */
  diagnostics: BuildDiagnostic[];
  /** The tsconfig used, relative to `relativeTo` (absent when none was found). */
  tsconfig?: string;
  /** Output directories (outDir, then declarationDir when it is elsewhere), relative to `relativeTo`. */
  outputDirs: string[];
  /** Files written, relative to `relativeTo`, POSIX separators, sorted. Empty when the build failed. */
  emitted: string[];
  /** The layouts written (JavaScript first); empty when the build failed before planning them. */
  layouts: BuiltLayout[];
  /** Files the tsconfig includes that the build left out (the exclude option), relative to `relativeTo`, sorted. */
  excluded: string[];
  /** The compiler that compiled: its version and whether it is the workspace's or kiln's own. */
  typescript: { version: string; source: 'workspace' | 'kiln' };
  /** Wall time of each phase, in milliseconds (never part of any output). */
  timings: { config: number; program: number; check: number; emit: number; write: number };
}

const PRODUCER = 'build';

/**
 * Traced (trace/) as one `compile` span (the project, relative to `relativeTo`; `success`) holding one
 * span per phase as `timings` counts them: `config`, `program`, `check`, `emit`, `write`.
 */
export function compileProject(options: CompileOptions): Promise<CompileResult> {
  return span('compile', async () => {
    const result = await compileTraced(options);
    if (tracing()) {
      annotate('project', toPosix(relative(resolve(options.relativeTo ?? options.projectRoot), resolve(options.projectRoot))) || '.');
      annotate('success', result.success);
    }
    return result;
  });
}

async function compileTraced(options: CompileOptions): Promise<CompileResult> {
  const projectRoot = resolve(options.projectRoot);
  const relativeTo = resolve(options.relativeTo ?? projectRoot);
  const rel = (abs: string) => toPosix(relative(relativeTo, abs)) || '.';
  const sanitize = messageSanitizer(relativeTo);
  const { ts, version, source } = resolveTypeScript(projectRoot);
  const timings = { config: 0, program: 0, check: 0, emit: 0, write: 0 };
  const result: CompileResult = {
    success: false,
    diagnostics: [],
    outputDirs: [],
    emitted: [],
    layouts: [],
    excluded: [],
    typescript: { version, source },
    timings,
  };
  const fail = (code: DiagnosticCode, message: string, fields: { file?: string } = {}) => {
    result.diagnostics.push(diagnostic(code, sanitize(message), { ...fields, producer: PRODUCER }));
    return result;
  };
  let t = performance.now();
  const lap = (phase: keyof typeof timings) => {
    const now = performance.now();
    timings[phase] += Math.round((now - t) * 10) / 10;
    spanSince(phase, t);
    t = now;
  };

  if (!existsSync(projectRoot) || !statSync(projectRoot).isDirectory()) {
    return fail('KILN_NOT_FOUND', `project directory ${rel(projectRoot)} does not exist`);
  }

  // ---- configuration
  const config = loadBuildConfig(ts, projectRoot, options, rel, sanitize);
  if ('diagnostics' in config) {
    result.diagnostics.push(...config.diagnostics);
    if (config.tsconfig) result.tsconfig = rel(config.tsconfig);
    return result;
  }
  const { configPath, parsed, outDirs } = config;
  const opts = parsed.options;
  result.tsconfig = rel(configPath);
  result.outputDirs = outDirs.map(rel);

  // Tests and tool configuration are neither compiled nor emitted (the exclude option).
  const isExcluded = excluder(projectRoot, options.exclude ?? DEFAULT_BUILD_EXCLUDE);
  const rootNames = parsed.fileNames.filter((f) => !isExcluded(f));
  const excluded = parsed.fileNames.filter((f) => isExcluded(f));
  result.excluded = excluded.map(rel).sort();
  if (excluded.length && !opts.rootDir && !opts.composite) {
    // Where `tsc -p` would put the outputs: the common directory of every source the tsconfig names.
    const common = commonDirectory(parsed.fileNames.filter((f) => !/\.d\.[mc]?ts$/.test(f)));
    if (common) opts.rootDir = common;
  }
  if (!rootNames.length && parsed.fileNames.length) {
    return fail('KILN_TSCONFIG_INVALID', `every file ${rel(configPath)} includes is excluded from the build (the exclude option): ${result.excluded.slice(0, 5).join(', ')}`);
  }
  lap('config');

  // ---- program and diagnostics
  let program: TS.Program;
  let host: TS.CompilerHost;
  try {
    host = ts.createCompilerHost(opts, true);
    program = ts.createProgram({
      rootNames,
      options: opts,
      projectReferences: parsed.projectReferences,
      host,
      configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    });
  } catch (e) {
    return fail('KILN_BUILD_COMPILER_FAILED', `the compiler failed creating the program: ${(e as Error).message}`);
  }
  lap('program');

  // Remove previous outputs first: whatever happens next, no stale file survives this build.
  if (options.clean !== false) {
    await cleanOutputs(ts, parsed, outDirs, projectRoot, rel, (m) => fail('KILN_BUILD_OUTDIR_NOT_CLEANED', m));
  } else {
    await removeExpectedOutputs(ts, parsed);
  }

  let tsDiagnostics: readonly TS.Diagnostic[];
  try {
    tsDiagnostics = ts.getPreEmitDiagnostics(program);
  } catch (e) {
    return fail('KILN_BUILD_COMPILER_FAILED', `the compiler failed checking the program: ${(e as Error).message}`);
  }
  addCompilerDiagnostics(result, ts, tsDiagnostics, rel, sanitize);
  if (excluded.length) reportExcludedImports(ts, program, host, new Set(excluded.map((f) => resolve(f))), result, rel);
  lap('check');
  if (result.diagnostics.some((d) => d.severity === 'error')) return finish(result);

  // ---- emit (into memory)
  let outputs = new Map<string, string>();
  /** Source files whose text is swapped for the JavaScript emit, with both texts by file name. */
  const swapped = new Map<TS.SourceFile, string>();
  const originals = new Map<string, { blanked: string; original: string }>();
  const emitDiagnostics: TS.Diagnostic[] = [];
  try {
    const isDeclarationOutput = (f: string) => /\.d\.[mc]?ts(\.map)?$/.test(f);
    const isBuildInfo = (f: string) => f.endsWith('.tsbuildinfo');
    // 1. Declarations from the original text (the declaration emitter copies JSDoc from it).
    const dts = program.emit(
      undefined,
      (f, text, bom) => {
        if (isDeclarationOutput(f)) outputs.set(f, bom ? `\uFEFF${text}` : text);
      },
      undefined,
      true,
    );
    emitDiagnostics.push(...dts.diagnostics);
    // 2. JavaScript from the blanked text (non-meaningful comments removed, positions unchanged).
    for (const sf of program.getSourceFiles()) {
      if (sf.isDeclarationFile || program.isSourceFileFromExternalLibrary(sf) || program.isSourceFileDefaultLibrary(sf)) continue;
      if (sf.fileName.endsWith('.json')) continue;
      const blanked = blankSourceFileComments(ts, sf);
      if (blanked !== sf.text) {
        swapped.set(sf, sf.text);
        originals.set(sf.fileName, { blanked, original: sf.text });
        (sf as { text: string }).text = blanked;
      }
    }
    const js = program.emit(
      undefined,
      (f, text, bom, _onError, sourceFiles) => {
        if (isDeclarationOutput(f) || isBuildInfo(f)) return;
        let out = text;
        if (f.endsWith('.map') && sourceFiles?.length) out = restoreSourcesContent(out, sourceFiles, originals);
        outputs.set(f, bom ? `\uFEFF${out}` : out);
      },
      undefined,
      // EmitOnly.Js (0) where supported; older compilers read it as `false` (everything), and the
      // writer above drops their declaration outputs.
      0 as unknown as boolean,
    );
    emitDiagnostics.push(...js.diagnostics);
  } catch (e) {
    return fail('KILN_BUILD_COMPILER_FAILED', `the compiler failed emitting: ${(e as Error).message}`);
  } finally {
    for (const [sf, text] of swapped) (sf as { text: string }).text = text;
  }
  addCompilerDiagnostics(result, ts, emitDiagnostics, rel, sanitize);
  if (result.diagnostics.some((d) => d.severity === 'error')) return finish(result);

  // ---- every layout the package needs (package-layout.ts), derived from the compiler's output (formats.ts)
  const laid = await layOut(ts, program, opts, projectRoot, options, outputs, result, rel, sanitize);
  if (!laid) return finish(result);
  outputs = laid;
  // Every JS file and its map get one content-derived debug ID (debug/inject.ts), after the last
  // transform (the CommonJS layouts) and before the files are written.
  injectDebugIds(outputs);
  lap('emit');

  // ---- machine-independence check, then write
  // An absolute path starts at a delimiter; `../../work/x` (a relative path climbing to the root) is fine.
  const machinePaths = [...new Set([projectRoot, safeRealpath(projectRoot), relativeTo])]
    .filter((p) => p.length > 1)
    .map((p) => new RegExp(`(?:^|[\\s"'\`(=,;]|file:/*)${escapeRegExp(toPosix(p))}(?:$|[/\\\\"'\`)\\s])`, 'm'));
  for (const [file, text] of outputs) {
    const leaked = machinePaths.find((re) => re.test(text));
    const mapIssue = file.endsWith('.map') ? absoluteMapPath(text) : undefined;
    if (leaked !== undefined || mapIssue) {
      result.diagnostics.push(
        diagnostic('KILN_BUILD_ABSOLUTE_PATH', `${rel(file)} contains ${mapIssue ?? 'the absolute path of this checkout'}`, {
          file: rel(file),
          producer: PRODUCER,
        }),
      );
    }
  }
  try {
    await Promise.all([...new Set([...outputs.keys()].map((f) => dirname(f)))].map((d) => mkdir(d, { recursive: true })));
    const entries = [...outputs];
    for (let i = 0; i < entries.length; i += 64) {
      await Promise.all(entries.slice(i, i + 64).map(([file, text]) => writeFile(file, text)));
    }
    result.emitted = entries.map(([file]) => rel(file));
  } catch (e) {
    result.emitted = [];
    // Leave nothing half-written behind.
    await removeFiles([...outputs.keys()]);
    return fail('KILN_BUILD_WRITE_FAILED', `writing the outputs failed: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  lap('write');
  return finish(result);
}

/** Plan the layouts, check what CommonJS cannot express, and derive every layout's files. */
async function layOut(
  ts: typeof TS,
  program: TS.Program,
  opts: TS.CompilerOptions,
  projectRoot: string,
  options: CompileOptions,
  outputs: Map<string, string>,
  result: CompileResult,
  rel: (abs: string) => string,
  sanitize: (m: string) => string,
): Promise<Map<string, string> | undefined> {
  const manifestPath = join(projectRoot, 'package.json');
  let manifest: Record<string, unknown> | undefined;
  if (existsSync(manifestPath)) {
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      result.diagnostics.push(diagnostic('KILN_MANIFEST_INVALID', sanitize(`${rel(manifestPath)}: ${(e as Error).message}`), { file: rel(manifestPath), producer: PRODUCER }));
    }
  }
  // Without a package.json of its own, the package scope is the nearest one above (Node's rule).
  const scopeManifest = manifest ?? { type: nearestPackageType(dirname(projectRoot)) };
  const outDir = resolve(opts.outDir!);
  const declarationDir = resolve(opts.declarationDir ?? opts.outDir!);
  const primaryFormat = primaryJsFormat(ts, program, opts);
  const primary = indexOutputs(outputs, outDir, declarationDir, primaryFormat);
  const plan = planLayouts({
    packageDir: projectRoot,
    manifest: manifest ?? scopeManifest,
    useManifest: options.exports !== false && manifest !== undefined,
    outDir,
    declarationDir,
    jsModules: primary.jsModules,
    dtsModules: primary.dtsModules,
    primaryFormat,
    ...(options.formats ? { formats: options.formats } : {}),
  });
  for (const p of plan.problems) {
    const onManifest = p.code !== 'KILN_BUILD_FORMAT_UNAVAILABLE' && manifest !== undefined;
    result.diagnostics.push(diagnostic(p.code, sanitize(p.message), { ...(onManifest ? { file: rel(manifestPath) } : {}), producer: PRODUCER }));
  }
  if (plan.problems.length) return undefined;
  const transforms = plan.layouts.filter((l) => l.kind === 'js' && !l.primary && l.format === 'cjs' && primaryFormat === 'esm');
  if (transforms.length) {
    for (const sf of program.getSourceFiles()) {
      if (sf.isDeclarationFile || program.isSourceFileFromExternalLibrary(sf) || program.isSourceFileDefaultLibrary(sf)) continue;
      if (/\.(mts|cts|mjs|cjs|json)$/.test(sf.fileName)) continue; // .mts stays ESM in every layout
      for (const b of findCjsBlockers(ts, sf)) {
        const lc = ts.getLineAndCharacterOfPosition(sf, b.pos);
        result.diagnostics.push(
          diagnostic('KILN_BUILD_CJS_UNSUPPORTED', `${b.message} (this package also builds CommonJS: ${transforms.map((l) => `${rel(l.dir)}/*${l.ext}`).join(', ')})`, {
            file: rel(sf.fileName),
            line: lc.line + 1,
            column: lc.character + 1,
            producer: PRODUCER,
          }),
        );
      }
    }
    if (result.diagnostics.some((d) => d.severity === 'error')) return undefined;
  }
  const { files, diagnostics } = await writeLayouts(ts, outputs, primary, plan.layouts);
  for (const d of diagnostics) result.diagnostics.push(diagnostic(d.code, sanitize(d.message), { producer: PRODUCER }));
  if (diagnostics.length) return undefined;
  result.layouts = plan.layouts.map((l: Layout) => ({ kind: l.kind, format: l.format, dir: rel(l.dir), ext: l.ext }));
  return files;
}

/** The format of the compiler's `.js` outputs: the module option, or the package scope under Node16/NodeNext. */
function primaryJsFormat(ts: typeof TS, program: TS.Program, opts: TS.CompilerOptions): ModuleFormat {
  const module = opts.module ?? ((opts.target ?? ts.ScriptTarget.ES5) >= ts.ScriptTarget.ES2015 ? ts.ModuleKind.ES2015 : ts.ModuleKind.CommonJS);
  if (module >= ts.ModuleKind.Node16 && module <= ts.ModuleKind.NodeNext) {
    for (const sf of program.getSourceFiles()) {
      if (sf.isDeclarationFile || program.isSourceFileFromExternalLibrary(sf) || !/\.(tsx?|jsx?)$/.test(sf.fileName)) continue;
      return sf.impliedNodeFormat === ts.ModuleKind.ESNext ? 'esm' : 'cjs';
    }
    return 'cjs';
  }
  const esm: number[] = [ts.ModuleKind.ES2015, ts.ModuleKind.ES2020, ts.ModuleKind.ES2022, ts.ModuleKind.ESNext, 200 /* Preserve */];
  return esm.includes(module) ? 'esm' : 'cjs';
}

function nearestPackageType(from: string): 'module' | 'commonjs' {
  for (let d = from; ; d = dirname(d)) {
    const p = join(d, 'package.json');
    if (existsSync(p)) {
      try {
        return (JSON.parse(readFileSync(p, 'utf8')) as { type?: string }).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (dirname(d) === d) return 'commonjs';
  }
}

/** A matcher for the exclude globs, over paths relative to the project root (never outside it). */
export function excluder(projectRoot: string, patterns: readonly string[]): (file: string) => boolean {
  if (!patterns.length) return () => false;
  const match = picomatch([...patterns], { dot: true });
  return (file) => {
    const r = relative(projectRoot, resolve(file));
    if (!r || r.startsWith('..') || isAbsolute(r)) return false;
    return match(toPosix(r));
  };
}

function commonDirectory(files: string[]): string | undefined {
  if (!files.length) return undefined;
  let common = dirname(resolve(files[0]!));
  for (const f of files) {
    while (!isInside(resolve(f), common)) {
      const up = dirname(common);
      if (up === common) return undefined;
      common = up;
    }
  }
  return common;
}

/** An excluded file that a built module imports (so the compiler pulled it in): where it is imported. */
function reportExcludedImports(
  ts: typeof TS,
  program: TS.Program,
  host: TS.CompilerHost,
  excluded: Set<string>,
  result: CompileResult,
  rel: (abs: string) => string,
): void {
  const pulled = program.getSourceFiles().filter((sf) => excluded.has(resolve(sf.fileName)));
  if (!pulled.length) return;
  const options = program.getCompilerOptions();
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || program.isSourceFileFromExternalLibrary(sf) || excluded.has(resolve(sf.fileName))) continue;
    const visit = (node: TS.Node): void => {
      let spec: TS.Expression | undefined;
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) spec = node.moduleSpecifier;
      else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) spec = node.arguments[0];
      else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) spec = node.moduleReference.expression;
      if (spec && ts.isStringLiteralLike(spec)) {
        const mode = program.getModeForUsageLocation?.(sf, spec);
        const r = ts.resolveModuleName(spec.text, sf.fileName, options, host, undefined, undefined, mode).resolvedModule;
        if (r && excluded.has(resolve(r.resolvedFileName))) {
          const lc = ts.getLineAndCharacterOfPosition(sf, spec.getStart(sf));
          result.diagnostics.push(
            diagnostic('KILN_BUILD_EXCLUDED_IMPORTED', `${rel(sf.fileName)} imports ${rel(r.resolvedFileName)}, which the build excludes (tests and tool configuration are not emitted)`, {
              file: rel(sf.fileName),
              line: lc.line + 1,
              column: lc.character + 1,
              producer: PRODUCER,
            }),
          );
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}

type LoadedConfig =
  | { configPath: string; parsed: TS.ParsedCommandLine; outDirs: string[] }
  | { diagnostics: BuildDiagnostic[]; tsconfig?: string };

/** The tsconfig, parsed with kiln's forced options, and the output directories (absolute). */
function loadBuildConfig(
  ts: typeof TS,
  projectRoot: string,
  options: CompileOptions,
  rel: (abs: string) => string,
  sanitize: (m: string) => string,
): LoadedConfig {
  const diagnostics: BuildDiagnostic[] = [];
  const fail = (code: DiagnosticCode, message: string, fields: { file?: string } = {}, tsconfig?: string): LoadedConfig => {
    diagnostics.push(diagnostic(code, sanitize(message), { ...fields, producer: PRODUCER }));
    return { diagnostics, ...(tsconfig ? { tsconfig } : {}) };
  };
  const found = findTsconfig(projectRoot, options.tsconfig);
  if (found === undefined) {
    const tried = options.tsconfig ? [options.tsconfig] : TSCONFIG_CANDIDATES;
    return fail('KILN_TSCONFIG_NOT_FOUND', `no tsconfig in ${rel(projectRoot)}: tried ${tried.join(', ')}`);
  }
  const configPath = resolve(projectRoot, found);
  const overrides: TS.CompilerOptions = {
    declaration: true,
    sourceMap: true,
    inlineSourceMap: false,
    inlineSources: true, // maps retain the authored text (SPEC §8): a map restored by a cache hit still carries its source
    removeComments: false,
    noEmit: false,
    emitDeclarationOnly: false,
    noEmitOnError: false, // implemented by kiln: nothing is written unless the whole build succeeds
  };
  if (options.outDir !== undefined) overrides.outDir = resolve(projectRoot, options.outDir);
  const configErrors: TS.Diagnostic[] = [];
  let parsed: TS.ParsedCommandLine | undefined;
  try {
    parsed = ts.getParsedCommandLineOfConfigFile(configPath, overrides, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => configErrors.push(d),
    });
  } catch (e) {
    return fail('KILN_BUILD_COMPILER_FAILED', `reading ${rel(configPath)} failed: ${(e as Error).message}`, {}, configPath);
  }
  if (parsed) configErrors.push(...parsed.errors);
  const configErrorDiags = configErrors.filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (!parsed || configErrorDiags.length) {
    for (const d of configErrorDiags.length ? configErrorDiags : configErrors) {
      diagnostics.push(toKiln(ts, d, 'KILN_TSCONFIG_INVALID', rel, sanitize, configPath));
    }
    if (!diagnostics.length) return fail('KILN_TSCONFIG_INVALID', `${rel(configPath)} could not be read`, {}, configPath);
    return { diagnostics, tsconfig: configPath };
  }
  const opts = parsed.options;
  if (opts.outFile) {
    return fail('KILN_BUILD_NO_OUTDIR', `${rel(configPath)} sets outFile; kiln builds a library file by file into an outDir`, { file: rel(configPath) }, configPath);
  }
  if (!opts.outDir) {
    return fail('KILN_BUILD_NO_OUTDIR', `${rel(configPath)} declares no outDir and none was given`, { file: rel(configPath) }, configPath);
  }
  // An outDir given by the caller moves a declarationDir that lived inside the configured outDir with it.
  if (options.outDir !== undefined && opts.declarationDir) {
    const configured = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
    const before = configured?.options.outDir;
    if (before && isInside(opts.declarationDir, before)) {
      opts.declarationDir = join(opts.outDir, relative(before, opts.declarationDir));
    }
  }
  const outDirs = [opts.outDir];
  if (opts.declarationDir && !isInside(opts.declarationDir, opts.outDir)) outDirs.push(opts.declarationDir);
  return { configPath, parsed, outDirs };
}

/**
 * Where a build of this project writes (absolute directories), without compiling: the same
 * configuration `compileProject` reads. Coded diagnostics when the configuration is unusable.
 */
export function resolveBuildOutputs(options: CompileOptions): { outputDirs: string[]; diagnostics: BuildDiagnostic[] } {
  const projectRoot = resolve(options.projectRoot);
  const relativeTo = resolve(options.relativeTo ?? projectRoot);
  const { ts } = resolveTypeScript(projectRoot);
  const config = loadBuildConfig(ts, projectRoot, options, (abs) => toPosix(relative(relativeTo, abs)) || '.', messageSanitizer(relativeTo));
  return 'diagnostics' in config ? { outputDirs: [], diagnostics: config.diagnostics } : { outputDirs: config.outDirs, diagnostics: [] };
}

function finish(result: CompileResult): CompileResult {
  const rank = (d: BuildDiagnostic) => (d.severity === 'error' ? 0 : d.severity === 'warning' ? 1 : 2);
  result.diagnostics.sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.file ?? '').localeCompare(b.file ?? '') ||
      (a.line ?? 0) - (b.line ?? 0) ||
      (a.column ?? 0) - (b.column ?? 0),
  );
  result.success = !result.diagnostics.some((d) => d.severity === 'error');
  result.emitted.sort();
  return result;
}

function addCompilerDiagnostics(
  result: CompileResult,
  ts: typeof TS,
  diagnostics: readonly TS.Diagnostic[],
  rel: (abs: string) => string,
  sanitize: (m: string) => string,
): void {
  for (const d of diagnostics) {
    if (d.category === ts.DiagnosticCategory.Suggestion || d.category === ts.DiagnosticCategory.Message) continue;
    const code: DiagnosticCode = d.category === ts.DiagnosticCategory.Error ? 'KILN_TYPESCRIPT_ERROR' : 'KILN_TYPESCRIPT_WARNING';
    result.diagnostics.push(toKiln(ts, d, code, rel, sanitize));
  }
}

function toKiln(
  ts: typeof TS,
  d: TS.Diagnostic,
  code: DiagnosticCode,
  rel: (abs: string) => string,
  sanitize: (m: string) => string,
  fallbackFile?: string,
): BuildDiagnostic {
  const fields: Parameters<typeof diagnostic>[2] = { producer: PRODUCER };
  const loc = location(ts, d, rel);
  if (loc.file) Object.assign(fields, loc);
  else if (fallbackFile) fields.file = rel(fallbackFile);
  const out: BuildDiagnostic = diagnostic(code, sanitize(ts.flattenDiagnosticMessageText(d.messageText, '\n')), fields);
  out.tsCode = `TS${d.code}`;
  if (d.relatedInformation?.length) {
    out.related = d.relatedInformation.map((r) => ({
      ...location(ts, r, rel),
      message: sanitize(ts.flattenDiagnosticMessageText(r.messageText, '\n')),
    }));
  }
  return out;
}

function location(ts: typeof TS, d: TS.Diagnostic, rel: (abs: string) => string): { file?: string; line?: number; column?: number; endLine?: number; endColumn?: number } {
  if (!d.file) return {};
  const out: { file?: string; line?: number; column?: number; endLine?: number; endColumn?: number } = { file: rel(d.file.fileName) };
  if (d.start !== undefined) {
    const lc = ts.getLineAndCharacterOfPosition(d.file, d.start);
    out.line = lc.line + 1;
    out.column = lc.character + 1;
    if (d.length !== undefined) {
      const end = ts.getLineAndCharacterOfPosition(d.file, d.start + d.length);
      out.endLine = end.line + 1;
      out.endColumn = end.character + 1;
    }
  }
  return out;
}

/** With `inlineSources`, the map must carry the authored text, not the blanked one the emitter saw. */
function restoreSourcesContent(mapText: string, sourceFiles: readonly TS.SourceFile[], originals: Map<string, { blanked: string; original: string }>): string {
  if (!mapText.includes('"sourcesContent"')) return mapText;
  let map: { sourcesContent?: (string | null)[] };
  try {
    map = JSON.parse(mapText);
  } catch {
    return mapText;
  }
  if (!map.sourcesContent) return mapText;
  let changed = false;
  map.sourcesContent = map.sourcesContent.map((content) => {
    for (const sf of sourceFiles) {
      const texts = originals.get(sf.fileName);
      if (texts && content === texts.blanked) {
        changed = true;
        return texts.original;
      }
    }
    return content;
  });
  return changed ? JSON.stringify(map) : mapText;
}

function absoluteMapPath(mapText: string): string | undefined {
  try {
    const map = JSON.parse(mapText) as { sourceRoot?: string; sources?: string[] };
    const abs = (p: string) => isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('file:');
    if (map.sourceRoot && abs(map.sourceRoot)) return `an absolute sourceRoot (${map.sourceRoot})`;
    const s = map.sources?.find(abs);
    if (s) return `an absolute source path (${s})`;
  } catch {
    return 'a source map that is not JSON';
  }
  return undefined;
}

async function cleanOutputs(
  ts: typeof TS,
  parsed: TS.ParsedCommandLine,
  outDirs: string[],
  projectRoot: string,
  rel: (abs: string) => string,
  warn: (message: string) => void,
): Promise<void> {
  const inputs = parsed.fileNames.map((f) => resolve(f));
  for (const dir of outDirs) {
    const abs = resolve(dir);
    const holdsProject = isInside(projectRoot, abs);
    const holdsInput = inputs.find((f) => isInside(f, abs));
    if (holdsProject || holdsInput) {
      warn(
        `output directory ${rel(abs)} was not removed before the build because it ${
          holdsProject ? 'contains the project' : `contains the input ${rel(holdsInput!)}`
        }; only the files this build writes were replaced`,
      );
      await removeExpectedOutputs(ts, parsed);
      continue;
    }
    await rm(abs, { recursive: true, force: true });
  }
}

/** Remove the files the compiler would write for the inputs (js, maps, declarations). */
async function removeExpectedOutputs(ts: typeof TS, parsed: TS.ParsedCommandLine): Promise<void> {
  const files: string[] = [];
  for (const input of parsed.fileNames) {
    if (/\.d\.[mc]?ts$/.test(input)) continue;
    try {
      files.push(...ts.getOutputFileNames(parsed, input, !ts.sys.useCaseSensitiveFileNames));
    } catch {
      // an input the compiler would not emit
    }
  }
  await removeFiles(files.filter((f) => !parsed.fileNames.includes(f)));
}

async function removeFiles(files: string[]): Promise<void> {
  await Promise.all(files.map((f) => rm(f, { force: true })));
}

function isInside(path: string, dir: string): boolean {
  const r = relative(resolve(dir), resolve(path));
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function toPosix(p: string): string {
  return p.split(sep).join('/');
}
