/**
 * The trace clock: integer microseconds since the Unix epoch, read as `performance.timeOrigin +
 * performance.now()`.
 *
 * Invariants: monotonic within a thread (`performance.now()` is monotonic and `timeOrigin` is fixed for
 * the thread's life); a span's begin and end are read on the same thread, so a duration never mixes two
 * origins. Threads and processes are placed on one timeline through their `timeOrigin`, which is the
 * wall clock when each started: two processes' spans are aligned within the wall clock's error between
 * their starts (well under a millisecond on one machine, unless the clock was stepped in between) — which
 * is why every capture declares its clock (`TRACE_CLOCK`, in its `started` record). Rounding is monotonic,
 * so a span nested in another stays nested once both are rounded.
 */

export const TRACE_CLOCK =
  'performance.timeOrigin + performance.now() in integer µs since the Unix epoch: monotonic per thread; threads and processes aligned by the wall clock at their start';

/** Now, on the trace clock. */
export function nowUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** A `performance.now()` reading of this thread, on the trace clock. */
export function usAt(performanceNow: number): number {
  return Math.round((performance.timeOrigin + performanceNow) * 1000);
}
