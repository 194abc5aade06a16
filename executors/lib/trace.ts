/**
 * The build timeline of one Nx task: with `KILN_TRACE=FILE` in the environment, the task appends its
 * capture to FILE (@kiln/core/trace) — its process named by the task id (`@fx/base:build`), one root
 * span (`nx build`, `nx codegraph`) holding core's spans, `success` on it. Every task of one
 * `nx run-many` appends to the same file, so one run gives one trace. Unset, the executor runs as is.
 */
import type { ExecutorContext } from '@nx/devkit';
import { annotate, formatDiagnostic, withTrace } from '@kiln/core/trace';

export function taskTrace(context: ExecutorContext, run: () => Promise<{ success: boolean }>): Promise<{ success: boolean }> {
  const target = context.targetName ?? 'task';
  const task = `${context.projectName ?? '?'}:${target}${context.configurationName ? `:${context.configurationName}` : ''}`;
  return withTrace(
    process.env.KILN_TRACE,
    { process: task, root: `nx ${target}` },
    async () => {
      const result = await run();
      annotate('success', result.success);
      return result;
    },
    (d) => console.warn(formatDiagnostic(d)),
  );
}
