#!/usr/bin/env node
/**
 * Digest benchmark (issue 2, point 12). One run prints, side by side on the same files:
 *   1. raw parse MB/s of the candidate parsers, one thread (TypeScript compiler with and without JSDoc
 *      parsing, native tree-sitter parse only, tree-sitter parse + a full TreeCursor walk in JS);
 *   2. cold digest on one thread without the pool (`extractSlice` in a loop) and its ratio to the
 *      chosen parser's raw parse;
 *   3. cold `digestTree` with an empty store, 1 worker vs 2 workers (pool startup reported apart);
 *   4. warm `digestTree` (second run, same store) and its ratio to cold;
 * then the targets with PASS/MISS, and timing splits that say where the time goes.
 *
 * Usage: node tools/bench-digest.mjs [--corpus DIR] [--files N] [--reps N] [--keep]
 * Corpus: --corpus, else $KILN_BENCH_CORPUS, else the TS/JS sources inside this repo's node_modules
 * (works offline). The selected files are copied into a temporary directory (with a package.json),
 * so every measurement sees exactly the same files; nothing from the corpus is written into the repo.
 * Requires a build (`npm run build`); `npm run bench:digest` builds first.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const coreDist = join(repoRoot, 'packages/core/dist');

const HELP = `usage: node tools/bench-digest.mjs [--corpus DIR] [--files N] [--reps N] [--keep]

  --corpus DIR   directory of real sources (its node_modules, dot-dirs and coverage/ are skipped);
                 default: $KILN_BENCH_CORPUS, else TS/JS sources in ${join(repoRoot, 'node_modules')}
  --files N      use at most N files (deterministic spread over the corpus); default: all, at most 2000
  --reps N       timed repetitions of every measurement, interleaved; medians are reported (default 5)
  --keep         keep the temporary corpus copy and stores (their paths are printed)
`;

let args;
try {
  args = parseArgs({
    options: {
      corpus: { type: 'string' },
      files: { type: 'string' },
      reps: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
} catch (e) {
  process.stderr.write(`${e.message}\n${HELP}`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const REPS = Math.max(1, Number(args.reps ?? 5));
const MAX_FILES = args.files !== undefined ? Number(args.files) : 2000;
if (!Number.isInteger(MAX_FILES) || MAX_FILES < 1 || !Number.isInteger(REPS)) {
  process.stderr.write(`--files and --reps take positive integers\n${HELP}`);
  process.exit(2);
}

// ------------------------------------------------------------------ engine and parsers

try {
  await stat(join(coreDist, 'index.js'));
} catch {
  process.stderr.write(`packages/core is not built: run \`npm run build\` first (or \`npm run bench:digest\`)\n`);
  process.exit(1);
}
const core = await import(pathToFileURL(join(coreDist, 'index.js')).href);
const { parseTypeScript } = await import(pathToFileURL(join(coreDist, 'parse/typescript.js')).href);
const { extractSlice, digestTree, createDigestPool, fileKind, decodeSource, DEFAULT_MAX_FILE_SIZE } = core;
const coreRequire = createRequire(join(coreDist, 'index.js'));
const ts = coreRequire('typescript'); // the very module the engine parses with
const rootRequire = createRequire(join(repoRoot, 'package.json'));
const TreeSitter = rootRequire('tree-sitter');
const TSGrammars = rootRequire('tree-sitter-typescript');
const JSGrammar = rootRequire('tree-sitter-javascript');
const versions = {
  typescript: ts.version,
  'tree-sitter': rootRequire('tree-sitter/package.json').version,
  'tree-sitter-typescript': rootRequire('tree-sitter-typescript/package.json').version,
  'tree-sitter-javascript': rootRequire('tree-sitter-javascript/package.json').version,
  piscina: coreRequire('piscina/package.json').version,
  cacache: coreRequire('cacache/package.json').version,
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
    files.push({ rel: c.rel, abs: c.abs, bytes, text: decoded.text, variant: fileKind(c.rel).variant });
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

function pass(op, files) {
  gc();
  const t0 = performance.now();
  for (const f of files) sink += op.run(f) | 0;
  return performance.now() - t0;
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

// ------------------------------------------------------------------ main

const tmpRoot = await mkdtemp(join(os.tmpdir(), 'kiln-bench-'));
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
    const to = join(stage, 'src', f.rel);
    await mkdir(dirname(to), { recursive: true });
    await copyFile(f.abs, to);
  }
  await mkdir(storesDir, { recursive: true });
  const tiny = join(tmpRoot, 'tiny.ts');
  await writeFile(tiny, 'export const x = 1;\n');

  const cpus = os.cpus();
  const lines = [];
  const print = (s = '') => {
    lines.push(s);
    process.stdout.write(`${s}\n`);
  };
  print(`kiln digest benchmark — ${new Date().toISOString()}`);
  print(`machine: ${os.availableParallelism()} cpus (${cpus[0]?.model?.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${process.platform}-${process.arch}, node ${process.version}, load avg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  print(`versions: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  print(`corpus: ${corpusLabel}`);
  print(
    `  ${files.length} files, ${fmt(totalBytes / 1e6, 2)} MB (${Object.entries(byVariant).map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
      `${seen} sources seen; excluded: ${excluded.large} > 500 KB or .min, ${excluded.minified} minified/generated, ${excluded.empty} empty, ${excluded.undecodable} not UTF-8`,
  );
  if (files.length < 500) print(`  WARNING: fewer than 500 files (${files.length}); the issue asks for at least 500`);
  print(`method: ${REPS} timed reps after 1 warm-up, measurements interleaved (order rotated per rep), medians [min–max]; MB = 10^6 bytes of source`);
  print();

  // ---- 1 + 2: in-memory, one thread
  process.stderr.write('in-memory passes');
  const times = Object.fromEntries(inMemory.map((o) => [o.id, []]));
  for (const op of inMemory) pass(op, files); // warm-up (JIT, grammar load)
  for (let r = 0; r < REPS; r++) {
    for (let i = 0; i < inMemory.length; i++) {
      const op = inMemory[(i + r) % inMemory.length];
      times[op.id].push(pass(op, files));
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');

  // ---- 3 + 4: digestTree through the pool
  process.stderr.write('digestTree runs');
  const cold = { 1: [], 2: [] };
  const coldStats = {};
  const warm = [];
  const warmStats = [];
  const startup = { 1: [], 2: [] };
  const splits = { noStore: [], inThread: [] };
  const check = (report, expectParsed) => {
    const s = report.stats;
    if (s.files !== files.length) throw new Error(`digestTree saw ${s.files} files, expected ${files.length}`);
    if (expectParsed !== undefined && s.parsed !== expectParsed) throw new Error(`digestTree parsed ${s.parsed}, expected ${expectParsed}`);
    return s;
  };
  const runCold = async (workers) => {
    const store = freshStore();
    const t0 = performance.now();
    const report = await digestTree(stage, { store, workers });
    const ms = performance.now() - t0;
    coldStats[workers] = check(report, files.length);
    return { ms, store, report };
  };
  const poolStartup = async (threads) => {
    const t0 = performance.now();
    const p = createDigestPool(threads);
    pool = p;
    // One tiny task per thread: a worker counts as started once it has loaded the parser.
    await Promise.all(Array.from({ length: threads }, () => p.run({ file: tiny, variant: 'ts', digestSchema: core.DIGEST_SCHEMA, maxFileSize: DEFAULT_MAX_FILE_SIZE, storeDir: null })));
    const ms = performance.now() - t0;
    await p.destroy();
    pool = undefined;
    return ms;
  };
  // warm-up run (module loading, page cache), not timed
  let reference = (await runCold(2)).report;
  for (let r = 0; r < REPS; r++) {
    gc();
    const order = r % 2 ? [2, 1] : [1, 2];
    let lastStore;
    for (const w of order) {
      gc();
      const c = await runCold(w);
      cold[w].push(c.ms);
      if (w === 2) lastStore = c.store;
      if (JSON.stringify(c.report.declarations) !== JSON.stringify(reference.declarations)) throw new Error('cold reports differ between runs');
    }
    gc();
    const t0 = performance.now();
    const wr = await digestTree(stage, { store: lastStore, workers: 2 });
    warm.push(performance.now() - t0);
    warmStats.push(check(wr, 0));
    if (JSON.stringify(wr.declarations) !== JSON.stringify(reference.declarations)) throw new Error('warm report differs from cold');
    for (const w of order) startup[w].push(await poolStartup(w));
    // splits: cold without a store (pool + extract only), cold on this thread with a store (no pool)
    gc();
    let t = performance.now();
    check(await digestTree(stage, { store: false, workers: 2 }), files.length);
    splits.noStore.push(performance.now() - t);
    gc();
    t = performance.now();
    check(await digestTree(stage, { store: freshStore(), workers: 0 }), files.length);
    splits.inThread.push(performance.now() - t);
    await rm(storesDir, { recursive: true, force: true });
    await mkdir(storesDir, { recursive: true });
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  reference = undefined;

  // ---- the table
  const med = (xs) => median(xs);
  const range = (xs) => `${fmt(Math.min(...xs), 0)}–${fmt(Math.max(...xs), 0)}`;
  const rate = (xs) => mbps(totalBytes, med(xs));
  const chosen = rate(times['ts-kiln']);
  const rows = [];
  const row = (section, label, xs, extra = '', target = '', verdict = '') =>
    rows.push([section, label, fmt(rate(xs), 2), fmt(med(xs), 0), range(xs), extra, target, verdict]);
  const verdict = (ok) => (ok ? 'PASS' : 'MISS');

  for (const op of inMemory.slice(0, 6)) {
    row('1 raw parse', op.label, times[op.id], `${fmt(rate(times[op.id]) / chosen, 2)}× *`);
  }
  const ext = rate(times.extract);
  row('2 cold', inMemory[6].label, times.extract, `${fmt(ext / chosen, 2)}× *`, '≥3 MB/s; ≥0.6× *', `${verdict(ext >= 3)}; ${verdict(ext / chosen >= 0.6)}`);
  const c1 = rate(cold[1]);
  const c2 = rate(cold[2]);
  row('3 cold tree', 'digestTree, empty store, 1 worker (startup incl.)', cold[1], '1.00×', '≥3 MB/s/worker', verdict(c1 >= 3));
  row('3 cold tree', 'digestTree, empty store, 2 workers (startup incl.)', cold[2], `${fmt(c2 / c1, 2)}× 1w`, '≥1.7× 1 worker', verdict(c2 / c1 >= 1.7));
  rows.push(['3 cold tree', 'pool startup, 1 thread (create + load parser)', '', fmt(med(startup[1]), 0), range(startup[1]), '', '', '']);
  rows.push(['3 cold tree', 'pool startup, 2 threads (create + load parser)', '', fmt(med(startup[2]), 0), range(startup[2]), '', '', '']);
  const ex1 = mbps(totalBytes, med(cold[1]) - med(startup[1]));
  const ex2 = mbps(totalBytes, med(cold[2]) - med(startup[2]));
  rows.push(['3 cold tree', '1 worker, startup excluded', fmt(ex1, 2), fmt(med(cold[1]) - med(startup[1]), 0), '', '', '', '']);
  rows.push(['3 cold tree', '2 workers, startup excluded', fmt(ex2, 2), fmt(med(cold[2]) - med(startup[2]), 0), '', `${fmt(ex2 / ex1, 2)}× 1w`, '', '']);
  const speedup = med(cold[2]) / med(warm);
  row('4 warm tree', 'digestTree, same store, 2nd run (0 parsed)', warm, `${fmt(speedup, 1)}× faster than cold 2w`, '≥20× cold', verdict(speedup >= 20));
  row('splits', 'cold digestTree, no store, 2 workers', splits.noStore, `store writes ≈ ${fmt(med(cold[2]) - med(splits.noStore), 0)} ms`);
  row('splits', 'cold digestTree, store, on calling thread (0 workers)', splits.inThread, `vs extractSlice loop +${fmt(med(splits.inThread) - med(times.extract), 0)} ms`);

  const head = ['section', 'measurement', 'MB/s', 'ms', 'min–max ms', 'ratio', 'target', 'verdict'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const fmtRow = (r) => r.map((c, i) => (i === 2 || i === 3 ? lpad(c, widths[i]) : pad(c, widths[i]))).join(' | ').trimEnd();
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
    ['cold digest ≥ 0.6× raw parse (extractSlice / TS parse as kiln)', `${fmt(ext / chosen, 2)}×`, verdict(ext / chosen >= 0.6)],
    ['warm ≥ 20× faster than cold (digestTree 2 workers)', `${fmt(speedup, 1)}×`, verdict(speedup >= 20)],
    ['2 workers ≥ 1.7× 1 worker (digestTree, startup incl.)', `${fmt(c2 / c1, 2)}×`, verdict(c2 / c1 >= 1.7)],
  ];
  const tw = Math.max(...targets.map((t) => t[0].length));
  const mw = Math.max(...targets.map((t) => t[1].length));
  for (const t of targets) print(`  ${pad(t[0], tw)}  ${lpad(t[1], mw)}  ${t[2]}`);
  if (os.availableParallelism() < 3) print(`  note: ${os.availableParallelism()} cpus — with 2 workers the main thread (hashing, store, structured clone of slices) shares the cpus with them`);
  if (args.keep) print(`kept: ${tmpRoot}`);
} finally {
  if (pool) await pool.destroy().catch(() => undefined);
  if (!args.keep) await rm(tmpRoot, { recursive: true, force: true });
}
if (sink === 0.5) process.stdout.write(''); // keep `sink` alive
