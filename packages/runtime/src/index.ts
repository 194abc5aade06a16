/**
 * @kiln/runtime: read a package's executable representation and call its covered exports (SPEC §7).
 * Depends on Node's built-ins only, so a consumer installs it without kiln's build machinery.
 */
export type { RepCoverage, RepEntry, RepHeader, RepPayload, RepRequirements, Representation } from './model.js';
