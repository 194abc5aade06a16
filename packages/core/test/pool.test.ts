/**
 * Issue 2, point 9 — the piscina pool:
 * - digesting a tree runs in a pool sized to the machine (min(availableParallelism − 1 or 1, misses));
 * - the parser loads once per worker (each worker reports its thread, its task count and how many
 *   times it loaded the compiler — a worker that reloaded it per task would report more than 1);
 * - nothing does I/O at import time (a child process traps every fs call made outside Node's module
 *   loader while importing every module of packages/core/dist, and checks the compiler is not loaded);
 * - the pool is closed on every path (worker tasks that throw, files that disappear mid-run, a
 *   callback that throws): afterwards the process has no more OS threads than before.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestTree, DIGEST_SCHEMA } from '@kiln/core';
import { createDigestPool, defaultWorkerCount, withDigestPool } from '../dist/pool/pool.js';
import type { DigestTaskResult } from '../dist/pool/worker.js';

const temps: string[] = [];
async function tempDir(prefix = 'kiln-pool-'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

/** A package with `n` small source files, each with a couple of declarations. */
async function makeTree(n: number): Promise<string> {
  const root = await tempDir();
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'pool-fixture', exports: './src/index.ts' }));
  await mkdir(join(root, 'src'));
  for (let i = 0; i < n; i++) {
    await writeFile(
      join(root, 'src', `m${String(i).padStart(3, '0')}.ts`),
      `export function f${i}(x: number): number {\n  const g = (y: number) => y * ${i};\n  return g(x) + ${i};\n}\nexport class C${i} { m() { return f${i}(${i}); } }\n`,
    );
  }
  return root;
}

const strip = <T extends { stats?: unknown }>(r: T) => ({ ...r, stats: undefined });

// ------------------------------------------------------------------ OS threads (Linux /proc)

const canCountThreads = existsSync('/proc/self/task');
const osThreads = () => readdirSync('/proc/self/task').length;

/** Wait until the thread count falls back to `baseline` (thread exit is asynchronous in the OS). */
async function threadsSettle(baseline: number, ms = 5000): Promise<number> {
  const until = Date.now() + ms;
  let n = osThreads();
  while (n > baseline && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    n = osThreads();
  }
  return n;
}

let baseline = 0;
beforeAll(async () => {
  // Warm up everything that starts threads lazily and keeps them (libuv's pool, V8 helpers), so the
  // baseline is what this process runs with when no digest pool exists.
  const tree = await makeTree(3);
  await digestTree(tree, { store: false, workers: 2 });
  await digestTree(tree, { store: false, workers: 0 });
  if (canCountThreads) baseline = await threadsSettle(0, 300);
});

describe('pool size', () => {
  it('defaults to the machine: workers = min(a core per worker but one for the calling thread, files to parse)', async () => {
    const cores = Math.max(1, availableParallelism() - 1);
    expect(defaultWorkerCount()).toBe(cores);
    const many = await makeTree(cores + 3);
    const r = await digestTree(many, { store: false });
    expect(r.stats.parsed).toBe(cores + 3);
    expect(r.stats.workers).toBe(Math.min(cores, r.stats.parsed));
    expect(r.declarations.filter((d) => d.semantic_digest === null)).toEqual([]);

    const one = await makeTree(1);
    const r1 = await digestTree(one, { store: false });
    expect(r1.stats.workers).toBe(1);
  });

  it('starts no pool when nothing needs parsing (all store hits)', async () => {
    const tree = await makeTree(4);
    const store = join(await tempDir(), 'store');
    const cold = await digestTree(tree, { store });
    expect(cold.stats.workers).toBe(Math.min(Math.max(1, availableParallelism() - 1), 4));
    const before = canCountThreads ? osThreads() : 0;
    const warm = await digestTree(tree, { store });
    expect(warm.stats).toMatchObject({ parsed: 0, storeHits: 4, workers: 0 });
    if (canCountThreads) expect(osThreads()).toBeLessThanOrEqual(before);
  });

  it('the pool and the calling thread give the same report', async () => {
    const tree = await makeTree(7);
    const inPool = await digestTree(tree, { store: false, workers: 2 });
    const onThread = await digestTree(tree, { store: false, workers: 0 });
    expect(inPool.stats.workers).toBe(2);
    expect(onThread.stats.workers).toBe(0);
    expect(JSON.stringify(strip(inPool))).toBe(JSON.stringify(strip(onThread)));
  });
});

describe('parser loads once per worker', () => {
  it('every worker loads the compiler exactly once, however many tasks it runs', async () => {
    const tree = await makeTree(24);
    const pool = createDigestPool(2);
    const results: DigestTaskResult[] = [];
    try {
      expect(pool.threads).toBe(2);
      // Sequential waves so each worker certainly runs several tasks.
      for (let wave = 0; wave < 4; wave++) {
        const batch = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            pool.run({
              file: join(tree, 'src', `m${String(wave * 6 + i).padStart(3, '0')}.ts`),
              variant: 'ts',
              digestSchema: DIGEST_SCHEMA,
              maxFileSize: 1 << 20,
              storeDir: null,
            }),
          ),
        );
        results.push(...batch);
      }
    } finally {
      await pool.destroy();
    }
    expect(results.every((r) => r.slice && r.slice.decls.length >= 3)).toBe(true);
    const byThread = new Map<number, { tasks: number; loads: Set<number> }>();
    for (const r of results) {
      expect(r.worker).toBeDefined();
      const w = r.worker!;
      const e = byThread.get(w.threadId) ?? { tasks: 0, loads: new Set<number>() };
      e.tasks = Math.max(e.tasks, w.tasks);
      e.loads.add(w.parserLoads);
      byThread.set(w.threadId, e);
    }
    // At most the pool's threads ran tasks, none of them is the calling thread (threadId 0)...
    expect(byThread.size).toBeGreaterThanOrEqual(1);
    expect(byThread.size).toBeLessThanOrEqual(2);
    expect(byThread.has(0)).toBe(false);
    for (const [, e] of byThread) {
      // ...each parsed with the compiler loaded exactly once...
      expect([...e.loads]).toEqual([1]);
    }
    // ...and the same worker module instance served many tasks (a worker re-created per task would
    // report tasks = 1 every time and hide repeated loads).
    expect(Math.max(...[...byThread.values()].map((e) => e.tasks))).toBeGreaterThan(3);
    expect([...byThread.values()].reduce((s, e) => s + e.tasks, 0)).toBe(results.length);
  });
});

describe('nothing does I/O at import time', () => {
  it('importing every module of packages/core/dist makes no fs call and loads no parser', async () => {
    const require = createRequire(import.meta.url);
    const entry = require.resolve('@kiln/core');
    const dist = dirname(entry);
    const workerEntry = require.resolve('@kiln/core/worker');
    const modules: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.js')) modules.push(p);
      }
    };
    walk(dist);
    expect(modules.length).toBeGreaterThan(10);

    const dir = await tempDir('kiln-import-');
    const trap = join(dir, 'trap.mjs');
    // Preload: wrap every fs entry point (sync, callback and promise APIs). A call is counted while the
    // trap is armed; calls made by Node's own module loader (reading module sources) are kept apart.
    await writeFile(
      trap,
      `
import fs from 'node:fs';
import fsp from 'node:fs/promises';
const calls = [];
globalThis.__kilnIo = { armed: false, calls };
for (const [obj, label] of [[fs, 'fs'], [fsp, 'fs/promises']]) {
  for (const name of Object.keys(obj)) {
    const orig = obj[name];
    if (typeof orig !== 'function' || /^[A-Z]/.test(name) || name === 'constants') continue;
    obj[name] = function (...args) {
      if (globalThis.__kilnIo.armed) {
        const stack = new Error().stack.split('\\n').slice(2).join('\\n');
        calls.push({ call: label + '.' + name, arg: String(args[0]), loader: /node:internal\\/modules\\//.test(stack), stack });
      }
      return orig.apply(this, args);
    };
  }
}
`,
    );
    const script = join(dir, 'import-all.mjs');
    await writeFile(
      script,
      `
const modules = ${JSON.stringify([entry, workerEntry, ...modules].map((m) => pathToFileURL(m).href))};
const before = process.getActiveResourcesInfo().sort();
globalThis.__kilnIo.armed = true;
for (const m of modules) await import(m);
globalThis.__kilnIo.armed = false;
const after = process.getActiveResourcesInfo().sort();
process.stdout.write(JSON.stringify({ calls: globalThis.__kilnIo.calls, before, after }));
`,
    );
    const out = spawnSync(process.execPath, ['--import', pathToFileURL(trap).href, script], { encoding: 'utf8', timeout: 60_000 });
    expect(out.status, out.stderr).toBe(0);
    const { calls, before, after } = JSON.parse(out.stdout) as {
      calls: { call: string; arg: string; loader: boolean; stack: string }[];
      before: string[];
      after: string[];
    };
    // The trap works: loading the modules themselves went through fs (so a stray call would be seen).
    expect(calls.some((c) => c.loader && c.arg.includes('dist'))).toBe(true);
    // No module body did I/O of its own.
    const own = calls.filter((c) => !c.loader);
    expect(own.map((c) => `${c.call}(${c.arg})\n${c.stack}`)).toEqual([]);
    // No module loaded the compiler (it loads lazily, on a worker's first parse).
    expect(calls.filter((c) => /[\\/]node_modules[\\/]typescript[\\/]/.test(c.arg)).map((c) => c.arg)).toEqual([]);
    // And none left work behind: no timer, file handle, socket, message port or worker. (stdio pipes
    // and close requests come and go with the process's own stdio.)
    const ignored = new Set(['CloseReq', 'PipeWrap', 'TTYWrap', 'SignalWrap']);
    const added = after.filter((r) => !ignored.has(r));
    for (const r of before) {
      const i = added.indexOf(r);
      if (i >= 0) added.splice(i, 1);
    }
    expect(added).toEqual([]);
  });
});

describe('the pool is closed on every path', () => {
  it.runIf(canCountThreads)('pool threads exist while it runs and are gone after destroy', async () => {
    const pool = createDigestPool(2);
    try {
      // Piscina starts minThreads eagerly; give them a moment to appear.
      const until = Date.now() + 5000;
      while (osThreads() < baseline + 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      expect(osThreads()).toBeGreaterThanOrEqual(baseline + 2);
    } finally {
      await pool.destroy();
    }
    expect(await threadsSettle(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('worker tasks that throw: every file gets a coded diagnostic, no thread remains', async () => {
    const tree = await makeTree(5);
    // An unsupported digest schema makes extraction throw inside the worker.
    let report;
    try {
      report = await digestTree(tree, { store: false, workers: 2, digestSchema: 999 });
    } catch (e) {
      // Refusing the option up front is also acceptable, as long as it is coded and leaks nothing.
      expect((e as { code?: string }).code).toMatch(/^KILN_/);
    }
    if (report) {
      expect(report.stats.workers).toBe(2);
      const failed = report.diagnostics.filter((d) => d.code === 'KILN_WORKER_FAILED').map((d) => d.file);
      expect(failed.sort()).toEqual(['src/m000.ts', 'src/m001.ts', 'src/m002.ts', 'src/m003.ts', 'src/m004.ts']);
      expect(report.files).toEqual([]);
    }
    if (canCountThreads) expect(await threadsSettle(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('a task that throws inside withDigestPool rejects and still closes the pool', async () => {
    const tree = await makeTree(1);
    await expect(
      withDigestPool(2, async (pool) => {
        await pool.run({ file: join(tree, 'src', 'm000.ts'), variant: 'ts', digestSchema: 999, maxFileSize: 1 << 20, storeDir: null });
      }),
    ).rejects.toThrow(/999/);
    await expect(
      withDigestPool(2, async () => {
        throw new Error('caller failed');
      }),
    ).rejects.toThrow('caller failed');
    if (canCountThreads) expect(await threadsSettle(baseline)).toBeLessThanOrEqual(baseline);
  });

  it.each([2, 0])('files that disappear mid-run (workers: %i): KILN_READ_FAILED for them, the rest digested, no thread remains', async (workers) => {
    const n = 30;
    const tree = await makeTree(n);
    const files = [...Array(n).keys()].map((i) => `src/m${String(i).padStart(3, '0')}.ts`);
    const removed = new Set<string>();
    const report = await digestTree(tree, {
      store: false,
      workers,
      onProgress: (done) => {
        // After the first file completes, delete every file from the middle of the list on.
        if (done === 1) {
          for (const f of files.slice(n / 2)) {
            removed.add(f);
            void unlink(join(tree, f)).catch(() => undefined);
          }
        }
      },
    });
    const failed = new Set(report.diagnostics.filter((d) => d.code === 'KILN_READ_FAILED').map((d) => d.file!));
    const digested = new Set(report.files.map((f) => f.path));
    // Every file is accounted for exactly once: digested, or reported as unreadable.
    for (const f of files) expect(digested.has(f) !== failed.has(f), f).toBe(true);
    // Files never removed are all digested; at least some removed ones were caught mid-run.
    for (const f of files.filter((f) => !removed.has(f))) expect(digested.has(f), f).toBe(true);
    expect(failed.size).toBeGreaterThan(0);
    for (const f of failed) expect(removed.has(f)).toBe(true);
    // Diagnostics are products too: they name the file relatively, never by absolute path.
    expect(JSON.stringify(report.diagnostics)).not.toContain(tree);
    if (canCountThreads) expect(await threadsSettle(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('a progress callback that throws rejects the run and still closes the pool', async () => {
    // Many files: when the listener throws on the first one, tasks are still in flight. A pool
    // destroyed under them makes piscina throw an uncaught "Unexpected message from Worker" (it
    // failed CI once); the pool must wait for them.
    const tree = await makeTree(120);
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      for (let round = 0; round < 3; round++) {
        await expect(
          digestTree(tree, {
            store: false,
            workers: 2,
            onProgress: () => {
              throw new Error('progress listener failed');
            },
          }),
        ).rejects.toThrow('progress listener failed');
      }
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught.map(String)).toEqual([]);
    if (canCountThreads) expect(await threadsSettle(baseline)).toBeLessThanOrEqual(baseline);
  });

  it('a process that digests with the pool exits on its own, promptly', async () => {
    const tree = await makeTree(6);
    const require = createRequire(import.meta.url);
    const entry = pathToFileURL(require.resolve('@kiln/core')).href;
    const code = `
      const { digestTree } = await import(${JSON.stringify(entry)});
      const ok = await digestTree(${JSON.stringify(tree)}, { store: false, workers: 2 });
      const bad = await digestTree(${JSON.stringify(tree)}, { store: false, workers: 2, digestSchema: 999 }).catch((e) => ({ stats: {}, diagnostics: [{ code: e.code }] }));
      process.stdout.write(JSON.stringify({ ok: ok.stats.workers, bad: bad.diagnostics.length }));
    `;
    const t0 = Date.now();
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 60_000 });
    expect(out.error).toBeUndefined();
    expect(out.status, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: 2 });
    // Piscina's idle timeout is 60 s: a pool left open would hold the process (or be killed above).
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});
