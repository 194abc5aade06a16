/**
 * `nx add @kiln/nx` / `nx g @kiln/nx:init`: register the kiln plugin in nx.json and make sure the
 * inferred build target keeps its semantic key. Target defaults override what plugins infer, so a
 * workspace-wide `targetDefaults.build.inputs` (e.g. `production`) would put raw source bytes back
 * into the hash; a target default keyed by kiln's executor takes precedence over the `build` one and
 * keeps `inputs: []`. Idempotent: running it twice changes nothing.
 *
 * First of all it checks that kiln can run in the workspace (its Nx version, this Node.js): where it
 * cannot, it throws kiln's diagnostic and changes nothing (Nx exits non-zero); on an Nx newer than kiln
 * was tested with it warns and goes on.
 *
 * It loads nothing of Nx: nx.json is read and written through the Tree Nx hands it, so it runs whatever
 * `@nx/devkit` the workspace has, or none (kiln has no runtime dependency on `@nx/devkit`, whose major
 * must match the workspace's Nx). Formatting uses the workspace's own `@nx/devkit` where it resolves.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NxJsonConfiguration, Tree } from '@nx/devkit';
import compat from '../../plugins/src/compat.cjs';
import type { InitGeneratorSchema } from './schema.js';

export const PLUGIN = '@kiln/nx';
export const EXECUTOR = '@kiln/nx:build';

export default async function initGenerator(tree: Tree, options: InitGeneratorSchema = {}): Promise<void> {
  const support = await compat.assertSupported(tree.root);
  if (support.untested) console.warn(`kiln: ${support.untested} It may work; if it does not, remove "${PLUGIN}" from the plugins of nx.json.`);
  const nxJson: NxJsonConfiguration = tree.exists('nx.json') ? (JSON.parse(tree.read('nx.json', 'utf-8') ?? '{}') as NxJsonConfiguration) : {};
  const plugins = nxJson.plugins ?? [];
  if (!plugins.some((p) => (typeof p === 'string' ? p : p.plugin) === PLUGIN)) {
    nxJson.plugins = [...plugins, PLUGIN];
  }
  const defaults = nxJson.targetDefaults ?? {};
  if (!defaults[EXECUTOR]) {
    nxJson.targetDefaults = { ...defaults, [EXECUTOR]: { inputs: [], cache: true, dependsOn: ['^build'] } };
  }
  tree.write('nx.json', JSON.stringify(nxJson, null, 2) + '\n');
  if (!options.skipFormat) await formatWithWorkspaceDevkit(tree);
}

/** The workspace's `@nx/devkit` formatFiles (prettier, where the workspace has it); nothing without one. */
async function formatWithWorkspaceDevkit(tree: Tree): Promise<void> {
  let devkit: string;
  try {
    devkit = createRequire(join(tree.root, 'package.json')).resolve('@nx/devkit');
  } catch {
    return;
  }
  const { formatFiles } = (await import(pathToFileURL(devkit).href)) as typeof import('@nx/devkit');
  await formatFiles(tree);
}
