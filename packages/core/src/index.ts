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
export type { DigestReport, DeclarationRecord, FileRecord, DigestStats } from './view/report.js';
export { diffReports, type DiffResult, type DeclChange, type ModuleChange, type ChangeStatus, type DiffOptions } from './diff/diff.js';
export { readSlice, type ReadResult } from './store/read-slice.js';
export { writeSlice } from './store/write-slice.js';
export { sliceKey, defaultStoreDir } from './store/format.js';
export { createDigestPool, withDigestPool, defaultWorkerCount, type DigestPool } from './pool/pool.js';
export type { DigestTask, DigestTaskResult } from './pool/worker.js';
export { listSourceFiles } from './view/files.js';
export { readPackageInfo, type PackageInfo } from './view/package.js';
export { sha256Hex, digestParts } from './digest/hash.js';
