/**
 * What the lockfile says a build reads of each external package (npm package-lock v2/v3, pnpm-lock.yaml
 * v9 and v6, yarn.lock classic and berry), falling back to the installed package.json. A key holds the
 * version a build really used, never a range from a manifest — and, because a build observes more of an
 * external than the package itself (`@types/express` re-exports `@types/express-serve-static-core`,
 * `@types/react` uses `csstype`, a library's `.d.ts` imports its dependencies' types), the package's
 * **resolved dependency closure**: every package instance reachable from the instance the project
 * resolves, through `dependencies`, `optionalDependencies` and `peerDependencies`, as the lockfile
 * resolves them. A lockfile refresh that moves a transitive package within its range moves the closure's
 * digest although the imported package's version stays.
 *
 * How each format resolves an edge (the rule the package manager itself installs by):
 *   - npm: `packages` is keyed by install path; a dependency of the package at path P is the first of
 *     `P/node_modules/d`, then the same up P's directories (skipping `node_modules` folders themselves),
 *     as Node resolves it. Peers are installed in the tree and resolve the same way.
 *   - pnpm: an importer's `version` and a snapshot's `dependencies`/`optionalDependencies` values name a
 *     snapshot (`name@version(peer@v)…`): the peer suffix is the instance's peer resolution, and the
 *     resolved peers are listed among its dependencies. v6 keys `packages` by `/name@version(…)`.
 *   - yarn: an entry is keyed by the descriptors (`name@range`) it satisfies; a dependency `d: range`
 *     is the entry listing `d@range` (berry: also `d@npm:range`). Berry does not record how a peer is
 *     resolved (virtual instances), so a peer counts as every entry of that name; classic yarn.lock
 *     does not list peers at all.
 *
 * Invariants:
 *   - deterministic and path-free: closures are sorted sets of `name@version` labels; a digest covers
 *     each reached instance, what identifies its content beyond the version (a git, tarball or file
 *     resolution with its integrity; nothing for an immutable registry version) and its resolved
 *     edges, as sorted lines;
 *   - terminating: a closure is a breadth-first walk with a visited set — cycles are ordinary in
 *     package graphs and simply close — bounded by the lockfile's size;
 *   - erring on the side of moving: a dependency the lockfile does not resolve is recorded as
 *     `name@missing`; what cannot be resolved exactly (a malformed lockfile, an entry listed twice, a
 *     format version this reader does not know) mixes the whole lockfile's digest into every closure,
 *     with a coded diagnostic. Workspace links (`link:`, `workspace:`) are not externals: a closure
 *     records them by name and does not enter them (their own keys cover them);
 *   - cheap: the YAML parser (js-yaml, what pnpm and yarn read their own lockfiles with; several times
 *     faster than `yaml` on multi-MB lockfiles) and the classic yarn.lock parser are loaded only for the
 *     lockfile present; pnpm's `packages` metadata (v9) is not parsed; closures are memoised per
 *     resolved instance.
 */
import { readFile } from 'node:fs/promises';
import { worktree, type FileTree } from './tree.js';
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { digestParts, sha256Hex } from '../digest/hash.js';
import type { parse as parseYarnV1 } from '@yarnpkg/lockfile';

export interface ExternalClosure {
  /**
   * Every package instance the external's resolved instance reaches (itself excluded), as
   * `name@version` — pnpm: its snapshot id, peer suffix included; `name@missing` for a dependency the
   * lockfile does not resolve, `name@workspace` for a workspace link — sorted, unique.
   */
  packages: string[];
  /** Digest of the reached graph (instances, their content identity, their resolved edges). */
  digest: string;
  /** Why the digest also covers the whole lockfile (it could not be resolved exactly). */
  widened?: string;
}

export interface Lockfile {
  kind: 'npm' | 'pnpm' | 'yarn' | 'installed';
  /** Resolved version of `name` as seen from a project (relative root), or undefined if unknown. */
  versionOf(name: string, projectRoot: string): Promise<string | undefined>;
  /**
   * The resolved dependency closure of external `name` as seen from a project (relative root), or
   * undefined where the lockfile does not resolve the package (the version's fallback then stands
   * alone) or resolves it to a workspace link.
   */
  closureOf(name: string, projectRoot: string): Promise<ExternalClosure | undefined>;
  /** Names of hoisted `@types/*` packages (ambient types every program without `types` includes). */
  ambientTypes(): string[];
  /** What reading the lockfile found wrong (malformed, duplicate entries, unknown format version). */
  readonly diagnostics: Diagnostic[];
}

/** The workspace's lockfile, read from `tree` (workspace/tree.ts); installed packages are always read from disk. */
export async function readLockfile(workspaceRoot: string, tree: FileTree = worktree): Promise<Lockfile> {
  const npm = await readText(tree, join(workspaceRoot, 'package-lock.json'));
  if (npm !== undefined) return npmLockfile(npm, workspaceRoot, tree);
  const pnpm = await readText(tree, join(workspaceRoot, 'pnpm-lock.yaml'));
  if (pnpm !== undefined) return pnpmLockfile(pnpm, workspaceRoot, tree);
  const yarn = await readText(tree, join(workspaceRoot, 'yarn.lock'));
  if (yarn !== undefined) return yarnLockfile(yarn, workspaceRoot, tree);
  return installedOnly(workspaceRoot, tree);
}

/** What a key records of one external package: the version it resolves to and, where known, its closure. */
export interface ExternalKeyPart {
  version: string;
  closure?: ExternalClosure;
}

/**
 * The version `name` resolves to from a project and the dependency closure of that instance. A build
 * that imports `name` also reads its DefinitelyTyped package (`react` → `@types/react`, `@scope/x` →
 * `@types/scope__x`) when one is installed, whatever the tsconfig's `types` says: the compiler resolves
 * an import's types there. So that package, at its version, and its closure are part of `name`'s.
 */
export async function externalKeyPart(lockfile: Lockfile, name: string, projectRoot: string): Promise<ExternalKeyPart> {
  const version = (await lockfile.versionOf(name, projectRoot)) ?? 'unknown';
  if (version === 'workspace') return { version };
  const closure = await lockfile.closureOf(name, projectRoot);
  // The twin only where the lockfile (or, without one, the installed tree) has it: no installed-tree
  // lookups for the many packages without one.
  const twin = typesPackageOf(name);
  const twinClosure = twin === undefined ? undefined : await lockfile.closureOf(twin, projectRoot);
  const twinVersion = twinClosure === undefined ? undefined : await lockfile.versionOf(twin!, projectRoot);
  if (twin === undefined || twinVersion === undefined || twinVersion === 'workspace') return closure ? { version, closure } : { version };
  const widened = [closure?.widened, twinClosure?.widened].filter((w): w is string => !!w);
  return {
    version,
    closure: {
      packages: [...new Set([...(closure?.packages ?? []), `${twin}@${twinVersion}`, ...(twinClosure?.packages ?? [])])].sort(),
      digest: digestParts('kiln-external-closure-typed/1', [closure?.digest ?? 'none', `${twin}@${twinVersion}`, twinClosure?.digest ?? 'none']),
      ...(widened.length ? { widened: widened[0]! } : {}),
    },
  };
}

/** `@types/x` for `x`, `@types/scope__x` for `@scope/x`; none for a `@types` package itself. */
export function typesPackageOf(name: string): string | undefined {
  if (name.startsWith('@types/')) return undefined;
  return `@types/${name.startsWith('@') ? name.slice(1).replace('/', '__') : name}`;
}

/** One string for a key part (`1.2.3` or `1.2.3+closure:<digest>`): what surfaces and tool keys fold in. */
export async function externalLabel(lockfile: Lockfile, name: string, projectRoot: string): Promise<string> {
  const part = await externalKeyPart(lockfile, name, projectRoot);
  return part.closure ? `${part.version}+closure:${part.closure.digest}` : part.version;
}

// --- the closure walk, common to every format --------------------------------------------------

/** A resolved edge: an instance to walk into (`id`), or a terminal label (missing, workspace link). */
type Child = { id: string } | { label: string };

interface Graph {
  /** `name@version` of an instance (pnpm: its snapshot id). */
  label(id: string): string;
  /**
   * What identifies the instance's content beyond its label: a git, tarball or file resolution and its
   * integrity. Nothing for a registry package, whose `name@version` is immutable — so the same
   * instances digest alike whatever lockfile lists them (npm and pnpm agree) and a lockfile that only
   * rewrites hashes (sha1 → sha512) moves no key.
   */
  material(id: string): string;
  children(id: string): Child[];
}

/**
 * Breadth-first from the roots; every reached instance contributes a line (label, material, sorted
 * child labels), so the digest moves when an instance, its content identity or one of its resolutions
 * moves. `widen` (the whole lockfile's digest) is mixed in when the lockfile is not exact.
 */
function walk(graph: Graph, roots: string[], widen: { digest: string; reason: string } | undefined): ExternalClosure {
  const seen = new Set<string>(roots);
  const queue = [...roots];
  const lines: string[] = [];
  const labels = new Set<string>();
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    const kids: string[] = [];
    for (const c of graph.children(id)) {
      if ('id' in c) {
        kids.push(graph.label(c.id));
        if (!seen.has(c.id)) {
          seen.add(c.id);
          queue.push(c.id);
        }
      } else {
        kids.push(c.label);
        labels.add(c.label);
      }
    }
    const label = graph.label(id);
    labels.add(label);
    lines.push(`${label}\u0001${graph.material(id)}\u0001${[...new Set(kids)].sort().join('\u0001')}`);
  }
  // The roots themselves are the version the key names already (the union fallback has several).
  if (roots.length === 1) labels.delete(graph.label(roots[0]!));
  lines.sort();
  if (widen) lines.push(`lockfile\u0001${widen.digest}`);
  return { packages: [...labels].sort(), digest: digestParts('kiln-external-closure/1', lines), ...(widen ? { widened: widen.reason } : {}) };
}

/** Memoised closures per resolved root set (projects that resolve the same instance share it). */
function closureMemo(graph: Graph, widen: () => { digest: string; reason: string } | undefined): (roots: string[]) => ExternalClosure {
  const memo = new Map<string, ExternalClosure>();
  return (roots) => {
    const sorted = [...new Set(roots)].sort();
    const k = sorted.join('\u0000');
    let c = memo.get(k);
    if (!c) memo.set(k, (c = walk(graph, sorted, widen())));
    return c;
  };
}

/** A closure that is only the whole lockfile: it could not be resolved at all. */
function wholeLockfile(text: string, reason: string): ExternalClosure {
  return { packages: [], digest: digestParts('kiln-external-closure/1', [`lockfile\u0001${sha256Hex(text)}`]), widened: reason };
}

// --- npm ------------------------------------------------------------------------------------------

interface NpmEntry {
  name?: string;
  version?: string;
  link?: boolean;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

function npmLockfile(text: string, root: string, tree: FileTree): Lockfile {
  const diagnostics: Diagnostic[] = [];
  const file = 'package-lock.json';
  let lock: unknown;
  try {
    lock = JSON.parse(text);
  } catch (e) {
    diagnostics.push(diagnostic('KILN_LOCKFILE_INVALID', `${file} is not valid JSON (${(e as Error).message}); versions come from the installed packages and every external's key part covers the whole lockfile`, { file, producer: 'key' }));
  }
  const rawPackages = isRecord(lock) ? lock.packages : undefined;
  let broken: string | undefined;
  if (lock !== undefined && !isRecord(rawPackages)) {
    const version = isRecord(lock) ? lock.lockfileVersion : undefined;
    broken = `lockfileVersion ${JSON.stringify(version)} has no "packages" map`;
    diagnostics.push(
      diagnostic('KILN_LOCKFILE_UNSUPPORTED', `${file}: ${broken} (npm 7 and later write lockfileVersion 2 or 3); versions come from the installed packages and every external's key part covers the whole lockfile`, { file, producer: 'key' }),
    );
  }
  if (lock === undefined) broken = 'the lockfile is not valid JSON';
  const packages = new Map<string, NpmEntry>();
  for (const [k, v] of Object.entries(isRecord(rawPackages) ? rawPackages : {})) if (isRecord(v)) packages.set(k, v as NpmEntry);
  // JSON.parse keeps the last of two equal keys silently; npm writes one entry per line at 4 spaces.
  const dupes = duplicateNpmPaths(text);
  let widen: { digest: string; reason: string } | undefined;
  if (dupes.length) {
    const reason = `${dupes.length} install path${dupes.length > 1 ? 's' : ''} listed twice (${dupes.slice(0, 3).join(', ')})`;
    diagnostics.push(diagnostic('KILN_LOCKFILE_DUPLICATE', `${file}: ${reason}; which entry npm installs is ambiguous, so every external's key part also covers the whole lockfile`, { file, producer: 'key' }));
    widen = { digest: sha256Hex(text), reason };
  }

  /** The install path `name` resolves to from the package (or project folder) at `from`. */
  const resolve = (from: string, name: string): string | undefined => {
    let dir = from === '.' ? '' : from;
    for (;;) {
      if (posix.basename(dir) !== 'node_modules') {
        const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
        if (packages.has(candidate)) return candidate;
      }
      if (!dir) return undefined;
      const up = posix.dirname(dir);
      dir = up === '.' ? '' : up;
    }
  };
  const nameAt = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const graph: Graph = {
    label(path) {
      const e = packages.get(path)!;
      const name = nameAt(path);
      // An alias (`"x": "npm:y@^1"`) installs y under x: both names are what it is.
      return `${name}@${e.name && e.name !== name ? `npm:${e.name}@` : ''}${e.version ?? 'unknown'}`;
    },
    material(path) {
      const e = packages.get(path)!;
      return contentMaterial(e.version, e.resolved, e.integrity);
    },
    children(path) {
      const e = packages.get(path)!;
      const out: Child[] = [];
      const optional = new Set([...Object.keys(record(e.optionalDependencies)), ...Object.entries(record(e.peerDependenciesMeta)).filter(([, m]) => isRecord(m) && m.optional).map(([n]) => n)]);
      for (const d of new Set([...Object.keys(record(e.dependencies)), ...Object.keys(record(e.optionalDependencies)), ...Object.keys(record(e.peerDependencies))])) {
        const at = resolve(path, d);
        if (at === undefined) {
          if (!optional.has(d)) out.push({ label: `${d}@missing` });
        } else if (packages.get(at)!.link) out.push({ label: `${d}@workspace` });
        else out.push({ id: at });
      }
      return out;
    },
  };
  const closure = closureMemo(graph, () => widen);
  return {
    kind: 'npm',
    diagnostics,
    async versionOf(name, projectRoot) {
      const at = resolve(projectRoot, name);
      const entry = at === undefined ? undefined : packages.get(at);
      if (entry?.link) return 'workspace';
      if (entry?.version) return String(entry.version);
      return installedVersion(tree, root, name, projectRoot);
    },
    async closureOf(name, projectRoot) {
      if (broken !== undefined) return wholeLockfile(text, broken);
      const at = resolve(projectRoot, name);
      if (at === undefined || packages.get(at)!.link) return undefined;
      return closure([at]);
    },
    ambientTypes: () =>
      [...packages.keys()]
        .filter((k) => /^node_modules\/@types\/[^/]+$/.test(k))
        .map((k) => k.slice('node_modules/'.length))
        .sort(),
  };
}

/** Keys of the `packages` map that occur twice (one per line, as npm writes it). */
function duplicateNpmPaths(text: string): string[] {
  const start = text.search(/^ {2}"packages": \{/m);
  if (start === -1) return [];
  const end = text.slice(start).search(/^ {2}\}/m);
  const section = end === -1 ? text.slice(start) : text.slice(start, start + end);
  const seen = new Set<string>();
  const dupes = new Set<string>();
  for (const m of section.matchAll(/^ {4}"((?:[^"\\]|\\.)*)": \{/gm)) {
    if (seen.has(m[1]!)) dupes.add(m[1]!);
    seen.add(m[1]!);
  }
  return [...dupes].sort();
}

// --- pnpm -----------------------------------------------------------------------------------------

type YamlModule = typeof import('js-yaml');

/** Load YAML leniently about duplicate keys (reporting them): js-yaml throws on the first one. */
function loadYaml(yaml: YamlModule, text: string): { doc: unknown; duplicate?: string } {
  try {
    return { doc: yaml.load(text, { schema: yaml.FAILSAFE_SCHEMA }) };
  } catch (e) {
    if (!/duplicated mapping key/.test(String((e as Error).message))) throw e;
    const mark = (e as { mark?: { line?: number } }).mark;
    return { doc: yaml.load(text, { schema: yaml.FAILSAFE_SCHEMA, json: true }), duplicate: `a key listed twice${mark?.line !== undefined ? ` (line ${mark.line + 1})` : ''}` };
  }
}

/**
 * pnpm 11 may write two YAML documents (package-manager metadata, then the workspace lockfile): the
 * workspace lockfile is the second, as pnpm itself reads it.
 */
function mainPnpmDocument(text: string): string {
  const t = text.replace(/\r\n/g, '\n');
  if (!t.startsWith('---\n')) return t;
  const sep = t.indexOf('\n---\n', 4);
  return sep === -1 ? '' : t.slice(sep + 5);
}

/**
 * The top-level sections a closure needs, each parsed on its own: pnpm's `packages` section (v9:
 * resolutions, engines, peer ranges — nothing about how an instance resolved) is a third of a
 * lockfile and is skipped. A top-level key of a block mapping is a line starting in column 0.
 */
function pnpmSections(text: string, wanted: string[]): string {
  const heads = [...text.matchAll(/^([A-Za-z][\w-]*):/gm)].map((m) => ({ key: m[1]!, at: m.index! }));
  if (!heads.length) return text;
  const out: string[] = [];
  for (let i = 0; i < heads.length; i++) if (wanted.includes(heads[i]!.key)) out.push(text.slice(heads[i]!.at, heads[i + 1]?.at ?? text.length));
  return out.join('\n');
}

interface PnpmDeps {
  [name: string]: unknown;
}

async function pnpmLockfile(raw: string, root: string, tree: FileTree): Promise<Lockfile> {
  const diagnostics: Diagnostic[] = [];
  const file = 'pnpm-lock.yaml';
  const text = mainPnpmDocument(raw);
  const yaml = await import('js-yaml');
  const versionLine = /^lockfileVersion:\s*['"]?([^'"\s]+)/m.exec(text)?.[1];
  const major = versionLine === undefined ? undefined : Number.parseInt(versionLine, 10);
  const v9 = major !== undefined && major >= 9;
  let doc: Record<string, unknown> = {};
  let broken: string | undefined;
  let widen: { digest: string; reason: string } | undefined;
  try {
    const loaded = loadYaml(yaml, pnpmSections(text, ['lockfileVersion', 'importers', 'dependencies', 'devDependencies', 'optionalDependencies', v9 ? 'snapshots' : 'packages']));
    if (loaded.doc !== undefined && !isRecord(loaded.doc)) throw new Error('the document is not a mapping');
    doc = (loaded.doc as Record<string, unknown> | undefined) ?? {};
    if (loaded.duplicate) {
      diagnostics.push(diagnostic('KILN_LOCKFILE_DUPLICATE', `${file}: ${loaded.duplicate}; which entry pnpm installs is ambiguous, so every external's key part also covers the whole lockfile`, { file, producer: 'key' }));
      widen = { digest: sha256Hex(raw), reason: loaded.duplicate };
    }
  } catch (e) {
    broken = `the lockfile is not valid YAML (${String((e as Error).message).split('\n')[0]})`;
    diagnostics.push(diagnostic('KILN_LOCKFILE_INVALID', `${file}: ${broken}; versions come from the installed packages and every external's key part covers the whole lockfile`, { file, producer: 'key' }));
  }
  if (broken === undefined && major !== 6 && !v9) {
    broken = `lockfileVersion ${versionLine ?? '(none)'} is not one kiln resolves (6.x, 9.x)`;
    diagnostics.push(diagnostic('KILN_LOCKFILE_UNSUPPORTED', `${file}: ${broken}; every external's key part covers the whole lockfile`, { file, producer: 'key' }));
  }

  // importer → dependency name → the version reference (`1.2.3(peer@1)`, `link:../x`, `/alias@1`).
  const importers = new Map<string, Map<string, string>>();
  const addImporter = (id: string, section: Record<string, unknown>) => {
    const deps = new Map<string, string>();
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
      for (const [name, v] of Object.entries(record(section[field] as PnpmDeps | undefined))) {
        // v6/v9: `{ specifier, version }`; v5: the version itself.
        const ref = isRecord(v) ? v.version : v;
        if (typeof ref === 'string' && !deps.has(name)) deps.set(name, ref);
      }
    }
    importers.set(id, deps);
  };
  if (isRecord(doc.importers)) for (const [id, section] of Object.entries(doc.importers)) addImporter(id, record(section as PnpmDeps));
  else addImporter('.', doc); // a single-project lockfile lists its dependencies at the top

  const snapshots = new Map<string, Record<string, unknown>>();
  const byName = new Map<string, string[]>();
  for (const [key, v] of Object.entries(record((v9 ? doc.snapshots : doc.packages) as PnpmDeps | undefined))) {
    const id = key.startsWith('/') ? key.slice(1) : key;
    snapshots.set(id, record(v as PnpmDeps));
    const name = packageNameOf(id);
    (byName.get(name) ?? byName.set(name, []).get(name)!).push(id);
  }
  /** The snapshot a reference names (pnpm's refToRelative), or null for a workspace link. */
  const idOf = (name: string, ref: string): string | null => {
    if (ref.startsWith('link:') || ref.startsWith('workspace:')) return null;
    if (!v9) return ref.startsWith('/') ? ref.slice(1) : ref.startsWith('file:') ? ref : `${name}@${ref}`;
    if (ref.startsWith('@')) return ref;
    const at = ref.indexOf('@');
    if (at === -1) return `${name}@${ref}`;
    const colon = ref.indexOf(':');
    const paren = ref.indexOf('(');
    return (colon === -1 || at < colon) && (paren === -1 || at < paren) ? ref : `${name}@${ref}`;
  };
  const graph: Graph = {
    label: (id) => id,
    material: () => '', // the id names the version, the peers, and a tarball's or git commit's address
    children(id) {
      const s = snapshots.get(id)!;
      const out: Child[] = [];
      for (const field of ['dependencies', 'optionalDependencies']) {
        for (const [d, ref] of Object.entries(record(s[field] as PnpmDeps | undefined))) {
          if (typeof ref !== 'string') continue;
          const child = idOf(d, ref);
          if (child === null) out.push({ label: `${d}@workspace` });
          else if (snapshots.has(child)) out.push({ id: child });
          else out.push({ label: `${child}@missing` });
        }
      }
      return out;
    },
  };
  const closure = closureMemo(graph, () => widen);
  const refOf = (name: string, projectRoot: string) => importers.get(projectRoot === '' ? '.' : projectRoot)?.get(name) ?? importers.get('.')?.get(name);
  return {
    kind: 'pnpm',
    diagnostics,
    async versionOf(name, projectRoot) {
      const v = refOf(name, projectRoot);
      // `15.3.2(@babel/core@7.26.9)(…)`: the peer suffix is the instance's peer resolution, which its
      // closure covers; the package's own version is what its types are.
      if (v) return v.startsWith('link:') || v.startsWith('workspace:') ? 'workspace' : v.replace(/\(.*$/, '').replace(/^\/?(@?[^@]+)@/, (m, n: string) => (n === name ? '' : m));
      return installedVersion(tree, root, name, projectRoot);
    },
    async closureOf(name, projectRoot) {
      if (broken !== undefined) return wholeLockfile(raw, broken);
      const ref = refOf(name, projectRoot);
      if (ref !== undefined) {
        const id = idOf(name, ref);
        if (id === null) return undefined;
        if (snapshots.has(id)) return closure([id]);
        // The importer names an instance the lockfile does not hold: it is what it is, missing.
        return { packages: [`${id}@missing`], digest: digestParts('kiln-external-closure/1', [`${id}\u0001missing`, ...(widen ? [`lockfile\u0001${widen.digest}`] : [])]), ...(widen ? { widened: widen.reason } : {}) };
      }
      // Not a dependency of the project or the root (hoisted, or a phantom import): every instance
      // of that name the lockfile holds, since which one the build finds is the installer's choice.
      const ids = byName.get(name);
      return ids?.length ? closure(ids) : undefined;
    },
    ambientTypes: () => [...new Set([...importers.values()].flatMap((m) => [...m.keys()].filter((k) => k.startsWith('@types/'))))].sort(),
  };
}

// --- yarn -----------------------------------------------------------------------------------------

interface YarnEntry {
  version?: unknown;
  resolution?: unknown;
  resolved?: unknown;
  integrity?: unknown;
  checksum?: unknown;
  linkType?: unknown;
  dependencies?: unknown;
  optionalDependencies?: unknown;
  peerDependencies?: unknown;
}

async function yarnLockfile(text: string, root: string, tree: FileTree): Promise<Lockfile> {
  const diagnostics: Diagnostic[] = [];
  const file = 'yarn.lock';
  const berry = /^__metadata:/m.test(text);
  // descriptor (`name@range`) → entry; an entry object is shared by all its descriptors.
  const descriptors = new Map<string, YarnEntry>();
  let broken: string | undefined;
  let widen: { digest: string; reason: string } | undefined;
  const duplicated = new Set<string>();
  try {
    if (berry) {
      const yaml = await import('js-yaml');
      const loaded = loadYaml(yaml, text);
      if (!isRecord(loaded.doc)) throw new Error('the document is not a mapping');
      if (loaded.duplicate) duplicated.add(loaded.duplicate);
      for (const [key, entry] of Object.entries(loaded.doc)) {
        if (key === '__metadata' || !isRecord(entry)) continue;
        for (const d of key.split(/\s*,\s*/)) {
          if (descriptors.has(d)) duplicated.add(d);
          descriptors.set(d, entry as YarnEntry);
        }
      }
    } else {
      // A CommonJS bundle: Node puts its exports on `default`, some loaders (vitest) on the namespace.
      const mod = (await import('@yarnpkg/lockfile')) as { default?: { parse?: typeof parseYarnV1 }; parse?: typeof parseYarnV1 };
      const parse = mod.default?.parse ?? mod.parse;
      if (!parse) throw new Error('the classic yarn.lock parser (@yarnpkg/lockfile) could not be loaded');
      const parsed = parse(text);
      if (parsed.type !== 'success') throw new Error(`it holds merge conflict markers (${parsed.type})`);
      for (const [d, entry] of Object.entries(parsed.object)) if (isRecord(entry)) descriptors.set(d, entry as YarnEntry);
      // The parser keeps the last of two entries for one descriptor silently; the headers tell.
      const seen = new Set<string>();
      for (const m of text.matchAll(/^([^\s#].*):\s*$/gm)) {
        for (const d of m[1]!.split(/\s*,\s*/).map(unquote)) {
          if (seen.has(d)) duplicated.add(d);
          seen.add(d);
        }
      }
    }
  } catch (e) {
    broken = `the lockfile cannot be parsed (${String((e as Error).message).split('\n')[0]})`;
    diagnostics.push(diagnostic('KILN_LOCKFILE_INVALID', `${file}: ${broken}; every external's key part covers the whole lockfile`, { file, producer: 'key' }));
  }
  if (duplicated.size) {
    const list = [...duplicated].sort();
    const reason = `${list.length} descriptor${list.length > 1 ? 's' : ''} listed twice (${list.slice(0, 3).join(', ')})`;
    diagnostics.push(diagnostic('KILN_LOCKFILE_DUPLICATE', `${file}: ${reason}; which entry yarn installs is ambiguous, so every external's key part also covers the whole lockfile`, { file, producer: 'key' }));
    widen = { digest: sha256Hex(text), reason };
  }

  // One id per entry (its first descriptor), and every entry by package name.
  const ids = new Map<YarnEntry, string>();
  const entries = new Map<string, YarnEntry>();
  const byName = new Map<string, string[]>();
  for (const d of [...descriptors.keys()].sort()) {
    const e = descriptors.get(d)!;
    if (ids.has(e)) continue;
    ids.set(e, d);
    entries.set(d, e);
    const name = packageNameOf(d);
    (byName.get(name) ?? byName.set(name, []).get(name)!).push(d);
  }
  const isWorkspace = (e: YarnEntry) => e.linkType === 'soft' || (typeof e.resolution === 'string' && /@workspace:/.test(e.resolution));
  const lookup = (name: string, range: string): YarnEntry | undefined => descriptors.get(`${name}@${range}`) ?? (berry ? descriptors.get(`${name}@npm:${range}`) : undefined);
  const graph: Graph = {
    label(id) {
      const e = entries.get(id)!;
      const name = packageNameOf(id);
      const resolution = typeof e.resolution === 'string' ? e.resolution : undefined;
      // Registry packages by version; anything else (git, tarball, patch) by its resolution.
      return resolution && resolution !== `${name}@npm:${String(e.version)}` ? resolution : `${name}@${String(e.version ?? 'unknown')}`;
    },
    material(id) {
      const e = entries.get(id)!;
      // Berry: a registry resolution is `name@npm:version`; another (git, patch, tarball) names itself
      // in the label, and its checksum is what it holds.
      if (typeof e.resolution === 'string') return /@npm:[^:]+$/.test(e.resolution) ? '' : String(e.checksum ?? '');
      return contentMaterial(e.version, e.resolved, e.integrity);
    },
    children(id) {
      const e = entries.get(id)!;
      const out: Child[] = [];
      for (const field of ['dependencies', 'optionalDependencies'] as const) {
        for (const [d, range] of Object.entries(record(e[field] as PnpmDeps | undefined))) {
          const target = lookup(d, String(range));
          if (!target) out.push({ label: `${d}@missing` });
          else if (isWorkspace(target)) out.push({ label: `${d}@workspace` });
          else out.push({ id: ids.get(target)! });
        }
      }
      // Berry resolves a peer to what the dependent's parent provides and records no such virtual
      // instance: every entry of that name is what the peer can be.
      for (const d of Object.keys(record(e.peerDependencies as PnpmDeps | undefined))) for (const p of byName.get(d) ?? []) if (!isWorkspace(entries.get(p)!)) out.push({ id: p });
      return out;
    },
  };
  const closure = closureMemo(graph, () => widen);
  const versions = new Map<string, Set<string>>();
  for (const [d, e] of entries) if (e.version !== undefined && !isWorkspace(e)) (versions.get(packageNameOf(d)) ?? versions.set(packageNameOf(d), new Set()).get(packageNameOf(d))!).add(String(e.version));
  const manifests = new Map<string, Promise<Record<string, unknown> | undefined>>();
  const manifest = (dir: string) => {
    let m = manifests.get(dir);
    if (!m) manifests.set(dir, (m = readText(tree, join(root, dir, 'package.json')).then((t) => (t === undefined ? undefined : parseJson(t)))));
    return m;
  };
  /** The range a project (else the workspace root) declares for `name`. */
  const declaredRange = async (name: string, projectRoot: string): Promise<string | undefined> => {
    for (const dir of projectRoot && projectRoot !== '.' ? [projectRoot, '.'] : ['.']) {
      const m = await manifest(dir);
      for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
        const r = record(m?.[field] as PnpmDeps | undefined)[name];
        if (typeof r === 'string') return r;
      }
    }
    return undefined;
  };
  return {
    kind: 'yarn',
    diagnostics,
    async versionOf(name, projectRoot) {
      const v = versions.get(name);
      if (v?.size) return [...v].sort().join('|'); // several resolutions: all of them, conservatively
      return installedVersion(tree, root, name, projectRoot);
    },
    async closureOf(name, projectRoot) {
      if (broken !== undefined) return wholeLockfile(text, broken);
      const range = await declaredRange(name, projectRoot);
      if (range !== undefined && /^(workspace|link|portal):/.test(range)) return undefined;
      const entry = range === undefined ? undefined : lookup(name, range);
      if (entry) return isWorkspace(entry) ? undefined : closure([ids.get(entry)!]);
      // Not declared, or declared with a range the lockfile does not list (stale): every entry of
      // that name is what the build can find.
      const all = (byName.get(name) ?? []).filter((d) => !isWorkspace(entries.get(d)!));
      return all.length ? closure(all) : undefined;
    },
    ambientTypes: () => [...versions.keys()].filter((k) => k.startsWith('@types/')).sort(),
  };
}

// --- no lockfile ----------------------------------------------------------------------------------

/**
 * No lockfile: versions and closures come from the installed tree, resolved as Node resolves a
 * `require` from each package's folder (a symlinked folder — a workspace link — is not entered). The
 * closure covers what this machine has installed, which is what its build reads.
 */
function installedOnly(root: string, tree: FileTree): Lockfile {
  const diagnostics: Diagnostic[] = [];
  let noted = false;
  /** Install folder (relative, posix) → its manifest and whether it is a link; memoised. */
  const folders = new Map<string, Promise<{ manifest: Record<string, unknown>; link: boolean } | undefined>>();
  const folder = (rel: string) => {
    let f = folders.get(rel);
    if (!f) {
      f = (async () => {
        const text = await readText(tree, join(root, rel, 'package.json'));
        if (text === undefined) return undefined;
        const link = tree.isSymlink(join(root, rel));
        return { manifest: parseJson(text) ?? {}, link };
      })();
      folders.set(rel, f);
    }
    return f;
  };
  const resolveFrom = async (from: string, name: string): Promise<string | undefined> => {
    let dir = from === '.' ? '' : from;
    for (;;) {
      if (posix.basename(dir) !== 'node_modules') {
        const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
        if (await folder(candidate)) return candidate;
      }
      if (!dir) return undefined;
      const up = posix.dirname(dir);
      dir = up === '.' ? '' : up;
    }
  };
  // The installed graph, read ahead of the (synchronous) walk.
  const nodes = new Map<string, { label: string; children: Child[] }>();
  const load = async (start: string) => {
    // A folder another load has read may still have children that load is reading: follow them too.
    const queue = [start];
    const seen = new Set(queue);
    const follow = (id: string) => {
      if (!seen.has(id)) {
        seen.add(id);
        queue.push(id);
      }
    };
    for (let i = 0; i < queue.length; i++) {
      const at = queue[i]!;
      const known = nodes.get(at);
      if (known) {
        for (const c of known.children) if ('id' in c) follow(c.id);
        continue;
      }
      const f = (await folder(at))!;
      const name = at.slice(at.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const m = f.manifest;
      const optional = new Set([...Object.keys(record(m.optionalDependencies)), ...Object.entries(record(m.peerDependenciesMeta)).filter(([, v]) => isRecord(v) && v.optional).map(([n]) => n)]);
      const children: Child[] = [];
      for (const d of new Set([...Object.keys(record(m.dependencies)), ...Object.keys(record(m.optionalDependencies)), ...Object.keys(record(m.peerDependencies))])) {
        const c = await resolveFrom(at, d);
        if (c === undefined) {
          if (!optional.has(d)) children.push({ label: `${d}@missing` });
        } else if ((await folder(c))!.link) children.push({ label: `${d}@workspace` });
        else {
          children.push({ id: c });
          follow(c);
        }
      }
      nodes.set(at, { label: `${name}@${typeof m.version === 'string' ? m.version : 'unknown'}`, children });
    }
  };
  const graph: Graph = { label: (id) => nodes.get(id)!.label, material: () => '', children: (id) => nodes.get(id)!.children };
  const closure = closureMemo(graph, () => undefined);
  return {
    kind: 'installed',
    diagnostics,
    versionOf: (name, projectRoot) => installedVersion(tree, root, name, projectRoot),
    async closureOf(name, projectRoot) {
      if (!noted) {
        noted = true;
        diagnostics.push(
          diagnostic('KILN_LOCKFILE_MISSING', 'no package-lock.json, pnpm-lock.yaml or yarn.lock at the workspace root; the versions of external packages and their dependency closures come from the installed node_modules', { file: '.', producer: 'key' }),
        );
      }
      const at = await resolveFrom(projectRoot, name);
      if (at === undefined || (await folder(at))!.link) return undefined;
      await load(at);
      return closure([at]);
    },
    ambientTypes: () => [],
  };
}

async function installedVersion(tree: FileTree, root: string, name: string, projectRoot: string): Promise<string | undefined> {
  for (const base of [join(root, projectRoot, 'node_modules', name), join(root, 'node_modules', name)]) {
    const text = await readText(tree, join(base, 'package.json'));
    if (text === undefined) continue;
    const v = parseJson(text)?.version;
    if (typeof v === 'string') return v; // an unreadable manifest is an unknown version
  }
  return undefined;
}

// --- helpers --------------------------------------------------------------------------------------

/**
 * Content identity beyond `name@version`: none for a registry tarball (`…/-/name-1.2.3.tgz`, npm's
 * lockfile also omits `resolved` for one), else the resolution (git commit, tarball or file URL) and
 * its integrity.
 */
function contentMaterial(version: unknown, resolved: unknown, integrity: unknown): string {
  if (typeof resolved !== 'string' || !resolved) return '';
  const v = String(version ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (v && new RegExp(`/-/[^/]+-${v}\\.tgz(#.*)?$`).test(resolved)) return '';
  return `${resolved}|${String(integrity ?? '')}`;
}

/** `@scope/name` or `name` from `name@anything` (a descriptor, a snapshot id, a label). */
function packageNameOf(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at <= 0 ? spec : spec.slice(0, at);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function record<T>(v: T | undefined): Record<string, unknown> {
  return isRecord(v) ? v : {};
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function unquote(s: string): string {
  return s.replace(/^['"]|['"]$/g, '');
}

async function readText(tree: FileTree, p: string): Promise<string | undefined> {
  if (tree !== worktree) return tree.readText(p);
  try {
    return await readFile(p, 'utf8');
  } catch {
    return undefined;
  }
}
