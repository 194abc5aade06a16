/**
 * Piscina worker: read one file by path, extract its slice (optionally write it to the store as a
 * loose slice). The parser loads
 * on the first task and stays loaded for the worker's life. Nothing happens at import time.
 *
 * Tracing (trace/): a task that carries `trace` (the file's label) is recorded in this thread — `slice`
 * with `read`, `parse`, `digest` inside, then `store write` if it writes — and its spans go back with the result,
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
import { begin, collectingSpans, collectSpans, drainSpans, end, endFailed, span, tracing, type FinishedSpan } from '../trace/record.js';

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
  // In a pool worker, a traced task records into an array sent back with the result; run inline by a
  // thread with a capture of its own (a view's first misses), its spans go to that capture.
  const collect = task.trace !== undefined && !(tracing() && !collectingSpans());
  if (collect || collectingSpans()) collectSpans(collect);
  const result = await digest(task);
  if (collect) result.trace = drainSpans();
  return result;
}

/**
 * One file: its `slice` span (read, parse, digest) is synchronous and ends before the task returns, so
 * the next task this worker takes (piscina hands a worker its second task the moment the first returns,
 * before any promise settles) starts after it on the worker's one track. Only a store write awaits.
 */
async function digest(task: DigestTask): Promise<DigestTaskResult> {
  const slicing = begin('slice', 'file', task.trace ?? '');
  let result: DigestTaskResult;
  try {
    result = sliceOf(task);
  } catch (e) {
    endFailed(slicing, e);
    throw e;
  }
  end(slicing);
  const slice = extracted;
  extracted = undefined;
  if (task.storeDir && slice) {
    try {
      await span('store write', () => writeSlice(task.storeDir!, slice, true), 'file', task.trace ?? '');
    } catch (e) {
      result.storeError = storeErrorText(e);
    }
  }
  return result;
}

/** The slice `sliceOf` extracted last (the store write needs it when the result carries JSON). */
let extracted: Slice | undefined;

function sliceOf(task: DigestTask): DigestTaskResult {
  tasksRun++;
  extracted = undefined;
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
  extracted = slice;
  return task.json
    ? { json: JSON.stringify(slice), extractMs, worker: { threadId, tasks: tasksRun, parserLoads: parserLoads() } }
    : { slice, extractMs, worker: { threadId, tasks: tasksRun, parserLoads: parserLoads() } };
}
