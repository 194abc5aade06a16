/**
 * Relocation by token alignment (RFC 167 "source changed, relocated"): a frame that points into a
 * declaration whose semantic digest did not change between the text an artifact was built from and the
 * working tree is mapped to the same token of the current text. Tokens come from the TypeScript
 * scanner, not from kiln's extractor — the extractor's digest says the declaration is unchanged, and an
 * independent tokenisation checks it: the two token sequences must be equal kind for kind and text for
 * text, or no position is given (the caller reports "source changed"). Comments and whitespace are
 * trivia, so a comment edit or a reformat inside the declaration still aligns.
 */
import type * as TS from 'typescript';
import { typescript } from '../parse/typescript.js';
import type { Span } from '../facts/slice.js';

/** Offsets of the first character of every line (ECMA-426 / V8 line terminators: CR, LF, CRLF, LS, PS). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  const re = /\r\n?|\n|\u2028|\u2029/g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index + m[0].length);
  return starts;
}

/** The offset of a 1-based line and column, clamped into the text. */
export function offsetAt(starts: readonly number[], textLength: number, line: number, column: number): number {
  const l = Math.min(Math.max(line, 1), starts.length);
  return Math.min(starts[l - 1]! + Math.max(column, 1) - 1, textLength);
}

/** The 1-based line and column of an offset. */
export function positionAt(starts: readonly number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo]! + 1 };
}

/** The text of a 1-based line, without its terminator. */
export function lineText(text: string, starts: readonly number[], line: number): string {
  if (line < 1 || line > starts.length) return '';
  const s = starts[line - 1]!;
  const e = line < starts.length ? starts[line]! : text.length;
  return text.slice(s, e).replace(/(?:\r\n?|\n|\u2028|\u2029)$/, '');
}

export interface Token {
  kind: number;
  start: number;
  end: number;
}

function scanTokens(ts: typeof TS, text: string, start: number, end: number, jsx: boolean): Token[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, jsx ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, text, undefined, start, end - start);
  const out: Token[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    const kind = scanner.scan();
    if (kind === ts.SyntaxKind.EndOfFileToken) break;
    const s = scanner.getTokenStart();
    if (s >= end) break;
    out.push({ kind, start: s, end: scanner.getTokenEnd() });
  }
  return out;
}

/** A declaration's span as offsets of its text. */
export function spanOffsets(starts: readonly number[], textLength: number, span: Span): [number, number] {
  return [offsetAt(starts, textLength, span.startLine, span.startColumn), offsetAt(starts, textLength, span.endLine, span.endColumn)];
}

export type Alignment = { offset: number } | { reason: string };

/** Two token sequences of one declaration, checked equal kind for kind and text for text. */
export type AlignedDeclaration = { retained: Token[]; current: Token[] } | { reason: string };

/**
 * Tokenise a declaration in the retained and the current text (its range in each) and check that the
 * sequences are equal. `jsx` selects the scanner's JSX variant (.tsx/.jsx sources). Done once per
 * declaration; each frame then costs a binary search (`alignOffset`).
 */
export function alignDeclaration(retained: { text: string; range: [number, number] }, current: { text: string; range: [number, number] }, jsx: boolean): AlignedDeclaration {
  const ts = typescript();
  const a = scanTokens(ts, retained.text, retained.range[0], retained.range[1], jsx);
  const b = scanTokens(ts, current.text, current.range[0], current.range[1], jsx);
  if (a.length !== b.length) return { reason: `the declaration has ${a.length} tokens in the built source and ${b.length} now` };
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.kind !== y.kind || retained.text.slice(x.start, x.end) !== current.text.slice(y.start, y.end)) {
      return { reason: `token ${i + 1} of the declaration differs (${JSON.stringify(retained.text.slice(x.start, x.end))} then, ${JSON.stringify(current.text.slice(y.start, y.end))} now)` };
    }
  }
  return { retained: a, current: b };
}

/** The offset in the current text of the token at `offset` in the retained text (or the next token, from trivia). */
export function alignOffset(pair: AlignedDeclaration, offset: number): Alignment {
  if ('reason' in pair) return pair;
  const a = pair.retained;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]!.end <= offset) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= a.length) return { reason: "the position lies after the declaration's last token" };
  const t = a[lo]!;
  return { offset: pair.current[lo]!.start + Math.max(0, offset - t.start) };
}

/** alignDeclaration then alignOffset, for one frame. */
export function alignToken(
  retained: { text: string; range: [number, number] },
  current: { text: string; range: [number, number] },
  offset: number,
  jsx: boolean,
): Alignment {
  return alignOffset(alignDeclaration(retained, current, jsx), offset);
}
