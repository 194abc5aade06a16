// Prints the task hashes Nx would compute for a run, without running any task.
//
//   cd <workspace> && node tools/testing/nx-task-hashes.cjs '{"targets":["build"],"projects":null}'
//   → a line "@@KILN_NX_HASHES@@{"hashes":{"@fx/base:build":"845…",…},"deferred":[]}"
//
// It resolves `nx` from the workspace (cwd) and follows what `nx run-many` does before it runs
// anything (nx/src/tasks-runner/run-command.js, Nx 24): build the project graph, create the task
// graph for the projects × targets, create the task hasher, then
// `hashTasksThatDoNotDependOnOutputsOfOtherTasks` — the same call that sets `task.hash` for the
// run. Tasks whose hash needs other tasks' outputs are hashed by Nx only at run time; they are
// listed in `deferred` with a null hash. These are Nx internals (reachable through the package's
// "./src/*" export); tools/test/harness.test.ts checks the result against the hashes Nx records in
// run.json, so a change in Nx shows up there rather than as wrong hashes.
'use strict';
const { createRequire } = require('node:module');
const path = require('node:path');

async function main() {
  const request = JSON.parse(process.argv[2] || '{}');
  const req = createRequire(path.join(process.cwd(), 'package.json'));
  const { createProjectGraphAsync } = req('nx/src/project-graph/project-graph');
  const { readNxJson } = req('nx/src/config/nx-json');
  const { createTaskGraph } = req('nx/src/tasks-runner/create-task-graph');
  const { createTaskHasher } = req('nx/src/hasher/create-task-hasher');
  const { hashTasksThatDoNotDependOnOutputsOfOtherTasks } = req('nx/src/hasher/hash-task');

  const graph = await createProjectGraphAsync({ exitOnError: true });
  const nxJson = readNxJson();
  const targets = request.targets && request.targets.length ? request.targets : ['build'];
  const projects = (request.projects || Object.keys(graph.nodes)).filter((p) => {
    const node = graph.nodes[p];
    if (!node) throw new Error(`no project ${p}`);
    return targets.some((t) => node.data.targets && node.data.targets[t]);
  });
  const taskGraph = createTaskGraph(graph, {}, projects, targets, request.configuration || undefined, {});
  // As getRunnerOptions does for the default runner (e.g. selectivelyHashTsConfig reaches the hasher).
  const runnerOptions = { ...((nxJson.tasksRunnerOptions && nxJson.tasksRunnerOptions.default && nxJson.tasksRunnerOptions.default.options) || {}) };
  const hasher = createTaskHasher(graph, nxJson, runnerOptions, undefined, undefined);
  const deferred = await hashTasksThatDoNotDependOnOutputsOfOtherTasks(hasher, graph, taskGraph, nxJson, null, undefined);
  const tasks = Object.values(taskGraph.tasks).sort((a, b) => a.id.localeCompare(b.id));
  const out = {
    hashes: Object.fromEntries(tasks.map((t) => [t.id, t.hash || null])),
    // Nx < 23 returns nothing: the deferred tasks are then those left without a hash.
    deferred: (deferred ? [...deferred] : tasks.filter((t) => !t.hash).map((t) => t.id)).sort(),
  };
  if (request.details) {
    out.details = Object.fromEntries(tasks.map((t) => [t.id, t.hashDetails || null]));
  }
  process.stdout.write(`\n@@KILN_NX_HASHES@@${JSON.stringify(out)}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
