/**
 * The extractor: one walk over a file's syntax tree that discovers declarations, gives each a
 * span-free local identity, and computes its semantic and doc digests plus the module's evaluation
 * order. Output is a slice (facts/slice.ts).
 *
 * Invariants (each is tested):
 * - Digests come from the tree, never from rendered text: comments, whitespace, quote style, numeric
 *   spelling, redundant parentheses and empty statements cannot reach them; meaningful comments do.
 * - No position, offset or traversal counter reaches an identity or a digest. Sibling declarations
 *   that share a name are separated by a signature digest, then by a dense ordinal within their own
 *   enclosing declaration.
 * - A nested declaration contributes to its parent only through its own digest (Merkle), so the
 *   parent moves when the child does and no unrelated declaration ever does.
 * - Whatever cannot be digested (syntax error overlap, nesting beyond the walk limit) is `null`, and a
 *   null digest always compares as changed.
 * - The slice depends on (content, variant, extractor version, digest schema) only.
 */
import type * as TS from 'typescript';
import { typescript, parseTypeScript } from '../parse/typescript.js';
import { decodeSource, DEFAULT_MAX_FILE_SIZE } from '../parse/decode.js';
import { blankRegions, findDeepRegions, inDeepRegion, PARSE_NESTING_LIMIT, type DeepRegion } from '../parse/nesting.js';
import type { Variant } from '../parse/language.js';
import { findMeaningfulComments, innerDocs, leadingDocs, type MeaningfulComment } from './comments.js';
import { canonicalBigInt, canonicalJsxText, canonicalNumber, canonicalTemplateRaw, nameSegment } from '../digest/canonical.js';
import { digestParts, sha256Hex } from '../digest/hash.js';
import { EXTRACTOR_VERSION, DIGEST_SCHEMA, PREVIOUS_DIGEST_SCHEMA } from '../version.js';
import type { DeclFact, DeclKind, ImportFact, LocalExportFact, ReExportFact, Slice, SliceDiagnostic, Span } from './slice.js';

/**
 * Deepest syntax nesting the walk follows; deterministic regardless of thread stack size. A cold main
 * thread (default ~1 MB stack) overflows the walk at ~1000 levels, so the limit keeps a 2× margin.
 */
export const MAX_WALK_DEPTH = 500;

export interface ExtractOptions {
  /** Digest projection; the current one unless comparing against a record made under the previous one. */
  digestSchema?: number;
  maxFileSize?: number;
}

/** How each supported projection differs. Projection 1 predates meaningful comments. */
interface Projection {
  schema: number;
  meaningfulComments: boolean;
}
const PROJECTIONS: Record<number, Projection> = {
  [DIGEST_SCHEMA]: { schema: DIGEST_SCHEMA, meaningfulComments: true },
  [PREVIOUS_DIGEST_SCHEMA]: { schema: PREVIOUS_DIGEST_SCHEMA, meaningfulComments: false },
};

export function supportedDigestSchemas(): number[] {
  return Object.keys(PROJECTIONS).map(Number);
}

class TooDeep extends Error {}

let kindNames: string[] | undefined;
function kindName(kind: number): string {
  if (!kindNames) {
    // Names, not numbers: SyntaxKind numbering moves between compiler versions, names rarely do.
    const ts = typescript();
    kindNames = [];
    for (const [name, value] of Object.entries(ts.SyntaxKind)) {
      if (typeof value === 'number' && kindNames[value] === undefined) kindNames[value] = name;
    }
  }
  return kindNames[kind] ?? `K${kind}`;
}

/** Extract the slice of one file's bytes. Never throws for bad input: it returns coded diagnostics. */
export function extractSlice(bytes: Uint8Array, variant: Variant, options: ExtractOptions = {}): Slice {
  const schema = options.digestSchema ?? DIGEST_SCHEMA;
  const projection = PROJECTIONS[schema];
  if (!projection) throw new Error(`digest schema ${schema} is not supported`);
  const contentHash = sha256Hex(bytes);
  const language = variant === 'js' || variant === 'jsx' ? 'javascript' : 'typescript';
  const base: Slice = {
    extractor: EXTRACTOR_VERSION,
    digestSchema: schema,
    language,
    variant,
    contentHash,
    module: { digest: '', order: [], hoisted: [], pragmas: [] },
    decls: [],
    imports: [],
    reexports: [],
    exports: [],
    dynamicImports: [],
    diagnostics: [],
  };
  const decoded = decodeSource(bytes, options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE);
  if (!decoded.ok) {
    // Opaque module: digest is the raw content, so any byte change is a change.
    base.module = { digest: digestParts(`kiln-raw/${schema}`, [contentHash]), order: [], hoisted: [], pragmas: [], degraded: 'unreadable' };
    base.diagnostics.push({ code: decoded.code, message: decoded.message });
    return base;
  }
  // Regions nested deeper than the parser can take on every thread are blanked (parse/nesting.ts).
  const deep = findDeepRegions(decoded.text);
  const text = deep.length ? blankRegions(decoded.text, deep) : decoded.text;
  if (text.trim().length === 0) {
    base.diagnostics.push({ code: 'KILN_EMPTY_FILE', message: 'file has no content' });
  }
  let parsed;
  try {
    parsed = parseTypeScript(text, variant);
  } catch (e) {
    if (e instanceof RangeError) {
      base.module = { digest: digestParts(`kiln-raw/${schema}`, [contentHash]), order: [], hoisted: [], pragmas: [], degraded: 'too-deep' };
      base.diagnostics.push({ code: 'KILN_NESTING_TOO_DEEP', message: 'the parser ran out of stack: nesting is too deep to parse' });
      return base;
    }
    throw e;
  }
  const syntaxErrors = deep.length ? parsed.syntaxErrors.filter((e) => !inDeepRegion(deep, text, e.start)) : parsed.syntaxErrors;
  return new SliceBuilder(text, parsed.sourceFile, syntaxErrors, variant, projection, base, deep).build();
}

interface PendingDecl {
  fact: DeclFact;
  name: string;
  node: TS.Node;
  hasBody: boolean;
}

const enum Ctx {
  /** Inside a declaration: nested function/class declarations become nested declarations. */
  Decl,
  /** Inside a plain statement: everything is tokens. */
  Stmt,
}

class SliceBuilder {
  private readonly ts = typescript();
  private readonly isJs: boolean;
  private readonly comments: MeaningfulComment[];
  private readonly consumed: boolean[];
  private commentCursor = 0;
  private readonly pending: PendingDecl[] = [];
  private readonly importSources = new Map<string, { specifier: string; imported: string }>();
  /** Imports used by the declaration being digested (and its nested declarations). */
  private declUses = new Set<string>();
  /**
   * Names the declaration being digested mentions (a superset of its references: property names
   * and locals are included and filtered out later against module-level names and imports).
   */
  private declRefs = new Set<string>();
  /** Module-level declaration nodes awaiting their shape digest (computed once all names are known). */
  private readonly shapeQueue: number[] = [];
  private readonly pendingRefs = new Map<number, Set<string>>();
  /** Specifiers of `import('x')`, `require('x')` and `import('x').T` anywhere in the file. */
  private readonly dynamicSpecifiers = new Set<string>();
  /** Of those, the ones the compiler follows for types in a TypeScript file: `import()` and import types (not `require()`). */
  private readonly followedSpecifiers = new Set<string>();
  private readonly diagnostics: SliceDiagnostic[];
  private readonly errorRanges: { start: number; end: number }[];
  private readonly flagMask: number;
  private readonly SK: typeof TS.SyntaxKind;
  private readonly forEachChild: typeof TS.forEachChild;
  /** visitNodeBody's action for each node kind (visitActions()). */
  private readonly visitAction: Uint8Array;
  /** emitFlags' action for each node kind. */
  private readonly flagAction: Uint8Array;
  /** Node kinds whose `name` is a property name (PROPERTY_NAME_PARENTS), as a table. */
  private readonly propertyNameParent: Uint8Array;

  constructor(
    private readonly text: string,
    private readonly sf: TS.SourceFile,
    syntaxErrors: { start: number; end: number; message: string; tsCode: number }[],
    private readonly variant: Variant,
    private readonly projection: Projection,
    private readonly slice: Slice,
    private readonly deepRanges: DeepRegion[] = [],
  ) {
    const ts = this.ts;
    this.SK = ts.SyntaxKind;
    this.forEachChild = ts.forEachChild;
    this.visitAction = visitActions(ts);
    this.flagAction = flagActions(ts);
    this.propertyNameParent = propertyNameParents(ts);
    this.isJs = variant === 'js' || variant === 'jsx';
    this.comments = projection.meaningfulComments ? findMeaningfulComments(text, variant === 'tsx' || variant === 'jsx') : [];
    this.consumed = this.comments.map(() => false);
    this.diagnostics = slice.diagnostics;
    this.errorRanges = syntaxErrors.map((e) => ({ start: e.start, end: e.end }));
    for (const e of syntaxErrors.slice(0, 20)) {
      const lc = sf.getLineAndCharacterOfPosition(e.start);
      this.diagnostics.push({ code: 'KILN_SYNTAX_ERROR', message: `TS${e.tsCode}: ${e.message}`, line: lc.line + 1, column: lc.character + 1 });
    }
    if (syntaxErrors.length > 20) {
      this.diagnostics.push({ code: 'KILN_SYNTAX_ERROR', message: `${syntaxErrors.length - 20} more syntax errors not shown` });
    }
    this.flagMask =
      ts.NodeFlags.Let | ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.OptionalChain | ts.NodeFlags.GlobalAugmentation;
  }

  build(): Slice {
    const ts = this.ts;
    const sf = this.sf;
    const tag = this.tag('module');
    const statements = sf.statements;
    this.collectImports(statements);

    // File-level pragmas: comments classified as file-level, and legal comments before the first
    // statement (a leading licence belongs to the file, not to whichever declaration is first). Other
    // annotations there (`/*#__NO_SIDE_EFFECTS__*/`, `// @ts-ignore`) belong to the first statement.
    const firstStart = statements.length ? statements[0]!.getStart(sf) : this.text.length;
    const pragmas: string[] = [];
    // A shebang line is trivia to the parser but the emitter keeps it: it is part of the module.
    const shebang = /^#![^\r\n\u2028\u2029]*/.exec(this.text);
    if (shebang) pragmas.push(`shebang:${shebang[0].trimEnd()}`);
    this.comments.forEach((c, i) => {
      if (c.fileLevel || (c.pos < firstStart && c.value.startsWith('legal:'))) {
        pragmas.push(c.value);
        this.consumed[i] = true;
      }
    });

    const ordered: string[] = [];
    const unordered: string[] = [];
    // JSDoc on statements that are not declarations (`export * from`, `export { … }`, imports, a
    // file header before them): no declaration's doc digest holds it, yet a `.d.ts` carries it.
    const statementDocs: string[] = [];
    let moduleDegraded: 'syntax-error' | 'too-deep' | undefined;
    for (const stmt of statements) {
      if (stmt.kind === this.SK.EmptyStatement) continue;
      const hoisted = this.isHoisted(stmt);
      const declared = this.declareStatement(stmt, -1);
      let entry: string;
      if (declared.length) {
        entry = `decl:${declared.map((i) => `${this.pending[i]!.fact.kind}:${this.pending[i]!.name}`).join(',')}`;
      } else {
        const d = this.digestNode(stmt, Ctx.Stmt, -1);
        if (d.value === null) moduleDegraded ??= d.reason;
        else if (this.overlapsDeep(stmt)) moduleDegraded ??= 'too-deep';
        entry = `stmt:${d.value ?? 'null'}`;
        const docs = [...leadingDocs(this.text, stmt.pos), ...innerDocs(this.ts, this.sf, stmt)];
        if (docs.length) statementDocs.push(entry, ...docs);
      }
      (hoisted ? unordered : ordered).push(entry);
      this.collectModuleFacts(stmt);
    }
    // Meaningful comments after the last statement belong to the module.
    this.comments.forEach((c, i) => {
      if (!this.consumed[i]) {
        pragmas.push(`trailing:${c.value}`);
        this.consumed[i] = true;
      }
    });
    pragmas.sort();
    unordered.sort();
    if (this.errorRanges.length && !moduleDegraded) {
      // Statements outside declarations overlap an error: the module's behaviour cannot be known.
      for (const stmt of statements) if (this.overlapsError(stmt)) moduleDegraded = 'syntax-error';
    }
    const moduleDigest = moduleDegraded
      ? digestParts(`${tag}/degraded`, [this.slice.contentHash])
      : digestParts(tag, ['pragmas', ...pragmas, 'ordered', ...ordered, 'unordered', ...unordered]);
    this.slice.module = {
      digest: moduleDigest,
      order: ordered,
      hoisted: unordered,
      pragmas,
      ...(statementDocs.length ? { docs: digestParts(this.tag('module-doc'), statementDocs) } : {}),
      ...(moduleDegraded ? { degraded: moduleDegraded } : {}),
    };
    if (this.pending.some((p) => p.fact.degraded === 'too-deep') || moduleDegraded === 'too-deep') {
      const at = this.deepRanges.length ? this.sf.getLineAndCharacterOfPosition(this.deepRanges[0]!.start) : undefined;
      this.diagnostics.push({
        code: 'KILN_NESTING_TOO_DEEP',
        message: `syntax nests deeper than kiln digests (parse limit ${PARSE_NESTING_LIMIT}, walk limit ${MAX_WALK_DEPTH} levels); the declarations containing it count as changed`,
        ...(at ? { line: at.line + 1, column: at.character + 1 } : {}),
      });
    }
    this.finalizeIdentities();
    this.finalizeShapes();
    this.slice.decls = this.pending.map((p) => p.fact);
    this.slice.dynamicImports = [...this.dynamicSpecifiers].sort();
    const requireOnly = [...this.dynamicSpecifiers].filter((s) => !this.followedSpecifiers.has(s)).sort();
    if (requireOnly.length) this.slice.requireOnly = requireOnly;
    return this.slice;
  }

  private tag(what: string): string {
    return `kiln-${what}/${this.projection.schema}/${this.slice.language}`;
  }

  // ---------------------------------------------------------------- declarations

  /** Declarations a statement introduces at this level; returns their indices in `pending`. */
  private declareStatement(stmt: TS.Statement, parent: number, depth = 0): number[] {
    const ts = this.ts;
    const exported = this.hasModifier(stmt, this.SK.ExportKeyword) && parent === -1;
    const isDefault = this.hasModifier(stmt, this.SK.DefaultKeyword);
    const exportNames = (name: string) => (exported ? [isDefault ? 'default' : name] : undefined);
    switch (stmt.kind) {
      case this.SK.FunctionDeclaration: {
        const n = stmt as TS.FunctionDeclaration;
        const name = n.name ? n.name.text : 'default';
        return [this.declare(n, name, 'function', parent, !!n.body, exportNames(name), stmt, depth)];
      }
      case this.SK.ClassDeclaration: {
        const n = stmt as TS.ClassDeclaration;
        const name = n.name ? n.name.text : 'default';
        return [this.declare(n, name, 'class', parent, true, exportNames(name), stmt, depth)];
      }
      case this.SK.InterfaceDeclaration: {
        const n = stmt as TS.InterfaceDeclaration;
        return [this.declare(n, n.name.text, 'interface', parent, false, exportNames(n.name.text), stmt, depth)];
      }
      case this.SK.TypeAliasDeclaration: {
        const n = stmt as TS.TypeAliasDeclaration;
        return [this.declare(n, n.name.text, 'type', parent, false, exportNames(n.name.text), stmt, depth)];
      }
      case this.SK.EnumDeclaration: {
        const n = stmt as TS.EnumDeclaration;
        const kind: DeclKind = this.hasModifier(n, this.SK.ConstKeyword) ? 'const-enum' : 'enum';
        return [this.declare(n, n.name.text, kind, parent, false, exportNames(n.name.text), stmt, depth)];
      }
      case this.SK.ModuleDeclaration: {
        const n = stmt as TS.ModuleDeclaration;
        const name = n.name.text;
        return [this.declare(n, name, 'namespace', parent, false, exportNames(name), stmt, depth)];
      }
      case this.SK.VariableStatement: {
        const n = stmt as TS.VariableStatement;
        const out: number[] = [];
        for (const d of n.declarationList.declarations) {
          for (const name of this.bindingNames(d.name)) {
            out.push(this.declare(d, name, 'variable', parent, false, exportNames(name), stmt, depth));
          }
        }
        return out;
      }
      case this.SK.ExportAssignment: {
        const n = stmt as TS.ExportAssignment;
        if (parent !== -1) return [];
        return n.isExportEquals
          ? [this.declare(n, 'export=', 'export-equals', parent, false, ['export='], stmt, depth)]
          : [this.declare(n, 'default', 'export-default', parent, false, ['default'], stmt, depth)];
      }
      default:
        return [];
    }
  }

  /**
   * Register a declaration and digest it. `docNode` is where its documentation sits (the variable
   * statement for a variable declaration). The digest of a variable includes its statement's
   * modifiers and `const`/`let`/`var`.
   */
  private declare(
    node: TS.Node,
    name: string,
    kind: DeclKind,
    parent: number,
    hasBody: boolean,
    exportedAs: string[] | undefined,
    docNode: TS.Node,
    depth = 0,
  ): number {
    const index = this.pending.length;
    const fact: DeclFact = {
      path: name,
      name,
      kind,
      parent,
      semantic: null,
      doc: null,
      span: this.spanOf(node),
    };
    if (exportedAs) fact.exportedAs = exportedAs;
    this.pending.push({ fact, name, node, hasBody });
    // Documentation of the declaration and of everything inside it (members, parameters, enum
    // members, type-literal members): a `.d.ts` carries all of it.
    const docs = [...leadingDocs(this.text, docNode.pos), ...innerDocs(this.ts, this.sf, node)];
    if (docs.length) fact.doc = digestParts(this.tag('doc'), docs);

    const prefix: string[] = [kind];
    let jsDocTooDeep = false;
    const savedComments = this.declComments;
    const savedUses = this.declUses;
    const savedRefs = this.declRefs;
    this.declComments = [];
    this.declUses = new Set();
    this.declRefs = new Set();
    if (node !== docNode && docNode.kind === this.SK.VariableStatement) {
      const vs = docNode as TS.VariableStatement;
      for (const m of vs.modifiers ?? []) prefix.push(kindName(m.kind));
      prefix.push(`flags:${vs.declarationList.flags & this.flagMask}`);
      // Meaningful comments leading the statement (e.g. `// @ts-ignore`) belong to its declarations.
      this.takeCommentsBefore(docNode, prefix);
      // In JavaScript, JSDoc types on the statement (`/** @type {T} */ const x = …`) type its
      // declarations, which are digested from their own nodes: they are part of their meaning.
      if (this.isJs) {
        try {
          this.withBuffer(prefix, () => this.emitJsDocTypes(docNode, index, depth));
        } catch (e) {
          if (!(e instanceof TooDeep || e instanceof RangeError)) throw e;
          jsDocTooDeep = true;
        }
      }
    }
    const savedCapture = this.capture;
    const capture: HeaderCapture = { root: node, init: headerInitializer(this.ts, node), ranges: new Map(), buf: undefined };
    this.capture = capture;
    let d;
    try {
      d = this.digestNode(node, Ctx.Decl, index, prefix, depth);
    } finally {
      this.capture = savedCapture;
    }
    if (this.declComments.length) fact.comments = this.declComments;
    if (this.declUses.size) fact.uses = [...this.declUses].sort();
    const refs = this.declRefs;
    this.declComments = savedComments;
    this.declUses = savedUses;
    this.declRefs = savedRefs;
    // An ancestor's meaning includes what its nested declarations import and mention.
    for (const u of fact.uses ?? []) savedUses.add(u);
    for (const r of refs) savedRefs.add(r);
    this.pendingRefs.set(index, refs);
    if (parent === -1) this.shapeQueue.push(index);
    if (d.value === null) fact.degraded = d.reason;
    else if (jsDocTooDeep || this.overlapsDeep(node)) fact.degraded = 'too-deep';
    else if (this.overlapsError(node)) fact.degraded = 'syntax-error';
    if (!fact.degraded) {
      const reused = this.headerDigestFromWalk(node, capture);
      const header = reused === null ? this.headerDigest(node) : reused;
      if (header) fact.signature = header;
    }
    fact.semantic = fact.degraded ? null : d.value;
    return index;
  }

  private bindingNames(name: TS.BindingName): string[] {
    const ts = this.ts;
    if (ts.isIdentifier(name)) return [name.text];
    const out: string[] = [];
    for (const el of name.elements) {
      if (ts.isOmittedExpression(el)) continue;
      out.push(...this.bindingNames(el.name));
    }
    return out;
  }

  /** Nested declarations: class members, namespace members, local functions and classes. */
  private nestedDeclaration(node: TS.Node, parent: number, depth: number): number | undefined {
    const ts = this.ts;
    const isStatic = this.hasModifier(node, this.SK.StaticKeyword);
    const member = (k: 'method' | 'property' | 'getter' | 'setter'): DeclKind => (isStatic ? `static-${k}` : k);
    switch (node.kind) {
      case this.SK.MethodDeclaration: {
        const n = node as TS.MethodDeclaration;
        return this.declare(n, this.memberName(n.name), member('method'), parent, !!n.body, undefined, n, depth);
      }
      case this.SK.PropertyDeclaration: {
        const n = node as TS.PropertyDeclaration;
        return this.declare(n, this.memberName(n.name), member('property'), parent, false, undefined, n, depth);
      }
      case this.SK.GetAccessor: {
        const n = node as TS.GetAccessorDeclaration;
        return this.declare(n, this.memberName(n.name), member('getter'), parent, !!n.body, undefined, n, depth);
      }
      case this.SK.SetAccessor: {
        const n = node as TS.SetAccessorDeclaration;
        return this.declare(n, this.memberName(n.name), member('setter'), parent, !!n.body, undefined, n, depth);
      }
      case this.SK.Constructor: {
        const n = node as TS.ConstructorDeclaration;
        return this.declare(n, 'constructor', 'constructor', parent, !!n.body, undefined, n, depth);
      }
      case this.SK.IndexSignature:
        return this.declare(node, isStatic ? 'static [index]' : '[index]', 'index-signature', parent, false, undefined, node, depth);
      case this.SK.ClassStaticBlockDeclaration:
        return this.declare(node, 'static', 'static-block', parent, true, undefined, node, depth);
      case this.SK.FunctionDeclaration: {
        const n = node as TS.FunctionDeclaration;
        return this.declare(n, n.name ? n.name.text : 'default', 'function', parent, !!n.body, undefined, n, depth);
      }
      case this.SK.ClassDeclaration: {
        const n = node as TS.ClassDeclaration;
        return this.declare(n, n.name ? n.name.text : 'default', 'class', parent, true, undefined, n, depth);
      }
      default:
        return undefined;
    }
  }

  private memberName(name: TS.PropertyName): string {
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

  // ---------------------------------------------------------------- digest walk

  private out: string[] = [];

  private withBuffer<T>(buf: string[], f: () => T): T {
    const saved = this.out;
    this.out = buf;
    try {
      return f();
    } finally {
      this.out = saved;
    }
  }

  /** Digest a node into its own buffer. Returns null (with the reason) when it cannot be digested. */
  private digestNode(
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
          const declared = this.declareStatement(s, owner, depth + 1);
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
        const i = this.nestedDeclaration(m, owner, depth + 1);
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
    const p = this.pending[index]!;
    this.out.push('@', p.fact.kind, p.name, p.fact.semantic ?? 'null');
    if (p.fact.semantic === null) this.childDegraded ??= p.fact.degraded ?? 'syntax-error';
  }

  private visit(node: TS.Node | undefined, ctx: Ctx, owner: number, depth: number): void {
    if (!node) return;
    if (depth > MAX_WALK_DEPTH) throw new TooDeep();
    const ts = this.ts;
    const k = node.kind;
    // Nested declarations inside a declaration are digested on their own and referenced by digest.
    if (ctx === Ctx.Decl && (k === this.SK.FunctionDeclaration || k === this.SK.ClassDeclaration)) {
      const i = this.nestedDeclaration(node, owner, depth);
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

  private slot(node: TS.Node | undefined, ctx: Ctx, owner: number, depth: number, propertyName = false): void {
    if (!node) {
      this.out.push('-');
      return;
    }
    if (propertyName) this.emitPropertyName(node);
    else this.visit(node, ctx, owner, depth + 1);
  }

  private visitList(list: TS.NodeArray<TS.Node> | undefined, ctx: Ctx, owner: number, depth: number, label = '['): void {
    if (!list) return;
    const ts = this.ts;
    if (list.length && this.visitAction[list[0]!.kind] === V.Prose) return;
    this.out.push(label);
    for (const n of list) {
      if (n.kind === this.SK.EmptyStatement) continue; // `;` in a statement list is nothing
      this.visit(n, ctx, owner, depth);
    }
    this.out.push(']');
  }

  /** Property keys by value: `a`, `'a'` and `"a"` are one key; `1`, `'1'` and `1.0` are one key. */
  private emitPropertyName(node: TS.Node): void {
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
  private emitJsDocTypes(node: TS.Node, owner: number, depth: number): void {
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
  private declComments: string[] = [];

  private emitComment(value: string): void {
    this.out.push('c', value);
    this.declComments.push(value);
    this.commentsEmitted++;
  }

  /** Meaningful comments emitted so far (a header part that received one is not reused). */
  private commentsEmitted = 0;

  /** Token ranges of the header parts of the declaration being digested (headerDigestFromWalk). */
  private capture: HeaderCapture | undefined;

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
  private takeCommentsBefore(stmt: TS.Node, into: string[]): void {
    const saved = this.out;
    this.out = into;
    this.emitComments(stmt);
    this.out = saved;
  }

  private skipConsumed(): void {
    while (this.commentCursor < this.comments.length && this.consumed[this.commentCursor]) this.commentCursor++;
  }

  // ---------------------------------------------------------------- module facts

  private collectImports(statements: TS.NodeArray<TS.Statement>): void {
    const ts = this.ts;
    for (const s of statements) {
      if (ts.isImportDeclaration(s) && ts.isStringLiteral(s.moduleSpecifier)) {
        const spec = s.moduleSpecifier.text;
        const clause = s.importClause;
        const fact: ImportFact = { specifier: spec, typeOnly: !!clause?.isTypeOnly, bindings: [] };
        if (clause?.name) fact.bindings.push({ imported: 'default', local: clause.name.text, typeOnly: !!clause.isTypeOnly });
        const nb = clause?.namedBindings;
        if (nb && ts.isNamespaceImport(nb)) fact.bindings.push({ imported: '*', local: nb.name.text, typeOnly: !!clause?.isTypeOnly });
        if (nb && ts.isNamedImports(nb)) {
          for (const el of nb.elements) {
            fact.bindings.push({
              imported: el.propertyName ? moduleExportName(el.propertyName) : el.name.text,
              local: el.name.text,
              typeOnly: !!clause?.isTypeOnly || el.isTypeOnly,
            });
          }
        }
        for (const b of fact.bindings) this.importSources.set(b.local, { specifier: spec, imported: b.imported });
        this.slice.imports.push(fact);
      } else if (ts.isImportEqualsDeclaration(s) && ts.isExternalModuleReference(s.moduleReference) && ts.isStringLiteral(s.moduleReference.expression)) {
        const spec = s.moduleReference.expression.text;
        this.slice.imports.push({ specifier: spec, typeOnly: s.isTypeOnly, bindings: [{ imported: '=', local: s.name.text, typeOnly: s.isTypeOnly }] });
        this.importSources.set(s.name.text, { specifier: spec, imported: '=' });
      }
    }
  }

  private collectModuleFacts(stmt: TS.Statement): void {
    const ts = this.ts;
    if (ts.isExportDeclaration(stmt)) {
      const spec = stmt.moduleSpecifier && ts.isStringLiteral(stmt.moduleSpecifier) ? stmt.moduleSpecifier.text : undefined;
      const clause = stmt.exportClause;
      if (spec !== undefined) {
        const re: ReExportFact = { specifier: spec, typeOnly: stmt.isTypeOnly, names: '*' };
        if (clause && ts.isNamespaceExport(clause)) re.names = [{ imported: '*', exported: moduleExportName(clause.name) }];
        else if (clause && ts.isNamedExports(clause))
          re.names = clause.elements.map((el) => ({
            imported: el.propertyName ? moduleExportName(el.propertyName) : moduleExportName(el.name),
            exported: moduleExportName(el.name),
          }));
        this.slice.reexports.push(re);
      } else if (clause && ts.isNamedExports(clause)) {
        for (const el of clause.elements) {
          const ex: LocalExportFact = {
            exported: moduleExportName(el.name),
            local: el.propertyName ? moduleExportName(el.propertyName) : moduleExportName(el.name),
          };
          this.slice.exports.push(ex);
        }
      }
    } else if (ts.isExportAssignment(stmt) && ts.isIdentifier(stmt.expression)) {
      this.slice.exports.push({ exported: stmt.isExportEquals ? 'export=' : 'default', local: stmt.expression.text });
    }
  }

  private isHoisted(stmt: TS.Statement): boolean {
    const ts = this.ts;
    if (this.variant === 'dts') return true; // a declaration file evaluates nothing
    if (this.hasModifier(stmt, this.SK.DeclareKeyword)) return true;
    switch (stmt.kind) {
      case this.SK.FunctionDeclaration:
      case this.SK.InterfaceDeclaration:
      case this.SK.TypeAliasDeclaration:
        return true;
      case this.SK.ImportDeclaration:
        return !!(stmt as TS.ImportDeclaration).importClause?.isTypeOnly;
      case this.SK.ExportDeclaration:
        return (stmt as TS.ExportDeclaration).isTypeOnly;
      case this.SK.ModuleDeclaration:
        return !this.isInstantiated(stmt as TS.ModuleDeclaration);
      default:
        return false;
    }
  }

  /** A namespace that holds only types emits no code, so its position is unobservable. */
  private isInstantiated(n: TS.ModuleDeclaration): boolean {
    const ts = this.ts;
    if (ts.isStringLiteral(n.name)) return false;
    let body = n.body;
    while (body && ts.isModuleDeclaration(body)) body = body.body;
    if (!body || !ts.isModuleBlock(body)) return false;
    return body.statements.some((s) => {
      if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) return false;
      if (ts.isModuleDeclaration(s)) return this.isInstantiated(s);
      if (ts.isImportDeclaration(s) && s.importClause?.isTypeOnly) return false;
      if (ts.isExportDeclaration(s) && s.isTypeOnly) return false;
      if (this.hasModifier(s, this.SK.DeclareKeyword)) return false;
      return true;
    });
  }

  // ---------------------------------------------------------------- identities

  /**
   * Separate same-named siblings: within one parent, declarations sharing (name, kind) get a
   * signature digest — implementations keep none when they are the only one with a body — and any
   * that still collide get a dense ordinal in source order. A name shared by siblings of different
   * kinds (class + interface merge) marks the kind in its children's path prefix.
   */
  private finalizeIdentities(): void {
    const byParent = new Map<number, number[]>();
    this.pending.forEach((p, i) => {
      const list = byParent.get(p.fact.parent);
      if (list) list.push(i);
      else byParent.set(p.fact.parent, [i]);
    });
    const prefixOf = new Map<number, string>();
    const visitParent = (parent: number) => {
      const children = byParent.get(parent) ?? [];
      const groups = new Map<string, number[]>();
      const kindsByName = new Map<string, Set<string>>();
      for (const i of children) {
        const p = this.pending[i]!;
        const key = `${p.name}\u0000${p.fact.kind}`;
        (groups.get(key) ?? groups.set(key, []).get(key)!).push(i);
        (kindsByName.get(p.name) ?? kindsByName.set(p.name, new Set()).get(p.name)!).add(p.fact.kind);
      }
      const parentPrefix = parent === -1 ? '' : `${prefixOf.get(parent)}.`;
      const segment = new Map<number, string>();
      for (const members of groups.values()) {
        for (const i of members) segment.set(i, nameSegment(this.pending[i]!.name));
        if (members.length < 2) continue;
        // Same-named implementations (local functions in two branches, duplicate JS functions) are
        // told apart by a dense ordinal only; overload signatures and merged declarations by their
        // signature, the single implementation of an overload set keeping the plain name.
        const withBody = members.filter((i) => this.pending[i]!.hasBody);
        const needSig = withBody.length === members.length ? [] : members.filter((i) => !(withBody.length === 1 && withBody[0] === i));
        for (const i of needSig) {
          const sig = this.signatureDigest(this.pending[i]!.node);
          this.pending[i]!.fact.sig = sig;
          segment.set(i, `${segment.get(i)}~${sig}`);
        }
        const bySeg = new Map<string, number[]>();
        for (const i of members) (bySeg.get(segment.get(i)!) ?? bySeg.set(segment.get(i)!, []).get(segment.get(i)!)!).push(i);
        for (const same of bySeg.values()) {
          if (same.length < 2) continue;
          same.forEach((i, n) => {
            this.pending[i]!.fact.ordinal = n + 1;
            segment.set(i, `${segment.get(i)}#${n + 1}`);
          });
        }
      }
      for (const i of children) {
        const p = this.pending[i]!;
        p.fact.path = parentPrefix + segment.get(i)!;
        const kindMark = (kindsByName.get(p.name)?.size ?? 1) > 1 ? `@${p.fact.kind}` : '';
        prefixOf.set(i, p.fact.path + kindMark);
      }
      for (const i of children) visitParent(i);
    };
    visitParent(-1);
  }

  // ---------------------------------------------------------------- external shape

  /**
   * What a *consumer* of a module-level declaration can observe (SPEC §4, external closure): its
   * signature when the type is written down, its whole meaning when the type is inferred from its
   * body, class shapes with private member names but not their types or bodies, full type
   * declarations and enums. `shapeRefs` are the names that projection mentions; `refs` those the
   * whole declaration mentions. Both are filtered to module-level names and imported bindings.
   */
  private finalizeShapes(): void {
    const moduleNames = new Set<string>();
    for (const p of this.pending) if (p.fact.parent === -1) moduleNames.add(p.name);
    for (const local of this.importSources.keys()) moduleNames.add(local);
    // Sorted module-level names among `names` (a set: already unique).
    const keep = (names: ReadonlySet<string>) => {
      const out: string[] = [];
      for (const n of names) if (moduleNames.has(n)) out.push(n);
      return out.sort();
    };
    for (const i of this.shapeQueue) {
      const p = this.pending[i]!;
      const refs = this.pendingRefs.get(i) ?? new Set<string>();
      if (p.fact.semantic === null) continue;
      const shapeRefs = new Set<string>();
      const projection = this.shapeProjection(p, shapeRefs);
      const kept = keep(refs);
      if (projection === null) {
        p.fact.shape = digestParts(this.tag('shape-full'), [p.fact.kind, p.fact.semantic]);
        p.fact.shapeRefs = [...kept];
      } else {
        p.fact.shape = digestParts(this.tag('shape'), [p.fact.kind, ...projection]);
        p.fact.shapeRefs = keep(shapeRefs);
      }
      p.fact.refs = kept;
    }
  }

  /** The shape tokens, or null when the whole declaration is what consumers observe. */
  private shapeProjection(p: PendingDecl, refs: Set<string>): string[] | null {
    const ts = this.ts;
    const node = p.node;
    // Declaration files and JavaScript: types are the whole content, or come from inference/JSDoc.
    if (this.variant === 'dts' || this.isJs) return null;
    const buf: string[] = [];
    const savedCursor = this.commentCursor;
    const savedRefs = this.declRefs;
    this.commentCursor = this.comments.length;
    this.declRefs = refs;
    try {
      const ok = this.withBuffer(buf, () => this.emitShape(node, p.name));
      return ok ? buf : null;
    } catch (e) {
      if (e instanceof TooDeep || e instanceof RangeError) return null;
      throw e;
    } finally {
      this.commentCursor = savedCursor;
      this.declRefs = savedRefs;
    }
    void ts;
  }

  /** Emit the shape of a module-level declaration; false when it must be taken whole. */
  private emitShape(node: TS.Node, name: string): boolean {
    const ts = this.ts;
    const signature = (f: TS.SignatureDeclaration, needsReturnType: boolean): boolean => {
      if (needsReturnType && !f.type) return false; // return type inferred from the body
      this.visitList((f as { modifiers?: TS.NodeArray<TS.Node> }).modifiers, Ctx.Stmt, -1, 0);
      if ((f as { asteriskToken?: TS.Node }).asteriskToken) this.out.push('generator');
      this.visitList(f.typeParameters, Ctx.Stmt, -1, 0);
      this.visitList(f.parameters, Ctx.Stmt, -1, 0);
      this.slot(f.type, Ctx.Stmt, -1, 0);
      return true;
    };
    if (ts.isFunctionDeclaration(node)) {
      this.out.push('fn', name);
      return signature(node, !!node.body);
    }
    if (ts.isVariableDeclaration(node)) {
      this.out.push('var', name);
      this.visit(node.name, Ctx.Stmt, -1, 0);
      if (node.type) {
        this.visit(node.type, Ctx.Stmt, -1, 0);
        return true;
      }
      const init = node.initializer;
      // `const f = (x: A): B => …`: the type is written down on the function itself.
      if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) return signature(init, true);
      return false;
    }
    if (ts.isClassDeclaration(node)) {
      this.out.push('class', name);
      this.visitList(node.modifiers, Ctx.Stmt, -1, 0);
      this.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
      this.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
      let hashPrivate = false;
      for (const m of node.members) {
        if (ts.isSemicolonClassElement(m) || ts.isClassStaticBlockDeclaration(m)) continue;
        const mname = (m as { name?: TS.PropertyName }).name;
        if (mname && ts.isPrivateIdentifier(mname)) {
          hashPrivate = true; // `#private` members make the class nominal; their names do not show
          continue;
        }
        const isPrivate = this.hasModifier(m, this.SK.PrivateKeyword);
        this.out.push('member', kindName(m.kind));
        if (isPrivate) {
          // A private member shows as `private name;`: its existence and name, not its type.
          this.out.push('private', this.hasModifier(m, this.SK.StaticKeyword) ? 'static' : 'instance');
          if (mname) this.emitPropertyName(mname);
          continue;
        }
        if (ts.isConstructorDeclaration(m)) {
          for (const param of m.parameters) {
            const paramPrivate = this.hasModifier(param, this.SK.PrivateKeyword);
            this.out.push('param');
            if (paramPrivate) {
              this.out.push('private');
              this.visit(param.name, Ctx.Stmt, -1, 0);
            } else this.visit(param, Ctx.Stmt, -1, 0);
          }
          continue;
        }
        if (ts.isMethodDeclaration(m) || ts.isGetAccessorDeclaration(m)) {
          if (mname) this.emitPropertyName(mname);
          this.slot(m.questionToken, Ctx.Stmt, -1, 0);
          if (!signature(m, !!m.body)) {
            // Inferred return type: the member's whole body is observable.
            const member = this.pending.findIndex((q) => q.node === m);
            const sem = member === -1 ? null : this.pending[member]!.fact.semantic;
            if (!sem) return false;
            this.out.push('inferred', sem);
            for (const r of this.pendingRefs.get(member) ?? []) this.declRefs.add(r);
          }
          continue;
        }
        if (ts.isSetAccessorDeclaration(m)) {
          if (mname) this.emitPropertyName(mname);
          signature(m, false);
          continue;
        }
        if (ts.isPropertyDeclaration(m)) {
          this.visitList(m.modifiers, Ctx.Stmt, -1, 0);
          this.emitPropertyName(m.name);
          this.slot(m.questionToken ?? m.exclamationToken, Ctx.Stmt, -1, 0);
          if (m.type) this.visit(m.type, Ctx.Stmt, -1, 0);
          else if (m.initializer) this.visit(m.initializer, Ctx.Stmt, -1, 0); // inferred from it
          continue;
        }
        // Index signatures and anything else: whole.
        this.visit(m, Ctx.Stmt, -1, 0);
      }
      if (hashPrivate) this.out.push('#private');
      return true;
    }
    // Interfaces, type aliases, enums (their values are inlined), namespaces, default exports: whole.
    return false;
  }

  /** Where the walk is: buffer length, comments emitted, declarations created. */
  private markPart(): Mark {
    return [this.out.length, this.commentsEmitted, this.pending.length];
  }

  /**
   * Record the tokens a header part produced. A part during which a meaningful comment was emitted or
   * a nested declaration created is recorded as unusable (the header walk would produce other tokens).
   */
  private recordPart(cap: HeaderCapture, part: object, mark: Mark): void {
    if (cap.buf === undefined) cap.buf = this.out;
    const clean = cap.buf === this.out && this.commentsEmitted === mark[1] && this.pending.length === mark[2];
    cap.ranges.set(part, clean ? [mark[0], this.out.length] : null);
  }

  /**
   * The header digest from the tokens the digest walk already produced for the header's parts: the
   * same nodes visited the same way as headerDigest's own walk (the walk's context only changes nested
   * declarations and comments, and a part in which either appeared is not reused), assembled in the
   * same order with the same '-' for absent slots. Returns null when a part is not available: then
   * headerDigest walks the header itself.
   */
  private headerDigestFromWalk(node: TS.Node, cap: HeaderCapture): string | undefined | null {
    if (cap.buf === undefined) return null;
    const ts = this.ts;
    const buf = cap.buf;
    const parts: string[] = [];
    const list = (l: TS.NodeArray<TS.Node> | undefined): boolean => {
      if (!l) return true; // visitList(undefined) emits nothing
      const r = cap.ranges.get(l);
      if (!r) return false;
      for (let i = r[0]; i < r[1]; i++) parts.push(buf[i]!);
      return true;
    };
    const slot = (n: TS.Node | undefined): boolean => {
      if (!n) {
        parts.push('-');
        return true;
      }
      const r = cap.ranges.get(n);
      if (!r) return false;
      for (let i = r[0]; i < r[1]; i++) parts.push(buf[i]!);
      return true;
    };
    if (!list((node as { modifiers?: TS.NodeArray<TS.Node> }).modifiers)) return null;
    if (ts.isFunctionLike(node)) {
      const f = node as TS.SignatureDeclaration;
      if (!list(f.typeParameters) || !list(f.parameters) || !slot(f.type)) return null;
    } else if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
      if (!list(node.typeParameters) || !list(node.heritageClauses)) return null;
    } else if (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) {
      if (!slot(node.type)) return null;
      const init = node.initializer;
      if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
        if (!list(init.typeParameters) || !list(init.parameters) || !slot(init.type)) return null;
      }
    }
    return parts.length ? digestParts(this.tag('header'), parts) : undefined;
  }

  /** Header digest (explanatory): the signature of function-likes, the heritage of classes. */
  private headerDigest(node: TS.Node): string | undefined {
    const ts = this.ts;
    const buf: string[] = [];
    const savedCursor = this.commentCursor;
    this.commentCursor = this.comments.length;
    try {
      this.withBuffer(buf, () => {
        this.visitList((node as { modifiers?: TS.NodeArray<TS.Node> }).modifiers, Ctx.Stmt, -1, 0);
        if (ts.isFunctionLike(node)) {
          const f = node as TS.SignatureDeclaration;
          this.visitList(f.typeParameters, Ctx.Stmt, -1, 0);
          this.visitList(f.parameters, Ctx.Stmt, -1, 0);
          this.slot(f.type, Ctx.Stmt, -1, 0);
        } else if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
          this.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
          this.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
        } else if (ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node)) {
          this.slot(node.type, Ctx.Stmt, -1, 0);
          const init = node.initializer;
          if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init))) {
            this.visitList(init.typeParameters, Ctx.Stmt, -1, 0);
            this.visitList(init.parameters, Ctx.Stmt, -1, 0);
            this.slot(init.type, Ctx.Stmt, -1, 0);
          } else return;
        } else return;
      });
    } catch (e) {
      if (e instanceof TooDeep || e instanceof RangeError) return undefined;
      throw e;
    } finally {
      this.commentCursor = savedCursor;
    }
    return buf.length ? digestParts(this.tag('header'), buf) : undefined;
  }

  /** Digest of what separates overloads and merged declarations: their signature, not their body. */
  private signatureDigest(node: TS.Node): string {
    const ts = this.ts;
    const buf: string[] = [];
    this.withBuffer(buf, () => {
      const savedCursor = this.commentCursor;
      const savedComments = this.comments.length;
      // Signature parts are re-walked; comments were consumed on the first walk, so none are emitted.
      this.commentCursor = savedComments;
      try {
        if (ts.isFunctionLike(node)) {
          const f = node as TS.SignatureDeclaration;
          this.visitList(f.typeParameters, Ctx.Stmt, -1, 0);
          this.visitList(f.parameters, Ctx.Stmt, -1, 0);
          this.slot(f.type, Ctx.Stmt, -1, 0);
        } else if (ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) {
          this.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
          this.visitList(node.heritageClauses, Ctx.Stmt, -1, 0);
          const names = (node.members as TS.NodeArray<TS.Node>).map((m) => {
            const nm = (m as { name?: TS.PropertyName }).name;
            return `${kindName(m.kind)}:${nm ? this.memberName(nm) : ''}`;
          });
          buf.push(...names.sort());
        } else if (ts.isModuleDeclaration(node)) {
          let body = node.body;
          while (body && ts.isModuleDeclaration(body)) body = body.body;
          const names: string[] = [];
          if (body && ts.isModuleBlock(body)) {
            for (const s of body.statements) {
              const nm = (s as { name?: TS.Node }).name;
              names.push(`${kindName(s.kind)}:${nm && ts.isIdentifier(nm) ? nm.text : ''}`);
            }
          }
          buf.push(...names.sort());
        } else if (ts.isEnumDeclaration(node)) {
          buf.push(...node.members.map((m) => this.memberName(m.name)).sort());
        } else if (ts.isVariableDeclaration(node)) {
          this.slot(node.type, Ctx.Stmt, -1, 0);
        } else if (ts.isTypeAliasDeclaration(node)) {
          this.visitList(node.typeParameters, Ctx.Stmt, -1, 0);
        }
      } catch (e) {
        if (!(e instanceof TooDeep || e instanceof RangeError)) throw e;
        buf.push('too-deep');
      } finally {
        this.commentCursor = savedCursor;
      }
    });
    return digestParts(this.tag('sig'), buf).slice(0, 8);
  }

  // ---------------------------------------------------------------- helpers

  private hasModifier(node: TS.Node, kind: TS.SyntaxKind): boolean {
    const mods = (node as { modifiers?: TS.NodeArray<TS.ModifierLike> }).modifiers;
    return !!mods && mods.some((m) => m.kind === kind);
  }

  private spanOf(node: TS.Node): Span {
    const start = this.sf.getLineAndCharacterOfPosition(node.getStart(this.sf));
    const end = this.sf.getLineAndCharacterOfPosition(node.end);
    return { startLine: start.line + 1, startColumn: start.character + 1, endLine: end.line + 1, endColumn: end.character + 1 };
  }

  private overlapsDeep(node: TS.Node): boolean {
    if (!this.deepRanges.length) return false;
    const start = node.getStart(this.sf);
    return this.deepRanges.some((r) => r.anchor < node.end && r.end > start);
  }

  private overlapsError(node: TS.Node): boolean {
    if (!this.errorRanges.length) return false;
    const start = node.getStart(this.sf);
    const end = node.end;
    return this.errorRanges.some((e) => (e.start === e.end ? e.start >= start && e.start <= end : e.start < end && e.end > start));
  }
}

const EMPTY_ARGS = [] as unknown as TS.NodeArray<TS.Expression>;

/** Buffer length, meaningful comments emitted, declarations created — at the start of a header part. */
type Mark = [number, number, number];

interface HeaderCapture {
  /** The declaration node whose children are recorded, and its function initializer, if any. */
  root: TS.Node;
  init: TS.Node | undefined;
  /** Header part (child node or node list) → its [start, end) in `buf`, or null when not reusable. */
  ranges: Map<object, [number, number] | null>;
  /** The declaration's digest buffer. */
  buf: string[] | undefined;
}

/** The arrow or function expression initialising a variable or property (its signature is the header). */
function headerInitializer(ts: typeof TS, node: TS.Node): TS.Node | undefined {
  if (!ts.isVariableDeclaration(node) && !ts.isPropertyDeclaration(node)) return undefined;
  const init = node.initializer;
  return init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init : undefined;
}

function moduleExportName(n: TS.ModuleExportName): string {
  return n.text;
}

function isProseKind(ts: typeof TS, k: TS.SyntaxKind): boolean {
  return k === ts.SyntaxKind.JSDocText || k === ts.SyntaxKind.JSDocLink || k === ts.SyntaxKind.JSDocLinkCode || k === ts.SyntaxKind.JSDocLinkPlain;
}

let typeTagKinds: Set<number> | undefined;
function TYPE_TAG_KINDS(ts: typeof TS): Set<number> {
  if (!typeTagKinds) {
    const SK = ts.SyntaxKind;
    typeTagKinds = new Set([
      SK.JSDocTypeTag, SK.JSDocParameterTag, SK.JSDocReturnTag, SK.JSDocTypedefTag, SK.JSDocCallbackTag,
      SK.JSDocTemplateTag, SK.JSDocThisTag, SK.JSDocEnumTag, SK.JSDocSatisfiesTag, SK.JSDocImplementsTag,
      SK.JSDocAugmentsTag, SK.JSDocOverloadTag, SK.JSDocImportTag, SK.JSDocPropertyTag, SK.JSDocClassTag,
      SK.JSDocPublicTag, SK.JSDocPrivateTag, SK.JSDocProtectedTag, SK.JSDocReadonlyTag, SK.JSDocOverrideTag,
    ]);
  }
  return typeTagKinds;
}

/** Trivia then a single `;`: the rest of a statement after a comment before its terminator. */
const ONLY_SEMICOLON_RE = /^(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/)*;$/;

let leftOperandParentsSet: Set<number> | undefined;
/** Nodes whose first child (always visited first) starts where they start. */
const LEFT_OPERAND_PARENTS = {
  has(k: number): boolean {
    if (!leftOperandParentsSet) {
      const SK = typescript().SyntaxKind;
      leftOperandParentsSet = new Set([
        SK.PropertyAccessExpression, SK.ElementAccessExpression, SK.CallExpression, SK.TaggedTemplateExpression,
        SK.BinaryExpression, SK.ConditionalExpression, SK.PostfixUnaryExpression, SK.AsExpression,
        SK.SatisfiesExpression, SK.NonNullExpression, SK.ExpressionWithTypeArguments, SK.ExpressionStatement,
      ]);
    }
    return leftOperandParentsSet.has(k);
  },
};

let propertyNameParentsSet: Set<number> | undefined;
const PROPERTY_NAME_PARENTS = {
  has(k: number): boolean {
    if (!propertyNameParentsSet) {
      const SK = typescript().SyntaxKind;
      propertyNameParentsSet = new Set([
        SK.PropertyAssignment, SK.PropertyDeclaration, SK.MethodDeclaration, SK.PropertySignature,
        SK.MethodSignature, SK.GetAccessor, SK.SetAccessor, SK.EnumMember,
      ]);
    }
    return propertyNameParentsSet.has(k);
  },
};

/** What visitNodeBody does with a node kind; None is the generic path. */
const enum V {
  None,
  Identifier,
  PrivateIdentifier,
  StringLiteral,
  NumericLiteral,
  BigIntLiteral,
  Template,
  RegularExpressionLiteral,
  JsxText,
  JsxExpression,
  Prose,
  ParenthesizedExpression,
  ParenthesizedType,
  ExpressionStatement,
  EmptyStatement,
  ForStatement,
  BindingElement,
  TypeParameter,
  CallExpression,
  ImportType,
  NewExpression,
  SemicolonClassElement,
}

let visitActionTable: Uint8Array | undefined;
function visitActions(ts: typeof TS): Uint8Array {
  if (visitActionTable) return visitActionTable;
  const SK = ts.SyntaxKind;
  const t = new Uint8Array(SK.Count + 1);
  const set = (kinds: number[], v: V) => {
    for (const k of kinds) t[k] = v;
  };
  set([SK.Identifier], V.Identifier);
  set([SK.PrivateIdentifier], V.PrivateIdentifier);
  set([SK.StringLiteral], V.StringLiteral);
  set([SK.NumericLiteral], V.NumericLiteral);
  set([SK.BigIntLiteral], V.BigIntLiteral);
  set([SK.NoSubstitutionTemplateLiteral, SK.TemplateHead, SK.TemplateMiddle, SK.TemplateTail], V.Template);
  set([SK.RegularExpressionLiteral], V.RegularExpressionLiteral);
  set([SK.JsxText], V.JsxText);
  set([SK.JsxExpression], V.JsxExpression);
  set([SK.JSDocText, SK.JSDocLink, SK.JSDocLinkCode, SK.JSDocLinkPlain], V.Prose);
  set([SK.ParenthesizedExpression], V.ParenthesizedExpression);
  set([SK.ParenthesizedType], V.ParenthesizedType);
  set([SK.ExpressionStatement], V.ExpressionStatement);
  set([SK.EmptyStatement], V.EmptyStatement);
  set([SK.ForStatement], V.ForStatement);
  set([SK.BindingElement], V.BindingElement);
  set([SK.TypeParameter], V.TypeParameter);
  set([SK.CallExpression], V.CallExpression);
  set([SK.ImportType], V.ImportType);
  set([SK.NewExpression], V.NewExpression);
  set([SK.SemicolonClassElement], V.SemicolonClassElement);
  return (visitActionTable = t);
}

/** What emitFlags adds for a node kind. */
const enum F {
  None,
  Operator,
  Token,
  KeywordToken,
  ImportClause,
  TypeOnly,
  TypeOf,
  ExportEquals,
}

let flagActionTable: Uint8Array | undefined;
function flagActions(ts: typeof TS): Uint8Array {
  if (flagActionTable) return flagActionTable;
  const SK = ts.SyntaxKind;
  const t = new Uint8Array(SK.Count + 1);
  for (const k of [SK.PrefixUnaryExpression, SK.PostfixUnaryExpression, SK.TypeOperator]) t[k] = F.Operator;
  for (const k of [SK.HeritageClause, SK.ImportAttributes]) t[k] = F.Token;
  t[SK.MetaProperty] = F.KeywordToken;
  t[SK.ImportClause] = F.ImportClause;
  for (const k of [SK.ImportSpecifier, SK.ExportSpecifier, SK.ExportDeclaration, SK.ImportEqualsDeclaration]) t[k] = F.TypeOnly;
  t[SK.ImportType] = F.TypeOf;
  t[SK.ExportAssignment] = F.ExportEquals;
  return (flagActionTable = t);
}

let propertyNameParentTable: Uint8Array | undefined;
function propertyNameParents(ts: typeof TS): Uint8Array {
  if (propertyNameParentTable) return propertyNameParentTable;
  const t = new Uint8Array(ts.SyntaxKind.Count + 1);
  for (let k = 0; k < t.length; k++) if (PROPERTY_NAME_PARENTS.has(k)) t[k] = 1;
  return (propertyNameParentTable = t);
}
