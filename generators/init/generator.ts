/**
 * `nx add @kiln/nx` / `nx g @kiln/nx:init`: register the kiln plugin in nx.json and make sure keyed
 * targets keep their semantic key. Target defaults override what plugins infer, so a workspace-wide
 * `targetDefaults.build.inputs` (e.g. `production`) would put raw source bytes back into the hash:
 * a filtered default for projects tagged `kiln-keyed` keeps kiln's inputs for the targets the
 * workspace defines (lib/target-defaults.ts), and a default keyed by kiln's executor keeps
 * `inputs: []` for kiln's own build targets (added only with `--addBuildTargets`). Idempotent:
 * running it twice changes nothing.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { formatFiles, logger, readNxJson, updateNxJson, visitNotIgnoredFiles, type Tree } from '@nx/devkit';
import { shadowedTargets, withKeyedTargetDefaults } from './lib/target-defaults.js';
import type { InitGeneratorSchema } from './schema.js';

export const PLUGIN = '@kiln/nx';
export const EXECUTOR = '@kiln/nx:build';

/** The workspace's Nx major, from its installed `nx` (undefined where none resolves). */
function nxMajor(root: string): number | undefined {
  try {
    const version = (createRequire(join(root, 'package.json'))('nx/package.json') as { version: string }).version;
    return Number(version.split('.')[0]);
  } catch {
    return undefined;
  }
}

export default async function initGenerator(tree: Tree, options: InitGeneratorSchema = {}): Promise<void> {
  const nxJson = readNxJson(tree) ?? {};
  const plugins = nxJson.plugins ?? [];
  const targets = options.targets?.length ? options.targets : ['build'];
  const pluginOptions: Record<string, unknown> = {
    ...(options.targets?.length ? { targets } : {}),
    ...(options.addBuildTargets ? { addBuildTargets: true } : {}),
  };
  const index = plugins.findIndex((p) => (typeof p === 'string' ? p : p.plugin) === PLUGIN);
  if (index < 0) {
    nxJson.plugins = [...plugins, Object.keys(pluginOptions).length ? { plugin: PLUGIN, options: pluginOptions } : PLUGIN];
  } else if (Object.keys(pluginOptions).length) {
    // Asked again with options: they are merged into the registration (never removed).
    const current = plugins[index]!;
    const merged = { plugin: PLUGIN, ...(typeof current === 'string' ? {} : current), options: { ...(typeof current === 'string' ? {} : (current.options as object | undefined)), ...pluginOptions } };
    nxJson.plugins = plugins.map((p, i) => (i === index ? merged : p));
  }
  const defaults = nxJson.targetDefaults ?? {};
  if (!defaults[EXECUTOR]) {
    nxJson.targetDefaults = { ...defaults, [EXECUTOR]: { inputs: [], cache: true, dependsOn: ['^build'] } };
  }
  const major = nxMajor(tree.root);
  const keyed = withKeyedTargetDefaults(nxJson.targetDefaults as Record<string, unknown>, targets, major === undefined || major >= 24);
  nxJson.targetDefaults = keyed.targetDefaults as typeof nxJson.targetDefaults;
  for (const n of keyed.notes) logger.warn(`kiln: ${n}`);
  const manifests = new Map<string, unknown>();
  visitNotIgnoredFiles(tree, '', (path) => {
    if (!/(^|\/)(project|package)\.json$/.test(path) || path.includes('node_modules/')) return;
    try {
      manifests.set(path, JSON.parse(tree.read(path, 'utf-8') ?? 'null'));
    } catch {
      // not ours to report: Nx reports malformed project files itself
    }
  });
  for (const line of shadowedTargets(manifests, targets)) logger.warn(`kiln: ${line}`);
  updateNxJson(tree, nxJson);
  if (!options.skipFormat) await formatFiles(tree);
}
