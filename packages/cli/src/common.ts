/**
 * What every `kiln` command shares: the exit codes, the output channels, the options of commands that
 * digest a tree (`--format`, `--store`, `--workers`, `--sync`, `--max-file-size`, `--progress`, `--trace`) and the
 * kiln plugin's options as nx.json gives them. Usage errors are KILN_USAGE diagnostics (exit 2).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command, Option } from 'commander';
// Values from core's light entry (diagnostics, affected): a command loads the rest of core only if it uses it.
import { KilnError, diagnostic } from '@kiln/core/affected';
import type { DigestTreeOptions } from '@kiln/core';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Where a command prints: stdout and stderr, a newline added where missing (tests pass their own). */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

export const defaultIo: Io = {
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
};

/** A command's exit code, set where a command fails without throwing (diagnostics of severity error). */
export type SetExit = (code: number) => void;

export interface CommonOptions {
  format: 'text' | 'json';
  store?: string | false;
  workers?: string;
  maxFileSize?: string;
  progress?: boolean;
  sync?: 'auto' | 'git' | 'scan';
}

export function treeOptions(o: CommonOptions, io: Io): DigestTreeOptions {
  const opts: DigestTreeOptions = {};
  if (o.store === false) opts.store = false;
  else if (typeof o.store === 'string') opts.store = o.store;
  if (o.workers !== undefined) opts.workers = intOption('--workers', o.workers, 0);
  if (o.sync !== undefined) opts.git = o.sync === 'auto' ? 'auto' : o.sync === 'git';
  const max = o.maxFileSize ?? process.env.KILN_MAX_FILE_SIZE;
  if (max !== undefined) opts.maxFileSize = intOption('--max-file-size', max, 1);
  const showProgress = o.progress ?? (process.stderr.isTTY && o.format === 'text');
  if (showProgress) {
    let last = 0;
    opts.onProgress = (done, total) => {
      const now = Date.now();
      if (done === total || now - last > 200) {
        last = now;
        io.err(`\rdigesting ${done}/${total} files`);
      }
    };
  }
  return opts;
}

export function intOption(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new KilnError(diagnostic('KILN_USAGE', `${name} must be an integer ≥ ${min}, got "${value}"`, { producer: 'cli' }));
  }
  return n;
}

export function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'do not read or write the local store')
    .option('--workers <n>', 'worker threads (default: one per core but one, at least 1; 0 = no pool)')
    .addOption(
      new Option('--sync <how>', 'reconcile the view with its tree from git status and the index (git), by listing and hashing (scan), or git for views of 1000+ files (auto; $KILN_GIT_SYNC=0/1 changes the default)').choices(['auto', 'git', 'scan']),
    )
    .option('--max-file-size <bytes>', 'do not parse files larger than this (default 8 MiB, or $KILN_MAX_FILE_SIZE)')
    .option('--progress', 'print progress on stderr (default: when stderr is a terminal)')
    .option(TRACE_FLAGS, TRACE_HELP);
}

/** `--trace FILE`, on every command that digests, keys or exports (main.ts starts the capture). */
export const TRACE_FLAGS = '--trace <file>';
export const TRACE_HELP = "append a timeline of kiln's own work (Chrome Trace Event Format; open in ui.perfetto.dev) to this file (default: $KILN_TRACE)";

/** The kiln plugin's options in nx.json (none: the defaults). */
export async function kilnPluginOptions(workspace: string): Promise<{ targets?: string[]; buildTargetName?: string; tsConfig?: string; addBuildTargets?: boolean }> {
  try {
    const nx = JSON.parse(await readFile(join(workspace, 'nx.json'), 'utf8')) as { plugins?: (string | { plugin: string; options?: Record<string, unknown> })[] };
    const entry = (nx.plugins ?? []).find((p) => (typeof p === 'string' ? p : p.plugin) === '@kiln/nx');
    return entry && typeof entry === 'object' ? ((entry.options ?? {}) as never) : {};
  } catch {
    return {};
  }
}
