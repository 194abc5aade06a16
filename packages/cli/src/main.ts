/**
 * The `kiln` command line: program setup and command registration. Thin: each command (one a file under
 * commands/) parses its arguments, calls one core function and prints a projection of its result.
 * Exit codes: 0 ok, 1 failure, 2 usage. A command that fails with a diagnostic prints its envelope on
 * stderr: as text, or with `--format json` as one JSON line.
 *
 * `--trace FILE` (or KILN_TRACE), on the commands that offer it, appends this run's capture to FILE
 * (@kiln/core/trace, loaded only then): the process is named after the command line, one root span
 * covers the command, and the capture ends when the command does, whether it succeeded or threw.
 * A trace that cannot be written is a warning; it never changes the exit code.
 */
import { Command, CommanderError } from 'commander';
import { KilnError, formatDiagnostic, formatEnvelopeJson, formatEnvelopeText, toEnvelope } from '@kiln/core/affected';
import type { TraceSession } from '@kiln/core/trace';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, TRACE_FLAGS, defaultIo, type Io, type SetExit } from './common.js';

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
  // `kiln affected …` (what CI runs on every push) registers and loads that command alone: the other
  // commands' modules load the whole of core. Any other first word registers every command.
  if (argv[0] === 'affected') (await import('./commands/affected.js')).registerAffected(program, io, setExit);
  // `kiln symbolicate` (what someone runs on a crash) loads the debug stage alone, likewise.
  else if (argv[0] === 'symbolicate') (await import('./commands/symbolicate.js')).registerSymbolicate(program, io, setExit);
  // `kiln call` (a consumer's route into a package's representation) loads @kiln/runtime alone.
  else if (argv[0] === 'call') (await import('./commands/call.js')).registerCall(program, io, setExit);
  else await registerAll(program, io, setExit);

  let trace: TraceSession | undefined;
  program.hook('preAction', async (_program, action) => {
    if (!action.options.some((o) => o.flags === TRACE_FLAGS)) return;
    const file = (action.opts() as { trace?: string }).trace ?? process.env.KILN_TRACE;
    if (!file) return;
    const command: string[] = [];
    for (let c: Command | null = action; c && c !== program; c = c.parent) command.unshift(c.name());
    const { startTrace } = await import('@kiln/core/trace');
    trace = startTrace(file, { process: ['kiln', ...command, ...action.args].join(' '), root: ['kiln', ...command].join(' ') });
    for (const d of trace.diagnostics) io.err(formatDiagnostic(d));
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    trace?.fail(e);
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (e instanceof KilnError) {
      // The failure's diagnostic envelope: its text projection, or with --format json the envelope (one line).
      const envelope = toEnvelope(e.diagnostic);
      io.err(jsonFormat(argv) ? formatEnvelopeJson(envelope) : formatEnvelopeText(envelope));
      return e.code === 'KILN_USAGE' || e.code === 'KILN_UNKNOWN_CODE' ? EXIT_USAGE : EXIT_FAILURE;
    }
    io.err(`kiln: internal error: ${(e as Error).stack ?? String(e)}`);
    return EXIT_FAILURE;
  } finally {
    for (const d of trace?.stop() ?? []) io.err(formatDiagnostic(d));
  }
}

/** Whether the command line asks for JSON output (`--format json` or `--format=json`). */
export function jsonFormat(argv: readonly string[]): boolean {
  return argv.some((a, i) => a === '--format=json' || (a === '--format' && argv[i + 1] === 'json'));
}

/** Every command, in the order `kiln --help` lists them. */
async function registerAll(program: Command, io: Io, setExit: SetExit): Promise<void> {
  const [digest, diff, keys, explainMiss, storeGc, affected, graphExport, graphQuery, mcp, explain, symbolicate, debugIds, represent, call, inspect] = await Promise.all([
    import('./commands/digest.js'),
    import('./commands/diff.js'),
    import('./commands/keys.js'),
    import('./commands/explain-miss.js'),
    import('./commands/store-gc.js'),
    import('./commands/affected.js'),
    import('./commands/graph-export.js'),
    import('./commands/graph-query.js'),
    import('./commands/mcp.js'),
    import('./commands/explain.js'),
    import('./commands/symbolicate.js'),
    import('./commands/debug-ids.js'),
    import('./commands/represent.js'),
    import('./commands/call.js'),
    import('./commands/inspect.js'),
  ]);
  digest.registerDigest(program, io, setExit);
  diff.registerDiff(program, io, setExit);
  keys.registerKeys(program, io);
  explainMiss.registerExplainMiss(program, io);
  storeGc.registerStoreGc(program, io);
  affected.registerAffected(program, io, setExit);
  symbolicate.registerSymbolicate(program, io, setExit);
  debugIds.registerDebugIds(program, io);
  represent.registerRepresent(program, io);
  call.registerCall(program, io, setExit);
  inspect.registerInspect(program, io, setExit);

  const graph = program.command('graph').description('the codegraph: a versioned JSONL record of files, modules, declarations, imports, references and calls');
  graphExport.registerGraphExport(graph, io, setExit);
  graphQuery.registerGraphQueries(graph, io, setExit);
  graphQuery.registerContext(program, io, setExit);
  mcp.registerMcp(program, io);
  explain.registerExplain(program, io);
}
