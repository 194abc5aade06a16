/**
 * "The same content as JSON" (issue 15 point 2), one definition for every test and benchmark that
 * measures kiln.rep against it: JSON.stringify of the decoded model with each payload's SHA-256 in hex.
 * Written with JSON.stringify and node:crypto only — nothing of kiln's writer — so it can judge it.
 */
import { createHash } from 'node:crypto';

/** The JSON document of a decoded representation (a `Representation` from @kiln/runtime). */
export function sameContentAsJson(rep) {
  return JSON.stringify({ ...rep, payloads: rep.payloads.map((p) => ({ ...p, sha256: createHash('sha256').update(p.code).digest('hex') })) });
}

/** Its size in bytes (UTF-8). */
export function sameContentAsJsonBytes(rep) {
  return Buffer.byteLength(sameContentAsJson(rep));
}
