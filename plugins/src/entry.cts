/**
 * The entry Nx loads (`require` condition of @kiln/nx's exports): a CommonJS module whose exports object
 * Nx can extend, forwarding to the plugin (index.ts, an ES module) on first use.
 *
 * How each Nx major loads a plugin (nx/src/project-graph/plugins/load-resolved-plugin.js, on every
 * path — in process, in the isolated plugin worker, with or without the daemon):
 *   - 21.0 to 22.6: `require(path)`, then `plugin.name ??= name` on what require() returned. An ES module
 *     entry comes back as its module namespace object (Node.js 20.19+ require() of ESM), which is not
 *     extensible: "Cannot add property name, object is not extensible", and every nx command fails.
 *   - 22.7 to 24: `{ ...(await handleImport(path)) }` (require(), import() on ERR_REQUIRE_ESM): a copy.
 * A CommonJS exports object works with both. The plugin's ES module is imported when Nx first calls
 * it, so loading the entry does no I/O and loads none of kiln.
 *
 * Which export each major calls (nx/src/project-graph/plugins/loaded-nx-plugin.js): 21 refuses a
 * plugin with only `createNodes` and calls `createNodesV2`; 22 calls `createNodesV2 ?? createNodes`;
 * 23 and 24 call `createNodes ?? createNodesV2` (`createNodesV2` is the deprecated name there). Both
 * names are exported, with the same (V2-shaped) function. `createDependencies` is the same in all, and so
 * is `postTasksExecution`. Every hook index.ts exports is forwarded (plugin.test.ts checks the two agree).
 *
 * Before the plugin runs, compat.cts checks the workspace's Nx and this Node.js: where kiln cannot run,
 * Nx reports one error naming kiln, the version found and what is supported (KILN_NX_UNSUPPORTED,
 * KILN_NODE_UNSUPPORTED), and nothing of kiln is loaded.
 */
import compat = require('./compat.cjs');

type Plugin = typeof import('./index.js');
type CreateNodesFn = Plugin['createNodesV2'][1];
type CreateDependenciesFn = Plugin['createDependencies'];
type PostTasksExecutionFn = Plugin['postTasksExecution'];

let plugin: Promise<Plugin> | undefined;
const load = (): Promise<Plugin> => (plugin ??= import('./index.js'));

/** The files the plugin is called for; equal to index.ts's `createNodesV2[0]` (a test checks). */
const PATTERN = '**/package.json';

const createNodesFn: CreateNodesFn = async (configFiles, options, context) => {
  await compat.assertSupported(context.workspaceRoot);
  return (await load()).createNodesV2[1](configFiles, options, context);
};

const createDependencies: CreateDependenciesFn = async (options, context) => {
  await compat.assertSupported(context.workspaceRoot);
  return (await load()).createDependencies(options, context);
};

/** Records the key each keyed task ran with (index.ts); Nx 21 and later call it after every run. */
const postTasksExecution: PostTasksExecutionFn = async (options, context) => {
  await compat.assertSupported(context.workspaceRoot);
  return (await load()).postTasksExecution(options, context);
};

const createNodesV2: Plugin['createNodesV2'] = [PATTERN, createNodesFn];

export = {
  createNodesV2,
  createNodes: createNodesV2,
  createDependencies,
  postTasksExecution,
};
