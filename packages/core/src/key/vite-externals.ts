/**
 * Which workspace dependencies a `vite build` keeps external, asked of vite itself: the project's vite
 * config resolved as the build resolves it (`resolveConfig(…, 'build', 'production')`, plugins' `config`
 * hooks included — vite-plugin-externalize-deps, wrappers such as @tanstack/vite-config), then its
 * `build.rollupOptions.external` asked about each name and a subpath of it. Only a dependency the
 * config externalises by name *and* by subpath counts as external; anything else (a `resolveId` that
 * externalises, an SSR build, a command with flags, a config that fails to load) gives no verdict, and
 * the key keeps the dependency's bodies (widening, never narrowing).
 *
 * The config is user code: it runs in a child process whose working directory is the project (as
 * when the script runs: plugins read `process.cwd()/package.json`), never in the caller. Resolving a
 * config costs seconds, so the verdict is cached under node_modules/.cache/kiln, keyed by `state` (the
 * caller's digest of vite's version, the externals' lockfile closures, the manifest and environment)
 * plus the content of every file the config loaded (`configFileDependencies`, re-hashed on each use).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { sha256Hex } from '../digest/hash.js';
import { VITE_VERDICT_FORMAT } from '../version.js';

/** The probe name a subpath import is asked with. */
const SUBPATH = '__kiln_subpath__';
const TIMEOUT_MS = 60_000;

export interface ViteVerdict {
  /** Names vite keeps external (by name and by subpath). */
  external: string[];
  /** Why there is no verdict, when there is none. */
  none?: string;
}

interface CacheEntry {
  state: string;
  names: string[];
  /** Workspace-relative file → content hash, of every file the config loaded. */
  deps: Record<string, string>;
  verdict: ViteVerdict;
}

/** Is every `vite` invocation of the command a plain `vite build` (no mode, config or other flags)? */
export function plainViteBuild(command: string): boolean {
  const segments = command.split(/&&|\|\||;/).map((s) => s.trim().split(/\s+/));
  const vite = segments.filter((w) => w[0] === 'vite' || w[0]?.endsWith('/vite'));
  return vite.length > 0 && vite.every((w) => w.length === 2 && w[1] === 'build');
}

const CHILD = `
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');
(async () => {
  const { dir, names, subpath } = JSON.parse(process.argv[1]);
  const req = createRequire(dir + '/package.json');
  const vite = await import(pathToFileURL(req.resolve('vite')).href);
  const cfg = await vite.resolveConfig({ root: dir, logLevel: 'silent' }, 'build', 'production', 'production');
  const ext = cfg.build && cfg.build.rollupOptions ? cfg.build.rollupOptions.external : undefined;
  const test = (id) => {
    if (typeof ext === 'function') return !!ext(id, undefined, false);
    const list = ext === undefined ? [] : Array.isArray(ext) ? ext : [ext];
    return list.some((e) => (typeof e === 'string' ? e === id : e instanceof RegExp ? e.test(id) : false));
  };
  const out = { deps: cfg.configFileDependencies || [], ssr: !!(cfg.build && cfg.build.ssr), external: names.filter((n) => test(n) && test(n + '/' + subpath)) };
  process.stdout.write('\\u0000KILN' + JSON.stringify(out));
})().catch((e) => { process.stdout.write('\\u0000KILN' + JSON.stringify({ error: String((e && e.message) || e).slice(0, 300) })); });
`;

function runChild(projectDir: string, names: string[]): Promise<{ deps?: string[]; ssr?: boolean; external?: string[]; error?: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      ['-e', CHILD, JSON.stringify({ dir: projectDir, names, subpath: SUBPATH })],
      { cwd: projectDir, timeout: TIMEOUT_MS, maxBuffer: 1 << 24, env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'production' } },
      (err, stdout) => {
        const at = String(stdout ?? '').lastIndexOf('\u0000KILN');
        if (at < 0) return resolvePromise({ error: err ? String(err.message).split('\n')[0]!.slice(0, 300) : 'no answer' });
        try {
          resolvePromise(JSON.parse(String(stdout).slice(at + 5)));
        } catch {
          resolvePromise({ error: 'unreadable answer' });
        }
      },
    );
  });
}

const hashOf = (abs: string): string => {
  try {
    return sha256Hex(readFileSync(abs));
  } catch {
    return 'missing';
  }
};

/**
 * The vite verdict for a project, from the cache when `state`, the names asked and every file the
 * config loaded are unchanged, else from vite (and cached).
 */
export async function viteExternals(workspaceRoot: string, projectRoot: string, names: readonly string[], state: string): Promise<ViteVerdict> {
  const sorted = [...new Set(names)].sort();
  if (!sorted.length) return { external: [] };
  const cacheFile = join(workspaceRoot, 'node_modules', '.cache', 'kiln', 'vite-externals.json');
  let cache: { format: number; projects: Record<string, CacheEntry> } = { format: VITE_VERDICT_FORMAT, projects: {} };
  try {
    const read = JSON.parse(await readFile(cacheFile, 'utf8'));
    if (read?.format === VITE_VERDICT_FORMAT && read.projects && typeof read.projects === 'object') cache = read;
  } catch {
    // no cache yet, or unreadable: ask vite
  }
  const hit = cache.projects[projectRoot];
  if (
    hit &&
    hit.state === state &&
    JSON.stringify(hit.names) === JSON.stringify(sorted) &&
    Object.entries(hit.deps).every(([f, h]) => hashOf(join(workspaceRoot, f)) === h)
  ) {
    return hit.verdict;
  }
  const projectDir = join(workspaceRoot, projectRoot);
  const answer = await runChild(projectDir, sorted);
  let verdict: ViteVerdict;
  const deps: Record<string, string> = {};
  if (answer.error || !answer.deps || !answer.external) verdict = { external: [], none: `vite's config could not be resolved: ${answer.error ?? 'no answer'}` };
  else if (answer.ssr) verdict = { external: [], none: 'an SSR build (ssr.noExternal decides)' };
  else {
    verdict = { external: answer.external.filter((n) => sorted.includes(n)).sort() };
    for (const f of answer.deps) {
      const abs = isAbsolute(f) ? f : join(projectDir, f);
      const rel = relative(workspaceRoot, abs).split(sep).join('/');
      // A file outside the workspace (a global config): no cache, ask again next time.
      if (rel.startsWith('../')) return verdict;
      deps[rel] = hashOf(abs);
    }
  }
  if (verdict.none) return verdict; // not cached: a failure may be transient
  cache.projects[projectRoot] = { state, names: sorted, deps, verdict };
  try {
    await mkdir(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify(cache));
    await rename(tmp, cacheFile);
  } catch {
    // a cache that cannot be written costs the next computation time, nothing else
  }
  return verdict;
}
