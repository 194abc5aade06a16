/**
 * The local store's layout. One version constant (STORE_FORMAT_VERSION) and one key builder: a slice
 * is keyed by what it is a pure function of — content hash, parser variant, extractor version and
 * digest schema — and by nothing else (no path, no machine), so every view and clone shares it.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { STORE_FORMAT_VERSION, EXTRACTOR_VERSION } from '../version.js';
import type { Variant } from '../parse/language.js';

export function sliceKey(contentHash: string, variant: Variant, digestSchema: number): string {
  return `kiln/v${STORE_FORMAT_VERSION}/slice/x${EXTRACTOR_VERSION}/d${digestSchema}/${variant}/${contentHash}`;
}

/** Where the store lives: --store, then KILN_STORE, then the user cache directory. */
export function defaultStoreDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.KILN_STORE) return env.KILN_STORE;
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'kiln', 'store');
}
