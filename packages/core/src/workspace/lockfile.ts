/**
 * Lockfile-resolved versions of external packages (npm package-lock v2/v3, pnpm-lock.yaml, yarn.lock),
 * falling back to the installed package.json. A key holds the version a build really used, never a
 * range from a manifest.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';

export interface Lockfile {
  kind: 'npm' | 'pnpm' | 'yarn' | 'installed';
  /** Resolved version of `name` as seen from a project (relative root), or undefined if unknown. */
  versionOf(name: string, projectRoot: string): Promise<string | undefined>;
  /** Names of hoisted `@types/*` packages (ambient types every program without `types` includes). */
  ambientTypes(): string[];
}

export async function readLockfile(workspaceRoot: string): Promise<Lockfile> {
  const npm = await readText(join(workspaceRoot, 'package-lock.json'));
  if (npm !== undefined) {
    try {
      return npmLockfile(JSON.parse(npm) as { packages?: Record<string, { version?: string; link?: boolean }> }, workspaceRoot);
    } catch {
      // fall through to the installed tree
    }
  }
  const pnpm = await readText(join(workspaceRoot, 'pnpm-lock.yaml'));
  if (pnpm !== undefined) return pnpmLockfile(pnpm, workspaceRoot);
  const yarn = await readText(join(workspaceRoot, 'yarn.lock'));
  if (yarn !== undefined) return yarnLockfile(yarn, workspaceRoot);
  return installedOnly(workspaceRoot);
}

function npmLockfile(lock: { packages?: Record<string, { version?: string; link?: boolean }> }, root: string): Lockfile {
  const packages = lock.packages ?? {};
  return {
    kind: 'npm',
    async versionOf(name, projectRoot) {
      for (const base of projectRoot && projectRoot !== '.' ? [posix.join(projectRoot, 'node_modules', name), `node_modules/${name}`] : [`node_modules/${name}`]) {
        const entry = packages[base];
        if (entry?.link) return 'workspace';
        if (entry?.version) return entry.version;
      }
      return installedVersion(root, name, projectRoot);
    },
    ambientTypes: () =>
      Object.keys(packages)
        .filter((k) => /^node_modules\/@types\/[^/]+$/.test(k))
        .map((k) => k.slice('node_modules/'.length))
        .sort(),
  };
}

function pnpmLockfile(text: string, root: string): Lockfile {
  // importers:\n  <root>:\n    dependencies:\n      <name>:\n        specifier: x\n        version: 1.2.3(peer)
  const importers = new Map<string, Map<string, string>>();
  let section: string | undefined;
  let importer: string | undefined;
  let depName: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (/^\S/.test(raw)) {
      section = raw.replace(/:.*$/, '');
      importer = undefined;
      continue;
    }
    if (section !== 'importers') continue;
    let m = /^ {2}(\S[^:]*):\s*$/.exec(raw);
    if (m) {
      importer = unquote(m[1]!);
      importers.set(importer, new Map());
      continue;
    }
    m = /^ {6}(\S[^:]*):\s*$/.exec(raw);
    if (m) {
      depName = unquote(m[1]!);
      continue;
    }
    m = /^ {8}version:\s*(.+)$/.exec(raw);
    if (m && importer !== undefined && depName) importers.get(importer)!.set(depName, unquote(m[1]!.trim()));
  }
  const all = [...importers.values()];
  return {
    kind: 'pnpm',
    async versionOf(name, projectRoot) {
      const v = importers.get(projectRoot === '' ? '.' : projectRoot)?.get(name) ?? importers.get('.')?.get(name);
      // `15.3.2(@babel/core@7.26.9)(…)`: the peer suffix names other packages' versions, each keyed
      // on its own where a build reads it; the package's own version is what its types are.
      if (v) return v.startsWith('link:') ? 'workspace' : v.replace(/\(.*$/, '');
      return installedVersion(root, name, projectRoot);
    },
    ambientTypes: () => [...new Set(all.flatMap((m) => [...m.keys()].filter((k) => k.startsWith('@types/'))))].sort(),
  };
}

function yarnLockfile(text: string, root: string): Lockfile {
  const versions = new Map<string, Set<string>>();
  let current: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    if (/^\S/.test(raw) && raw.endsWith(':') && !raw.startsWith('#')) {
      current = raw
        .slice(0, -1)
        .split(/,\s*/)
        .map((s) => unquote(s.trim()))
        .map((spec) => spec.slice(0, spec.lastIndexOf('@') > 0 ? spec.lastIndexOf('@') : spec.length));
      continue;
    }
    const m = /^\s+version:?\s+"?([^"\s]+)"?/.exec(raw);
    if (m) for (const name of current) (versions.get(name) ?? versions.set(name, new Set()).get(name)!).add(m[1]!);
  }
  return {
    kind: 'yarn',
    async versionOf(name, projectRoot) {
      const v = versions.get(name);
      if (v?.size) return [...v].sort().join('|'); // several resolutions: all of them, conservatively
      return installedVersion(root, name, projectRoot);
    },
    ambientTypes: () => [...versions.keys()].filter((k) => k.startsWith('@types/')).sort(),
  };
}

function installedOnly(root: string): Lockfile {
  return { kind: 'installed', versionOf: (name, projectRoot) => installedVersion(root, name, projectRoot), ambientTypes: () => [] };
}

async function installedVersion(root: string, name: string, projectRoot: string): Promise<string | undefined> {
  for (const base of [join(root, projectRoot, 'node_modules', name), join(root, 'node_modules', name)]) {
    const text = await readText(join(base, 'package.json'));
    if (text === undefined) continue;
    try {
      const v = (JSON.parse(text) as { version?: unknown }).version;
      if (typeof v === 'string') return v;
    } catch {
      // an unreadable manifest is an unknown version
    }
  }
  return undefined;
}

function unquote(s: string): string {
  return s.replace(/^['"]|['"]$/g, '');
}

async function readText(p: string): Promise<string | undefined> {
  try {
    return await readFile(p, 'utf8');
  } catch {
    return undefined;
  }
}
