/**
 * Starting and ending a process's capture (capture.ts): `--trace FILE` on the CLI, `KILN_TRACE=FILE` in
 * the Nx executors and the plugin. One capture per process at a time; a second start while one is open
 * joins it (its root becomes a span of the first).
 *
 * How a capture ends decides what it says:
 * - `stop()` (the command or task finished, well or not): spans still open are written incomplete
 *   (`reason: "open when the capture was closed"`), then the `complete`/`incomplete` record;
 * - the process exits without `stop()` (`process.exit`, an uncaught exception — its message becomes the
 *   reason): the same, from the `exit` event;
 * - SIGINT, SIGTERM, SIGHUP: the same, then the signal is raised again if nobody else listens for it, so
 *   the process ends as it would have;
 * - SIGKILL, a crash: nothing can be written; the capture lacks its last record, which readers treat as
 *   incomplete.
 *
 * Invariants: an observer failure never changes kiln's results or exit status — a file that cannot be
 * written is a KILN_TRACE_UNWRITABLE warning (returned, the caller prints it) and the work goes on
 * untraced. No handler is installed and nothing is opened unless a capture starts; `stop()` removes them.
 */
import { resolve } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { FileCapture } from './capture.js';
import { closeRoot, incompleteSpans, openDetached, openRoot, startRecording, stopRecording, tracing } from './record.js';

export interface TraceSession {
  /** Problems starting (a file that cannot be written): the session then records nothing. */
  readonly diagnostics: Diagnostic[];
  /** Mark the root span as cut short by `e` (it ends at `stop`). */
  fail(e: unknown): void;
  /** End the capture (or, for a joined one, its root span); problems writing it, if any. */
  stop(): Diagnostic[];
}

export interface TraceOptions {
  /** The process's name in the trace (the Nx task id, `kiln digest`). */
  process: string;
  /** A root span over the whole capture, by this name; none for a process that lives on (the plugin's). */
  root?: string;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

interface Active {
  capture: FileCapture;
  file: string;
  /** Why the process is ending, when it is not a `stop()` (an uncaught exception). */
  reason?: string;
  onExit: (code: number) => void;
  onSignal: Map<string, () => void>;
  onUncaught: (e: Error) => void;
}

let active: Active | undefined;

function unwritable(file: string, why: string): Diagnostic {
  return diagnostic('KILN_TRACE_UNWRITABLE', `${file}: ${why}`, { producer: 'trace' });
}

/** Start this process's capture in `file` (appended to, created if absent). */
export function startTrace(file: string, options: TraceOptions): TraceSession {
  if (active || tracing()) {
    // One capture per process: this one joins it.
    const joined = options.root ? openDetached(options.root) : { close: () => undefined };
    let failure: unknown;
    return {
      diagnostics: [],
      fail: (e) => void (failure = e),
      stop: () => {
        joined.close(failure);
        return [];
      },
    };
  }
  const capture = FileCapture.open(resolve(file), options.process);
  if (typeof capture === 'string') return { diagnostics: [unwritable(file, capture)], fail: () => undefined, stop: () => [] };
  const a: Active = {
    capture,
    file,
    onExit: (code) => finish(`exit code ${code}${a.reason ? ` (${a.reason})` : ''}`, a.reason ?? 'the process exited while it was open'),
    onSignal: new Map(),
    onUncaught: (e) => void (a.reason = `uncaught exception: ${e?.message ?? String(e)}`),
  };
  active = a;
  startRecording(capture);
  if (options.root) openRoot(options.root);
  process.on('exit', a.onExit);
  process.on('uncaughtExceptionMonitor', a.onUncaught);
  for (const sig of SIGNALS) {
    const h = () => {
      finish(`signal ${sig}`, `signal ${sig}`);
      // Ours was the only handler: end as the signal would have ended the process.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    a.onSignal.set(sig, h);
    process.on(sig, h);
  }
  // The start is on disk at once, once the handlers are in place: a capture killed before its first
  // batch still shows it began, and one whose start can be seen is one a signal is handled for.
  capture.flush();
  let failure: unknown;
  return {
    diagnostics: [],
    fail: (e) => void (failure = e),
    stop: () => {
      if (active !== a) return [];
      closeRoot(failure);
      return finish('stop', 'open when the capture was closed');
    },
  };
}

/** Write what the capture has buffered (a long-lived process, after each piece of work). */
export function flushTrace(): void {
  active?.capture.flush();
}

/** Close the open spans as incomplete (`reason`), write the last record, remove the handlers. */
function finish(ended: string, reason: string): Diagnostic[] {
  const a = active;
  if (!a) return [];
  active = undefined;
  process.off('exit', a.onExit);
  process.off('uncaughtExceptionMonitor', a.onUncaught);
  for (const [sig, h] of a.onSignal) process.off(sig, h);
  // The root too, unless stop() ended it: a capture cut short shows what it was cut short in.
  const open = stopRecording(reason);
  a.capture.end(ended, open, incompleteSpans());
  return a.capture.problem ? [unwritable(a.file, a.capture.problem)] : [];
}

/**
 * Run `fn` in a capture when `file` is set (`--trace`, KILN_TRACE), with a root span `root`; problems
 * writing the trace go to `report`, never into `fn`'s result.
 */
export async function withTrace<T>(file: string | undefined, options: TraceOptions, fn: () => Promise<T>, report: (d: Diagnostic) => void): Promise<T> {
  if (!file) return fn();
  const session = startTrace(file, options);
  for (const d of session.diagnostics) report(d);
  try {
    return await fn();
  } catch (e) {
    session.fail(e);
    throw e;
  } finally {
    for (const d of session.stop()) report(d);
  }
}
