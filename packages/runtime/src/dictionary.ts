/**
 * The deflate preset dictionaries of format 2 (format.ts, "Dictionaries"): what each `deflate-dict`
 * stream of a representation may reference. Writer and reader build them here and nowhere else, so the
 * two cannot disagree on a byte.
 *
 * Invariants:
 * - The static dictionary is checked against STATIC_DICTIONARY_SHA256 before its first use (a runtime
 *   whose copy was altered refuses with KILN_REP_INTEGRITY rather than decoding garbage).
 * - Every dictionary is cut to deflate's window from the front: the bytes nearest the data (the
 *   package's own) are the ones kept.
 * - A `deflate-dict` payload's integrity hash binds its stored bytes to the dictionary it decodes with
 *   (payloadDigest): its code is a function of both, so neither can change without the check failing.
 */
import { createHash } from 'node:crypto';
import { repError } from './errors.js';
import { HASH, MAX_DICTIONARY, STATIC_DICTIONARY_SHA256 } from './format.js';
import { staticDictionaryBytes } from './static-dictionary.js';

let checked: Buffer | undefined;

/** Format 2's static dictionary, integrity-checked once per process. */
export function staticDictionary(): Buffer {
  if (checked === undefined) {
    const b = staticDictionaryBytes();
    if (createHash(HASH).update(b).digest('hex') !== STATIC_DICTIONARY_SHA256) {
      throw repError('KILN_REP_INTEGRITY', `@kiln/runtime's static dictionary does not match its integrity hash (this copy of @kiln/runtime was altered)`, {
        requirement: 'the static dictionary of representation format 2',
      });
    }
    checked = b;
  }
  return checked;
}

/** The last MAX_DICTIONARY bytes of the parts, in order. */
function window(parts: Uint8Array[]): Buffer {
  const all = Buffer.concat(parts);
  return all.length > MAX_DICTIONARY ? all.subarray(all.length - MAX_DICTIONARY) : all;
}

/** A payload's: the static dictionary, KEYS (the exported names its code spells), then the package's DICT (raw). */
export function payloadDictionary(keys: Uint8Array, packageDictionary: Uint8Array): Buffer {
  return window([staticDictionary(), keys, packageDictionary]);
}

/** INFO's: the static dictionary, the package's name, then KEYS (the names INFO's identities repeat). */
export function infoDictionary(pkg: string, keys: Uint8Array): Buffer {
  return window([staticDictionary(), Buffer.from(pkg, 'utf8'), keys]);
}

/** DICT's own: the static dictionary. */
export function dictDictionary(): Buffer {
  return staticDictionary();
}

/**
 * A payload's integrity digest (the table's sha256): of its stored bytes, and for `deflate-dict`, of
 * the stored bytes followed by the SHA-256 of the dictionary they decode with.
 */
export function payloadDigest(stored: Uint8Array, compression: string, dictionaryDigest: () => Buffer): Buffer {
  const h = createHash(HASH).update(stored);
  if (compression === 'deflate-dict') h.update(dictionaryDigest());
  return h.digest();
}
