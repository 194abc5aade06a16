/**
 * The kiln Nx plugin: `createNodesV2` infers a `build` target for every TypeScript library (a
 * package.json beside a tsconfig, with TypeScript sources), whose options carry the kiln unit key.
 * Nx hashes target options up front on every path (daemon or not, batch hashing, remote cache), so
 * the key reaches the task hash with no custom hasher; `inputs: []` keeps raw source bytes out of it.
 * `createDependencies` adds the workspace edges kiln resolved from imports.
 *
 * Thin: all knowledge lives in @kiln/core. createNodes runs on every project-graph build, so the work
 * is the warm path of the store (hash files, look slices up) and results are memoised per process.
 */
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import type { CreateDependencies, CreateNodesContextV2, CreateNodesResult, CreateNodesV2, RawProjectGraphDependency, TargetConfiguration } from '@nx/devkit';
import { DependencyType } from '@nx/devkit';
import { computeWorkspaceKeys, findTsconfig, readTsconfig, type ProjectKey, type WorkspaceKeys } from '@kiln/core';

export interface KilnPluginOptions {
  /** Name of the inferred build target (default `build`). */
  buildTargetName?: string;
  /** Tsconfig names tried, per project, in order (default tsconfig.lib.json, tsconfig.build.json, tsconfig.json). */
  tsConfig?: string;
}

export const KILN_BUILD_EXECUTOR = '@kiln/nx:build';

let memo: { at: number; roots: string; keys: Promise<WorkspaceKeys> } | undefined;

/** Keys for the given roots, shared between createNodes and createDependencies of one graph build. */
function keysFor(workspaceRoot: string, roots: string[]): Promise<WorkspaceKeys> {
  const id = `${workspaceRoot}\u0000${roots.join('\u0000')}`;
  if (memo && memo.roots === id && Date.now() - memo.at < 2000) return memo.keys;
  const keys = computeWorkspaceKeys(workspaceRoot, { roots, record: true });
  memo = { at: Date.now(), roots: id, keys };
  return keys;
}

function isLibraryRoot(workspaceRoot: string, root: string, preferred?: string): boolean {
  if (root === '.' || root === '') return false;
  return findTsconfig(join(workspaceRoot, root), preferred) !== undefined;
}

export const createNodesV2: CreateNodesV2<KilnPluginOptions> = [
  '**/package.json',
  async (configFiles, options, context: CreateNodesContextV2) => {
    const roots = configFiles.map((f) => dirname(f)).filter((r) => isLibraryRoot(context.workspaceRoot, r, options?.tsConfig));
    const keys = roots.length ? await keysFor(context.workspaceRoot, roots) : undefined;
    const byRoot = new Map<string, ProjectKey>((keys?.projects ?? []).map((p) => [p.root, p]));
    return configFiles.map((file): [string, CreateNodesResult] => {
      const root = dirname(file);
      const key = byRoot.get(root);
      // No key (an unreadable manifest, no tsconfig): no inferred target; `kiln keys` says why.
      if (!key?.key) return [file, {}];
      return [file, { projects: { [root]: { targets: { [options?.buildTargetName ?? 'build']: buildTarget(context.workspaceRoot, root, key, options) } } } }];
    });
  },
];

function buildTarget(workspaceRoot: string, root: string, key: ProjectKey, options: KilnPluginOptions | undefined): TargetConfiguration {
  const tsconfigName = key.components?.tsconfig?.file ?? findTsconfig(join(workspaceRoot, root), options?.tsConfig) ?? 'tsconfig.json';
  const outDir = key.components ? (key.components.tsconfig?.options.outDir as string | undefined) : readTsconfig(workspaceRoot, root, tsconfigName).outDir;
  const output = `{projectRoot}/${outDir ?? 'dist'}`;
  return {
    executor: KILN_BUILD_EXECUTOR,
    // Everything a build's output can depend on is in the key; raw bytes are not inputs.
    inputs: [],
    outputs: [output],
    dependsOn: ['^build'],
    cache: true,
    options: {
      tsConfig: `{projectRoot}/${tsconfigName}`,
      outputPath: output,
      kilnKey: key.key,
    },
    metadata: {
      description: 'kiln: compile with TypeScript; cached by semantic digests and dependency surfaces',
      technologies: ['typescript'],
    },
  };
}

export const createDependencies: CreateDependencies<KilnPluginOptions> = async (options, context) => {
  const roots = Object.values(context.projects)
    .map((p) => p.root)
    .filter((r) => existsSync(join(context.workspaceRoot, r, 'package.json')) && isLibraryRoot(context.workspaceRoot, r, options?.tsConfig));
  if (!roots.length) return [];
  const keys = await keysFor(context.workspaceRoot, roots.sort());
  const nameOf = new Map(Object.entries(context.projects).map(([name, p]) => [p.root, name]));
  const projectByPackage = new Map<string, string>();
  for (const p of keys.projects) {
    const nxName = nameOf.get(p.root);
    if (nxName) projectByPackage.set(p.project, nxName);
  }
  const deps: RawProjectGraphDependency[] = [];
  for (const p of keys.projects) {
    const source = nameOf.get(p.root);
    if (!source || !p.components) continue;
    for (const dep of Object.keys(p.components.dependencies)) {
      const target = projectByPackage.get(dep);
      if (target && target !== source) deps.push({ source, target, type: DependencyType.static, sourceFile: join(p.root, 'package.json') });
    }
  }
  return deps;
};
