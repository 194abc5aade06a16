/**
 * Semantic affected (SPEC §9): which (project, target) pairs a change between two states can reach.
 * Both states are workspace views (view/workspace-view.ts): the base read from git objects, the head
 * from a revision or the working tree. Per target, one of three rules:
 *
 *   key    kiln's own build target (the plugin's `build`, kiln's executor, no definition shadowing it):
 *          affected exactly when the build key moves (key/unit-key.ts computed on both states);
 *   full   targets that execute or bundle the code (`test`, `e2e`, `typecheck`, a build kiln does not
 *          run): affected when anything in the project's closure changed *in meaning* — a declaration,
 *          a module's top-level code, its imports, a non-source file, a lockfile entry it resolves —
 *          in the project or in any workspace package it depends on (manifest, reach, imports of any
 *          of its source files, tests included);
 *   files  any other target (kiln does not know what it reads: a lint reads comments): what
 *          `nx affected` would run — any changed file in the project or a dependency — never less.
 *
 * What a "change in meaning" is comes from the slices: a source file whose declarations (identity →
 * semantic digest), module digest, specifiers and asset imports are the same on both sides changed in
 * comments or formatting only. Everything else that differs counts: non-source files by content,
 * files added or removed, a project added.
 *
 * Files outside every project: a lockfile is compared per project (the versions and closures of what
 * its manifest names, what the root manifest names — every project's tools — and what any of its
 * sources imports, as keys see them); documentation and repository metadata (`*.md`, LICENSE,
 * `.github/`, `.changeset/`, `.vscode/`, images) reach no target; any other root file (nx.json, a root
 * tsconfig or package.json, a tool config, a script) is a change kiln cannot analyse: every project,
 * with that reason.
 *
 * Invariants: never less than the rule says (an unreadable state or a key that cannot be computed
 * falls back to the wider rule, with a diagnostic); every affected pair carries at least one reason
 * chain (`@x/web:test ← @x/core (dependency) ← @x/core#parse: changed`); no absolute path in the result.
 */
import { isBuiltin } from 'node:module';
import { join, posix } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { diffReports } from '../diff/diff.js';
import type { ProjectKey } from '../key/unit-key.js';
import { fileKind } from '../parse/language.js';
import type { DigestReport } from '../view/report.js';
import { WorkspaceView } from '../view/workspace-view.js';
import type { WorkspaceProject } from '../workspace/discover.js';
import { externalKeyPart, typesPackageOf } from '../workspace/lockfile.js';
import { readTargetDefinitions, KILN_BUILD_EXECUTOR } from '../workspace/target-definitions.js';
import { AFFECTED_FORMAT } from '../version.js';
import { GitTree, type FileTree } from '../workspace/tree.js';
import { resolveStates, type AffectedStates } from './changes.js';
import { AllSources, chainsTo, dependencyGraph, type DependencyGraph } from './closure.js';
import { closureMemoInput, readClosureMemo, writeClosureMemo } from './closure-memo.js';
import { defaultStoreDir } from '../store/format.js';
import { span } from '../trace/record.js';

export type TargetRule = 'key' | 'full' | 'files';

export interface AffectedOptions {
  /** Base revision (default: merge-base of nx.json's defaultBase, else `main`, with the head). */
  base?: string;
  /** Head revision (default: the working tree, uncommitted and untracked files included). */
  head?: string;
  /** Target names, e.g. ['build', 'test']. */
  targets: string[];
  /** kiln's build target name (the plugin's `buildTargetName`), or null when the plugin is not registered. */
  keyedTarget?: string | null;
  store?: string | false;
  workers?: number;
  /** Preferred tsconfig per project root (the one kiln's build target compiles), as for keys. */
  tsconfigs?: Record<string, string>;
  onProgress?: (message: string) => void;
}

export interface AffectedTarget {
  project: string;
  root: string;
  target: string;
  rule: TargetRule;
  /** Reason chains, most direct first: each from the target down to a change. */
  reasons: string[][];
}

export interface AffectedResult {
  kind: 'kiln-affected';
  version: number;
  base: { commit: string; from: string };
  head: { commit: string | null; worktree: boolean };
  /** Paths that differ between the states (workspace-relative). */
  changed: string[];
  affected: AffectedTarget[];
  /** Per target: how many projects were considered, and how many are affected. */
  counts: Record<string, { projects: number; affected: number }>;
  diagnostics: Diagnostic[];
  stats: { ms: number };
}

/** Target names whose work is running or bundling the code: the full closure, never a key. */
export const EXECUTING = /^(test|e2e|typecheck|type-check|tsc|bundle|build|test[:-].*|e2e[:-].*)$/;
/** Files outside every project that no target reads. */
const INERT_ROOT = /(^|\/)(README|CHANGELOG|CONTRIBUTING|CODE_OF_CONDUCT|SECURITY|LICENSE|LICENCE)[^/]*$|\.(md|mdx|png|jpe?g|gif|svg|ico|webp)$|^\.(github|changeset|vscode|idea)\//i;
const LOCKFILES = new Set(['package-lock.json', 'pnpm-lock.yaml', 'yarn.lock', 'npm-shrinkwrap.json']);
/** What reading the states from git reported (the rest of the views' diagnostics belong to keys and digests). */
const GIT_CODES = new Set<string>(['KILN_GIT_PATH_NOT_UTF8', 'KILN_GIT_REF_UNKNOWN', 'KILN_GIT_SHALLOW', 'KILN_GIT_UNAVAILABLE']);
/** How many reasons of one kind are listed before "…and N more". */
const MAX_REASONS = 5;

interface ProjectChange {
  /** Changes in meaning (full rule), in words. */
  meaning: string[];
  /** Any changed file (files rule). */
  files: string[];
}

/** Traced (trace/) as one `affected` span, the digests and store work inside. */
export function computeAffected(workspaceRoot: string, options: AffectedOptions): Promise<AffectedResult> {
  return span('affected', () => computeAffectedTraced(workspaceRoot, options));
}

async function computeAffectedTraced(workspaceRoot: string, options: AffectedOptions): Promise<AffectedResult> {
  const t0 = performance.now();
  const progress = options.onProgress ?? (() => undefined);
  const states = await resolveStates(workspaceRoot, options);
  progress(`base ${states.base.slice(0, 12)} (${states.baseFrom}), head ${states.head?.slice(0, 12) ?? 'working tree'}: ${states.changed.length} changed paths`);
  const viewOptions = {
    ...(options.store !== undefined ? { store: options.store } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.tsconfigs ? { tsconfigs: options.tsconfigs } : {}),
  };
  // A head revision's tree (changes.ts) records what it answers from disk from the start: its
  // dependency graph is kept per tree id with those answers (closure-memo.ts).
  const head = await WorkspaceView.open(workspaceRoot, { ...viewOptions, ...(states.trees ? { tree: states.trees.head } : {}) });
  // The base under a git view of its own in the store: head and base differ exactly where the
  // change is, and sharing one manifest would have each overwrite the other's entries every run.
  const base = await WorkspaceView.open(workspaceRoot, { ...viewOptions, tree: states.trees?.base ?? GitTree.ofTree(states.top, states.baseTree), gitView: 'git:base' });
  const diagnostics: Diagnostic[] = [...base.diagnostics, ...head.diagnostics].filter((d) => GIT_CODES.has(d.code));
  try {
    return await compute(workspaceRoot, options, states, base, head, diagnostics, progress, t0);
  } finally {
    await Promise.all([base.close(), head.close()]);
  }
}

async function compute(
  workspaceRoot: string,
  options: AffectedOptions,
  states: AffectedStates,
  base: WorkspaceView,
  head: WorkspaceView,
  diagnostics: Diagnostic[],
  progress: (m: string) => void,
  t0: number,
): Promise<AffectedResult> {
  const projects = head.projects.filter((p) => p.manifest);
  const baseByRoot = new Map(base.projects.map((p) => [p.root, p]));
  const roots = [...new Set([...head.projects, ...base.projects].map((p) => p.root))].sort((a, b) => b.length - a.length);
  const ownerOf = (path: string) => roots.find((r) => r === '.' || path === r || path.startsWith(`${r}/`));

  // ------------------------------------------------------------ which paths belong where
  const byProject = new Map<string, string[]>();
  const rootFiles: string[] = [];
  for (const path of states.changed) {
    if (path.includes('\uFFFD')) {
      // Git's bytes are not UTF-8: kiln cannot read the file by its name, so it cannot tell what changed.
      diagnostics.push(diagnostic('KILN_GIT_PATH_NOT_UTF8', `a changed path is not valid UTF-8 (shown as ${JSON.stringify(path)}); it counts as a change kiln cannot analyse`, { producer: 'affected' }));
    }
    const owner = ownerOf(path);
    if (owner === undefined) rootFiles.push(path);
    else (byProject.get(owner) ?? byProject.set(owner, []).get(owner)!).push(owner === '.' ? path : path.slice(owner.length + 1));
  }

  // Every changed file is read at both states below (non-sources by content, sources by their slices):
  // read ahead, one batch per git tree, rather than a git process per directory as each is asked for.
  const ahead = states.changed.filter((p) => !p.startsWith('../')).map((p) => join(workspaceRoot, p));
  await Promise.all([head.tree.preload(ahead), base.tree.preload(ahead)]);

  // Every source of a project, per state (tests and configs included): what a change is classified by.
  const sources = new AllSources(workspaceRoot);
  const sourcesOf = (view: WorkspaceView, p: WorkspaceProject) => sources.of(view, p);

  // ------------------------------------------------------------ what changed in meaning, per project
  const changes = new Map<string, ProjectChange>();
  const changeOf = (root: string) => changes.get(root) ?? changes.set(root, { meaning: [], files: [] }).get(root)!;
  progress(`classifying changes in ${byProject.size} projects`);
  await Promise.all(
    [...byProject].map(async ([root, paths]) => {
      const p = head.projects.find((q) => q.root === root);
      if (!p) return; // removed at head: its dependents' manifests changed with it
      const c = changeOf(root);
      c.files.push(...paths.map((f) => posix.join(root, f)));
      const was = baseByRoot.get(root);
      if (!was) {
        c.meaning.push(`${p.name}: new project`);
        return;
      }
      const sourcePaths = paths.filter((f) => fileKind(f));
      for (const f of paths.filter((f) => !fileKind(f) || f.includes('\uFFFD'))) {
        const before = base.tree.readFile(join(workspaceRoot, root, f));
        const after = head.tree.readFile(join(workspaceRoot, root, f));
        // Unreadable on both sides (a name that is not UTF-8, a link out of the tree): a change all the same.
        c.meaning.push(`${posix.join(root, f)}: ${!before && !after ? 'changed (unreadable)' : !before ? 'added' : !after ? 'removed' : 'changed'}`);
      }
      if (!sourcePaths.length) return;
      const [b, h] = await Promise.all([sourcesOf(base, was), sourcesOf(head, p)]);
      c.meaning.push(...meaningChanges(root, p.name, sourcePaths, b, h));
    }),
  );
  // New projects without a changed path of their own (cannot happen with git, but a view may disagree).
  for (const p of projects) if (!baseByRoot.has(p.root) && !changes.has(p.root)) changeOf(p.root).meaning.push(`${p.name}: new project`);
  // A workspace package a project names that is gone at the head (deleted, renamed): that project's build
  // and tests now resolve something else, even where none of its own files changed.
  for (const p of projects) {
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']) {
      for (const n of Object.keys((p.manifest?.[field] as Record<string, unknown> | undefined) ?? {})) {
        if (base.byName.has(n) && !head.byName.has(n)) changeOf(p.root).meaning.push(`${n}: workspace package removed (it was at ${base.byName.get(n)!.root})`);
      }
    }
  }

  // ------------------------------------------------------------ files outside every project
  const global: { meaning: string[]; files: string[] } = { meaning: [], files: [] };
  let lockfileChanged = false;
  for (const f of rootFiles) {
    if (INERT_ROOT.test(f)) continue;
    if (LOCKFILES.has(f)) {
      lockfileChanged = true;
      continue;
    }
    global.files.push(f);
    if (fileKind(f) && !f.includes('\uFFFD')) {
      const before = base.tree.readFile(join(workspaceRoot, f));
      const after = head.tree.readFile(join(workspaceRoot, f));
      if (before && after && before.equals(after)) continue;
    }
    global.meaning.push(`${f}: ${f === 'package.json' || f === 'nx.json' || /tsconfig.*\.json$/.test(f) ? 'workspace configuration' : 'a file outside every project'} changed; kiln cannot tell what it reaches`);
  }
  if (lockfileChanged) {
    progress('comparing lockfile answers per project');
    const [lb, lh] = await Promise.all([base.lockfile(), head.lockfile()]);
    // The workspace root's own dependencies are every project's tools (the compiler, the test runner).
    const rootManifest = (() => {
      try {
        return JSON.parse(head.tree.readText(join(workspaceRoot, 'package.json')) ?? '{}') as Record<string, unknown>;
      } catch {
        return {};
      }
    })();
    const fields = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'];
    const declared = (m: Record<string, unknown> | null | undefined) => fields.flatMap((f) => Object.keys((m?.[f] as Record<string, unknown> | undefined) ?? {}));
    for (const p of projects) {
      const names = new Set<string>();
      // What it declares, what the root declares, and what any of its sources imports (hoisted, undeclared).
      const imported = ((await sourcesOf(head, p))?.files ?? []).flatMap((f) => f.external_packages);
      for (const n of [...declared(p.manifest), ...declared(rootManifest), ...imported]) if (!head.byName.has(n) && !isBuiltin(n)) names.add(n);
      for (const n of [...names]) {
        const twin = typesPackageOf(n);
        if (twin) names.add(twin);
      }
      const moved: string[] = [];
      for (const n of [...names].sort()) {
        const [a, b] = await Promise.all([externalKeyPart(lb, n, p.root), externalKeyPart(lh, n, p.root)]);
        if (JSON.stringify(a) !== JSON.stringify(b)) moved.push(a.version === b.version ? `${n}@${b.version}: its dependency closure changed` : `${n}: ${a.version} → ${b.version}`);
      }
      if (moved.length) {
        const c = changeOf(p.root);
        c.meaning.push(...moved.slice(0, MAX_REASONS).map((m) => `lockfile: ${m}`), ...(moved.length > MAX_REASONS ? [`lockfile: …and ${moved.length - MAX_REASONS} more`] : []));
        c.files.push('lockfile');
      }
    }
  }

  // ------------------------------------------------------------ who depends on whom, at the head
  // Only a project with a change (in meaning or in files) ends a reason chain: with none, no chain
  // exists whatever the graph, and it is not read.
  const anyChange = [...changes.values()].some((c) => c.meaning.length > 0 || c.files.length > 0);
  const deps: DependencyGraph = anyChange ? await headGraph(workspaceRoot, options, head, projects, sources, progress) : new Map();

  // ------------------------------------------------------------ keys, where a target is kiln's build
  const keyedTarget = options.keyedTarget === undefined ? 'build' : options.keyedTarget;
  // kiln's build is compared by its key only where kiln built it at both states: a base without the
  // plugin (or with other options) built with something else, whose output the key says nothing of.
  const pluginAt = (view: WorkspaceView) => JSON.stringify(pluginEntry(view.tree.readText(join(workspaceRoot, 'nx.json'))) ?? null);
  const pluginMoved = pluginAt(base) !== pluginAt(head);
  const wantsKeys = keyedTarget !== null && options.targets.includes(keyedTarget) && !pluginMoved;
  let explainKeyChange: typeof import('../key/explain.js').explainKeyChange | undefined;
  let keysBase: Map<string, ProjectKey> | undefined;
  let keysHead: Map<string, ProjectKey> | undefined;
  if (wantsKeys) {
    progress('computing build keys of both states');
    const common = {
      ...(options.store !== undefined ? { store: options.store } : {}),
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
      ...(options.tsconfigs ? { tsconfigs: options.tsconfigs } : {}),
    };
    // On the views already open: what they prepared (head: every project) is not read again. Keys are
    // loaded only here: a run without kiln's build target does not load them.
    const { computeWorkspaceKeys } = await import('../key/unit-key.js');
    const [kb, kh] = await Promise.all([computeWorkspaceKeys(workspaceRoot, { ...common, view: base }), computeWorkspaceKeys(workspaceRoot, { ...common, view: head })]);
    explainKeyChange = (await import('../key/explain.js')).explainKeyChange;
    keysBase = new Map(kb.projects.map((k) => [k.root, k]));
    keysHead = new Map(kh.projects.map((k) => [k.root, k]));
  }

  // ------------------------------------------------------------ per target, per project
  const nameOf = (root: string) => head.projects.find((q) => q.root === root)?.name ?? root;
  const chainTo = (start: string, hit: (root: string) => string[] | undefined): string[][] => chainsTo(deps, nameOf, start, hit, MAX_REASONS);
  const affected: AffectedTarget[] = [];
  const counts: AffectedResult['counts'] = {};
  for (const target of options.targets) {
    counts[target] = { projects: projects.length, affected: 0 };
    for (const p of projects) {
      let rule: TargetRule = EXECUTING.test(target) ? 'full' : 'files';
      let reasons: string[][] = [];
      // kiln's build at both states: a target that was (or is) another tool's build is not compared by key.
      if (target === keyedTarget && keysBase && keysHead && isKilnBuild(head.tree, workspaceRoot, p.root, target) && (!baseByRoot.has(p.root) || isKilnBuild(base.tree, workspaceRoot, p.root, target))) {
        const kb = keysBase.get(p.root);
        const kh = keysHead.get(p.root);
        const opaque = Object.values(kh?.components?.dependencies ?? {}).some((d) => d.mode === 'full' && d.reason?.startsWith('not built by kiln'));
        if (kh?.key && kb?.key && kb.components && kh.components && !opaque) {
          rule = 'key';
          if (kb.key !== kh.key) {
            const why = explainKeyChange!(kb.components, kh.components);
            reasons = (why.length ? why : [{ category: 'toolchain', subject: 'key', change: 'changed', detail: 'the key changed' }]).slice(0, MAX_REASONS).map((c) => [`${c.category} ${c.subject}: ${c.detail}`]);
          }
        } else if (kh?.key && !kb) reasons = [[`${p.name}: new project`]];
      }
      if (rule !== 'key') {
        reasons = chainTo(p.root, (root) => changes.get(root)?.meaning);
        if (!reasons.length && global.meaning.length) reasons = global.meaning.slice(0, MAX_REASONS).map((m) => [m]);
        if (rule === 'files') {
          const byFiles = chainTo(p.root, (root) => changes.get(root)?.files.map((f) => `${f}: changed`));
          if (!reasons.length) reasons = byFiles.length ? byFiles : global.files.slice(0, MAX_REASONS).map((f) => [`${f}: changed`]);
        }
      }
      if (!reasons.length) continue;
      counts[target]!.affected++;
      affected.push({ project: p.name, root: p.root, target, rule, reasons: reasons.map((chain) => [`${p.name}:${target}`, ...chain]) });
    }
  }
  diagnostics.push(...[...base.diagnostics, ...head.diagnostics].filter((d) => d.severity === 'error' && !diagnostics.includes(d)));
  return {
    kind: 'kiln-affected',
    version: AFFECTED_FORMAT,
    base: { commit: states.base, from: states.baseFrom },
    head: { commit: states.head ?? null, worktree: !states.head },
    changed: states.changed,
    affected,
    counts,
    diagnostics,
    stats: { ms: Math.round(performance.now() - t0) },
  };
}

/** Diagnostics that say a reading was incomplete for reasons other than the files (a memo must not keep it). */
const INCOMPLETE = new Set<string>(['KILN_READ_FAILED', 'KILN_WORKER_FAILED', 'KILN_STORE_CORRUPT']);

/**
 * What each project depends on at the head (closure.ts): for a head revision, from the store's memo of
 * its tree when disk still answers as it did (closure-memo.ts); otherwise computed — every project
 * loaded — and kept when the reading was complete.
 */
async function headGraph(
  workspaceRoot: string,
  options: AffectedOptions,
  head: WorkspaceView,
  projects: WorkspaceProject[],
  sources: AllSources,
  progress: (m: string) => void,
): Promise<DependencyGraph> {
  const tree = head.tree instanceof GitTree && head.tree.diskRecording ? head.tree : undefined;
  const storeDir = options.store === false ? null : options.store ?? defaultStoreDir();
  const input = tree && storeDir !== null ? closureMemoInput(workspaceRoot, tree, options.tsconfigs) : undefined;
  if (input !== undefined) {
    const kept = await readClosureMemo(storeDir!, input);
    if (kept) {
      progress(`dependencies of ${projects.length} projects at the head: from the store (tree ${tree!.treeId.slice(0, 12)})`);
      return kept;
    }
  }
  progress(`reading ${projects.length} projects at the head`);
  await head.load(projects);
  const deps = await dependencyGraph(head, projects, sources);
  if (input !== undefined) {
    const reports = await Promise.all(projects.map((p) => sources.of(head, p)));
    const diagnostics = [...projects.flatMap((p) => [...(head.packageAt(p.root)?.diagnostics ?? []), ...(head.packageAt(p.root)?.report?.diagnostics ?? [])]), ...reports.flatMap((r) => r?.diagnostics ?? [])];
    const complete = tree!.blobsMissing === 0 && !diagnostics.some((d) => INCOMPLETE.has(d.code));
    await writeClosureMemo(storeDir!, input, deps, tree!.diskRecording!, complete);
  }
  return deps;
}

/** The @kiln/nx entry of an nx.json's plugins, if any. */
function pluginEntry(text: string | undefined): unknown {
  try {
    const nx = JSON.parse(text ?? '{}') as { plugins?: unknown[] };
    return (nx.plugins ?? []).find((p) => (typeof p === 'string' ? p : (p as { plugin?: unknown })?.plugin) === '@kiln/nx');
  } catch {
    return undefined;
  }
}

/** Whether the project's `target` is kiln's build in that state: no definition of its own, or one naming kiln's executor. */
function isKilnBuild(tree: FileTree, workspaceRoot: string, root: string, target: string): boolean {
  const def = readTargetDefinitions(workspaceRoot, root, [target], tree).targets.get(target);
  return !def || def.executor === KILN_BUILD_EXECUTOR;
}

/**
 * What changed in meaning among a project's changed source files, from every source's slices on both
 * sides: declarations added, removed or changed, and modules whose top-level code, imports or asset
 * imports changed. A file that differs in comments or formatting only gives nothing.
 */
function meaningChanges(root: string, name: string, paths: string[], before: DigestReport | undefined, after: DigestReport | undefined): string[] {
  const wanted = new Set(paths);
  const filesA = new Map((before?.files ?? []).filter((f) => wanted.has(f.path)).map((f) => [f.path, f]));
  const filesB = new Map((after?.files ?? []).filter((f) => wanted.has(f.path)).map((f) => [f.path, f]));
  const out: string[] = [];
  for (const path of paths) {
    const a = filesA.get(path);
    const b = filesB.get(path);
    const at = posix.join(root, path);
    if (!a && !b) continue; // not a source either side reads (under an output folder, node_modules)
    if (!a || !b) {
      out.push(`${at}: ${!a ? 'added' : 'removed'}`);
      continue;
    }
    if (a.module.digest !== b.module.digest || a.module.degraded || b.module.degraded) out.push(`${at}: top-level code changed`);
    if (JSON.stringify([a.specifiers, a.asset_imports, a.external_packages]) !== JSON.stringify([b.specifiers, b.asset_imports, b.external_packages])) out.push(`${at}: imports changed`);
  }
  if (before && after) {
    const only = (r: DigestReport): DigestReport => ({ ...r, declarations: r.declarations.filter((d) => wanted.has(d.span.file)), files: r.files.filter((f) => wanted.has(f.path)) });
    const diff = diffReports(only(before), only(after));
    for (const d of diff.declarations) {
      if (d.status === 'added' || d.status === 'removed' || d.status === 'changed') out.push(`${d.identity.replace(/^[a-z]+:/, '')}: ${d.status === 'changed' ? d.reason : d.status}`);
    }
  } else if (after) for (const d of after.declarations.filter((x) => wanted.has(x.span.file))) out.push(`${d.identity.replace(/^[a-z]+:/, '')}: added`);
  void name;
  return [...new Set(out)];
}
