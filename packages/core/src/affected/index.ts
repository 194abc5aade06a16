/**
 * What `kiln affected` needs of core, loadable on its own (`@kiln/core/affected`): a command line that
 * only compares two states does not load the rest of core (the codegraph, the MCP-facing queries, the
 * build executor, keys unless a target is keyed). The same functions as `@kiln/core` exports, not
 * copies: one module each, whichever entry loads it.
 *
 * Invariant: nothing here runs at import time; it re-exports only.
 */
export { computeAffected, type AffectedOptions, type AffectedResult, type AffectedTarget, type TargetRule } from './affected.js';
export { KilnError, diagnostic, formatDiagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
export { toEnvelope, formatEnvelopeText, formatEnvelopeJson, type DiagnosticEnvelope } from '../diagnostics/envelope.js';
export { discoverWorkspace } from '../workspace/discover.js';
export { buildKeyTsconfig, readTargetDefinitions } from '../workspace/target-definitions.js';
