/**
 * The inferred `codegraph` target: the project's code graph (kiln codegraph JSONL) as a cached build
 * product, written under `dist/codegraph/<projectRoot>/` at the workspace root.
 *
 * Its hash must cover everything the graph records, and a graph records more than a build reads:
 * spans (a comment edit moves them), the raw bytes of manifests (the snapshot identity), and what the
 * checker resolves in dependencies. So the inputs are the raw files of the project and of every
 * project it depends on, the root tsconfigs, the `.d.ts` its dependencies' builds emit (the checker
 * reads those through the packages' `exports`) and — no `externalDependencies` input narrows them —
 * every external package; the options carry kiln's toolchain (extractor, digest and graph schemas).
 * Nothing is left to a custom hasher.
 *
 * Invariant: no per-state key in the options. Nx hashes every target's configuration into every task
 * of the project (its ProjectConfiguration hash), so a key here would move the hash of the project's
 * keyed build target too — a tool-keyed build whose key holds across a dependency's private edit
 * reran because the codegraph's wider key moved (measured on TanStack/form).
 */
import type { TargetConfiguration } from '@nx/devkit';

export const KILN_CODEGRAPH_EXECUTOR = '@kiln/nx:codegraph';

export function codegraphOutputFile(root: string): string {
  return `dist/codegraph/${root}/codegraph.jsonl`;
}

export function codegraphTarget(root: string, tsconfigName: string, toolchain: string, buildTargetName: string): TargetConfiguration {
  return {
    executor: KILN_CODEGRAPH_EXECUTOR,
    inputs: [
      '{projectRoot}/**/*',
      { fileset: '{projectRoot}/**/*', dependencies: true },
      '{workspaceRoot}/tsconfig*.json',
      { dependentTasksOutputFiles: '**/*.d.ts', transitive: true },
    ],
    outputs: ['{workspaceRoot}/dist/codegraph/{projectRoot}'],
    dependsOn: [`^${buildTargetName}`],
    cache: true,
    options: {
      outputFile: codegraphOutputFile(root),
      tsConfig: `{projectRoot}/${tsconfigName}`,
      toolchain,
    },
    metadata: {
      description: 'kiln: export the code graph (JSONL: declarations with digests, imports, references, calls, diagnostics) as a cached build product',
      technologies: ['typescript'],
    },
  };
}
