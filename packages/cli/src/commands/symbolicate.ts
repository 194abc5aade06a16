/**
 * `kiln symbolicate [FILE]`: a stack trace (FILE, `-` or stdin: V8/Node, Chrome, Firefox, Safari text, or
 * JSON frames with debug IDs) mapped frame by frame to authored file, line, column and declaration
 * identity, each with a match status (verified / source changed, relocated / source changed /
 * unavailable; core debug/symbolicate.ts). Text and `--format json` are projections of the same records;
 * JSON is streamed (one frame a line), so a trace of a million frames never builds one giant string.
 * Exit 0 when the trace was read (whatever the statuses), 1 when it could not be, 2 on usage errors.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import {
  DEBUG_STORE_FORMAT,
  KilnError,
  Symbolicator,
  defaultStoreDir,
  diagnostic,
  findWorkspaceRoot,
  formatDiagnostic,
  formatFrameText,
  formatSymbolicateSummary,
  parseStackInput,
  toEnvelope,
} from '@kiln/core/debug';
import type { Io, SetExit } from '../common.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function registerSymbolicate(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('symbolicate')
    .description('map the frames of a stack trace to authored source and declarations, with a match status per frame')
    .argument('[file]', 'the stack trace (text or JSON frames); `-` or none reads stdin')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--workspace <dir>', 'the workspace whose working tree frames are compared with (default: the one around the current directory)')
    .option('--no-ingest', 'do not ingest JS files the store does not know (frames in them are unavailable)')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (file: string | undefined, o: { store?: string; workspace?: string; ingest: boolean; format: 'text' | 'json' }) => {
      let text: string;
      const source = file && file !== '-' ? file : 'stdin';
      if (source === 'stdin' && process.stdin.isTTY) {
        throw new KilnError(diagnostic('KILN_USAGE', 'no stack trace: give a file, or pipe the trace into stdin', { producer: 'cli' }));
      }
      try {
        text = source === 'stdin' ? await readStdin() : await readFile(resolve(file!), 'utf8');
      } catch (e) {
        throw new KilnError(diagnostic('KILN_NOT_FOUND', `cannot read ${source}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { producer: 'cli' }));
      }
      const cwd = process.cwd();
      const workspaceRoot = o.workspace ? resolve(o.workspace) : (findWorkspaceRoot(join(cwd, 'package.json')) ?? cwd);
      const input = parseStackInput(text, source);
      const sym = new Symbolicator({ storeDir: o.store ?? defaultStoreDir(), workspaceRoot, cwd, ingest: o.ingest });
      const counts: Record<string, number> = {};
      if (o.format === 'json') {
        io.out(`{"format":${DEBUG_STORE_FORMAT},"message":${JSON.stringify(input.message)},"frames":[`);
        let first = true;
        await sym.frames(input.frames, (f) => {
          counts[f.status] = (counts[f.status] ?? 0) + 1;
          io.out(`${first ? '' : ','}${JSON.stringify(f)}`);
          first = false;
        });
        io.out(`],"summary":${JSON.stringify(counts)},"diagnostics":${JSON.stringify(input.diagnostics.map(toEnvelope))}}`);
      } else {
        for (const m of input.message) io.out(m);
        await sym.frames(input.frames, (f) => {
          counts[f.status] = (counts[f.status] ?? 0) + 1;
          io.out(formatFrameText(f));
        });
        for (const d of input.diagnostics) io.err(formatDiagnostic(d));
        io.err(formatSymbolicateSummary(counts));
      }
      if (input.frames.length === 0 && input.diagnostics.length > 0) setExit(1);
    });
}
