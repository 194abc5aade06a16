/**
 * The `kiln` command line: program setup and command registration. Thin: each command (one a file under
 * commands/) parses its arguments, calls one core function and prints a projection of its result.
 * Exit codes: 0 ok, 1 failure, 2 usage.
 */
import { Command, CommanderError } from 'commander';
import { KilnError, formatDiagnostic } from '@kiln/core';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, defaultIo, type Io } from './common.js';
import { registerAffected } from './commands/affected.js';
import { registerDiff } from './commands/diff.js';
import { registerDigest } from './commands/digest.js';
import { registerExplain } from './commands/explain.js';
import { registerExplainMiss } from './commands/explain-miss.js';
import { registerGraphExport } from './commands/graph-export.js';
import { registerContext, registerGraphQueries } from './commands/graph-query.js';
import { registerKeys } from './commands/keys.js';
import { registerMcp } from './commands/mcp.js';
import { registerStoreGc } from './commands/store-gc.js';

export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './common.js';

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  let exitCode = EXIT_OK;
  const program = new Command()
    .name('kiln')
    .description('kiln: semantic digests for TypeScript and JavaScript — what changed, not what was touched')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError('(run with --help for usage)');

  const setExit = (code: number) => {
    exitCode = code;
  };
  // Registration order is the order `kiln --help` lists the commands in.
  registerDigest(program, io, setExit);
  registerDiff(program, io, setExit);
  registerKeys(program, io);
  registerExplainMiss(program, io);
  registerStoreGc(program, io);
  registerAffected(program, io, setExit);

  const graph = program.command('graph').description('the codegraph: a versioned JSONL record of files, modules, declarations, imports, references and calls');
  registerGraphExport(graph, io, setExit);
  registerGraphQueries(graph, io, setExit);
  registerContext(program, io, setExit);
  registerMcp(program, io);
  registerExplain(program, io);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (e instanceof KilnError) {
      io.err(formatDiagnostic(e.diagnostic));
      return e.code === 'KILN_USAGE' || e.code === 'KILN_UNKNOWN_CODE' ? EXIT_USAGE : EXIT_FAILURE;
    }
    io.err(`kiln: internal error: ${(e as Error).stack ?? String(e)}`);
    return EXIT_FAILURE;
  }
}
