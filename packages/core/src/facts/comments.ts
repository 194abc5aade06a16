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
  // Every meaningful comment contains a CANDIDATE_RE match (classifyComment recognises nothing else),
  // so the scan can stop once tokens start after the last match: no later comment can be meaningful.
  // The scan up to there is the same as before, so the comments found are exactly the same.
  const lastCandidate = lastMatchStart(text);
  if (lastCandidate < 0) return [];
  const ts = typescript();
  const SK = ts.SyntaxKind; // one property read, not one getter call per use
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
  let prev = SK.Unknown;
  while (kind !== SK.EndOfFileToken) {
    if (scanner.getTokenStart() > lastCandidate) break;
    if (kind === SK.SingleLineCommentTrivia || kind === SK.MultiLineCommentTrivia) {
      const pos = scanner.getTokenStart();
      const end = scanner.getTokenEnd();
      const c = classifyComment(text.slice(pos, end), kind === SK.SingleLineCommentTrivia);
      if (c) out.push({ pos, end, value: c.value, fileLevel: c.fileLevel });
    } else if (kind === SK.SlashToken || kind === SK.SlashEqualsToken) {
      if (regexAllowedAfter(prev)) kind = scanner.reScanSlashToken();
    } else if (kind === SK.CloseBraceToken) {
      // Could be the end of a template substitution; try to continue the template.
      // Only rescan when a template is open (tracked below).
      if (templateDepth.length && templateDepth[templateDepth.length - 1] === braceDepth) {
        kind = scanner.reScanTemplateToken(false);
        if (kind === SK.TemplateTail) templateDepth.pop();
      } else braceDepth--;
    } else if (kind === SK.OpenBraceToken) {
      braceDepth++;
    } else if (kind === SK.TemplateHead) {
      templateDepth.push(braceDepth);
    }
    if (kind !== SK.WhitespaceTrivia && kind !== SK.NewLineTrivia &&
        kind !== SK.SingleLineCommentTrivia && kind !== SK.MultiLineCommentTrivia) prev = kind;
    kind = scanner.scan();
  }
  return out;

  function regexAllowedAfter(k: number): boolean {
    // After an expression-ending token a slash divides; anywhere else it starts a regex.
    return !(
      k === SK.Identifier ||
      k === SK.PrivateIdentifier ||
      k === SK.NumericLiteral ||
      k === SK.BigIntLiteral ||
      k === SK.StringLiteral ||
      k === SK.NoSubstitutionTemplateLiteral ||
      k === SK.TemplateTail ||
      k === SK.RegularExpressionLiteral ||
      k === SK.CloseParenToken ||
      k === SK.CloseBracketToken ||
      k === SK.CloseBraceToken ||
      k === SK.ThisKeyword ||
      k === SK.SuperKeyword ||
      k === SK.TrueKeyword ||
      k === SK.FalseKeyword ||
      k === SK.NullKeyword ||
      k === SK.PlusPlusToken ||
      k === SK.MinusMinusToken
    );
  }
}

const CANDIDATE_RE_ALL = new RegExp(CANDIDATE_RE.source, 'g');

/** Start offset of the last CANDIDATE_RE match (overlapping matches included), or -1. */
function lastMatchStart(text: string): number {
  if (!CANDIDATE_RE.test(text)) return -1; // most files: one pass, stops at the first match
  const re = CANDIDATE_RE_ALL;
  re.lastIndex = 0;
  let last = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    last = m.index;
    re.lastIndex = m.index + 1;
  }
  return last;
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

/**
 * Normalised JSDoc blocks inside a node: documentation of members, parameters, enum members and
 * type-literal members, which a `.d.ts` carries. Found in the trivia before each descendant (where
 * comments live), never by searching text, so `/**` inside a string or a regex is not a comment.
 * Cheap when there is nothing to find: a node whose text has no `/**` is not walked.
 */
export function innerDocs(ts: typeof import('typescript'), sf: import('typescript').SourceFile, node: import('typescript').Node): string[] {
  const text = sf.text;
  const start = node.getStart(sf);
  const first = text.indexOf('/**', start);
  if (first === -1 || first >= node.end) return [];
  const seen = new Set<number>();
  const found: { pos: number; doc: string }[] = [];
  const visit = (n: import('typescript').Node): void => {
    if (n.end <= first) return;
    for (const r of ts.getLeadingCommentRanges(text, n.pos) ?? []) {
      if (r.kind !== ts.SyntaxKind.MultiLineCommentTrivia || r.pos < start || seen.has(r.pos)) continue;
      const raw = text.slice(r.pos, r.end);
      if (!raw.startsWith('/**') || raw === '/**/') continue;
      seen.add(r.pos);
      found.push({ pos: r.pos, doc: normaliseDoc(raw) });
    }
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(node, visit);
  return found.sort((a, b) => a.pos - b.pos).map((f) => f.doc);
}

function normaliseDoc(raw: string): string {
  const lines = raw
    .slice(3, -2)
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*\*?/, '').trim());
  while (lines.length && lines[0] === '') lines.shift();
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}
