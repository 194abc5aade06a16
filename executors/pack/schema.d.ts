/**
 * Options of the kiln `pack` executor, as described by schema.json (a test keeps the two in step:
 * executors/pack/test/pack-executor.test.ts).
 */
export interface PackExecutorSchema {
  /** The directory the tarball goes into, relative to the workspace root; emptied first; must be inside the target's outputs. */
  outputPath?: string;
  /** Require kiln.rep in the tarball (default true). */
  representation?: boolean;
}
