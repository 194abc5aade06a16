/**
 * One replaceable entry of the store under a key, its index line carrying metadata (a write count,
 * whatever the writer needs to decide without reading the bytes): the byte-level operations the
 * manifests, the registry of views and the memoised reports (view/report-memo.ts) are made of. The
 * store does not know what the bytes mean; cacache integrity-checks them on every read.
 */
import cacache from 'cacache';

/** An entry's index line: its metadata and the integrity of its bytes. */
export interface EntryInfo {
  metadata?: unknown;
  integrity?: string;
}

/** Every this many writes of one key, its cacache index bucket is compacted to its newest line. */
const COMPACT_EVERY = 32;

/** The index line of `key`, null when there is none; throws when the index cannot be read. */
export async function entryInfo(storeDir: string, key: string): Promise<EntryInfo | null> {
  return (await cacache.get.info(storeDir, key)) as EntryInfo | null;
}

/** The bytes of `key`, integrity-checked: throws (code EINTEGRITY or EBADSIZE) when they are damaged. */
export async function readEntry(storeDir: string, key: string): Promise<Buffer> {
  const got = (await cacache.get(storeDir, key)) as { data: Buffer };
  return got.data;
}

/**
 * Drop `key`'s index entry and, when `error` (what reading it threw, if anything) says its bytes failed
 * their integrity check, the bytes named by `integrity` too. Best effort: never throws.
 */
export async function dropEntry(storeDir: string, key: string, integrity: string | undefined, error: unknown): Promise<void> {
  const code = (error as { code?: string } | undefined)?.code;
  await cacache.rm.entry(storeDir, key).catch(() => undefined);
  if (code === 'EINTEGRITY' || code === 'EBADSIZE') {
    if (integrity) await cacache.rm.content(storeDir, integrity).catch(() => undefined);
  }
}

/**
 * Replace `key`'s entry with `bytes`; `metadata.writes` counts the writes of this key (this one
 * included), and every COMPACT_EVERY-th compacts the key's index bucket (best effort).
 */
export async function writeEntry(storeDir: string, key: string, bytes: Buffer, metadata: { writes: number; [field: string]: unknown }): Promise<void> {
  await cacache.put(storeDir, key, bytes, { metadata });
  if (metadata.writes % COMPACT_EVERY === 0) {
    await cacache.index.compact(storeDir, key, (a: { key: string }, b: { key: string }) => a.key === b.key).catch(() => undefined);
  }
}
