/**
 * The false-hit oracle's build (SPEC §10), used by tools/bench-history.mjs: emit one workspace
 * package's JavaScript and `.d.ts` with the TypeScript compiler, the way SPEC §10 defines "a fresh
 * build" for the soundness check —
 *
 *   - the package's own tsconfig (the same file kiln keys on), parsed by the compiler itself;
 *   - every workspace package mapped to its *sources* through `paths` (so no dependency has to be
 *     built); the mapping is derived here, independently of kiln: each `exports` subpath (and
 *     `main`/`types`), with the build folder and the output extension stripped, is looked up under
 *     `src/` and the package root; plus `name/*` → `src/*`;
 *   - external packages: in a bare checkout (no node_modules) they do not resolve and their types
 *     become `any`; in a checkout whose dependencies were really installed (tools/lib/install.mjs)
 *     they resolve as in the repository's own build, and the compiler is the TypeScript that the
 *     commit installed (`o.ts`, see `installedTypeScript`), not this repository's;
 *   - `noEmitOnError: false`, `skipLibCheck: true`, `noEmit`/`emitDeclarationOnly` off, declarations
 *     on, no source/declaration maps, no build info, `declarationDir` folded into one output folder.
 *     Missing external types are accepted: the outputs are compared, never the diagnostics.
 *
 * Only files emitted *for sources inside the package* are kept (the program also contains the
 * dependencies' sources, reached through `paths`); each is written under its path relative to the
 * package root, so two commits' outputs line up file by file.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ts = createRequire(join(repoRoot, 'package.json'))('typescript');
const defaultTs = ts;
/** The compiler of bare builds (this repository's TypeScript). */
export const ORACLE_TS_VERSION = ts.version;

const SRC_EXTS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
const OUT_EXT_RE = /\.(d\.[mc]?ts|[mc]?js|jsx|[mc]?ts|tsx)$/;

/** Lib `.d.ts` files are immutable: parse each once per process (keyed by path and parse settings). */
const libCache = new Map();

const loadedTs = new Map();
/**
 * The TypeScript a checkout installed, resolved from the package's folder as its build would (through
 * a shim package to the compiler it loads), or undefined when none resolves. Its files are copied once into `toolsDir` (keyed by version and a
 * hash of the compiler), so every checkout with the same compiler shares one loaded module and one
 * parsed lib set.
 * @returns {{ ts: typeof import('typescript'), version: string } | undefined}
 */
export function installedTypeScript(packageDir, toolsDir) {
  let pkgJson;
  try {
    pkgJson = createRequire(join(packageDir, 'package.json')).resolve('typescript/package.json');
  } catch {
    return undefined;
  }
  let dir = dirname(pkgJson);
  // A shim package (`typescript` overridden by `@typescript/typescript6`, whose lib/typescript.js is
  // `module.exports = require("@typescript/old")`): follow it to the package that holds the compiler.
  for (let hop = 0; hop < 4; hop++) {
    const main = join(dir, 'lib', 'typescript.js');
    if (!existsSync(main) || statSync(main).size > 4096) break;
    const target = /require\(\s*["']([^"'./][^"']*)["']\s*\)/.exec(readFileSync(main, 'utf8'))?.[1];
    if (!target) break;
    try {
      dir = dirname(createRequire(join(realpathSync(dir), 'package.json')).resolve(`${target}/package.json`));
    } catch {
      return undefined;
    }
  }
  const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  const main = join(dir, 'lib', 'typescript.js');
  if (!existsSync(main) || statSync(main).size < 100_000) return undefined;
  const id = `typescript-${version}-${createHash('sha256').update(readFileSync(main)).digest('hex').slice(0, 12)}`;
  let hit = loadedTs.get(id);
  if (hit) return hit;
  const dest = join(toolsDir, id);
  if (!existsSync(join(dest, 'lib', 'typescript.js'))) {
    const tmp = `${dest}.tmp${process.pid}-${Math.random().toString(36).slice(2)}`;
    cpSync(dir, tmp, { recursive: true, dereference: true, filter: (f) => !f.includes(`${dir}/node_modules`) });
    rmSync(dest, { recursive: true, force: true });
    renameSync(tmp, dest);
  }
  hit = { ts: createRequire(join(dest, 'package.json'))('./lib/typescript.js'), version };
  loadedTs.set(id, hit);
  return hit;
}

function collectTargets(v, out) {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) collectTargets(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) collectTargets(x, out);
}

/** A manifest target (`./dist/links/httpLink.d.mts`) → the source file in the package it comes from. */
function sourceOfTarget(absRoot, target) {
  const t = target.replace(/^\.\//, '');
  if (t.includes('*')) return undefined;
  const stem = t.replace(OUT_EXT_RE, '');
  const rests = [stem];
  const m = /^(dist|lib|build|out|esm|cjs)\/(.*)$/.exec(stem);
  if (m) rests.push(m[2]);
  for (const rest of rests) {
    for (const base of [`src/${rest}`, rest]) {
      for (const cand of [...SRC_EXTS.map((e) => base + e), ...SRC_EXTS.map((e) => `${base}/index${e}`)]) {
        if (/\.d\.[mc]?ts$/.test(cand)) continue;
        const abs = join(absRoot, cand);
        if (existsSync(abs)) return abs;
      }
    }
  }
  return undefined;
}

/**
 * `paths` mapping every workspace package (name → its source entry; `name/sub` → the source of each
 * exported subpath; `name/*` → `src/*` or the root).
 * @param {string} workspaceRoot absolute
 * @param {{name: string, root: string, manifest: object}[]} packages
 */
export function workspacePaths(workspaceRoot, packages) {
  const paths = {};
  for (const p of packages) {
    if (!p.name || !p.manifest) continue;
    const absRoot = join(workspaceRoot, p.root);
    const entries = [];
    const exp = p.manifest.exports;
    if (exp && typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'))) {
      for (const [sub, v] of Object.entries(exp)) {
        if (sub === './package.json' || sub.includes('*')) continue;
        const targets = [];
        collectTargets(v, targets);
        entries.push([sub, targets]);
      }
    } else if (exp !== undefined) {
      const targets = [];
      collectTargets(exp, targets);
      entries.push(['.', targets]);
    }
    if (!entries.some(([s]) => s === '.')) {
      entries.push(['.', ['source', 'types', 'typings', 'module', 'main'].map((k) => p.manifest[k]).filter((x) => typeof x === 'string')]);
    }
    for (const [sub, targets] of entries) {
      let src = targets.map((t) => sourceOfTarget(absRoot, t)).find(Boolean);
      if (!src && sub === '.') src = sourceOfTarget(absRoot, 'src/index.ts') ?? sourceOfTarget(absRoot, 'index.ts');
      if (src) paths[sub === '.' ? p.name : `${p.name}/${sub.slice(2)}`] = [src];
    }
    const srcDir = existsSync(join(absRoot, 'src')) ? join(absRoot, 'src') : absRoot;
    paths[`${p.name}/*`] = [`${srcDir}/*`];
  }
  return paths;
}

/**
 * Emit one package into `outDir` (removed first). Returns { files, syntaxErrors, ms }: the program is
 * never fully type-checked (the declaration emit asks the checker only what it needs), so only
 * syntax errors are counted — reported, never a reason to skip the comparison.
 * @param {{ workspaceRoot: string, root: string, tsconfig: string, paths: Record<string,string[]>, outDir: string, ts?: typeof import('typescript') }} o
 */
export function oracleBuild(o) {
  const t0 = performance.now();
  const ts = o.ts ?? defaultTs;
  const libDir = dirname(ts.getDefaultLibFilePath({}));
  const projectDir = join(o.workspaceRoot, o.root);
  const configPath = join(projectDir, o.tsconfig);
  const host0 = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} };
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, host0);
  if (!parsed) return { files: 0, syntaxErrors: 0, ms: 0, fatal: `cannot read ${o.tsconfig}` };
  const opts = { ...parsed.options };
  for (const k of ['declarationDir', 'tsBuildInfoFile', 'outFile', 'declarationMap', 'sourceMap', 'inlineSourceMap', 'inlineSources', 'mapRoot', 'sourceRoot', 'composite', 'incremental', 'emitDeclarationOnly', 'noEmit', 'build']) delete opts[k];
  Object.assign(opts, {
    outDir: o.outDir,
    rootDir: projectDir,
    declaration: true,
    noEmitOnError: false,
    skipLibCheck: true,
    removeComments: false,
    paths: { ...(opts.paths ?? {}), ...o.paths },
  });
  if (opts.paths && !opts.baseUrl && !opts.pathsBasePath) opts.pathsBasePath = dirname(configPath);
  const host = ts.createCompilerHost(opts, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, langOrOptions, onError, shouldCreate) => {
    if (!fileName.startsWith(libDir)) return getSourceFile(fileName, langOrOptions, onError, shouldCreate);
    const key = `${fileName}|${JSON.stringify(langOrOptions)}`;
    let sf = libCache.get(key);
    if (!sf) libCache.set(key, (sf = getSourceFile(fileName, langOrOptions, onError, shouldCreate)));
    return sf;
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: opts, host });
  rmSync(o.outDir, { recursive: true, force: true });
  mkdirSync(o.outDir, { recursive: true });
  let files = 0;
  const inside = (f) => {
    const r = relative(projectDir, f);
    return r && !r.startsWith('..') && !isAbsolute(r) && !r.split(sep).includes('node_modules');
  };
  const writeFile = (fileName, text, bom, _onError, sourceFiles) => {
    if (fileName.endsWith('.tsbuildinfo') || fileName.endsWith('.map')) return;
    if (!sourceFiles?.length || !sourceFiles.every((sf) => inside(sf.fileName))) return;
    const r = relative(o.outDir, fileName);
    if (r.startsWith('..') || isAbsolute(r)) return;
    const dest = join(o.outDir, r);
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, bom ? `\uFEFF${text}` : text);
    files++;
  };
  // Emit file by file, only the package's own sources: the dependencies' sources are in the program
  // (through `paths`) for their types, but their outputs are not this build's. A file of the package
  // reached only by import (not matched by the tsconfig) is emitted too, as tsc would.
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || !inside(sf.fileName) || program.isSourceFileFromExternalLibrary(sf)) continue;
    program.emit(sf, writeFile);
  }
  const syntaxErrors = program.getSyntacticDiagnostics().filter((d) => d.category === ts.DiagnosticCategory.Error).length;
  return { files, syntaxErrors, ms: Math.round(performance.now() - t0), ts: ts.version };
}

/**
 * What a build with this tsconfig reads besides imports: the files the config compiles and the
 * config chain (the file and everything it extends), relative to the workspace root.
 */
export function configInputs(workspaceRoot, root, tsconfig) {
  const projectDir = join(workspaceRoot, root);
  const configPath = join(projectDir, tsconfig);
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const rel = (f) => relative(workspaceRoot, f).split(sep).join('/');
  const configs = [configPath, ...(parsed?.options.configFile?.extendedSourceFiles ?? [])].map(rel).filter((f) => !f.startsWith('..'));
  return { files: (parsed?.fileNames ?? []).map(rel).filter((f) => !f.startsWith('..')), configs };
}
