#!/usr/bin/env node
/**
 * Digest benchmark (issue 2, point 12). One run prints, side by side on the same files:
 *   1. raw parse MB/s of the candidate parsers, one thread (TypeScript compiler with and without JSDoc
 *      parsing, native tree-sitter parse only, tree-sitter parse + a full TreeCursor walk in JS);
 *   2. cold digest on one thread without the pool (`extractSlice` in a loop) and its ratio to the
 *      chosen parser's raw parse;
 *   3. cold `digestTree` with an empty store, 1 worker vs 2 workers: with a fresh pool per run (pool
 *      startup and JIT warm-up included, reported apart), and with long-lived pools (steady state);
 *   4. warm `digestTree` (second run, same store) and its ratio to cold; also with the view's report memo
 *      off (every slice decoded and assembled);
 *   5. the machine's ceiling for two threads: an integer loop and extractSlice alone, 1 thread vs 2 at once
 *      (no pool, no main-thread work), beside the cores a 1- and a 2-worker run keep busy;
 * then the targets with PASS/MISS (by wall time, and the rate targets also by process CPU time), and
 * timing splits that say where the time goes: the warm run's phases (listing, read + hash, store lookups
 * through the view's manifest and packs, assembly), the store entries a cold run writes and a warm run
 * adds, the store write phase alone, and a fresh thread's compiler load (with and without the V8 code
 * cache of parse/typescript.ts) and JIT warm-up over three passes. "Cold" means an empty slice store;
 * the compiler's code cache (in the OS temp dir) is reported as present or absent at start.
 *
 * Usage: node tools/bench-digest.mjs [--corpus DIR] [--files N] [--reps N] [--warmup N] [--keep]
 * Corpus: --corpus, else $KILN_BENCH_CORPUS, else the TS/JS sources inside this repo's node_modules
 * (works offline). The selected files are copied into a temporary directory (with a package.json),
 * so every measurement sees exactly the same files; nothing from the corpus is written into the repo.
 * Requires a build (`npm run build`); `npm run bench:digest` builds first.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import vm from 'node:vm';
import { cliArgs } from './lib/cli-args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const builtDist = join(repoRoot, 'packages/core/dist');

const HELP = `usage: node tools/bench-digest.mjs [--corpus DIR] [--files N] [--reps N] [--warmup N] [--keep]

  --corpus DIR   directory of real sources (its node_modules, dot-dirs and coverage/ are skipped);
                 default: $KILN_BENCH_CORPUS, else TS/JS sources in ${join(repoRoot, 'node_modules')}
  --files N      use at most N files (deterministic spread over the corpus); default: all, at most 2000
                 (at most 1000 from the node_modules fallback)
  --reps N       timed repetitions of every measurement, interleaved; medians are reported (default 5)
  --warmup N     untimed passes before the in-memory measurements, for a JIT steady state (default 3)
  --keep         keep the temporary corpus copy and stores (their paths are printed)
`;

const { args } = cliArgs(
  {
    corpus: { type: 'string' },
    files: { type: 'string' },
    reps: { type: 'string' },
    warmup: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
  HELP,
);
const REPS = Math.max(1, Number(args.reps ?? 5));
const WARMUP = Math.max(0, Number(args.warmup ?? 3));
const MAX_FILES = args.files !== undefined ? Number(args.files) : args.corpus || process.env.KILN_BENCH_CORPUS ? 2000 : 1000;
if (!Number.isInteger(MAX_FILES) || MAX_FILES < 1 || !Number.isInteger(REPS) || !Number.isInteger(WARMUP)) {
  process.stderr.write(`--files and --reps take positive integers\n${HELP}`);
  process.exit(2);
}

// ------------------------------------------------------------------ engine and parsers

try {
  await stat(join(builtDist, 'index.js'));
} catch {
  process.stderr.write(`packages/core is not built: run \`npm run build\` first (or \`npm run bench:digest\`)\n`);
  process.exit(1);
}
// Snapshot the built engine: the main thread and the workers (started later) then run the same code
// even if packages/core/dist is rebuilt while the benchmark runs.
const tmpRoot = await mkdtemp(join(os.tmpdir(), 'kiln-bench-'));
const coreDist = join(tmpRoot, 'core/dist');
await cp(builtDist, coreDist, { recursive: true });
await copyFile(join(repoRoot, 'packages/core/package.json'), join(tmpRoot, 'core/package.json'));
await symlink(join(repoRoot, 'node_modules'), join(tmpRoot, 'node_modules'), 'dir');
const core = await import(pathToFileURL(join(coreDist, 'index.js')).href);
const { parseTypeScript } = await import(pathToFileURL(join(coreDist, 'parse/typescript.js')).href);
const { digestTree } = core;
/** The engine's internal modules (not on its public entry). */
const coreModule = (rel) => import(pathToFileURL(join(coreDist, rel)).href);
const { extractSlice } = await coreModule('facts/extract.js');
const { createDigestPool } = await coreModule('pool/pool.js');
const { fileKind } = await coreModule('parse/language.js');
const { decodeSource, DEFAULT_MAX_FILE_SIZE } = await coreModule('parse/decode.js');
const { sha256Hex } = await coreModule('digest/hash.js');
const { listSourceFiles } = await coreModule('view/files.js');
const { viewIdOf } = await coreModule('store/format.js');
/** Internal stages of extractSlice, for the timing split (absent stages are skipped). */
const optionalImport = (rel) => import(pathToFileURL(join(coreDist, rel)).href).catch(() => ({}));
const { findMeaningfulComments } = await optionalImport('facts/comments.js');
const { findDeepRegions } = await optionalImport('parse/nesting.js');
const { readManifest, writeManifest, registerView, encodeManifest } = await optionalImport('store/manifest.js');
const { writePack } = await optionalImport('store/pack.js');
const { SliceResolver } = await optionalImport('store/lookup.js');
const coreRequire = createRequire(join(coreDist, 'index.js'));
const ts = coreRequire('typescript'); // the very module the engine parses with
const rootRequire = createRequire(join(repoRoot, 'package.json'));
const TreeSitter = rootRequire('tree-sitter');
const TSGrammars = rootRequire('tree-sitter-typescript');
const JSGrammar = rootRequire('tree-sitter-javascript');
/** Installed version of a package, found from its resolved entry (some packages do not export ./package.json). */
async function pkgVersion(req, name) {
  for (let dir = dirname(req.resolve(name)); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      const pj = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
      if (pj.name === name) return pj.version;
    } catch {
      // keep looking upwards
    }
  }
  return '?';
}
const versions = {
  typescript: ts.version,
  'tree-sitter': await pkgVersion(rootRequire, 'tree-sitter'),
  'tree-sitter-typescript': await pkgVersion(rootRequire, 'tree-sitter-typescript'),
  'tree-sitter-javascript': await pkgVersion(rootRequire, 'tree-sitter-javascript'),
  piscina: await pkgVersion(coreRequire, 'piscina'),
  cacache: await pkgVersion(coreRequire, 'cacache'),
};

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

// ------------------------------------------------------------------ corpus

const MAX_BYTES = 500 * 1024;
const SKIP_DIRS = new Set(['node_modules', '.git', '.nx', 'coverage']); // as listSourceFiles does

let corpusDir;
let corpusLabel;
if (args.corpus) {
  corpusDir = resolve(args.corpus);
  corpusLabel = `--corpus ${corpusDir}`;
} else if (process.env.KILN_BENCH_CORPUS) {
  corpusDir = resolve(process.env.KILN_BENCH_CORPUS);
  corpusLabel = `KILN_BENCH_CORPUS=${corpusDir}`;
} else {
  corpusDir = join(repoRoot, 'node_modules');
  corpusLabel = `fallback: TS/JS sources in ${corpusDir} (offline; pass --corpus for a real repository)`;
}

async function collect(root, fallback) {
  const out = [];
  async function walk(dir) {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        // In the fallback the root is node_modules itself; nested node_modules are other packages.
        if (e.name.startsWith('.') || e.name === '.git' || e.name === 'coverage' || (!fallback && SKIP_DIRS.has(e.name))) continue;
        await walk(abs);
      } else if (e.isFile() && fileKind(e.name)) {
        out.push(relative(root, abs).split(sep).join('/'));
      }
    }
  }
  await walk(root);
  return out.sort();
}

function isMinified(text) {
  const lines = text.split('\n');
  let longest = 0;
  for (const l of lines) if (l.length > longest) longest = l.length;
  return longest > 5000 || text.length / lines.length > 250;
}

async function loadCorpus() {
  const fallback = corpusDir === join(repoRoot, 'node_modules');
  let rels = await collect(corpusDir, fallback);
  if (!rels.length) throw new Error(`no .ts/.tsx/.js sources under ${corpusDir}`);
  // In node_modules, prefer real sources: skip declaration files and dist bundles where a package
  // ships both (they are generated); a user corpus is taken as it is.
  if (fallback) rels = rels.filter((r) => !/\.d\.[mc]?ts$/.test(r) && !/(^|\/)(dist|build|umd|cjs|esm|lib)\/.*\.min\./.test(r));
  const excluded = { large: 0, minified: 0, empty: 0, undecodable: 0 };
  const candidates = [];
  for (const rel of rels) {
    const abs = join(corpusDir, rel);
    const st = await stat(abs);
    if (st.size === 0) { excluded.empty++; continue; }
    if (st.size > MAX_BYTES || /\.min\.[mc]?js$/.test(rel)) { excluded.large++; continue; }
    candidates.push({ rel, abs, size: st.size });
  }
  // Deterministic spread: order by a hash of the path, take the first N, then restore path order.
  let chosen = candidates;
  if (candidates.length > MAX_FILES) {
    const h = (s) => createHash('sha1').update(s).digest('hex');
    chosen = [...candidates].sort((a, b) => (h(a.rel) < h(b.rel) ? -1 : 1)).slice(0, MAX_FILES * 2);
  }
  const files = [];
  for (const c of chosen) {
    if (files.length >= MAX_FILES) break;
    const bytes = await readFile(c.abs);
    const decoded = decodeSource(bytes, DEFAULT_MAX_FILE_SIZE);
    if (!decoded.ok) { excluded.undecodable++; continue; }
    if (isMinified(decoded.text)) { excluded.minified++; continue; }
    // Where the file sits in the staged copy: directory names that digestTree skips (node_modules,
    // dot-dirs, coverage — nested packages in the fallback corpus) are renamed so it sees every file.
    const parts = c.rel.split('/');
    const staged = ['src', ...parts.slice(0, -1).map((d) => (SKIP_DIRS.has(d) || d.startsWith('.') ? `_${d.replace(/^\./, 'dot-')}` : d)), parts.at(-1)].join('/');
    files.push({ rel: c.rel, staged, abs: c.abs, bytes, text: decoded.text, variant: fileKind(c.rel).variant });
  }
  files.sort((a, b) => (a.rel < b.rel ? -1 : 1));
  return { files, excluded, seen: rels.length };
}

// ------------------------------------------------------------------ the measured operations

const SCRIPT_KIND = { ts: ts.ScriptKind.TS, tsx: ts.ScriptKind.TSX, dts: ts.ScriptKind.TS, js: ts.ScriptKind.JS, jsx: ts.ScriptKind.JSX };
const FILE_NAME = { ts: 'm.ts', tsx: 'm.tsx', dts: 'm.d.ts', js: 'm.js', jsx: 'm.jsx' };

function tsCreate(f, jsDocParsingMode) {
  return ts.createSourceFile(FILE_NAME[f.variant], f.text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode }, false, SCRIPT_KIND[f.variant]);
}

const tsParsers = {
  ts: new TreeSitter(),
  tsx: new TreeSitter(),
  js: new TreeSitter(),
};
tsParsers.ts.setLanguage(TSGrammars.typescript);
tsParsers.tsx.setLanguage(TSGrammars.tsx);
tsParsers.js.setLanguage(JSGrammar); // the JavaScript grammar includes JSX
const grammarFor = (v) => (v === 'tsx' ? tsParsers.tsx : v === 'js' || v === 'jsx' ? tsParsers.js : tsParsers.ts);
const tsBufferSize = (text) => Math.max(32 * 1024, text.length * 2 + 16);
const treeSitterParse = (f) => grammarFor(f.variant).parse(f.text, undefined, { bufferSize: tsBufferSize(f.text) });

let sink = 0; // results are folded in so nothing is optimised away
const hashParts = (parts) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/** tree-sitter: every node visited with a TreeCursor; type of every node, text of every leaf; hashed. */
function treeSitterWalk(f) {
  const tree = treeSitterParse(f);
  const c = tree.walk();
  const parts = [];
  outer: for (;;) {
    parts.push(c.nodeType);
    if (c.gotoFirstChild()) continue;
    parts.push(c.nodeText);
    while (!c.gotoNextSibling()) if (!c.gotoParent()) break outer;
  }
  return hashParts(parts);
}

/** The TypeScript analogue: every node visited with forEachChild, kind of every node, text of leaves; hashed. */
function tsWalk(f) {
  const sf = parseTypeScript(f.text, f.variant).sourceFile;
  const parts = [];
  const visit = (n) => {
    parts.push(n.kind);
    let leaf = true;
    ts.forEachChild(n, (ch) => {
      leaf = false;
      visit(ch);
    });
    if (leaf && n.text !== undefined) parts.push(n.text);
  };
  visit(sf);
  return hashParts(parts);
}

const inMemory = [
  { id: 'ts-all', label: 'TypeScript createSourceFile, JSDoc ParseAll', run: (f) => tsCreate(f, ts.JSDocParsingMode.ParseAll).statements.length },
  { id: 'ts-none', label: 'TypeScript createSourceFile, JSDoc ParseNone', run: (f) => tsCreate(f, ts.JSDocParsingMode.ParseNone).statements.length },
  { id: 'ts-kiln', label: 'TypeScript as kiln parses (JSDoc for JS only) *', run: (f) => parseTypeScript(f.text, f.variant).sourceFile.statements.length },
  { id: 'tsitter', label: 'tree-sitter parse only (native)', run: (f) => treeSitterParse(f).rootNode.endIndex },
  { id: 'tsitter-walk', label: 'tree-sitter parse + TreeCursor walk + hash', run: (f) => treeSitterWalk(f).length },
  { id: 'ts-walk', label: 'TypeScript parse + forEachChild walk + hash', run: (f) => tsWalk(f).length },
  { id: 'extract', label: 'cold digest: extractSlice loop, 1 thread, no pool', run: (f) => extractSlice(f.bytes, f.variant).decls.length },
];
// Stages of extractSlice measured on their own (same files, same thread) to split its time.
const stages = [
  { id: 'stage-decode', label: 'decode UTF-8 + sha256 of the bytes', run: (f) => decodeSource(f.bytes, DEFAULT_MAX_FILE_SIZE).ok + sha256Hex(f.bytes).length },
  findDeepRegions && { id: 'stage-nesting', label: 'nesting pre-scan (parse/nesting.ts findDeepRegions)', run: (f) => findDeepRegions(f.text).length },
  findMeaningfulComments && { id: 'stage-comments', label: 'meaningful-comment scan (facts/comments.ts)', run: (f) => findMeaningfulComments(f.text, f.variant === 'tsx' || f.variant === 'jsx').length },
].filter(Boolean);
inMemory.push(...stages);

/** Wall and process CPU time (all threads: workers, GC, JIT) of one measured operation. */
async function measure(f) {
  gc();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await f();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000, value };
}

const pass = (op, files) =>
  measure(() => {
    for (const f of files) sink += op.run(f) | 0;
  });

/** A fresh thread, like a new pool worker: load the engine, then digest the files `passes` times. */
const FRESH_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
(async () => {
  const { extractSlice } = await import(workerData.extract);
  const files = workerData.files.map(([p, v]) => [readFileSync(p), v]);
  const out = [];
  let t = performance.now();
  extractSlice(Buffer.from('export const x = 1;\\n'), 'ts'); // loads the parser
  out.push(performance.now() - t);
  const { parseTypeScript } = await import(workerData.parse);
  const texts = files.map(([b, v]) => [b.toString('utf8'), v]);
  for (let i = 0; i < workerData.passes; i++) {
    t = performance.now();
    if (workerData.op === 'parse') for (const [s, v] of texts) parseTypeScript(s, v);
    else for (const [b, v] of files) extractSlice(b, v);
    out.push(performance.now() - t);
  }
  parentPort.postMessage(out);
})();
`;
function freshThreadPasses(files, passes, env = process.env, op = 'extract') {
  return new Promise((resolvePasses, reject) => {
    const w = new Worker(FRESH_THREAD, {
      eval: true,
      env,
      workerData: { extract: pathToFileURL(join(coreDist, 'facts/extract.js')).href, parse: pathToFileURL(join(coreDist, 'parse/typescript.js')).href, files, passes, op },
      resourceLimits: { stackSizeMb: 8 },
    });
    w.once('message', (m) => {
      resolvePasses(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

/**
 * The machine's own ceiling for two threads, without kiln's pool or main thread: `n` threads start
 * together (after a warm-up, behind a barrier) and each runs the same work; returns the wall time until
 * the last finishes and the process CPU time meanwhile. `op` is `extract` (extractSlice over the corpus,
 * 2 passes) or `spin` (an integer loop that touches no memory: the CPU-only control).
 */
const CONCURRENT_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
(async () => {
  let work;
  if (workerData.op === 'spin') {
    work = () => { let x = 0; for (let i = 0; i < 3e8; i++) x = (x * 31 + i) | 0; return x; };
  } else {
    const { extractSlice } = await import(workerData.extract);
    const files = workerData.files.map(([p, v]) => [readFileSync(p), v]);
    work = () => { let n = 0; for (let r = 0; r < 2; r++) for (const [b, v] of files) n += extractSlice(b, v).decls.length; return n; };
  }
  for (let i = 0; i < (workerData.op === 'spin' ? 1 : 3); i++) work();
  parentPort.postMessage('ready');
  parentPort.once('message', () => { work(); parentPort.postMessage('done'); });
})();
`;
async function concurrentThreads(n, op, files) {
  const ws = Array.from({ length: n }, () => new Worker(CONCURRENT_THREAD, {
    eval: true,
    workerData: { extract: pathToFileURL(join(coreDist, 'facts/extract.js')).href, files, op },
    resourceLimits: { stackSizeMb: 8 },
  }));
  try {
    await Promise.all(ws.map((w) => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); })));
    return await measure(() => Promise.all(ws.map((w) => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); w.postMessage('go'); }))));
  } finally {
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

// ------------------------------------------------------------------ statistics and printing

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const mbps = (bytes, ms) => bytes / 1e6 / (ms / 1000);
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const wallOf = (xs) => xs.map((x) => x.wall);
const cpuOf = (xs) => xs.map((x) => x.cpu);

// ------------------------------------------------------------------ main

const stage = join(tmpRoot, 'corpus');
const storesDir = join(tmpRoot, 'stores');
let storeSeq = 0;
const freshStore = () => join(storesDir, `s${storeSeq++}`);
let pool;

try {
  const { files, excluded, seen } = await loadCorpus();
  const totalBytes = files.reduce((s, f) => s + f.bytes.length, 0);
  const byVariant = {};
  for (const f of files) byVariant[f.variant] = (byVariant[f.variant] ?? 0) + 1;

  // Stage: exactly the chosen files, under their corpus-relative paths, in a package of their own.
  await mkdir(stage, { recursive: true });
  await writeFile(join(stage, 'package.json'), JSON.stringify({ name: 'kiln-bench-corpus', private: true }));
  for (const f of files) {
    const to = join(stage, f.staged);
    await mkdir(dirname(to), { recursive: true });
    await copyFile(f.abs, to);
  }
  await mkdir(storesDir, { recursive: true });
  const tiny = join(tmpRoot, 'tiny.ts');
  await writeFile(tiny, 'export const x = 1;\n');

  const cpus = os.cpus();
  const print = (s = '') => process.stdout.write(`${s}\n`);
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  const loadStart = load();
  print(`kiln digest benchmark — ${new Date().toISOString()} — command: node tools/bench-digest.mjs ${process.argv.slice(2).join(' ')}`.trimEnd());
  print(`machine: ${os.availableParallelism()} cpus (${cpus[0]?.model?.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${process.platform}-${process.arch}, node ${process.version}`);
  print(`versions: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  {
    const ccDir = join(os.tmpdir(), 'kiln-code-cache');
    let present = false;
    try {
      present = (await readdir(ccDir)).some((n) => n.endsWith('.v8'));
    } catch {
      present = false;
    }
    print(`compiler code cache (parse/typescript.ts): ${ccDir}, ${present ? 'present' : 'absent'} at start${process.env.KILN_NO_CODE_CACHE ? '; disabled by KILN_NO_CODE_CACHE' : ''}; "cold" = empty slice store`);
  }
  print(`corpus: ${corpusLabel}`);
  print(
    `  ${files.length} files, ${fmt(totalBytes / 1e6, 2)} MB (${Object.entries(byVariant).map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
      `${seen} sources seen; excluded: ${excluded.large} > 500 KB or .min, ${excluded.minified} minified/generated, ${excluded.empty} empty, ${excluded.undecodable} not UTF-8`,
  );
  if (files.length < 500) print(`  WARNING: fewer than 500 files (${files.length}); the issue asks for at least 500`);
  print(
    `method: ${REPS} timed reps, interleaved (order rotated per rep); in-memory rows after ${WARMUP} warm-up passes (JIT steady state); ` +
      `medians [min–max]; MB = 10^6 bytes of source; cpu = process CPU time, all threads (workers, GC, JIT)`,
  );
  print();

  // ---- 1 + 2: in-memory, one thread
  process.stderr.write('in-memory passes');
  const times = Object.fromEntries(inMemory.map((o) => [o.id, []]));
  for (let w = 0; w < WARMUP; w++) for (const op of inMemory) await pass(op, files); // JIT, grammar load
  for (let r = 0; r < REPS; r++) {
    for (let i = 0; i < inMemory.length; i++) {
      const op = inMemory[(i + r) % inMemory.length];
      times[op.id].push(await pass(op, files));
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');

  // ---- 3 + 4: digestTree through the pool
  process.stderr.write('digestTree runs');
  const cold = { 1: [], 2: [] };
  const coldStats = {};
  const warm = [];
  const warmNoMemo = [];
  const warmStats = [];
  const startup = { 1: [], 2: [] };
  const splits = { noStore: [], inThread: [], list: [], readHash: [], lookups: [] };
  const entries = { cold: [], warmNew: [], packsRead: [] };
  const writes = [];
  const jit = { load: [], 1: [], 2: [], 3: [], loadNoCache: [], noCache1: [] };
  const isolated = { parse: [], extract: [] };
  const cacache = coreRequire('cacache');
  const variantOf = new Map(files.map((f) => [f.staged, f.variant]));
  const check = (report, expectParsed) => {
    const s = report.stats;
    if (s.files !== files.length) throw new Error(`digestTree saw ${s.files} files, expected ${files.length}`);
    if (expectParsed !== undefined && s.parsed !== expectParsed) throw new Error(`digestTree parsed ${s.parsed}, expected ${expectParsed}`);
    return s;
  };
  let reference;
  const sameAsReference = (report, what) => {
    if (JSON.stringify(report.declarations) !== JSON.stringify(reference.declarations)) throw new Error(`${what}: report differs from the first cold run`);
  };
  const poolStartup = (threads) =>
    measure(async () => {
      const p = createDigestPool(threads);
      pool = p;
      // One tiny task per thread: a worker counts as started once it has loaded the parser.
      await Promise.all(Array.from({ length: threads }, () => p.run({ file: tiny, variant: 'ts', digestSchema: core.DIGEST_SCHEMA, maxFileSize: DEFAULT_MAX_FILE_SIZE, storeDir: null })));
      await p.destroy();
      pool = undefined;
    });
  // warm-up run (module loading, page cache), not timed
  reference = await digestTree(stage, { store: freshStore(), workers: 2 });
  check(reference, files.length);
  for (let r = 0; r < REPS; r++) {
    const order = r % 2 ? [2, 1] : [1, 2];
    let lastStore;
    for (const w of order) {
      const store = freshStore();
      const m = await measure(() => digestTree(stage, { store, workers: w }));
      cold[w].push(m);
      coldStats[w] = check(m.value, files.length);
      sameAsReference(m.value, `cold ${w}w`);
      if (w === 2) lastStore = store;
    }
    const m = await measure(() => digestTree(stage, { store: lastStore, workers: 2 }));
    warm.push(m);
    warmStats.push(check(m.value, 0));
    sameAsReference(m.value, 'warm');
    // The same warm run without the view's memoised report: every slice decoded and assembled.
    const nm = await measure(() => digestTree(stage, { store: lastStore, workers: 2, reportMemo: false }));
    check(nm.value, 0);
    sameAsReference(nm.value, 'warm, report memo off');
    nm.value = undefined;
    warmNoMemo.push(nm);
    for (const w of order) startup[w].push(await poolStartup(w));
    // splits: cold without a store (pool + extract only); cold on this thread with a store (no pool)
    splits.noStore.push(await measure(async () => check(await digestTree(stage, { store: false, workers: 2 }), files.length)));
    const s0 = freshStore();
    splits.inThread.push(await measure(async () => check(await digestTree(stage, { store: s0, workers: 0 }), files.length)));
    // warm splits on the same store: the stages digestTree runs on its thread when every file hits
    const listed = await measure(() => listSourceFiles(stage));
    splits.list.push(listed);
    const rels = listed.value;
    const hashed = await measure(() => rels.map((rel) => sha256Hex(readFileSync(join(stage, rel)))));
    splits.readHash.push(hashed);
    // The warm lookup phase as digestTree runs it (store/lookup.ts): the view's manifest (one entry),
    // each pack it names read once (integrity-checked), every slice decoded and re-verified.
    const looked = await measure(async () => {
      const m = await readManifest(lastStore, viewIdOf(stage), core.DIGEST_SCHEMA);
      if (m.status !== 'hit') throw new Error(`warm split: the view's manifest is ${m.status}`);
      const resolver = new SliceResolver(lastStore, core.DIGEST_SCHEMA);
      const out = await Promise.all(rels.map((rel, i) => {
        const e = m.manifest.files.get(rel);
        if (!e || e.contentHash !== hashed.value[i]) return { status: 'miss' };
        return resolver.resolve(m.manifest.packs[e.pack], e.contentHash, e.variant);
      }));
      return { out, packs: m.manifest.packs.length };
    });
    splits.lookups.push(looked);
    if (looked.value.out.some((x) => x.status !== 'hit')) throw new Error('warm split: a store lookup missed');
    entries.packsRead.push(looked.value.packs);
    // The write phase of a cold run on its own: one pack of every slice, the manifest, the registry
    // (the memoised report is written after assembly; it is part of the cold rows, not of this split).
    const items = looked.value.out.map((r) => ({ contentHash: r.slice.contentHash, variant: r.slice.variant, digestSchema: r.slice.digestSchema, extractor: r.slice.extractor, json: r.json }));
    const wStore = freshStore();
    writes.push(await measure(async () => {
      const ref = await writePack(wStore, items);
      const files = new Map(rels.map((rel, i) => [rel, { contentHash: items[i].contentHash, variant: items[i].variant, pack: 0 }]));
      await writeManifest(wStore, viewIdOf(stage), core.DIGEST_SCHEMA, encodeManifest({ packs: [ref], files }, core.DIGEST_SCHEMA));
      await registerView(wStore, core.DIGEST_SCHEMA, viewIdOf(stage));
    }));
    // How many store entries (cacache index keys) a cold run wrote, and a warm run added.
    const before = Object.keys(await cacache.ls(lastStore)).length;
    entries.cold.push(before);
    await digestTree(stage, { store: lastStore, workers: 2 });
    entries.warmNew.push(Object.keys(await cacache.ls(lastStore)).length - before);
    // JIT warm-up: a fresh thread (as a new pool worker is) digests the corpus three times
    const passes = await freshThreadPasses(files.map((f) => [join(stage, f.staged), f.variant]), 3);
    jit.load.push({ wall: passes[0], cpu: NaN });
    for (const i of [1, 2, 3]) jit[i].push({ wall: passes[i], cpu: NaN });
    // The same without the compiler's V8 code cache (parse/typescript.ts), as on a machine's first run.
    // Isolated threads, each running one operation only (as a pool worker runs extractSlice and nothing
    // else): steady state = the median of passes 3–5. In the main thread every operation above shares
    // the compiler's functions with the others (tree-sitter, walks), whose type feedback slows them all.
    for (const op of ['parse', 'extract']) {
      const ps = await freshThreadPasses(files.map((f) => [join(stage, f.staged), f.variant]), 5, process.env, op);
      isolated[op].push({ wall: median(ps.slice(3)), cpu: NaN });
    }
    const bare = await freshThreadPasses(files.map((f) => [join(stage, f.staged), f.variant]), 1, { ...process.env, KILN_NO_CODE_CACHE: '1' });
    jit.loadNoCache.push({ wall: bare[0], cpu: NaN });
    jit.noCache1.push({ wall: bare[1], cpu: NaN });
    for (const x of [...cold[1], ...cold[2], warm.at(-1)]) x.value = undefined; // drop reports
    await rm(storesDir, { recursive: true, force: true });
    await mkdir(storesDir, { recursive: true });
    process.stderr.write('.');
  }
  process.stderr.write('\n');

  // ---- 3b: empty store, long-lived pools (JIT steady state), as in a watch process or a daemon that
  // keeps its workers: the same cold digest without each worker's one-time compiler load and tier-up.
  process.stderr.write('warm-pool runs');
  const steady = { 1: [], 2: [] };
  const steadyPools = {};
  for (const w of [1, 2]) {
    steadyPools[w] = createDigestPool(w);
  }
  pool = { destroy: () => Promise.all(Object.values(steadyPools).map((p) => p.destroy())) };
  for (let i = 0; i < WARMUP; i++) for (const w of [1, 2]) check(await digestTree(stage, { store: false, pool: steadyPools[w] }), files.length);
  for (let r = 0; r < REPS; r++) {
    for (const w of r % 2 ? [2, 1] : [1, 2]) {
      const m = await measure(() => digestTree(stage, { store: freshStore(), pool: steadyPools[w] }));
      check(m.value, files.length);
      sameAsReference(m.value, `cold ${w}w, warm pool`);
      m.value = undefined;
      steady[w].push(m);
    }
    process.stderr.write('.');
  }
  await pool.destroy();
  pool = undefined;
  process.stderr.write('\n');
  reference = undefined;

  // ---- 5: the machine's ceiling for two threads (no pool, no main-thread work), interleaved
  process.stderr.write('ceiling runs');
  const ceiling = { spin1: [], spin2: [], ext1: [], ext2: [] };
  const threadFiles = files.map((f) => [join(stage, f.staged), f.variant]);
  for (let r = 0; r < REPS; r++) {
    for (const n of r % 2 ? [2, 1] : [1, 2]) {
      ceiling[`spin${n}`].push(await concurrentThreads(n, 'spin', threadFiles));
      ceiling[`ext${n}`].push(await concurrentThreads(n, 'extract', threadFiles));
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');

  // ---- the table
  const medW = (xs) => median(wallOf(xs));
  const medC = (xs) => median(cpuOf(xs));
  const range = (xs) => `${fmt(Math.min(...wallOf(xs)), 0)}–${fmt(Math.max(...wallOf(xs)), 0)}`;
  const rate = (xs) => mbps(totalBytes, medW(xs));
  const cpuRate = (xs) => mbps(totalBytes, medC(xs));
  const chosen = rate(times['ts-kiln']);
  const chosenCpu = cpuRate(times['ts-kiln']);
  const rows = [];
  const row = (section, label, xs, extra = '', target = '', verdict = '') =>
    rows.push([section, label, fmt(rate(xs), 2), fmt(medW(xs), 0), range(xs), fmt(medC(xs), 0), fmt(cpuRate(xs), 2), extra, target, verdict]);
  const verdict = (ok) => (ok ? 'PASS' : 'MISS');

  for (const op of inMemory.slice(0, 6)) {
    row('1 raw parse', op.label, times[op.id], `${fmt(rate(times[op.id]) / chosen, 2)}× *`);
  }
  const ext = rate(times.extract);
  const extRatio = ext / chosen;
  row('2 cold', inMemory[6].label, times.extract, `${fmt(extRatio, 2)}× * (cpu ${fmt(cpuRate(times.extract) / chosenCpu, 2)}×)`, '≥3 MB/s; ≥0.6× *', `${verdict(ext >= 3)}; ${verdict(extRatio >= 0.6)}`);
  {
    // Split of extractSlice's time: its stages measured alone; the rest is the walk + digests.
    const whole = medW(times.extract);
    let rest = whole - medW(times['ts-kiln']);
    rows.push(['2 cold', `  of which: TypeScript parse (as kiln)`, '', fmt(medW(times['ts-kiln']), 0), '', '', '', `${fmt((medW(times['ts-kiln']) / whole) * 100, 0)}%`, '', '']);
    for (const st of stages) {
      const ms = medW(times[st.id]);
      rest -= ms;
      rows.push(['2 cold', `  of which: ${st.label}`, '', fmt(ms, 0), range(times[st.id]), fmt(medC(times[st.id]), 0), '', `${fmt((ms / whole) * 100, 0)}%`, '', '']);
    }
    rows.push(['2 cold', '  of which: walk + digests + identities (the rest)', '', fmt(rest, 0), '', '', '', `${fmt((rest / whole) * 100, 0)}% (${fmt(rest / medW(times['ts-kiln']), 2)}× parse)`, '', '']);
  }
  const isoParse = rate(isolated.parse);
  const isoExtract = rate(isolated.extract);
  const isoRatio = isoExtract / isoParse;
  rows.push(['2 cold', 'isolated thread, steady state: TypeScript parse (as kiln) only', fmt(isoParse, 2), fmt(medW(isolated.parse), 0), range(isolated.parse), '', '', '1.00× (isolated)', '', '']);
  rows.push(['2 cold', 'isolated thread, steady state: extractSlice only (as a pool worker)', fmt(isoExtract, 2), fmt(medW(isolated.extract), 0), range(isolated.extract), '', '', `${fmt(isoRatio, 2)}× isolated parse`, '≥3 MB/s; ≥0.6×', `${verdict(isoExtract >= 3)}; ${verdict(isoRatio >= 0.6)}`]);
  const c1 = rate(cold[1]);
  const c2 = rate(cold[2]);
  row('3 cold tree', 'digestTree, empty store, 1 worker (startup incl.)', cold[1], '1.00×', '≥3 MB/s/worker', verdict(c1 >= 3));
  row('3 cold tree', 'digestTree, empty store, 2 workers (startup incl.)', cold[2], `${fmt(c2 / c1, 2)}× 1w (cpu cost ${fmt(medC(cold[2]) / medC(cold[1]), 2)}× 1w)`, '≥1.7× 1 worker', verdict(c2 / c1 >= 1.7));
  row('3 cold tree', 'pool startup, 1 thread (create + load parser)', startup[1]);
  row('3 cold tree', 'pool startup, 2 threads (create + load parser)', startup[2]);
  rows.at(-2)[2] = rows.at(-1)[2] = rows.at(-2)[6] = rows.at(-1)[6] = '';
  const ex1 = medW(cold[1]) - medW(startup[1]);
  const ex2 = medW(cold[2]) - medW(startup[2]);
  rows.push(['3 cold tree', '1 worker, startup excluded (approx.: startup overlaps lookups)', fmt(mbps(totalBytes, ex1), 2), fmt(ex1, 0), '', '', '', '', '', '']);
  rows.push(['3 cold tree', '2 workers, startup excluded (approx.)', fmt(mbps(totalBytes, ex2), 2), fmt(ex2, 0), '', '', '', `${fmt(ex1 / ex2, 2)}× 1w`, '', '']);
  const s1 = rate(steady[1]);
  const s2 = rate(steady[2]);
  row('3 cold tree', 'digestTree, empty store, 1 worker, warm pool (steady state)', steady[1], '1.00×', '≥3 MB/s/worker', verdict(s1 >= 3));
  row('3 cold tree', 'digestTree, empty store, 2 workers, warm pool (steady state)', steady[2], `${fmt(s2 / s1, 2)}× 1w (cpu cost ${fmt(medC(steady[2]) / medC(steady[1]), 2)}× 1w)`, '≥1.7× 1 worker', verdict(s2 / s1 >= 1.7));
  {
    // Cores a run kept busy (process CPU time / wall time, all threads): a "1 worker" run also uses the
    // machine's second core for V8's GC and compiler helper threads and the main thread, so two workers
    // have less than 2× the CPU of one to gain from.
    const cores = (xs) => medC(xs) / medW(xs);
    rows.push(['3 cold tree', 'cores busy: 1 worker, warm pool (cpu ms / wall ms)', '', '', '', '', '', `${fmt(cores(steady[1]), 2)} cores`, '', '']);
    rows.push(['3 cold tree', 'cores busy: 2 workers, warm pool', '', '', '', '', '', `${fmt(cores(steady[2]), 2)} cores (ceiling ${fmt(os.availableParallelism() / cores(steady[1]), 2)}× 1w)`, '', '']);
    // Each thread runs the same work: n threads doing n× the work in wall time t_n scale by n·t_1/t_n.
    const scale = (a, b) => (2 * medW(a)) / medW(b);
    // Best of N as well: host noise only ever slows a run down, so the fastest samples estimate what the
    // machine can do; the median is what a run typically gets.
    const best = (xs) => Math.min(...wallOf(xs));
    const scaleBest = (a, b) => (2 * best(a)) / best(b);
    rows.push(['5 ceiling', 'integer loop, 1 thread vs 2 threads (2× the work): CPU-only control', '', fmt(medW(ceiling.spin2), 0), range(ceiling.spin2), fmt(medC(ceiling.spin2), 0), '', `${fmt(scale(ceiling.spin1, ceiling.spin2), 2)}× 1 thread (best of ${ceiling.spin2.length}: ${fmt(scaleBest(ceiling.spin1, ceiling.spin2), 2)}×)`, '', '']);
    rows.push(['5 ceiling', 'extractSlice, 1 thread (2 passes, warm JIT, no pool)', '', fmt(medW(ceiling.ext1), 0), range(ceiling.ext1), fmt(medC(ceiling.ext1), 0), '', `${fmt(cores(ceiling.ext1), 2)} cores busy`, '', '']);
    rows.push(['5 ceiling', 'extractSlice, 2 threads at once (2× the work, no pool)', '', fmt(medW(ceiling.ext2), 0), range(ceiling.ext2), fmt(medC(ceiling.ext2), 0), '', `${fmt(scale(ceiling.ext1, ceiling.ext2), 2)}× 1 thread (best of ${ceiling.ext2.length}: ${fmt(scaleBest(ceiling.ext1, ceiling.ext2), 2)}×); ${fmt(cores(ceiling.ext2), 2)} cores; cpu per pass ${fmt((medC(ceiling.ext2) / 2) / medC(ceiling.ext1), 2)}× 1 thread; ceiling by cores ${fmt(cores(ceiling.ext2) / cores(ceiling.ext1), 2)}×`, '', '']);
  }
  const speedup = medW(cold[2]) / medW(warm);
  row('4 warm tree', 'digestTree, same store, 2nd run (0 parsed)', warm, `${fmt(speedup, 1)}× faster than cold 2w (${fmt(medW(cold[1]) / medW(warm), 1)}× 1w)`, '≥20× cold', verdict(speedup >= 20));
  {
    const rowMs = (section, label, xs, extra = '', withRate = false) =>
      rows.push([section, label, withRate ? fmt(rate(xs), 2) : '', fmt(medW(xs), 0), range(xs), Number.isNaN(medC(xs)) ? '' : fmt(medC(xs), 0), '', extra, '', '']);
    const pct = (xs) => `${fmt((medW(xs) / medW(warm)) * 100, 0)}% of warm`;
    rowMs('splits: warm', 'list source files', splits.list, pct(splits.list));
    rowMs('splits: warm', 'read + sha256 every file (sync)', splits.readHash, pct(splits.readHash));
    const rest = medW(warm) - medW(splits.list) - medW(splits.readHash);
    rows.push(['splits: warm', 'remainder: manifest + memoised report read and decoded (by difference)', '', fmt(rest, 0), '', '', '', `${fmt((rest / medW(warm)) * 100, 0)}% of warm`, '', '']);
    rowMs('splits: warm', 'warm digestTree with the report memo off (slices decoded, assembled)', warmNoMemo, `${fmt(medW(cold[2]) / medW(warmNoMemo), 1)}× faster than cold 2w`, true);
    rowMs('splits: warm', `  of which store lookups: 1 manifest + ${median(entries.packsRead)} pack(s), ${files.length} slices verified`, splits.lookups, `${fmt((medW(splits.lookups) / medW(warmNoMemo)) * 100, 0)}%`);
    const asm = medW(warmNoMemo) - medW(splits.list) - medW(splits.readHash) - medW(splits.lookups);
    rows.push(['splits: warm', '  of which assemble, surfaces, report (by difference)', '', fmt(asm, 0), '', '', '', `${fmt((asm / medW(warmNoMemo)) * 100, 0)}%`, '', '']);
    rows.push(['splits: store', `entries a cold run wrote (cacache keys, ${files.length} files)`, '', String(median(entries.cold)), '', '', '', 'pack + manifest + report + registry', '', '']);
    rows.push(['splits: store', 'entries a warm run added', '', String(median(entries.warmNew)), '', '', '', '', '', '']);
    rowMs('splits: JIT', 'fresh thread: load engine + TypeScript (V8 code cache)', jit.load);
    rowMs('splits: JIT', 'fresh thread: load engine + TypeScript, no code cache', jit.loadNoCache);
    rowMs('splits: JIT', 'fresh thread, no code cache: extractSlice pass 1', jit.noCache1, `${fmt(medW(jit.noCache1) / medW(jit[3]), 2)}× pass 3`, true);
    rowMs('splits: JIT', 'fresh thread: extractSlice pass 1 (cold JIT, as a new worker)', jit[1], `${fmt(medW(jit[1]) / medW(jit[3]), 2)}× pass 3`, true);
    rowMs('splits: JIT', 'same thread: pass 2', jit[2], `${fmt(medW(jit[2]) / medW(jit[3]), 2)}× pass 3`, true);
    rowMs('splits: JIT', 'same thread: pass 3', jit[3], '', true);
  }
  row('splits: cold', 'cold digestTree, no store, 2 workers', splits.noStore, `cold 2w with store − this: ${fmt(medW(cold[2]) - medW(splits.noStore), 0)} ms wall`);
  rows.push(['splits: cold', `store write phase alone: 1 pack (${files.length} slices) + manifest + registry`, '', fmt(medW(writes), 0), range(writes), fmt(medC(writes), 0), '', '', '', '']);
  row('splits: cold', 'cold digestTree, store, calling thread (0 workers)', splits.inThread, `${fmt(medW(splits.inThread) - medW(times.extract), 0)} ms more than extractSlice loop`);

  const head = ['section', 'measurement', 'MB/s', 'ms', 'min–max ms', 'cpu ms', 'MB/cpu-s', 'ratio', 'target', 'verdict'];
  const right = new Set([2, 3, 5, 6]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const fmtRow = (r) => r.map((c, i) => (right.has(i) ? lpad(c, widths[i]) : pad(c, widths[i]))).join(' | ').trimEnd();
  print(fmtRow(head));
  print(widths.map((w) => '-'.repeat(w)).join('-|-'));
  let prev = '';
  for (const r of rows) {
    print(fmtRow(r[0] === prev ? ['', ...r.slice(1)] : r));
    prev = r[0];
  }
  print('* = the chosen parser: the TypeScript compiler as kiln configures it (packages/core/src/parse/typescript.ts); ratios marked * are to its raw parse');
  print(`stats: cold 1w ${JSON.stringify(coldStats[1])}; cold 2w ${JSON.stringify(coldStats[2])}; warm ${JSON.stringify(warmStats.at(-1))}`);
  print();
  print('targets');
  const targets = [
    ['cold digest ≥ 3 MB/s per worker (extractSlice loop, 1 thread)', `${fmt(ext, 2)} MB/s`, verdict(ext >= 3)],
    ['cold digest ≥ 3 MB/s per worker (digestTree, 1 worker, startup incl.)', `${fmt(c1, 2)} MB/s`, verdict(c1 >= 3)],
    ['cold digest ≥ 0.6× raw parse (extractSlice / TS parse as kiln)', `${fmt(extRatio, 2)}×`, verdict(extRatio >= 0.6)],
    ['cold digest ≥ 3 MB/s per worker (isolated thread, steady state)', `${fmt(isoExtract, 2)} MB/s`, verdict(isoExtract >= 3)],
    ['cold digest ≥ 0.6× raw parse (isolated threads, steady state)', `${fmt(isoRatio, 2)}×`, verdict(isoRatio >= 0.6)],
    ['warm ≥ 20× faster than cold (digestTree, 2 workers)', `${fmt(speedup, 1)}×`, verdict(speedup >= 20)],
    ['2 workers ≥ 1.7× 1 worker (digestTree, startup incl.)', `${fmt(c2 / c1, 2)}×`, verdict(c2 / c1 >= 1.7)],
    ['cold digest ≥ 3 MB/s per worker (digestTree, 1 worker, warm pool)', `${fmt(s1, 2)} MB/s`, verdict(s1 >= 3)],
    ['2 workers ≥ 1.7× 1 worker (digestTree, warm pools)', `${fmt(s2 / s1, 2)}×`, verdict(s2 / s1 >= 1.7)],
    ['  for reference: 2 threads vs 1, extractSlice alone, no pool (the machine ceiling)', `${fmt((2 * medW(ceiling.ext1)) / medW(ceiling.ext2), 2)}×`, (2 * medW(ceiling.ext1)) / medW(ceiling.ext2) >= 1.7 ? 'above 1.7×' : 'below 1.7×'],
    ['warm ≥ 20× faster than cold (vs 2 workers, warm pool)', `${fmt(medW(steady[2]) / medW(warm), 1)}×`, verdict(medW(steady[2]) / medW(warm) >= 20)],
  ];
  // The same targets by process CPU time (all threads): less sensitive to other work on the machine,
  // though contention inflates CPU time too. Worker scaling has no CPU-time form (it is about wall time).
  const extCpu = cpuRate(times.extract);
  const c1Cpu = mbps(totalBytes, medC(cold[1]));
  targets.push(
    ['  by cpu time: extractSlice loop', `${fmt(extCpu, 2)} MB/cpu-s`, verdict(extCpu >= 3)],
    ['  by cpu time: digestTree, 1 worker (all threads)', `${fmt(c1Cpu, 2)} MB/cpu-s`, verdict(c1Cpu >= 3)],
    ['  by cpu time: extractSlice / TS parse', `${fmt(extCpu / chosenCpu, 2)}×`, verdict(extCpu / chosenCpu >= 0.6)],
    ['  by cpu time: warm vs cold 2 workers', `${fmt(medC(cold[2]) / medC(warm), 1)}×`, verdict(medC(cold[2]) / medC(warm) >= 20)],
  );
  const tw = Math.max(...targets.map((t) => t[0].length));
  const mw = Math.max(...targets.map((t) => t[1].length));
  for (const t of targets) print(`  ${pad(t[0], tw)}  ${lpad(t[1], mw)}  ${t[2]}`);
  const loadEnd = load();
  print(`load average: ${loadStart} at start, ${loadEnd} at end (${os.availableParallelism()} cpus)`);
  if (Math.max(...loadStart.split(' ').map(Number), ...loadEnd.split(' ').map(Number)) > os.availableParallelism() * 0.75) {
    print('  note: the machine was busy with other work; wall-clock rates and worker scaling are understated — compare the cpu columns');
  }
  if (os.availableParallelism() < 3) print(`  note: ${os.availableParallelism()} cpus — with 2 workers the main thread (hashing, store, structured clone of slices) shares the cpus with them`);
  if (args.keep) print(`kept: ${tmpRoot}`);
} finally {
  if (pool) await pool.destroy().catch(() => undefined);
  if (!args.keep) await rm(tmpRoot, { recursive: true, force: true });
}
if (sink === 0.5) process.stdout.write(''); // keep `sink` alive
