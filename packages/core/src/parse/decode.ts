/**
 * Bytes → source text, or a coded reason why not. Never guesses an encoding: invalid UTF-8 and binary
 * content are reported, not repaired. Pure: depends on the bytes only.
 */
import type { DiagnosticCode } from '../diagnostics/codes.js';

export const DEFAULT_MAX_FILE_SIZE = 8 * 1024 * 1024;

export type Decoded =
  | { ok: true; text: string }
  | { ok: false; code: DiagnosticCode; message: string };

export function decodeSource(bytes: Uint8Array, maxFileSize = DEFAULT_MAX_FILE_SIZE): Decoded {
  if (bytes.length > maxFileSize) {
    return {
      ok: false,
      code: 'KILN_FILE_TOO_LARGE',
      message: `file is ${bytes.length} bytes, above the parse limit of ${maxFileSize} bytes`,
    };
  }
  // NUL never appears in real source text; its presence in the first 8 KiB marks a binary file.
  const probe = Math.min(bytes.length, 8192);
  for (let i = 0; i < probe; i++) {
    if (bytes[i] === 0) {
      return { ok: false, code: 'KILN_BINARY_FILE', message: `file contains a NUL byte at offset ${i}` };
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, code: 'KILN_INVALID_UTF8', message: `file is not valid UTF-8 (at or after byte ${firstInvalidUtf8(bytes)})` };
  }
  return { ok: true, text };
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const n = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    for (let k = 1; k < n; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += n;
  }
  return i;
}
