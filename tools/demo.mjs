#!/usr/bin/env node
// kiln's main job on the embedded example: a real Nx workspace (fixtures/workspace-basic: base ← left,
// right ← top ← tail) in a temp git repo, with the kiln plugin registered by its init generator. Build
// it, make a comment-only edit and a private-body edit in `base`, ask kiln why each build will or will
// not rerun, build again, and show the cache hits. Run from the repository root: `npm run demo`.
import { chalk } from 'zx';
import { join } from 'node:path';
import { createWorkspace, disposeAll, exec, KILN_ROOT } from './testing/workspace.mjs';

const kiln = join(KILN_ROOT, 'packages/cli/bin/kiln.js');
const step = (title) => console.log(`\n${chalk.bold(`== ${title}`)}`);
const show = (run) => {
  for (const [task, outcome] of Object.entries(run.statuses)) {
    const label = outcome === 'executed' ? chalk.yellow('built     ') : chalk.green(`cache hit (${outcome})`);
    console.log(`  ${task.padEnd(18)} ${label}`);
  }
};

try {
  step('1. A fresh Nx 24 workspace with five TypeScript libraries; register kiln (nx g @kiln/nx:init --addBuildTargets: the libraries have no build target, so kiln adds its own)');
  const ws = await createWorkspace('workspace-basic', { prepare: (w) => w.removePackageNxConfig() });
  await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
  await ws.commit('register kiln');
  console.log(`  nx.json plugins: ${JSON.stringify((await ws.readJson('nx.json')).plugins)} — each library gets an inferred build target keyed by kiln`);

  step('2. nx run-many -t build (cold: everything builds)');
  show(await ws.runNx(['run-many', '-t', 'build']));

  step('3. Edit libs/base/src/greet.ts: a comment-only edit, and a change to the private helper normalize()');
  await ws.edit('libs/base/src/greet.ts', ['function normalize', '// Collapses runs of whitespace; callers declare their return types.\nfunction normalize']);
  await ws.edit('libs/base/src/greet.ts', ["replace(/\\s+/g, ' ')", "replace(/\\s+/g, ' ').normalize('NFC')"]);
  console.log(chalk.dim((await ws.git('diff', '--', 'libs/base/src/greet.ts')).split('\n').filter((l) => /^[-+][^-+]/.test(l)).map((l) => `  ${l}`).join('\n')));

  step('4. Before building, ask kiln why each build will or will not rerun (kiln explain-miss)');
  for (const project of ['@fx/base', '@fx/left']) {
    const r = await exec(process.execPath, [kiln, 'explain-miss', `${project}:build`], { cwd: ws.root });
    process.stdout.write(r.stdout.split('\n').map((l) => (l ? `  ${l}` : l)).join('\n'));
  }

  step('5. nx run-many -t build again: only base rebuilds; its dependents are cache hits (its public surface did not change)');
  show(await ws.runNx(['run-many', '-t', 'build']));
  const out = await ws.node(`import { run } from '@fx/tail'; console.log(run(' Ada  Lovelace '));`);
  console.log(`  the built workspace still runs: run(' Ada  Lovelace ') → ${out.trim()}`);

  step("6. kiln keys: every package's key and its components, without running Nx");
  const keys = await exec(process.execPath, [kiln, 'keys'], { cwd: ws.root });
  process.stdout.write(keys.stdout.split('\n').slice(0, 16).map((l) => `  ${l}`).join('\n') + '\n  …\n');
  console.log(chalk.dim('\n(The declaration-level view of the same idea: `npm run demo:digest` runs kiln digest/diff on fixtures/demo.)'));
} finally {
  await disposeAll();
}
