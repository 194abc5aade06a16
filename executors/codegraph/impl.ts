/**
 * The kiln `codegraph` executor: exports the project's code graph as JSONL into the target's outputs,
 * so the graph is a cached build product (restored by Nx, shared through its remote cache). Thin:
 * normalise the options, one core call (`exportGraph`), write, return `{ success }`.
 *
 * The output is byte-for-byte a function of its inputs (no timestamps, no absolute paths), so a cache
 * hit restores exactly what a fresh run would write. Checked mode fails on type errors and writes
 * nothing; `allowErrors` exports what parses, with the diagnostics as records. Every diagnostic it
 * prints is the text projection of its envelope (`formatDiagnostic`, @kiln/core diagnostics/envelope.ts).
 *
 * `KILN_TRACE=FILE` appends the task's timeline to FILE (`taskTrace`, ../lib/trace.ts).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative, sep } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
import { diagnostic, exportGraph, formatDiagnostic, graphText } from '@kiln/core';
import { outputsCover } from '../lib/outputs.js';
import { taskTrace } from '../lib/trace.js';
import type { CodegraphExecutorSchema } from './schema.js';
import { normalizeOptions } from './lib/normalize-options.js';

export default function codegraphExecutor(options: CodegraphExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  return taskTrace(context, () => codegraph(options, context));
}

async function codegraph(options: CodegraphExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  const o = normalizeOptions(options, context);
  const project = relative(o.workspaceRoot, o.projectRoot).split(sep).join('/');
  const file = relative(o.workspaceRoot, o.outputFile).split(sep).join('/');
  if (o.declaredOutputs && outputsCover(o.declaredOutputs, dirname(file)) === 'no' && outputsCover(o.declaredOutputs, file) === 'no') {
    console.error(formatDiagnostic(diagnostic('KILN_OUTPUTS_UNDECLARED', `${file} is not among the target's outputs (${o.declaredOutputs.join(', ')}), so Nx would not cache it`, { producer: 'codegraph' })));
    console.error(`kiln codegraph ${project} failed; nothing was written.`);
    return { success: false };
  }
  const result = await exportGraph(o.projectRoot, { mode: o.mode, ...(o.tsConfig !== undefined ? { tsConfig: o.tsConfig } : {}) });
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  // Checked mode: every error is printed (they fail the task). Tolerant mode: they are records in the graph; print a few.
  const shown = result.ok ? errors.slice(0, 10) : errors;
  for (const d of shown) console.error(formatDiagnostic(d));
  if (result.ok && errors.length > shown.length) console.error(`… and ${errors.length - shown.length} more error(s), recorded in the graph as diagnostic records`);
  if (!result.ok) {
    console.error(`kiln codegraph ${project} failed with ${errors.length} error(s) in checked mode; nothing was written. Set "allowErrors": true to export what parses.`);
    return { success: false };
  }
  const text = graphText(result);
  await mkdir(dirname(o.outputFile), { recursive: true });
  const tmp = `${o.outputFile}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, o.outputFile);
  const nodes = result.records.filter((r) => typeof (r as { from?: unknown }).from !== 'string').length - 1;
  console.log(`kiln codegraph ${project}: ${file} (${o.mode}, ${nodes} nodes, ${result.records.length - 1 - nodes} edges)`);
  return { success: true };
}
