/**
 * The canonical token encoder: turns a syntax subtree into the token stream a semantic digest hashes.
 * The walk (facts/extract.ts) drives it one declaration at a time and is called back for nested
 * declarations, which are digested on their own and referenced here by digest (Merkle).
 *
 * Invariants (each is tested through the extractor):
 * - Tokens come from the tree, never from rendered text: comments, whitespace, quote style, numeric
 *   spelling, redundant parentheses and empty statements cannot reach them; meaningful comments do,
 *   each emitted once, in source order, by the node whose first token it leads.
 * - No position, offset or traversal counter is ever emitted.
 * - Nesting beyond MAX_WALK_DEPTH throws TooDeep (a RangeError may also escape a deep walk); callers
 *   turn both into a null digest, which always compares as changed.
 * - The visit loop allocates nothing per node: the generic child visit passes its arguments through
 *   fields, with its two callbacks allocated once per encoder.
 */
import type * as TS from 'typescript';
import { typescript } from '../parse/typescript.js';
import type { MeaningfulComment } from '../facts/comments.js';
import type { DeclFact } from '../facts/slice.js';
import { canonicalBigInt, canonicalJsxText, canonicalNumber, canonicalTemplateRaw } from './canonical.js';
import { digestParts } from './hash.js';
import { flagActions, kindName, LEFT_OPERAND_PARENTS, propertyNameParents, TYPE_TAG_KINDS, visitActions, F, V } from './kinds.js';

/**
 * Deepest syntax nesting the walk follows; deterministic regardless of thread stack size. A cold main
 * thread (default ~1 MB stack) overflows the walk at ~1000 levels, so the limit keeps a 2× margin.
 */
export const MAX_WALK_DEPTH = 500;

export class TooDeep extends Error {}

export const enum Ctx {
  /** Inside a declaration: nested function/class declarations become nested declarations. */
  Decl,
  /** Inside a plain statement: everything is tokens. */
  Stmt,
}

/** A declaration the walk registered; the encoder references it by its index (child refs). */
export interface PendingDecl {
  fact: DeclFact;
  name: string;
  node: TS.Node;
  hasBody: boolean;
}

/** What the encoder calls back into: the walk that registers (and digests) nested declarations. */
export interface DeclarationWalk {
  /** Declarations a statement introduces at this level; their indices in the pending list. */
  declareStatement(stmt: TS.Statement, parent: number, depth: number): number[];
  /** A class member, local function or class as a nested declaration; undefined when it is none. */
  nestedDeclaration(node: TS.Node, parent: number, depth: number): number | undefined;
}

/** Buffer length, meaningful comments emitted, declarations created — at the start of a header part. */
type Mark = [number, number, number];

/** Token ranges of a declaration's header parts, recorded by its digest walk (digest/signature.ts reuses them). */
export interface HeaderCapture {
  /** The declaration node whose children are recorded, and its function initializer, if any. */
  root: TS.Node;
  init: TS.Node | undefined;
  /** Header part (child node or node list) → its [start, end) in `buf`, or null when not reusable. */
  ranges: Map<object, [number, number] | null>;
  /** The declaration's digest buffer. */
  buf: string[] | undefined;
}

/** The arrow or function expression initialising a variable or property (its signature is the header). */
export function headerInitializer(ts: typeof TS, node: TS.Node): TS.Node | undefined {
  if (!ts.isVariableDeclaration(node) && !ts.isPropertyDeclaration(node)) return undefined;
  const init = node.initializer;
  return init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init : undefined;
}

const EMPTY_ARGS = [] as unknown as TS.NodeArray<TS.Expression>;

/** Trivia then a single `;`: the rest of a statement after a comment before its terminator. */
const ONLY_SEMICOLON_RE = /^(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/)*;$/;

export class Encoder {
  readonly ts: typeof TS = typescript();
  readonly SK: typeof TS.SyntaxKind;
  private readonly forEachChild: typeof TS.forEachChild;
  /** visitNodeBody's action for each node kind (visitActions()). */
  private readonly visitAction: Uint8Array;
  /** emitFlags' action for each node kind. */
  private readonly flagAction: Uint8Array;
  /** Node kinds whose `name` is a property name (PROPERTY_NAME_PARENTS), as a table. */
  private readonly propertyNameParent: Uint8Array;
  /** Node flags that change meaning (`let`/`const`/`using`, optional chains, `declare global`). */
  readonly flagMask: number;
  /** Whether each meaningful comment was emitted (or taken as a pragma by the walk). */
  readonly consumed: boolean[];
  commentCursor = 0;
  /** Local name → the import it binds (filled by the walk before any declaration is digested). */
  readonly importSources = new Map<string, { specifier: string; imported: string }>();
  /** Imports used by the declaration being digested (and its nested declarations). */
  declUses = new Set<string>();
  /**
   * Names the declaration being digested mentions (a superset of its references: property names
   * and locals are included and filtered out later against module-level names and imports).
   */
  declRefs = new Set<string>();
  /** Specifiers of `import('x')`, `require('x')` and `import('x').T` anywhere in the file. */
  readonly dynamicSpecifiers = new Set<string>();
  /** Of those, the ones the compiler follows for types in a TypeScript file: `import()` and import types (not `require()`). */
  readonly followedSpecifiers = new Set<string>();

  constructor(
    private readonly text: string,
    private readonly sf: TS.SourceFile,
    readonly isJs: boolean,
    private readonly schema: number,
    private readonly language: string,
    /** The file's meaningful comments in source order (none under a projection without them). */
    readonly comments: MeaningfulComment[],
    /** The walk's declarations, in registration order (shared, appended to by the walk). */
    readonly decls: PendingDecl[],
    private readonly walk: DeclarationWalk,
  ) {
    const ts = this.ts;
    this.SK = ts.SyntaxKind;
    this.forEachChild = ts.forEachChild;
    this.visitAction = visitActions(ts);
    this.flagAction = flagActions(ts);
    this.propertyNameParent = propertyNameParents(ts);
    this.consumed = comments.map(() => false);
    this.flagMask =
      ts.NodeFlags.Let | ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.OptionalChain | ts.NodeFlags.GlobalAugmentation;
  }

  /** A digest's domain tag: what it digests, under which projection, for which language. */
  tag(what: string): string {
    return `kiln-${what}/${this.schema}/${this.language}`;
  }

  // ---------------------------------------------------------------- digest walk

  out: string[] = [];

  withBuffer<T>(buf: string[], f: () => T): T {
    const saved = this.out;
    this.out = buf;
    try {
      return f();
    } finally {
      this.out = saved;
    }
  }

  /** Digest a node into its own buffer. Returns null (with the reason) when it cannot be digested. */
  digestNode(
    node: TS.Node,
    ctx: Ctx,
    owner: number,
    prefix: string[] = [],
    depth = 0,
  ): { value: string | null; reason?: 'too-deep' | 'syntax-error' } {
    const buf: string[] = [...prefix];
    const savedDegraded = this.childDegraded;
    this.childDegraded = undefined;
    let childDegraded: 'too-deep' | 'syntax-error' | undefined;
    try {
      this.withBuffer(buf, () => this.visitRoot(node, ctx, owner, depth));
    } catch (e) {
      if (e instanceof TooDeep || e instanceof RangeError) return { value: null, reason: 'too-deep' };
      throw e;
    } finally {
      childDegraded = this.childDegraded;
      this.childDegraded = savedDegraded;
    }
    if (childDegraded) return { value: null, reason: childDegraded };
    return { value: digestParts(this.tag('sem'), buf) };
  }

  /** Set while digesting a declaration when a nested declaration could not be digested. */
  private childDegraded: 'too-deep' | 'syntax-error' | undefined;

  /** Visit a declaration root: its own tokens, with nested declarations split off and referenced. */
  private visitRoot(node: TS.Node, ctx: Ctx, owner: number, depth: number): void {
    const ts = this.ts;
    if (depth > MAX_WALK_DEPTH) throw new TooDeep();
    this.emitComments(node);
    if (ctx === Ctx.Decl && ts.isModuleDeclaration(node)) {
      // Namespace: header tokens, then each body statement (declarations become members).
      this.emitFlags(node);
      this.visitList(node.modifiers, Ctx.Decl, owner, depth + 1);
      this.visit(node.name, Ctx.Decl, owner, depth + 1);
      let body = node.body;
      while (body && ts.isModuleDeclaration(body)) {
        // `namespace A.B {}`: nested name segments; members belong to the innermost.
        this.out.push('.', body.name.text);
        body = body.body;
      }
      if (body && ts.isModuleBlock(body)) {
        this.out.push('[');
        for (const s of body.statements) {
          if (s.kind === this.SK.EmptyStatement) continue;
          const declared = this.walk.declareStatement(s, owner, depth + 1);
          if (declared.length) for (const i of declared) this.emitChildRef(i);
          else this.visit(s, Ctx.Decl, owner, depth + 1);
        }
        this.out.push(']');
      } else {
        this.out.push('-');
      }
    } else if (ctx === Ctx.Decl && ts.isClassDeclaration(node)) {
      // Class: header tokens, then members as nested declarations, in order (member order is
      // observable: field initialisers run in it and reflection lists it).
      this.out.push('(', 'ClassDeclaration');
      const cap = this.capture !== undefined && this.capture.root === node ? this.capture : undefined;
      let mark = this.markPart();
      this.visitList(node.modifiers, Ctx.Decl, owner, depth + 1);
      if (cap && node.modifiers) this.recordPart(cap, node.modifiers, mark);
      this.slot(node.name, Ctx.Decl, owner, depth);
      mark = this.markPart();
      this.visitList(node.typeParameters, Ctx.Decl, owner, depth + 1);
      if (cap && node.typeParameters) this.recordPart(cap, node.typeParameters, mark);
      mark = this.markPart();
      this.visitList(node.heritageClauses, Ctx.Decl, owner, depth + 1);
      if (cap && node.heritageClauses) this.recordPart(cap, node.heritageClauses, mark);
      this.out.push('[');
      for (const m of node.members) {
        if (m.kind === this.SK.SemicolonClassElement) continue;
        const i = this.walk.nestedDeclaration(m, owner, depth + 1);
        if (i !== undefined) this.emitChildRef(i);
        else this.visit(m, Ctx.Decl, owner, depth + 1);
      }
      this.out.push(']', ')');
    } else {
      this.visitNodeBody(node, ctx, owner, depth);
    }
    this.exitComments(node);
  }

  private emitChildRef(index: number): void {
    const p = this.decls[index]!;
    this.out.push('@', p.fact.kind, p.name, p.fact.semantic ?? 'null');
    if (p.fact.semantic === null) this.childDegraded ??= p.fact.degraded ?? 'syntax-error';
  }

  visit(node: TS.Node | undefined, ctx: Ctx, owner: number, depth: number): void {
    if (!node) return;
    if (depth > MAX_WALK_DEPTH) throw new TooDeep();
    const k = node.kind;
    // Nested declarations inside a declaration are digested on their own and referenced by digest.
    if (ctx === Ctx.Decl && (k === this.SK.FunctionDeclaration || k === this.SK.ClassDeclaration)) {
      const i = this.walk.nestedDeclaration(node, owner, depth);
      if (i !== undefined) {
        this.emitChildRef(i);
        return;
      }
    }
    this.emitComments(node);
    this.visitNodeBody(node, ctx, owner, depth);
    this.exitComments(node);
  }

  private visitNodeBody(node: TS.Node, ctx: Ctx, owner: number, depth: number): void {
    const ts = this.ts;
    const SK = this.SK;
    const out = this.out;
    const k = node.kind;
    if (this.isJs) this.emitJsDocTypes(node, owner, depth);
    // Dispatch through a per-kind table (literal case labels: a jump table, not a chain of compares).
    switch (this.visitAction[k]) {
      case V.Identifier: {
        const t = (node as TS.Identifier).text;
        out.push('i', t);
        this.declRefs.add(t);
        // An imported binding: the slice records which import it uses; the *resolved* target is
        // folded in when slices are assembled into a view (the specifier as written depends on
        // where the file is, the target does not).
        const src = this.importSources.get(t);
        if (src !== undefined) {
          out.push('import', src.imported);
          this.declUses.add(`${src.specifier}\u0000${src.imported}`);
        }
        return;
      }
      case V.PrivateIdentifier:
        out.push('p', (node as TS.PrivateIdentifier).text);
        return;
      case V.StringLiteral:
        out.push('s', (node as TS.StringLiteral).text);
        return;
      case V.NumericLiteral:
        out.push('n', canonicalNumber((node as TS.NumericLiteral).text));
        return;
      case V.BigIntLiteral:
        out.push('b', canonicalBigInt((node as TS.BigIntLiteral).text));
        return;
      case V.Template: {
        const t = node as TS.TemplateLiteralLikeNode;
        out.push(kindName(k), canonicalTemplateRaw(t.rawText ?? t.text));
        return;
      }
      case V.RegularExpressionLiteral: {
        // Flag order is spelling (`/a/ig` ≡ `/a/gi`; prettier sorts them): the body and the flag set are the value.
        const t = (node as TS.RegularExpressionLiteral).text;
        const slash = t.lastIndexOf('/');
        out.push('r', t.slice(0, slash + 1) + [...t.slice(slash + 1)].sort().join(''));
        return;
      }
      case V.JsxText: {
        const t = canonicalJsxText((node as TS.JsxText).text);
        if (t !== '') out.push('x', t);
        return;
      }
      case V.JsxExpression: {
        // `{/* comment */}` is a JSX comment: an empty expression container emits nothing.
        const n = node as TS.JsxExpression;
        if (!n.expression && !n.dotDotDotToken) return;
        break;
      }
      case V.Prose:
        return; // prose
      case V.ParenthesizedExpression: {
        // Redundant parentheses are formatting: the tree already encodes precedence. They are kept
        // where they change meaning: a parenthesised string statement is not a directive, and in
        // JavaScript a JSDoc cast needs them (that case is handled by emitJsDocTypes above).
        if (!this.isJs || !this.isJsDocCast(node)) {
          this.visit((node as TS.ParenthesizedExpression).expression, ctx, owner, depth + 1);
          return;
        }
        break;
      }
      case V.ParenthesizedType:
        this.visit((node as TS.ParenthesizedTypeNode).type, ctx, owner, depth + 1);
        return;
      case V.ExpressionStatement: {
        const e = (node as TS.ExpressionStatement).expression;
        out.push('(', 'ExpressionStatement');
        if (ts.isParenthesizedExpression(e) && ts.isStringLiteral(this.unparen(e))) {
          out.push('paren-string');
        }
        this.visit(e, ctx, owner, depth + 1);
        out.push(')');
        return;
      }
      case V.EmptyStatement:
        out.push('empty');
        return;
      case V.ForStatement: {
        const n = node as TS.ForStatement;
        out.push('(', 'ForStatement');
        this.slot(n.initializer, ctx, owner, depth);
        this.slot(n.condition, ctx, owner, depth);
        this.slot(n.incrementor, ctx, owner, depth);
        this.slot(n.statement, ctx, owner, depth);
        out.push(')');
        return;
      }
      case V.BindingElement: {
        const n = node as TS.BindingElement;
        out.push('(', 'BindingElement');
        this.slot(n.dotDotDotToken, ctx, owner, depth);
        this.slot(n.propertyName, ctx, owner, depth, true);
        this.slot(n.name, ctx, owner, depth);
        this.slot(n.initializer, ctx, owner, depth);
        out.push(')');
        return;
      }
      case V.TypeParameter: {
        const n = node as TS.TypeParameterDeclaration;
        out.push('(', 'TypeParameter');
        this.visitList(n.modifiers, ctx, owner, depth + 1);
        this.slot(n.name, ctx, owner, depth);
        this.slot(n.constraint, ctx, owner, depth);
        this.slot(n.default, ctx, owner, depth);
        out.push(')');
        return;
      }
      case V.CallExpression: {
        // `import('x')` and `require('x')` name packages a build reads (their versions key it).
        const n = node as TS.CallExpression;
        const arg = n.arguments[0];
        if (arg && ts.isStringLiteralLike(arg) && (n.expression.kind === SK.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) {
          this.dynamicSpecifiers.add(arg.text);
          if (n.expression.kind === SK.ImportKeyword) this.followedSpecifiers.add(arg.text);
        }
        break;
      }
      case V.ImportType: {
        const arg = (node as TS.ImportTypeNode).argument;
        if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) {
          this.dynamicSpecifiers.add(arg.literal.text);
          this.followedSpecifiers.add(arg.literal.text);
        }
        break;
      }
      case V.NewExpression: {
        // `new X` and `new X()` are the same call.
        const n = node as TS.NewExpression;
        out.push('(', 'NewExpression');
        this.visit(n.expression, ctx, owner, depth + 1);
        this.visitList(n.typeArguments, ctx, owner, depth + 1, 'targs');
        this.visitList(n.arguments ?? EMPTY_ARGS, ctx, owner, depth + 1, 'args');
        out.push(')');
        return;
      }
      case V.SemicolonClassElement:
        return;
      default:
        break;
    }
    // Generic node: kind, the properties that are not child nodes, then children in order.
    out.push('(', kindName(k));
    this.emitFlags(node);
    const propName = this.propertyNameParent[k] ? (node as { name?: TS.Node }).name : undefined;
    const cap = this.capture;
    if (cap !== undefined && (node === cap.root || node === cap.init)) {
      // The declaration being digested (or its function initializer): record where each child's
      // tokens are, so its header digest can reuse them (headerDigestFromWalk).
      ts.forEachChild(
        node,
        (child) => {
          const mark = this.markPart();
          if (child === propName) this.emitPropertyName(child);
          else this.visit(child, ctx, owner, depth + 1);
          this.recordPart(cap, child, mark);
          return undefined;
        },
        (list) => {
          const mark = this.markPart();
          this.visitList(list, ctx, owner, depth + 1);
          this.recordPart(cap, list, mark);
          return undefined;
        },
      );
    } else {
      // Same visit as the branch above, with callbacks allocated once (this runs for most nodes).
      this.gCtx = ctx;
      this.gOwner = owner;
      this.gDepth = depth + 1;
      this.gProp = propName;
      this.forEachChild(node, this.onChild, this.onList);
    }
    out.push(')');
  }

  // Arguments of the generic child visit (visitNodeBody), kept in fields so that its two callbacks are
  // allocated once; each callback restores them after a child's visit has used them for its own.
  private gCtx: Ctx = Ctx.Stmt;
  private gOwner = -1;
  private gDepth = 0;
  private gProp: TS.Node | undefined;
  private readonly onChild = (child: TS.Node): undefined => {
    const ctx = this.gCtx;
    const owner = this.gOwner;
    const depth = this.gDepth;
    const prop = this.gProp;
    if (child === prop) this.emitPropertyName(child);
    else this.visit(child, ctx, owner, depth);
    this.gCtx = ctx;
    this.gOwner = owner;
    this.gDepth = depth;
    this.gProp = prop;
    return undefined;
  };
  private readonly onList = (list: TS.NodeArray<TS.Node>): undefined => {
    const ctx = this.gCtx;
    const owner = this.gOwner;
    const depth = this.gDepth;
    const prop = this.gProp;
    this.visitList(list, ctx, owner, depth);
    this.gCtx = ctx;
    this.gOwner = owner;
    this.gDepth = depth;
    this.gProp = prop;
    return undefined;
  };

  private unparen(e: TS.Expression): TS.Expression {
    while (this.ts.isParenthesizedExpression(e)) e = e.expression;
    return e;
  }

  slot(node: TS.Node | undefined, ctx: Ctx, owner: number, depth: number, propertyName = false): void {
    if (!node) {
      this.out.push('-');
      return;
    }
    if (propertyName) this.emitPropertyName(node);
    else this.visit(node, ctx, owner, depth + 1);
  }

  visitList(list: TS.NodeArray<TS.Node> | undefined, ctx: Ctx, owner: number, depth: number, label = '['): void {
    if (!list) return;
    if (list.length && this.visitAction[list[0]!.kind] === V.Prose) return;
    this.out.push(label);
    for (const n of list) {
      if (n.kind === this.SK.EmptyStatement) continue; // `;` in a statement list is nothing
      this.visit(n, ctx, owner, depth);
    }
    this.out.push(']');
  }

  /** Property keys by value: `a`, `'a'` and `"a"` are one key; `1`, `'1'` and `1.0` are one key. */
  emitPropertyName(node: TS.Node): void {
    const ts = this.ts;
    if (ts.isIdentifier(node) || ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      this.emitComments(node);
      this.out.push('key', node.text);
      this.exitComments(node);
    } else if (ts.isNumericLiteral(node)) {
      this.emitComments(node);
      this.out.push('key', canonicalNumber(node.text));
      this.exitComments(node);
    } else {
      this.visit(node, Ctx.Stmt, -1, 0);
    }
  }

  /** Properties of a node that are not child nodes but change its meaning. */
  private emitFlags(node: TS.Node): void {
    const flags = node.flags & this.flagMask;
    if (flags) this.out.push(`f${flags}`);
    const n = node as unknown as Record<string, unknown>;
    switch (this.flagAction[node.kind]) {
      case F.Operator: // PrefixUnaryExpression, PostfixUnaryExpression, TypeOperator
        this.out.push(kindName(n.operator as number));
        break;
      case F.Token: // HeritageClause, ImportAttributes
        this.out.push(kindName(n.token as number));
        break;
      case F.KeywordToken: // MetaProperty
        this.out.push(kindName(n.keywordToken as number));
        break;
      case F.ImportClause:
        if (n.isTypeOnly) this.out.push('type-only');
        if (n.phaseModifier) this.out.push(kindName(n.phaseModifier as number));
        break;
      case F.TypeOnly: // ImportSpecifier, ExportSpecifier, ExportDeclaration, ImportEqualsDeclaration
        if (n.isTypeOnly) this.out.push('type-only');
        break;
      case F.TypeOf: // ImportType
        if (n.isTypeOf) this.out.push('typeof');
        break;
      case F.ExportEquals: // ExportAssignment
        if (n.isExportEquals) this.out.push('export=');
        break;
      default:
        break;
    }
  }

  /**
   * JSDoc that carries types in JavaScript (checkJs): the type-bearing tags enter the semantic
   * digest structurally; prose does not.
   */
  emitJsDocTypes(node: TS.Node, owner: number, depth: number): void {
    const docs = (node as { jsDoc?: TS.JSDoc[] }).jsDoc;
    if (!docs) return;
    const ts = this.ts;
    // As the compiler reads them: the tags of the last JSDoc block only, plus `@overload` tags of the
    // earlier ones (a prose block after `/** @type {T} */` really drops the type).
    const last = docs[docs.length - 1];
    for (const doc of docs) {
      for (const tag of doc.tags ?? []) {
        if (!TYPE_TAG_KINDS(ts).has(tag.kind)) continue;
        if (doc !== last && tag.kind !== this.SK.JSDocOverloadTag) continue;
        this.out.push('jsdoc', kindName(tag.kind), tag.tagName.text);
        ts.forEachChild(
          tag,
          (child) => {
            if (child !== tag.tagName) this.visit(child, Ctx.Stmt, owner, depth + 1);
            return undefined;
          },
          (list) => {
            this.visitList(list, Ctx.Stmt, owner, depth + 1);
            return undefined;
          },
        );
      }
    }
  }

  /** A JavaScript `/** @type {T} *\/ (x)` (or `@satisfies`): the parentheses are a cast, not formatting. */
  private isJsDocCast(node: TS.Node): boolean {
    const docs = (node as { jsDoc?: TS.JSDoc[] }).jsDoc;
    const SK = this.ts.SyntaxKind;
    const last = docs?.[docs.length - 1];
    return !!last?.tags?.some((t) => t.kind === SK.JSDocTypeTag || t.kind === SK.JSDocSatisfiesTag);
  }

  // ---------------------------------------------------------------- meaningful comments

  /** Values of the meaningful comments emitted while digesting the current declaration. */
  declComments: string[] = [];

  private emitComment(value: string): void {
    this.out.push('c', value);
    this.declComments.push(value);
    this.commentsEmitted++;
  }

  /** Meaningful comments emitted so far (a header part that received one is not reused). */
  private commentsEmitted = 0;

  /** Token ranges of the header parts of the declaration being digested (headerDigestFromWalk). */
  capture: HeaderCapture | undefined;

  /**
   * Emit meaningful comments that lead this node (before its first token). That includes any comment
   * before it that no node took (one before a statement's `;`, or between `export` and `const`): the
   * walk is in source order, so it leads this node's first token. Otherwise it would block the cursor
   * and every later comment of the file.
   */
  private emitComments(node: TS.Node): void {
    const cs = this.comments;
    if (this.commentCursor >= cs.length) return;
    this.skipConsumed();
    let c = cs[this.commentCursor];
    if (!c || c.pos >= node.end) return;
    // A comment belongs to the token it precedes. A node whose first child starts at that same token
    // (`a.b`, `f()`, `a + b`, an expression statement) leaves it to that child, so the innermost node
    // gets it with or without redundant parentheses: `(/*#__PURE__*/ new X()).y` ≡ `/*#__PURE__*/ new X().y`.
    if (LEFT_OPERAND_PARENTS.has(node.kind)) return;
    const start = node.getStart(this.sf);
    while (c && c.pos < start) {
      this.emitComment(c.value);
      this.consumed[this.commentCursor] = true;
      this.commentCursor++;
      this.skipConsumed();
      c = cs[this.commentCursor];
    }
  }

  /** Emit meaningful comments inside this node that no child took (e.g. before a closing token). */
  private exitComments(node: TS.Node): void {
    const cs = this.comments;
    if (this.commentCursor >= cs.length) return;
    this.skipConsumed();
    let c = cs[this.commentCursor];
    while (c && c.end <= node.end && c.pos >= node.pos) {
      // A comment before the closing `;` leads the next statement (prettier without semicolons
      // writes `// @ts-ignore` `;(x as any).y()`): leave it to the next node's emitComments.
      if (this.text.charCodeAt(node.end - 1) === 59 /* ; */ && ONLY_SEMICOLON_RE.test(this.text.slice(c.end, node.end))) break;
      this.emitComment(c.value);
      this.consumed[this.commentCursor] = true;
      this.commentCursor++;
      this.skipConsumed();
      c = cs[this.commentCursor];
    }
  }

  /** Comments leading a statement whose declarations are digested from an inner node. */
  takeCommentsBefore(stmt: TS.Node, into: string[]): void {
    const saved = this.out;
    this.out = into;
    this.emitComments(stmt);
    this.out = saved;
  }

  private skipConsumed(): void {
    while (this.commentCursor < this.comments.length && this.consumed[this.commentCursor]) this.commentCursor++;
  }

  // ---------------------------------------------------------------- names

  /** A member's name as identity: property keys by value, computed names readable or digested. */
  memberName(name: TS.PropertyName): string {
    const ts = this.ts;
    if (ts.isIdentifier(name)) return name.text;
    if (ts.isPrivateIdentifier(name)) return name.text;
    if (ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
    if (ts.isNumericLiteral(name)) return canonicalNumber(name.text);
    if (ts.isBigIntLiteral(name)) return canonicalBigInt(name.text);
    if (ts.isComputedPropertyName(name)) return `[${this.readableExpression(name.expression)}]`;
    return `[${kindName((name as TS.Node).kind)}]`;
  }

  /** A short readable form for computed names (`Symbol.iterator`); a digest for anything complex. */
  private readableExpression(e: TS.Expression): string {
    const ts = this.ts;
    if (ts.isIdentifier(e)) return e.text;
    if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.name)) return `${this.readableExpression(e.expression)}.${e.name.text}`;
    if (ts.isStringLiteral(e)) return JSON.stringify(e.text);
    if (ts.isNumericLiteral(e)) return canonicalNumber(e.text);
    const out: string[] = [];
    // A name is identity: no comment may enter it. The member's own walk takes them later.
    const savedCursor = this.commentCursor;
    this.commentCursor = this.comments.length;
    try {
      this.withBuffer(out, () => this.visit(e, Ctx.Stmt, -1, 0));
    } finally {
      this.commentCursor = savedCursor;
    }
    return `expr:${digestParts('kiln-name', out).slice(0, 8)}`;
  }

  // ---------------------------------------------------------------- header capture

  /** Where the walk is: buffer length, comments emitted, declarations created. */
  private markPart(): Mark {
    return [this.out.length, this.commentsEmitted, this.decls.length];
  }

  /**
   * Record the tokens a header part produced. A part during which a meaningful comment was emitted or
   * a nested declaration created is recorded as unusable (the header walk would produce other tokens).
   */
  private recordPart(cap: HeaderCapture, part: object, mark: Mark): void {
    if (cap.buf === undefined) cap.buf = this.out;
    const clean = cap.buf === this.out && this.commentsEmitted === mark[1] && this.decls.length === mark[2];
    cap.ranges.set(part, clean ? [mark[0], this.out.length] : null);
  }
}
