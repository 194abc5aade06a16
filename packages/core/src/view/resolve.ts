/**
 * Resolution inside one package, the part syntax can do: relative specifiers and manifest targets to
 * source files of the tree. Anything else (bare specifiers of other packages) stays unresolved —
 * never guessed.
 */
import { posix } from 'node:path';

// Bundlers (tsup, tsdown, unbuild) emit `.mjs`/`.cjs` and `.d.mts`/`.d.cts` from plain `.ts` sources,
// so those extensions also map back to `.ts`/`.tsx` after their own source forms.
const TS_FOR_JS: Record<string, string[]> = {
  '.js': ['.ts', '.tsx', '.d.ts', '.js', '.jsx'],
  '.jsx': ['.tsx', '.jsx'],
  '.mjs': ['.mts', '.d.mts', '.mjs', '.ts', '.tsx'],
  '.cjs': ['.cts', '.d.cts', '.cjs', '.ts', '.tsx'],
};
const BARE_EXTS = ['.ts', '.tsx', '.d.ts', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];

export function resolveInTree(base: string, files: ReadonlySet<string>): string | undefined {
  const norm = posix.normalize(base).replace(/^\.\//, '');
  if (norm.startsWith('../')) return undefined;
  const candidates: string[] = [];
  const dts = /\.d\.([mc]?)ts$/.exec(norm);
  const ext = posix.extname(norm);
  if (dts) {
    const stem = norm.slice(0, dts.index);
    const f = dts[1];
    candidates.push(`${stem}.${f}ts`, f ? `${stem}.${f}js` : `${stem}.tsx`, norm);
    if (f) candidates.push(`${stem}.ts`, `${stem}.tsx`);
  } else if (ext && TS_FOR_JS[ext]) {
    const stem = norm.slice(0, -ext.length);
    candidates.push(...TS_FOR_JS[ext]!.map((e) => stem + e));
  } else if (ext && BARE_EXTS.includes(ext)) {
    candidates.push(norm);
  }
  candidates.push(...BARE_EXTS.map((e) => norm + e), ...BARE_EXTS.map((e) => `${norm}/index${e}`));
  return candidates.find((c) => files.has(c));
}

export function resolveSpecifier(fromFile: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..') return undefined;
  return resolveInTree(posix.join(posix.dirname(fromFile), specifier), files);
}

/** A manifest target (`./dist/index.js`) → the source file it was built from, if in the tree. */
export function resolveManifestTarget(target: string, files: ReadonlySet<string>, outDirs: string[]): string | undefined {
  const t = target.replace(/^\.\//, '');
  const direct = resolveInTree(t, files);
  if (direct) return direct;
  for (const out of [...outDirs, 'dist', 'lib', 'build', 'out']) {
    const prefix = `${out.replace(/\/$/, '')}/`;
    if (!t.startsWith(prefix)) continue;
    const rest = t.slice(prefix.length);
    for (const srcRoot of ['src/', 'lib/', '']) {
      const hit = resolveInTree(srcRoot + rest, files);
      if (hit) return hit;
    }
    // A bundler's per-format folder (vite library mode and rollup configs emit `dist/esm/…` and
    // `dist/cjs/…` from `src/…`): only the well-known format names, and only once the path as written
    // found nothing, so a real `src/esm/` folder still wins.
    const slash = rest.indexOf('/');
    if (slash > 0 && FORMAT_DIRS.has(rest.slice(0, slash))) {
      for (const srcRoot of ['src/', 'lib/']) {
        const hit = resolveInTree(srcRoot + rest.slice(slash + 1), files);
        if (hit) return hit;
      }
    }
  }
  return undefined;
}

/** Output folders bundlers name after a module format or a declaration build. */
const FORMAT_DIRS = new Set(['esm', 'cjs', 'es', 'mjs', 'umd', 'module', 'commonjs', 'types', 'typings']);
