/**
 * The kiln `build` executor: compiles a TypeScript library into what its package.json publishes —
 * every layout its `exports`/`main`/`module`/`types`/`bin` name (ESM and CommonJS, `.d.ts`/`.d.cts`),
 * JavaScript without non-meaningful comments, `.d.ts` with JSDoc, source maps; tests and tool configs
 * left out — into the target's declared outputs, every JS file with a debug ID, and the package's
 * executable representation (kiln.rep) beside its main entry. Thin: normalise the options, make one
 * core call (`compileProject`, packages/core/src/compile/), put the debug artifacts into the local
 * store (`ingestProjectOutputs`), write the representation (`writeRepresentation`), print the
 * diagnostics, return `{ success }`.
 *
 * No custom hasher (deprecated in Nx 24, removed in Nx 25): the kiln unit key reaches Nx's task hash
 * through the `kilnKey` option, which Nx hashes up front like every option; the executor ignores it.
 *
 * Nx 24 loads an executor with `require()`; this module is ESM (the package is `"type": "module"`),
 * which Node ≥ 20.19 loads through `require(esm)` (no top-level await here or in @kiln/core).
 *
 * `KILN_TRACE=FILE` appends the task's timeline to FILE (`taskTrace`, ../lib/trace.ts).
 */
import type { ExecutorContext } from '@nx/devkit';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  compileProject,
  defaultStoreDir,
  describeWritten,
  diagnostic,
  formatEnvelopeText,
  ingestProjectOutputs,
  KilnError,
  recordBuilt,
  representationPath,
  resolveBuildOutputs,
  toEnvelope,
  writeRepresentation,
  type BuildDiagnostic,
  type CompileOptions,
} from '@kiln/core';
import type { BuildExecutorSchema } from './schema.js';
import { outputsCover } from '../lib/outputs.js';
import { taskTrace } from '../lib/trace.js';
import { normalizeOptions, sharedOutputs, toWorkspacePath } from './lib/normalize-options.js';

export default function buildExecutor(options: BuildExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  return taskTrace(context, () => build(options, context));
}

async function build(options: BuildExecutorSchema, context: ExecutorContext): Promise<{ success: boolean }> {
  const o = normalizeOptions(options, context);
  const project = toWorkspacePath(o.workspaceRoot, o.projectRoot);
  // An outputPath the target does not declare would be written but never cached: refuse before writing.
  if (o.outDir !== undefined && o.declaredOutputs && !checkCovered(o.declaredOutputs, toWorkspacePath(o.workspaceRoot, o.outDir))) {
    console.error(`kiln build ${project} failed; nothing was written.`);
    return { success: false };
  }
  const compileOptions: CompileOptions = {
    projectRoot: o.projectRoot,
    ...(o.tsConfig !== undefined ? { tsconfig: o.tsConfig } : {}),
    ...(o.outDir !== undefined ? { outDir: o.outDir } : {}),
    clean: o.deleteOutputPath,
    relativeTo: o.workspaceRoot,
    exports: o.exports,
    ...(o.formats ? { formats: o.formats } : {}),
    ...(o.exclude ? { exclude: o.exclude } : {}),
  };
  // Another target's outputs in the build's directory: a cache restore of either deletes the other's
  // files (and the clean step would now). Refuse before anything is removed or written.
  const planned = resolveBuildOutputs(compileOptions);
  const shared = sharedOutputs(context, planned.outputDirs.map((d) => toWorkspacePath(o.workspaceRoot, d)));
  if (shared.length) {
    for (const s of shared) {
      console.error(
        formatBuildDiagnostic(
          diagnostic('KILN_BUILD_OUTPUTS_SHARED', `${s.dir} is written by this build, and ${s.task} declares the output ${s.output}`, { producer: 'build' }),
        ),
      );
    }
    console.error(`kiln build ${project} failed; nothing was written.`);
    return { success: false };
  }
  const result = await compileProject(compileOptions);
  for (const d of result.diagnostics) (d.severity === 'error' ? console.error : console.warn)(formatBuildDiagnostic(d));

  if (!result.success) {
    const errors = result.diagnostics.filter((d) => d.severity === 'error').length;
    console.error(`kiln build ${project} failed${errors ? ` with ${errors} error${errors === 1 ? '' : 's'}` : ''}; nothing was written.`);
    return { success: false };
  }
  // Output directories the tsconfig chose (outDir, declarationDir) are known only now.
  if (o.declaredOutputs && !result.outputDirs.every((dir) => checkCovered(o.declaredOutputs!, dir))) {
    console.error(`kiln build ${project} failed: it wrote outside the target's outputs, so Nx must not cache it.`);
    return { success: false };
  }
  if (options.kilnKey && context.projectName && context.targetName) {
    // Remember the key this build ran with, so `kiln explain-miss` can say what moved next time.
    await recordBuilt(o.workspaceRoot, context.projectName, context.targetName, options.kilnKey).catch(() => undefined);
  }
  // Debug artifacts (SPEC §8): the maps, their retained sources and a declaration index go into the
  // local debug store by debug ID. A failure is a warning: the build's outputs are already right.
  const debug = await ingestProjectOutputs({ storeDir: defaultStoreDir(), workspaceRoot: o.workspaceRoot, projectRoot: o.projectRoot, files: result.emitted });
  for (const d of debug.diagnostics) console.warn(formatBuildDiagnostic(d));
  // The executable representation (SPEC §7): from this build's output and kiln's facts, into the
  // target's outputs beside the main entry's JS, so a cache hit restores it with the JS it describes.
  let represented = '';
  const manifestFile = join(o.projectRoot, 'package.json');
  if (o.representation && existsSync(manifestFile)) {
    try {
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
      const at = toWorkspacePath(o.workspaceRoot, representationPath(o.projectRoot, manifest));
      if (manifest.exports === undefined && manifest.main === undefined && manifest.module === undefined) {
        represented = '; no kiln.rep (package.json names no entry point)';
      } else if (o.declaredOutputs && outputsCover(o.declaredOutputs, dirname(at)) === 'no') {
        // Written there, it would not be cached: a cache hit would restore the JS without it.
        console.warn(formatBuildDiagnostic(diagnostic('KILN_REP_PRODUCE_FAILED', `${at} (beside the main entry's JS) is outside the target's outputs (${o.declaredOutputs.join(', ')}): not written`, { producer: 'build' })));
      } else {
        const w = await writeRepresentation({ packageRoot: o.projectRoot, workspaceRoot: o.workspaceRoot });
        for (const d of w.diagnostics) console.warn(formatBuildDiagnostic(d));
        represented = `; ${describeWritten(w)}`;
      }
    } catch (e) {
      // A package may ship no representation (RFC 123); the JS and .d.ts are already right.
      const d = e instanceof KilnError ? e.diagnostic : diagnostic('KILN_REP_PRODUCE_FAILED', `${project}: ${(e as Error).message}`, { producer: 'build' });
      console.warn(formatBuildDiagnostic(d));
    }
  }
  const layouts = result.layouts.filter((l) => l.kind === 'js').map((l) => `${l.format === 'esm' ? 'ESM' : 'CommonJS'} ${l.dir}/*${l.ext}`);
  console.log(
    `kiln build ${project}: ${result.emitted.length} files into ${result.outputDirs.join(', ')} (${layouts.join(', ')}; TypeScript ${result.typescript.version}, ${result.tsconfig}${
      result.excluded.length ? `; ${result.excluded.length} test/config file${result.excluded.length === 1 ? '' : 's'} not built` : ''
    })${represented}`,
  );
  return { success: true };
}

/** Whether the declared outputs capture `dir` (workspace-relative); prints why not. */
function checkCovered(declared: string[], dir: string): boolean {
  const covered = outputsCover(declared, dir);
  if (covered === 'yes') return true;
  const msg = `output directory ${dir} is not among the target's outputs (${declared.join(', ')}): Nx would not cache what the build writes`;
  if (covered === 'unknown') {
    console.warn(formatBuildDiagnostic(diagnostic('KILN_OUTPUTS_GLOB_UNCHECKED', `${msg}, unless a glob output matches it`, { producer: 'build' })));
    return true;
  }
  console.error(formatBuildDiagnostic(diagnostic('KILN_OUTPUTS_UNDECLARED', msg, { producer: 'build' })));
  return false;
}

/**
 * `file:line:col - error TS2322: message`, the form editors and terminals link; kiln codes add their
 * hint. The text projection of the diagnostic's envelope (@kiln/core diagnostics/envelope.ts).
 */
export function formatBuildDiagnostic(d: BuildDiagnostic): string {
  return formatEnvelopeText(toEnvelope(d));
}
