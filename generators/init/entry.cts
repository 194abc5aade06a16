/**
 * The init generator as Nx loads it (generators.json `factory`): every Nx major require()s a generator's
 * factory, and kiln's generator is an ES module, which require() loads only on Node.js 20.19 / 22.12
 * and later. This CommonJS shim loads anywhere, so `nx g @kiln/nx:init` and `nx add @kiln/nx` refuse
 * with kiln's own message (KILN_NX_UNSUPPORTED, KILN_NODE_UNSUPPORTED: the version found and what is
 * supported) before nx.json is touched, then runs the generator.
 */
import compat = require('../../plugins/src/compat.cjs');
import type { Tree } from '@nx/devkit';
import type { InitGeneratorSchema } from './schema.js';

async function init(tree: Tree, options: InitGeneratorSchema = {}): Promise<void> {
  await compat.assertSupported(tree.root);
  const { default: generator } = await import('./generator.js');
  return generator(tree, options);
}

export = init;
