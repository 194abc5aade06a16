/**
 * The digest worker pool. Created and closed by core only (never by executors); sized to the
 * machine unless told otherwise; `withDigestPool` closes it on every path, error or not.
 * Invariant: the pool is destroyed only once no task is in flight — a caller that fails mid-run
 * (a throwing progress listener) leaves tasks running, and piscina throws an uncaught "Unexpected
 * message from Worker" when a worker answers a destroyed pool.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { DigestTask, DigestTaskResult } from './worker.js';

export interface DigestPool {
  run(task: DigestTask): Promise<DigestTaskResult>;
  readonly threads: number;
  destroy(): Promise<void>;
}

/**
 * One worker per core but one: the calling thread hashes, reads the store and assembles while the
 * workers parse, and one extraction thread already keeps more than a core busy (V8's GC and compiler
 * run on helper threads). Measured on 2 cores (trpc, 904 files, fresh `kiln digest` processes, no
 * store): 1 worker 3.5 s, 2 workers 4.1 s; tools/bench-digest.mjs "cold tree" and "ceiling" rows.
 */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

export function createDigestPool(threads = defaultWorkerCount()): DigestPool {
  const piscina = new Piscina<DigestTask, DigestTaskResult>({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
    // Two tasks per worker: a task is synchronous (read, extract, serialise; digestTree writes the
    // store itself, once per run), so the second is simply queued in the worker, which starts it the
    // moment the first returns instead of waiting for a round trip to this thread. Results unchanged.
    concurrentTasksPerWorker: 2,
    // Deep syntax recurses in the parser; give workers the same headroom as the main thread.
    resourceLimits: { stackSizeMb: 8 },
  });
  const inFlight = new Set<Promise<unknown>>();
  return {
    threads,
    run: (task) => {
      const p = piscina.run(task);
      const settled = p.then(
        () => undefined,
        () => undefined,
      );
      inFlight.add(settled);
      void settled.then(() => inFlight.delete(settled));
      return p;
    },
    destroy: async () => {
      // Tasks are short and synchronous in the worker; waiting for them is bounded.
      while (inFlight.size > 0) await Promise.all(inFlight);
      await piscina.destroy();
    },
  };
}

export async function withDigestPool<T>(threads: number | undefined, f: (pool: DigestPool) => Promise<T>): Promise<T> {
  const pool = createDigestPool(threads);
  try {
    return await f(pool);
  } finally {
    await pool.destroy();
  }
}
