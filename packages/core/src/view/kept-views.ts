/**
 * Views kept for the life of the process, per workspace root (one per store and workers option), so
 * that repeated readings of packages of one workspace (graph exports in a watch loop, an MCP server,
 * the Nx plugin) discover the workspace and read its manifests once.
 *
 * Invariants: a kept view is used only while every file its packages were read from, and the
 * directories the packages are listed in, has the same size and modification time (`workspaceStamp`);
 * it is stamped before anything is read, so a change while it is read makes the next use read again.
 * Only package-level facts are kept: per-file answers (view/foreign.ts) belong to one reading.
 * `forgetKeptViews` drops them all.
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readPackageInfo } from './package.js';
import { buildOutputDirs } from './files.js';
import { findWorkspaceRoot } from './locate.js';
import { WorkspaceView, type PackageEntries, type WorkspaceViewOptions } from './workspace-view.js';

/**
 * Per workspace root (and tsconfig choice): the stamp, the package roots, and one view per store and
 * workers option. Discovery and the packages' entries are read once per root and shared by the views
 * of every store (`WorkspaceView.withOptions`): a cold export into a fresh store does not discover the
 * workspace again. At most VIEWS_PER_ROOT views are kept per root, the oldest dropped first.
 */
const kept = new Map<string, { stamp: string; roots: string[]; views: Map<string, WorkspaceView> }>();
const VIEWS_PER_ROOT = 8;

/** Forget every kept view: the next reading discovers and reads everything again. */
export function forgetKeptViews(): void {
  kept.clear();
}

/** A package's view of its workspace: the view, and the workspace packages by name (this one included). */
export interface PackageWorkspace {
  view: WorkspaceView;
  packages: ReadonlyMap<string, PackageEntries>;
}

/**
 * The view of the workspace holding the package at `root` (absolute): the nearest ancestor that is
 * a workspace root (locate.ts findWorkspaceRoot), kept for the process while its stamp holds; with no
 * workspace above, a view of no packages at `root`, not kept. `packages` is the workspace's packages
 * by name, and this one if it is not among them.
 */
export async function openPackageWorkspace(root: string, options: WorkspaceViewOptions = {}): Promise<PackageWorkspace> {
  const wsRoot = findWorkspaceRoot(root);
  let view: WorkspaceView;
  let roots: string[] = [];
  const rootKey = JSON.stringify([wsRoot, options.tsconfigs ?? null]);
  const viewKey = JSON.stringify([options.store ?? null, options.workers ?? null]);
  const had = wsRoot ? kept.get(rootKey) : undefined;
  if (had && had.stamp === workspaceStamp(wsRoot, had.roots)) {
    roots = had.roots;
    const same = had.views.get(viewKey);
    if (same) view = same;
    else {
      // Another store or pool over the same state: discovery and entries are shared.
      const [first] = had.views.values();
      view = first!.withOptions({ ...(options.store !== undefined ? { store: options.store } : {}), ...(options.workers !== undefined ? { workers: options.workers } : {}) });
      had.views.set(viewKey, view);
      if (had.views.size > VIEWS_PER_ROOT) had.views.delete(had.views.keys().next().value!);
    }
  } else if (wsRoot) {
    const before = workspaceStamp(wsRoot, []);
    try {
      view = await WorkspaceView.open(wsRoot, options);
      roots = view.projects.map((p) => join(wsRoot, p.root));
    } catch {
      view = await WorkspaceView.empty(wsRoot, options); // no workspace: only this package
    }
    // Stamped before the manifests are read: a change while they are read makes the next run read again.
    const stamp = workspaceStamp(wsRoot, roots);
    await view.packageInfos();
    if (before === workspaceStamp(wsRoot, [])) kept.set(rootKey, { stamp, roots, views: new Map([[viewKey, view]]) });
  } else {
    view = await WorkspaceView.empty(root, options);
  }
  const base = await view.packageInfos();
  if (roots.includes(root)) return { view, packages: base };
  const info = await readPackageInfo(root);
  if (!info.found || info.invalid || base.has(info.name)) return { view, packages: base };
  return { view, packages: new Map(base).set(info.name, { root, info, outDirs: await buildOutputDirs(root) }) };
}

/** Size and modification time of every file a view's packages are read from, and of the directories holding the packages. */
function workspaceStamp(wsRoot: string | undefined, roots: string[]): string {
  const paths: string[] = [];
  if (wsRoot) paths.push(join(wsRoot, 'package.json'), join(wsRoot, 'pnpm-workspace.yaml'), join(wsRoot, 'nx.json'));
  for (const r of roots) {
    paths.push(dirname(r), join(r, 'package.json'), join(r, 'tsconfig.json'), join(r, 'tsconfig.lib.json'), join(r, 'tsconfig.build.json'));
  }
  return paths
    .map((p) => {
      try {
        const st = statSync(p);
        return `${st.mtimeMs}:${st.size}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}
