#!/usr/bin/env node
// kiln's main job on the embedded example: digest a small package, digest it again (warm store: nothing
// is parsed), then compare it with its next version and say, per declaration, what changed and why.
// Run from the repository root: `npm run demo:digest` (it builds first).
import { $, chalk, fs, os, path } from 'zx';

$.verbose = false;
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const kiln = path.join(root, 'packages/cli/bin/kiln.js');
const v1 = 'fixtures/demo/v1';
const v2 = 'fixtures/demo/v2';
const store = await fs.mkdtemp(path.join(os.tmpdir(), 'kiln-demo-store-'));

const step = (title) => console.log(`\n${chalk.bold(`== ${title}`)}`);
const run = async (...args) => {
  console.log(chalk.dim(`$ kiln ${args.join(' ')}`));
  const p = await $({ cwd: root, nothrow: true })`node ${kiln} ${args} --store ${store}`;
  process.stdout.write(p.stdout);
  if (p.stderr.trim()) process.stdout.write(chalk.yellow(p.stderr));
  if (p.exitCode !== 0) throw new Error(`kiln ${args.join(' ')} exited ${p.exitCode}`);
  return p.stdout;
};

try {
  step('1. Digest version 1 of @demo/geometry (cold store: every file is parsed in the worker pool)');
  await run('digest', v1);
  step('2. Digest it again (warm store: slices are found by content hash, nothing is parsed)');
  const warm = await run('digest', v1);
  if (!/parsed 0,/.test(warm)) throw new Error('the warm run parsed files: the store did not hit');
  step('3. What changed from version 1 to version 2, declaration by declaration, and why');
  console.log(chalk.dim('v2 edits: comments and a reformat in math.ts, a moved function (clamp → util.ts), a body edit (area),'));
  console.log(chalk.dim('a JSDoc edit (perimeter), a new and a removed export, a signature change (format), an added'));
  console.log(chalk.dim('/*#__PURE__*/ annotation, a private method body edit (Circle.#normalise), and swapped side effects.'));
  await run('diff', v1, v2, '--all');
} finally {
  await fs.remove(store);
}
