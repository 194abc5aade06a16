/**
 * Running kiln's MCP server over stdio, and the argument parsing the `kiln-mcp` bin and `kiln mcp`
 * share: `[dir...] [--graph FILE]... [--allow-errors] [--tsconfig NAME] [--store DIR | --no-store]`.
 *
 * Invariants: stdout carries only the protocol; messages for people go to stderr; the returned promise
 * settles when the client goes away (stdin ends or the transport closes).
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createKilnMcpServer, type KilnMcpOptions } from './server.js';

export const USAGE = 'usage: kiln-mcp [dir...] [--graph FILE.jsonl]... [--allow-errors] [--tsconfig NAME] [--store DIR | --no-store]';

/** Options from argv; throws an Error whose message is for people on a bad command line. */
export function parseMcpArgs(argv: string[]): KilnMcpOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      graph: { type: 'string', multiple: true },
      'allow-errors': { type: 'boolean' },
      tsconfig: { type: 'string' },
      store: { type: 'string' },
      'no-store': { type: 'boolean' },
    },
  });
  const o: KilnMcpOptions = {};
  if (values.graph?.length) o.graph = values.graph;
  if (positionals.length) o.dir = positionals;
  else if (o.graph === undefined) o.dir = '.';
  if (values['allow-errors']) o.allowErrors = true;
  if (values.tsconfig !== undefined) o.tsConfig = values.tsconfig;
  if (values['no-store']) o.store = false;
  else if (values.store !== undefined) o.store = values.store;
  return o;
}

/** Serve on stdin/stdout until the client disconnects. */
export async function runStdioServer(opts: KilnMcpOptions): Promise<void> {
  const server = createKilnMcpServer(opts);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.once('end', () => void server.close());
  await closed;
}
