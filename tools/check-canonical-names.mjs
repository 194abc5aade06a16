#!/usr/bin/env node
/**
 * Judge of `restoreBindingNames` (packages/core/src/represent/bundle.ts) on real code: the canonical
 * reprint of a module (esbuild, whitespace minified) renames a nested binding that shadows a top-level
 * one (`var B = class B` → `class B2`), and kiln renames esbuild's names back so a payload's classes and
 * functions keep the `name` `import()` shows. Renaming by hand could rebind an identifier. The judge is
 * esbuild itself: its renamer is deterministic, so code whose bindings are exactly the original's
 * reprints to exactly the original's reprint. For every ES module found (default: this repository's
 * node_modules), it prints:
 *   - files whose reprint esbuild renamed and kiln restored (restored ≠ reprint);
 *   - of those, how many reprint (esbuild, same options) to exactly the original's reprint (PASS), or
 *     else to exactly the reprint's own reprint (PASS: esbuild is not idempotent inside legal comments,
 *     which it keeps inline), and every one that does neither, with the first differing line (FAIL).
 * Exit status 1 on a FAIL.
 *
 * Usage: node tools/check-canonical-names.mjs [DIR ...] [--limit N]   (requires `npm run build`)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transform } from 'esbuild';
import { cliArgs } from './lib/cli-args.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: node tools/check-canonical-names.mjs [DIR ...] [--limit N]
  DIR        folders to search for ES modules (.mjs, or .js under a "type": "module" package); default: node_modules
  --limit N  stop after N modules (default: all)
`;
const { args, positionals, int } = cliArgs({ limit: { type: 'string' } }, HELP, { allowPositionals: true });
const limit = args.limit === undefined ? Infinity : int('limit', 1);
const { restoreBindingNames } = await import(pathToFileURL(join(ROOT, 'packages/core/dist/represent/bundle.js')).href);
const OPTIONS = { format: 'esm', target: 'esnext', legalComments: 'inline', loader: 'js', minifyWhitespace: true };

/** ES module files under `dir`: `.mjs`, and `.js` in a folder whose nearest package.json says "type": "module". */
function* modules(dir, esm = false) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  let here = esm;
  const manifest = entries.find((e) => e.name === 'package.json' && e.isFile());
  if (manifest) {
    try {
      here = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type === 'module';
    } catch {
      /* keep the parent's */
    }
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* modules(p, here);
    else if (e.isFile() && (e.name.endsWith('.mjs') || (here && e.name.endsWith('.js'))) && statSync(p).size < 2_000_000) yield p;
  }
}

const dirs = positionals.length ? positionals : [join(ROOT, 'node_modules')];
let seen = 0;
let reprinted = 0;
let restored = 0;
let pass = 0;
let commentOnly = 0;
const fails = [];
outer: for (const dir of dirs) {
  for (const file of modules(dir)) {
    if (seen >= limit) break outer;
    seen++;
    const code = readFileSync(file, 'utf8');
    let printed;
    try {
      printed = (await transform(code, OPTIONS)).code;
    } catch {
      continue; // not a module esbuild parses as JS (canonicalModule keeps such code as it is)
    }
    reprinted++;
    const back = restoreBindingNames(code, printed);
    if (back === printed) continue;
    restored++;
    const again = (await transform(back, OPTIONS)).code;
    if (again === printed) {
      pass++;
      continue;
    }
    // esbuild's reprint is not idempotent inside legal comments: compare with the reprint's own reprint.
    const settled = (await transform(printed, OPTIONS)).code;
    if (again === settled) {
      commentOnly++;
      continue;
    }
    const a = again.split('\n');
    const b = settled.split('\n');
    const i = a.findIndex((line, k) => line !== b[k]);
    const la = String(a[i]);
    const lb = String(b[i]);
    let c = 0;
    while (c < la.length && la[c] === lb[c]) c++;
    const at = Math.max(0, c - 60);
    fails.push(`${relative(ROOT, file)}: line ${i + 1}, column ${c + 1}\n    restored reprint: …${la.slice(at, c + 60)}\n    original reprint: …${lb.slice(at, c + 60)}`);
  }
}
console.log(`${seen} modules read, ${reprinted} reprinted by esbuild; ${restored} had names restored:`);
console.log(`  ${pass} reprint exactly to the original's reprint (PASS)`);
console.log(`  ${commentOnly} reprint exactly to the reprint's own reprint (PASS: esbuild is not idempotent inside legal comments)`);
console.log(`  ${fails.length} differ (FAIL)${fails.length ? `:\n  ${fails.slice(0, 20).join('\n  ')}` : ''}`);
process.exit(fails.length ? 1 : 0);
