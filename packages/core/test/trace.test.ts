/**
 * Issue 14 point 9 — the build timeline (core/src/trace/), recorded by real digests and real processes
 * and judged by the independent Trace Event Format validator (tools/testing/trace-event-format.mjs):
 * - a digest with a pool of two workers: one track per worker thread (`worker N`), each with its
 *   `slice` → `read`/`parse`/`digest` spans (sent back with the results), the calling thread's `lookup`,
 *   `wait`, `assemble`, `store read`/`store write`; every track nests properly;
 * - flows that overlap on one thread (two trees digested at once) get lanes of their own, and still nest;
 * - an exception mid-span writes the span `incomplete` with the reason, and the capture says `incomplete`;
 * - several processes appending to one file at once leave one valid trace with every capture complete;
 * - a file that cannot be written or is not a trace is a KILN_TRACE_UNWRITABLE warning: the work goes
 *   on, and a file that is not a trace is left as it was;
 * - recording is inert without a capture (`begin` returns 0).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestTree } from '@kiln/core';
import { begin, span, startTrace, tracing } from '@kiln/core/trace';
import { checkTrace, type TraceProcess } from '../../../tools/testing/trace-event-format.mjs';

let tmp: string;
let tree: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-trace-'));
  tree = join(tmp, 'tree');
  await mkdir(join(tree, 'src'), { recursive: true });
  await writeFile(join(tree, 'package.json'), JSON.stringify({ name: 'trace-fixture', exports: './src/m00.ts' }));
  for (let i = 0; i < 24; i++) {
    await writeFile(join(tree, 'src', `m${String(i).padStart(2, '0')}.ts`), `/** Doc ${i}. */\nexport function f${i}(x: number): number {\n  return x * ${i};\n}\nexport const c${i} = f${i}(${i});\n`);
  }
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function read(file: string) {
  const checked = checkTrace(await readFile(file, 'utf8'));
  expect(checked.errors).toEqual([]);
  return checked;
}
const names = (p: TraceProcess, track: (name: string) => boolean) => new Set(p.tracks.filter((t) => track(t.name ?? '')).flatMap((t) => t.spans.map((s) => s.name)));

describe('the build timeline (trace/)', () => {
  it('is inert without a capture: begin returns 0 and spans run their function', () => {
    expect(tracing()).toBe(false);
    expect(begin('x')).toBe(0);
    expect(span('x', () => 42)).toBe(42);
  });

  it('a digest with two workers: one track per worker with its spans, the calling thread waiting on them, store reads and writes; every track nests', async () => {
    const file = join(tmp, 'pool.json');
    const session = startTrace(file, { process: 'pool test', root: 'test' });
    expect(session.diagnostics).toEqual([]);
    const store = join(tmp, 'store');
    const cold = await digestTree(tree, { store, workers: 2 });
    const warm = await digestTree(tree, { store, workers: 2 });
    expect(session.stop()).toEqual([]);
    expect(cold.stats.workers).toBe(2);
    expect(warm.stats.parsed).toBe(0);

    const { processes } = await read(file);
    expect(processes).toHaveLength(1);
    const p = processes[0]!;
    expect(p).toMatchObject({ name: 'pool test', state: 'complete' });
    expect(p.captures[0]!.started).toMatchObject({ format: 1, os_pid: process.pid });
    const workers = p.tracks.filter((t) => /^worker \d+$/.test(t.name ?? ''));
    expect(workers).toHaveLength(2);
    for (const w of workers) expect(new Set(w.spans.map((s) => s.name))).toEqual(new Set(['slice', 'read', 'parse', 'digest', 'load typescript']));
    // Every file was sliced by a worker, once.
    const sliced = workers.flatMap((w) => w.spans.filter((s) => s.name === 'slice').map((s) => s.args!.file)).sort();
    expect(sliced).toEqual(Array.from({ length: 24 }, (_, i) => `src/m${String(i).padStart(2, '0')}.ts`));
    const main = names(p, (n) => n.startsWith('main'));
    for (const n of ['test', 'digest', 'lookup', 'wait', 'pool close', 'assemble', 'store read', 'store write']) expect(main, n).toContain(n);
    // The warm run answered from the report memo: a store read, no wait on any pool.
    const digests = p.spans.filter((s) => s.name === 'digest' && s.args?.package !== undefined);
    expect(digests.map((d) => [d.args!.parsed, d.args!.memo])).toEqual([
      [24, false],
      [0, true],
    ]);
    // One time base across threads: every worker span lies inside the cold digest that sent its task
    // (a worker's clock is its own timeOrigin plus its own performance.now()).
    const first = digests[0]!;
    for (const s of workers.flatMap((w) => w.spans)) expect(s.ts >= first.ts && s.ts + s.dur <= first.ts + first.dur, `${s.name} ${s.ts}`).toBe(true);
  });

  it('flows that overlap on one thread get lanes of their own; spans still nest on every track', async () => {
    const file = join(tmp, 'lanes.json');
    const session = startTrace(file, { process: 'lanes test', root: 'test' });
    await Promise.all([digestTree(tree, { store: false, workers: 0 }), digestTree(join(tree, 'src/m01.ts'), { store: false, workers: 0 })]);
    session.stop();
    const p = (await read(file)).processes[0]!;
    const trees = p.tracks.filter((t) => t.spans.some((s) => s.name === 'digest' && s.args?.package !== undefined));
    expect(trees.map((t) => t.name).sort()).toEqual(['main', 'main [lane 1]']);
    expect(p.state).toBe('complete');
  });

  it('an exception mid-span: the span is written incomplete with the reason, the capture says incomplete', async () => {
    const file = join(tmp, 'throw.json');
    const session = startTrace(file, { process: 'throw test', root: 'test' });
    await expect(span('work', async () => digestTree(join(tmp, 'missing')))).rejects.toThrow(/does not exist/);
    session.stop();
    const p = (await read(file)).processes[0]!;
    const work = p.spans.find((s) => s.name === 'work')!;
    expect(work.args).toMatchObject({ incomplete: true, reason: expect.stringMatching(/^exception: .*does not exist/) });
    expect(p.spans.find((s) => s.name === 'digest')!.args).toMatchObject({ incomplete: true });
    expect(p.state).toBe('incomplete');
    expect(p.captures[0]!.end).toMatchObject({ ended: 'stop', open: 0, incomplete_spans: 2 });
  });

  it('several processes appending to one file at once: one valid trace, every capture complete', async () => {
    const file = join(tmp, 'many.json');
    const trace = pathToFileURL(resolve(__dirname, '../dist/trace/index.js')).href;
    const script = `
      const { begin, end, startTrace } = await import(${JSON.stringify(trace)});
      const s = startTrace(process.argv[1], { process: 'writer ' + process.argv[2], root: 'writer' });
      for (let i = 0; i < 3000; i++) { const t = begin('span', 'i', i); end(t); }
      s.stop();`;
    const run = (i: number) =>
      new Promise<number | null>((done) => spawn(process.execPath, ['--input-type=module', '-e', script, file, String(i)], { stdio: 'inherit' }).on('close', done));
    expect(await Promise.all([0, 1, 2, 3].map(run))).toEqual([0, 0, 0, 0]);
    const { processes } = await read(file);
    expect(processes.map((p) => p.name).sort()).toEqual(['writer 0', 'writer 1', 'writer 2', 'writer 3']);
    for (const p of processes) {
      expect(p.state).toBe('complete');
      expect(p.spans.filter((s) => s.name === 'span')).toHaveLength(3000);
    }
  });

  it('a file that cannot be written, or is not a trace, is a warning: the work goes on, and the file is left as it was', async () => {
    const notTrace = join(tmp, 'notes.txt');
    await writeFile(notTrace, 'my notes\n');
    for (const file of [notTrace, join(notTrace, 'trace.json')]) {
      const session = startTrace(file, { process: 'x', root: 'x' });
      expect(session.diagnostics.map((d) => d.code)).toEqual(['KILN_TRACE_UNWRITABLE']);
      expect(tracing()).toBe(false);
      const report = await digestTree(join(tree, 'src/m01.ts'), { store: false, workers: 0 });
      expect(report.declarations.length).toBeGreaterThan(0);
      expect(session.stop()).toEqual([]);
    }
    expect(await readFile(notTrace, 'utf8')).toBe('my notes\n');
  });
});
