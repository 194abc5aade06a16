/**
 * `kiln represent [dir]`: write a built package's executable representation (kiln.rep, SPEC §7) from
 * its build output and kiln's facts — for a wrapped tool's target (`"build": "tsdown && kiln represent"`),
 * within the same task so Nx caches it with the JS. kiln's own build executor does this itself.
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { describeWritten, formatDiagnostic, toEnvelope, writeRepresentation } from '@kiln/core';
import type { Io } from '../common.js';

export function registerRepresent(program: Command, io: Io): void {
  program
    .command('represent')
    .description("write a built package's executable representation (kiln.rep beside its main entry's JS)")
    .argument('[dir]', 'the package directory (holding package.json and its built JS)', '.')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (dir: string, o: { format: 'text' | 'json' }) => {
      const w = await writeRepresentation({ packageRoot: resolve(dir), workspaceRoot: process.cwd() });
      if (o.format === 'json') {
        io.out(JSON.stringify({ ...w, diagnostics: w.diagnostics.map(toEnvelope) }, null, 2));
        return;
      }
      for (const d of w.diagnostics) io.err(formatDiagnostic(d));
      io.out(`kiln represent: ${describeWritten(w)}`);
    });
}
