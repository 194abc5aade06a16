/**
 * Issue 4, point 6 — context packs on a real export of fixtures/graph/shop: the declarations a task
 * needs are in the pack within the budget, with anchors and source; the pack is byte-identical across
 * runs and across clones at other paths; it says when the graph is stale (changed, added, deleted
 * files) and then leaves the changed files' source out; `--explain` says why each item is in;
 * diagnostics of a broken tree are ranked in; files seed a pack; explainContext answers for one node.
 */
import { cpSync, mkdtempSync, rmSync, unlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextPack, explainContext, exportGraph, graphText, loadGraph, type LoadedGraph } from '@kiln/core';
import { estimateTokens, type ContextPack } from '../dist/graph/context/pack.js';

const root = resolve(__dirname, '../../..');
const shopSrc = join(root, 'fixtures/graph/shop');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-context-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function copyShop(name: string): string {
  const dir = join(tmp, name);
  cpSync(shopSrc, dir, { recursive: true });
  return dir;
}

const DISCOUNT_TASK = 'apply a discount code at checkout and reject unknown codes';
let shop: LoadedGraph;

beforeAll(async () => {
  shop = await loadGraph({ dir: shopSrc, store: false, workers: 0 });
});

const ids = (p: ContextPack) => p.items.map((i) => i.path);

describe('kiln context pack', () => {
  it('packs the declarations a task needs, ranked, with anchors and source, within the budget', async () => {
    const r = await contextPack(shop.index, { task: DISCOUNT_TASK, budget: 1200 }, { sourceDir: shop.sourceDir! });
    const p = r.pack;
    expect(ids(p).slice(0, 4).sort()).toEqual(['DISCOUNT_CODES', 'applyDiscount', 'checkout', 'validateDiscountCode']);
    expect(p.tokens_used).toBeLessThanOrEqual(1200);
    expect(estimateTokens(r.text)).toBe(p.tokens_used);
    const apply = p.items.find((i) => i.path === 'applyDiscount')!;
    expect(apply).toMatchObject({ anchor: 'src/discount.ts:15-18', provenance: 'compiler_checked', exported: true, source_mode: 'full', decl_kind: 'function' });
    expect(apply.source).toContain('/** The total after a discount code; an unknown code leaves it unchanged. */');
    expect(apply.source).toContain('export function applyDiscount(total: Money, code: string | undefined): Money {');
    // compact text: local ids, edge direction, provenance letter, one header naming the package once
    expect(r.text).toMatch(/^# kiln context pack v2 · budget 1200 tokens/);
    expect(r.text).toContain('graph: @fx/shop · snapshot ');
    expect(r.text).toMatch(/\nd\d+ function applyDiscount\* src\/discount\.ts:15-18 C\n/);
    expect(r.text).toMatch(/rel: .*→calls d\d+/);
    expect(r.text).not.toContain('typescript:@fx/shop//'); // no repeated qualified ids in the compact format
    expect(r.text).toContain('freshness: fresh');
    expect(r.diagnostics).toEqual([]);
    // scores never rise down the pack
    const scores = p.items.map((i) => i.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('fits every budget: the printed text never estimates above it, smaller budgets keep a prefix of the ranking', async () => {
    let previous: string[] = [];
    for (const budget of [200, 300, 600, 1200, 2500, 6000]) {
      for (const format of ['compact', 'json'] as const) {
        const r = await contextPack(shop.index, { task: 'the cart total is wrong after removing an item', budget, format }, { sourceDir: shop.sourceDir! });
        expect(estimateTokens(r.text), `${format} @ ${budget}`).toBeLessThanOrEqual(budget);
        expect(r.pack.tokens_used).toBe(estimateTokens(r.text));
        if (format === 'json') expect(JSON.parse(r.text).items.length).toBe(r.pack.items.length);
        if (format === 'compact') {
          const names = ids(r.pack);
          expect(names.length).toBeGreaterThanOrEqual(previous.length);
          previous = names;
        }
      }
    }
    expect(previous.slice(0, 4)).toEqual(expect.arrayContaining(['Cart', 'Cart.total', 'Cart.removeItem']));
    // a budget below the header's own size: the header says so, and nothing else is packed
    const tiny = await contextPack(shop.index, { task: 'cart', budget: 64 }, { sourceDir: shop.sourceDir! });
    expect(tiny.pack.items).toEqual([]);
    expect(tiny.pack.note).toMatch(/does not hold even the header/);
    expect(tiny.text).toContain('note: the budget (64 tokens) does not hold even the header; no item was packed');
  });

  it('is deterministic: two runs, and two clones at different paths, give byte-identical packs', async () => {
    const a = await contextPack(shop.index, { task: DISCOUNT_TASK, budget: 2000, explain: true }, { sourceDir: shop.sourceDir! });
    const b = await contextPack(shop.index, { task: DISCOUNT_TASK, budget: 2000, explain: true }, { sourceDir: shop.sourceDir! });
    expect(b.text).toBe(a.text);
    const clone = copyShop('clone');
    const other = await loadGraph({ dir: clone, store: false, workers: 0 });
    for (const format of ['compact', 'json'] as const) {
      const x = await contextPack(shop.index, { task: DISCOUNT_TASK, budget: 2000, format, explain: true }, { sourceDir: shop.sourceDir! });
      const y = await contextPack(other.index, { task: DISCOUNT_TASK, budget: 2000, format, explain: true }, { sourceDir: other.sourceDir! });
      expect(y.text).toBe(x.text);
      expect(y.text).not.toContain(tmp);
      expect(x.text).not.toContain(root);
    }
  });

  it('--explain says why each item is in: score factors, the seed and its reason, the path from a seed', async () => {
    const r = await contextPack(shop.index, { task: DISCOUNT_TASK, budget: 4000, explain: true }, { sourceDir: shop.sourceDir! });
    for (const it of r.pack.items) {
      expect(it.why!.length).toBeGreaterThanOrEqual(2);
      expect(it.why![0]).toMatch(/^score \d\.\d{4} = proximity \d\.\d{4} × compiler_checked 1/);
    }
    const apply = r.pack.items.find((i) => i.path === 'applyDiscount')!;
    expect(apply.why!.join('\n')).toMatch(/seed .*"discount" in its name/);
    const checkout = r.pack.items.find((i) => i.path === 'checkout')!;
    expect(checkout.why!.join('\n')).toMatch(/the task says "checkout", its name/);
    const scale = r.pack.items.find((i) => i.path === 'scaleMoney')!;
    expect(scale.why!.join('\n')).toMatch(/reached in \d steps? from seed .*: .*calls scaleMoney/);
    expect(r.text).toContain('  why: ');
    expect(apply.why!.some((w) => w.includes('public API 1.15'))).toBe(true);
  });

  it('seeds from files for context_for_files', async () => {
    const r = await contextPack(shop.index, { files: ['src/tax.ts'], budget: 800 }, { sourceDir: shop.sourceDir! });
    expect(ids(r.pack).slice(0, 3).sort()).toEqual(['Region', 'TAX_RATES', 'taxFor']);
    expect(ids(r.pack)).toContain('checkout'); // calls taxFor
    expect(r.text).toMatch(/^files: src\/tax\.ts$/m);
    const unknown = await contextPack(shop.index, { files: ['src/nope.ts', 'tax.ts'], budget: 800 }, { sourceDir: shop.sourceDir! });
    expect(unknown.pack.seeding.unknown_files).toEqual(['src/nope.ts']);
    expect(unknown.text).toContain('not in the graph: src/nope.ts');
  });

  it('without a source tree: anchors only, and freshness unknown rather than fresh', async () => {
    const file = join(tmp, 'shop.jsonl');
    writeFileSync(file, graphText(await exportGraph(shopSrc, { store: false, workers: 0 })));
    const fromFile = await loadGraph({ graph: file });
    const r = await contextPack(fromFile.index, { task: DISCOUNT_TASK, budget: 1500 });
    expect(r.pack.freshness.status).toBe('unknown');
    expect(r.text).toContain('freshness: unknown');
    expect(r.pack.items.every((i) => i.source === undefined && i.source_mode === 'none')).toBe(true);
    expect(ids(r.pack).slice(0, 4).sort()).toEqual(['DISCOUNT_CODES', 'applyDiscount', 'checkout', 'validateDiscountCode']);
  });

  it('refuses a request without a task or files, or with a budget below the minimum', async () => {
    await expect(contextPack(shop.index, { budget: 500 })).rejects.toMatchObject({ code: 'KILN_USAGE' });
    await expect(contextPack(shop.index, { task: '  ', budget: 500 })).rejects.toMatchObject({ code: 'KILN_USAGE' });
    await expect(contextPack(shop.index, { task: 'cart', budget: 10 })).rejects.toMatchObject({ code: 'KILN_USAGE' });
  });
});

describe('freshness of a pack', () => {
  it('says STALE after an edit, an added and a deleted file; leaves the changed files out of the source text', async () => {
    const dir = copyShop('stale');
    const file = join(tmp, 'stale.jsonl');
    writeFileSync(file, graphText(await exportGraph(dir, { store: false, workers: 0 })));
    const g = await loadGraph({ graph: file, dir });
    const fresh = await contextPack(g.index, { task: DISCOUNT_TASK, budget: 2000 }, { sourceDir: g.sourceDir! });
    expect(fresh.pack.freshness).toMatchObject({ status: 'fresh', changed: [], added: [], deleted: [] });

    const discount = join(dir, 'src/discount.ts');
    writeFileSync(discount, `// a new first line moves every span\n${readFileSync(discount, 'utf8')}`);
    writeFileSync(join(dir, 'src/gift.ts'), 'export const GIFT = 1;\n');
    unlinkSync(join(dir, 'src/tax.ts'));
    const stale = await contextPack(g.index, { task: DISCOUNT_TASK, budget: 2000 }, { sourceDir: g.sourceDir! });
    expect(stale.pack.freshness).toMatchObject({ status: 'stale', snapshot: g.index.header.snapshot?.id, changed: ['src/discount.ts'], added: ['src/gift.ts'], deleted: ['src/tax.ts'] });
    expect(stale.text).toContain('freshness: STALE — the working tree moved since the graph was exported: changed src/discount.ts; added src/gift.ts; deleted src/tax.ts');
    expect(stale.diagnostics.map((d) => d.code)).toEqual(['KILN_CONTEXT_STALE']);
    const apply = stale.pack.items.find((i) => i.path === 'applyDiscount')!;
    expect(apply.source).toBeUndefined(); // its lines moved: no wrong text
    expect(apply.anchor).toBe('src/discount.ts:15-18');
    expect(stale.pack.items.find((i) => i.path === 'checkout')!.source_mode).toBe('full'); // unchanged file

    // re-exported, the pack is fresh again and has a new snapshot
    cpSync(join(shopSrc, 'src/tax.ts'), join(dir, 'src/tax.ts'));
    const again = await loadGraph({ dir, store: false, workers: 0 });
    const now = await contextPack(again.index, { task: DISCOUNT_TASK, budget: 2000 }, { sourceDir: again.sourceDir! });
    expect(now.pack.freshness.status).toBe('fresh');
    expect(now.pack.graph.snapshot).not.toBe(fresh.pack.graph.snapshot);
  });
});

describe('diagnostics in packs', () => {
  it('ranks a diagnostic of a broken tree (allow-errors) next to the declaration it is about', async () => {
    const dir = copyShop('broken');
    const f = join(dir, 'src/discount.ts');
    writeFileSync(f, readFileSync(f, 'utf8').replace('return total;', 'return total.cents;'));
    const g = await loadGraph({ dir, mode: 'allow-errors', store: false, workers: 0 });
    const r = await contextPack(g.index, { task: DISCOUNT_TASK, budget: 3000, explain: true }, { sourceDir: g.sourceDir! });
    const diag = r.pack.items.find((i) => i.kind === 'diagnostic');
    expect(diag).toBeDefined();
    expect(diag!.ref).toBe('!1');
    expect(r.pack.items.indexOf(diag!)).toBeLessThan(5); // right after what it is about
    expect(diag!.path).toBe('TS2322');
    expect(diag!.anchor).toMatch(/^src\/discount\.ts:16/);
    expect(diag!.message).toMatch(/not assignable/);
    // The envelope's head: the compiler's own form, the same text `kiln graph summary` prints.
    expect(r.text).toMatch(/\n!1 [CUSM] src\/discount\.ts:16:\d+ - error TS2322: .*not assignable/);
    expect(diag!.envelope).toMatchObject({ code: 'KILN_TYPESCRIPT_ERROR', tool: { name: 'typescript', code: 'TS2322' }, location: { kind: 'position', file: 'src/discount.ts', line: 16 } });
    const apply = r.pack.items.find((i) => i.path === 'applyDiscount')!;
    expect(apply.provenance).toBe('syntax_inferred');
    expect(apply.why!.join(' ')).toMatch(/has diagnostics 1\.1/);
  });
});

describe('explainContext', () => {
  it('says why a node is in the pack, or why not', async () => {
    const inPack = await explainContext(shop.index, { task: DISCOUNT_TASK, budget: 1200 }, 'applyDiscount', { sourceDir: shop.sourceDir! });
    expect(inPack).toMatchObject({ in_pack: true, rank: expect.any(Number) });
    expect(inPack.verdict).toMatch(/^in the pack as d\d+/);
    expect(inPack.seed!.reasons.join(' ')).toMatch(/discount/);

    const small = await explainContext(shop.index, { task: DISCOUNT_TASK, budget: 250 }, 'roundCents', { sourceDir: shop.sourceDir! });
    expect(small.in_pack).toBe(false);
    expect(small.verdict).toMatch(/a candidate .* left out: the budget of 250 tokens/);
    expect(small.path.length).toBeGreaterThan(0);

    const mod = await explainContext(shop.index, { task: DISCOUNT_TASK, budget: 1200 }, 'src/tax', { sourceDir: shop.sourceDir! });
    expect(mod.verdict).toMatch(/not an item a pack holds/);
  });
});
