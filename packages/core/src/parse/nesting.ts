/**
 * Nesting pre-scan. The TypeScript parser is recursive descent: deep enough nesting exhausts the
 * thread's stack, and where that happens depends on the stack size (the main thread has ~1 MB,
 * piscina workers more). A slice must depend on the content only, so before parsing, one iterative
 * pass over the tokens estimates the parser's nesting — brackets, template substitutions, type
 * argument lists, and chains of arrows, conditionals and assignments — and blanks every region nested deeper than PARSE_NESTING_LIMIT
 * (spaces, keeping line breaks so positions and line numbers stay put). The parser therefore never
 * sees text deeper than the limit on any thread; the extractor marks whatever overlaps a blanked
 * region as too deep (its digest is null: counted as changed), and everything else in the file is
 * digested normally. Pure: depends on the text only.
 */
import type * as TS from 'typescript';
import { typescript } from './typescript.js';

/**
 * Deepest estimated nesting handed to the parser. On a cold main thread (default ~1 MB stack, parser
 * not yet optimised) the costliest construct measured, `function () { return function () { … } }`,
 * overflows at ~425 levels; mixtures and deeper call sites need margin. Real code stays far below 100.
 */
export const PARSE_NESTING_LIMIT = 128;

export interface DeepRegion {
  /** [start, end) offsets into the text: what is blanked. */
  start: number;
  end: number;
  /** An offset inside the syntax the region belongs to (a chain region starts after its operand). */
  anchor: number;
}

/**
 * Nesting is counted in eighths of a level, weighted by the stack the parser spends on each (measured):
 * a bracket or an arrow costs 8, a conditional `?` 4, a prefix unary operator 2, an assignment `=` 1.
 */
const UNIT = 8;

type FrameKind = 'root' | '(' | '[' | '{' | '${' | '<';

interface Frame {
  kind: FrameKind;
  /** Cost of the chain (arrows, conditionals, assignments) in this frame since its last statement or list boundary. */
  chain: number;
}

interface Open {
  start: number;
  anchor: number;
  /** Index of the frame the region lives in. */
  frame: number;
  /** The region opened with a bracket (ends after its match) or with an arrow (ends at a reset). */
  byChain: boolean;
}

export function findDeepRegions(text: string, limit = PARSE_NESTING_LIMIT): DeepRegion[] {
  // Fast exit: a character-level over-estimate far below the limit needs no token scan.
  if (nestingUpperBound(text) <= (limit * UNIT) / 2) return [];

  const ts = typescript();
  const K = ts.SyntaxKind;
  const T = tables();
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, /* skipTrivia */ true, ts.LanguageVariant.Standard, text);
  const frames: Frame[] = [{ kind: 'root', chain: 0 }];
  let depth = 0;
  const regions: DeepRegion[] = [];
  let open: Open | undefined;
  let prev: number = K.Unknown;
  let prevPrev: number = K.Unknown;
  let prevEnd = 0;
  const max = limit * UNIT;

  const closeRegion = (end: number) => {
    if (open) regions.push({ start: open.start, end, anchor: open.anchor });
    open = undefined;
  };
  const push = (kind: FrameKind, tokenStart: number) => {
    frames.push({ kind, chain: 0 });
    depth += UNIT;
    // Anchored in the token before it: a region belongs to the syntax it is an operand of.
    if (!open && depth > max) open = { start: tokenStart, anchor: Math.max(0, prevEnd - 1), frame: frames.length - 1, byChain: false };
  };
  const chain = (cost: number) => {
    frames[frames.length - 1]!.chain += cost;
    depth += cost;
    // The region starts right after the operand the operator applies to.
    if (!open && depth > max) open = { start: prevEnd, anchor: Math.max(0, prevEnd - 1), frame: frames.length - 1, byChain: true };
  };
  /** Pop the top frame; `end` is where a region living in it ends. */
  const pop = (end: number) => {
    const f = frames.pop()!;
    depth -= UNIT + f.chain;
    if (open && open.frame >= frames.length) closeRegion(end);
  };
  const popAngles = (at: number) => {
    while (frames.length > 1 && frames[frames.length - 1]!.kind === '<') pop(at);
  };
  const resetChain = (at: number) => {
    const top = frames[frames.length - 1]!;
    if (top.chain === 0 && !open) return;
    depth -= top.chain;
    top.chain = 0;
    if (open && open.byChain && open.frame === frames.length - 1) closeRegion(at);
  };
  const close = (kind: FrameKind, tokenStart: number, tokenEnd: number) => {
    // Pop up to the matching opener; an unmatched closer (broken code) is ignored.
    let i = frames.length - 1;
    while (i > 0 && frames[i]!.kind !== kind) i--;
    if (i === 0) return;
    while (frames.length - 1 > i) pop(tokenStart);
    const byChain = open?.byChain && open.frame === i;
    pop(byChain ? tokenStart : tokenEnd);
  };

  for (let kind: number = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    const start = scanner.getTokenStart();
    const action = T.action[kind]!;
    // A line break between the end of one operand and the start of another ends a statement (ASI).
    if (T.endsOperand[prev] && T.startsOperand[kind] && scanner.hasPrecedingLineBreak()) resetChain(start);
    switch (action) {
      case A.None:
        break;
      case A.OpenParen:
        push('(', start);
        break;
      case A.OpenBracket:
        push('[', start);
        break;
      case A.OpenBrace:
        push('{', start);
        break;
      case A.TemplateHead:
        push('${', start);
        break;
      case A.LessThan:
        // `</` is a JSX closing tag, not an opener.
        if (text.charCodeAt(scanner.getTokenEnd()) !== 47) push('<', start);
        break;
      case A.CloseParen:
        close('(', start, scanner.getTokenEnd());
        break;
      case A.CloseBracket:
        close('[', start, scanner.getTokenEnd());
        break;
      case A.CloseBrace:
        popAngles(start);
        if (frames[frames.length - 1]!.kind === '${') {
          kind = scanner.reScanTemplateToken(/* isTaggedTemplate */ false);
          if (kind === K.TemplateTail) close('${', start, scanner.getTokenEnd());
        } else close('{', start, scanner.getTokenEnd());
        break;
      case A.GreaterThan:
        if (frames[frames.length - 1]!.kind === '<') pop(scanner.getTokenEnd());
        break;
      case A.Arrow:
        chain(UNIT);
        break;
      case A.Question:
        chain(4);
        break;
      case A.Unary:
        chain(2);
        break;
      case A.Assign:
        chain(1);
        break;
      case A.Semicolon:
        popAngles(start);
        resetChain(start);
        break;
      case A.Comma:
      case A.StatementKeyword:
        resetChain(start);
        break;
      case A.Slash:
        if (startsRegex(prev, prevPrev, T, K)) kind = scanner.reScanSlashToken();
        break;
    }
    prevPrev = prev;
    prev = kind;
    prevEnd = scanner.getTokenEnd();
  }
  if (open) closeRegion(text.length);
  return regions;
}

const enum A {
  None,
  OpenParen,
  OpenBracket,
  OpenBrace,
  TemplateHead,
  LessThan,
  CloseParen,
  CloseBracket,
  CloseBrace,
  GreaterThan,
  Arrow,
  Question,
  Unary,
  Assign,
  Semicolon,
  Comma,
  StatementKeyword,
  Slash,
}

interface Tables {
  action: Uint8Array;
  endsOperand: Uint8Array;
  startsOperand: Uint8Array;
  keyword: Uint8Array;
  /** Keywords after which a `/` starts a regular expression. */
  regexAfter: Uint8Array;
}

let cached: Tables | undefined;

/** Per-token-kind lookups, built once (SyntaxKind numbering is the loaded compiler's). */
function tables(): Tables {
  if (cached) return cached;
  const K = typescript().SyntaxKind;
  const size = K.Count + 1;
  const t: Tables = {
    action: new Uint8Array(size),
    endsOperand: new Uint8Array(size),
    startsOperand: new Uint8Array(size),
    keyword: new Uint8Array(size),
    regexAfter: new Uint8Array(size),
  };
  const set = (arr: Uint8Array, kinds: number[], v = 1) => kinds.forEach((k) => (arr[k] = v));
  set(t.action, [K.OpenParenToken], A.OpenParen);
  set(t.action, [K.OpenBracketToken], A.OpenBracket);
  set(t.action, [K.OpenBraceToken], A.OpenBrace);
  set(t.action, [K.TemplateHead], A.TemplateHead);
  set(t.action, [K.LessThanToken], A.LessThan);
  set(t.action, [K.CloseParenToken], A.CloseParen);
  set(t.action, [K.CloseBracketToken], A.CloseBracket);
  set(t.action, [K.CloseBraceToken], A.CloseBrace);
  set(t.action, [K.GreaterThanToken], A.GreaterThan);
  set(t.action, [K.EqualsGreaterThanToken], A.Arrow);
  set(t.action, [K.QuestionToken], A.Question);
  set(t.action, [K.ExclamationToken, K.TildeToken, K.TypeOfKeyword, K.VoidKeyword, K.DeleteKeyword, K.AwaitKeyword, K.KeyOfKeyword], A.Unary);
  set(t.action, [K.EqualsToken], A.Assign);
  set(t.action, [K.SemicolonToken], A.Semicolon);
  set(t.action, [K.CommaToken], A.Comma);
  set(
    t.action,
    [
      K.ConstKeyword, K.LetKeyword, K.VarKeyword, K.FunctionKeyword, K.ClassKeyword, K.IfKeyword, K.ForKeyword,
      K.WhileKeyword, K.DoKeyword, K.SwitchKeyword, K.ReturnKeyword, K.ThrowKeyword, K.TryKeyword,
      K.ImportKeyword, K.ExportKeyword, K.InterfaceKeyword, K.EnumKeyword,
    ],
    A.StatementKeyword,
  );
  set(t.action, [K.SlashToken, K.SlashEqualsToken], A.Slash);
  for (let k = K.FirstLiteralToken; k <= K.LastLiteralToken; k++) t.endsOperand[k] = 1;
  set(t.endsOperand, [
    K.Identifier, K.PrivateIdentifier, K.TemplateTail, K.CloseParenToken, K.CloseBracketToken, K.CloseBraceToken,
    K.ThisKeyword, K.TrueKeyword, K.FalseKeyword, K.NullKeyword,
  ]);
  for (let k = K.FirstKeyword; k <= K.LastKeyword; k++) t.keyword[k] = t.startsOperand[k] = 1;
  set(t.startsOperand, [K.Identifier, K.PrivateIdentifier]);
  set(t.regexAfter, [
    K.ReturnKeyword, K.TypeOfKeyword, K.InstanceOfKeyword, K.InKeyword, K.OfKeyword, K.NewKeyword, K.DeleteKeyword,
    K.VoidKeyword, K.ThrowKeyword, K.CaseKeyword, K.DoKeyword, K.ElseKeyword, K.YieldKeyword, K.AwaitKeyword,
  ]);
  return (cached = t);
}

/** Whether a `/` after these tokens starts a regular expression (the classic lexer heuristic). */
function startsRegex(prev: number, prevPrev: number, T: Tables, K: typeof TS.SyntaxKind): boolean {
  if (T.regexAfter[prev]) return prevPrev !== K.DotToken && prevPrev !== K.QuestionDotToken;
  // An operand ends before a division; other keywords (`this`, a keyword used as a name) too.
  if (T.endsOperand[prev] || T.keyword[prev]) return false;
  return prev !== K.PlusPlusToken && prev !== K.MinusMinusToken && prev !== K.GreaterThanToken;
}

/**
 * A cheap over-estimate of the nesting findDeepRegions measures, in eighths, from one pass over the
 * characters: skips comments, strings, template text and regular expressions (by the previous
 * character), counts every bracket, and accumulates chain operators per bracket level without the
 * statement boundaries the token scan knows about. Exported for tests.
 */
export function nestingUpperBound(text: string): number {
  const n = text.length;
  // Per open bracket: its chain cost, and its kind (0 bracket, 1 `${` whose close resumes template
  // text, 2 `<`).
  const chains: number[] = [0];
  const kinds: number[] = [0];
  let depth = 0;
  let max = 0;
  let last = 0; // last significant character
  let inTemplate = false;
  let i = 0;
  // (All state is local: closures over it would make every access a context slot.)
  while (i < n) {
    if (inTemplate) {
      // Template text: stop after the closing backtick or inside `${`.
      inTemplate = false;
      while (i < n) {
        const t = text.charCodeAt(i++);
        if (t === 92) i++;
        else if (t === 96) break;
        else if (t === 36 && text.charCodeAt(i) === 123) {
          i++;
          chains.push(0);
          kinds.push(1);
          depth += UNIT;
          if (depth > max) max = depth;
          break;
        }
      }
      last = 96;
      continue;
    }
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) {
      i++;
      continue;
    }
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127) {
      const start = i++;
      while (i < n && isWordChar(text.charCodeAt(i))) i++;
      const len = i - start;
      if (len >= 4 && len <= 6 && (c === 116 || c === 118 || c === 100 || c === 97 || c === 107)) {
        // The word is exactly one of these (same test as comparing the sliced word, without the slice).
        if (
          len === 6
            ? text.startsWith('typeof', start) || text.startsWith('delete', start)
            : len === 4
              ? text.startsWith('void', start)
              : len === 5 && (text.startsWith('await', start) || text.startsWith('keyof', start))
        ) {
          chains[chains.length - 1]! += 2;
          depth += 2;
          if (depth > max) max = depth;
        }
      }
      last = 97;
      continue;
    }
    i++;
    let cost = 0;
    switch (c) {
      case 47: {
        // /
        const d = text.charCodeAt(i);
        if (d === 47) {
          while (i < n && text.charCodeAt(i) !== 10) i++;
          continue;
        }
        if (d === 42) {
          const end = text.indexOf('*/', i + 1);
          i = end < 0 ? n : end + 2;
          continue;
        }
        // A regular expression unless the previous character ends an operand.
        if (!(last === 97 || last === 41 || last === 93 || last === 125 || last === 34 || last === 39 || last === 96)) {
          let inClass = false;
          while (i < n) {
            const r = text.charCodeAt(i++);
            if (r === 92) i++;
            else if (r === 10) break;
            else if (r === 91) inClass = true;
            else if (r === 93) inClass = false;
            else if (r === 47 && !inClass) break;
          }
          last = 34;
          continue;
        }
        break;
      }
      case 34: // "
      case 39: // '
        while (i < n) {
          const r = text.charCodeAt(i++);
          if (r === 92) i++;
          else if (r === c || r === 10) break;
        }
        break;
      case 96: // `
        inTemplate = true;
        continue;
      case 40: // (
      case 91: // [
      case 123: // {
      case 60: // <
        chains.push(0);
        kinds.push(c === 60 ? 2 : 0);
        depth += UNIT;
        if (depth > max) max = depth;
        break;
      case 41: // )
      case 93: // ]
      case 125: // }
        while (chains.length > 1 && kinds[kinds.length - 1] === 2) {
          depth -= UNIT + chains.pop()!;
          kinds.pop();
        }
        if (chains.length > 1) {
          depth -= UNIT + chains.pop()!;
          if (kinds.pop() === 1 && c === 125) {
            inTemplate = true;
            continue;
          }
        }
        break;
      case 62: // >
        if (kinds[kinds.length - 1] === 2) {
          depth -= UNIT + chains.pop()!;
          kinds.pop();
        }
        break;
      case 61: // =  (=> is an arrow)
        if (text.charCodeAt(i) === 62) {
          i++;
          cost = UNIT;
        } else cost = 1;
        break;
      case 63: // ?
        cost = 4;
        break;
      case 33: // !
      case 126: // ~
        cost = 2;
        break;
      case 59: // ;
      case 44: {
        // ,
        while (c === 59 && chains.length > 1 && kinds[kinds.length - 1] === 2) {
          depth -= UNIT + chains.pop()!;
          kinds.pop();
        }
        const top = chains.length - 1;
        depth -= chains[top]!;
        chains[top] = 0;
        break;
      }
    }
    if (cost) {
      chains[chains.length - 1]! += cost;
      depth += cost;
      if (depth > max) max = depth;
    }
    last = c;
  }
  return max;
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
}

/** Replace each region with spaces, keeping line terminators so offsets and line numbers hold. */
export function blankRegions(text: string, regions: DeepRegion[]): string {
  let out = '';
  let at = 0;
  for (const r of regions) {
    out += text.slice(at, r.start) + text.slice(r.start, r.end).replace(/[^\r\n\u2028\u2029]/g, ' ');
    at = r.end;
  }
  return out + text.slice(at);
}

/**
 * Whether a syntax error is an artefact of blanking: it starts inside a region or at the first
 * token after it (an emptied `( )` or a dangling `=>`).
 */
export function inDeepRegion(regions: DeepRegion[], text: string, pos: number): boolean {
  for (const r of regions) {
    if (pos < r.start) continue;
    let end = r.end;
    while (end < text.length && /\s/.test(text[end]!)) end++;
    if (pos <= end) return true;
  }
  return false;
}
