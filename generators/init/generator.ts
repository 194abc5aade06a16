/**
 * `nx add @kiln/nx` / `nx g @kiln/nx:init`: register the kiln plugin in nx.json and make sure the
 * inferred build target keeps its semantic key. Target defaults override what plugins infer, so a
 * workspace-wide `targetDefaults.build.inputs` (e.g. `production`) would put raw source bytes back
 * into the hash; a target default keyed by kiln's executor takes precedence over the `build` one and
 * keeps `inputs: []`. Idempotent: running it twice changes nothing.
 */
import { formatFiles, readNxJson, updateNxJson, type Tree } from '@nx/devkit';
import type { InitGeneratorSchema } from './schema.js';

export const PLUGIN = '@kiln/nx';
export const EXECUTOR = '@kiln/nx:build';

export default async function initGenerator(tree: Tree, options: InitGeneratorSchema = {}): Promise<void> {
  const nxJson = readNxJson(tree) ?? {};
  const plugins = nxJson.plugins ?? [];
  if (!plugins.some((p) => (typeof p === 'string' ? p : p.plugin) === PLUGIN)) {
    nxJson.plugins = [...plugins, PLUGIN];
  }
  const defaults = nxJson.targetDefaults ?? {};
  if (!defaults[EXECUTOR]) {
    nxJson.targetDefaults = { ...defaults, [EXECUTOR]: { inputs: [], cache: true, dependsOn: ['^build'] } };
  }
  updateNxJson(tree, nxJson);
  if (!options.skipFormat) await formatFiles(tree);
}
