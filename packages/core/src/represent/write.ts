/**
 * Write a built package's executable representation where consumers look for it: `kiln.rep` beside
 * the built JavaScript of the manifest's main entry (`representationPath`, @kiln/runtime: one rule
 * for the writer and every reader), encoded by the runtime's codec. Called by the build executor
 * after a successful compile (so the file is one of the task's cached outputs) and by
 * `kiln represent` after a wrapped tool.
 *
 * Invariants: the file is replaced atomically (written beside, then renamed), so a reader never sees
 * half of one; a stale representation is removed before producing, so a failed production leaves
 * none rather than an older one; the bytes depend on the package's files only (no path, no time).
 */
import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import { encodeRepresentation, representationPath } from '@kiln/runtime';
import { produceRepresentation, type ProduceOptions } from './produce.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';

export interface WrittenRepresentation {
  /** The file written, relative to `workspaceRoot` (or the package root). */
  file: string;
  bytes: number;
  entries: number;
  covered: number;
  /** Uncovered entries per reason code. */
  uncovered: Record<string, number>;
  payloads: number;
  diagnostics: Diagnostic[];
}

export async function writeRepresentation(opts: ProduceOptions): Promise<WrittenRepresentation> {
  const root = resolve(opts.packageRoot);
  const base = resolve(opts.workspaceRoot ?? root);
  const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as Record<string, unknown>;
  const file = representationPath(root, manifest);
  await rm(file, { force: true });
  const { representation, diagnostics } = await produceRepresentation(opts);
  const bytes = encodeRepresentation(representation);
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, bytes);
  await rename(tmp, file);
  const uncovered: Record<string, number> = {};
  let covered = 0;
  for (const e of representation.entries) {
    if (e.coverage.covered) covered++;
    else uncovered[e.coverage.reason] = (uncovered[e.coverage.reason] ?? 0) + 1;
  }
  return {
    file: relative(base, file).split(sep).join('/'),
    bytes: bytes.byteLength,
    entries: representation.entries.length,
    covered,
    uncovered,
    payloads: representation.payloads.length,
    diagnostics,
  };
}

/** One line for a build's log: `dist/kiln.rep: 12 exports, 10 covered (2 type-only), 4 payloads, 3.1 kB`. */
export function describeWritten(w: WrittenRepresentation): string {
  const reasons = Object.entries(w.uncovered)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([r, n]) => `${n} ${r.replace(/^KILN_REP_UNCOVERED_/, '').toLowerCase().replaceAll('_', '-')}`);
  return `${w.file}: ${w.entries} export${w.entries === 1 ? '' : 's'}, ${w.covered} covered${reasons.length ? ` (uncovered: ${reasons.join(', ')})` : ''}, ${w.payloads} payload${w.payloads === 1 ? '' : 's'}, ${(w.bytes / 1000).toFixed(1)} kB`;
}
