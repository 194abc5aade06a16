/**
 * Recording spans of kiln's own work on this thread: named intervals on the trace clock (clock.ts),
 * handed, as they finish, to a sink — a capture file on a process's main thread (capture.ts), an array
 * in a pool worker, which sends it back with its task's result (`collectSpans`, `drainSpans`).
 *
 * Three ways to record, all inert unless a sink is set (`tracing()`):
 * - `begin`/`end` tokens, for synchronous regions (no `await` between them): hot paths (a file's parse)
 *   pay one check and allocate nothing when tracing is off;
 * - `span(name, fn)`, for regions that await or hold other spans: its children are found through an
 *   AsyncLocalStorage, so concurrent flows (several packages digested at once) keep their own parents;
 * - `spanSince(name, t0)`, a span recorded when it ends, from a `performance.now()` reading (a phase
 *   timer that already exists, compile.ts's laps).
 *
 * Tracks: one thread's spans may overlap without nesting (two async flows), which a Chrome trace track
 * cannot show. Each thread therefore has lanes (a lane is one track): a span goes on its parent's lane
 * when its parent is the innermost span open there, else on the lowest lane with nothing open. A span
 * that ends while spans above it on its lane are still open (a child that was not awaited) moves those
 * to a new lane first.
 *
 * Invariants: on every lane, finished spans nest properly (any two are disjoint or one contains the
 * other) and are handed to the sink in order of their end; a span is handed over once. A span still
 * open when recording stops is handed over with `args.incomplete: true` and the reason, never dropped;
 * so is one left by an exception (`reason: "exception: …"`). Nothing here does I/O.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { threadId } from 'node:worker_threads';
import { nowUs, usAt } from './clock.js';

export type ArgValue = string | number | boolean;
export type SpanArgs = Record<string, ArgValue>;

/** A finished span as the recorder hands it over: times on the trace clock (µs), its lane on its thread. */
export interface FinishedSpan {
  name: string;
  ts: number;
  dur: number;
  lane: number;
  args?: SpanArgs;
}

/** Where finished spans go. */
export interface SpanSink {
  /** A span of `thread`: this thread's own, or a worker's that came back with its result. */
  span(thread: number, s: FinishedSpan): void;
}

interface Span {
  name: string;
  begin: number;
  lane: number;
  args: SpanArgs | undefined;
  open: boolean;
}

/** What `begin` returns: a span, or 0 when nothing records. */
export type SpanToken = Span | 0;

let sink: SpanSink | undefined;
let context: AsyncLocalStorage<Span> | undefined;
/** The capture's root span, if it has one: the parent of spans begun outside any other. */
let root: Span | undefined;
/** Spans open on this thread's synchronous stack: `begin` tokens, and `span`'s synchronous part. */
const syncStack: Span[] = [];
/** Per lane, its open spans, outermost first. */
let lanes: Span[][] = [];
/** Per lane, the latest end of a span finished on it. */
let lastEnd: number[] = [];
/** Spans handed over as incomplete since recording started (any thread's). */
let incompleteCount = 0;

/** Whether spans are being recorded on this thread. */
export function tracing(): boolean {
  return sink !== undefined;
}

/** Record from now on into `to` (no span is open yet). */
export function startRecording(to: SpanSink): void {
  sink = to;
  context ??= new AsyncLocalStorage<Span>();
  lanes = [];
  lastEnd = [];
  incompleteCount = 0;
  syncStack.length = 0;
  root = undefined;
}

/** How many spans were handed over as incomplete since recording started. */
export function incompleteSpans(): number {
  return incompleteCount;
}

/**
 * Stop recording: every span still open is handed over as incomplete, with `reason`. Returns how many
 * were open.
 */
export function stopRecording(reason: string): number {
  if (!sink) return 0;
  const at = nowUs();
  let open = 0;
  for (const stack of lanes) {
    for (let i = stack.length - 1; i >= 0; i--) {
      const s = stack[i]!;
      if (!s.open) continue;
      s.open = false;
      open++;
      s.args = { ...s.args, incomplete: true, reason };
      emit(s, at);
    }
  }
  lanes = [];
  syncStack.length = 0;
  root = undefined;
  sink = undefined;
  return open;
}

function currentParent(): Span | undefined {
  return syncStack.length ? syncStack[syncStack.length - 1] : context!.getStore() ?? root;
}

/** The lane of a span whose parent is `parent`: see the module comment. */
function laneFor(parent: Span | undefined): number {
  if (parent === undefined || parent.open) {
    const l = parent ? parent.lane : 0;
    const stack = lanes[l];
    if ((stack === undefined ? undefined : stack[stack.length - 1]) === parent) return l;
  }
  for (let i = 0; ; i++) if (!lanes[i]?.length) return i;
}

function open(name: string, parent: Span | undefined, key?: string, value?: ArgValue): Span {
  const lane = laneFor(parent);
  const s: Span = { name, begin: nowUs(), lane, args: key === undefined ? undefined : { [key]: value! }, open: true };
  (lanes[lane] ??= []).push(s);
  return s;
}

function close(s: Span): void {
  if (!s.open) return;
  s.open = false;
  const stack = lanes[s.lane];
  const i = stack ? stack.lastIndexOf(s) : -1;
  if (i >= 0) {
    const above = stack!.splice(i).slice(1);
    if (above.length) {
      // Still open above a span that ends: they go on a lane of their own (nothing ever ended there).
      const fresh = lanes.length;
      lanes.push(above);
      for (const a of above) a.lane = fresh;
    }
  }
  emit(s, nowUs());
}

function emit(s: Span, at: number): void {
  if (at > (lastEnd[s.lane] ?? 0)) lastEnd[s.lane] = at;
  if (s.args?.incomplete === true) incompleteCount++;
  sink?.span(threadId, { name: s.name, ts: s.begin, dur: at - s.begin, lane: s.lane, ...(s.args ? { args: s.args } : {}) });
}

function fail(s: Span, e: unknown): void {
  if (!s.open) return;
  s.args = { ...s.args, incomplete: true, reason: `exception: ${e instanceof Error ? e.message : String(e)}` };
  close(s);
}

/** Begin a synchronous span (end it before any `await`); 0 when nothing records. */
export function begin(name: string, key?: string, value?: ArgValue): SpanToken {
  if (sink === undefined) return 0;
  const s = open(name, currentParent(), key, value);
  syncStack.push(s);
  return s;
}

/** End a span `begin` returned, optionally with one more argument. */
export function end(t: SpanToken, key?: string, value?: ArgValue): void {
  if (t === 0) return;
  if (key !== undefined) (t.args ??= {})[key] = value!;
  const i = syncStack.lastIndexOf(t);
  if (i >= 0) syncStack.splice(i, 1);
  close(t);
}

/** End a span `begin` returned, as cut short by `e`. */
export function endFailed(t: SpanToken, e: unknown): void {
  if (t === 0) return;
  const i = syncStack.lastIndexOf(t);
  if (i >= 0) syncStack.splice(i, 1);
  fail(t, e);
}

/**
 * Run `fn` inside a span (synchronous or async); spans begun inside it, at any depth of awaits, are its
 * children. A throw or rejection ends the span as incomplete and propagates unchanged.
 */
export function span<T>(name: string, fn: () => T, key?: string, value?: ArgValue): T {
  if (sink === undefined) return fn();
  const s = open(name, currentParent(), key, value);
  const depth = syncStack.length;
  syncStack.push(s);
  let r: T;
  try {
    r = context!.run(s, fn);
  } catch (e) {
    unwind(depth, s);
    fail(s, e);
    throw e;
  }
  unwind(depth, s);
  if (r !== null && typeof r === 'object' && typeof (r as { then?: unknown }).then === 'function') {
    return (r as unknown as Promise<unknown>).then(
      (v) => {
        unwind(0, s);
        close(s);
        return v;
      },
      (e: unknown) => {
        unwind(0, s);
        fail(s, e);
        throw e;
      },
    ) as unknown as T;
  }
  close(s);
  return r;
}

/**
 * Back to `depth` on the synchronous stack; a token left open there (a throw skipped its `end`) ends
 * incomplete. A promise callback runs on an empty JavaScript stack, where no synchronous span can still
 * be open: `span` unwinds to 0 there, so a leaked token never becomes the parent of other flows' spans.
 */
function unwind(depth: number, own: Span): void {
  while (syncStack.length > depth) {
    const t = syncStack.pop()!;
    if (t !== own && t.open) {
      t.args = { ...t.args, incomplete: true, reason: 'not ended where it began (an exception, or an await inside a synchronous span)' };
      close(t);
    }
  }
}

/**
 * A span that began at `since` (a `performance.now()` reading of this thread) and ends now, recorded
 * as it ends: on its parent's lane if nothing there ended after `since`, else on a lane where nothing
 * did.
 */
export function spanSince(name: string, since: number, args?: SpanArgs): void {
  if (sink === undefined) return;
  const parent = currentParent();
  let from = usAt(since);
  const fits = (l: number) => (lastEnd[l] ?? 0) <= from;
  let lane = -1;
  if (parent === undefined || parent.open) {
    const l = parent ? parent.lane : 0;
    const stack = lanes[l];
    if ((stack === undefined ? undefined : stack[stack.length - 1]) === parent && fits(l)) {
      lane = l;
      if (parent && from < parent.begin) from = parent.begin;
    }
  }
  if (lane < 0) {
    for (let i = 0; i < lanes.length; i++) {
      if (!lanes[i]!.length && fits(i)) {
        lane = i;
        break;
      }
    }
    if (lane < 0) {
      lane = lanes.length;
      lanes.push([]);
    }
  }
  emit({ name, begin: from, lane, args, open: false }, nowUs());
}

/** Add an argument to the innermost open span of the current flow (nothing when none records). */
export function annotate(key: string, value: ArgValue): void {
  if (sink === undefined) return;
  const s = currentParent();
  if (s?.open) (s.args ??= {})[key] = value;
}

/** Open the capture's root span: the parent of every span begun outside another. */
export function openRoot(name: string, key?: string, value?: ArgValue): void {
  if (sink === undefined) return;
  root = open(name, undefined, key, value);
}

/** End the root span (as failed, with `e`). */
export function closeRoot(e?: unknown): void {
  const r = root;
  if (!r) return;
  root = undefined;
  if (e === undefined) close(r);
  else fail(r, e);
}

/** A span that runs detached from the synchronous stack (a joined capture's stand-in for a root). */
export function openDetached(name: string): { close(e?: unknown): void } {
  if (sink === undefined) return { close: () => undefined };
  const s = open(name, currentParent());
  return { close: (e?: unknown) => (e === undefined ? close(s) : fail(s, e)) };
}

/** Spans of another thread (a pool worker's, sent back with a result), handed to the sink as they are. */
export function ingestSpans(thread: number, spans: readonly FinishedSpan[]): void {
  if (sink === undefined) return;
  for (const s of spans) {
    if (s.args?.incomplete === true) incompleteCount++;
    sink.span(thread, s);
  }
}

// ------------------------------------------------------------------ pool workers

let collected: FinishedSpan[] | undefined;

/**
 * In a pool worker: record into an array (on) or not at all (off). The main thread asks per task; a
 * worker keeps its lanes from task to task while it records.
 */
export function collectSpans(on: boolean): void {
  if (on === (collected !== undefined)) return;
  if (on) {
    const into: FinishedSpan[] = (collected = []);
    startRecording({ span: (_thread, s) => void into.push(s) });
  } else {
    stopRecording('recording stopped');
    collected = undefined;
  }
}

/** Whether this thread records into an array for its caller (`collectSpans(true)`). */
export function collectingSpans(): boolean {
  return collected !== undefined;
}

/** In a pool worker: the spans finished since the last call. */
export function drainSpans(): FinishedSpan[] {
  if (!collected) return [];
  return collected.splice(0);
}
