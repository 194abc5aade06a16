/**
 * Emulation of Nx's task hash for a `build` target with a tuned `production` named input, computed
 * from one commit's `git ls-tree -r` blob ids (tools/bench-history.mjs). Equivalent nx.json:
 *
 *   "namedInputs": {
 *     "default": ["{projectRoot}/**\/*", "sharedGlobals"],
 *     "sharedGlobals": ["{workspaceRoot}/tsconfig*.json"],
 *     "production": ["default", "!{projectRoot}/**\/*.spec.*", "!{projectRoot}/**\/*.test.*",
 *                    "!{projectRoot}/**\/__tests__/**", "!{projectRoot}/test/**", "!{projectRoot}/**\/*.md"]
 *   },
 *   "targetDefaults": { "build": { "inputs": ["production", "^production"] } }
 *
 * What enters a project's hash (each part is kept apart so a change can be attributed):
 *   - ownSrc:      the project's production files (path + blob id), package.json excluded;
 *   - ownManifest: the project's package.json blob;
 *   - depSrc / depManifest: the same for every workspace project it depends on, transitively
 *                  (`^production` is transitive in Nx);
 *   - ext:         the external npm nodes of the project and of those dependencies, each hashed with
 *                  its transitive external dependencies, as resolved by the pnpm lockfile (Nx hashes
 *                  an external node by its lockfile version/integrity and the nodes it reaches);
 *   - root:        the root tsconfig Nx hashes for every project (`tsconfig.base.json`, else
 *                  `tsconfig.json`, parsed — Nx hashes its JSON, so reformatting it is not a change),
 *                  plus every other root-level `tsconfig*.json` (sharedGlobals: packages extend them).
 *
 * Projects: every directory with a tracked package.json matched by the workspace globs
 * (pnpm-workspace.yaml `packages`, else package.json `workspaces`); a file belongs to the deepest
 * project containing it (Nx's file map). Project dependencies (Nx's graph): workspace packages named
 * in package.json `dependencies`/`devDependencies`/`peerDependencies`/`optionalDependencies`, plus
 * bare imports found in the project's source files (static/dynamic import, export-from, require).
 * External dependencies: the same two sources for non-workspace names, resolved through the
 * project's lockfile importer (else the root importer); a name the lockfile does not resolve has no
 * external node in Nx's graph and adds nothing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { isBuiltin } from 'node:module';

export const PRODUCTION_EXCLUDES = ['**/*.spec.*', '**/*.test.*', '**/__tests__/**', 'test/**', '**/*.md'];

const h = (s) => createHash('sha256').update(s).digest('hex').slice(0, 32);

/** Is `rel` (a path relative to the project root) excluded from `production`? */
export function isExcludedFromProduction(rel) {
  const base = posix.basename(rel);
  if (/\.(spec|test)\./.test(base)) return true;
  if (rel.endsWith('.md')) return true;
  if (rel.startsWith('test/')) return true;
  if (rel.split('/').slice(0, -1).includes('__tests__')) return true;
  return false;
}

const SOURCE_RE = /\.(?:[mc]?[jt]s|[jt]sx)$/;
export function isSourceFile(path) {
  return SOURCE_RE.test(path) && !/\.d\.[mc]?ts$/.test(path);
}

/** pnpm-workspace.yaml `packages:` items. */
export function pnpmPatterns(text) {
  const out = [];
  let inPackages = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s#.*$/, '').replace(/^#.*$/, '');
    if (/^packages\s*:/.test(line)) {
      inPackages = true;
      continue;
    }
    if (inPackages) {
      const m = /^\s+-\s*['"]?([^'"]+?)['"]?\s*$/.exec(line);
      if (m) out.push(m[1]);
      else if (/^\S/.test(line)) inPackages = false;
    }
  }
  return out;
}

/** One glob segment → RegExp (`*` does not match a leading dot unless the pattern starts with one). */
function segmentRe(seg) {
  const body = seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(seg.startsWith('.') ? `^${body}$` : `^(?!\\.)${body}$`);
}
function globMatch(pattern, path) {
  const ps = pattern.replace(/^\.\//, '').replace(/\/$/, '').split('/');
  const xs = path.split('/');
  const rec = (i, j) => {
    if (i === ps.length) return j === xs.length;
    if (ps[i] === '**') {
      for (let k = j; k <= xs.length; k++) if (rec(i + 1, k) && xs.slice(j, k).every((x) => !x.startsWith('.'))) return true;
      return false;
    }
    return j < xs.length && segmentRe(ps[i]).test(xs[j]) && rec(i + 1, j + 1);
  };
  return rec(0, 0);
}

/** Workspace project roots from the tracked files and the workspace globs. */
export function projectRoots(files, patterns) {
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const roots = [];
  for (const path of files.keys()) {
    if (!path.endsWith('/package.json')) continue;
    const dir = posix.dirname(path);
    if (dir.split('/').includes('node_modules')) continue;
    if (include.some((p) => globMatch(p, dir)) && !exclude.some((p) => globMatch(p, dir))) roots.push(dir);
  }
  return roots.sort();
}

// ---------------------------------------------------------------- pnpm lockfile (v9, line parser)

const unq = (s) => s.trim().replace(/^'(.*)'$/, '$1').replace(/^"(.*)"$/, '$1');

/**
 * Parse the parts of a pnpm v9 lockfile the emulation needs: importers (path → name → version) and
 * snapshots (key → dependency name → version). Returns null for other lockfile versions.
 */
export function parsePnpmLock(text) {
  const importers = new Map();
  const snapshots = new Map();
  const version = /^lockfileVersion:\s*'?([^'\s]+)'?/m.exec(text)?.[1];
  if (!version || !version.startsWith('9')) return null;
  let section = '';
  let imp, depMap, snap, snapField;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    if (!line.startsWith(' ')) {
      section = line.replace(/:.*$/, '');
      continue;
    }
    const indent = line.length - line.trimStart().length;
    const body = line.trim();
    if (section === 'importers') {
      if (indent === 2) {
        imp = new Map();
        importers.set(unq(body.replace(/:$/, '')), imp);
      } else if (indent === 4) {
        depMap = /^(dependencies|devDependencies|optionalDependencies|peerDependencies):/.test(body) ? imp : undefined;
      } else if (indent === 6 && depMap) {
        snapField = unq(body.replace(/:$/, ''));
      } else if (indent === 8 && depMap && body.startsWith('version:')) {
        depMap.set(snapField, unq(body.slice('version:'.length)));
      }
    } else if (section === 'snapshots') {
      if (indent === 2) {
        const m = /^(.*?):\s*(\{\})?$/.exec(body);
        snap = new Map();
        snapshots.set(unq(m ? m[1] : body), snap);
        snapField = undefined;
      } else if (indent === 4) {
        snapField = /^(dependencies|optionalDependencies):/.test(body) ? body : undefined;
      } else if (indent === 6 && snapField && snap) {
        const i = body.lastIndexOf(': ');
        if (i > 0) snap.set(unq(body.slice(0, i)), unq(body.slice(i + 2)));
      }
    }
  }
  return { importers, snapshots, closureMemo: new Map() };
}

function snapshotKey(lock, name, version) {
  if (version.startsWith('link:') || version.startsWith('file:') || version.startsWith('workspace:')) return undefined;
  const k = `${name}@${version}`;
  if (lock.snapshots.has(k)) return k;
  if (lock.snapshots.has(version)) return version; // npm: aliases
  return k;
}

/** Hash of an external node and every external node it reaches (Nx's external dependency hash). */
function externalHash(lock, key) {
  const memo = lock.closureMemo;
  let v = memo.get(key);
  if (v) return v;
  const seen = new Set();
  const stack = [key];
  while (stack.length) {
    const k = stack.pop();
    if (seen.has(k)) continue;
    seen.add(k);
    for (const [n, ver] of lock.snapshots.get(k) ?? []) {
      const kk = snapshotKey(lock, n, ver);
      if (kk && !seen.has(kk)) stack.push(kk);
    }
  }
  v = h([...seen].sort().join('\n'));
  memo.set(key, v);
  return v;
}

// ---------------------------------------------------------------- imports

const IMPORT_RE =
  /(?:^|[^.\w$])(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"\n]+)['"]|(?:^|[^.\w$])import\s*['"]([^'"\n]+)['"]|(?:^|[^.\w$])import\s*\(\s*['"]([^'"\n]+)['"]\s*\)|(?:^|[^.\w$])require\s*\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/** Package names of the bare specifiers a source text imports. */
export function importedPackages(text) {
  const out = new Set();
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (!spec || spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || isBuiltin(spec)) continue;
    const parts = spec.split('/');
    const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
    if (name) out.add(name);
  }
  return [...out];
}

// ---------------------------------------------------------------- the hash

/**
 * The workspace's package globs: pnpm-workspace.yaml's `packages`, else package.json `workspaces`
 * (an array, or yarn's `{ packages }`).
 * @param {(path: string) => string | undefined} readText file content at this commit
 */
export function workspacePatterns(readText) {
  const pnpm = readText('pnpm-workspace.yaml');
  if (pnpm !== undefined) return pnpmPatterns(pnpm);
  try {
    const ws = JSON.parse(readText('package.json') ?? '{}').workspaces;
    return Array.isArray(ws) ? ws : Array.isArray(ws?.packages) ? ws.packages : [];
  } catch {
    return [];
  }
}

/**
 * Every regular file of a commit (no symbolic links, no submodules) → its blob id, from `git ls-tree`.
 * @param {string} gitDir a git directory (bare is fine)
 * @param {string} sha
 */
export function lsTree(gitDir, sha) {
  const out = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--full-tree', sha], { maxBuffer: 1 << 28 });
  const files = new Map();
  for (const entry of out.toString('utf8').split('\0')) {
    if (!entry) continue;
    const tab = entry.indexOf('\t');
    const [mode, type, oid] = entry.slice(0, tab).split(' ');
    if (type !== 'blob' || mode === '120000') continue;
    files.set(entry.slice(tab + 1), oid);
  }
  return files;
}

/**
 * @param {Map<string,string>} files path → blob id (the whole commit)
 * @param {(path: string) => string | undefined} readText file content at this commit
 * @param {{ imports: Map<string,string[]>, locks: Map<string, any> }} caches by blob id
 * @returns {Map<string, {name, root, hasBuild, parts: Record<string,string>, hash, wsDeps: string[]}>}
 */
export function nxHashes(files, readText, caches) {
  const patterns = workspacePatterns(readText);
  const roots = projectRoots(files, patterns);
  const rootSet = new Set(roots);
  const owned = new Map(roots.map((r) => [r, []]));
  for (const [path, blob] of files) {
    let dir = posix.dirname(path);
    while (dir !== '.' && !rootSet.has(dir)) dir = posix.dirname(dir);
    if (dir !== '.') owned.get(dir).push([path, blob]);
  }

  // Projects and their manifests.
  const projects = new Map();
  const byName = new Map();
  for (const root of roots) {
    let manifest = null;
    try {
      manifest = JSON.parse(readText(`${root}/package.json`) ?? 'null');
    } catch {
      manifest = null;
    }
    const name = typeof manifest?.name === 'string' && manifest.name ? manifest.name : root;
    const prod = owned.get(root).filter(([p]) => !isExcludedFromProduction(p.slice(root.length + 1)));
    const hasTsconfig = ['tsconfig.lib.json', 'tsconfig.build.json', 'tsconfig.json'].some((c) => files.has(`${root}/${c}`));
    const hasTs = prod.some(([p]) => /\.(?:[mc]?ts|tsx)$/.test(p) && !/\.d\.[mc]?ts$/.test(p));
    const p = { name, root, manifest, prod, hasBuild: !!manifest && hasTsconfig && hasTs };
    projects.set(root, p);
    if (!byName.has(name)) byName.set(name, p);
  }

  // Lockfile.
  const lockBlob = files.get('pnpm-lock.yaml');
  let lock = null;
  if (lockBlob) {
    if (!caches.locks.has(lockBlob)) {
      caches.locks.clear(); // consecutive commits share blobs; keep one
      caches.locks.set(lockBlob, parsePnpmLock(readText('pnpm-lock.yaml') ?? ''));
    }
    lock = caches.locks.get(lockBlob);
  }

  // Root config.
  const rootTs = files.has('tsconfig.base.json') ? 'tsconfig.base.json' : files.has('tsconfig.json') ? 'tsconfig.json' : undefined;
  const rootParts = [];
  if (rootTs) rootParts.push(`${rootTs}:${normalisedJson(readText(rootTs) ?? '')}`);
  for (const [path, blob] of files) if (!path.includes('/') && /^tsconfig.*\.json$/.test(path) && path !== rootTs) rootParts.push(`${path}:${blob}`);
  const rootHash = h(rootParts.sort().join('\n'));

  // Direct edges.
  for (const p of projects.values()) {
    const m = p.manifest ?? {};
    const names = new Set();
    for (const f of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) for (const n of Object.keys(m[f] ?? {})) names.add(n);
    for (const [path, blob] of p.prod) {
      if (!isSourceFile(path)) continue;
      let imp = caches.imports.get(blob);
      if (!imp) caches.imports.set(blob, (imp = importedPackages(readText(path) ?? '')));
      for (const n of imp) names.add(n);
    }
    p.wsDeps = [...names].filter((n) => byName.has(n) && n !== p.name).sort();
    const ext = [];
    if (lock) {
      const imp = lock.importers.get(p.root) ?? new Map();
      const rootImp = lock.importers.get('.') ?? new Map();
      for (const n of [...names].sort()) {
        if (byName.has(n)) continue;
        const ver = imp.get(n) ?? rootImp.get(n);
        if (!ver) continue;
        const key = snapshotKey(lock, n, ver);
        if (key) ext.push(`${key}:${externalHash(lock, key)}`);
      }
    }
    p.ownSrc = h(p.prod.filter(([path]) => path !== `${p.root}/package.json`).map(([a, b]) => `${a}:${b}`).join('\n'));
    p.ownManifest = files.get(`${p.root}/package.json`) ?? '';
    p.ownExt = ext;
  }

  const out = new Map();
  for (const p of projects.values()) {
    const deps = [];
    const seen = new Set([p.name]);
    const stack = [...p.wsDeps];
    while (stack.length) {
      const n = stack.pop();
      if (seen.has(n)) continue;
      seen.add(n);
      const d = byName.get(n);
      deps.push(d);
      stack.push(...d.wsDeps);
    }
    deps.sort((a, b) => (a.root < b.root ? -1 : 1));
    const parts = {
      ownSrc: p.ownSrc,
      ownManifest: p.ownManifest,
      depSrc: h(deps.map((d) => `${d.root}:${d.ownSrc}`).join('\n')),
      depManifest: h(deps.map((d) => `${d.root}:${d.ownManifest}`).join('\n')),
      ext: h([...new Set([...p.ownExt, ...deps.flatMap((d) => d.ownExt)])].sort().join('\n')),
      root: rootHash,
    };
    out.set(p.root, {
      name: p.name,
      root: p.root,
      hasBuild: p.hasBuild,
      parts,
      hash: h(JSON.stringify(parts)),
      wsDeps: deps.map((d) => d.root),
    });
  }
  return out;
}

/** JSON with comments/trailing commas → canonical text (what Nx hashes is the parsed object). */
function normalisedJson(text) {
  try {
    const stripped = text
      .replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m, s) => s ?? '')
      .replace(/,(\s*[}\]])/g, '$1');
    return JSON.stringify(JSON.parse(stripped));
  } catch {
    return `raw:${h(text)}`;
  }
}
