/**
 * kiln's MCP server: task context packs and code-graph queries for agents, over one package's codegraph.
 *
 * Tools (read-only unless said): `context_for_task`, `context_for_files`, `explain_context`,
 * `graph_summary`, `graph_neighbors`, `graph_find`, `graph_module`, `affected_by` (the targets a change
 * to one declaration reaches, by `kiln affected`'s rules and reverse closure); and `reindex`, the only tool that
 * changes anything — it re-exports the graph from the source directory and replaces the one the server
 * answers from (in memory: it never writes the --graph file or the source tree). Resources (read-only):
 * the codegraph JSON Schema, the snapshot (graph header + freshness against the working tree), the
 * summary.
 *
 * Invariants: nothing is read at import or at construction — the graph is loaded on the first request
 * (a load error is returned to that request as a tool error, and retried on the next); every answer is
 * computed by @kiln/core, so the server and the CLI give the same bytes for the same question; stdout
 * belongs to the protocol — the server never prints.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import {
  affectedByDeclaration,
  findWorkspaceRoot,
  formatDeclarationImpact,
  checkFreshness,
  contextPack,
  createGraphSession,
  diagnostic,
  explainContext,
  findIdentifiers,
  formatEnvelopeText,
  formatExplanationText,
  formatFindText,
  formatModuleText,
  formatNeighborsText,
  formatSummaryText,
  graphSchema,
  graphSummary,
  KilnError,
  loadGraph,
  moduleView,
  neighborhood,
  toEnvelope,
  type Diagnostic,
  type LoadedGraph,
} from '@kiln/core';

export const KILN_MCP_VERSION = '0.1.0';

export interface KilnMcpOptions {
  /** Codegraph JSONL files to answer from (several: merged, paired with `dir` by package name). */
  graph?: string | string[];
  /** Package directories: exported on first use when no graph file is given, and the source trees (freshness, source text, reindex); several are merged. */
  dir?: string | string[];
  /** Export in tolerant mode (a project with type errors still gets a graph). */
  allowErrors?: boolean;
  tsConfig?: string;
  store?: string | false;
}

export const RESOURCE_SCHEMA = 'kiln://codegraph/schema';
export const RESOURCE_SNAPSHOT = 'kiln://codegraph/snapshot';
export const RESOURCE_SUMMARY = 'kiln://codegraph/summary';

const DEFAULT_BUDGET = 4000;
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function text(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }] };
}

/**
 * A tool's failure: its diagnostics as envelopes in `structuredContent.diagnostics` (for a client that
 * reads records), and their text projections as the text content (for a model that reads text).
 */
function failure(e: unknown): CallToolResult {
  if (e instanceof KilnError) {
    const more = ((e as { diagnostics?: Diagnostic[] }).diagnostics ?? []).filter((d) => d !== e.diagnostic);
    const envelopes = [e.diagnostic, ...more].map(toEnvelope);
    return { isError: true, content: [{ type: 'text', text: envelopes.map(formatEnvelopeText).join('\n') }], structuredContent: { diagnostics: envelopes } };
  }
  return { isError: true, content: [{ type: 'text', text: `kiln: internal error: ${(e as Error)?.message ?? String(e)}` }] };
}

/** Holds the graph the server answers from; `reindex` replaces it. */
export class GraphState {
  private current: LoadedGraph | undefined;
  private loading: Promise<LoadedGraph> | undefined;
  /** A reindex after an edit parses only what changed (and, without the checker, rebuilds only the records that can have). */
  private readonly session = createGraphSession();
  constructor(private readonly opts: KilnMcpOptions) {}

  get options(): KilnMcpOptions {
    return this.opts;
  }

  async get(): Promise<LoadedGraph> {
    if (this.current) return this.current;
    this.loading ??= this.load(false).finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** Re-export from the source directory (the graph file, if any, is left as it is). */
  async reindex(): Promise<{ previous: LoadedGraph | undefined; next: LoadedGraph }> {
    const previous = this.current;
    const next = await this.load(true);
    return { previous, next };
  }

  private async load(fromDir: boolean): Promise<LoadedGraph> {
    const o = this.opts;
    const common = {
      mode: o.allowErrors ? ('allow-errors' as const) : ('checked' as const),
      ...(o.tsConfig !== undefined ? { tsConfig: o.tsConfig } : {}),
      ...(o.store !== undefined ? { store: o.store } : {}),
      session: this.session,
    };
    const g = fromDir ? await loadGraph({ ...common, dir: o.dir! }) : await loadGraph({ ...common, ...(o.graph !== undefined ? { graph: o.graph } : {}), ...(o.dir !== undefined ? { dir: o.dir } : {}) });
    this.current = g;
    return g;
  }
}

function sourceOf(g: LoadedGraph) {
  return g.sourceDir ? { sourceDir: g.sourceDir } : {};
}

/** One tool of the server: its name, its MCP config (input schema as a zod shape) and what answers it. */
interface ToolDef<S extends z.ZodRawShape> {
  name: string;
  config: { title: string; description: string; inputSchema: S; annotations: ToolAnnotations };
  handler: (args: z.infer<z.ZodObject<S>>) => Promise<CallToolResult>;
}
type Tool = ToolDef<z.ZodRawShape>;

/** A tool for the table: typed against its own schema here, registered with the others in one loop. */
const tool = <S extends z.ZodRawShape>(def: ToolDef<S>): Tool => def as unknown as Tool;

export function createKilnMcpServer(opts: KilnMcpOptions): McpServer {
  if (opts.graph === undefined && opts.dir === undefined) throw new Error('kiln mcp needs a graph file or a package directory');
  const state = new GraphState(opts);
  const server = new McpServer(
    { name: 'kiln', version: KILN_MCP_VERSION },
    {
      instructions:
        'kiln answers questions about one package from its codegraph (declarations, imports, references, calls, diagnostics, each with a provenance tier). Start with context_for_task: it returns the declarations most relevant to a task, ranked and packed into a token budget with file:line anchors and source. Every pack states whether the graph is fresh for the working tree; when it says STALE, call reindex. Use graph_find / graph_neighbors / graph_module to explore further.',
    },
  );

  const budget = z.number().int().min(64).max(200_000).optional().describe(`token budget of the pack, estimated as ceil(chars / 4) (default ${DEFAULT_BUDGET})`);
  const format = z.enum(['compact', 'json']).optional().describe('compact text for reading (default) or JSON');
  const explain = z.boolean().optional().describe('add why-lines: seed, path from the seed, score factors');
  const qformat = z.enum(['text', 'json']).optional().describe('text (default) or JSON');

  // The tools, in the order a client lists them. A handler's exception is the tool's error result.
  const tools: Tool[] = [
    tool({
      name: 'context_for_task',
      config: {
        title: 'Context for a task',
        description:
          'The declarations of the package most relevant to a task, ranked (graph proximity to what the task names, provenance, public API, diagnostics) and packed into a token budget, each with a file:line anchor and, when the source tree is at hand, its source. States the graph snapshot and whether it is stale for the working tree.',
        inputSchema: { task: z.string().min(1).describe('what you are about to do, in words; identifiers in it count most'), budget, format, explain },
        annotations: READ_ONLY,
      },
      handler: async ({ task, budget: b, format: f, explain: x }) => {
        const g = await state.get();
        const r = await contextPack(g.index, { task, budget: b ?? DEFAULT_BUDGET, format: f ?? 'compact', explain: x === true }, sourceOf(g));
        return text(r.text);
      },
    }),
    tool({
      name: 'context_for_files',
      config: {
        title: 'Context for files',
        description: 'Like context_for_task, seeded from files you are working in: their declarations and what they call, reference, import and are used by.',
        inputSchema: { files: z.array(z.string().min(1)).min(1).describe('paths relative to the package root (or a unique suffix)'), budget, format, explain },
        annotations: READ_ONLY,
      },
      handler: async ({ files, budget: b, format: f, explain: x }) => {
        const g = await state.get();
        const r = await contextPack(g.index, { files, budget: b ?? DEFAULT_BUDGET, format: f ?? 'compact', explain: x === true }, sourceOf(g));
        return text(r.text);
      },
    }),
    tool({
      name: 'explain_context',
      config: {
        title: 'Explain a context pack item',
        description: 'Why a node is (or is not) in the context pack for a task or files: its seed, its best path from a seed, its score factors, its rank, and whether the budget held it.',
        inputSchema: {
          node_id: z.string().min(1).describe('a node id, or a name only one declaration has'),
          task: z.string().min(1).optional(),
          files: z.array(z.string().min(1)).optional(),
          budget,
          format: z.enum(['text', 'json']).optional(),
        },
        annotations: READ_ONLY,
      },
      handler: async ({ node_id, task, files, budget: b, format: f }) => {
        const g = await state.get();
        const req = { ...(task !== undefined ? { task } : {}), ...(files !== undefined ? { files } : {}), budget: b ?? DEFAULT_BUDGET };
        const e = await explainContext(g.index, req, node_id, sourceOf(g));
        return text(f === 'json' ? JSON.stringify(e, null, 2) : formatExplanationText(e));
      },
    }),
    tool({
      name: 'graph_summary',
      config: {
        title: 'Graph summary',
        description: 'What the codegraph holds: snapshot id, mode, counts per record kind and provenance tier, packages, modules, diagnostics.',
        inputSchema: { format: qformat },
        annotations: READ_ONLY,
      },
      handler: async ({ format: f }) => {
        const s = graphSummary((await state.get()).index);
        return text(f === 'json' ? JSON.stringify(s, null, 2) : formatSummaryText(s));
      },
    }),
    tool({
      name: 'graph_neighbors',
      config: {
        title: 'Graph neighbours',
        description: 'Nodes within `depth` edges of a node and the edges between them (from → to), optionally only some edge kinds (contains, defines, imports, exports, references, calls, documents, diagnoses).',
        inputSchema: {
          node_id: z.string().min(1).describe('a node id, a module path, or a name only one declaration has'),
          depth: z.number().int().min(0).max(6).optional(),
          edges: z.array(z.string()).optional(),
          direction: z.enum(['out', 'in', 'both']).optional(),
          format: qformat,
        },
        annotations: READ_ONLY,
      },
      handler: async ({ node_id, depth, edges, direction, format: f }) => {
        const n = neighborhood((await state.get()).index, node_id, { depth: depth ?? 1, direction: direction ?? 'both', ...(edges ? { edges } : {}) });
        return text(f === 'json' ? JSON.stringify(n, null, 2) : formatNeighborsText(n));
      },
    }),
    tool({
      name: 'graph_find',
      config: {
        title: 'Find identifiers',
        description: 'Identifiers matching a query, ranked: exact, exact ignoring case, prefix, camel-case humps, substring. Gives the node ids other tools take.',
        inputSchema: { query: z.string().min(1), limit: z.number().int().min(1).max(500).optional(), kinds: z.array(z.string()).optional(), format: qformat },
        annotations: READ_ONLY,
      },
      handler: async ({ query, limit, kinds, format: f }) => {
        const hits = findIdentifiers((await state.get()).index, query, { limit: limit ?? 20, ...(kinds ? { kinds } : {}) });
        return text(f === 'json' ? JSON.stringify({ kind: 'kiln-graph-find', query, hits }, null, 2) : formatFindText(query, hits));
      },
    }),
    tool({
      name: 'graph_module',
      config: {
        title: 'Module',
        description: 'One module: declarations, imports with resolved targets, exports, importers, diagnostics.',
        inputSchema: { path: z.string().min(1).describe('module path (src/shapes), file, unique suffix or module id'), format: qformat },
        annotations: READ_ONLY,
      },
      handler: async ({ path, format: f }) => {
        const m = moduleView((await state.get()).index, path);
        return text(f === 'json' ? JSON.stringify(m, null, 2) : formatModuleText(m));
      },
    }),
    tool({
      name: 'affected_by',
      config: {
        title: 'Affected by a declaration',
        description:
          "Which projects' targets a change to this declaration reaches, with the chain (`@x/web:test ← @x/app (dependency) ← … changes`): the same rules and reverse closure as `kiln affected` — kiln's build by its key (dependents only through the surface), test/e2e/typecheck by meaning, other targets on any edit. Reads the working tree of the workspace above the source directory.",
        inputSchema: {
          node_id: z.string().min(1).describe('a declaration id (language:package//module#path:kind), or a name only one declaration has'),
          targets: z.array(z.string()).optional().describe('target names (default build, test)'),
          format: qformat,
        },
        annotations: READ_ONLY,
      },
      handler: async ({ node_id, targets, format: f }) => {
        const g = await state.get();
        if (!g.sourceDir) return { isError: true, content: [{ type: 'text', text: 'affected_by needs the source directory: start the server with a package directory (kiln mcp <dir>)' }] };
        // A name: the one declaration the graph has by it (graph_find gives ids for the others).
        const id = node_id.includes('//') ? node_id : findIdentifiers(g.index, node_id, { limit: 2 }).filter((h) => h.kind !== 'module')[0]?.id ?? node_id;
        const workspace = findWorkspaceRoot(g.sourceDir) ?? g.sourceDir;
        const r = await affectedByDeclaration(workspace, id, { ...(targets ? { targets } : {}), ...(opts.store !== undefined ? { store: opts.store } : {}) });
        return text(f === 'json' ? JSON.stringify(r, null, 2) : formatDeclarationImpact(r));
      },
    }),
    tool({
      name: 'reindex',
      config: {
        title: 'Re-export the graph',
        description:
          'Changes server state: re-exports the codegraph from the source directory and answers from it from now on (the graph file given at start, if any, is not rewritten). Call it when a pack says the graph is STALE.',
        inputSchema: {},
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      handler: async () => {
        if (opts.dir === undefined) return failure(new KilnError(diagnostic('KILN_USAGE', 'reindex needs the source directory: start the server with a package directory (kiln mcp <dir>)', { producer: 'mcp' })));
        const { previous, next } = await state.reindex();
        const before = previous ? String(previous.index.header.snapshot?.id ?? '') : null;
        const after = String(next.index.header.snapshot?.id ?? '');
        const result = { previous_snapshot: before, snapshot: after, changed: before !== after, records: next.index.records.length + 1 };
        return text(JSON.stringify(result, null, 2));
      },
    }),
  ];
  for (const t of tools) {
    server.registerTool(t.name, t.config, async (args) => {
      try {
        return await t.handler(args);
      } catch (e) {
        return failure(e);
      }
    });
  }

  server.registerResource(
    'codegraph-schema',
    RESOURCE_SCHEMA,
    { title: 'Codegraph JSON Schema', description: 'The versioned JSON Schema (2020-12) every codegraph record follows.', mimeType: 'application/schema+json' },
    async (uri): Promise<ReadResourceResult> => ({ contents: [{ uri: uri.href, mimeType: 'application/schema+json', text: JSON.stringify(graphSchema(), null, 2) }] }),
  );

  server.registerResource(
    'codegraph-snapshot',
    RESOURCE_SNAPSHOT,
    { title: 'Codegraph snapshot', description: 'The graph header (schema version, mode, toolchain, snapshot id) and its freshness against the working tree.', mimeType: 'application/json' },
    async (uri): Promise<ReadResourceResult> => {
      const g = await state.get();
      const freshness = await checkFreshness(g.index, g.sourceDir);
      const body = { header: g.index.header, origin: g.origin, freshness };
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
    },
  );

  server.registerResource(
    'codegraph-summary',
    RESOURCE_SUMMARY,
    { title: 'Codegraph summary', description: 'Counts per kind and provenance, packages, modules and diagnostics of the graph.', mimeType: 'application/json' },
    async (uri): Promise<ReadResourceResult> => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(graphSummary((await state.get()).index), null, 2) }] }),
  );

  return server;
}
