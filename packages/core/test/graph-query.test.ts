/**
 * Issue 4, point 5 — queries over a real codegraph export (fixtures/graph/shop, fixtures/demo/v1):
 * the index (by id, name, file, module; adjacency both ways), summary, find ranking, module view,
 * neighbours by depth / edge kind / direction, lookups that refuse to guess, opaque records and
 * dangling edges kept.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  exportGraph,
  findIdentifiers,
  formatFindText,
  formatModuleText,
  formatNeighborsText,
  formatSummaryText,
  graphSummary,
  graphText,
  KilnError,
  loadGraph,
  moduleView,
  neighborhood,
  contextPack,
} from '@kiln/core';
import { GraphIndex } from '../dist/graph/query/graph-index.js';
import { readGraph } from '../dist/graph/read.js';
import { resolveNode } from '../dist/graph/query/lookup.js';
import { splitIdentifier } from '../dist/graph/query/terms.js';
import type { QueryHeader, QueryRecord } from '../dist/graph/query/model.js';
import { ALIAS_MONOREPO, writeTree } from './lib/graph-fixtures.js';

const root = resolve(__dirname, '../../..');
const shopDir = join(root, 'fixtures/graph/shop');
function join(...p: string[]) {
  return resolve(...p);
}

const SHOP = '@fx/shop';
const decl = (module: string, path: string, kind: string) => `typescript:${SHOP}//${module}#${path}:${kind}`;

let shop: GraphIndex;
let text: string;

beforeAll(async () => {
  const r = await exportGraph(shopDir, { store: false, workers: 0 });
  expect(r.ok).toBe(true);
  text = graphText(r);
  const doc = readGraph(text);
  shop = new GraphIndex({ header: doc.header as unknown as QueryHeader, records: doc.records as unknown as QueryRecord[] });
});

describe('the graph index', () => {
  it('indexes nodes by id, name, file and module, and edges both ways in a fixed order', () => {
    const checkout = shop.node(decl('src/checkout', 'checkout', 'function'))!;
    expect(checkout.kind).toBe('declaration');
    expect(shop.byName('CHECKOUT')).toContain(checkout.id); // names ignore case
    expect(shop.byName('Cart.total')).toEqual([decl('src/cart', 'Cart.total', 'method')]);
    expect(shop.inFile('src/checkout.ts')).toContain(checkout.id);
    expect(shop.inModule(`typescript:${SHOP}//src/checkout`)).toContain(checkout.id);
    const calls = shop.adjacent(checkout.id, { kinds: ['calls'], direction: 'out' }).map((a) => a.other);
    expect(calls).toEqual(expect.arrayContaining([decl('src/discount', 'applyDiscount', 'function'), decl('src/tax', 'taxFor', 'function'), decl('src/cart', 'Cart.total', 'method')]));
    expect([...calls].sort()).toEqual(calls); // adjacency: by kind, then the other end's id
    const callers = shop.adjacent(decl('src/discount', 'applyDiscount', 'function'), { kinds: ['calls'], direction: 'in' }).map((a) => a.other);
    expect(callers).toEqual([checkout.id]);
  });

  it('keeps records of unknown kinds as opaque nodes or edges, and dangling edges', () => {
    const extra = [
      { kind: 'risk_signal', id: 'risk:checkout', language: 'typescript', provenance: 'process_observed', degraded: false, churn: 12 },
      { kind: 'evidences', id: 'evidences:risk->checkout', from: 'risk:checkout', to: decl('src/checkout', 'checkout', 'function') },
      { kind: 'evidences', id: 'evidences:risk->gone', from: 'risk:checkout', to: 'typescript:@fx/shop//src/gone#nothing:function' },
    ];
    const doc = readGraph(text + extra.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const idx = new GraphIndex({ header: doc.header as unknown as QueryHeader, records: doc.records as unknown as QueryRecord[] });
    expect(idx.node('risk:checkout')?.kind).toBe('risk_signal');
    expect(idx.adjacent(decl('src/checkout', 'checkout', 'function'), { kinds: ['evidences'], direction: 'in' }).map((a) => a.other)).toEqual(['risk:checkout']);
    const s = graphSummary(idx);
    expect(s.by_kind.risk_signal).toBe(1);
    expect(s.by_kind.evidences).toBe(2);
    expect(s.dangling_edges).toBe(1);
    const n = neighborhood(idx, 'risk:checkout');
    expect(n.nodes.find((x) => x.id.endsWith('#nothing:function'))).toMatchObject({ missing: true, kind: '(missing)' });
  });
});

describe('kiln graph summary', () => {
  it('counts records per kind and provenance tier, lists packages, modules and diagnostics, names the snapshot', () => {
    const s = graphSummary(shop);
    expect(s.snapshot).toBe(shop.header.snapshot?.id);
    expect(s.snapshot).toMatch(/^[0-9a-f]{32}$/);
    expect(s.mode).toBe('checked');
    expect(s.by_kind.declaration).toBe(shop.ofKind('declaration').length);
    expect(s.by_kind.calls).toBeGreaterThan(5);
    expect(Object.keys(s.by_provenance).sort()).toEqual(['compiler_checked', 'manifest_declared']);
    expect(s.records).toBe(Object.values(s.by_kind).reduce((a, b) => a + b, 0));
    expect(s.packages).toEqual([{ id: `package:${SHOP}`, name: SHOP, modules: 6, declarations: s.by_kind.declaration }]);
    expect(s.modules.map((m) => m.path)).toEqual(['src/cart', 'src/checkout', 'src/discount', 'src/index', 'src/money', 'src/tax']);
    expect(s.diagnostics).toEqual([]);
    const t = formatSummaryText(s);
    expect(t).toContain(`snapshot ${s.snapshot}`);
    expect(t).toMatch(/compiler_checked/);
  });
});

describe('kiln graph find', () => {
  it('splits identifiers into words', () => {
    expect(splitIdentifier('getHTTPStatusCode')).toEqual(['get', 'http', 'status', 'code']);
    expect(splitIdentifier('DISCOUNT_CODES')).toEqual(['discount', 'codes']);
    expect(splitIdentifier('src/cart.ts')).toEqual(['src', 'cart', 'ts']);
  });

  it('ranks exact, exact ignoring case, prefix, camel-case and substring matches in that order', () => {
    const hits = findIdentifiers(shop, 'total');
    expect(hits[0]).toMatchObject({ path: 'Cart.total', match: 'exact', decl_kind: 'method' });
    expect(hits.map((h) => h.path)).toContain('lineTotal');
    expect(hits.find((h) => h.path === 'lineTotal')!.match).toBe('substring');

    const cart = findIdentifiers(shop, 'cart');
    expect(cart[0]).toMatchObject({ path: 'Cart', match: 'exact-ignore-case', exported: true });
    expect(cart.map((h) => h.kind)).toContain('module'); // src/cart ends with "cart"

    const prefix = findIdentifiers(shop, 'apply');
    expect(prefix[0]).toMatchObject({ path: 'applyDiscount', match: 'prefix' });

    const humps = findIdentifiers(shop, 'vDC');
    expect(humps[0]).toMatchObject({ path: 'validateDiscountCode', match: 'camel-case' });
    const words = findIdentifiers(shop, 'discount code');
    expect(words[0]).toMatchObject({ path: 'DISCOUNT_CODES', match: 'camel-case' }); // from its first word, contiguous
    expect(words.find((h) => h.path === 'validateDiscountCode')).toMatchObject({ match: 'camel-case' });
    expect(words[0]!.score).toBeGreaterThan(words.find((h) => h.path === 'validateDiscountCode')!.score);

    const scores = findIdentifiers(shop, 'money', { limit: 50 }).map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(findIdentifiers(shop, 'Money')[0]).toMatchObject({ path: 'Money', match: 'exact', decl_kind: 'interface' });
    expect(findIdentifiers(shop, 'zzz')).toEqual([]);
    expect(findIdentifiers(shop, 'money', { kinds: ['module'] }).map((h) => h.path)).toEqual(['src/money']);
    expect(formatFindText('vDC', humps)).toContain('validateDiscountCode');
  });
});

describe('kiln graph module', () => {
  it('shows a module: declarations in source order, imports with resolved targets, exports, importers', () => {
    const m = moduleView(shop, 'src/checkout');
    expect(m.path).toBe('src/checkout');
    expect(m.file).toBe('src/checkout.ts');
    expect(m.declarations.map((d) => d.path)).toEqual(['CheckoutError', 'CheckoutError.constructor', 'Receipt', 'checkout']);
    expect(m.declarations.find((d) => d.path === 'checkout')).toMatchObject({ decl_kind: 'function', exported: true, anchor: 'src/checkout.ts:21-27' });
    expect(m.imports.map((i) => [i.specifier, i.target_path])).toEqual([
      ['./cart.js', 'src/cart'],
      ['./discount.js', 'src/discount'],
      ['./money.js', 'src/money'],
      ['./tax.js', 'src/tax'],
    ]);
    expect(m.imports.find((i) => i.specifier === './cart.js')).toMatchObject({ type_only: true, bindings: ['Cart'] });
    expect(m.exports.map((e) => e.name)).toEqual(['CheckoutError', 'Receipt', 'checkout']);
    expect(m.imported_by.map((i) => i.path)).toEqual(['src/index']);
    // the same module by file, by unique suffix, by id
    expect(moduleView(shop, 'src/checkout.ts').id).toBe(m.id);
    expect(moduleView(shop, 'checkout').id).toBe(m.id);
    expect(moduleView(shop, m.id).id).toBe(m.id);
    const t = formatModuleText(m);
    expect(t).toContain('./discount.js → src/discount: applyDiscount');
  });

  it('refuses an unknown module with KILN_GRAPH_NODE_NOT_FOUND', () => {
    expect(() => moduleView(shop, 'src/nope')).toThrow(KilnError);
    try {
      moduleView(shop, 'src/nope');
    } catch (e) {
      expect((e as KilnError).code).toBe('KILN_GRAPH_NODE_NOT_FOUND');
    }
  });
});

describe('kiln graph neighbors', () => {
  const checkout = decl('src/checkout', 'checkout', 'function');

  it('depth 1 is the direct neighbourhood; depth 2 reaches what the neighbours call', () => {
    const one = neighborhood(shop, checkout, { depth: 1, edges: ['calls'] });
    expect(one.center.id).toBe(checkout);
    expect(one.nodes.every((n) => n.distance === 1)).toBe(true);
    expect(one.nodes.map((n) => n.name).sort()).toEqual(['addMoney', 'applyDiscount', 'constructor', 'formatMoney', 'taxFor', 'total']); // `new CheckoutError` calls its constructor
    const two = neighborhood(shop, checkout, { depth: 2, edges: ['calls'] });
    const second = two.nodes.filter((n) => n.distance === 2).map((n) => n.name);
    expect(second).toEqual(expect.arrayContaining(['scaleMoney', 'validateDiscountCode', 'lineTotal']));
    expect(two.nodes.length).toBeGreaterThan(one.nodes.length);
    // every edge listed joins two listed nodes and keeps its stored direction
    const ids = new Set([checkout, ...two.nodes.map((n) => n.id)]);
    for (const e of two.edges) {
      expect(e.kind).toBe('calls');
      expect(ids.has(e.from) && ids.has(e.to)).toBe(true);
    }
    expect(two.edges).toContainEqual(expect.objectContaining({ from: checkout, to: decl('src/discount', 'applyDiscount', 'function'), provenance: 'compiler_checked' }));
  });

  it('follows one direction and any edge kind; a name only one declaration has works as an id', () => {
    const callers = neighborhood(shop, 'applyDiscount', { direction: 'in', edges: ['calls'] });
    expect(callers.nodes.map((n) => n.name)).toEqual(['checkout']);
    const all = neighborhood(shop, 'applyDiscount', { depth: 1 });
    expect(new Set(all.edges.map((e) => e.kind))).toEqual(new Set(['calls', 'contains', 'defines', 'exports', 'references']));
    expect(neighborhood(shop, checkout, { depth: 0 }).nodes).toEqual([]);
    expect(formatNeighborsText(callers)).toMatch(/n1 —calls→ @/);
  });

  it('refuses an ambiguous name (KILN_GRAPH_AMBIGUOUS) and an unknown one (KILN_GRAPH_NODE_NOT_FOUND)', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as KilnError).code;
      }
      return 'no error';
    };
    // `constructor` is the name of two declarations (Cart's and CheckoutError's)
    expect(code(() => resolveNode(shop, 'constructor'))).toBe('KILN_GRAPH_AMBIGUOUS');
    expect(code(() => neighborhood(shop, 'nothingLikeThis'))).toBe('KILN_GRAPH_NODE_NOT_FOUND');
  });
});

describe('loading a graph', () => {
  it('exports a directory on the spot, or reads a JSONL file, to the same index', async () => {
    const fromDir = await loadGraph({ dir: join(shopDir, 'src'), store: false, workers: 0 });
    expect(fromDir.origin).toBe('export');
    expect(fromDir.sourceDir).toBe(shopDir); // the package root, as the exporter resolves it
    expect(graphSummary(fromDir.index)).toEqual(graphSummary(shop));
    const demo = await loadGraph({ dir: join(root, 'fixtures/demo/v1'), store: false, workers: 0 });
    expect(findIdentifiers(demo.index, 'area')[0]).toMatchObject({ path: 'area', match: 'exact' });
  });

  it('reports a missing graph file or directory as KILN_NOT_FOUND', async () => {
    await expect(loadGraph({ graph: join(root, 'no-such.jsonl') })).rejects.toMatchObject({ code: 'KILN_NOT_FOUND' });
    await expect(loadGraph({ dir: join(root, 'no-such-dir') })).rejects.toMatchObject({ code: 'KILN_NOT_FOUND' });
  });
});

describe('several packages as one graph', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kiln-merge-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('re-roots paths at the common root, resolves edges between the packages, checks freshness per package', async () => {
    const mono = await writeTree(join(tmp, 'mono'), ALIAS_MONOREPO);
    const a = join(mono, 'packages/a');
    const b = join(mono, 'packages/b');
    const g = await loadGraph({ dir: [b, a], store: false, workers: 0 });
    expect(g.sourceDir).toBe(join(mono, 'packages'));
    expect(g.index.header).toMatchObject({ packages: ['@mono/b', '@mono/a'], parts: [{ package: '@mono/b', prefix: 'b' }, { package: '@mono/a', prefix: 'a' }] });
    expect(g.index.files()).toEqual(expect.arrayContaining(['a/src/index.ts', 'b/src/main.ts']));
    expect(graphSummary(g.index).packages.map((p) => p.name)).toEqual(['@mono/a', '@mono/b']);
    // b's call to a's greet, through the alias, lands on a's declaration, anchored in a's file
    const n = neighborhood(g.index, 'hello', { edges: ['calls'] });
    expect(n.nodes).toContainEqual(expect.objectContaining({ name: 'greet', anchor: 'a/src/index.ts:1-3' }));
    expect(n.nodes.some((x) => x.missing)).toBe(false);
    const m = moduleView(g.index, 'b/src/main.ts');
    expect(m.imports[0]).toMatchObject({ specifier: '@alias/a', target_path: 'src/index' });

    const pack = await contextPack(g.index, { task: 'change how greet builds the greeting', budget: 800 }, { sourceDir: g.sourceDir! });
    expect(pack.text).toContain('graph: @mono/b, @mono/a · snapshot');
    expect(pack.pack.freshness.status).toBe('fresh');
    const greet = pack.pack.items.find((i) => i.path === 'greet')!;
    expect(greet).toMatchObject({ anchor: 'a/src/index.ts:1-3', source_mode: 'full' });
    expect(pack.pack.items.map((i) => i.path)).toContain('hello');

    writeFileSync(join(a, 'src/index.ts'), `${ALIAS_MONOREPO['packages/a/src/index.ts']}\nexport const X = 1;\n`);
    writeFileSync(join(b, 'src/extra.ts'), 'export const Y = 2;\n');
    const stale = await contextPack(g.index, { task: 'greet', budget: 800 }, { sourceDir: g.sourceDir! });
    expect(stale.pack.freshness).toMatchObject({ status: 'stale', changed: ['a/src/index.ts'], added: ['b/src/extra.ts'], deleted: [] });

    // graph files, paired with their directories by package name, give the same graph
    const files = [a, b].map((d, i) => {
      const f = join(tmp, `part${i}.jsonl`);
      return f;
    });
    writeFileSync(files[0]!, graphText(await exportGraph(a, { store: false, workers: 0 })));
    writeFileSync(files[1]!, graphText(await exportGraph(b, { store: false, workers: 0 })));
    const fromFiles = await loadGraph({ graph: files, dir: [a, b] });
    expect(fromFiles.index.files()).toEqual(expect.arrayContaining(['a/src/index.ts', 'b/src/main.ts', 'b/src/extra.ts']));
    expect(neighborhood(fromFiles.index, 'hello', { edges: ['calls'] }).nodes.map((x) => x.anchor)).toContain('a/src/index.ts:1-3');
    await expect(loadGraph({ graph: files, dir: [a] })).rejects.toMatchObject({ code: 'KILN_USAGE' });
  });
});
