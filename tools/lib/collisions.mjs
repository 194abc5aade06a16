/**
 * Identity-collision analysis (issue 2, point 8; SPEC §2): digest a corpus and classify every group
 * of declarations that share an identity *before* disambiguation — same language, package, logical
 * module path, declaration path without `~sig`/`#ordinal`, and kind:
 *
 *   (1) signature   — overloads / merged declarations told apart by their signature digest;
 *   (2) ordinal     — same-named siblings (local `helper` functions in two branches, duplicate
 *                     JS methods) told apart by a dense ordinal within their enclosing declaration;
 *   (3) identical   — declarations that really are the same (equal semantic digests: duplicate
 *                     overloads, a function declared twice); separated by ordinal, and harmless;
 *   (4) REAL        — two declarations whose *final* identity string is equal but whose semantic
 *                     digests differ. Must be zero.
 *
 * Also reports cross-file module collisions within one package: two files of one language that map
 * to the same logical module path (`index.ts` + `index.d.ts`, `a.js` + `a.jsx`). `index.js` and
 * `index.d.ts` are different languages, hence different modules: no collision.
 *
 * Used by tools/identity-collisions.mjs (prints a table) and tools/test/identity-collisions.test.ts.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { extractSlice } from '../../packages/core/dist/facts/extract.js';
import { identityKey } from '../../packages/core/dist/identity/identity.js';
import { fileKind, logicalModulePath } from '../../packages/core/dist/parse/language.js';
import { loadCorpus, typescriptLibFiles } from './corpus.mjs';

/**
 * TypeScript lib `.d.ts` files (all of them, whatever their size) plus the mutation-test corpus;
 * `wide`: every eligible file of the corpus packages instead of the sample.
 */
export function collisionCorpus({ wide = false } = {}) {
  const seen = new Set();
  const out = [];
  const all = [...typescriptLibFiles({ maxBytes: Infinity }), ...loadCorpus({ all: wide })];
  for (const e of all) {
    if (seen.has(e.abs)) continue;
    seen.add(e.abs);
    out.push(e);
  }
  return out;
}

/**
 * Every source file under a directory (a fetched repository, say), each attributed to the package
 * of its nearest package.json; skips node_modules, dot folders and `.min.js`/> 300 KB files.
 */
export function directoryCorpus(dir) {
  const root = resolve(dir);
  const pkgOf = new Map();
  const packageFor = (fileDir) => {
    const chain = [];
    let d = fileDir;
    let found;
    for (;;) {
      if (pkgOf.has(d)) {
        found = pkgOf.get(d);
        break;
      }
      chain.push(d);
      let name;
      try {
        name = JSON.parse(readFileSync(join(d, 'package.json'), 'utf8')).name;
      } catch {
        name = undefined;
      }
      if (name !== undefined || d === root || dirname(d) === d) {
        found = { root: d, name: name ?? '(unnamed)' };
        break;
      }
      d = dirname(d);
    }
    for (const c of chain) pkgOf.set(c, found);
    return found;
  };
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const abs = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
        walk(abs);
      } else if (e.isFile() && fileKind(e.name) && !/\.min\.[mc]?js$/.test(e.name) && statSync(abs).size <= 300 * 1024) {
        const pkg = packageFor(d);
        out.push({ abs, group: 'dir', packageName: pkg.name, packageRoot: pkg.root, rel: relative(pkg.root, abs).split(sep).join('/') });
      }
    }
  };
  walk(root);
  return out;
}

/**
 * A declaration's path with its own and its ancestors' disambiguators (`~sig`, `#ordinal`) removed.
 * Derived from the slice's structure, not by parsing the path string (quoted names may contain
 * anything): each path is `parent.path + kindMark + '.' + segment + ~sig + #ordinal`.
 */
function basePaths(slice) {
  const base = [];
  slice.decls.forEach((d, i) => {
    const suffix = `${d.sig !== undefined ? `~${d.sig}` : ''}${d.ordinal !== undefined ? `#${d.ordinal}` : ''}`;
    if (!d.path.endsWith(suffix)) throw new Error(`path ${d.path} does not end with its disambiguators ${suffix}`);
    const own = d.path.slice(0, d.path.length - suffix.length);
    if (d.parent === -1) {
      base[i] = own;
    } else {
      const parent = slice.decls[d.parent];
      if (!own.startsWith(parent.path)) throw new Error(`path ${d.path} does not extend its parent's ${parent.path}`);
      base[i] = base[d.parent] + own.slice(parent.path.length);
    }
  });
  return base;
}

/** Cross-file module collisions of one package directory: files of one language, one module path. */
export function moduleCollisions(packageRoot, packageName) {
  const files = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
        walk(abs);
      } else if (e.isFile() && fileKind(e.name)) files.push(relative(packageRoot, abs).split(sep).join('/'));
    }
  };
  walk(packageRoot);
  files.sort();
  const byModule = new Map();
  for (const rel of files) {
    const k = fileKind(rel);
    const key = `${k.language}:${packageName}//${logicalModulePath(rel)}`;
    (byModule.get(key) ?? byModule.set(key, []).get(key)).push(rel);
  }
  const out = [];
  for (const [module, group] of byModule) {
    if (group.length < 2) continue;
    const dts = group.filter((f) => fileKind(f).variant === 'dts');
    out.push({ module, files: group, kind: dts.length && dts.length < group.length ? 'source+declaration' : 'same-form' });
  }
  return { files: files.length, collisions: out };
}

/**
 * Digest the corpus and classify identity groups. Returns counts, examples and the raw classes.
 * `onFile(i, n)` reports progress.
 */
export function analyzeCollisions(corpus = collisionCorpus(), { onFile } = {}) {
  const t0 = performance.now();
  /** final identity → [{ file, path, kind, semantic }] */
  const byFinal = new Map();
  /** pre-disambiguation identity → members */
  const byBase = new Map();
  let declarations = 0;
  let bytes = 0;
  const fileModules = new Map();
  corpus.forEach((e, n) => {
    onFile?.(n, corpus.length);
    const buf = e.text !== undefined ? Buffer.from(e.text, 'utf8') : readFileSync(e.abs);
    bytes += buf.length;
    const kind = fileKind(e.abs);
    const slice = extractSlice(buf, kind.variant);
    const module = logicalModulePath(e.rel);
    const moduleKey = `${slice.language}:${e.packageName}//${module}`;
    (fileModules.get(moduleKey) ?? fileModules.set(moduleKey, []).get(moduleKey)).push(e.rel);
    const base = basePaths(slice);
    slice.decls.forEach((d, i) => {
      declarations++;
      const member = {
        file: `${e.packageName}/${e.rel}`,
        moduleKey,
        path: d.path,
        kind: d.kind,
        sig: d.sig,
        ordinal: d.ordinal,
        semantic: d.semantic,
        line: d.span.startLine,
      };
      const finalKey = identityKey({ language: slice.language, package: e.packageName, module, path: d.path, kind: d.kind });
      member.identity = finalKey;
      (byFinal.get(finalKey) ?? byFinal.set(finalKey, []).get(finalKey)).push(member);
      const baseKey = `${moduleKey}#${base[i]}:${d.kind}`;
      (byBase.get(baseKey) ?? byBase.set(baseKey, []).get(baseKey)).push(member);
    });
  });

  const classes = { signature: [], ordinal: [], identical: [], real: [], crossFile: [] };
  // Equal *final* identity strings: a real collision unless the declarations are identical. Within a
  // file the dense ordinal should make this impossible; across files it happens when two files of
  // one package and language map to one logical module path (also listed as cross-file).
  for (const [identity, members] of byFinal) {
    if (members.length < 2) continue;
    const files = new Set(members.map((m) => m.file));
    const digests = new Set(members.map((m) => m.semantic ?? 'null'));
    const group = { identity, members, sameIdentity: true };
    if (files.size > 1) classes.crossFile.push(group);
    if (digests.size > 1 || digests.has('null')) classes.real.push(group);
    else classes.identical.push(group);
  }
  // (1)(2)(3): groups that share an identity before disambiguation.
  for (const [baseIdentity, members] of byBase) {
    if (members.length < 2) continue;
    const single = new Set(members.map((m) => m.file)).size === 1;
    if (!single) continue; // cross-file: reported above
    const group = { identity: baseIdentity, members };
    const ordinalled = members.filter((m) => m.ordinal !== undefined);
    if (!ordinalled.length) {
      classes.signature.push(group);
      continue;
    }
    // Members that needed an ordinal share everything else; they are identical when their digests are.
    const bySeg = new Map();
    for (const m of ordinalled) {
      const seg = m.path.slice(0, m.path.lastIndexOf('#'));
      (bySeg.get(seg) ?? bySeg.set(seg, []).get(seg)).push(m);
    }
    const allIdentical = [...bySeg.values()].every((ms) => ms.every((m) => m.semantic !== null && m.semantic === ms[0].semantic));
    (allIdentical ? classes.identical : classes.ordinal).push(group);
  }

  const modules = [];
  for (const [module, files] of fileModules) if (files.length > 1) modules.push({ module, files });
  return {
    files: corpus.length,
    bytes,
    declarations,
    identities: byFinal.size,
    classes,
    digestedModuleCollisions: modules,
    ms: Math.round(performance.now() - t0),
  };
}

/** Package roots of a corpus, for the module-collision scan over whole packages. */
export function corpusPackages(corpus) {
  const roots = new Map();
  for (const e of corpus) roots.set(e.packageRoot, e.packageName);
  return [...roots].map(([root, name]) => ({ root, name })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const CLASS_TITLES = [
  ['signature', '(1) overloads/merged, separated by signature digest'],
  ['ordinal', '(2) same-named siblings, separated by dense ordinal'],
  ['identical', '(3) genuinely identical (equal digests)'],
  ['real', '(4) REAL collisions (equal identity, different digest)'],
  ['crossFile', 'cross-file: one module identity from two files'],
];

export function classCounts(result) {
  return Object.fromEntries(
    CLASS_TITLES.map(([k]) => [k, { groups: result.classes[k].length, declarations: result.classes[k].reduce((n, g) => n + g.members.length, 0) }]),
  );
}

/** A plain-text table of the classes, with a few examples each. */
export function formatReport(result, { examples = 3, packages } = {}) {
  const lines = [];
  lines.push(
    `corpus: ${result.files} files, ${(result.bytes / 1e6).toFixed(2)} MB, ${result.declarations} declarations, ` +
      `${result.identities} distinct identities (${result.ms} ms)`,
  );
  lines.push('');
  const counts = classCounts(result);
  const w = Math.max(...CLASS_TITLES.map(([, t]) => t.length));
  lines.push(`${'class'.padEnd(w)}  ${'groups'.padStart(7)}  ${'declarations'.padStart(12)}`);
  lines.push(`${'-'.repeat(w)}  ${'-'.repeat(7)}  ${'-'.repeat(12)}`);
  for (const [k, title] of CLASS_TITLES) {
    lines.push(`${title.padEnd(w)}  ${String(counts[k].groups).padStart(7)}  ${String(counts[k].declarations).padStart(12)}`);
  }
  for (const [k, title] of CLASS_TITLES) {
    const groups = result.classes[k];
    if (!groups.length || !examples) continue;
    lines.push('');
    lines.push(`${title} — e.g.:`);
    for (const g of groups.slice(0, k === 'real' ? groups.length : examples)) {
      lines.push(`  ${g.identity}`);
      for (const m of g.members.slice(0, 4)) {
        lines.push(`    ${m.path} (${m.kind}) ${m.file}:${m.line} semantic ${m.semantic?.slice(0, 12) ?? 'null'}`);
      }
      if (g.members.length > 4) lines.push(`    … ${g.members.length - 4} more`);
    }
  }
  if (packages) {
    lines.push('');
    lines.push('cross-file module collisions within one package (whole installed package, not only the sampled files):');
    let total = 0;
    for (const p of packages) {
      const r = moduleCollisions(p.root, p.name);
      total += r.collisions.length;
      const byKind = {};
      for (const c of r.collisions) byKind[c.kind] = (byKind[c.kind] ?? 0) + 1;
      lines.push(`  ${p.name.padEnd(24)} ${String(r.files).padStart(5)} files  ${String(r.collisions.length).padStart(4)} collisions ${r.collisions.length ? JSON.stringify(byKind) : ''}`);
      for (const c of r.collisions.slice(0, examples)) lines.push(`      ${c.module}: ${c.files.join(' + ')}`);
    }
    lines.push(`  total: ${total}`);
  }
  return lines.join('\n');
}
