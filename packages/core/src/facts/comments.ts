/**
 * Comments: which ones carry meaning (and so enter the semantic digest), and documentation (which
 * enters the doc digest). Everything else is trivia and must not reach any digest.
 *
 * Meaningful, per SPEC §3: `#__PURE__`/`@__PURE__`/`#__NO_SIDE_EFFECTS__`, bundler magic comments
 * (webpack*, turbopack*, @vite-ignore), `@ts-ignore`/`@ts-expect-error`/`@ts-nocheck`/`@ts-check`,
 * `/// <reference …>` and AMD directives, `@jsx*` pragmas, and legal comments (`/*!`, `@license`,
 * `@preserve`) that emitters keep. JSDoc *types* in JavaScript are handled structurally by the walk.
 */
import { typescript } from '../parse/typescript.js';

/** Cheap gate: a file that matches none of these has no meaningful comments, so no comment scan. */
const CANDIDATE_RE =
  /__PURE__|__NO_SIDE_EFFECTS__|webpack[A-Z]|turbopack[A-Z]|@vite-ignore|@ts-(?:ignore|expect-error|nocheck|check)|\/\/\/\s*<(?:reference|amd)|\/\*!|@license|@preserve|@jsx/;

export interface MeaningfulComment {
  pos: number;
  end: number;
  /** Canonical value: kind plus normalised content; formatting of the comment itself is not meaning. */
  value: string;
  /** File-level pragma (affects the whole module rather than the next token). */
  fileLevel: boolean;
}

export function classifyComment(text: string, isLine: boolean): { value: string; fileLevel: boolean } | undefined {
  const body = isLine ? text.slice(2) : text.slice(2, -2);
  const norm = body.replace(/\s+/g, ' ').trim();
  if (!isLine && /^[#@]__PURE__$/.test(norm)) return { value: 'pure', fileLevel: false };
  if (!isLine && /^[#@]__NO_SIDE_EFFECTS__$/.test(norm)) return { value: 'no-side-effects', fileLevel: false };
  if (isLine && /^\/\s*<(reference|amd-module|amd-dependency)\b/.test(body)) return { value: `triple-slash:${norm.slice(1).trim()}`, fileLevel: true };
  if (/^\*?\s*@ts-(nocheck|check)\b/.test(norm)) return { value: `ts-pragma:${norm.replace(/^\*\s*/, '').split(' ')[0]}`, fileLevel: true };
  if (/^\*?\s*@ts-(ignore|expect-error)\b/.test(norm)) return { value: `ts-directive:${norm.replace(/^\*\s*/, '').split(' ')[0]}`, fileLevel: false };
  const jsx = /@(jsx|jsxFrag|jsxImportSource|jsxRuntime)\s+(\S+)/.exec(norm);
  if (jsx) return { value: `jsx-pragma:${jsx[1]}=${jsx[2]}`, fileLevel: true };
  if (!isLine && (body.startsWith('!') || /@license\b|@preserve\b/.test(norm))) return { value: `legal:${norm}`, fileLevel: false };
  if (!isLine && /webpack[A-Z]\w*\s*:|turbopack[A-Z]\w*\s*:|@vite-ignore/.test(norm)) return { value: `magic:${norm}`, fileLevel: false };
  return undefined;
}

/**
 * All meaningful comments of a file, in position order. Uses the compiler's scanner so that comment
 * markers inside strings, templates and regular expressions are not mistaken for comments.
 */
export function findMeaningfulComments(text: string, isJsx: boolean): MeaningfulComment[] {
  if (!CANDIDATE_RE.test(text)) return [];
  const ts = typescript();
  const out: MeaningfulComment[] = [];
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    /* skipTrivia */ false,
    isJsx ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard,
    text,
  );
  // The scanner alone cannot tell `/` (divide) from a regex start, nor template continuations; for
  // comment discovery a misread only risks treating code as a comment inside a regex/template, which
  // the position re-check against the parsed tree (walk attaches only comments in trivia) neutralises.
  const templateDepth: number[] = [];
  let braceDepth = 0;
  let kind = scanner.scan();
  let prev = ts.SyntaxKind.Unknown;
  while (kind !== ts.SyntaxKind.EndOfFileToken) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const pos = scanner.getTokenStart();
      const end = scanner.getTokenEnd();
      const c = classifyComment(text.slice(pos, end), kind === ts.SyntaxKind.SingleLineCommentTrivia);
      if (c) out.push({ pos, end, value: c.value, fileLevel: c.fileLevel });
    } else if (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) {
      if (regexAllowedAfter(prev)) kind = scanner.reScanSlashToken();
    } else if (kind === ts.SyntaxKind.CloseBraceToken) {
      // Could be the end of a template substitution; try to continue the template.
      // Only rescan when a template is open (tracked below).
      if (templateDepth.length && templateDepth[templateDepth.length - 1] === braceDepth) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) templateDepth.pop();
      } else braceDepth--;
    } else if (kind === ts.SyntaxKind.OpenBraceToken) {
      braceDepth++;
    } else if (kind === ts.SyntaxKind.TemplateHead) {
      templateDepth.push(braceDepth);
    }
    if (kind !== ts.SyntaxKind.WhitespaceTrivia && kind !== ts.SyntaxKind.NewLineTrivia &&
        kind !== ts.SyntaxKind.SingleLineCommentTrivia && kind !== ts.SyntaxKind.MultiLineCommentTrivia) prev = kind;
    kind = scanner.scan();
  }
  return out;

  function regexAllowedAfter(k: number): boolean {
    // After an expression-ending token a slash divides; anywhere else it starts a regex.
    return !(
      k === ts.SyntaxKind.Identifier ||
      k === ts.SyntaxKind.PrivateIdentifier ||
      k === ts.SyntaxKind.NumericLiteral ||
      k === ts.SyntaxKind.BigIntLiteral ||
      k === ts.SyntaxKind.StringLiteral ||
      k === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
      k === ts.SyntaxKind.TemplateTail ||
      k === ts.SyntaxKind.RegularExpressionLiteral ||
      k === ts.SyntaxKind.CloseParenToken ||
      k === ts.SyntaxKind.CloseBracketToken ||
      k === ts.SyntaxKind.CloseBraceToken ||
      k === ts.SyntaxKind.ThisKeyword ||
      k === ts.SyntaxKind.SuperKeyword ||
      k === ts.SyntaxKind.TrueKeyword ||
      k === ts.SyntaxKind.FalseKeyword ||
      k === ts.SyntaxKind.NullKeyword ||
      k === ts.SyntaxKind.PlusPlusToken ||
      k === ts.SyntaxKind.MinusMinusToken
    );
  }
}

/**
 * Normalised documentation text of the JSDoc blocks that lead a node (`/** … *\/`, not `/**\/`).
 * Reformatting (re-indentation, `*` gutters) does not change the result; the words do.
 */
export function leadingDocs(text: string, pos: number): string[] {
  const ts = typescript();
  const ranges = ts.getLeadingCommentRanges(text, pos);
  if (!ranges) return [];
  const docs: string[] = [];
  for (const r of ranges) {
    if (r.kind !== ts.SyntaxKind.MultiLineCommentTrivia) continue;
    const raw = text.slice(r.pos, r.end);
    if (!raw.startsWith('/**') || raw === '/**/' ) continue;
    const lines = raw
      .slice(3, -2)
      .split(/\r?\n/)
      .map((l) => l.replace(/^\s*\*?/, '').trim());
    while (lines.length && lines[0] === '') lines.shift();
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    docs.push(lines.join('\n'));
  }
  return docs;
}
