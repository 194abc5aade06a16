/**
 * Text projection of symbolicated frames (the JSON projection is the records themselves): one block per
 * frame — the frame as given, then the authored location with its match status and declaration, then
 * what the status needs shown (the retained line; for `relocated` the current line beside it; for
 * `changed` only the retained line, never one of the current file).
 */
import { MATCH_STATUS_TEXT, type SymbolicatedFrame } from './symbolicate.js';

const clip = (s: string) => (s.length > 160 ? `${s.slice(0, 160)}…` : s).trim();

export function formatFrameText(f: SymbolicatedFrame): string {
  const i = f.input;
  const where = i.file ? `${i.file}${i.line !== undefined ? `:${i.line}${i.column !== undefined ? `:${i.column}` : ''}` : ''}` : i.debugId ? `debugId ${i.debugId}` : '(no file)';
  const lines = [`#${f.index} ${i.function ? `${i.function} (${where})` : where}`];
  const status = `[${MATCH_STATUS_TEXT[f.status]}]`;
  if (f.status === 'unavailable') {
    lines.push(`    ${status} ${f.reason ?? ''}`.trimEnd());
    if (f.retained) lines.push(`    map says: ${f.retained.file}:${f.retained.line}:${f.retained.column}`);
    return lines.join('\n');
  }
  const at = f.status === 'relocated' ? f.current! : f.retained!;
  lines.push(`    ${status} ${at.file}:${at.line}:${at.column}${f.identity ? `  ${f.identity}` : ''}`);
  if (f.status === 'verified') lines.push(`    ${clip(at.text)}`);
  else if (f.status === 'relocated') {
    lines.push(`    now:   ${clip(f.current!.text)}`);
    lines.push(`    built: ${f.retained!.file}:${f.retained!.line}:${f.retained!.column}  ${clip(f.retained!.text)}`);
  } else {
    lines.push(`    built from (retained): ${clip(f.retained!.text)}`);
    if (f.reason) lines.push(`    ${f.reason}`);
  }
  return lines.join('\n');
}

/** A one-line summary of a run: frames by status. */
export function formatSymbolicateSummary(frames: readonly Pick<SymbolicatedFrame, 'status'>[] | Record<string, number>): string {
  const counts: Record<string, number> = Array.isArray(frames) ? {} : { ...(frames as Record<string, number>) };
  if (Array.isArray(frames)) for (const f of frames) counts[f.status] = (counts[f.status] ?? 0) + 1;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const parts = (Object.keys(MATCH_STATUS_TEXT) as (keyof typeof MATCH_STATUS_TEXT)[]).filter((k) => counts[k]).map((k) => `${counts[k]} ${MATCH_STATUS_TEXT[k]}`);
  return `${total} frame${total === 1 ? '' : 's'}: ${parts.join(', ') || 'none'}`;
}
