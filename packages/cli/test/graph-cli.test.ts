/**
 * `kiln graph export` as a user runs it: the built bin in a real process, on fixture packages written
 * to a temp directory. JSONL on stdout or to --out, exit codes 0/1/2, coded diagnostics on stderr, and
 * `kiln explain` for the codegraph codes.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAsync, type Ran } from './lib/spawn-async.js';
import { readGraph } from '../../core/dist/graph/read.js';
import { GEO, writeTree } from '../../core/test/lib/graph-fixtures.js';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-graph-cli-'));
const geo = join(tmp, 'geo');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
beforeAll(async () => {
  await writeTree(geo, GEO);
});

function kiln(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: tmp, encoding: 'utf8', env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The same real process, without blocking: a test starts its independent commands together. */
function kilnAsync(...args: string[]): Promise<Ran> {
  return spawnAsync(process.execPath, [bin, ...args], { cwd: tmp, env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
}

describe('kiln graph export', () => {
  it('writes the JSONL graph to stdout, or to --out with a summary; the same bytes either way', async () => {
    const [r, out] = await Promise.all([
      kilnAsync('graph', 'export', geo, '--workers', '0'),
      kilnAsync('graph', 'export', 'geo', '--out', 'out/geo.jsonl', '--no-store'),
    ]);
    expect(r.code).toBe(0);
    const doc = readGraph(r.out);
    expect(doc.header).toMatchObject({ kind: 'header', mode: 'checked', package: '@fx/geo', root: '.' });
    expect(doc.records.some((x) => x.kind === 'calls')).toBe(true);
    expect(r.out).not.toContain(tmp);
    expect(out.code).toBe(0);
    expect(out.out).toMatch(/^out\/geo\.jsonl: \d+ nodes, \d+ edges \(checked, snapshot [0-9a-f]{12}\)/);
    expect(readFileSync(join(tmp, 'out/geo.jsonl'), 'utf8')).toBe(r.out);
  });

  it('a type error: exit 1 with coded diagnostics in checked mode, exit 0 and diagnostic records with --allow-errors --check', async () => {
    const dir = join(tmp, 'broken');
    cpSync(geo, dir, { recursive: true });
    writeFileSync(join(dir, 'src/types.ts'), "export interface Named {\n  name: string;\n}\nexport const n: number = 'x';\n");
    const [r, tolerant] = await Promise.all([
      kilnAsync('graph', 'export', dir, '--workers', '0'),
      kilnAsync('graph', 'export', dir, '--allow-errors', '--check', '--workers', '0'),
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/KILN_GRAPH_CHECK_FAILED/);
    // The text projection of the diagnostic envelope: the compiler's code in the form editors link (kiln's
    // code, KILN_TYPESCRIPT_ERROR, is in the envelope; the message no longer repeats the TS code).
    expect(r.err).toMatch(/src\/types\.ts:4:14 - error TS2322: Type 'string' is not assignable/);
    expect(tolerant.code).toBe(0);
    const doc = readGraph(tolerant.out);
    expect(doc.header.mode).toBe('allow-errors');
    expect(doc.records.find((x) => x.kind === 'diagnostic' && (x as { ts_code?: string }).ts_code === 'TS2322')).toBeDefined();
    expect(tolerant.err).toMatch(/TS2322/);
  });

  it('a tolerant export with many errors prints the first 20 and a count; a refused one prints them all', async () => {
    const dir = join(tmp, 'many-errors');
    cpSync(geo, dir, { recursive: true });
    writeFileSync(join(dir, 'src/bad.ts'), Array.from({ length: 30 }, (_, i) => `export const n${i}: number = 'x${i}';\n`).join(''));
    const [tolerant, refused] = await Promise.all([
      kilnAsync('graph', 'export', dir, '--allow-errors', '--check', '--workers', '0'),
      kilnAsync('graph', 'export', dir, '--workers', '0'),
    ]);
    expect(tolerant.code).toBe(0);
    const doc = readGraph(tolerant.out);
    const records = doc.records.filter((x) => x.kind === 'diagnostic' && (x as { ts_code?: string }).ts_code === 'TS2322');
    expect(records).toHaveLength(30);
    const printed = tolerant.err.match(/ - error TS2322: /g) ?? [];
    expect(printed.length).toBeGreaterThan(0);
    expect(printed.length).toBeLessThanOrEqual(20);
    expect(tolerant.err).toMatch(/… and \d+ more diagnostic\(s\), recorded in the graph/);
    expect(refused.code).toBe(1);
    expect(refused.err.match(/ - error TS2322: /g)).toHaveLength(30);
  });

  it('--allow-errors alone exports from syntax: no program, no compiler diagnostics, every source fact syntax_inferred, said on stderr', () => {
    const dir = join(tmp, 'broken-syntax');
    cpSync(geo, dir, { recursive: true });
    writeFileSync(join(dir, 'src/types.ts'), "export interface Named {\n  name: string;\n}\nexport const n: number = 'x';\n");
    const r = kiln('graph', 'export', dir, '--allow-errors', '--workers', '0');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/warning KILN_GRAPH_UNCHECKED: tolerant export from syntax alone/);
    expect(r.err).not.toMatch(/TS2322/);
    const doc = readGraph(r.out);
    expect(doc.header).toMatchObject({ mode: 'allow-errors', tsconfig: 'tsconfig.json' });
    const tiers = new Set(doc.records.filter((x) => x.provenance !== 'manifest_declared').map((x) => x.provenance));
    expect(tiers).toEqual(new Set(['syntax_inferred']));
    expect(doc.records.some((x) => x.kind === 'references')).toBe(true);
    expect(doc.records.some((x) => x.kind === 'calls' || x.kind === 'call' || x.kind === 'reference')).toBe(false);
    expect(r.out).not.toContain(tmp);
    // The same bytes from a second run (warm store).
    expect(kiln('graph', 'export', dir, '--allow-errors', '--workers', '0').out).toBe(r.out);
  });

  it('usage errors exit 2; a missing path or tsconfig exits 1 with a code', async () => {
    const [noPath, badWorkers, badOption, missing, noConfig, help] = await Promise.all([
      kilnAsync('graph', 'export'),
      kilnAsync('graph', 'export', geo, '--workers', 'many'),
      kilnAsync('graph', 'export', geo, '--frobnicate'),
      kilnAsync('graph', 'export', join(tmp, 'nope')),
      kilnAsync('graph', 'export', geo, '--tsconfig', 'tsconfig.nope.json'),
      kilnAsync('graph', 'export', '--help'),
    ]);
    expect(noPath.code).toBe(2);
    expect(badWorkers.code).toBe(2);
    expect(badOption.code).toBe(2);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/KILN_NOT_FOUND/);
    expect(noConfig.code).toBe(1);
    expect(noConfig.err).toMatch(/KILN_TSCONFIG_NOT_FOUND/);
    // One help text, both options in it.
    expect(help.out).toMatch(/--allow-errors/);
    expect(help.out).toMatch(/--check/);
  });

  it('kiln explain knows the codegraph codes', async () => {
    const codes = ['KILN_GRAPH_CHECK_FAILED', 'KILN_GRAPH_INVALID', 'KILN_GRAPH_UNCHECKED', 'KILN_GRAPH_UNSUPPORTED_SCHEMA'];
    const runs = await Promise.all(codes.map((code) => kilnAsync('explain', code)));
    for (const [i, code] of codes.entries()) {
      const r = runs[i]!;
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^${code} \\((error|warning)\\)`));
      expect(r.out).toMatch(/How to fix it: /);
    }
  });
});
