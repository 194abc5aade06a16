/**
 * The reverse closure `kiln affected` follows, in one place: which workspace packages each project
 * depends on at one state (its manifest, what its build reaches, and the imports of every one of its
 * sources — tests included), and, from a set of changed packages, the chain by which each project
 * reaches the nearest of them. `computeAffected` (affected.ts) and "who is affected by this
 * declaration" (`affectedByDeclaration`, the MCP server's `affected_by`) both use it.
 *
 * Invariants: a dependency is never dropped for being unusual (a devDependency, a reach-only package, an
 * undeclared import all count); chains are shortest first (breadth-first), deterministic (sorted
 * roots), and name packages, never paths of this machine.
 */
import { join, posix } from 'node:path';
import { buildOutputDirs, listSourceFiles, sourcePathRules } from '../view/files.js';
import type { DigestReport } from '../view/report.js';
import { workspaceDependencyNames, type WorkspaceView } from '../view/workspace-view.js';
import type { WorkspaceProject } from '../workspace/discover.js';
import { GitTree } from '../workspace/tree.js';

/** Project root → the roots of the workspace packages it depends on → how (in words). */
export type DependencyGraph = Map<string, Map<string, string>>;

/** Every source of a project at a view's state (tests and configs included), digested through the view; memoised per view. */
export class AllSources {
  private readonly memo = new Map<string, Promise<DigestReport | undefined>>();
  constructor(private readonly workspaceRoot: string) {}

  of(view: WorkspaceView, p: WorkspaceProject): Promise<DigestReport | undefined> {
    const key = `${view.tree.label}\u0000${p.root}`;
    let m = this.memo.get(key);
    if (!m) {
      m = (async () => {
        const dir = join(this.workspaceRoot, p.root);
        const outDirs = await buildOutputDirs(dir, view.tree);
        let files: string[];
        if (view.tree instanceof GitTree) {
          const rules = sourcePathRules(outDirs);
          files = view.tree.filesUnder(dir).filter((f) => rules.lists(f));
        } else files = await listSourceFiles(dir, outDirs);
        return files.length ? view.digest(dir, files) : undefined;
      })();
      this.memo.set(key, m);
    }
    return m;
  }
}

/** What each project depends on at the view's state; the view's projects must be loaded (`view.load`). */
export async function dependencyGraph(view: WorkspaceView, projects: readonly WorkspaceProject[], sources: AllSources): Promise<DependencyGraph> {
  const deps: DependencyGraph = new Map();
  await Promise.all(
    projects.map(async (p) => {
      const out = new Map<string, string>();
      for (const n of workspaceDependencyNames(p, view.byName)) out.set(view.byName.get(n)!.root, 'dependency');
      for (const n of view.packageAt(p.root)?.reach?.packages.keys() ?? []) {
        const q = view.byName.get(n);
        if (q && q.root !== p.root && !out.has(q.root)) out.set(q.root, 'reached by its build');
      }
      const all = await sources.of(view, p);
      for (const f of all?.files ?? []) {
        for (const n of f.external_packages) {
          const q = view.byName.get(n);
          if (q && q.root !== p.root && !out.has(q.root)) out.set(q.root, `imported by ${posix.join(p.root, f.path)}`);
        }
      }
      deps.set(p.root, new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
    }),
  );
  return deps;
}

/**
 * The chains from `start` down to the nearest project `hit` answers for (itself first), breadth-first
 * over the dependency graph: each chain is the packages passed (`name (how)`) then one reason. Empty
 * when no project in its closure has a reason. At most `max` chains (the nearest project's reasons).
 */
export function chainsTo(deps: DependencyGraph, nameOf: (root: string) => string, start: string, hit: (root: string) => readonly string[] | undefined, max = 5): string[][] {
  const seen = new Set([start]);
  let frontier: { root: string; chain: string[] }[] = [{ root: start, chain: [] }];
  while (frontier.length) {
    const next: typeof frontier = [];
    for (const { root, chain } of frontier) {
      const found = hit(root);
      if (found?.length) return found.slice(0, max).map((r) => [...chain, r]);
      for (const [dep, how] of deps.get(root) ?? []) {
        if (seen.has(dep)) continue;
        seen.add(dep);
        next.push({ root: dep, chain: [...chain, `${nameOf(dep)} (${how})`] });
      }
    }
    frontier = next;
  }
  return [];
}
