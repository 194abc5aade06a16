/**
 * What reaches a build beyond its own sources and the workspace packages it imports by name (issue 10
 * point 2): `paths` aliases and `baseUrl`, package `imports` (`#x`), relative imports that leave the
 * project, deep imports into another package (a JSON module, a source file), `/// <reference path|types>`,
 * the tsconfig's `types`/`typeRoots` (explicit or automatic), project references — and, transitively,
 * what the files reached that way reach. Each request is resolved with the TypeScript compiler's own
 * resolution and the project's compiler options, as the build will resolve it, and what it lands on is
 * classified:
 *
 *   - a file of the project itself: already in the key (its declarations);
 *   - a file under `node_modules` of another package: that package, by name (its lockfile version);
 *   - a file of another workspace package: that package — by its surface when the build sees its
 *     declarations (`.d.ts` outputs, a referenced project's redirect), wholly (`full`: bodies too)
 *     when the build compiles its sources; a non-source file of it (JSON) also by content;
 *   - any other file (a shared `types/` folder, a sibling folder, a symlink target): its content hash,
 *     and what it reaches in turn (`ts.preProcessFile`).
 *   - nothing: the request is recorded unresolved (it moves the key when it starts resolving).
 *
 * Invariants: every path in the result is relative to the workspace root (POSIX; `../` where a file
 * lies outside it) — never absolute; the result is a function of the file system the build would read;
 * widening is always allowed, narrowing never (what cannot be classified is hashed or kept whole).
 * File-system access goes through node:fs calls made at call time, so the plugin's graph memo records
 * every probe (plugins/src/fs-recording.ts, plugins/src/graph-memo.ts) — or, for another state, through
 * the FileTree it is read from (a git tree: workspace/tree.ts; `createReachCaches(tree)`).
 */
import * as fs from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import { sha256Hex } from '../digest/hash.js';
import { typescript } from '../parse/typescript.js';
import { packageOfSpecifier } from './surface.js';
import { resolveSpecifier } from './resolve.js';
import type { DigestReport } from './report.js';
import { parseHostFor, type TsconfigView } from '../workspace/tsconfig.js';
import { worktree, type FileTree } from '../workspace/tree.js';

/** How a workspace package is reached: its surface, or all of it (the build compiles its sources). */
export type ReachMode = 'surface' | 'full';

/** Where a request was made: in a source file (it can end up in emitted declarations) or in the config. */
export type ReachOrigin = 'source' | 'config';

export interface ReachEdge {
  /** Readable request, e.g. `types:@x/dep/augment`, `src/a.ts ref-path:../g.d.ts`, `src/a.ts import:~x/y`. */
  request: string;
  /** What it landed on: `file:<path>`, `package:<name>` (`:full`), `external:<name>`, `unresolved`. */
  target: string;
  origin: ReachOrigin;
}

export interface ReachResult {
  edges: ReachEdge[];
  /** Files reached outside every package's sources, workspace-relative → content hash (`missing`, `unreadable:…`). */
  files: Map<string, string>;
  /** Workspace packages reached (by name), with the strongest mode any request needed, and the origin. */
  packages: Map<string, { mode: ReachMode; origin: ReachOrigin }>;
  /** External packages reached through a file under node_modules. */
  externals: Map<string, ReachOrigin>;
}

export interface ReachPackage {
  name: string;
  /** Root relative to the workspace (POSIX). */
  root: string;
  /** Source files kiln digests for it (package-relative), when it is a TypeScript project. */
  sources?: ReadonlySet<string>;
  /** Its build's output directories (package-relative): never resolved into (see resolutionHost). */
  outputs?: readonly string[];
}

const SOURCE_EXT = /\.(?:[cm]?tsx?|[cm]?jsx?)$/;
const DECLARATION_EXT = /\.d\.[cm]?ts$/;
const MAX_REACHED_FILES = 10_000;

/**
 * A module resolution host on node:fs, called at call time (the graph memo records the probes), that
 * sees no build outputs: files under a workspace package's output directories (`outDir`,
 * `declarationDir`) do not exist for it, and it never touches them. A key is computed before the
 * builds it keys and must be the same after them; what resolves only into a package's outputs falls
 * back to that package by name (its surface). A `node_modules` link to a workspace package is read as
 * the package's folder (`paths.canonical`), so no probe goes through the link: the link's target is in
 * the workspace walk the graph memo already fingerprints.
 */
function resolutionHost(cwd: string, paths: WorkspacePaths, tree: FileTree): TS.ModuleResolutionHost & { getDirectories(p: string): string[] } {
  if (tree !== worktree) return treeResolutionHost(cwd, paths, tree);
  const st = (p: string) => {
    const c = paths.canonical(p);
    if (paths.isOutput(c)) return undefined;
    try {
      return fs.statSync(c, { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
  };
  return {
    fileExists: (p) => !!st(p)?.isFile(),
    directoryExists: (p) => !!st(p)?.isDirectory(),
    readFile: (p) => {
      const c = paths.canonical(p);
      if (paths.isOutput(c)) return undefined;
      try {
        return fs.readFileSync(c, 'utf8');
      } catch {
        return undefined;
      }
    },
    realpath: (p) => {
      const c = paths.canonical(p);
      if (paths.isOutput(c)) return c;
      try {
        return fs.realpathSync(c);
      } catch {
        return c;
      }
    },
    getCurrentDirectory: () => cwd,
    getDirectories: (p) => {
      const c = paths.canonical(p);
      if (paths.isOutput(c)) return [];
      try {
        return fs.readdirSync(c, { withFileTypes: true }).filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => e.name);
      } catch {
        return [];
      }
    },
  };
}

/** resolutionHost over a FileTree other than the working tree (the same rules: outputs do not exist). */
function treeResolutionHost(cwd: string, paths: WorkspacePaths, tree: FileTree): TS.ModuleResolutionHost & { getDirectories(p: string): string[] } {
  const kind = (p: string) => {
    const c = paths.canonical(p);
    return paths.isOutput(c) ? undefined : tree.kindOf(c);
  };
  return {
    fileExists: (p) => kind(p) === 'file',
    directoryExists: (p) => kind(p) === 'dir',
    readFile: (p) => {
      const c = paths.canonical(p);
      return paths.isOutput(c) ? undefined : tree.readText(c);
    },
    realpath: (p) => {
      const c = paths.canonical(p);
      return paths.isOutput(c) ? c : tree.realpath(c);
    },
    getCurrentDirectory: () => cwd,
    getDirectories: (p) => {
      const c = paths.canonical(p);
      if (paths.isOutput(c)) return [];
      return (tree.list(c) ?? []).filter((e) => e.kind === 'dir' || e.symlink).map((e) => e.name);
    },
  };
}

interface WorkspacePaths {
  /** The path with its last `node_modules/<workspace package>` link replaced by the package's folder. */
  canonical(p: string): string;
  /** Inside a workspace package's output directory (a canonical path). */
  isOutput(canonical: string): boolean;
}

/** Spelling-only path rules for the workspace's packages (no I/O). */
function workspacePaths(workspaceRoot: string, packages: readonly ReachPackage[]): WorkspacePaths {
  const roots = new Map(packages.map((p) => [p.name, resolve(workspaceRoot, p.root)]));
  const rootDirs = new Set(roots.values());
  const dirs = packages.flatMap((p) => (p.outputs ?? []).map((o) => resolve(workspaceRoot, p.root, o))).filter((d) => !rootDirs.has(d));
  const link = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)(?=[\\/]|$)/g;
  return {
    canonical(p: string): string {
      const path = resolve(p);
      if (!path.includes('node_modules')) return path;
      let last: RegExpExecArray | undefined;
      for (const m of path.matchAll(link)) if (roots.has(m[1]!.replace(/\\/g, '/'))) last = m as RegExpExecArray;
      return last ? roots.get(last[1]!.replace(/\\/g, '/'))! + path.slice(last.index! + last[0].length) : path;
    },
    isOutput: (c: string) => dirs.some((d) => c === d || c.startsWith(d + sep)),
  };
}

const toPosix = (p: string) => p.split(sep).join('/');

/** Options that change what the compiler writes or reports, never how it resolves a module. */
const EMIT_ONLY_OPTIONS = new Set([
  'outDir', 'declarationDir', 'outFile', 'rootDir', 'declaration', 'declarationMap', 'emitDeclarationOnly', 'sourceMap', 'inlineSourceMap',
  'inlineSources', 'mapRoot', 'sourceRoot', 'removeComments', 'noEmit', 'noEmitOnError', 'stripInternal', 'composite', 'incremental',
  'tsBuildInfoFile', 'configFilePath', 'newLine', 'emitBOM', 'importHelpers', 'noUnusedLocals', 'noUnusedParameters', 'noImplicitReturns',
  'noFallthroughCasesInSwitch', 'noImplicitOverride', 'noPropertyAccessFromIndexSignature', 'noUncheckedIndexedAccess', 'strict',
  'strictNullChecks', 'noImplicitAny', 'skipLibCheck', 'pretty', 'listFiles', 'listEmittedFiles', 'diagnostics', 'extendedDiagnostics',
]);

/**
 * Resolution state shared by the projects of one key computation (one workspace state): the host,
 * package.json answers, and the compiler's caches per set of resolution-relevant options.
 */
export interface ReachCaches {
  /** The state's files: the working tree, or a git tree (workspace/tree.ts). */
  tree: FileTree;
  host?: ReturnType<typeof resolutionHost>;
  packageJson: TS.PackageJsonInfoCache;
  resolution: Map<string, { cache: TS.ModuleResolutionCache; typeCache: TS.TypeReferenceDirectiveResolutionCache }>;
}

export function createReachCaches(tree: FileTree = worktree): ReachCaches {
  const ts = typescript();
  return { tree, packageJson: ts.createModuleResolutionCache('/', (s) => s).getPackageJsonInfoCache(), resolution: new Map() };
}

/** Whether TypeScript's `paths` would try this specifier (an exact key or a `prefix*suffix` pattern). */
function matchesPaths(spec: string, paths: TS.MapLike<string[]> | undefined): boolean {
  if (!paths) return false;
  for (const pattern of Object.keys(paths)) {
    const star = pattern.indexOf('*');
    if (star < 0 ? spec === pattern : spec.length >= pattern.length - 1 && spec.startsWith(pattern.slice(0, star)) && spec.endsWith(pattern.slice(star + 1))) return true;
  }
  return false;
}

/** `/// <reference path|types="…">` directives among a file's pragmas (extract.ts records them verbatim). */
function referenceDirectives(pragmas: readonly string[]): { path: string[]; types: string[] } {
  const out = { path: [] as string[], types: [] as string[] };
  for (const p of pragmas) {
    if (!p.startsWith('triple-slash:')) continue;
    const m = /<reference\s+(path|types)\s*=\s*(["'])(.*?)\2/.exec(p);
    if (m) out[m[1] as 'path' | 'types'].push(m[3]!);
  }
  return out;
}

/**
 * Compute what one project reaches. `packages` lists every workspace package; `self` is the project's
 * root. `sourcesOf` gives another TypeScript project's digest report when the build compiles its
 * sources (then its own requests are followed too, as the build's program would).
 */
export function computeReach(
  workspaceRoot: string,
  self: string,
  report: DigestReport,
  tsconfig: TsconfigView,
  packages: readonly ReachPackage[],
  sourcesOf: (name: string) => DigestReport | undefined,
  caches?: ReachCaches,
): ReachResult {
  const ts = typescript();
  const result: ReachResult = { edges: [], files: new Map(), packages: new Map(), externals: new Map() };
  const compiler = tsconfig.compiler;
  if (!compiler) return result;
  const options = compiler.options;
  const projectDir = resolve(workspaceRoot, self);
  const shared = caches ?? createReachCaches();
  const tree = shared.tree;
  const host = (shared.host ??= resolutionHost(resolve(workspaceRoot), workspacePaths(workspaceRoot, packages), tree));
  const isFile = (p: string) => (tree === worktree ? fs.existsSync(p) && fs.statSync(p).isFile() : tree.kindOf(p) === 'file');
  // Projects whose resolution-relevant options agree share the compiler's resolution caches.
  const cacheKey = JSON.stringify(Object.entries(options).filter(([k]) => !EMIT_ONLY_OPTIONS.has(k)).sort(([a], [b]) => (a < b ? -1 : 1)));
  let pair = shared.resolution.get(cacheKey);
  if (!pair) {
    const cache = ts.createModuleResolutionCache(resolve(workspaceRoot), (s) => s, options, shared.packageJson);
    pair = { cache, typeCache: ts.createTypeReferenceDirectiveResolutionCache(resolve(workspaceRoot), (s) => s, options, shared.packageJson) };
    shared.resolution.set(cacheKey, pair);
  }
  const { cache, typeCache } = pair;
  const realRoot = host.realpath!(resolve(workspaceRoot));
  const wsRel = (abs: string) => toPosix(relative(realRoot, abs)) || '.';
  // Longest root first, so a nested package wins over its parent.
  const byRoot = [...packages].filter((p) => p.root !== '.').sort((a, b) => b.root.length - a.root.length);
  const referenced = new Set(compiler.projectReferences.map((r) => wsRel(host.realpath!(isFile(r.path) ? dirname(r.path) : r.path))));
  const selfPkg = packages.find((p) => p.root === self);
  const ownFiles = new Set(report.files.map((f) => f.path));
  const followed = new Set<string>();
  const compiledPackages = new Set<string>();

  const note = (request: string, target: string, origin: ReachOrigin) => result.edges.push({ request, target, origin });
  const addPackage = (name: string, mode: ReachMode, origin: ReachOrigin) => {
    const had = result.packages.get(name);
    result.packages.set(name, {
      mode: had?.mode === 'full' || mode === 'full' ? 'full' : 'surface',
      origin: had?.origin === 'source' || origin === 'source' ? 'source' : 'config',
    });
  };
  const hashFile = (abs: string, rel: string) => {
    if (result.files.has(rel)) return;
    if (result.files.size >= MAX_REACHED_FILES) {
      result.files.set('…', 'truncated');
      return;
    }
    if (tree !== worktree) {
      const bytes = tree.readFile(abs);
      result.files.set(rel, bytes ? sha256Hex(bytes) : 'missing');
      return;
    }
    try {
      result.files.set(rel, sha256Hex(fs.readFileSync(abs)));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') result.files.set(rel, 'missing');
      else {
        // Unreadable: its size and change time still move when it changes (never a constant).
        const s = fs.statSync(abs, { throwIfNoEntry: false, bigint: true });
        result.files.set(rel, `unreadable:${code ?? 'error'}:${s?.size ?? '-'}:${s?.mtimeNs ?? '-'}`);
      }
    }
  };

  /** Classify a resolved file and follow it where it is neither ours nor a package's known part. */
  const land = (request: string, resolvedPath: string, origin: ReachOrigin, viaReference: boolean, named = false) => {
    const real = host.realpath!(resolvedPath);
    const rel = wsRel(real);
    const inSelf = self === '.' ? rel : rel.startsWith(`${self}/`) ? rel.slice(self.length + 1) : undefined;
    if (inSelf !== undefined && ownFiles.has(inSelf)) return; // already keyed as one of ours
    const nm = rel.lastIndexOf('node_modules/');
    if (nm >= 0 || rel.startsWith('node_modules/')) {
      const rest = rel.slice(nm + 'node_modules/'.length);
      const name = packageOfSpecifier(rest);
      if (name === '.pnpm' || name === '.bin') {
        // pnpm's store layout: node_modules/.pnpm/<id>/node_modules/<name>/…
        const inner = rest.slice(rest.indexOf('node_modules/') + 'node_modules/'.length);
        result.externals.set(packageOfSpecifier(inner), origin);
        return note(request, `external:${packageOfSpecifier(inner)}`, origin);
      }
      if (!result.externals.has(name) || origin === 'source') result.externals.set(name, origin);
      return note(request, `external:${name}`, origin);
    }
    const pkg = byRoot.find((p) => rel === p.root || rel.startsWith(`${p.root}/`));
    if (pkg && pkg.root !== self) {
      const inPkg = rel.slice(pkg.root.length + 1);
      const isSource = !!pkg.sources?.has(inPkg) && !DECLARATION_EXT.test(inPkg);
      // A referenced project's sources are seen through its outputs (the compiler redirects them).
      const compiled = isSource && !viaReference && !referenced.has(pkg.root);
      // An import of the package by its name that lands on what it declares: the ordinary case, which
      // the importer's declarations and the package's surface already key.
      if (named && !compiled && (pkg.sources?.has(inPkg) || SOURCE_EXT.test(inPkg))) return;
      addPackage(pkg.name, compiled ? 'full' : 'surface', origin);
      note(request, `package:${pkg.name}${compiled ? ':full' : ''}`, origin);
      if (compiled && !compiledPackages.has(pkg.name)) {
        compiledPackages.add(pkg.name);
        const theirs = sourcesOf(pkg.name);
        if (theirs) followReport(pkg.root, theirs, origin);
      }
      if (!pkg.sources?.has(inPkg) && !SOURCE_EXT.test(inPkg)) hashFile(real, rel); // a JSON module, an asset
      return;
    }
    // A file of no package (or of ours but outside the build's sources): by content, and what it reaches.
    note(request, `file:${rel}`, origin);
    hashFile(real, rel);
    if (SOURCE_EXT.test(real) && !followed.has(real)) {
      followed.add(real);
      followText(real, rel, origin);
    }
  };

  /**
   * A request that does not resolve (yet): a workspace package it names — by name, or by a path into
   * its folder — is that package, by surface. Its outputs may simply not be built yet, and the key must
   * be the same before and after they are.
   */
  const unresolved = (request: string, spec: string, fromAbs: string, origin: ReachOrigin, named = false) => {
    const relative = spec.startsWith('.') || spec.startsWith('/');
    const rel = relative ? wsRel(resolve(dirname(host.realpath!(fromAbs)), spec)) : undefined;
    const pkg = relative ? byRoot.find((p) => rel === p.root || rel!.startsWith(`${p.root}/`)) : packages.find((p) => p.name === packageOfSpecifier(spec));
    if (pkg && pkg.root !== self) {
      if (named) return;
      addPackage(pkg.name, 'surface', origin);
      return note(request, `package:${pkg.name}`, origin);
    }
    note(request, 'unresolved', origin);
  };
  const resolveModule = (request: string, spec: string, fromAbs: string, origin: ReachOrigin) => {
    let file: string | undefined;
    try {
      file = ts.resolveModuleName(spec, fromAbs, options, host, cache, undefined, modeOf(fromAbs)).resolvedModule?.resolvedFileName;
    } catch {
      file = undefined;
    }
    // A bare import naming a workspace package (not re-routed by `paths`/`baseUrl`).
    const named = !spec.startsWith('.') && !spec.startsWith('/') && !spec.startsWith('#') && packages.some((p) => p.name === packageOfSpecifier(spec));
    if (file) land(request, file, origin, false, named);
    else unresolved(request, spec, fromAbs, origin, named);
  };
  /** A type reference: `mode` is the file's, or none for the tsconfig's `types` (as the compiler does). */
  const resolveTypes = (request: string, name: string, fromAbs: string, origin: ReachOrigin, mode: TS.ResolutionMode) => {
    let file: string | undefined;
    try {
      file = ts.resolveTypeReferenceDirective(name, fromAbs, options, host, undefined, typeCache, mode).resolvedTypeReferenceDirective?.resolvedFileName;
    } catch {
      file = undefined;
    }
    if (file) land(request, file, origin, false);
    else unresolved(request, name, fromAbs, origin);
  };
  const resolvePath = (request: string, target: string, fromAbs: string, origin: ReachOrigin) => {
    const abs = resolve(dirname(fromAbs), target);
    if (host.fileExists(abs)) return land(request, abs, origin, false);
    // TypeScript also tries the name with a declaration or source extension.
    for (const ext of ['.d.ts', '.ts', '.tsx']) if (host.fileExists(abs + ext)) return land(request, abs + ext, origin, false);
    note(request, `file:${wsRel(abs)}`, origin);
    hashFile(abs, wsRel(abs));
  };
  const modeOf = (fromAbs: string): TS.ResolutionMode => {
    try {
      return ts.getImpliedNodeFormatForFile(fromAbs as TS.Path, cache.getPackageJsonInfoCache(), host, options) as TS.ResolutionMode;
    } catch {
      return undefined;
    }
  };

  const bareNeedsResolution = (spec: string): boolean => {
    if (spec.startsWith('#')) return true; // package.json `imports`
    if (options.baseUrl !== undefined || matchesPaths(spec, options.paths)) return true;
    // A workspace package: whether the build sees its outputs or compiles its sources, or a non-source
    // file of it (a JSON module under a subpath), only its resolution tells.
    const name = packageOfSpecifier(spec);
    return packages.some((p) => p.name === name && p.root !== self);
  };

  /** A file of a digested project: its specifiers and reference directives. */
  function followReport(root: string, r: DigestReport, origin: ReachOrigin) {
    const files = new Set(r.files.map((f) => f.path));
    const dir = resolve(workspaceRoot, root);
    for (const f of r.files) {
      const abs = join(dir, f.path);
      const at = root === self ? f.path : posix.join(root, f.path);
      for (const spec of f.specifiers ?? []) {
        if (spec.startsWith('node:')) continue;
        if (spec.startsWith('.') || spec.startsWith('/')) {
          if (resolveSpecifier(f.path, spec, files)) continue; // a source of the same project
          if (f.asset_imports.some((a) => posix.normalize(posix.join(posix.dirname(f.path), spec)) === a)) continue; // keyed by content
          resolveModule(`${at} import:${spec}`, spec, abs, origin);
        } else if (bareNeedsResolution(spec)) {
          resolveModule(`${at} import:${spec}`, spec, abs, origin);
        }
      }
      const refs = referenceDirectives(f.module.pragmas);
      for (const p of refs.path) {
        const target = posix.normalize(posix.join(posix.dirname(f.path), p));
        if (files.has(target)) continue;
        resolvePath(`${at} ref-path:${p}`, p, abs, origin);
      }
      for (const t of refs.types) resolveTypes(`${at} ref-types:${t}`, t, abs, origin, modeOf(abs));
    }
  }

  /** A file outside every digested project: TypeScript's own pre-processor lists what it names. */
  function followText(abs: string, rel: string, origin: ReachOrigin) {
    let text: string;
    try {
      const t = tree === worktree ? fs.readFileSync(abs, 'utf8') : tree.readText(abs);
      if (t === undefined) return;
      text = t;
    } catch {
      return;
    }
    const info = ts.preProcessFile(text, true, /\.[cm]?jsx?$/.test(abs));
    for (const i of info.importedFiles) resolveModule(`${rel} import:${i.fileName}`, i.fileName, abs, origin);
    for (const r of info.referencedFiles) resolvePath(`${rel} ref-path:${r.fileName}`, r.fileName, abs, origin);
    for (const t of info.typeReferenceDirectives) resolveTypes(`${rel} ref-types:${t.fileName}`, t.fileName, abs, origin, t.resolutionMode ?? modeOf(abs));
  }

  followReport(self, report, 'source');

  // The JSX runtime's types (`jsx: react-jsx`): every JSX expression reaches `<source>/jsx-runtime`
  // without an import in the source.
  const jsx = options.jsx;
  const firstJsx = report.files.find((f) => /\.[jt]sx$/.test(f.path));
  if (firstJsx && (jsx === ts.JsxEmit.ReactJSX || jsx === ts.JsxEmit.ReactJSXDev)) {
    const spec = `${options.jsxImportSource ?? 'react'}/${jsx === ts.JsxEmit.ReactJSXDev ? 'jsx-dev-runtime' : 'jsx-runtime'}`;
    const from = join(projectDir, firstJsx.path);
    let file: string | undefined;
    try {
      file = ts.resolveModuleName(spec, from, options, host, cache, undefined, modeOf(from)).resolvedModule?.resolvedFileName;
    } catch {
      file = undefined;
    }
    if (file) land(`jsx:${spec}`, file, 'config', false);
    else unresolved(`jsx:${spec}`, spec, from, 'config');
  }

  // The tsconfig's type directives: `types` as listed, else every package of every typeRoots folder.
  const typeNames = ts.getAutomaticTypeDirectiveNames(options, host);
  const typesFrom = join(dirname(compiler.configPath), '__inferred type names__.ts');
  for (const name of typeNames) resolveTypes(`types:${name}`, name, typesFrom, 'config', undefined);

  // Project references: the referenced project's package (its outputs), or its files by content.
  for (const ref of compiler.projectReferences) {
    const rel = wsRel(host.realpath!(ref.path));
    const refDir = isFile(ref.path) ? posix.dirname(rel) : rel;
    const pkg = byRoot.find((p) => refDir === p.root || refDir.startsWith(`${p.root}/`));
    if (pkg && pkg.root !== self) {
      addPackage(pkg.name, 'surface', 'config');
      note(`reference:${rel}`, `package:${pkg.name}`, 'config');
    } else if (!pkg || pkg.root !== self) {
      note(`reference:${rel}`, `file:${rel}`, 'config');
      const configPath = ts.resolveProjectReferencePath(ref);
      hashFile(configPath, wsRel(configPath));
      const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...parseHostFor(tree), onUnRecoverableConfigFileDiagnostic: () => undefined });
      for (const f of parsed?.fileNames ?? []) land(`reference:${rel}`, f, 'config', true);
    }
  }
  if (selfPkg) result.packages.delete(selfPkg.name);
  return result;
}
