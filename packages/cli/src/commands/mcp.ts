/**
 * `kiln mcp [dir...] [--graph FILE]... [--allow-errors] [--tsconfig NAME] [--store DIR | --no-store]`: kiln's
 * MCP server over stdio (the @kiln/mcp package, loaded only when this command runs). Same server as
 * the `kiln-mcp` bin. stdout belongs to the protocol: nothing else is printed there.
 */
import type { Command } from 'commander';
import type { Io } from '../common.js';

export function registerMcp(program: Command, _io: Io): void {
  program
    .command('mcp')
    .description('serve the codegraph to agents over MCP (stdio): context_for_task, context_for_files, explain_context, graph_* queries, reindex')
    .argument('[dirs...]', 'package directories: exported on first use unless --graph is given; the source trees for freshness, source text and reindex (several: one merged graph)')
    .option('--graph <file>', 'answer from this codegraph JSONL (from `kiln graph export`); repeat it for several packages', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--allow-errors', 'export in tolerant mode: a project that does not type-check still gets a graph')
    .option('--tsconfig <name>', 'tsconfig file name relative to the package')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'do not read or write the local store')
    .action(async (dirs: string[], o: { graph: string[]; allowErrors?: boolean; tsconfig?: string; store?: string | false }) => {
      const { runStdioServer } = await import('@kiln/mcp');
      await runStdioServer({
        ...(o.graph.length ? { graph: o.graph } : {}),
        ...(dirs.length ? { dir: dirs } : o.graph.length ? {} : { dir: '.' }),
        ...(o.allowErrors ? { allowErrors: true } : {}),
        ...(o.tsconfig !== undefined ? { tsConfig: o.tsconfig } : {}),
        ...(o.store !== undefined ? { store: o.store } : {}),
      });
    });
}
