/**
 * Store errors in words without machine paths: diagnostics are products too, and two clones must
 * agree on them, so the store directory (an absolute path) never appears in a message.
 */
export function storeErrorText(e: unknown): string {
  const code = (e as { code?: string }).code ?? 'error';
  const syscall = (e as { syscall?: string }).syscall;
  return `${code}${syscall ? ` during ${syscall}` : ''}: the store directory cannot be used (see --store / KILN_STORE)`;
}

/** A file-system error in words without the (absolute) path: the diagnostic names the file itself. */
export function readErrorText(e: unknown): string {
  const code = (e as { code?: string }).code;
  return code ? `${code}: the file could not be read` : `the file could not be read (${(e as Error).message})`;
}
