/**
 * An independent way to list a file's comments, to check kiln's `listComments` against: materialise
 * every token with `getChildren` (the language service's own tokenisation of the tree) and read the
 * trivia in front of each one. Slower than kiln's gap scan, and built differently on purpose.
 */
import ts from 'typescript';
import type { Variant } from './mutate.js';

const KIND: Record<Variant, ts.ScriptKind> = {
  ts: ts.ScriptKind.TS,
  tsx: ts.ScriptKind.TSX,
  dts: ts.ScriptKind.TS,
  js: ts.ScriptKind.JS,
  jsx: ts.ScriptKind.JSX,
};
const NAME: Record<Variant, string> = { ts: 'm.ts', tsx: 'm.tsx', dts: 'm.d.ts', js: 'm.js', jsx: 'm.jsx' };

export function oracleComments(text: string, variant: Variant): { pos: number; end: number }[] {
  const sf = ts.createSourceFile(NAME[variant], text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, true, KIND[variant]);
  const SK = ts.SyntaxKind;
  const seen = new Set<number>();
  const out: { pos: number; end: number }[] = [];
  const take = (pos: number, end: number) => {
    if (seen.has(pos)) return;
    seen.add(pos);
    out.push({ pos, end });
  };
  const visit = (node: ts.Node): void => {
    const k = node.kind;
    if (k === SK.JsxText || k === SK.JsxTextAllWhiteSpaces) return;
    // JSX children begin with text, not trivia: the list's own position is not a trivia start.
    const jsxChildren = k === SK.SyntaxList && !!node.parent && (ts.isJsxElement(node.parent) || ts.isJsxFragment(node.parent));
    if (!jsxChildren) {
      ts.forEachTrailingCommentRange(text, node.pos, take);
      ts.forEachLeadingCommentRange(text, node.pos, take);
    }
    for (const c of node.getChildren(sf)) visit(c);
  };
  visit(sf);
  return out.sort((a, b) => a.pos - b.pos);
}
