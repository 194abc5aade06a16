// Stand-in for kiln's plugin in tools/nx-mechanisms.mjs: it attaches a key to each library's existing
// `build` target by one mechanism, and computes nothing (the key is the content of kiln-probe.key at the
// workspace root, so a change reaches the daemon through its file watcher like a source edit would).
//
// options: { mech, executors: { [projectRoot]: executor of the existing build target }, tag, inputs }
//   obj      { executor: <same>, options: { kiln: { key } }, inputs }
//   str      { executor: <same>, options: { kilnKey: key }, inputs }
//   env      { executor: <same>, options: { env: { KILN_KEY: key } }, inputs }
//   noexec   { options: { kiln: { key } }, inputs }                  (no executor: compatible with any; what main's keyedTarget infers)
//   wrap     { executor: 'kiln-run-proto:run', options: { kiln: { key } }, inputs }
//   runtime  { inputs: [{ runtime: 'cat kiln-probe.key' }, { externalDependencies: [] }] }
// `tag` adds the project tag `kiln-keyed` (what a filtered targetDefaults entry selects).
'use strict';
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

exports.name = 'kiln-probe';
exports.createNodesV2 = [
  'libs/*/package.json',
  async (files, options, context) => {
    const key = readFileSync(join(context.workspaceRoot, 'kiln-probe.key'), 'utf8').trim();
    const o = options || {};
    const inputs = o.inputs || [{ externalDependencies: [] }];
    return files.map((file) => {
      const root = dirname(file);
      const executor = (o.executors || {})[root];
      let target;
      switch (o.mech) {
        case 'obj': target = executor && { executor, options: { kiln: { key } }, inputs }; break;
        case 'str': target = executor && { executor, options: { kilnKey: key }, inputs }; break;
        case 'env': target = executor && { executor, options: { env: { KILN_KEY: key } }, inputs }; break;
        case 'noexec': target = executor && { options: { kiln: { key } }, inputs }; break; // as main: only over a target the workspace has
        case 'wrap': target = executor && { executor: 'kiln-run-proto:run', options: { kiln: { key } }, inputs }; break;
        case 'runtime': target = executor && { inputs: [{ runtime: 'cat kiln-probe.key' }, { externalDependencies: [] }] }; break;
        default: target = undefined;
      }
      if (!target) return [file, {}];
      return [file, { projects: { [root]: { ...(o.tag ? { tags: ['kiln-keyed'] } : {}), targets: { build: target } } } }];
    });
  },
];
