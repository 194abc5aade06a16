/**
 * Comment removal for emit: which comments of a source file the emitted JavaScript keeps.
 *
 * TypeScript's `removeComments: true` drops every comment except a leading `/*!` — including
 * `/*#__PURE__*\/`, `/*@__NO_SIDE_EFFECTS__*\/` and bundler magic comments, which change what a
 * bundler does with the output. So kiln compiles with `removeComments: false` and instead hands the
 * emitter a source text whose *non-meaningful* comments are blanked: every character of such a
 * comment becomes a space, except line terminators, which stay. The text keeps its length and its
 * line structure, so every token, every diagnostic position and every source-map position is exactly
 * what it is in the authored file, and a comment that contained a newline still ends a line for
 * automatic semicolon insertion (`return /*\n*\/ x`).
 *
 * "Meaningful" is decided by `classifyComment` (facts/comments.ts), the same list the semantic digest
 * uses, so what the digest counts and what the output keeps cannot drift apart. JSDoc blocks can be
 * kept on request (the declaration emitter reads them from the source text).
 *
 * Comments are found through the parsed tree, not by re-scanning the whole text: the compiler's tree
 * knows which slash starts a regular expression, where a template continues and where JSX text runs —
 * the places a plain scanner can mistake code for a comment. Blanking code would change the program,
 * so this module never guesses (see `collectComments`).
 */
import type * as TS from 'typescript';
import { classifyComment } from '../facts/comments.js';
import { typescript } from '../parse/typescript.js';
import type { Variant } from '../parse/language.js';

export interface CommentRange {
  pos: number;
  end: number;
  isLine: boolean;
}

/**
 * Every comment of a parsed file (not inside JSDoc, JSX text or literals), in position order.
 *
 * Walks the tree with `forEachChild`. A token node (identifier, literal, template piece, regular
 * expression, JSX text…) contributes the comments in its leading trivia; any other node, the comments
 * in the *gaps* between its children, which hold only trivia and punctuation/keyword tokens — so the
 * scanner never reads a regular expression, a template, a string or JSX text there, the places where
 * a plain scan of the file can mistake code for a comment. Every character of the file lies in
 * exactly one gap or one token. (Checked against an independent oracle that materialises every token
 * with `getChildren`, over the real-code corpus, in packages/core/test/build.test.ts.)
 */
export function collectComments(ts: typeof TS, sf: TS.SourceFile): CommentRange[] {
  const text = sf.text;
  const SK = ts.SyntaxKind;
  const out: CommentRange[] = [];
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, /* skipTrivia */ false, sf.languageVariant, text);
  // `resetTokenState` since TypeScript 5.0; `setTextPos` before (the workspace's compiler may be older).
  const legacy = scanner as unknown as { setTextPos?: (pos: number) => void };
  const resetTo = typeof scanner.resetTokenState === 'function' ? (p: number) => scanner.resetTokenState(p) : (p: number) => legacy.setTextPos!(p);
  const scanGap = (start: number, end: number) => {
    if (end <= start) return;
    // Fast path: a gap without a slash has no comment.
    let i = start;
    while (i < end && text.charCodeAt(i) !== 47 /* / */) i++;
    if (i === end) return;
    resetTo(start);
    for (;;) {
      const k = scanner.scan();
      if (k === SK.EndOfFileToken || scanner.getTokenStart() >= end) break;
      if (k === SK.SingleLineCommentTrivia || k === SK.MultiLineCommentTrivia) {
        out.push({ pos: scanner.getTokenStart(), end: scanner.getTokenEnd(), isLine: k === SK.SingleLineCommentTrivia });
      }
    }
  };
  // Trivia before a leaf token: the compiler splits it into "trailing" comments (on the previous
  // token's line) and "leading" ones (from the next line on); together they are all of it.
  const take = (p: number, e: number, kind: TS.CommentKind) => {
    out.push({ pos: p, end: e, isLine: kind === SK.SingleLineCommentTrivia });
  };
  const visit = (node: TS.Node): void => {
    const k = node.kind;
    if (k === SK.JsxText || k === SK.JsxTextAllWhiteSpaces) return; // text, not trivia
    if (k <= SK.LastToken) {
      // A token (identifier, literal, keyword, punctuation): trivia, then its text.
      ts.forEachTrailingCommentRange(text, node.pos, take);
      ts.forEachLeadingCommentRange(text, node.pos, take);
      return;
    }
    // Any other node: the gaps around its children (all of it when it has none: `{ /* c */ }`).
    let pos = node.pos;
    const child = (c: TS.Node) => {
      scanGap(pos, c.pos);
      visit(c);
      pos = c.end;
    };
    ts.forEachChild(node, child, (list) => {
      for (const c of list) child(c);
    });
    scanGap(pos, node.end);
  };
  visit(sf);
  out.sort((a, b) => a.pos - b.pos);
  // A leaf's trailing and leading ranges never overlap, but guard against a range reported twice.
  return out.filter((c, i) => i === 0 || c.pos !== out[i - 1]!.pos);
}

export interface BlankOptions {
  /** Keep JSDoc blocks (`/** … *\/`): the declaration emitter copies them into `.d.ts`. */
  keepDocs?: boolean;
}

/** Whether a comment survives into emitted output. */
export function isKeptComment(commentText: string, isLine: boolean, options: BlankOptions = {}): boolean {
  if (classifyComment(commentText, isLine)) return true;
  return !!options.keepDocs && !isLine && commentText.startsWith('/**') && commentText !== '/**/';
}

/**
 * The text with every non-meaningful comment of `comments` blanked (same length, line terminators
 * kept). Returns the input string itself when nothing is blanked.
 */
export function blankCommentRanges(text: string, comments: readonly CommentRange[], options: BlankOptions = {}): string {
  let out = '';
  let last = 0;
  for (const c of comments) {
    const body = text.slice(c.pos, c.end);
    if (isKeptComment(body, c.isLine, options)) continue;
    out += text.slice(last, c.pos) + body.replace(/[^\r\n\u2028\u2029]/g, ' ');
    last = c.end;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Blank the non-meaningful comments of a file parsed by the given compiler instance. */
export function blankSourceFileComments(ts: typeof TS, sf: TS.SourceFile, options: BlankOptions = {}): string {
  return blankCommentRanges(sf.text, collectComments(ts, sf), options);
}

const FILE_NAMES: Record<Variant, string> = { ts: 'm.ts', tsx: 'm.tsx', dts: 'm.d.ts', js: 'm.js', jsx: 'm.jsx' };

function parseStandalone(text: string, variant: Variant): { ts: typeof TS; sf: TS.SourceFile } {
  const ts = typescript();
  const kind = { ts: ts.ScriptKind.TS, tsx: ts.ScriptKind.TSX, dts: ts.ScriptKind.TS, js: ts.ScriptKind.JS, jsx: ts.ScriptKind.JSX }[variant];
  const sf = ts.createSourceFile(FILE_NAMES[variant], text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false, kind);
  return { ts, sf };
}

/** Every comment of a file (kiln's own compiler instance), with whether emit keeps it. */
export function listComments(text: string, variant: Variant, options: BlankOptions = {}): (CommentRange & { kept: boolean })[] {
  const { ts, sf } = parseStandalone(text, variant);
  return collectComments(ts, sf).map((c) => ({ ...c, kept: isKeptComment(text.slice(c.pos, c.end), c.isLine, options) }));
}

/**
 * Standalone form (kiln's own compiler instance): the text of one file with its non-meaningful
 * comments blanked, positions and lines unchanged. A file with syntax errors is blanked as far as the
 * parser understood it.
 */
export function blankNonMeaningfulComments(text: string, variant: Variant, options: BlankOptions = {}): string {
  const { ts, sf } = parseStandalone(text, variant);
  return blankSourceFileComments(ts, sf, options);
}
