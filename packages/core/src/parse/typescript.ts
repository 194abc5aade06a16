/**
 * The TypeScript compiler's own parser, for TS, TSX, declaration files and JavaScript (ESM and CJS).
 * Chosen by measurement over tree-sitter (see tools/bench-digest.mjs). The module is loaded lazily
 * so importing this file does no work: a piscina worker pays for `typescript` on its first parse,
 * once.
 */
import { closeSync, openSync, readFileSync, renameSync, statSync, writeSync, mkdirSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import type * as TS from 'typescript';
import type { Variant } from './language.js';
import { begin, end } from '../trace/record.js';

let tsModule: typeof TS | undefined;
let loads = 0;

/**
 * The compiler module, loaded once per thread. It is loaded as CommonJS exactly as `require` would
 * load it, but compiled with a V8 code cache when one is available (the same mechanism as Node 22's
 * module compile cache): loading `typescript.js` (9 MB) costs each new worker 0.2–0.5 s of parsing
 * and compiling, most of which a cache skips. The cache holds compiled code only: V8 checks it
 * against the source and its own version and flags, and rejects it (we then compile normally) on
 * any mismatch or damage — it can make a load faster, never change what runs. Any failure of this
 * path falls back to a plain `require`.
 */
export function typescript(): typeof TS {
  if (!tsModule) {
    const loading = begin('load typescript');
    tsModule = loadCompiler();
    loads++;
    end(loading, 'how', loadedWith);
  }
  return tsModule;
}

/** How many times this thread has loaded the compiler: 0 before its first parse, then 1 for good. */
export function parserLoads(): number {
  return loads;
}

// ------------------------------------------------------------------ compiler load with a code cache

let cacheState: { script: Script; file: string; parses: number } | undefined;
/** How this thread's compiler was loaded, for tests and diagnostics. */
let loadedWith: 'not-loaded' | 'require' | 'no-cache' | 'cache' | 'cache-rejected' = 'not-loaded';

/** How this thread loaded the compiler: through `require` (already loaded, or the cache turned off), or compiled without a cache, with one, or with one V8 rejected. */
export function compilerLoad(): typeof loadedWith {
  return loadedWith;
}
/** Parses after which a thread that had no usable cache writes one (lazily compiled functions included). */
const PARSES_BEFORE_CACHE = 48;

function loadCompiler(): typeof TS {
  const req = createRequire(import.meta.url);
  const path = req.resolve('typescript');
  const cached = req.cache[path];
  loadedWith = 'require';
  if (cached?.loaded) return cached.exports as typeof TS; // someone in this thread already required it
  if (process.env.KILN_NO_CODE_CACHE) return req('typescript') as typeof TS;
  try {
    // Read as bytes, then decode: `readFileSync(path, 'utf8')` takes 2–4× longer on a 9 MB file
    // (measured on Node 20 and 24: 220–270 ms against 100–120 ms).
    const source = readFileSync(path).toString('utf8');
    const st = statSync(path);
    const key = createHash('sha256')
      .update(`${path}\u0000${st.size}\u0000${st.mtimeMs}\u0000${process.version}\u0000${process.arch}`)
      .digest('hex')
      .slice(0, 24);
    const file = join(tmpdir(), 'kiln-code-cache', `typescript-${key}.v8`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(file);
    } catch {
      cachedData = undefined;
    }
    const script = new Script(Module.wrap(source), { filename: path, ...(cachedData ? { cachedData } : {}) });
    const mod = new Module(path);
    mod.filename = path;
    (mod as unknown as { paths: string[] }).paths = (Module as unknown as { _nodeModulePaths(d: string): string[] })._nodeModulePaths(dirname(path));
    const fn = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: unknown, filename: string, dirname: string) => void;
    fn.call(mod.exports, mod.exports, createRequire(path), mod, path, dirname(path));
    mod.loaded = true;
    if (!req.cache[path]) req.cache[path] = mod;
    loadedWith = !cachedData ? 'no-cache' : script.cachedDataRejected ? 'cache-rejected' : 'cache';
    if (!cachedData || script.cachedDataRejected) cacheState = { script, file, parses: 0 };
    return mod.exports as typeof TS;
  } catch {
    loadedWith = 'require';
    return req('typescript') as typeof TS;
  }
}

/** After enough parses on a thread that loaded without a cache, write one (atomically; best effort). */
function noteParse(): void {
  const c = cacheState;
  if (!c || ++c.parses < PARSES_BEFORE_CACHE) return;
  writeCache(c);
}

/**
 * Write the code cache now if this thread loaded the compiler without a usable one. For a thread
 * that parses a few files and ends — the plugin's warm miss after a one-file edit, in a fresh
 * process on every graph build without the daemon — and so never reaches PARSES_BEFORE_CACHE: the
 * next such process then skips most of the 0.3 s compile.
 */
export function saveCompilerCache(): void {
  if (cacheState) writeCache(cacheState);
}

function writeCache(c: NonNullable<typeof cacheState>): void {
  cacheState = undefined;
  try {
    const data = c.script.createCachedData();
    mkdirSync(dirname(c.file), { recursive: true });
    const tmp = `${c.file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, c.file);
  } catch {
    // A cache is an optimisation only.
  }
}

export interface ParseResult {
  sourceFile: TS.SourceFile;
  /** Syntax errors the parser recovered from: [start, end) offsets and the compiler's message. */
  syntaxErrors: { start: number; end: number; message: string; tsCode: number }[];
}

const FILE_NAMES: Record<Variant, string> = {
  ts: 'm.ts',
  tsx: 'm.tsx',
  dts: 'm.d.ts',
  js: 'm.js',
  jsx: 'm.jsx',
};

/**
 * Parse text as the given variant. The file name handed to the compiler is a fixed placeholder per
 * variant, so nothing about the real path can reach the tree.
 */
export function parseTypeScript(text: string, variant: Variant): ParseResult {
  const ts = typescript();
  const isJs = variant === 'js' || variant === 'jsx';
  const scriptKind = {
    ts: ts.ScriptKind.TS,
    tsx: ts.ScriptKind.TSX,
    dts: ts.ScriptKind.TS,
    js: ts.ScriptKind.JS,
    jsx: ts.ScriptKind.JSX,
  }[variant];
  const sourceFile = ts.createSourceFile(
    FILE_NAMES[variant],
    text,
    {
      languageVersion: ts.ScriptTarget.Latest,
      // JSDoc carries types in JavaScript (checkJs); in TypeScript it is documentation only, which
      // kiln reads from comment ranges without paying for a JSDoc parse.
      jsDocParsingMode: isJs ? ts.JSDocParsingMode.ParseAll : ts.JSDocParsingMode.ParseNone,
    },
    /* setParentNodes */ false,
    scriptKind,
  );
  if (cacheState) noteParse();
  const raw = (sourceFile as unknown as { parseDiagnostics?: TS.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
  const syntaxErrors = raw.map((d) => ({
    start: d.start,
    end: d.start + Math.max(d.length, 0),
    message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
    tsCode: d.code,
  }));
  return { sourceFile, syntaxErrors };
}
