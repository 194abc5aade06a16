/**
 * @kiln/core — public API: what kiln's products use (the CLI, the MCP server, the Nx plugin, its
 * executors and generator), and the types their signatures name. Everything else is internal and is
 * imported from its module by tests and tools. Importing this module does no I/O and loads no parser:
 * workers and the CLI pay only for what they use.
 */

// Format and schema versions; diagnostics: the code registry, constructors, the error, the envelope and its projections.
export * from './version.js';
export * from './diagnostics/codes.js';
export * from './diagnostics/diagnostic.js';
export * from './diagnostics/envelope.js';

// facts/ + view/: the digest report of one tree.
export { supportedDigestSchemas } from './facts/extract.js';
export { digestTree, type DigestTreeOptions } from './view/digest-tree.js';
export type { DigestReport } from './view/report.js';

// diff/: two reports compared, with reasons.
export { diffReports, type DiffResult, type DiffOptions } from './diff/diff.js';

// store/: where the slice store lives, and its garbage collection.
export { defaultStoreDir } from './store/format.js';
export { collectGarbage, type GcOptions, type GcResult } from './store/gc.js';

// workspace/: discovery, tsconfig lookup, the target definitions a key reads.
export { discoverWorkspace, type Workspace } from './workspace/discover.js';
export { readTsconfig, findTsconfig, type TsconfigView } from './workspace/tsconfig.js';
export { readTargetDefinitions, buildKeyTsconfig, declaredOutputs, outputsOverlap, KILN_BUILD_EXECUTOR, type TargetDefinition, type TargetDefinitions } from './workspace/target-definitions.js';

// key/: unit and tool keys, their records and explanations.
export { computeWorkspaceKeys, type KeyComponents, type ProjectKey, type WorkspaceKeys, type WorkspaceKeyOptions } from './key/unit-key.js';
export { computeAffected, type AffectedOptions, type AffectedResult, type AffectedTarget, type TargetRule } from './affected/affected.js';
export { affectedByDeclaration, formatDeclarationImpact, type DeclarationImpact } from './affected/by-declaration.js';
export { findWorkspaceRoot } from './view/locate.js';
export type { ToolTargetSpec, ToolKeyComponents } from './key/tool-key.js';
export { recordBuilt, readBuilt, readComponents, type BuiltRecord } from './key/records.js';
export { explainKeyChange, explainToolKeyChange, type KeyChange } from './key/explain.js';

// compile/: the build executor's compilation.
export { compileProject, resolveBuildOutputs, type CompileOptions, type CompileResult, type BuildDiagnostic } from './compile/compile.js';

// graph/: export of one package's codegraph, its session and schema.
export { exportGraph, graphText, type GraphExportOptions, type GraphExportResult } from './graph/export.js';
export { createGraphSession, type GraphSession } from './graph/session.js';
export { graphSchema } from './graph/schema.js';

// graph/query/: a loaded graph and the queries over it, with their text forms.
export { loadGraph, type LoadGraphOptions, type LoadedGraph } from './graph/query/load.js';
export type { GraphIndex } from './graph/query/graph-index.js';
export { graphSummary, type GraphSummary } from './graph/query/summary.js';
export { findIdentifiers, type FindHit, type FindOptions } from './graph/query/find.js';
export { moduleView, type ModuleView } from './graph/query/module-view.js';
export { neighborhood, type Neighborhood, type NeighborOptions } from './graph/query/neighbors.js';
export { formatSummaryText, formatFindText, formatModuleText, formatNeighborsText } from './graph/query/text.js';

// graph/context/: freshness and context packs.
export { checkFreshness, type Freshness } from './graph/context/freshness.js';
export { contextPack, explainContext, formatExplanationText, type ContextRequest, type ContextOptions, type ContextResult, type ContextExplanation } from './graph/context/context-pack.js';

// represent/: the executable representation of a built package's public surface (SPEC §7).
export { produceRepresentation, type ProduceOptions, type ProduceResult } from './represent/produce.js';
export { describeWritten, writeRepresentation, type WrittenRepresentation } from './represent/write.js';
export { readPublicSurface, type PublicSurface } from './represent/surface.js';
// Where kiln.rep lives: the runtime's one rule, for the executors (which import core only).
export { representationPath } from '@kiln/runtime';

// pack/: the npm tarball a built package publishes, checked to carry the build's products (issue 15 point 8).
export { describePack, manifestEntries, packPackage, requiredPackFiles, type PackOptions, type PackResult, type PackedFile, type RequiredFile } from './pack/pack.js';

// debug artifacts: debug IDs, the debug store, symbolication (SPEC §8)
// (the rest of the stage is the `@kiln/core/debug` entry: symbolication, the runtime hook, the store's records)
export { ingestProjectOutputs } from './debug/index.js';
