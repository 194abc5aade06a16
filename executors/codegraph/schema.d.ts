/**
 * Options of the kiln `codegraph` executor, as described by schema.json (a test keeps the two in step:
 * executors/codegraph/test/codegraph-executor.test.ts).
 */
export interface CodegraphExecutorSchema {
  /** The JSONL file to write, relative to the workspace root; must be inside the target's outputs. */
  outputFile?: string;
  /** Tolerant mode (export what parses, diagnostics as records); default false (checked). */
  allowErrors?: boolean;
  /** The tsconfig to read, relative to the workspace root. */
  tsConfig?: string;
  /** kiln's toolchain versions, filled in by the plugin; hashed by Nx, ignored by the executor. */
  toolchain?: string;
  /** Deprecated: accepted and ignored. */
  kilnKey?: string;
}
