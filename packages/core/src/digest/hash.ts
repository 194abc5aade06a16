/**
 * Hashing primitives. Every digest is domain-separated by a tag that names what it digests and the
 * projection (digest schema) it was computed under, so digests of different things or schemas can
 * never be equal by construction.
 */
import { createHash } from 'node:crypto';

/** 128-bit hex digest of parts joined unambiguously (parts must not contain U+0000). */
export function digestParts(tag: string, parts: readonly string[]): string {
  const h = createHash('sha256');
  h.update(tag);
  h.update('\u0000');
  h.update(parts.join('\u0000'));
  return h.digest('hex').slice(0, 32);
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
