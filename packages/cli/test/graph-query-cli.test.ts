/**
 * `kiln graph summary|find|module|neighbors` and `kiln context pack|explain` as a user runs them: the
 * built bin in a real process on fixtures/graph/shop (exported on the spot, or from a JSONL file),
 * text and JSON, exit codes 0/1/2, coded diagnostics on stderr, `kiln explain` for the new codes.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAsync, type Ran } from './lib/spawn-async.js';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-query-cli-'));
const shop = join(tmp, 'shop');
const graphFile = join(tmp, 'shop.jsonl');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function kiln(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: tmp, encoding: 'utf8', env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/**
 * The same real process, without blocking: a test starts its independent commands (reads of the
 * exported graph file, usage errors) together and asserts on each result.
 */
function kilnAsync(...args: string[]): Promise<Ran> {
  return spawnAsync(process.execPath, [bin, ...args], { cwd: tmp, env: { ...process.env, KILN_STORE: join(tmp, 'store') } });
}

beforeAll(() => {
  cpSync(join(root, 'fixtures/graph/shop'), shop, { recursive: true });
  const r = kiln('graph', 'export', shop, '--out', graphFile, '--workers', '0');
  expect(r.code, r.err).toBe(0);
});

describe('kiln graph summary', () => {
  it('prints counts, modules and the snapshot in text and JSON, from a file or a directory alike', async () => {
    const [text, jsonRun, liveRun] = await Promise.all([
      kilnAsync('graph', 'summary', '--graph', graphFile),
      kilnAsync('graph', 'summary', '--graph', graphFile, '--format', 'json'),
      kilnAsync('graph', 'summary', shop, '--format', 'json', '--workers', '0'),
    ]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^snapshot [0-9a-f]{32}  schema 1  mode checked/);
    expect(text.out).toMatch(/by provenance:\n +\d+  compiler_checked\n +\d+  manifest_declared/);
    expect(text.out).toContain('@fx/shop  6 modules');
    const json = JSON.parse(jsonRun.out);
    expect(json.kind).toBe('kiln-graph-summary');
    const live = JSON.parse(liveRun.out);
    expect(live).toEqual(json);
    const header = JSON.parse(readFileSync(graphFile, 'utf8').split('\n')[0]!);
    expect(json.snapshot).toBe(header.snapshot.id);
  });
});

describe('kiln graph find / module / neighbors', () => {
  it('find ranks matches and prints ids; --kind and --limit narrow it', async () => {
    const [r, limited, modules, none] = await Promise.all([
      kilnAsync('graph', 'find', 'vDC', '--graph', graphFile),
      kilnAsync('graph', 'find', 'money', '--graph', graphFile, '--format', 'json', '--limit', '3'),
      kilnAsync('graph', 'find', 'money', '--graph', graphFile, '--format', 'json', '--kind', 'module'),
      kilnAsync('graph', 'find', 'qqq', '--graph', graphFile),
    ]);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/camel-case +function validateDiscountCode \(exported\)  src\/discount\.ts:10-12/);
    expect(r.out).toContain('typescript:@fx/shop//src/discount#validateDiscountCode:function');
    const j = JSON.parse(limited.out);
    expect(j.hits).toHaveLength(3);
    expect(j.hits[0]).toMatchObject({ path: 'Money', match: 'exact-ignore-case' });
    const mods = JSON.parse(modules.out);
    expect(mods.hits.map((h: { path: string }) => h.path)).toEqual(['src/money']);
    expect(none.out).toContain('no identifier matches "qqq"');
  });

  it('module prints declarations, imports, exports and importers', async () => {
    const [r, jsonRun] = await Promise.all([
      kilnAsync('graph', 'module', 'src/checkout.ts', '--graph', graphFile),
      kilnAsync('graph', 'module', 'discount', '--graph', graphFile, '--format', 'json'),
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('module src/checkout  (src/checkout.ts; package @fx/shop; checked)');
    expect(r.out).toMatch(/function checkout \[exported\]  src\/checkout\.ts:21-27  checked/);
    expect(r.out).toContain('./tax.js → src/tax: Region, taxFor');
    expect(r.out).toContain('./cart.js → src/cart (type only): Cart');
    expect(r.out).toMatch(/imported by \(1\):\n  src\/index via \.\/checkout\.js/);
    const j = JSON.parse(jsonRun.out);
    expect(j.declarations.map((d: { path: string }) => d.path)).toEqual(['DISCOUNT_CODES', 'validateDiscountCode', 'applyDiscount']);
  });

  it('neighbors follows --depth, --edges and --direction', async () => {
    const [oneRun, twoRun, text] = await Promise.all([
      kilnAsync('graph', 'neighbors', 'checkout', '--graph', graphFile, '--edges', 'calls', '--direction', 'out', '--format', 'json'),
      kilnAsync('graph', 'neighbors', 'checkout', '--graph', graphFile, '--edges', 'calls', '--direction', 'out', '--depth', '2', '--format', 'json'),
      kilnAsync('graph', 'neighbors', 'typescript:@fx/shop//src/discount#applyDiscount:function', '--graph', graphFile, '--edges', 'calls'),
    ]);
    const one = JSON.parse(oneRun.out);
    expect(one.nodes.map((n: { name: string }) => n.name).sort()).toEqual(['addMoney', 'applyDiscount', 'constructor', 'formatMoney', 'taxFor', 'total']);
    const two = JSON.parse(twoRun.out);
    expect(two.nodes.filter((n: { distance: number }) => n.distance === 2).map((n: { name: string }) => n.name).sort()).toEqual(['lineTotal', 'scaleMoney', 'validateDiscountCode']);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/n\d+ —calls→ @  checked/); // checkout calls it
    expect(text.out).toMatch(/@ —calls→ n\d+  checked/); // it calls validateDiscountCode, scaleMoney
  });

  it('exits 1 with a coded diagnostic for an unknown or ambiguous node, 2 for bad usage', async () => {
    const EXPLAINED = ['KILN_GRAPH_AMBIGUOUS', 'KILN_GRAPH_NODE_NOT_FOUND', 'KILN_CONTEXT_STALE'];
    const [missing, amb, noModule, noFile, badDepth, noQuery, badFormat, ...explained] = await Promise.all([
      kilnAsync('graph', 'neighbors', 'nothingHere', '--graph', graphFile),
      kilnAsync('graph', 'neighbors', 'constructor', '--graph', graphFile),
      kilnAsync('graph', 'module', 'src/nope', '--graph', graphFile),
      kilnAsync('graph', 'summary', '--graph', join(tmp, 'none.jsonl')),
      kilnAsync('graph', 'neighbors', 'checkout', '--graph', graphFile, '--depth', 'deep'),
      kilnAsync('graph', 'find'),
      kilnAsync('graph', 'summary', '--graph', graphFile, '--format', 'yaml'),
      ...EXPLAINED.map((code) => kilnAsync('explain', code)),
    ]);
    expect(missing!.code).toBe(1);
    expect(missing!.err).toMatch(/error KILN_GRAPH_NODE_NOT_FOUND: no node "nothingHere"/);
    expect(amb!.code).toBe(1);
    expect(amb!.err).toMatch(/KILN_GRAPH_AMBIGUOUS: "constructor" names 2 nodes/);
    expect(noModule!.code).toBe(1);
    expect(noFile!.code).toBe(1);
    expect(badDepth!.code).toBe(2);
    expect(noQuery!.code).toBe(2);
    expect(badFormat!.code).toBe(2);
    expect(explained).toHaveLength(EXPLAINED.length);
    for (const e of explained) {
      expect(e.code).toBe(0);
      expect(e.out).toMatch(/What it means: .+\n\nHow to fix it: .+/);
    }
  });
});

describe('kiln context pack', () => {
  const task = 'apply a discount code at checkout and reject unknown codes';

  it('prints a compact pack within the budget, with source from the directory, deterministically', async () => {
    const a = kiln('context', 'pack', shop, '--task', task, '--budget', '900', '--workers', '0');
    expect(a.code, a.err).toBe(0);
    expect(a.out).toMatch(/^# kiln context pack v2 · budget 900 tokens \(ceil\(chars \/ 4\)\) · used (\d+) ·/);
    const used = Number(/used (\d+)/.exec(a.out)![1]);
    expect(used).toBeLessThanOrEqual(900);
    expect(Math.ceil(a.out.length / 4)).toBe(used);
    expect(a.out).toContain('freshness: fresh');
    expect(a.out).toMatch(/\nd\d function applyDiscount\* src\/discount\.ts:15-18 C\n/);
    expect(a.out).toContain('export function validateDiscountCode(code: string): boolean {');
    const [b, c] = await Promise.all([
      kilnAsync('context', 'pack', shop, '--task', task, '--budget', '900', '--workers', '0'),
      // --graph FILE with the directory as its source tree: the same pack
      kilnAsync('context', 'pack', shop, '--graph', graphFile, '--task', task, '--budget', '900'),
    ]);
    expect(b.out).toBe(a.out);
    expect(c.out).toBe(a.out);
  });

  it('--format json and --explain', async () => {
    const [r, files] = await Promise.all([
      kilnAsync('context', 'pack', '--graph', graphFile, '--task', task, '--budget', '3000', '--format', 'json', '--explain'),
      kilnAsync('context', 'pack', shop, '--files', 'src/tax.ts', '--budget', '600', '--workers', '0'),
    ]);
    expect(r.code, r.err).toBe(0);
    const p = JSON.parse(r.out);
    expect(p).toMatchObject({ kind: 'kiln-context-pack', version: 2, estimate: 'ceil(chars / 4)', freshness: { status: 'unknown' } });
    expect(p.tokens_used).toBeLessThanOrEqual(3000);
    expect(p.items[0].why[0]).toMatch(/^score /);
    expect(p.items.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['applyDiscount', 'validateDiscountCode', 'DISCOUNT_CODES', 'checkout']));
    expect(files.code).toBe(0);
    expect(files.out).toMatch(/\nd\d function taxFor\* src\/tax\.ts:8-10 C\n/);
  });

  it('says STALE (stdout and a KILN_CONTEXT_STALE warning on stderr) after the tree moves past the graph', () => {
    const f = join(shop, 'src/money.ts');
    const before = readFileSync(f, 'utf8');
    writeFileSync(f, `${before}\nexport const ZERO = 0;\n`);
    try {
      const r = kiln('context', 'pack', shop, '--graph', graphFile, '--task', task, '--budget', '900');
      expect(r.code).toBe(0);
      expect(r.out).toContain('freshness: STALE — the working tree moved since the graph was exported: changed src/money.ts');
      expect(r.err).toMatch(/warning KILN_CONTEXT_STALE/);
    } finally {
      writeFileSync(f, before);
    }
  });

  it('context explain says why a node is in the pack; usage errors exit 2', async () => {
    const [r, noTask, taskAndFiles, tinyBudget, badFormat] = await Promise.all([
      kilnAsync('context', 'explain', 'applyDiscount', '--graph', graphFile, '--task', task, '--budget', '900'),
      kilnAsync('context', 'pack', '--graph', graphFile, '--budget', '900'),
      kilnAsync('context', 'pack', '--graph', graphFile, '--task', 'x', '--files', 'a.ts'),
      kilnAsync('context', 'pack', '--graph', graphFile, '--task', 'x', '--budget', '10'),
      kilnAsync('context', 'pack', '--graph', graphFile, '--task', 'x', '--format', 'text'),
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^applyDiscount  \(typescript:@fx\/shop\/\/src\/discount#applyDiscount:function\)\n  in the pack as d\d+/);
    expect(noTask.code).toBe(2); // no task
    expect(taskAndFiles.code).toBe(2);
    expect(tinyBudget.code).toBe(2);
    expect(badFormat.code).toBe(2);
  });
});
