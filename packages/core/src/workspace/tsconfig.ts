/**
 * What a project's tsconfig contributes to a build key: the compiler options that can change the
 * output or the diagnostics (paths relativised to the project, so two clones agree), and the list of
 * files the build compiles. Options that only change how the compiler reports or caches (`pretty`,
 * `incremental`, `tsBuildInfoFile`, tracing) are left out. Read from the working tree (the compiler's
 * own `ts.sys`) or, given one, another FileTree (a git tree: workspace/tree.ts).
 */
import { isAbsolute, join, relative, sep } from 'node:path';
import { typescript } from '../parse/typescript.js';
import { digestParts } from '../digest/hash.js';
import { worktree, type FileTree } from './tree.js';

/** Candidate config names, in the order the build executor looks for them. */
export const TSCONFIG_CANDIDATES = ['tsconfig.lib.json', 'tsconfig.build.json', 'tsconfig.json'];

const IGNORED_OPTIONS = new Set([
  'incremental', 'tsBuildInfoFile', 'diagnostics', 'extendedDiagnostics', 'listFiles', 'listEmittedFiles',
  'traceResolution', 'pretty', 'watch', 'preserveWatchOutput', 'generateCpuProfile', 'generateTrace',
  'explainFiles', 'configFilePath', 'pathsBasePath', 'build', 'project', 'showConfig', 'locale',
]);
const PATH_OPTIONS = new Set(['outDir', 'rootDir', 'baseUrl', 'declarationDir', 'outFile', 'mapRoot', 'sourceRoot']);
const PATH_LIST_OPTIONS = new Set(['typeRoots', 'rootDirs']);

export interface TsconfigView {
  /** The config file used, relative to the project root. */
  configFile: string;
  /** Emit- and diagnostics-relevant options, paths relative to the project root (POSIX). */
  options: Record<string, unknown>;
  optionsDigest: string;
  /** Files the build compiles, relative to the project root (only those inside it). */
  fileNames: string[];
  /** Files the config includes from outside the project, relative to the workspace root. */
  outsideFiles: string[];
  /** outDir relative to the project root, if set. */
  outDir?: string;
  /** Config errors (TS diagnostics as text), unknown options excepted. */
  errors: string[];
  /**
   * Compiler options this TypeScript does not know (a newer compiler's, e.g. TypeScript 6's
   * `stableTypeOrdering`): the compiler drops them from its parse, so their raw values are keyed
   * instead (under `options`), from every config of the extends chain that sets them.
   */
  unknownOptions: string[];
  /** Project references: referenced config directories or files, relative to the project root (POSIX). */
  references: string[];
  /**
   * The compiler's own parse, with absolute paths, for resolving modules the way the build will
   * (view/reach.ts). Never serialised, never part of a key.
   */
  compiler?: { options: import('typescript').CompilerOptions; projectReferences: readonly import('typescript').ProjectReference[]; configPath: string };
}

export function findTsconfig(projectDir: string, preferred?: string, tree: FileTree = worktree): string | undefined {
  const exists = (c: string) => tree.kindOf(join(projectDir, c)) !== undefined;
  if (preferred) return exists(preferred) ? preferred : undefined;
  return TSCONFIG_CANDIDATES.find(exists);
}

/**
 * The compiler's config-parsing host over a FileTree: `readDirectory` is the compiler's own include/
 * exclude matcher (`matchFiles`, what `ts.sys.readDirectory` runs) over the tree's listings, so a
 * git tree expands `include` exactly as a checkout of it would.
 */
export function parseHostFor(tree: FileTree): Omit<TS_ParseHost, 'onUnRecoverableConfigFileDiagnostic'> {
  const ts = typescript();
  if (tree === worktree) return ts.sys;
  const matchFiles = (ts as unknown as { matchFiles?: MatchFiles }).matchFiles;
  if (typeof matchFiles !== 'function') throw new Error(`TypeScript ${ts.version} has no matchFiles: reading a tsconfig from a git tree needs TypeScript 4.x–6.x`);
  const entries = (dir: string) => {
    const files: string[] = [];
    const directories: string[] = [];
    for (const e of tree.list(dir) ?? []) {
      if (e.kind === 'file') files.push(e.name);
      else if (e.kind === 'dir') directories.push(e.name);
    }
    return { files, directories };
  };
  return {
    ...ts.sys,
    fileExists: (p) => tree.kindOf(p) === 'file',
    directoryExists: (p) => tree.kindOf(p) === 'dir',
    readFile: (p) => tree.readText(p),
    realpath: (p) => tree.realpath(p),
    getDirectories: (p) => entries(p).directories,
    readDirectory: (path, extensions, excludes, includes, depth) =>
      matchFiles(path, extensions, excludes, includes, ts.sys.useCaseSensitiveFileNames, ts.sys.getCurrentDirectory(), depth, entries, (p) => tree.realpath(p)),
  };
}

type MatchFiles = (
  path: string,
  extensions: readonly string[] | undefined,
  excludes: readonly string[] | undefined,
  includes: readonly string[] | undefined,
  useCaseSensitiveFileNames: boolean,
  currentDirectory: string,
  depth: number | undefined,
  getFileSystemEntries: (path: string) => { files: readonly string[]; directories: readonly string[] },
  realpath: (path: string) => string,
) => string[];

/**
 * A tsconfig as kiln keys it. With `files: false` the `include` globs are not expanded (`fileNames`
 * and `outsideFiles` come back empty): for a caller that keys only the options — a tool key's other
 * tsconfigs — the directory walk is most of the cost, and options never depend on it.
 */
export function readTsconfig(workspaceRoot: string, projectRoot: string, configFile: string, opts: { files?: boolean; tree?: FileTree } = {}): TsconfigView {
  const ts = typescript();
  const listFiles = opts.files !== false;
  const projectDir = join(workspaceRoot, projectRoot);
  const configPath = join(projectDir, configFile);
  const errors: string[] = [];
  const host: TS_ParseHost = {
    ...parseHostFor(opts.tree ?? worktree),
    ...(listFiles ? {} : { readDirectory: () => [] }),
    onUnRecoverableConfigFileDiagnostic: (d) => errors.push(ts.flattenDiagnosticMessageText(d.messageText, ' ')),
  };
  const extended = new Map<string, import('typescript').ExtendedConfigCacheEntry>();
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, host, extended);
  const rel = (p: string) => toPosix(relative(projectDir, p));
  const options: Record<string, unknown> = {};
  const unknownOptions = new Set<string>();
  if (parsed) {
    for (const e of parsed.errors) {
      // TS5023 "Unknown compiler option", TS5025 "… Did you mean …?": keyed raw below, not fatal here.
      if (e.code === 5023 || e.code === 5025) continue;
      // TS18003 "No inputs were found": what an unlisted directory looks like; the listing caller reports it.
      if (!listFiles && e.code === 18003) continue;
      errors.push(ts.flattenDiagnosticMessageText(e.messageText, ' '));
    }
    // Every config of the chain, in a stable order, with what it sets that the parse dropped. A value
    // a child overrides is still keyed: over-inclusion can only move a key, never keep it.
    const raws: [string, unknown][] = [[configPath, parsed.raw], ...[...extended].map(([file, entry]) => [file, entry.extendedConfig?.raw] as [string, unknown])];
    for (const [file, raw] of raws.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      const co = (raw as { compilerOptions?: unknown } | undefined)?.compilerOptions;
      if (!co || typeof co !== 'object') continue;
      for (const [key, value] of Object.entries(co as Record<string, unknown>)) {
        if (key in parsed.options || IGNORED_OPTIONS.has(key)) continue;
        unknownOptions.add(key);
        const slot = `unknown:${key}`;
        const where = toPosix(relative(workspaceRoot, file));
        options[slot] = [...((options[slot] as unknown[]) ?? []), [where, value]];
      }
    }
    for (const key of Object.keys(parsed.options).sort()) {
      if (IGNORED_OPTIONS.has(key)) continue;
      const v = parsed.options[key];
      if (PATH_OPTIONS.has(key) && typeof v === 'string') options[key] = isAbsolute(v) ? rel(v) : v;
      else if (PATH_LIST_OPTIONS.has(key) && Array.isArray(v)) options[key] = v.map((x) => (typeof x === 'string' && isAbsolute(x) ? rel(x) : x));
      else options[key] = v;
    }
  }
  const fileNames: string[] = [];
  const outsideFiles: string[] = [];
  for (const f of parsed?.fileNames ?? []) {
    const r = rel(f);
    if (r.startsWith('../')) outsideFiles.push(toPosix(relative(workspaceRoot, f)));
    else fileNames.push(r);
  }
  const outDir = typeof options.outDir === 'string' ? (options.outDir as string) : undefined;
  // References change what the build sees (imports of a referenced project resolve to its outputs).
  const references = (parsed?.projectReferences ?? []).map((r) => rel(r.path)).sort();
  return {
    configFile: toPosix(configFile),
    options,
    optionsDigest: digestParts('kiln-tsconfig/1', [JSON.stringify(options), ...(references.length ? [`references:${JSON.stringify(references)}`] : [])]),
    references,
    ...(parsed ? { compiler: { options: parsed.options, projectReferences: parsed.projectReferences ?? [], configPath } } : {}),
    fileNames: fileNames.sort(),
    outsideFiles: outsideFiles.sort(),
    ...(outDir ? { outDir } : {}),
    errors,
    unknownOptions: [...unknownOptions].sort(),
  };
}

type TS_ParseHost = import('typescript').ParseConfigFileHost;

function toPosix(p: string): string {
  return p.split(sep).join('/');
}
