/**
 * @kiln/core — public API. Importing this module does no I/O and loads no parser: workers and the
 * CLI pay only for what they use.
 */
export * from './version.js';
export * from './diagnostics/codes.js';
export * from './diagnostics/diagnostic.js';
export * from './parse/language.js';
export { decodeSource, DEFAULT_MAX_FILE_SIZE } from './parse/decode.js';
export type { Slice, DeclFact, DeclKind, ModuleFact, ImportFact, ReExportFact, LocalExportFact, Span, SliceDiagnostic } from './facts/slice.js';
export { extractSlice, supportedDigestSchemas, MAX_WALK_DEPTH, type ExtractOptions } from './facts/extract.js';
export { classifyComment } from './facts/comments.js';
export { identityKey, surfaceKey, type Identity, type SurfaceIdentity } from './identity/identity.js';
export { digestTree, type DigestTreeOptions } from './view/digest-tree.js';
export type { DigestReport, DeclarationRecord, FileRecord, DigestStats, EntryRecord } from './view/report.js';
export { diffReports, type DiffResult, type DeclChange, type ModuleChange, type ChangeStatus, type DiffOptions } from './diff/diff.js';
export { readSlice, type ReadResult } from './store/read-slice.js';
export { writeSlice } from './store/write-slice.js';
export { sliceKey, packKey, manifestKey, registryKey, viewReportKey, viewIdOf, defaultStoreDir } from './store/format.js';
export { encodePack, packItemOf, type PackItem, type PackRef } from './store/pack.js';
export { readManifest, encodeManifest, decodeManifest, type Manifest, type ManifestEntry } from './store/manifest.js';
export { readViewReport, reportInput, type ReportInput } from './view/report-memo.js';
export { collectGarbage, type GcOptions, type GcResult } from './store/gc.js';
export { createDigestPool, withDigestPool, defaultWorkerCount, type DigestPool } from './pool/pool.js';
export type { DigestTask, DigestTaskResult } from './pool/worker.js';
export { listSourceFiles } from './view/files.js';
export { readPackageInfo, type PackageInfo } from './view/package.js';
export { sha256Hex, digestParts } from './digest/hash.js';
export { discoverWorkspace, expandPatterns, parsePnpmWorkspace, type Workspace, type WorkspaceProject } from './workspace/discover.js';
export { readLockfile, externalKeyPart, type Lockfile, type ExternalClosure, type ExternalKeyPart } from './workspace/lockfile.js';
export { computeClosures, type ClosureResult, type ClosureFlavour } from './closure/closure.js';
export { readTsconfig, findTsconfig, TSCONFIG_CANDIDATES, type TsconfigView } from './workspace/tsconfig.js';
export { resolveTypeScript } from './workspace/typescript.js';
export { commandWords, bundlePolicy, packageOfBin, toolOutputs, type ToolTargetSpec, type ToolKeyComponents, type BundlePolicy } from './key/tool-key.js';
export { resolveManifestTarget } from './view/resolve.js';
export { readTargetDefinitions, buildKeyTsconfig, declaredOutputs, outputsOverlap, KILN_BUILD_EXECUTOR, type TargetDefinition, type TargetDefinitions } from './workspace/target-definitions.js';
export { manifestView, fullManifestDigest, type ManifestView } from './key/manifest.js';
export {
  computeWorkspaceKeys,
  keyOf,
  type KeyComponents,
  type ProjectKey,
  type WorkspaceKeys,
  type WorkspaceKeyOptions,
  type DependencySurface,
} from './key/unit-key.js';
export {
  compileProject,
  resolveBuildOutputs,
  DEFAULT_BUILD_EXCLUDE,
  excluder,
  type BuiltLayout,
  type CompileOptions,
  type CompileResult,
  type BuildDiagnostic,
  type RelatedLocation,
} from './compile/compile.js';
export {
  compareOutputs,
  compareOutputFiles,
  formatDifference,
  differenceDiagnostic,
  outputFileKind,
  type CompareResult,
  type CompareOptions,
  type OutputDifference,
  type DifferenceReason,
  type TokenAt,
} from './compile/equivalence.js';
export {
  planLayouts,
  manifestLeaves,
  resolveConditions,
  type Layout,
  type LayoutPlan,
  type ModuleFormat,
  type PlanInput,
} from './compile/package-layout.js';
export { blankNonMeaningfulComments, listComments, type BlankOptions, type CommentRange } from './compile/blank-comments.js';
export { checkAgainstFreshBuild, type FreshBuildCheck } from './compile/soundness.js';
export { recordComponents, readComponents, recordBuilt, readBuilt, recordsDir, type BuiltRecord } from './key/records.js';
export { explainKeyChange, explainToolKeyChange, type KeyChange, type ChangeCategory } from './key/explain.js';
export { createGraphSession, exportGraph, forgetGraphMemos, GraphSession, graphText, type GraphExportOptions, type GraphExportPhases, type GraphExportResult } from './graph/export.js';
export { readGraph, writeGraph, isOpaqueRecord, isKnownRecord, type GraphDocument, type ReadGraphOptions } from './graph/read.js';
export { graphSchema, graphSchemaPath, validateGraphRecord } from './graph/schema.js';
export * from './graph/records.js';
export { GraphIndex, indexGraph, type IndexedEdge, type AdjacentEdge, type Direction } from './graph/query/graph-index.js';
export { anchorOf, nameOf, declPathOf, fileOf, isPublic, snapshotIdOf, type QueryGraph, type QueryHeader, type QueryRecord } from './graph/query/model.js';
export { loadGraph, graphRootOf, type LoadGraphOptions, type LoadedGraph } from './graph/query/load.js';
export { graphSummary, type GraphSummary } from './graph/query/summary.js';
export { findIdentifiers, matchName, type FindHit, type FindOptions, type MatchType } from './graph/query/find.js';
export { moduleView, type ModuleView } from './graph/query/module-view.js';
export { neighborhood, type Neighborhood, type NeighborNode, type NeighborEdge, type NeighborOptions } from './graph/query/neighbors.js';
export { resolveNode, resolveModule } from './graph/query/lookup.js';
export { splitIdentifier, keywordsOf, identifiersOf } from './graph/query/terms.js';
export { formatSummaryText, formatFindText, formatModuleText, formatNeighborsText } from './graph/query/text.js';
export { checkFreshness, type Freshness, type FreshnessStatus } from './graph/context/freshness.js';
export { contextPack, explainContext, formatExplanationText, MIN_BUDGET, type ContextRequest, type ContextOptions, type ContextResult, type ContextExplanation } from './graph/context/context-pack.js';
export { estimateTokens, renderContextPack, type ContextPack, type PackedItem, type PackFormat } from './graph/context/pack.js';
