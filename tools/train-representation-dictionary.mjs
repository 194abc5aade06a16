#!/usr/bin/env node
/**
 * Trains the static dictionary of the `kiln.rep` format (the generated region of
 * packages/runtime/src/dictionary.ts):
 * the bytes every deflate stream of a representation may reference before its own (format.ts, "the
 * static dictionary"). Like brotli's built-in dictionary, it is part of the format: a representation
 * written with one dictionary cannot be read with another, so changing it means a new
 * REPRESENTATION_FORMAT. This tool records how it was made; it is not run by the build or the tests.
 *
 * Corpus (real code, none of it kiln's fixtures or benchmark subjects): every package installed in this
 * workspace's node_modules that publishes types, is permissively licensed (MIT, ISC, Apache-2.0, BSD,
 * 0BSD, BlueOak) and yields at least one payload under `kiln represent` (a copy of the package, its own
 * published JS, nothing rebuilt). Held out, so the benchmarks judge the dictionary on code it never saw:
 * @jridgewell/sourcemap-codec (bench-representation-size's real library), kiln's own packages, the
 * fixture workspaces and the generated wide package.
 *
 * Samples, balanced so no large package dominates: per package its smallest, median and largest
 * payload (each cut to 16 KiB) and INFO's raw bytes for its first 40 entries, laid out as format.ts
 * lays INFO out (the header's producer, Node requirement and features, then per entry its declaring
 * identity, kind, and export or reason and detail). Training: `zstd --train --maxdict=N` (the COVER
 * algorithm of the zstd CLI, deterministic for the same samples); the dictionary's content section (what
 * follows the three repeat offsets, 1 4 8) is what a deflate preset dictionary can use.
 *
 * Usage: node tools/train-representation-dictionary.mjs [--size 8192] [--out FILE] [--keep]
 *   (requires `npm run build` and the zstd CLI). Rewrites the region between `// BEGIN GENERATED` and
 *   `// END GENERATED` in FILE and prints the SHA-256; pinning it in format.ts (STATIC_DICTIONARY_SHA256)
 *   is left to a person, because a new dictionary means a new REPRESENTATION_FORMAT.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs } from './lib/cli-args.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: node tools/train-representation-dictionary.mjs [options]
  --size N   dictionary size in bytes given to zstd (default 8192)
  --out F    the TypeScript module whose generated region to rewrite (default packages/runtime/src/dictionary.ts)
  --keep     keep the temporary folder
`;
const { args, int } = cliArgs(
  { size: { type: 'string', default: '8192' }, out: { type: 'string', default: join(ROOT, 'packages/runtime/src/dictionary.ts') }, keep: { type: 'boolean', default: false } },
  HELP,
);
const size = int('size', 1024);
const log = (s) => process.stderr.write(`[train-representation-dictionary] ${s}\n`);
const { writeRepresentation } = await import(pathToFileURL(join(ROOT, 'packages/core/dist/index.js')).href);
const { readRepresentation, representationPath, varUint } = await import(pathToFileURL(join(ROOT, 'packages/runtime/dist/index.js')).href);
const vstr = (s) => {
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([varUint(b.length), b]);
};

const HELD_OUT = new Set(['@jridgewell/sourcemap-codec']);
const PERMISSIVE = /^(MIT|ISC|Apache-2\.0|BSD-2-Clause|BSD-3-Clause|0BSD|BlueOak-1\.0\.0)$/;
const nm = join(ROOT, 'node_modules');
const names = [];
for (const d of readdirSync(nm).sort()) {
  if (d.startsWith('.')) continue;
  if (d.startsWith('@')) for (const s of readdirSync(join(nm, d)).sort()) names.push(`${d}/${s}`);
  else names.push(d);
}

const tmp = mkdtempSync(join(tmpdir(), 'kiln-train-dict-'));
const samples = join(tmp, 'samples');
mkdirSync(samples);
const used = [];
let n = 0;
try {
  for (const name of names) {
    if (HELD_OUT.has(name) || name.startsWith('@kiln/')) continue;
    const dir = join(nm, name);
    let m;
    try {
      m = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    if (!(m.types || m.typings || JSON.stringify(m.exports ?? '').includes('types'))) continue;
    if (!PERMISSIVE.test(typeof m.license === 'string' ? m.license : '')) continue;
    const copy = join(tmp, 'pkg');
    rmSync(copy, { recursive: true, force: true });
    const real = realpathSync(dir);
    cpSync(real, copy, { recursive: true, filter: (s) => !relative(real, s).split(/[\\/]/).includes('node_modules') });
    let rep;
    try {
      await writeRepresentation({ packageRoot: copy, store: false, workers: 0 });
      rep = readRepresentation(readFileSync(representationPath(copy, JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')))));
    } catch (e) {
      log(`${name}: skipped (${String(e.message).split('\n')[0].slice(0, 100)})`);
      continue;
    }
    if (rep.payloads.length === 0) continue;
    const bySize = [...rep.payloads].sort((a, b) => a.code.length - b.code.length || (a.name < b.name ? -1 : 1));
    const pick = [...new Set([bySize[0], bySize[bySize.length >> 1], bySize[bySize.length - 1]])];
    for (const p of pick) writeFileSync(join(samples, `${String(n++).padStart(4, '0')}.js`), p.code.slice(0, 16384));
    // INFO's raw bytes as format.ts lays them out: the header's rest, then per entry four `vstr`s.
    const { producer, requirements } = rep.header;
    const strings = [producer, requirements.node];
    const entryStrings = rep.entries
      .slice(0, 40)
      .flatMap((e) => [e.declaring, e.kind, e.coverage.covered ? e.coverage.export : e.coverage.reason, e.coverage.covered ? '' : e.coverage.detail]);
    const info = Buffer.concat([
      ...strings.map(vstr),
      varUint(requirements.features.length),
      ...requirements.features.map(vstr),
      ...entryStrings.map(vstr),
    ]);
    writeFileSync(join(samples, `${String(n++).padStart(4, '0')}.bin`), info);
    used.push(`${name}@${m.version} (${m.license})`);
    log(`${name}: ${rep.entries.length} entries, ${rep.payloads.length} payloads`);
  }
  const files = readdirSync(samples).sort().map((f) => join(samples, f));
  const zstdVersion = execFileSync('zstd', ['--version'], { encoding: 'utf8' }).replace(/\*/g, '').trim();
  const trained = join(tmp, 'dict.zst');
  execFileSync('zstd', ['-q', '--train', ...files, `--maxdict=${size}`, '-o', trained, '-f']);
  const dict = readFileSync(trained);
  // Content follows the entropy tables and the three repeat offsets (1, 4, 8 as u32 LE).
  const marker = Buffer.from([1, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0]);
  const at = dict.indexOf(marker);
  if (at < 8 || at > 2048) throw new Error(`zstd dictionary layout not recognised (repeat offsets at ${at})`);
  const content = dict.subarray(at + marker.length);
  const sha = createHash('sha256').update(content).digest('hex');
  const b64 = content.toString('base64');
  const lines = b64.match(/.{1,100}/g).map((l) => `  '${l}'`).join(',\n');
  const module = readFileSync(args.out, 'utf8');
  const begin = module.indexOf('// BEGIN GENERATED');
  const end = module.indexOf('// END GENERATED');
  if (begin < 0 || end < begin) throw new Error(`${args.out} has no // BEGIN GENERATED … // END GENERATED region`);
  const region = `// BEGIN GENERATED by tools/train-representation-dictionary.mjs — do not edit: the static dictionary of
// format 2 (${content.length} bytes, SHA-256 ${sha}),
// trained with zstd's COVER on ${used.length} permissively licensed packages of kiln's dependency tree (the
// benchmark subjects held out), by ${zstdVersion}.
// Part of the format: changing it means a new REPRESENTATION_FORMAT. Kept in this module (not a file read
// at run time, not a module of its own): a bundled @kiln/runtime carries it, a cold start loads no extra module.
const BASE64 = [
${lines},
].join('');
`;
  writeFileSync(args.out, module.slice(0, begin) + region + module.slice(end));
  log(`corpus: ${used.length} packages, ${files.length} samples`);
  console.log(JSON.stringify({ bytes: content.length, sha256: sha, zstd: zstdVersion, packages: used.length, samples: files.length, out: relative(ROOT, args.out) }, null, 2));
} finally {
  if (args.keep) log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}
