/**
 * Issue 4, point 7 — the MCP server as an agent sees it: the SDK's own Client over a real stdio
 * transport spawning the server (`kiln-mcp` bin, and `kiln mcp`), on a copy of fixtures/graph/shop.
 * Lists tools and resources, calls every tool, reads every resource, and checks that `reindex` — the
 * only tool that changes anything — picks up an edit (new snapshot, fresh pack) while read-only tools
 * only report the graph as stale.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEnvelopeText, readEnvelope, type DiagnosticEnvelope } from '@kiln/core';

const root = resolve(__dirname, '../../..');
const serverBin = join(root, 'packages/mcp/bin/kiln-mcp.js');
const kilnBin = join(root, 'packages/cli/bin/kiln.js');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-mcp-'));
const shop = join(tmp, 'shop');
const TASK = 'apply a discount code at checkout and reject unknown codes';

type ToolResult = { content: { type: string; text?: string }[]; isError?: boolean };

async function connect(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: tmp, env: { ...(process.env as Record<string, string>), KILN_STORE: join(tmp, 'store') }, stderr: 'pipe' });
  const client = new Client({ name: 'kiln-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

function textOf(r: unknown): string {
  const res = r as ToolResult;
  return res.content.map((c) => c.text ?? '').join('\n');
}

let client: Client;

beforeAll(async () => {
  cpSync(join(root, 'fixtures/graph/shop'), shop, { recursive: true });
  client = await connect([serverBin, shop, '--no-store']);
});

afterAll(async () => {
  await client?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('kiln MCP server over stdio', () => {
  it('lists the tools, read-only ones marked so and reindex marked as changing state', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(['affected_by', 'context_for_files', 'context_for_task', 'explain_context', 'graph_find', 'graph_module', 'graph_neighbors', 'graph_summary', 'reindex']);
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(20);
      expect(t.annotations?.readOnlyHint).toBe(t.name !== 'reindex');
    }
    const task = tools.find((t) => t.name === 'context_for_task')!;
    expect(task.inputSchema.required).toEqual(['task']);
    expect(Object.keys(task.inputSchema.properties!)).toEqual(expect.arrayContaining(['task', 'budget', 'format', 'explain']));
  });

  it('lists and reads the resources: the schema, the snapshot with its freshness, the summary', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['kiln://codegraph/schema', 'kiln://codegraph/snapshot', 'kiln://codegraph/summary']);
    const schema = await client.readResource({ uri: 'kiln://codegraph/schema' });
    const s = JSON.parse((schema.contents[0] as { text: string }).text);
    expect(s.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(Object.keys(s.$defs)).toEqual(expect.arrayContaining(['header', 'declaration', 'calls']));
    const snap = JSON.parse(((await client.readResource({ uri: 'kiln://codegraph/snapshot' })).contents[0] as { text: string }).text);
    expect(snap.header).toMatchObject({ kind: 'header', schema_version: 1, mode: 'checked', package: '@fx/shop' });
    expect(snap.freshness).toMatchObject({ status: 'fresh', snapshot: snap.header.snapshot.id });
    const sum = JSON.parse(((await client.readResource({ uri: 'kiln://codegraph/summary' })).contents[0] as { text: string }).text);
    expect(sum.kind).toBe('kiln-graph-summary');
  });

  it('context_for_task returns a budgeted pack (compact and JSON) naming its freshness', async () => {
    const r = await client.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 900 } });
    expect((r as ToolResult).isError).toBeFalsy();
    const t = textOf(r);
    expect(t).toMatch(/^# kiln context pack v2 · budget 900 tokens/);
    expect(Math.ceil(t.length / 4)).toBeLessThanOrEqual(900);
    expect(t).toContain('freshness: fresh');
    expect(t).toMatch(/\nd\d function applyDiscount\* src\/discount\.ts:15-18 C\n/);
    const j = JSON.parse(textOf(await client.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 2000, format: 'json', explain: true } })));
    expect(j.kind).toBe('kiln-context-pack');
    expect(j.items.slice(0, 4).map((i: { path: string }) => i.path).sort()).toEqual(['DISCOUNT_CODES', 'applyDiscount', 'checkout', 'validateDiscountCode']);
    expect(j.items[0].why.length).toBeGreaterThan(1);
    // the same bytes as the command line
    const { spawnSync } = await import('node:child_process');
    const cli = spawnSync(process.execPath, [kilnBin, 'context', 'pack', shop, '--task', TASK, '--budget', '900', '--no-store'], { encoding: 'utf8' });
    expect(cli.stdout).toBe(t);
  });

  it('context_for_files, explain_context, graph_summary, graph_neighbors, graph_find, graph_module answer', async () => {
    const files = textOf(await client.callTool({ name: 'context_for_files', arguments: { files: ['src/tax.ts'], budget: 600 } }));
    expect(files).toMatch(/\nd\d function taxFor\* src\/tax\.ts:8-10 C\n/);
    const why = textOf(await client.callTool({ name: 'explain_context', arguments: { task: TASK, node_id: 'validateDiscountCode', budget: 900 } }));
    expect(why).toMatch(/^validateDiscountCode  \(typescript:@fx\/shop\/\/src\/discount#validateDiscountCode:function\)\n  in the pack as d\d+/);
    const whyJson = JSON.parse(textOf(await client.callTool({ name: 'explain_context', arguments: { task: TASK, node_id: 'roundCents', budget: 200, format: 'json' } })));
    expect(whyJson).toMatchObject({ kind: 'kiln-context-explanation', in_pack: false });
    const summary = textOf(await client.callTool({ name: 'graph_summary', arguments: {} }));
    expect(summary).toMatch(/^snapshot [0-9a-f]{32}  schema 1  mode checked/);
    const n = JSON.parse(textOf(await client.callTool({ name: 'graph_neighbors', arguments: { node_id: 'checkout', depth: 2, edges: ['calls'], direction: 'out', format: 'json' } })));
    expect(n.nodes.filter((x: { distance: number }) => x.distance === 2).map((x: { name: string }) => x.name).sort()).toEqual(['lineTotal', 'scaleMoney', 'validateDiscountCode']);
    const find = textOf(await client.callTool({ name: 'graph_find', arguments: { query: 'vDC' } }));
    expect(find).toContain('validateDiscountCode');
    const mod = textOf(await client.callTool({ name: 'graph_module', arguments: { path: 'src/discount' } }));
    expect(mod).toContain('module src/discount');
  });

  it('affected_by: the targets a change to one declaration reaches, by kiln affected\'s rules', async () => {
    const r = JSON.parse(textOf(await client.callTool({ name: 'affected_by', arguments: { node_id: 'validateDiscountCode', targets: ['build', 'test', 'lint'], format: 'json' } })));
    expect(r).toMatchObject({ kind: 'kiln-affected-by', identity: 'typescript:@fx/shop//src/discount#validateDiscountCode:function', package: '@fx/shop' });
    expect(r.affected.map((a: { target: string; rule: string }) => `${a.target}:${a.rule}`)).toEqual(['build:key', 'test:full', 'lint:files']);
    const missing = (await client.callTool({ name: 'affected_by', arguments: { node_id: 'typescript:@fx/shop//src/nowhere#nothing:function' } })) as ToolResult;
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/KILN_GRAPH_NODE_NOT_FOUND/);
  }, 120_000);

  it('reports errors as tool errors with the diagnostic, and keeps serving', async () => {
    const r = (await client.callTool({ name: 'graph_neighbors', arguments: { node_id: 'nothingHere' } })) as ToolResult & { structuredContent?: { diagnostics?: DiagnosticEnvelope[] } };
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/KILN_GRAPH_NODE_NOT_FOUND/);
    // The diagnostic as its envelope (issue 14 point 8), and the text as its projection.
    const envelopes = r.structuredContent?.diagnostics ?? [];
    expect(envelopes.map((e) => readEnvelope(e))).toEqual([{ ok: true, envelope: expect.objectContaining({ code: 'KILN_GRAPH_NODE_NOT_FOUND', outcome: 'refused', location: expect.objectContaining({ kind: 'none' }) }) }]);
    expect(textOf(r)).toBe(formatEnvelopeText(envelopes[0]!));
    const bad = (await client.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 5 } })) as ToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(await client.callTool({ name: 'graph_summary', arguments: {} }))).toMatch(/^snapshot/);
  });

  it('reindex is the only thing that changes the graph: after an edit packs say STALE until it runs', async () => {
    const before = JSON.parse(((await client.readResource({ uri: 'kiln://codegraph/snapshot' })).contents[0] as { text: string }).text).header.snapshot.id;
    const f = join(shop, 'src/discount.ts');
    writeFileSync(f, readFileSync(f, 'utf8').replace('SUMMER25: 0.25,', 'SUMMER25: 0.25,\n  WINTER15: 0.15,'));
    const stale = textOf(await client.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 900 } }));
    expect(stale).toContain('freshness: STALE — the working tree moved since the graph was exported: changed src/discount.ts');
    // read-only calls did not re-export
    expect(textOf(await client.callTool({ name: 'graph_summary', arguments: {} }))).toContain(`snapshot ${before}`);

    const re = JSON.parse(textOf(await client.callTool({ name: 'reindex', arguments: {} })));
    expect(re).toMatchObject({ previous_snapshot: before, changed: true });
    expect(re.snapshot).not.toBe(before);
    const fresh = textOf(await client.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 900 } }));
    expect(fresh).toContain('freshness: fresh');
    expect(fresh).toContain(`snapshot ${re.snapshot}`);
    expect(fresh).toContain('WINTER15: 0.15,');
    const again = JSON.parse(textOf(await client.callTool({ name: 'reindex', arguments: {} })));
    expect(again).toMatchObject({ previous_snapshot: re.snapshot, snapshot: re.snapshot, changed: false });
  });
});

describe('kiln mcp (the CLI entry) and a server on a graph file', () => {
  it('serves the same tools; without a directory, reindex refuses and freshness is unknown', async () => {
    const file = join(tmp, 'shop.jsonl');
    const { spawnSync } = await import('node:child_process');
    const exp = spawnSync(process.execPath, [kilnBin, 'graph', 'export', shop, '--out', file, '--no-store'], { encoding: 'utf8' });
    expect(exp.status, exp.stderr).toBe(0);
    const c = await connect([kilnBin, 'mcp', '--graph', file]);
    try {
      expect((await c.listTools()).tools.length).toBe(9);
      const pack = textOf(await c.callTool({ name: 'context_for_task', arguments: { task: TASK, budget: 900 } }));
      expect(pack).toContain('freshness: unknown');
      const re = (await c.callTool({ name: 'reindex', arguments: {} })) as ToolResult;
      expect(re.isError).toBe(true);
      expect(textOf(re)).toMatch(/reindex needs the source directory/);
    } finally {
      await c.close();
    }
  });
});
