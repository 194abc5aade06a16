/**
 * Debug artifacts (SPEC §8, RFC 167): debug IDs on emitted JS and maps, the debug store, symbolication
 * with match statuses. The public entry of this stage (`@kiln/core/debug` and re-exported by
 * `@kiln/core`).
 */
export { computeDebugId, injectDebugId, readDebugIdComment, isDebugId } from './debug-id.js';
export { injectDebugIds, prepareDebugArtifacts, type PreparedArtifact, type PrepareOptions } from './inject.js';
export { ingestArtifact, ingestOutputs, ingestProjectOutputs, findMap, type IngestInput, type IngestResult } from './ingest.js';
export { readDebugRecord, readDebugBlob } from './lookup.js';
export type { DebugRecord, DebugSource, DebugDecl } from './record.js';
export { Symbolicator, MATCH_STATUS_TEXT, packageOf, type MatchStatus, type SymbolicatedFrame, type SymbolicateOptions, type FramePosition } from './symbolicate.js';
export { parseStackInput, type FrameInput, type StackInput } from './stack-input.js';
export { formatFrameText, formatSymbolicateSummary } from './format.js';
export { RuntimeSymbolicator, installStackTraceHook, formatCallSite } from './runtime.js';
// What `kiln symbolicate` and `kiln debug-ids` need besides, so they load this entry alone.
export { KilnError, diagnostic, formatDiagnostic } from '../diagnostics/diagnostic.js';
export { toEnvelope } from '../diagnostics/envelope.js';
export { defaultStoreDir } from '../store/format.js';
export { findWorkspaceRoot } from '../view/locate.js';
export { DEBUG_STORE_FORMAT } from '../version.js';
