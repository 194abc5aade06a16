/**
 * Piscina worker: read one file by path, extract its slice, write it to the store. The parser loads
 * on the first task and stays loaded for the worker's life. Nothing happens at import time.
 */
import { readFile } from 'node:fs/promises';
import { extractSlice } from '../facts/extract.js';
import { writeSlice } from '../store/write-slice.js';
import type { Slice } from '../facts/slice.js';
import type { Variant } from '../parse/language.js';

export interface DigestTask {
  /** Absolute path: workers read their own files (paths cross the thread boundary, not contents). */
  file: string;
  variant: Variant;
  digestSchema: number;
  maxFileSize: number;
  /** Store directory, or null to skip writing. */
  storeDir: string | null;
}

export interface DigestTaskResult {
  slice?: Slice;
  readError?: string;
  storeError?: string;
  /** Milliseconds spent in extraction (parse + walk + hash), for timelines and benchmarks. */
  extractMs: number;
}

export default async function digestFile(task: DigestTask): Promise<DigestTaskResult> {
  let bytes: Buffer;
  try {
    bytes = await readFile(task.file);
  } catch (e) {
    return { readError: (e as Error).message, extractMs: 0 };
  }
  const t0 = performance.now();
  const slice = extractSlice(bytes, task.variant, { digestSchema: task.digestSchema, maxFileSize: task.maxFileSize });
  const extractMs = performance.now() - t0;
  const result: DigestTaskResult = { slice, extractMs };
  if (task.storeDir) {
    try {
      await writeSlice(task.storeDir, slice, true);
    } catch (e) {
      result.storeError = (e as Error).message;
    }
  }
  return result;
}
