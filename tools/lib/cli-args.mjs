/**
 * Command-line options for the tools/ scripts, one way: node:util parseArgs in strict mode, `--help`
 * (-h) added to every script, bad usage printed with the script's help and exit status 2 (the status
 * every tool documents for bad usage), `--help` printed with status 0. `int` reads an integer option
 * with a lower bound under the same rule.
 */
import { parseArgs } from 'node:util';

/**
 * @param {Record<string, import('node:util').ParseArgsOptionConfig>} options the script's options (without help)
 * @param {string} help the script's usage text
 * @param {{ allowPositionals?: boolean, argv?: string[] }} [more]
 * @returns {{ args: Record<string, any>, positionals: string[], int: (name: string, min: number) => number }}
 */
export function cliArgs(options, help, more = {}) {
  let parsed;
  try {
    parsed = parseArgs({
      args: more.argv ?? process.argv.slice(2),
      options: { ...options, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
      allowPositionals: more.allowPositionals ?? false,
    });
  } catch (e) {
    process.stderr.write(`${e.message}\n${help}`);
    process.exit(2);
  }
  const args = parsed.values;
  if (args.help) {
    process.stdout.write(help);
    process.exit(0);
  }
  const int = (name, min) => {
    const v = Number(args[name]);
    if (!Number.isInteger(v) || v < min) {
      process.stderr.write(`--${name} must be an integer >= ${min}\n${help}`);
      process.exit(2);
    }
    return v;
  };
  return { args, positionals: parsed.positionals, int };
}
