/**
 * `kiln explain [code]`: what a diagnostic code means, its outcome category (what it means for the
 * result) and how to fix it; `--list` (or no code): every code. An unknown code is a usage error (exit 2).
 */
import { Option, type Command } from 'commander';
import { CODES, KilnError, OUTCOMES, diagnostic, isDiagnosticCode } from '@kiln/core';
import type { Io } from '../common.js';

export function registerExplain(program: Command, io: Io): void {
  program
    .command('explain')
    .description('explain a diagnostic code: what it means and how to fix it')
    .argument('[code]', 'a code such as KILN_SYNTAX_ERROR')
    .option('--list', 'list every code')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((code: string | undefined, o: { list?: boolean; format: 'text' | 'json' }) => {
      if (o.list || !code) {
        const codes = Object.keys(CODES) as (keyof typeof CODES)[];
        if (o.format === 'json') io.out(JSON.stringify(codes.map((c) => ({ code: c, ...CODES[c] })), null, 2));
        else io.out(codes.map((c) => `${c.padEnd(32)} ${CODES[c].severity.padEnd(8)} ${CODES[c].title}`).join('\n'));
        return;
      }
      const upper = code.toUpperCase();
      if (!isDiagnosticCode(upper)) {
        throw new KilnError(diagnostic('KILN_UNKNOWN_CODE', `${code} is not a kiln diagnostic code`, { producer: 'cli' }));
      }
      const e = CODES[upper];
      if (o.format === 'json') io.out(JSON.stringify({ code: upper, ...e }, null, 2));
      else io.out(`${upper} (${e.severity})\n\n${e.title}.\n\nOutcome: ${e.outcome} — ${OUTCOMES[e.outcome]}\n\nWhat it means: ${e.meaning}\n\nHow to fix it: ${e.hint}`);
    });
}
