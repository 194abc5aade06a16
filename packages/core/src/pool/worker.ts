/**
 * Piscina worker: read one file by path, extract its slice (optionally write it to the store as a
 * loose slice). The parser loads
 * on the first task and stays loaded for the worker's life. Nothing happens at import time.
 *
 * Tracing (trace/): a task that carries `trace` (the file's label) is recorded in this thread — `slice`
 * with `read`, `parse`, `digest` (and `store write`) inside — and its spans go back with the result,
 * where the calling thread writes them on this worker's own track. The worker never opens the trace
 * file: one writer per process, which marks what a worker never returned (a crash) itself. Run by a
 * thread that has a capture of its own (a view digests its first misses inline), the spans go to it.
 */
import { readFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { parserLoads } from '../parse/typescript.js';
import { extractSlice } from '../facts/extract.js';
import { writeSlice } from '../store/write-slice.js';
import { readErrorText, storeErrorText } from '../store/error-text.js';
import type { Slice } from '../facts/slice.js';
import type { Variant } from '../parse/language.js';
import { begin, collectingSpans, collectSpans, drainSpans, end, span, tracing, type FinishedSpan } from '../trace/record.js';

export interface DigestTask {
  /**
   * Absolute path: workers read their own files (paths cross the thread boundary, not contents) —
   * except files of a git tree (workspace/tree.ts), which only the main thread can read: `bytes`.
   */
  file: string;
  bytes?: Uint8Array;
  variant: Variant;
  digestSchema: number;
  maxFileSize: number;
  /**
   * Store directory to write the slice to as a loose slice (store/write-slice.ts), or null. digestTree
   * passes null: it packs the slices of a run itself (one store entry per run, not per file).
   */
  storeDir: string | null;
  /** Return the slice as its JSON text (`json`) instead of an object: the caller stores that text as is. */
  json?: boolean;
  /** Record this task's spans and send them back (trace/): the file's name in the trace (relative). */
  trace?: string;
}

export interface DigestTaskResult {
  slice?: Slice;
  /** The slice as JSON text, when the task asked for `json`. */
  json?: string;
  readError?: string;
  storeError?: string;
  /** Milliseconds spent in extraction (parse + walk + hash), for timelines and benchmarks. */
  extractMs: number;
  /** Which worker ran it: its thread, tasks it has run so far, times it has loaded the parser (≤ 1). */
  worker?: { threadId: number; tasks: number; parserLoads: number };
  /** This worker's spans finished since its last result (the task asked for `trace`). */
  trace?: FinishedSpan[];
}

let tasksRun = 0;

export default async function digestFile(task: DigestTask): Promise<DigestTaskResult> {
  // Run inline by a thread with its own capture (a view's first misses): its spans are that capture's.
  if (task.trace !== undefined && tracing() && !collectingSpans()) return span('slice', () => digest(task), 'file', task.trace);
  collectSpans(task.trace !== undefined);
  if (task.trace === undefined) return digest(task);
  const result = await span('slice', () => digest(task), 'file', task.trace);
  result.trace = drainSpans();
  return result;
}

async function digest(task: DigestTask): Promise<DigestTaskResult> {
  tasksRun++;
  let bytes: Buffer;
  const reading = begin('read');
  try {
    // Synchronous on purpose: this thread exists to digest files, and one blocking read costs less
    // than the four thread-pool round trips of fs/promises readFile (open, fstat, read, close).
    bytes = task.bytes ? Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength) : readFileSync(task.file);
  } catch (e) {
    end(reading, 'error', readErrorText(e));
    return { readError: readErrorText(e), extractMs: 0, worker: { threadId, tasks: tasksRun, parserLoads: parserLoads() } };
  }
  end(reading);
  const t0 = performance.now();
  const slice = extractSlice(bytes, task.variant, { digestSchema: task.digestSchema, maxFileSize: task.maxFileSize });
  const extractMs = performance.now() - t0;
  const result: DigestTaskResult = task.json
    ? { json: JSON.stringify(slice), extractMs, worker: { threadId, tasks: tasksRun, parserLoads: parserLoads() } }
    : { slice, extractMs, worker: { threadId, tasks: tasksRun, parserLoads: parserLoads() } };
  if (task.storeDir) {
    try {
      await span('store write', () => writeSlice(task.storeDir!, slice, true));
    } catch (e) {
      result.storeError = storeErrorText(e);
    }
  }
  return result;
}
