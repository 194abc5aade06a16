/**
 * Debug IDs (ECMA-426 debug ID proposal, SPEC §8): a UUID that names one emitted JavaScript file and its
 * source map together. The JS carries it as a trailing `//# debugId=<uuid>` comment, the map as a
 * top-level `"debugId"` field; debuggers and `kiln symbolicate` match an artifact by it, never by
 * file name.
 *
 * Invariants:
 * - Derived from content only: sha256 over the JS text and the map text, each with any earlier debug
 *   ID removed, formatted as an RFC 4122 version-4 UUID. Two clones at different paths (whose outputs
 *   are byte-identical, compile.ts) get the same ID; any different output byte — in the code or in
 *   the map (a comment-only edit moves the map's positions, not the code) — gets a different one.
 * - Injecting is idempotent: injecting into an already injected pair yields the same texts.
 * - The comment goes after the code and before `//# sourceMappingURL`, so no mapped position moves.
 */
import { createHash } from 'node:crypto';

const DEBUG_ID_COMMENT = /^\/\/# debugId=([0-9a-fA-F-]{36})\s*$/m;
const DEBUG_ID_LINE = /^\/\/# debugId=[^\n]*\n?/gm;
const SOURCE_MAPPING_URL = /^\/\/# sourceMappingURL=[^\n]*\n?$/m;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isDebugId(s: unknown): s is string {
  return typeof s === 'string' && UUID.test(s.toLowerCase());
}

/** The debug ID a JS file names in its last `//# debugId=` comment, lower-cased; undefined when none. */
export function readDebugIdComment(jsText: string): string | undefined {
  // The comment sits at the end: look at the tail first (a bundled file can be megabytes long).
  const tail = jsText.length > 4096 ? jsText.slice(-4096) : jsText;
  const m = [...tail.matchAll(new RegExp(DEBUG_ID_COMMENT.source, 'gm'))].pop() ?? [...jsText.matchAll(new RegExp(DEBUG_ID_COMMENT.source, 'gm'))].pop();
  return m && isDebugId(m[1]) ? m[1]!.toLowerCase() : undefined;
}

/** The JS text without debug ID comments. */
export function stripDebugIdComment(jsText: string): string {
  return jsText.includes('//# debugId=') ? jsText.replace(DEBUG_ID_LINE, '') : jsText;
}

/** The map object without its debug ID fields (`debugId`, and the older `debug_id`). */
function stripMapDebugId(map: Record<string, unknown>): Record<string, unknown> {
  const { debugId: _a, debug_id: _b, ...rest } = map;
  return rest;
}

/** The content-derived debug ID of a JS text and its parsed map. */
export function computeDebugId(jsText: string, map: Record<string, unknown>): string {
  const h = createHash('sha256')
    .update('kiln-debug-id/1\0')
    .update(stripDebugIdComment(jsText))
    .update('\0')
    .update(JSON.stringify(stripMapDebugId(map)))
    .digest();
  const b = Buffer.from(h.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40; // version 4
  b[8] = (b[8]! & 0x3f) | 0x80; // RFC 4122 variant
  const x = b.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/**
 * The JS text and map text with the pair's debug ID injected. `map` is the parsed map; the returned
 * map text is `JSON.stringify` of it with `debugId` as its last field.
 */
export function injectDebugId(jsText: string, map: Record<string, unknown>): { js: string; map: string; debugId: string } {
  const debugId = computeDebugId(jsText, map);
  const bare = stripDebugIdComment(jsText);
  const line = `//# debugId=${debugId}\n`;
  const m = SOURCE_MAPPING_URL.exec(bare);
  let js: string;
  if (m) js = bare.slice(0, m.index) + line + bare.slice(m.index);
  else js = bare + (bare.endsWith('\n') || bare.length === 0 ? '' : '\n') + line;
  return { js, map: JSON.stringify({ ...stripMapDebugId(map), debugId }), debugId };
}
