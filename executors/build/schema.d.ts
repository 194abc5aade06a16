/**
 * Options of the kiln `build` executor, as described by schema.json (a test keeps the two in step:
 * executors/build/test/schema.test.ts).
 */
export interface BuildExecutorSchema {
  /** The build tsconfig, relative to the workspace root; the plugin keys the target with the same file. */
  tsConfig?: string;
  /** The output directory, relative to the workspace root; must be covered by the target's outputs. */
  outputPath?: string;
  /** Remove the output directory before building (default true). */
  deleteOutputPath?: boolean;
  /** Module formats to write where package.json names no path for them (default: what package.json asks). */
  formats?: ('esm' | 'cjs')[];
  /** Read package.json entry points and write every build path they name (default true). */
  exports?: boolean;
  /** Globs of files (relative to the project root) not compiled or emitted (default: tests and tool configs). */
  exclude?: string[];
  /** Write the package's executable representation, kiln.rep, from the build's output (default true). */
  representation?: boolean;
  /** The kiln unit key, filled in by the plugin; hashed by Nx, ignored by the executor. */
  kilnKey?: string;
}
