/**
 * Lookup: read a debug record (by debug ID, or by the sha256 of the JS text) and the blobs it names.
 * Every read is integrity-checked twice: by cacache (the index line's sha512) and by the sha256 of the
 * text against the key it was stored under. A damaged or foreign entry is dropped and reads as absent
 * (the artifact is then ingested again from its files, or the frame is `unavailable`): never a wrong map.
 */
import cacache from 'cacache';
import { sha256Hex } from '../digest/hash.js';
import { dropEntry } from '../store/entry.js';
import { debugBlobKey, debugIdKey, debugJsKey, isDebugRecord, type DebugRecord } from './record.js';

async function readText(storeDir: string, key: string): Promise<string | undefined> {
  let got: { data: Buffer; integrity?: string } | undefined;
  try {
    got = (await cacache.get(storeDir, key)) as { data: Buffer; integrity?: string };
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT') return undefined;
    const info = (await cacache.get.info(storeDir, key).catch(() => null)) as { integrity?: string } | null;
    await dropEntry(storeDir, key, info?.integrity, e);
    return undefined;
  }
  return got.data.toString('utf8');
}

export async function readDebugRecord(storeDir: string, by: { debugId?: string; jsSha256?: string }): Promise<DebugRecord | undefined> {
  const keys = [by.debugId ? debugIdKey(by.debugId) : undefined, by.jsSha256 ? debugJsKey(by.jsSha256) : undefined].filter((k): k is string => !!k);
  for (const key of keys) {
    const text = await readText(storeDir, key);
    if (text === undefined) continue;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      v = undefined;
    }
    const ok = isDebugRecord(v) && (!by.debugId || v.debugId === by.debugId.toLowerCase() || key !== debugIdKey(by.debugId)) && (!by.jsSha256 || key !== debugJsKey(by.jsSha256) || v.js === by.jsSha256);
    if (ok) return v as DebugRecord;
    await dropEntry(storeDir, key, undefined, undefined);
  }
  return undefined;
}

/** A blob's text, or undefined when it is absent or fails its sha256. */
export async function readDebugBlob(storeDir: string, sha256: string): Promise<string | undefined> {
  const key = debugBlobKey(sha256);
  const text = await readText(storeDir, key);
  if (text === undefined) return undefined;
  if (sha256Hex(text) !== sha256) {
    await dropEntry(storeDir, key, undefined, undefined);
    return undefined;
  }
  return text;
}
