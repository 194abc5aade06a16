#!/usr/bin/env node
// Pack kiln's packages as self-contained tarballs: `node tools/pack.mjs [DEST]` (default: ./dist-pack),
// after `npm run build`. Prints one JSON line per tarball: { name, file }.
//
// Why: @kiln/nx depends on @kiln/core, @kiln/cli on @kiln/core and @kiln/mcp. Tarballs packed with a
// plain `npm pack` name those by version, and a package manager resolves a tarball's dependencies from
// the registry: pnpm and yarn stop with `@kiln/core` 404 even when its tarball is given on the same
// command line (npm happens to dedupe onto it). npm's `bundleDependencies` does not help: yarn 1 still
// looks a bundled dependency up in the registry, and npm packs none that has no dependency edge.
// So each tarball made here vendors the @kiln/* packages it depends on (transitively), unpacked as
// `npm pack` would ship them, under `vendor/<name>/` (not node_modules: no package manager touches it);
// its import specifiers of those packages are rewritten to relative paths, and their registry
// dependencies become its own (they resolve from the vendored copy by Node's upward lookup, pnpm's
// layout included). Each tarball installs alone, with one plain command and no overrides:
//   npm i -D ./kiln-nx-0.1.0.tgz ./kiln-cli-0.1.0.tgz
//   pnpm add -D -w ./kiln-nx-0.1.0.tgz ./kiln-cli-0.1.0.tgz
//   yarn add -D -W ./kiln-nx-0.1.0.tgz ./kiln-cli-0.1.0.tgz
// (packages/nx/test/install.test.ts runs the README's commands in fresh npm, pnpm and yarn workspaces.)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The packages, by name → folder. */
const PACKAGES = { '@kiln/runtime': 'packages/runtime', '@kiln/core': 'packages/core', '@kiln/mcp': 'packages/mcp', '@kiln/cli': 'packages/cli', '@kiln/nx': 'packages/nx' };

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The @kiln/* packages a package depends on, transitively (not itself). */
function internalClosure(name, seen = new Set()) {
  const deps = readJson(join(root, PACKAGES[name], 'package.json')).dependencies ?? {};
  for (const dep of Object.keys(deps)) {
    if (dep in PACKAGES && !seen.has(dep)) {
      seen.add(dep);
      internalClosure(dep, seen);
    }
  }
  return seen;
}

/** `npm pack` one package folder as it is (its `files`), unpacked into `into`. */
function unpackPlain(folder, into, scratch) {
  const out = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', scratch], join(root, folder)));
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-xzf', join(scratch, out[0].filename), '-C', into, '--strip-components=1']);
}

/** Files whose import specifiers are rewritten (not source maps: they name no specifier). */
const CODE = /\.(js|cjs|mjs|d\.ts|d\.cts|d\.mts)$/;

function* walk(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile()) yield p;
  }
}

/**
 * The file `import '<name><sub>'` resolves to inside an unpacked package: its `exports['.<sub>']` (for
 * the main entry, else `main`); undefined for a subpath the package does not export.
 */
function entryOf(pkgDir, sub = '') {
  const m = readJson(join(pkgDir, 'package.json'));
  const target = m.exports?.[`.${sub}`];
  const rel = (typeof target === 'string' ? target : (target?.import ?? target?.default)) ?? (sub ? undefined : m.main ?? 'index.js');
  return rel === undefined ? undefined : join(pkgDir, rel);
}

/**
 * Packs `name` with its @kiln/* dependencies vendored; returns the tarball's path.
 * @param {string} name
 * @param {string} dest
 */
export function packSelfContained(name, dest) {
  const scratch = mkdtempSync(join(tmpdir(), 'kiln-pack-'));
  try {
    const stage = join(scratch, 'stage');
    unpackPlain(PACKAGES[name], stage, scratch);
    const manifest = readJson(join(stage, 'package.json'));
    const vendored = [...internalClosure(name)].sort();
    const dependencies = { ...(manifest.dependencies ?? {}) };
    /** name → its unpacked directory inside the stage */
    const dirs = new Map();
    for (const dep of vendored) {
      const dir = join(stage, 'vendor', dep.replace(/^@kiln\//, ''));
      unpackPlain(PACKAGES[dep], dir, scratch);
      dirs.set(dep, dir);
      delete dependencies[dep];
      for (const [ext, range] of Object.entries(readJson(join(dir, 'package.json')).dependencies ?? {})) {
        if (ext in PACKAGES) continue;
        if (dependencies[ext] !== undefined && dependencies[ext] !== range) {
          throw new Error(`${name} and its vendored ${dep} depend on different ${ext}: ${dependencies[ext]} and ${range}`);
        }
        dependencies[ext] = range;
      }
    }
    if (vendored.length) {
      const specifier = new RegExp(`(['"])(${vendored.map((d) => d.replace('/', '\\/')).join('|')})(\\/[^'"]*)?\\1`, 'g');
      for (const file of walk(stage)) {
        if (!CODE.test(file)) continue;
        const text = readFileSync(file, 'utf8');
        const next = text.replace(specifier, (_all, q, dep, sub) => {
          const entry = entryOf(dirs.get(dep), sub ?? '');
          if (!entry) throw new Error(`${file}: ${dep}${sub} is not a subpath ${dep} exports`);
          let rel = relative(dirname(file), entry).split(sep).join('/');
          if (!rel.startsWith('.')) rel = `./${rel}`;
          return `${q}${rel}${q}`;
        });
        if (next !== text) writeFileSync(file, next);
      }
      manifest.files = [...new Set([...(manifest.files ?? []), 'vendor'])];
    }
    manifest.dependencies = dependencies;
    delete manifest.scripts; // nothing to build or run at install time
    writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    mkdirSync(dest, { recursive: true });
    const out = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dest], stage));
    const file = join(dest, out[0].filename);
    const listed = new Set(out[0].files.map((f) => f.path));
    for (const dep of vendored) {
      const entry = relative(stage, entryOf(dirs.get(dep))).split(sep).join('/');
      if (!listed.has(entry)) throw new Error(`${file} does not ship ${entry}`);
    }
    return file;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = resolve(process.argv[2] ?? 'dist-pack');
  if (!existsSync(join(root, 'packages/nx/dist/plugins/src/entry.cjs'))) {
    console.error('kiln: run `npm run build` first (packages/nx/dist is missing)');
    process.exit(1);
  }
  const names = process.argv.length > 3 ? process.argv.slice(3) : Object.keys(PACKAGES);
  for (const name of names) console.log(JSON.stringify({ name, file: packSelfContained(name, dest) }));
}
