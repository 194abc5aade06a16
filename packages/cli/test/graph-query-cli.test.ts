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

beforeAll(() => {
  cpSync(join(root, 'fixtures/graph/shop'), shop, { recursive: true });
  const r = kiln('graph', 'export', shop, '--out', graphFile, '--workers', '0');
  expect(r.code, r.err).toBe(0);
});

describe('kiln graph summary', () => {
  it('prints counts, modules and the snapshot in text and JSON, from a file or a directory alike', () => {
    const text = kiln('graph', 'summary', '--graph', graphFile);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^snapshot [0-9a-f]{32}  schema 1  mode checked/);
    expect(text.out).toMatch(/by provenance:\n +\d+  compiler_checked\n +\d+  manifest_declared/);
    expect(text.out).toContain('@fx/shop  6 modules');
    const json = JSON.parse(kiln('graph', 'summary', '--graph', graphFile, '--format', 'json').out);
    expect(json.kind).toBe('kiln-graph-summary');
    const live = JSON.parse(kiln('graph', 'summary', shop, '--format', 'json', '--workers', '0').out);
    expect(live).toEqual(json);
    const header = JSON.parse(readFileSync(graphFile, 'utf8').split('\n')[0]!);
    expect(json.snapshot).toBe(header.snapshot.id);
  });
});

describe('kiln graph find / module / neighbors', () => {
  it('find ranks matches and prints ids; --kind and --limit narrow it', () => {
    const r = kiln('graph', 'find', 'vDC', '--graph', graphFile);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/camel-case +function validateDiscountCode \(exported\)  src\/discount\.ts:10-12/);
    expect(r.out).toContain('typescript:@fx/shop//src/discount#validateDiscountCode:function');
    const j = JSON.parse(kiln('graph', 'find', 'money', '--graph', graphFile, '--format', 'json', '--limit', '3').out);
    expect(j.hits).toHaveLength(3);
    expect(j.hits[0]).toMatchObject({ path: 'Money', match: 'exact-ignore-case' });
    const mods = JSON.parse(kiln('graph', 'find', 'money', '--graph', graphFile, '--format', 'json', '--kind', 'module').out);
    expect(mods.hits.map((h: { path: string }) => h.path)).toEqual(['src/money']);
    expect(kiln('graph', 'find', 'qqq', '--graph', graphFile).out).toContain('no identifier matches "qqq"');
  });

  it('module prints declarations, imports, exports and importers', () => {
    const r = kiln('graph', 'module', 'src/checkout.ts', '--graph', graphFile);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('module src/checkout  (src/checkout.ts; package @fx/shop; checked)');
    expect(r.out).toMatch(/function checkout \[exported\]  src\/checkout\.ts:21-27  checked/);
    expect(r.out).toContain('./tax.js → src/tax: Region, taxFor');
    expect(r.out).toContain('./cart.js → src/cart (type only): Cart');
    expect(r.out).toMatch(/imported by \(1\):\n  src\/index via \.\/checkout\.js/);
    const j = JSON.parse(kiln('graph', 'module', 'discount', '--graph', graphFile, '--format', 'json').out);
    expect(j.declarations.map((d: { path: string }) => d.path)).toEqual(['DISCOUNT_CODES', 'validateDiscountCode', 'applyDiscount']);
  });

  it('neighbors follows --depth, --edges and --direction', () => {
    const one = JSON.parse(kiln('graph', 'neighbors', 'checkout', '--graph', graphFile, '--edges', 'calls', '--direction', 'out', '--format', 'json').out);
    expect(one.nodes.map((n: { name: string }) => n.name).sort()).toEqual(['addMoney', 'applyDiscount', 'constructor', 'formatMoney', 'taxFor', 'total']);
    const two = JSON.parse(kiln('graph', 'neighbors', 'checkout', '--graph', graphFile, '--edges', 'calls', '--direction', 'out', '--depth', '2', '--format', 'json').out);
    expect(two.nodes.filter((n: { distance: number }) => n.distance === 2).map((n: { name: string }) => n.name).sort()).toEqual(['lineTotal', 'scaleMoney', 'validateDiscountCode']);
    const text = kiln('graph', 'neighbors', 'typescript:@fx/shop//src/discount#applyDiscount:function', '--graph', graphFile, '--edges', 'calls');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/n\d+ —calls→ @  checked/); // checkout calls it
    expect(text.out).toMatch(/@ —calls→ n\d+  checked/); // it calls validateDiscountCode, scaleMoney
  });

  it('exits 1 with a coded diagnostic for an unknown or ambiguous node, 2 for bad usage', () => {
    const missing = kiln('graph', 'neighbors', 'nothingHere', '--graph', graphFile);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/error KILN_GRAPH_NODE_NOT_FOUND: no node "nothingHere"/);
    const amb = kiln('graph', 'neighbors', 'constructor', '--graph', graphFile);
    expect(amb.code).toBe(1);
    expect(amb.err).toMatch(/KILN_GRAPH_AMBIGUOUS: "constructor" names 2 nodes/);
    expect(kiln('graph', 'module', 'src/nope', '--graph', graphFile).code).toBe(1);
    expect(kiln('graph', 'summary', '--graph', join(tmp, 'none.jsonl')).code).toBe(1);
    expect(kiln('graph', 'neighbors', 'checkout', '--graph', graphFile, '--depth', 'deep').code).toBe(2);
    expect(kiln('graph', 'find').code).toBe(2);
    expect(kiln('graph', 'summary', '--graph', graphFile, '--format', 'yaml').code).toBe(2);
    for (const code of ['KILN_GRAPH_AMBIGUOUS', 'KILN_GRAPH_NODE_NOT_FOUND', 'KILN_CONTEXT_STALE']) {
      const e = kiln('explain', code);
      expect(e.code).toBe(0);
      expect(e.out).toMatch(/What it means: .+\n\nHow to fix it: .+/);
    }
  });
});

describe('kiln context pack', () => {
  const task = 'apply a discount code at checkout and reject unknown codes';

  it('prints a compact pack within the budget, with source from the directory, deterministically', () => {
    const a = kiln('context', 'pack', shop, '--task', task, '--budget', '900', '--workers', '0');
    expect(a.code, a.err).toBe(0);
    expect(a.out).toMatch(/^# kiln context pack v1 · budget 900 tokens \(ceil\(chars \/ 4\)\) · used (\d+) ·/);
    const used = Number(/used (\d+)/.exec(a.out)![1]);
    expect(used).toBeLessThanOrEqual(900);
    expect(Math.ceil(a.out.length / 4)).toBe(used);
    expect(a.out).toContain('freshness: fresh');
    expect(a.out).toMatch(/\nd\d function applyDiscount\* src\/discount\.ts:15-18 C\n/);
    expect(a.out).toContain('export function validateDiscountCode(code: string): boolean {');
    const b = kiln('context', 'pack', shop, '--task', task, '--budget', '900', '--workers', '0');
    expect(b.out).toBe(a.out);
    // --graph FILE with the directory as its source tree: the same pack
    const c = kiln('context', 'pack', shop, '--graph', graphFile, '--task', task, '--budget', '900');
    expect(c.out).toBe(a.out);
  });

  it('--format json and --explain', () => {
    const r = kiln('context', 'pack', '--graph', graphFile, '--task', task, '--budget', '3000', '--format', 'json', '--explain');
    expect(r.code, r.err).toBe(0);
    const p = JSON.parse(r.out);
    expect(p).toMatchObject({ kind: 'kiln-context-pack', version: 1, estimate: 'ceil(chars / 4)', freshness: { status: 'unknown' } });
    expect(p.tokens_used).toBeLessThanOrEqual(3000);
    expect(p.items[0].why[0]).toMatch(/^score /);
    expect(p.items.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(['applyDiscount', 'validateDiscountCode', 'DISCOUNT_CODES', 'checkout']));
    const files = kiln('context', 'pack', shop, '--files', 'src/tax.ts', '--budget', '600', '--workers', '0');
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

  it('context explain says why a node is in the pack; usage errors exit 2', () => {
    const r = kiln('context', 'explain', 'applyDiscount', '--graph', graphFile, '--task', task, '--budget', '900');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^applyDiscount  \(typescript:@fx\/shop\/\/src\/discount#applyDiscount:function\)\n  in the pack as d\d+/);
    expect(kiln('context', 'pack', '--graph', graphFile, '--budget', '900').code).toBe(2); // no task
    expect(kiln('context', 'pack', '--graph', graphFile, '--task', 'x', '--files', 'a.ts').code).toBe(2);
    expect(kiln('context', 'pack', '--graph', graphFile, '--task', 'x', '--budget', '10').code).toBe(2);
    expect(kiln('context', 'pack', '--graph', graphFile, '--task', 'x', '--format', 'text').code).toBe(2);
  });
});
