/**
 * `nx add @kiln/nx` / `nx g @kiln/nx:init`: register the kiln plugin in nx.json and make sure keyed
 * targets keep their semantic key. Target defaults override what plugins infer, so a workspace-wide
 * `targetDefaults.build.inputs` (e.g. `production`) would put raw source bytes back into the hash:
 * a filtered default for projects tagged `kiln-keyed` keeps kiln's inputs for the targets the
 * workspace defines (lib/target-defaults.ts), and a default keyed by kiln's executor keeps
 * `inputs: [{ externalDependencies: [] }]` for kiln's own build targets (added only with
 * `--addBuildTargets`; an `inputs: []` an earlier kiln wrote is upgraded to it; `--addPackTargets`
 * (default: follows `--addBuildTargets`) adds or, `=false`, withholds the `pack` targets). Idempotent:
 * running it twice changes nothing.
 *
 * First of all it checks that kiln can run in the workspace (its Nx version, this Node.js): where it
 * cannot, it throws kiln's diagnostic and changes nothing (Nx exits non-zero); on an Nx newer than kiln
 * was tested with it warns and goes on.
 *
 * kiln has no runtime dependency on `@nx/devkit` (whose major must match the workspace's Nx): nx.json
 * is read and written through the Tree Nx hands it, and the workspace's own `@nx/devkit` is used where
 * it resolves (file walk honouring ignores, logger, formatting); without one, a plain walk of the Tree
 * (no node_modules, no dot folders), console warnings and no formatting.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { NxJsonConfiguration, Tree } from '@nx/devkit';
import { diagnostic, formatDiagnostic } from '@kiln/core/affected';
import compat from '../../plugins/src/compat.cjs';
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

type Devkit = typeof import('@nx/devkit');

/** The workspace's own `@nx/devkit`, where it resolves from the workspace root. */
async function workspaceDevkit(root: string): Promise<Devkit | undefined> {
  try {
    const file = createRequire(join(root, 'package.json')).resolve('@nx/devkit');
    return (await import(pathToFileURL(file).href)) as Devkit;
  } catch {
    return undefined;
  }
}

/** Every file of the Tree but node_modules and dot folders (used where the workspace has no @nx/devkit). */
function visitFiles(tree: Tree, dir: string, visit: (path: string) => void): void {
  for (const name of tree.children(dir)) {
    const path = dir ? `${dir}/${name}` : name;
    if (tree.isFile(path)) visit(path);
    else if (name !== 'node_modules' && !name.startsWith('.')) visitFiles(tree, path, visit);
  }
}

export default async function initGenerator(tree: Tree, options: InitGeneratorSchema = {}): Promise<void> {
  const support = await compat.assertSupported(tree.root);
  const devkit = await workspaceDevkit(tree.root);
  const warn = (m: string) => (devkit ? devkit.logger.warn(m) : console.warn(m));
  // Every warning is a diagnostic envelope's text projection (code, location, hint).
  if (support.untested) warn(formatDiagnostic(diagnostic('KILN_NX_UNTESTED', support.untested, { producer: 'init' })));
  const nxJson: NxJsonConfiguration = tree.exists('nx.json') ? (JSON.parse(tree.read('nx.json', 'utf-8') ?? '{}') as NxJsonConfiguration) : {};
  const plugins = nxJson.plugins ?? [];
  const targets = options.targets?.length ? options.targets : ['build'];
  const pluginOptions: Record<string, unknown> = {
    ...(options.targets?.length ? { targets } : {}),
    ...(options.addBuildTargets ? { addBuildTargets: true } : {}),
    // Written only when asked either way: unset, the plugin follows addBuildTargets.
    ...(typeof options.addPackTargets === 'boolean' ? { addPackTargets: options.addPackTargets } : {}),
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
  const mine = defaults[EXECUTOR] as { inputs?: unknown } | undefined;
  if (!mine) {
    nxJson.targetDefaults = { ...defaults, [EXECUTOR]: { inputs: [{ externalDependencies: [] }], cache: true, dependsOn: ['^build'] } };
  } else if (Array.isArray(mine.inputs) && mine.inputs.length === 0) {
    // What an earlier kiln wrote: with no externalDependencies input Nx hashes every external
    // dependency, so any lockfile change reran every kiln build. Upgraded in place, nothing else touched.
    nxJson.targetDefaults = { ...defaults, [EXECUTOR]: { ...mine, inputs: [{ externalDependencies: [] }] } };
  }
  const major = nxMajor(tree.root);
  const keyed = withKeyedTargetDefaults(nxJson.targetDefaults as Record<string, unknown>, targets, major === undefined || major >= 24);
  nxJson.targetDefaults = keyed.targetDefaults as typeof nxJson.targetDefaults;
  for (const n of keyed.notes) warn(formatDiagnostic(diagnostic('KILN_TARGET_INPUTS_SHADOWED', n, { file: 'nx.json', producer: 'init' })));
  const manifests = new Map<string, unknown>();
  const visitNotIgnored = devkit ? (fn: (path: string) => void) => devkit.visitNotIgnoredFiles(tree, '', fn) : (fn: (path: string) => void) => visitFiles(tree, '', fn);
  visitNotIgnored((path) => {
    if (!/(^|\/)(project|package)\.json$/.test(path) || path.includes('node_modules/')) return;
    try {
      manifests.set(path, JSON.parse(tree.read(path, 'utf-8') ?? 'null'));
    } catch {
      // not ours to report: Nx reports malformed project files itself
    }
  });
  for (const s of shadowedTargets(manifests, targets)) warn(formatDiagnostic(diagnostic('KILN_TARGET_INPUTS_SHADOWED', s.message, { file: s.file, producer: 'init' })));
  tree.write('nx.json', JSON.stringify(nxJson, null, 2) + '\n');
  if (!options.skipFormat && devkit) await devkit.formatFiles(tree);
}
