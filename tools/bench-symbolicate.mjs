#!/usr/bin/env node
/**
 * Symbolication benchmark (issue 14, point 7). One run builds a real library with kiln's build (kiln's own
 * `packages/core` sources, compiled by `compileProject` into a temporary folder: ~100 JS files with
 * maps), ingests its debug artifacts into an empty store, and prints side by side on the same frames:
 *   1. the raw library's lookup rate: `@jridgewell/trace-mapping` `traceSegment` on pre-built TraceMaps
 *      (what any symbolicator must at least do per frame);
 *   2. kiln's warm rate: `Symbolicator.frames` over the same frames (artifacts resolved by debug ID,
 *      retained sources and declaration index read from the store, working tree compared) — every frame
 *      gets its match status and declaration identity — and its ratio to (1);
 *   3. kiln's warm rate when every frame must be relocated (the working tree's sources shifted by a
 *      comment line at the top: the token alignment runs per frame);
 *   4. cold start: a fresh `kiln symbolicate` process on a one-frame trace (Node start, CLI load, store
 *      read) beside a fresh `node -e ''`, and the first frame in process with an empty store (lazy
 *      ingestion included).
 * Target: warm ≥ 100 000 frames/s (row 2), printed as PASS/MISS.
 *
 * Usage: node tools/bench-symbolicate.mjs [--frames N] [--reps N] [--keep]
 * Requires a build (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { TraceMap, decodedMappings, traceSegment } from '@jridgewell/trace-mapping';
import { cliArgs } from './lib/cli-args.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: node tools/bench-symbolicate.mjs [--frames N] [--reps N] [--keep]
  --frames N   frames per measurement (default 200000)
  --reps N     repetitions; the median is reported (default 5)
  --keep       keep the temporary folder
`;
const { args, int } = cliArgs({ frames: { type: 'string', default: '200000' }, reps: { type: 'string', default: '5' }, keep: { type: 'boolean', default: false } }, HELP);
const FRAMES = int('frames', 1);
const REPS = int('reps', 1);

const core = { ...(await import(join(ROOT, 'packages/core/dist/index.js'))), ...(await import(join(ROOT, 'packages/core/dist/debug/index.js'))) };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n) => Math.round(n).toLocaleString('en-US').replace(/,/g, ' ');
const log = (s) => process.stderr.write(`[bench-symbolicate] ${s}\n`);

const tmp = mkdtempSync(join(tmpdir(), 'kiln-bench-symbolicate-'));
const store = join(tmp, 'store');
const lib = join(tmp, 'lib');
try {
  // A real library: kiln's own core sources, as a package of their own.
  cpSync(join(ROOT, 'packages/core/src'), join(lib, 'src'), { recursive: true });
  writeFileSync(join(lib, 'package.json'), JSON.stringify({ name: '@bench/core', version: '1.0.0', type: 'module', main: './dist/index.js', types: './dist/index.d.ts' }));
  writeFileSync(
    join(lib, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')], strict: true, rootDir: 'src', outDir: 'dist', skipLibCheck: true, noImplicitAny: false }, include: ['src/**/*.ts'] }),
  );
  // The sources' own imports (typescript, cacache, …) resolve from kiln's node_modules.
  symlinkSync(join(ROOT, 'node_modules'), join(tmp, 'node_modules'), 'dir');
  log('building the library with compileProject …');
  let t = performance.now();
  const built = await core.compileProject({ projectRoot: lib, relativeTo: lib });
  if (!built.success) {
    console.error(built.diagnostics.slice(0, 5).map((d) => core.formatDiagnostic(d)).join('\n'));
    process.exit(1);
  }
  const buildMs = performance.now() - t;
  log(`built ${built.emitted.length} files in ${(buildMs / 1000).toFixed(1)} s; ingesting …`);
  t = performance.now();
  const ing = await core.ingestProjectOutputs({ storeDir: store, workspaceRoot: lib, projectRoot: lib, files: built.emitted });
  const ingestMs = performance.now() - t;
  // The executor's real path: the store already holds the slices kiln extracted to key this build.
  const keyedStore = join(tmp, 'keyed-store');
  await core.digestTree(lib, { store: keyedStore });
  t = performance.now();
  const ing2 = await core.ingestProjectOutputs({ storeDir: keyedStore, workspaceRoot: lib, projectRoot: lib, files: built.emitted });
  const ingestKeyedMs = performance.now() - t;
  if (ing2.records.length !== ing.records.length) throw new Error('ingestion into the keyed store differs');
  const jsFiles = built.emitted.filter((f) => /\.js$/.test(f) && built.emitted.includes(`${f}.map`)).map((f) => join(lib, f));

  // Frames: uniformly sampled mapped positions of every artifact (seeded, so both sides see the same).
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const positions = [];
  const maps = new Map();
  for (const f of jsFiles) {
    const map = new TraceMap(readFileSync(`${f}.map`, 'utf8'));
    maps.set(f, map);
    decodedMappings(map).forEach((segs, line) => {
      for (const s of segs) if (s.length >= 4) positions.push({ file: f, line: line + 1, column: s[0] + 1 });
    });
  }
  const frames = Array.from({ length: FRAMES }, () => positions[Math.floor(rnd() * positions.length)]);
  log(`${jsFiles.length} artifacts, ${ing.records.length} ingested in ${ingestMs.toFixed(0)} ms, ${positions.length} mapped positions; ${fmt(FRAMES)} frames per rep`);

  // 1. raw library
  const raw = [];
  for (let r = 0; r < REPS; r++) {
    const s = performance.now();
    let hits = 0;
    for (const fr of frames) if (traceSegment(maps.get(fr.file), fr.line - 1, fr.column - 1)) hits++;
    raw.push(FRAMES / ((performance.now() - s) / 1000));
    if (hits !== FRAMES) throw new Error(`raw lookups: ${hits}/${FRAMES} mapped`);
  }

  // 2. kiln warm (one Symbolicator, warmed by a first pass)
  /** A fresh Symbolicator's statuses over the frames (the warming pass), then REPS warm rates. */
  const warmRates = async () => {
    const sym = new core.Symbolicator({ storeDir: store, workspaceRoot: lib });
    const statuses = {};
    await sym.frames(frames, (f) => (statuses[f.status] = (statuses[f.status] ?? 0) + 1));
    const rates = [];
    for (let r = 0; r < REPS; r++) {
      const s = performance.now();
      await sym.frames(frames, () => {});
      rates.push(FRAMES / ((performance.now() - s) / 1000));
    }
    return { statuses, rates };
  };
  const { statuses, rates: warm } = await warmRates();

  // 3. every frame relocated: the sources shifted by one comment line.
  for (const f of readdirSync(join(lib, 'src'), { recursive: true })) {
    if (!String(f).endsWith('.ts')) continue;
    const p = join(lib, 'src', String(f));
    writeFileSync(p, `// shifted\n${readFileSync(p, 'utf8')}`);
  }
  const { statuses: relStatuses, rates: reloc } = await warmRates();

  // 4. cold: a fresh CLI process on one frame, beside `node -e ''`; and the first frame in process, empty store.
  const oneFrame = join(tmp, 'one.txt');
  writeFileSync(oneFrame, `Error: x\n    at f (${frames[0].file}:${frames[0].line}:${frames[0].column})\n`);
  const cli = [];
  const bare = [];
  for (let r = 0; r < REPS; r++) {
    let s = performance.now();
    const out = spawnSync(process.execPath, [join(ROOT, 'packages/cli/bin/kiln.js'), 'symbolicate', oneFrame, '--store', store, '--workspace', lib], { encoding: 'utf8' });
    cli.push(performance.now() - s);
    if (out.status !== 0) throw new Error(out.stderr);
    s = performance.now();
    spawnSync(process.execPath, ['-e', '']);
    bare.push(performance.now() - s);
  }
  const firsts = [];
  for (let r = 0; r < REPS; r++) {
    const empty = join(tmp, `empty-${r}`);
    const s = performance.now();
    const f = await new core.Symbolicator({ storeDir: empty, workspaceRoot: lib }).frame(frames[0], 0);
    firsts.push(performance.now() - s);
    if (f.status === 'unavailable') throw new Error(`cold first frame unavailable: ${f.reason}`);
  }

  const rawM = median(raw);
  const warmM = median(warm);
  const relM = median(reloc);
  console.log(`kiln symbolicate benchmark — ${new Date().toISOString()} — node ${process.version}; ${fmt(FRAMES)} frames × ${REPS} reps (median), ${jsFiles.length} artifacts of a real library (kiln's core, built by compileProject)`);
  console.log('');
  console.log('| measurement | frames/s | ratio to raw lookup |');
  console.log('|---|---:|---:|');
  console.log(`| raw @jridgewell/trace-mapping traceSegment | ${fmt(rawM)} | 1.000× |`);
  console.log(`| kiln warm: status + identity per frame (${Object.entries(statuses).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}) | ${fmt(warmM)} | ${(warmM / rawM).toFixed(3)}× |`);
  console.log(`| kiln warm, every frame relocated (${Object.entries(relStatuses).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}) | ${fmt(relM)} | ${(relM / rawM).toFixed(3)}× |`);
  console.log('');
  console.log('| cold start | ms (median) |');
  console.log('|---|---:|');
  console.log(`| fresh \`kiln symbolicate\` process, one frame | ${median(cli).toFixed(0)} |`);
  console.log(`| fresh \`node -e ''\` (the floor) | ${median(bare).toFixed(0)} |`);
  console.log(`| first frame in process, empty store (lazy ingestion included) | ${median(firsts).toFixed(1)} |`);
  console.log(`| ingesting the build's ${ing.records.length} artifacts, empty store (every source extracted) | ${ingestMs.toFixed(0)} |`);
  console.log(`| ingesting them into a store that holds the build's slices (the executor after kiln keyed it) | ${ingestKeyedMs.toFixed(0)} |`);
  console.log(`| the build itself (compileProject) | ${buildMs.toFixed(0)} |`);
  console.log('');
  console.log(`target: warm ≥ 100 000 frames/s: ${warmM >= 100_000 ? 'PASS' : 'MISS'} (${fmt(warmM)}); relocating every frame: ${fmt(relM)} frames/s`);
} finally {
  if (!args.keep) rmSync(tmp, { recursive: true, force: true });
  else log(`kept ${tmp}`);
}
