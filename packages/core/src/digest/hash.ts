/**
 * Hashing primitives. Every digest is domain-separated by a tag that names what it digests and the
 * projection (digest schema) it was computed under, so digests of different things or schemas can
 * never be equal by construction.
 *
 * One-shot hashing (`crypto.hash`, Node ≥ 20.12) where available: the same bytes as a Hash object fed
 * the same string, without creating one per digest (a file digests hundreds of declarations).
 */
import * as crypto from 'node:crypto';

type OneShot = (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string;
const oneShot: OneShot | undefined = typeof (crypto as { hash?: unknown }).hash === 'function' ? ((crypto as unknown as { hash: OneShot }).hash) : undefined;

/** sha256 hex of a string (UTF-8) or bytes. */
const sha256 = oneShot
  ? (data: string | Uint8Array): string => oneShot('sha256', data, 'hex')
  : (data: string | Uint8Array): string => crypto.createHash('sha256').update(data).digest('hex');

/** 128-bit hex digest of parts joined unambiguously (parts must not contain U+0000). */
export function digestParts(tag: string, parts: readonly string[]): string {
  // Exactly the bytes hashed before: tag, NUL, then the parts joined by NUL.
  return sha256(`${tag}\u0000${parts.join('\u0000')}`).slice(0, 32);
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return sha256(bytes);
}
