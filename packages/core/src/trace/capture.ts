/**
 * A capture: one process's part of a trace file, in Chrome's Trace Event Format (JSON Array form).
 *
 * The file is shared: every process of a run (an `nx run-many`'s task processes and plugin worker, a
 * CLI run) appends its own capture to it, so one run produces one merged trace without anyone merging
 * afterwards. How that stays well-formed:
 * - the file is created holding exactly `[` and a newline, atomically (a temporary file hard-linked into
 *   place: a process never sees it empty or appends before the bracket); an existing file is appended to
 *   only if it starts with `[`, never overwritten or truncated;
 * - events are whole lines (`{…},`), written with O_APPEND, each batch in one write() call: on a local
 *   file system concurrent appends of whole writes do not interleave, so lines of two processes alternate
 *   but are never cut into each other;
 * - the closing `]` is never written (the format makes it optional, for captures cut short; viewers and
 *   `readTrace` readers drop a trailing comma and close the array).
 *
 * A capture names its process (`process_name`, e.g. the Nx task id) and each of its tracks before their
 * first event (`thread_name`: `main`, `worker N` — one track per pool worker thread, by thread id — and
 * `… [lane K]` for overlapping flows of one thread, record.ts), and frames its events with two
 * `kiln_capture` metadata records: `started` (format version, clock, OS pid) and, last, `complete` or
 * `incomplete` (how it ended, how many spans were still open). A capture without that last record was
 * cut short (a kill the process could not see, a write failure): readers must treat it as incomplete.
 *
 * Its pid is random (31 bits), not the OS pid (which is in `started`): captures appended over time to
 * one file must not merge because the OS reused a pid. Events are buffered and written in batches, at
 * `flush`, and when the capture ends.
 */
import { closeSync, linkSync, mkdirSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { dirname } from 'node:path';
import { threadId } from 'node:worker_threads';
import { TRACE_FORMAT_VERSION } from '../version.js';
import { nowUs, TRACE_CLOCK } from './clock.js';
import type { FinishedSpan, SpanSink } from './record.js';

/** Lines buffered before a write. */
const BATCH = 256;
/** tid of lane K of thread T: T for lane 0, LANE_STRIDE·K + T beyond (thread ids stay below it). */
const LANE_STRIDE = 65_536;
/** The category of every span kiln records. */
export const TRACE_CATEGORY = 'kiln';

export class FileCapture implements SpanSink {
  readonly pid = randomInt(1, 2 ** 31);
  private fd: number | undefined;
  private lines: string[] = [];
  private readonly named = new Set<number>();
  /** Why writing failed, once it has (nothing more is written then). */
  problem: string | undefined;

  private constructor(fd: number, processName: string) {
    this.fd = fd;
    this.push({ name: 'process_name', ph: 'M', pid: this.pid, tid: threadId, args: { name: processName } });
    this.push({
      name: 'kiln_capture',
      ph: 'M',
      pid: this.pid,
      tid: threadId,
      ts: nowUs(),
      args: { state: 'started', format: TRACE_FORMAT_VERSION, clock: TRACE_CLOCK, os_pid: process.pid },
    });
    this.name(threadId, 0);
  }

  /** Open `file` for appending (created with its `[` if absent); a string says why it cannot be. */
  static open(file: string, processName: string): FileCapture | string {
    try {
      return new FileCapture(openForAppend(file), processName);
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    }
  }

  span(thread: number, s: FinishedSpan): void {
    const tid = s.lane === 0 ? thread : LANE_STRIDE * s.lane + thread;
    if (!this.named.has(tid)) this.name(thread, s.lane);
    this.push({ name: s.name, cat: TRACE_CATEGORY, ph: 'X', ts: s.ts, dur: s.dur, pid: this.pid, tid, ...(s.args ? { args: s.args } : {}) });
  }

  /** Write what is buffered. */
  flush(): void {
    if (!this.lines.length) return;
    const bytes = Buffer.from(this.lines.join(''));
    this.lines = [];
    if (this.fd === undefined) return;
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off, bytes.length - off);
    } catch (e) {
      this.problem = `writing failed: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
      this.closeFd();
    }
  }

  /**
   * The last record, then flush and close: `complete`, or `incomplete` when a span was (left open,
   * cut by an exception, a worker that never answered) or a write failed; how it ended; the counts.
   */
  end(ended: string, open: number, incomplete: number): void {
    const state = open > 0 || incomplete > 0 || this.problem !== undefined ? 'incomplete' : 'complete';
    this.push({ name: 'kiln_capture', ph: 'M', pid: this.pid, tid: threadId, ts: nowUs(), args: { state, ended, open, incomplete_spans: incomplete } });
    this.flush();
    this.closeFd();
  }

  private name(thread: number, lane: number): void {
    const tid = lane === 0 ? thread : LANE_STRIDE * lane + thread;
    this.named.add(tid);
    const base = thread === 0 ? 'main' : `worker ${thread}`;
    this.push({ name: 'thread_name', ph: 'M', pid: this.pid, tid, args: { name: lane === 0 ? base : `${base} [lane ${lane}]` } });
    this.push({ name: 'thread_sort_index', ph: 'M', pid: this.pid, tid, args: { sort_index: thread * 1000 + lane } });
  }

  private push(event: object): void {
    this.lines.push(`${JSON.stringify(event)},\n`);
    if (this.lines.length >= BATCH) this.flush();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already unusable
    }
    this.fd = undefined;
  }
}

/** An O_APPEND descriptor of a trace file: created with its `[` if absent, refused if it is not one. */
function openForAppend(file: string): number {
  mkdirSync(dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 2) throw e;
      createWithBracket(file);
      continue;
    }
    try {
      const head = Buffer.alloc(64);
      const n = readSync(fd, head, 0, head.length, 0);
      if (head.subarray(0, n).toString('latin1').trimStart()[0] !== '[') throw new Error('the file exists and is not a trace (a JSON array)');
    } finally {
      closeSync(fd);
    }
    return openSync(file, 'a');
  }
}

/** Create `file` holding `[\n`, atomically: no reader or appender ever sees it without the bracket. */
function createWithBracket(file: string): void {
  const tmp = `${file}.${process.pid}-${threadId}.tmp`;
  writeFileSync(tmp, '[\n');
  try {
    linkSync(tmp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      // No hard links here: exclusive create, then the bracket (a narrow window, for such file systems only).
      try {
        writeFileSync(file, '[\n', { flag: 'wx' });
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST') throw e2;
      }
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}
