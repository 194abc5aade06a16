/** Options of the init generator; kept equal to schema.json (a test compares them). */
export interface InitGeneratorSchema {
  skipFormat?: boolean;
  /** Targets kiln keys where the workspace defines them (default: build). */
  targets?: string[];
  /** Add kiln's own build target to TypeScript libraries that have none. */
  addBuildTargets?: boolean;
  /** Add the pack target to the libraries kiln builds (unset: follows addBuildTargets). */
  addPackTargets?: boolean;
}
