// PROTOTYPE — not part of kiln's product, not built, not published (kept under tools/, out of
// executors/, whose schemas tools/assemble-nx.mjs copies into the package). It exists only so that
// tools/nx-mechanisms.mjs can measure the "wrapper executor" mechanism of issue 11 (a `@kiln/nx:run`
// that runs a target's original configuration). The measurement copies this folder into its temp
// workspaces as the package `kiln-run-proto` (executor `kiln-run-proto:run`).
//
// Target shape an init step would write into project.json (or package.json `nx.targets`):
//   "build": { "executor": "kiln-run-proto:run",
//              "options": { "run": { "executor": "@nx/js:tsc", "options": { … }, "configurations": { … } } } }
// kiln's plugin then infers `build: { executor: "kiln-run-proto:run", options: { kiln: { key } }, inputs }`,
// which merges into it (same executor); `options.kiln` is kiln's and never reaches the tool.
//
// How it runs the original: it hands Nx a copy of the workspace's project configurations in which this
// target is the original one, and calls devkit's public `runExecutor` — so Nx itself resolves the original
// executor, applies its schema defaults, validates the options and calls it, exactly as for the target
// without kiln. Options the wrapper receives besides `run` and `kiln` are the command line's overrides
// (`nx build p --watch`) and are passed on as overrides.
'use strict';

module.exports = async function* kilnRunProto(options, context) {
  const { run, kiln, ...overrides } = options;
  if (!run || typeof run.executor !== 'string') throw new Error('kiln-run-proto: options.run.executor is missing');
  const { runExecutor } = require(require.resolve('@nx/devkit', { paths: [context.root] }));
  const inner = {
    ...context.target,
    executor: run.executor,
    options: run.options ?? {},
    configurations: run.configurations ?? {},
    ...(run.defaultConfiguration ? { defaultConfiguration: run.defaultConfiguration } : {}),
  };
  const project = context.projectName;
  const target = context.targetName;
  const projects = { ...context.projectsConfigurations.projects };
  projects[project] = { ...projects[project], targets: { ...projects[project].targets, [target]: inner } };
  const graph = context.projectGraph;
  const node = graph && graph.nodes[project];
  const projectGraph = node
    ? { ...graph, nodes: { ...graph.nodes, [project]: { ...node, data: { ...node.data, targets: { ...node.data.targets, [target]: inner } } } } }
    : graph;
  const innerContext = {
    ...context,
    target: inner,
    projectsConfigurations: { ...context.projectsConfigurations, projects },
    projectGraph,
  };
  for await (const result of await runExecutor({ project, target, configuration: context.configurationName }, overrides, innerContext)) {
    yield result;
  }
};
