/**
 * Mutation tools for the real-code mutation tests (mutation.test.ts). Each tool rewrites a file's
 * text; the test then compares the slices of the original and the mutated text.
 *
 * Meaning-preserving mutations (the digests of every declaration must stay put):
 *   - `prettierFormat`: reformat with prettier under given options;
 *   - `stripComments`: remove every comment that carries no meaning (see `classifyComment`), keeping,
 *     in JavaScript, the JSDoc blocks that carry types;
 *   - `insertComments`: put `/* kiln *\/` between tokens.
 * Real edits (the edited declaration must move, nothing else but its ancestors):
 *   - `realEdits`: change a literal, swap an operator, rename a reference, drop a statement.
 *
 * The tools work on the TypeScript compiler's tree (never on regexes over the text), so comment
 * markers in strings, templates, regexes and JSX text are never mistaken for comments.
 */
import ts from 'typescript';
import * as prettier from 'prettier';
import { classifyComment } from '../../dist/facts/comments.js';
import type { Slice } from '../../dist/facts/slice.js';

export type Variant = 'ts' | 'tsx' | 'dts' | 'js' | 'jsx';

const SCRIPT_KIND: Record<Variant, ts.ScriptKind> = {
  ts: ts.ScriptKind.TS,
  tsx: ts.ScriptKind.TSX,
  dts: ts.ScriptKind.TS,
  js: ts.ScriptKind.JS,
  jsx: ts.ScriptKind.JSX,
};
const FILE_NAME: Record<Variant, string> = { ts: 'm.ts', tsx: 'm.tsx', dts: 'm.d.ts', js: 'm.js', jsx: 'm.jsx' };

export function isJs(variant: Variant): boolean {
  return variant === 'js' || variant === 'jsx';
}

/** Parse with parent pointers and no JSDoc nodes (JSDoc is found as comment text). */
export function parse(text: string, variant: Variant): ts.SourceFile {
  return ts.createSourceFile(
    FILE_NAME[variant],
    text,
    { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone },
    true,
    SCRIPT_KIND[variant],
  );
}

/** Number of syntax errors the parser reports (the engine parses the same way). */
export function syntaxErrorCount(text: string, variant: Variant): number {
  const sf = parse(text, variant) as ts.SourceFile & { parseDiagnostics?: unknown[] };
  return sf.parseDiagnostics?.length ?? 0;
}

// ------------------------------------------------------------------------------------ (a) prettier

export const PRETTIER_OPTION_SETS: { name: string; options: prettier.Options }[] = [
  {
    name: 'prettier-A',
    options: { semi: false, singleQuote: true, printWidth: 60, trailingComma: 'all', arrowParens: 'avoid', quoteProps: 'as-needed' },
  },
  { name: 'prettier-B', options: { tabWidth: 4, printWidth: 140, bracketSpacing: false, useTabs: true } },
];

/**
 * Reformat with prettier. `embeddedLanguageFormatting: 'off'`: with it on, prettier rewrites the
 * *contents* of tagged templates (css`…`, graphql`…`, html`…`) — that changes a string's value, which
 * is a real edit, not a reformat. Returns undefined when prettier rejects the file.
 */
export async function prettierFormat(text: string, variant: Variant, options: prettier.Options): Promise<string | undefined> {
  try {
    return await prettier.format(text, {
      ...options,
      parser: isJs(variant) ? 'babel' : 'typescript',
      filepath: FILE_NAME[variant],
      embeddedLanguageFormatting: 'off',
    });
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------------------------ comments

export interface CommentRange {
  pos: number;
  end: number;
  isLine: boolean;
}

function isJsDocKind(k: ts.SyntaxKind): boolean {
  return k >= ts.SyntaxKind.FirstJSDocNode && k <= ts.SyntaxKind.LastJSDocNode;
}

/**
 * Every comment of the file: the trivia leading each token of the tree (tokens as the compiler's
 * `getChildren` sees them, punctuation included, end-of-file too). JSX text is content, not trivia.
 */
export function allComments(sf: ts.SourceFile): CommentRange[] {
  const text = sf.text;
  const out: CommentRange[] = [];
  const seen = new Set<number>();
  const visit = (n: ts.Node): void => {
    if (isJsDocKind(n.kind)) return;
    const children = n.getChildren(sf);
    if (children.length === 0) {
      if (n.kind === ts.SyntaxKind.JsxText) return;
      // Comments on the previous token's line are "trailing", the rest "leading": both are trivia.
      const ranges = [...(ts.getTrailingCommentRanges(text, n.pos) ?? []), ...(ts.getLeadingCommentRanges(text, n.pos) ?? [])];
      for (const r of ranges) {
        if (seen.has(r.pos)) continue;
        seen.add(r.pos);
        out.push({ pos: r.pos, end: r.end, isLine: r.kind === ts.SyntaxKind.SingleLineCommentTrivia });
      }
      return;
    }
    for (const c of children) visit(c);
  };
  visit(sf);
  return out.sort((a, b) => a.pos - b.pos);
}

/** JSDoc tags that the compiler reads as types in JavaScript (checkJs); such JSDoc blocks are code. */
const JS_TYPE_TAG_RE =
  /@(?:type|param|arg|argument|returns?|typedef|callback|template|this|enum|satisfies|implements|augments|extends|overload|import|property|prop|class|constructor|public|private|protected|readonly|override)\b/;

/** Does this comment carry meaning the digest must see? */
export function isMeaningfulComment(commentText: string, isLine: boolean, variant: Variant): boolean {
  if (classifyComment(commentText, isLine)) return true;
  if (isJs(variant) && !isLine && commentText.startsWith('/**') && JS_TYPE_TAG_RE.test(commentText)) return true;
  return false;
}

/** Replace text ranges (sorted, non-overlapping) by the given strings. */
function splice(text: string, edits: { pos: number; end: number; text: string }[]): string {
  const sorted = [...edits].sort((a, b) => a.pos - b.pos);
  let out = '';
  let at = 0;
  for (const e of sorted) {
    out += text.slice(at, e.pos) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

// ------------------------------------------------------------------------------------ (b) strip

/**
 * Remove every non-meaningful comment. A removed comment becomes a space, or a newline when it
 * spanned lines (a multi-line comment is a line terminator for automatic semicolon insertion).
 */
export function stripComments(text: string, variant: Variant): { text: string; removed: number; kept: number } {
  const sf = parse(text, variant);
  const edits: { pos: number; end: number; text: string }[] = [];
  let kept = 0;
  for (const c of allComments(sf)) {
    const body = text.slice(c.pos, c.end);
    if (isMeaningfulComment(body, c.isLine, variant)) {
      kept++;
      continue;
    }
    edits.push({ pos: c.pos, end: c.end, text: /[\r\n\u2028\u2029]/.test(body) ? '\n' : ' ' });
  }
  return { text: splice(text, edits), removed: edits.length, kept };
}

// ------------------------------------------------------------------------------------ (c) insert

const JSX_CONTAINERS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.JsxElement,
  ts.SyntaxKind.JsxSelfClosingElement,
  ts.SyntaxKind.JsxOpeningElement,
  ts.SyntaxKind.JsxClosingElement,
  ts.SyntaxKind.JsxFragment,
  ts.SyntaxKind.JsxOpeningFragment,
  ts.SyntaxKind.JsxClosingFragment,
  ts.SyntaxKind.JsxAttributes,
  ts.SyntaxKind.JsxAttribute,
  ts.SyntaxKind.JsxNamespacedName,
]);
const TEMPLATE_PARTS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
]);

/**
 * Insert ` /* kiln *\/ ` before the first token of AST nodes chosen with probability `rate`. Not
 * inside JSX children/tags (a comment there is text or invalid) and not at template literal parts
 * (their first character is already inside the template's raw text). The surrounding spaces keep
 * tokens from fusing (`a / /* kiln *\/ b`); no newline is ever added, so ASI cannot change.
 */
export function insertComments(
  text: string,
  variant: Variant,
  rand: () => number,
  rate = 0.5,
  comment = '/* kiln */',
): { text: string; inserted: number } {
  const sf = parse(text, variant);
  const positions = new Set<number>();
  // A documentation comment is only inserted before a token that no JSDoc leads yet: in JavaScript
  // only the last JSDoc block before a node counts, so putting one after `/** @type {T} */` would
  // really change the type.
  const isDoc = comment.startsWith('/**');
  const visit = (n: ts.Node): void => {
    const parent = n.parent;
    const inJsx = parent !== undefined && JSX_CONTAINERS.has(parent.kind);
    if (!inJsx && !TEMPLATE_PARTS.has(n.kind) && n.kind !== ts.SyntaxKind.JsxText && rand() < rate) {
      const start = n.getStart(sf);
      if (!isDoc || !/\/\*\*(?!\/)/.test(text.slice(n.pos, start))) positions.add(start);
    }
    ts.forEachChild(n, visit);
  };
  ts.forEachChild(sf, visit);
  positions.add(sf.endOfFileToken.getStart(sf));
  const edits = [...positions].map((pos) => ({ pos, end: pos, text: ` ${comment} ` }));
  return { text: splice(text, edits), inserted: edits.length };
}

// ------------------------------------------------------------------------------------ (d) real edits

export type EditKind = 'literal' | 'operator' | 'identifier' | 'drop-statement';
export const EDIT_KINDS: EditKind[] = ['literal', 'operator', 'identifier', 'drop-statement'];

export interface Edit {
  kind: EditKind;
  /** Replaced range of the original text. */
  pos: number;
  end: number;
  replacement: string;
  description: string;
}

/** Kinds of nodes the engine makes declarations of: their names are identity, not body. */
const DECLARATION_KINDS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.InterfaceDeclaration,
  ts.SyntaxKind.TypeAliasDeclaration,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.ModuleDeclaration,
  ts.SyntaxKind.VariableDeclaration,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.PropertyDeclaration,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.IndexSignature,
  ts.SyntaxKind.ClassStaticBlockDeclaration,
]);

/** Statements that declare something (never dropped: that is "remove a declaration", another test). */
function isDeclarationStatement(s: ts.Statement): boolean {
  return (
    DECLARATION_KINDS.has(s.kind) ||
    ts.isVariableStatement(s) && ts.isModuleBlock(s.parent) ||
    ts.isImportDeclaration(s) ||
    ts.isImportEqualsDeclaration(s) ||
    ts.isExportDeclaration(s) ||
    ts.isExportAssignment(s)
  );
}

function containsNestedDeclaration(n: ts.Node): boolean {
  let found = false;
  const visit = (c: ts.Node): void => {
    if (found) return;
    if (ts.isFunctionDeclaration(c) || ts.isClassDeclaration(c)) {
      found = true;
      return;
    }
    ts.forEachChild(c, visit);
  };
  visit(n);
  return found;
}

const OPERATOR_SWAPS = new Map<ts.SyntaxKind, string>([
  [ts.SyntaxKind.PlusToken, '-'],
  [ts.SyntaxKind.MinusToken, '+'],
  [ts.SyntaxKind.EqualsEqualsEqualsToken, '!=='],
  [ts.SyntaxKind.ExclamationEqualsEqualsToken, '==='],
  [ts.SyntaxKind.AmpersandAmpersandToken, '||'],
  [ts.SyntaxKind.BarBarToken, '&&'],
]);

/**
 * Candidate real edits of a file, by kind. Only edits inside the body of some declaration are
 * candidates (`inDeclaration` says which offsets are); never inside a declaration's own name (that
 * is a rename, which changes identity), and a dropped statement is neither empty, nor a declaration,
 * nor one that contains a local function/class declaration (dropping that would renumber the dense
 * ordinals of its same-named siblings: a remove, tested elsewhere, not a body change).
 */
export function candidateEdits(text: string, variant: Variant, inDeclaration: (pos: number, end: number) => boolean): Map<EditKind, Edit[]> {
  const sf = parse(text, variant);
  const out = new Map<EditKind, Edit[]>(EDIT_KINDS.map((k) => [k, []]));
  const add = (e: Edit) => {
    if (inDeclaration(e.pos, e.end)) out.get(e.kind)!.push(e);
  };
  const visit = (n: ts.Node, inName: boolean): void => {
    const start = n.getStart(sf);
    if (!inName) {
      if (ts.isStringLiteral(n) && !ts.isImportDeclaration(n.parent) && !ts.isExportDeclaration(n.parent) && !ts.isExternalModuleReference(n.parent)) {
        add({ kind: 'literal', pos: start, end: n.end, replacement: JSON.stringify(`${n.text}kiln`), description: `string ${JSON.stringify(n.text).slice(0, 40)}` });
      } else if (ts.isNumericLiteral(n)) {
        const v = Number(n.text.replace(/_/g, ''));
        if (Number.isFinite(v)) add({ kind: 'literal', pos: start, end: n.end, replacement: ` ${String(v + 7)} `, description: `number ${n.text}` });
      } else if (ts.isBinaryExpression(n) && OPERATOR_SWAPS.has(n.operatorToken.kind)) {
        const op = n.operatorToken;
        add({ kind: 'operator', pos: op.getStart(sf), end: op.end, replacement: ` ${OPERATOR_SWAPS.get(op.kind)} `, description: `operator ${op.getText(sf)}` });
      } else if (ts.isIdentifier(n) && isReference(n)) {
        add({ kind: 'identifier', pos: start, end: n.end, replacement: `${n.text}_kiln`, description: `identifier ${n.text}` });
      }
    }
    if ((ts.isBlock(n) || ts.isModuleBlock(n) || ts.isCaseClause(n) || ts.isDefaultClause(n)) && !inName) {
      for (const s of n.statements) {
        if (s.kind === ts.SyntaxKind.EmptyStatement || isDeclarationStatement(s) || containsNestedDeclaration(s)) continue;
        // `;` keeps automatic semicolon insertion where it was; an empty statement in a list is nothing.
        add({ kind: 'drop-statement', pos: s.getStart(sf), end: s.end, replacement: ';', description: `drop ${ts.SyntaxKind[s.kind]}` });
      }
    }
    const nameNode = DECLARATION_KINDS.has(n.kind) ? (n as { name?: ts.Node }).name : undefined;
    ts.forEachChild(n, (c) => visit(c, inName || c === nameNode));
  };
  ts.forEachChild(sf, (c) => visit(c, false));
  return out;
}

/** An identifier that refers to something (not the name a declaration introduces). */
function isReference(id: ts.Identifier): boolean {
  const p = id.parent;
  if (!p) return false;
  if ((p as { name?: ts.Node }).name === id && (DECLARATION_KINDS.has(p.kind) || isDeclarationLike(p))) return false;
  if (ts.isLabeledStatement(p) || ts.isBreakOrContinueStatement(p)) return false; // labels are not references to values
  if (ts.isJsxAttribute(p) || ts.isJsxNamespacedName(p)) return false;
  if (ts.isMetaProperty(p)) return false; // `new.target`, `import.meta`
  return true;
}

function isDeclarationLike(p: ts.Node): boolean {
  return (
    ts.isParameter(p) ||
    ts.isBindingElement(p) ||
    ts.isVariableDeclaration(p) ||
    ts.isTypeParameterDeclaration(p) ||
    ts.isPropertySignature(p) ||
    ts.isMethodSignature(p) ||
    ts.isPropertyDeclaration(p) ||
    ts.isMethodDeclaration(p) ||
    ts.isGetAccessor(p) ||
    ts.isSetAccessor(p) ||
    ts.isEnumMember(p) ||
    ts.isPropertyAssignment(p) ||
    ts.isShorthandPropertyAssignment(p) ||
    ts.isImportSpecifier(p) ||
    ts.isExportSpecifier(p) ||
    ts.isImportClause(p) ||
    ts.isNamespaceImport(p) ||
    ts.isNamespaceExport(p) ||
    ts.isImportEqualsDeclaration(p) ||
    ts.isFunctionExpression(p) ||
    ts.isClassExpression(p) ||
    ts.isNamedTupleMember(p) ||
    ts.isJsxAttribute(p)
  );
}

export function applyEdit(text: string, e: Edit): string {
  return text.slice(0, e.pos) + e.replacement + text.slice(e.end);
}

// ------------------------------------------------------------------------------------ slices

export interface DeclSpan {
  index: number;
  start: number;
  end: number;
  depth: number;
}

/** Offsets of each declaration of a slice (spans are 1-based line/column, end exclusive). */
export function declSpans(slice: Slice, sf: ts.SourceFile): DeclSpan[] {
  return slice.decls.map((d, index) => {
    let depth = 0;
    for (let p = d.parent; p !== -1; p = slice.decls[p]!.parent) depth++;
    return {
      index,
      start: sf.getPositionOfLineAndCharacter(d.span.startLine - 1, d.span.startColumn - 1),
      end: sf.getPositionOfLineAndCharacter(d.span.endLine - 1, d.span.endColumn - 1),
      depth,
    };
  });
}

/** The innermost declaration whose span contains [pos, end), or undefined. */
export function innermostDeclaration(spans: DeclSpan[], pos: number, end: number): DeclSpan | undefined {
  let best: DeclSpan | undefined;
  for (const s of spans) {
    if (s.start <= pos && end <= s.end) {
      if (!best || s.end - s.start < best.end - best.start || (s.end - s.start === best.end - best.start && s.depth > best.depth)) best = s;
    }
  }
  return best;
}

/** (path, kind) → index: how the tests identify a declaration within one file. */
export function declKey(d: { path: string; kind: string }): string {
  return `${d.path}\u0000${d.kind}`;
}

export function indexByKey(slice: Slice): Map<string, number> {
  const m = new Map<string, number>();
  slice.decls.forEach((d, i) => m.set(declKey(d), i));
  return m;
}

export function ancestorsOf(slice: Slice, index: number): Set<number> {
  const out = new Set<number>();
  for (let p = slice.decls[index]!.parent; p !== -1; p = slice.decls[p]!.parent) out.add(p);
  return out;
}
