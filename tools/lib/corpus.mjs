/**
 * The real-code corpus shared by the mutation tests (packages/core/test/mutation.test.ts) and the
 * identity-collision tool (tools/identity-collisions.mjs): files present after `npm install`.
 *
 * Deterministic: a fixed list of packages, sorted paths, and a seeded PRNG for sampling, so two runs
 * on the same install pick the same files. Minified/bundled files (> 300 KB) are skipped; the
 * TypeScript lib `.d.ts` files are hand-written declarations and are kept up to 1 MB.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const NODE_MODULES = join(REPO_ROOT, 'node_modules');

const SOURCE_RE = /\.(d\.[mc]?ts|[mc]?ts|tsx|[mc]?js|jsx)$/;
export const MAX_FILE_BYTES = 300 * 1024;
export const MAX_TS_LIB_BYTES = 1024 * 1024;

/**
 * Installed packages sampled into the corpus, with how many files each contributes at most
 * (sampled by the seeded PRNG from the sorted list when a package has more).
 */
export const CORPUS_PACKAGES = [
  ['@nx/devkit', 60],
  ['nx', 110],
  ['zx', 30],
  ['piscina', 40],
  ['vitest', 40],
  ['@vitest/runner', 10],
  ['@vitest/utils', 15],
  ['@vitest/snapshot', 10],
  ['cacache', 14],
  ['commander', 10],
  ['minimatch', 12],
  ['glob', 12],
  ['semver', 25],
  ['yargs', 12],
  ['lru-cache', 8],
  ['@types/node', 25],
  ['undici-types', 15],
  ['yaml', 25],
  ['json5', 8],
  ['magic-string', 5],
  ['tslib', 6],
  ['smol-toml', 8],
];

/** mulberry32: a small seeded PRNG, returns floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Deterministic sample of k items from a (sorted) list, returned in list order. */
export function sample(list, k, rand) {
  if (list.length <= k) return list.slice();
  const idx = list.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, k).sort((a, b) => a - b).map((i) => list[i]);
}

function walk(dir, out, skipNodeModules = true) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const abs = join(dir, e.name);
    if (e.isDirectory()) {
      if (skipNodeModules && e.name === 'node_modules') continue;
      if (e.name.startsWith('.')) continue;
      walk(abs, out, skipNodeModules);
    } else if (e.isFile() && SOURCE_RE.test(e.name)) {
      out.push(abs);
    }
  }
}

function size(abs) {
  return statSync(abs).size;
}

/**
 * One corpus entry: where the file is, which package it belongs to (name + root) and its path
 * relative to that root (the input of `logicalModulePath`).
 */
function entry(abs, pkgRoot, group) {
  const pkgName = JSON.parse(readFileSync(join(pkgRoot, 'package.json'), 'utf8')).name ?? '(unnamed)';
  return { abs, group, packageName: pkgName, packageRoot: pkgRoot, rel: relative(pkgRoot, abs).split(sep).join('/') };
}

/** TypeScript's own lib declaration files (`lib.*.d.ts`, `typescript.d.ts`, …), up to 1 MB each by default. */
export function typescriptLibFiles({ maxBytes = MAX_TS_LIB_BYTES } = {}) {
  const root = join(NODE_MODULES, 'typescript');
  const lib = join(root, 'lib');
  return readdirSync(lib)
    .filter((f) => f.endsWith('.d.ts'))
    .sort()
    .map((f) => join(lib, f))
    .filter((abs) => size(abs) <= maxBytes)
    .map((abs) => entry(abs, root, 'typescript/lib'));
}

/** This repository's own sources: packages/<name>/src/**.ts. */
export function repoSourceFiles() {
  const pkgs = join(REPO_ROOT, 'packages');
  const out = [];
  for (const name of readdirSync(pkgs).sort()) {
    const root = join(pkgs, name);
    if (!existsSync(join(root, 'package.json')) || !existsSync(join(root, 'src'))) continue;
    const files = [];
    walk(join(root, 'src'), files);
    for (const abs of files.filter((f) => /\.[mc]?tsx?$/.test(f)).sort()) out.push(entry(abs, root, 'repo'));
  }
  return out;
}

/** Real `.ts`/`.d.ts`/`.js` files shipped inside installed packages, sampled per package. */
export function installedPackageFiles(seed = 20240607, { all = false } = {}) {
  const out = [];
  for (const [name, max] of CORPUS_PACKAGES) {
    const root = join(NODE_MODULES, name);
    if (!existsSync(join(root, 'package.json'))) continue;
    const files = [];
    walk(root, files);
    const eligible = files
      .map((abs) => relative(root, abs).split(sep).join('/'))
      .sort()
      .filter((rel) => size(join(root, rel)) <= MAX_FILE_BYTES && !/\.min\.[mc]?js$/.test(rel));
    // One PRNG per package: adding a package to the list does not reshuffle the others.
    const picked = all ? eligible : sample(eligible, max, prng(seed ^ hashString(name)));
    for (const rel of picked) out.push(entry(join(root, rel), root, name));
  }
  return out;
}

function hashString(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The whole corpus: repo sources, TypeScript lib `.d.ts` files, installed packages (sampled, or
 * every eligible file with `all`). Each entry:
 * { abs, group, packageName, packageRoot, rel }. Sorted by group order then path.
 */
export function loadCorpus({ seed = 20240607, all = false } = {}) {
  const seen = new Set();
  const out = [];
  for (const e of [...repoSourceFiles(), ...typescriptLibFiles(), ...installedPackageFiles(seed, { all })]) {
    if (seen.has(e.abs)) continue;
    seen.add(e.abs);
    out.push(e);
  }
  return out;
}
