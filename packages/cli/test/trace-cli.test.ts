/**
 * Issue 14 point 9 — `--trace FILE` on the CLI, real `kiln` processes, judged by the independent Trace
 * Event Format validator (tools/testing/trace-event-format.mjs):
 * - `kiln digest --workers 2` and `kiln graph export --allow-errors` (traced by KILN_TRACE instead of the flag) run at
 *   once append to one file: one valid trace, a process each, named by its command line, each capture
 *   complete; the digest's two workers have a track each with their `slice`/`read`/`parse`/`digest`
 *   spans, its main thread `lookup`, `wait`, `store write`; the export its phases;
 * - a command that fails (a missing path) writes its spans incomplete, with the reason, and says so;
 * - a command killed by SIGTERM mid-digest writes what was open as incomplete (`signal SIGTERM`) and
 *   ends as the signal ends it; one killed by SIGKILL leaves a capture without its closing record,
 *   which a reader reports as cut short.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTrace } from '../../../tools/testing/trace-event-format.mjs';
import { spawnAsync } from './lib/spawn-async.js';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
let tmp: string;

/** A package of `n` small modules. */
async function makeTree(dir: string, n: number): Promise<string> {
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'trace-cli-fixture', exports: './src/m000.ts' }));
  for (let i = 0; i < n; i++) {
    const deps = i ? `import { f${i - 1} } from './m${String(i - 1).padStart(3, '0')}.js';\n` : '';
    await writeFile(join(dir, 'src', `m${String(i).padStart(3, '0')}.ts`), `${deps}/** Doc ${i}. */\nexport function f${i}(x: number): number {\n  return ${i ? `f${i - 1}(x) + ` : ''}x * ${i};\n}\nexport class C${i} { m(): number { return f${i}(${i}); } }\n`);
  }
  return dir;
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-trace-cli-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => {
  const e: NodeJS.ProcessEnv = { ...process.env, KILN_STORE: join(tmp, 'store'), ...extra };
  if (!extra.KILN_TRACE) delete e.KILN_TRACE;
  return e;
};

async function traceOf(file: string) {
  const checked = checkTrace(await readFile(file, 'utf8'));
  expect(checked.errors).toEqual([]);
  return checked.processes;
}

describe('kiln --trace', () => {
  it('digest and graph export at once append to one trace: a process each, a track per worker, the phases, both complete', async () => {
    const tree = await makeTree(join(tmp, 'tree'), 24);
    const file = join(tmp, 'merged.json');
    const [digest, graph] = await Promise.all([
      spawnAsync(process.execPath, [bin, 'digest', tree, '--workers', '2', '--trace', file], { cwd: tmp, env: env() }),
      spawnAsync(process.execPath, [bin, 'graph', 'export', join(root, 'fixtures/graph/shop'), '--allow-errors', '--no-store', '--out', join(tmp, 'shop.jsonl')], { cwd: root, env: env({ KILN_TRACE: file }) }),
    ]);
    expect(digest.code, digest.err).toBe(0);
    expect(graph.code, graph.err).toBe(0);
    const processes = await traceOf(file);
    expect(processes.map((p) => p.name).sort()).toEqual([`kiln digest ${tree}`, `kiln graph export ${join(root, 'fixtures/graph/shop')}`]);
    for (const p of processes) expect(p.state).toBe('complete');

    const d = processes.find((p) => p.name!.startsWith('kiln digest'))!;
    const workers = d.tracks.filter((t) => /^worker \d+$/.test(t.name ?? ''));
    expect(workers).toHaveLength(2);
    for (const w of workers) for (const n of ['slice', 'read', 'parse', 'digest']) expect(w.spans.map((s) => s.name), `${w.name} ${n}`).toContain(n);
    const main = new Set(d.tracks.filter((t) => t.name?.startsWith('main')).flatMap((t) => t.spans.map((s) => s.name)));
    for (const n of ['kiln digest', 'digest', 'lookup', 'wait', 'store read', 'store write', 'assemble']) expect(main, n).toContain(n);
    const top = d.spans.find((s) => s.name === 'digest' && s.args?.package !== undefined)!;
    expect(top.args).toMatchObject({ files: 24, parsed: 24, store_hits: 0 });

    const g = processes.find((p) => p.name!.startsWith('kiln graph export'))!;
    const gNames = new Set(g.spans.map((s) => s.name));
    for (const n of ['kiln graph export', 'graph export', 'digest', 'parse', 'graph config', 'graph build', 'graph imports', 'graph references']) expect(gNames, n).toContain(n);
  });

  it('a command that fails writes its spans incomplete, with the reason', async () => {
    const file = join(tmp, 'failed.json');
    const r = await spawnAsync(process.execPath, [bin, 'digest', join(tmp, 'nope'), '--trace', file], { cwd: tmp, env: env() });
    expect(r.code).toBe(1);
    expect(r.err).toContain('KILN_NOT_FOUND');
    const [p] = await traceOf(file);
    expect(p!.state).toBe('incomplete');
    for (const name of ['kiln digest', 'digest']) {
      expect(p!.spans.find((s) => s.name === name)!.args, name).toMatchObject({ incomplete: true, reason: expect.stringMatching(/^exception: .*does not exist/) });
    }
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)('a command killed by %s mid-digest: its capture is marked incomplete or reads as cut short', async (signal) => {
    const tree = await makeTree(join(tmp, `big-${signal}`), 400);
    const file = join(tmp, `killed-${signal}.json`);
    const child = spawn(process.execPath, [bin, 'digest', tree, '--workers', '1', '--no-store', '--trace', file], { cwd: tmp, env: env(), stdio: 'ignore' });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('exit', (code, sig) => done([code, sig])));
    // Kill it once its capture has started (its first record is written at once).
    for (let i = 0; i < 2000 && !(existsSync(file) && readFileSync(file, 'utf8').includes('"started"')); i++) await new Promise((r) => setTimeout(r, 5));
    child.kill(signal);
    expect(await exited).toEqual([null, signal]);
    const [p] = await traceOf(file);
    if (signal === 'SIGKILL') {
      expect(p!.state).toBe('cut');
      return;
    }
    expect(p!.state).toBe('incomplete');
    expect(p!.captures[0]!.end).toMatchObject({ ended: 'signal SIGTERM' });
    expect(p!.captures[0]!.end!.open).toBeGreaterThan(0);
    const root = p!.spans.find((s) => s.name === 'kiln digest')!;
    expect(root.args).toMatchObject({ incomplete: true, reason: 'signal SIGTERM' });
  });
});
