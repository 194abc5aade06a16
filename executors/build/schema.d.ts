/**
 * Options of the kiln `build` executor, as described by schema.json (a test keeps the two in step:
 * executors/build/test/schema.test.ts).
 */
export interface BuildExecutorSchema {
  /** The tsconfig the build compiles with, relative to the workspace root. */
  tsConfig?: string;
  /** The output directory, relative to the workspace root; must be covered by the target's outputs. */
  outputPath?: string;
  /** Remove the output directory before building (default true). */
  deleteOutputPath?: boolean;
  /** The kiln unit key, filled in by the plugin; hashed by Nx, ignored by the executor. */
  kilnKey?: string;
}
