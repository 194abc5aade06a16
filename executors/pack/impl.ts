/**
 * The kiln `pack` executor: the npm tarball a built library publishes, into the target's outputs, so
 * `npm publish <tarball>` (or `nx release publish`) ships exactly what was checked. Thin: normalise the
 * options, refuse an output directory the target does not declare, one core call (`packPackage`,
 * packages/core/src/pack/pack.ts: `npm pack`, then the check that the tarball carries the manifest's
 * entries, kiln.rep, the .d.ts files and the source maps), print npm's file list, return `{ success }`.
 *
 * The tarball is npm's (fixed mtimes, sorted entries): a function of the manifest and the files it
 * publishes, which is what the inferred target's inputs hash, so a cache hit restores the same bytes.
 * Every diagnostic it prints is the text projection of its envelope.
 *
 * `KILN_TRACE=FILE` appends the task's timeline to FILE (`taskTrace`, ../lib/trace.ts).
 */
import { relative, sep } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
import { describePack, diagnostic, formatDiagnostic, packPackage } from '@kiln/core';
import { outputsCover } from '../lib/outputs.js';
import { taskTrace } from '../lib/trace.js';
import type { PackExecutorSchema } from './schema.js';
import { normalizeOptions } from './lib/normalize-options.js';

export default function packExecutor(options: PackExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  return taskTrace(context, () => pack(options, context));
}

async function pack(options: PackExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  const o = normalizeOptions(options, context);
  const rel = (p: string) => relative(o.workspaceRoot, p).split(sep).join('/');
  const project = rel(o.projectRoot);
  // A tarball outside the declared outputs would be written but never cached or restored: refuse first.
  if (o.declaredOutputs && outputsCover(o.declaredOutputs, rel(o.outDir)) === 'no') {
    console.error(formatDiagnostic(diagnostic('KILN_OUTPUTS_UNDECLARED', `${rel(o.outDir)} is not among the target's outputs (${o.declaredOutputs.join(', ')}), so Nx would not cache it`, { producer: 'pack' })));
    console.error(`kiln pack ${project} failed; nothing was written.`);
    return { success: false };
  }
  const r = await packPackage({ packageRoot: o.projectRoot, outDir: o.outDir, representation: o.representation });
  for (const d of r.diagnostics) (d.severity === 'error' ? console.error : console.warn)(formatDiagnostic(d));
  if (!r.success) {
    console.error(`kiln pack ${project} failed; no tarball was written.`);
    return { success: false };
  }
  console.log(`kiln pack ${project}:\n${describePack(r, o.workspaceRoot)}`);
  return { success: true };
}
