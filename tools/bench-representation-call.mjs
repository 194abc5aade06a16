#!/usr/bin/env node
/**
 * Selective-load benchmark of the executable representation (SPEC §7, issue 15 point 6). One run
 * generates a realistic 400-export TypeScript package (40 modules: private helpers, module-level caches
 * and counters, a shared registry module several modules write to, classes, constants, cross-module
 * imports), builds it with kiln's `compileProject`, writes `kiln.rep` with `writeRepresentation`, and
 * prints side by side:
 *   1. bytes read to call 3 of the 400 exports through the representation (the reader's own
 *      `bytesRead`: prefix, header, index, seal, and the payloads those 3 reach — their shared chunks
 *      included) vs the file size, and vs what exactly those sections and payloads add up to;
 *   2. warm 3-of-400 load: the reader already open, a fresh consumer (a new vm context) per rep, load +
 *      call 3 exports; median over --warm-reps. Also reported: the same with a freshly opened reader
 *      per rep (file open, header + index read, payloads read, hashed, decompressed);
 *   3. cold first call, fresh `node` processes, interleaved: open kiln.rep with @kiln/runtime and call one
 *      export, vs `import()` of the built package and the same call; wall time from spawn to exit, and
 *      the in-process time to the first result (performance.now(), from process start); a fresh
 *      `kiln call` process (the CLI) is reported for reference, and a bare `node -e ''` as the floor.
 * Goals, printed PASS/FAIL with their numbers: (1) only header + index + the needed payloads are read;
 * (2) warm < 1 ms; (3) representation's cold first call faster than import() (median wall time).
 * The machine is noisy: ratios are printed beside the absolute numbers. Exit status is non-zero on a
 * failed goal only with --strict.
 *
 * Usage: node tools/bench-representation-call.mjs [--warm-reps N] [--cold-runs N] [--strict] [--keep]
 * Requires a build (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { cliArgs } from './lib/cli-args.mjs';
import { sameContentAsJsonBytes } from './lib/rep-json.mjs';
import { WIDE_PACKAGE, wideSources } from './lib/rep-wide.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: node tools/bench-representation-call.mjs [--warm-reps N] [--cold-runs N] [--strict] [--keep]
  --warm-reps N   repetitions of the warm 3-of-400 load; the median is reported (default 400)
  --cold-runs N   fresh processes per route, interleaved; the median is reported (default 15)
  --strict        exit 1 when a goal fails (default: report only)
  --keep          keep the temporary folder
`;
const { args, int } = cliArgs({ 'warm-reps': { type: 'string', default: '400' }, 'cold-runs': { type: 'string', default: '15' }, strict: { type: 'boolean', default: false }, keep: { type: 'boolean', default: false } }, HELP);
const WARM_REPS = int('warm-reps', 1);
const COLD_RUNS = int('cold-runs', 1);

const RUNTIME = join(ROOT, 'packages/runtime/dist/index.js');
const { compileProject, writeRepresentation } = await import(pathToFileURL(join(ROOT, 'packages/core/dist/index.js')).href);
const { createConsumer, openRepresentation, readRepresentation, representationPath } = await import(pathToFileURL(RUNTIME).href);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
const log = (s) => process.stderr.write(`[bench-representation-call] ${s}\n`);
const PKG = WIDE_PACKAGE;
const MODULES = 40;
const sources = () => wideSources(MODULES);

const tmp = mkdtempSync(join(tmpdir(), 'kiln-bench-rep-call-'));
const pkg = join(tmp, 'node_modules', PKG);
const goals = [];
const goal = (name, pass, detail) => {
  goals.push({ name, pass });
  console.log(`${pass ? 'PASS' : 'FAIL'}  ${name}: ${detail}`);
};
try {
  // --- the package
  for (const [rel, text] of Object.entries({
    ...sources(),
    'package.json': JSON.stringify({ name: PKG, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } } }),
    'tsconfig.lib.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: [], strict: true, rootDir: 'src', outDir: 'dist', declaration: true, skipLibCheck: true }, include: ['src/**/*.ts'] }),
  })) {
    mkdirSync(dirname(join(pkg, rel)), { recursive: true });
    writeFileSync(join(pkg, rel), text);
  }
  log('building the 400-export package with compileProject …');
  let t = performance.now();
  const built = await compileProject({ projectRoot: pkg });
  if (!built.success) throw new Error(`build failed: ${JSON.stringify(built.diagnostics.slice(0, 3))}`);
  const buildMs = performance.now() - t;
  t = performance.now();
  const written = await writeRepresentation({ packageRoot: pkg, store: false, workers: 0 });
  const repMs = performance.now() - t;
  const file = representationPath(pkg);
  const size = statSync(file).size;
  console.log(`package: ${PKG}, ${MODULES} modules + 2 shared, ${written.entries} exports (${written.covered} covered), ${written.payloads} payloads; build ${buildMs.toFixed(0)} ms, representation ${repMs.toFixed(0)} ms, kiln.rep ${size} bytes`);
  if (written.entries !== 400 || written.covered !== 400) throw new Error(`expected 400 covered exports, got ${written.covered}/${written.entries}`);

  // --- 0. size beside JSON of the same content (issue 15 point 2): the decoded model, each payload with
  // its SHA-256 as hex (the binary carries it raw), as one JSON document.
  {
    const json = sameContentAsJsonBytes(readRepresentation(readFileSync(file)));
    console.log(`\n0. size: kiln.rep ${size} B, the same content as JSON ${json} B`);
    goal('size <= 0.3x JSON', size <= 0.3 * json, `${(size / json).toFixed(3)}× (${size} / ${json} B)`);
  }

  // The 3 exports: one with a private cached helper and a cross-module import, one that writes the shared
  // registry, a class factory.
  const three = [
    [`${PKG}#score9`, [[1, 2, 3, 4]]],
    [`${PKG}#label21`, [42]],
    [`${PKG}#make33`, ['acc']],
  ];
  const callThree = (consumer) => three.map(([s, a]) => consumer.call(s, a));

  // --- 1. bytes read
  {
    const reader = openRepresentation(file);
    const consumer = createConsumer(reader, { requireFrom: pkg });
    const out = callThree(consumer);
    const touched = [...consumer.evaluations.keys()].map((n) => reader.payloadInfo(reader.payloadIndex(n)));
    const s = reader.sections;
    const openPart = s.total - s.payloads; // prefix, header, index (keys, info, table, dict), seal
    const expected = openPart + touched.reduce((n, p) => n + p.storedLength, 0);
    console.log(`\n1. bytes read for 3 of 400 (results ${JSON.stringify(out.map((x) => (typeof x === 'object' ? x.constructor.name : x)))}):`);
    console.log(`   prefix ${s.prefix} + header ${s.header} + index ${s.index} (keys ${s.keys}, info ${s.info}, table ${s.table}, dict ${s.dict}) + seal ${s.seal} = ${openPart} bytes`);
    console.log(`   payloads evaluated: ${touched.length} of ${reader.payloadCount} (${touched.map((p) => `${p.name} ${p.storedLength} B`).join(', ')})`);
    console.log(`   bytesRead ${reader.bytesRead} of ${size} bytes = ${((100 * reader.bytesRead) / size).toFixed(1)}% of the file (header + index + those payloads: ${expected})`);
    goal('selective read', reader.bytesRead === expected && reader.bytesRead < size, `read ${reader.bytesRead} B = header+index ${openPart} B + ${touched.length} payloads; file ${size} B (${(reader.bytesRead / size).toFixed(3)}×)`);
    reader.close();
  }

  // --- 2. warm
  {
    const reader = openRepresentation(file);
    callThree(createConsumer(reader, { requireFrom: pkg })); // payload bytes read and cached by the reader
    const fresh = [];
    const reopen = [];
    const ctx = [];
    for (let i = 0; i < 20; i++) callThree(createConsumer(reader, { requireFrom: pkg })); // JIT warm-up
    for (let i = 0; i < WARM_REPS; i++) {
      let t0 = performance.now();
      callThree(createConsumer(reader, { requireFrom: pkg }));
      fresh.push(performance.now() - t0);
      t0 = performance.now();
      const r = openRepresentation(file);
      callThree(createConsumer(r, { requireFrom: pkg }));
      r.close();
      reopen.push(performance.now() - t0);
      t0 = performance.now();
      createConsumer(reader, { requireFrom: pkg });
      ctx.push(performance.now() - t0);
    }
    const m = median(fresh);
    console.log(`\n2. warm 3-of-400 (median of ${WARM_REPS}):`);
    console.log(`   open reader, fresh consumer, load + call 3: ${m.toFixed(3)} ms [${range(fresh)}]`);
    console.log(`     of which creating the consumer (vm context): ${median(ctx).toFixed(3)} ms (${(median(ctx) / m).toFixed(2)}×)`);
    console.log(`   reader opened per rep (open, header + index, payloads read + verified + decompressed): ${median(reopen).toFixed(3)} ms [${range(reopen)}] (${(median(reopen) / m).toFixed(2)}× the above)`);
    goal('warm < 1 ms', m < 1, `${m.toFixed(3)} ms median (fresh consumer on an open reader)`);
    reader.close();
  }

  // --- 3. cold first call, fresh processes
  {
    const target = `${PKG}#score9`;
    const callArgs = [[1, 2, 3, 4]];
    const repScript = join(tmp, 'cold-rep.mjs');
    const importScript = join(tmp, 'cold-import.mjs');
    writeFileSync(
      repScript,
      `import { performance } from 'node:perf_hooks';
import { createConsumer, openRepresentation } from ${JSON.stringify(pathToFileURL(RUNTIME).href)};
const r = createConsumer(openRepresentation(${JSON.stringify(file)}), { requireFrom: ${JSON.stringify(pkg)} }).call(${JSON.stringify(target)}, ${JSON.stringify(callArgs)});
process.stdout.write(JSON.stringify({ r, ms: performance.now() }));
`,
    );
    writeFileSync(
      importScript,
      `import { performance } from 'node:perf_hooks';
const m = await import(${JSON.stringify(pathToFileURL(join(pkg, 'dist/index.js')).href)});
const r = m.score9(...${JSON.stringify(callArgs)});
process.stdout.write(JSON.stringify({ r, ms: performance.now() }));
`,
    );
    const run = (argv) => {
      const t0 = performance.now();
      const p = spawnSync(process.execPath, argv, { encoding: 'utf8', cwd: tmp });
      const wall = performance.now() - t0;
      if (p.status !== 0) throw new Error(`${argv.join(' ')} failed: ${p.stderr}`);
      let out;
      try {
        out = JSON.parse(p.stdout || 'null');
      } catch {
        out = p.stdout.trim();
      }
      // The scripts print { r, ms }; `kiln call --format json` prints { surface, result }.
      return { wall, r: out?.r ?? out?.result ?? out, ms: out?.ms };
    };
    const routes = {
      'kiln.rep (@kiln/runtime)': [repScript],
      'import() of the built package': [importScript],
      'kiln call (CLI)': [join(ROOT, 'packages/cli/bin/kiln.js'), 'call', target, '--args', JSON.stringify(callArgs), '--package', pkg, '--format', 'json'],
      "node -e '' (floor)": ['-e', ''],
    };
    const results = Object.fromEntries(Object.keys(routes).map((k) => [k, []]));
    for (const argv of Object.values(routes)) run(argv); // page cache warm for every route alike
    for (let i = 0; i < COLD_RUNS; i++) {
      const order = i % 2 ? Object.keys(routes).reverse() : Object.keys(routes); // interleaved, alternating
      for (const k of order) results[k].push(run(routes[k]));
    }
    const answers = new Set(Object.entries(results).filter(([k]) => !k.startsWith('node -e')).map(([, rs]) => JSON.stringify(rs[0].r)));
    console.log(`\n3. cold first call of ${target}, fresh node processes (median of ${COLD_RUNS}, interleaved; same answer from every route: ${answers.size === 1})`);
    const floor = median(results["node -e '' (floor)"].map((x) => x.wall));
    for (const [k, rs] of Object.entries(results)) {
      const wall = rs.map((x) => x.wall);
      const inp = rs.map((x) => x.ms).filter((x) => typeof x === 'number');
      console.log(`   ${k.padEnd(32)} wall ${median(wall).toFixed(1)} ms [${range(wall)}], above node's floor ${(median(wall) - floor).toFixed(1)} ms${inp.length ? `, first result at ${median(inp).toFixed(1)} ms in process` : ''}`);
    }
    const rep = median(results['kiln.rep (@kiln/runtime)'].map((x) => x.wall));
    const imp = median(results['import() of the built package'].map((x) => x.wall));
    const repIn = median(results['kiln.rep (@kiln/runtime)'].map((x) => x.ms));
    const impIn = median(results['import() of the built package'].map((x) => x.ms));
    console.log(`   ratio kiln.rep / import(): wall ${(rep / imp).toFixed(2)}×, above the floor ${((rep - floor) / (imp - floor)).toFixed(2)}×, in process ${(repIn / impIn).toFixed(2)}×`);
    goal('cold first call faster than import()', rep < imp && answers.size === 1, `${rep.toFixed(1)} ms vs ${imp.toFixed(1)} ms wall (${(rep / imp).toFixed(2)}×); in process ${repIn.toFixed(1)} vs ${impIn.toFixed(1)} ms`);
  }
} finally {
  if (args.keep) log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
const failed = goals.filter((g) => !g.pass);
console.log(`\n${goals.length - failed.length}/${goals.length} goals met${failed.length ? ` (failed: ${failed.map((g) => g.name).join(', ')})` : ''}`);
if (failed.length && args.strict) process.exit(1);
