/**
 * The `kiln-mcp` bin: parse argv, serve over stdio. Exit code 2 on a bad command line, 0 when the
 * client disconnects.
 */
import { parseMcpArgs, runStdioServer, USAGE } from './stdio.js';

export async function main(argv: string[]): Promise<number> {
  let opts;
  try {
    opts = parseMcpArgs(argv);
  } catch (e) {
    process.stderr.write(`kiln-mcp: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  await runStdioServer(opts);
  return 0;
}
