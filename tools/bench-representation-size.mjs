#!/usr/bin/env node
/**
 * Size of `kiln.rep` against the same content as JSON (issue 15 point 2: "≤ 0.3× the same content as
 * JSON"), across package sizes, with the floors that say what any encoding could reach.
 *
 * Subjects, each built by kiln's `compileProject` and written by `writeRepresentation`: the five
 * libraries of fixtures/workspace-basic (1–9 exports), the real library `@jridgewell/sourcemap-codec`
 * (its published TypeScript sources, from node_modules), and the generated wide package
 * (tools/lib/rep-wide.mjs) at 20, 40, 100 and 400 exports.
 *
 * Per subject, side by side:
 *   - kiln.rep bytes, and JSON bytes of the same content: the decoded model (readRepresentation) with
 *     each payload's SHA-256 as hex — the same measure as bench-representation-call.mjs section 0;
 *   - the ratio, PASS/FAIL against 0.3;
 *   - floor A, brotli quality 11 of that whole JSON document: the best general-purpose compressor over
 *     everything at once, with no selective load at all (a format whose payloads load one by one can
 *     only do worse on the same content, up to the little a custom metadata layout saves);
 *   - floor B, brotli 11 of every payload's code concatenated plus the raw 32-byte hashes: the content
 *     the issue requires, with zero metadata (no header, keys, index, names or coverage) — below it no
 *     encoding of that content goes;
 *   - kiln.rep's fixed part (prefix, header, seal, index and table records) and what it spends on
 *     metadata vs payloads.
 * The judge of the ratio is node:zlib and JSON.stringify; kiln's own writer is what is measured.
 *
 * Usage: node tools/bench-representation-size.mjs [--keep]   (requires `npm run build`)
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { cliArgs } from './lib/cli-args.mjs';
import { sameContentAsJson } from './lib/rep-json.mjs';
import { WIDE_PACKAGE, wideSources } from './lib/rep-wide.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: node tools/bench-representation-size.mjs [--keep]
  --keep   keep the temporary folder
`;
const { args } = cliArgs({ keep: { type: 'boolean', default: false } }, HELP);
const { compileProject, writeRepresentation } = await import(pathToFileURL(join(ROOT, 'packages/core/dist/index.js')).href);
const { openRepresentation, readRepresentation, representationPath } = await import(pathToFileURL(join(ROOT, 'packages/runtime/dist/index.js')).href);
const log = (s) => process.stderr.write(`[bench-representation-size] ${s}\n`);

const TSCONFIG = (extra = {}) =>
  JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: [], strict: true, rootDir: 'src', outDir: 'dist', declaration: true, skipLibCheck: true, ...extra }, include: ['src/**/*.ts'] });
const brotli = (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;

function writeTree(dir, tree) {
  for (const [rel, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

async function measure(name, pkg) {
  const built = await compileProject({ projectRoot: pkg });
  if (!built.success) throw new Error(`${name}: build failed: ${JSON.stringify(built.diagnostics.slice(0, 2))}`);
  const written = await writeRepresentation({ packageRoot: pkg, store: false, workers: 0 });
  const buf = readFileSync(representationPath(pkg));
  const rep = readRepresentation(buf);
  const same = Buffer.from(sameContentAsJson(rep));
  const reader = openRepresentation(buf);
  const s = reader.sections;
  const payloads = reader.payloadCount;
  reader.close();
  const fixed = s.prefix + s.header + s.seal + s.index + s.table;
  const stored = s.payloads + s.dict;
  const code = Buffer.from(rep.payloads.map((p) => p.code).join('\n'));
  return { name, exports: written.entries, covered: written.covered, payloads, size: buf.length, json: same.length, floorA: brotli(same), floorB: brotli(code) + 32 * payloads, fixed, meta: buf.length - fixed - stored, stored, code: code.length };
}

const tmp = mkdtempSync(join(tmpdir(), 'kiln-bench-rep-size-'));
const rows = [];
try {
  // kiln's fixture libraries, linked as a workspace links them, built in dependency order.
  const ws = join(tmp, 'fixtures');
  cpSync(join(ROOT, 'fixtures/workspace-basic'), ws, { recursive: true });
  mkdirSync(join(ws, 'node_modules/@fx'), { recursive: true });
  const libs = ['base', 'left', 'right', 'top', 'tail'];
  for (const l of libs) symlinkSync(join(ws, 'libs', l), join(ws, 'node_modules/@fx', l), 'dir');
  for (const l of libs) {
    log(`@fx/${l} …`);
    rows.push(await measure(`@fx/${l} (fixture)`, join(ws, 'libs', l)));
  }

  // A real library from its published TypeScript sources (as represent-parity.test.ts builds it).
  const codecSrc = join(ROOT, 'node_modules/@jridgewell/sourcemap-codec/src');
  const codec = join(tmp, 'codec/node_modules/@jridgewell/sourcemap-codec');
  const tree = {};
  for (const f of readdirSync(codecSrc).filter((x) => x.endsWith('.ts'))) {
    tree[`src/${f}`] = readFileSync(join(codecSrc, f), 'utf8').replace(/(from\s+['"])(\.\.?\/[^'"]+?)(['"])/g, (_m, a, p, b) => `${a}${/\.[cm]?js$/.test(p) ? p : `${p}.js`}${b}`);
  }
  const version = JSON.parse(readFileSync(join(codecSrc, '../package.json'), 'utf8')).version;
  writeTree(codec, { ...tree, 'tsconfig.lib.json': TSCONFIG({ lib: ['ES2022', 'DOM'], types: ['node'] }), 'package.json': JSON.stringify({ name: '@jridgewell/sourcemap-codec', version, type: 'module', exports: { '.': { types: './dist/sourcemap-codec.d.ts', import: './dist/sourcemap-codec.js' } } }) });
  mkdirSync(join(codec, 'node_modules/@types'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules/@types/node'), join(codec, 'node_modules/@types/node'), 'dir');
  log(`@jridgewell/sourcemap-codec@${version} …`);
  rows.push(await measure(`@jridgewell/sourcemap-codec@${version} (real)`, codec));

  // The generated wide package at several sizes.
  for (const modules of [2, 4, 10, 40]) {
    const pkg = join(tmp, `wide-${modules}/node_modules`, WIDE_PACKAGE);
    writeTree(pkg, { ...wideSources(modules), 'tsconfig.lib.json': TSCONFIG(), 'package.json': JSON.stringify({ name: WIDE_PACKAGE, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } } }) });
    log(`${WIDE_PACKAGE}, ${modules * 10} exports …`);
    rows.push(await measure(`${WIDE_PACKAGE} ×${modules * 10} (generated)`, pkg));
  }

  const r = (a, b) => (a / b).toFixed(3);
  console.log('\n| package | exports | payloads | kiln.rep B | JSON B | kiln.rep ÷ JSON | ≤ 0.3× | floor A: brotli-11(JSON) ÷ JSON | floor B: code+hashes ÷ JSON | kiln.rep fixed / other metadata / payloads+dict B |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const x of rows) {
    console.log(`| ${x.name} | ${x.exports} (${x.covered} covered) | ${x.payloads} | ${x.size} | ${x.json} | ${r(x.size, x.json)} | ${x.size <= 0.3 * x.json ? 'PASS' : 'FAIL'} | ${r(x.floorA, x.json)} | ${r(x.floorB, x.json)} | ${x.fixed} / ${x.meta} / ${x.stored} |`);
  }
  const unreachable = rows.filter((x) => x.floorA > 0.3 * x.json);
  console.log(`\n${rows.filter((x) => x.size <= 0.3 * x.json).length}/${rows.length} at or under 0.3×. Floor A is over 0.3× for ${unreachable.map((x) => x.name).join(', ') || 'none'}: there brotli-11 of the whole document, with no selective load, misses the target; kiln.rep under floor A: ${rows.filter((x) => x.size < x.floorA).map((x) => x.name).join(', ') || 'none'}.`);
  const beyond = rows.filter((x) => x.floorA <= 0.3 * x.json && x.size > 0.3 * x.json);
  console.log(`Reachable by a whole-document compressor but missed by kiln.rep: ${beyond.map((x) => `${x.name} (${r(x.size, x.json)}× vs floor A ${r(x.floorA, x.json)}×)`).join(', ') || 'none'}.`);
  // Where kiln.rep misses: the budget against what the file cannot do without (its fixed part holds the
  // 32-byte seal and each payload's 32-byte hash; the stored payloads are the code itself).
  for (const x of rows.filter((y) => y.size > 0.3 * y.json)) {
    const budget = Math.floor(0.3 * x.json);
    console.log(`${x.name}: budget ${budget} B (0.3 × ${x.json}); fixed part ${x.fixed} B (seal 32 B, ${x.payloads} payload hash(es) ${32 * x.payloads} B) + payloads ${x.stored} B = ${x.fixed + x.stored} B before any key, identity or name; ${x.size - budget} B over.`);
  }
} finally {
  if (args.keep) log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
