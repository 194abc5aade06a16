/**
 * The extractor: one walk over a file's syntax tree that discovers declarations, gives each a
 * span-free local identity, and computes its semantic and doc digests plus the module's evaluation
 * order. Output is a slice (facts/slice.ts).
 *
 * This module owns the walk and the facts (declarations, imports, exports, evaluation order); it drives
 * the stages that own the rest: the canonical token encoder (digest/encoder.ts), header and signature
 * digests (digest/signature.ts), external shapes (digest/shape.ts) and identity paths
 * (identity/finalize.ts).
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
import { findMeaningfulComments, innerDocs, leadingDocs } from './comments.js';
import { digestParts, sha256Hex } from '../digest/hash.js';
import { Ctx, Encoder, headerInitializer, MAX_WALK_DEPTH, TooDeep, type DeclarationWalk, type HeaderCapture, type PendingDecl } from '../digest/encoder.js';
import { hasModifier, kindName } from '../digest/kinds.js';
import { finalizeShapes } from '../digest/shape.js';
import { declarationHeader, signatureDigest } from '../digest/signature.js';
import { finalizeIdentities } from '../identity/finalize.js';
import { EXTRACTOR_VERSION, DIGEST_SCHEMA, PREVIOUS_DIGEST_SCHEMA } from '../version.js';
import type { DeclFact, DeclKind, ImportFact, LocalExportFact, ReExportFact, Slice, SliceDiagnostic, Span } from './slice.js';
import { begin, end, endFailed } from '../trace/record.js';

export { MAX_WALK_DEPTH } from '../digest/encoder.js';

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
  // Trace spans (trace/): the TypeScript parse, then the walk that makes the facts and digests.
  const parsing = begin('parse');
  try {
    parsed = parseTypeScript(text, variant);
  } catch (e) {
    endFailed(parsing, e);
    if (e instanceof RangeError) {
      base.module = { digest: digestParts(`kiln-raw/${schema}`, [contentHash]), order: [], hoisted: [], pragmas: [], degraded: 'too-deep' };
      base.diagnostics.push({ code: 'KILN_NESTING_TOO_DEEP', message: 'the parser ran out of stack: nesting is too deep to parse' });
      return base;
    }
    throw e;
  }
  end(parsing);
  const syntaxErrors = deep.length ? parsed.syntaxErrors.filter((e) => !inDeepRegion(deep, text, e.start)) : parsed.syntaxErrors;
  const digesting = begin('digest');
  try {
    const slice = new SliceBuilder(text, parsed.sourceFile, syntaxErrors, variant, projection, base, deep).build();
    end(digesting);
    return slice;
  } catch (e) {
    endFailed(digesting, e);
    throw e;
  }
}

class SliceBuilder implements DeclarationWalk {
  private readonly ts = typescript();
  private readonly SK: typeof TS.SyntaxKind;
  private readonly isJs: boolean;
  /** The canonical token encoder this walk drives; it calls back for nested declarations. */
  private readonly enc: Encoder;
  private readonly pending: PendingDecl[] = [];
  /** Module-level declaration nodes awaiting their shape digest (computed once all names are known). */
  private readonly shapeQueue: number[] = [];
  private readonly pendingRefs = new Map<number, Set<string>>();
  private readonly diagnostics: SliceDiagnostic[];
  private readonly errorRanges: { start: number; end: number }[];

  constructor(
    private readonly text: string,
    private readonly sf: TS.SourceFile,
    syntaxErrors: { start: number; end: number; message: string; tsCode: number }[],
    private readonly variant: Variant,
    projection: Projection,
    private readonly slice: Slice,
    private readonly deepRanges: DeepRegion[] = [],
  ) {
    this.SK = this.ts.SyntaxKind;
    this.isJs = variant === 'js' || variant === 'jsx';
    const comments = projection.meaningfulComments ? findMeaningfulComments(text, variant === 'tsx' || variant === 'jsx') : [];
    this.enc = new Encoder(text, sf, this.isJs, projection.schema, slice.language, comments, this.pending, this);
    this.diagnostics = slice.diagnostics;
    this.errorRanges = syntaxErrors.map((e) => ({ start: e.start, end: e.end }));
    for (const e of syntaxErrors.slice(0, 20)) {
      const lc = sf.getLineAndCharacterOfPosition(e.start);
      this.diagnostics.push({ code: 'KILN_SYNTAX_ERROR', message: `TS${e.tsCode}: ${e.message}`, line: lc.line + 1, column: lc.character + 1 });
    }
    if (syntaxErrors.length > 20) {
      this.diagnostics.push({ code: 'KILN_SYNTAX_ERROR', message: `${syntaxErrors.length - 20} more syntax errors not shown` });
    }
  }

  build(): Slice {
    const sf = this.sf;
    const tag = this.enc.tag('module');
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
    this.enc.comments.forEach((c, i) => {
      if (c.fileLevel || (c.pos < firstStart && c.value.startsWith('legal:'))) {
        pragmas.push(c.value);
        this.enc.consumed[i] = true;
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
        const d = this.enc.digestNode(stmt, Ctx.Stmt, -1);
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
    this.enc.comments.forEach((c, i) => {
      if (!this.enc.consumed[i]) {
        pragmas.push(`trailing:${c.value}`);
        this.enc.consumed[i] = true;
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
      ...(statementDocs.length ? { docs: digestParts(this.enc.tag('module-doc'), statementDocs) } : {}),
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
    finalizeIdentities(this.pending, (node) => signatureDigest(this.enc, node));
    finalizeShapes(this.enc, this.variant, this.shapeQueue, this.pendingRefs);
    this.slice.decls = this.pending.map((p) => p.fact);
    this.slice.dynamicImports = [...this.enc.dynamicSpecifiers].sort();
    const requireOnly = [...this.enc.dynamicSpecifiers].filter((s) => !this.enc.followedSpecifiers.has(s)).sort();
    if (requireOnly.length) this.slice.requireOnly = requireOnly;
    return this.slice;
  }

  // ---------------------------------------------------------------- declarations

  /** Declarations a statement introduces at this level; returns their indices in `pending`. */
  declareStatement(stmt: TS.Statement, parent: number, depth = 0): number[] {
    const exported = hasModifier(stmt, this.SK.ExportKeyword) && parent === -1;
    const isDefault = hasModifier(stmt, this.SK.DefaultKeyword);
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
        const kind: DeclKind = hasModifier(n, this.SK.ConstKeyword) ? 'const-enum' : 'enum';
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
    const enc = this.enc;
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
    if (docs.length) fact.doc = digestParts(enc.tag('doc'), docs);

    const prefix: string[] = [kind];
    let jsDocTooDeep = false;
    const savedComments = enc.declComments;
    const savedUses = enc.declUses;
    const savedRefs = enc.declRefs;
    enc.declComments = [];
    enc.declUses = new Set();
    enc.declRefs = new Set();
    if (node !== docNode && docNode.kind === this.SK.VariableStatement) {
      const vs = docNode as TS.VariableStatement;
      for (const m of vs.modifiers ?? []) prefix.push(kindName(m.kind));
      prefix.push(`flags:${vs.declarationList.flags & enc.flagMask}`);
      // Meaningful comments leading the statement (e.g. `// @ts-ignore`) belong to its declarations.
      enc.takeCommentsBefore(docNode, prefix);
      // In JavaScript, JSDoc types on the statement (`/** @type {T} */ const x = …`) type its
      // declarations, which are digested from their own nodes: they are part of their meaning.
      if (this.isJs) {
        try {
          enc.withBuffer(prefix, () => enc.emitJsDocTypes(docNode, index, depth));
        } catch (e) {
          if (!(e instanceof TooDeep || e instanceof RangeError)) throw e;
          jsDocTooDeep = true;
        }
      }
    }
    const savedCapture = enc.capture;
    const capture: HeaderCapture = { root: node, init: headerInitializer(this.ts, node), ranges: new Map(), buf: undefined };
    enc.capture = capture;
    let d;
    try {
      d = enc.digestNode(node, Ctx.Decl, index, prefix, depth);
    } finally {
      enc.capture = savedCapture;
    }
    if (enc.declComments.length) fact.comments = enc.declComments;
    if (enc.declUses.size) fact.uses = [...enc.declUses].sort();
    const refs = enc.declRefs;
    enc.declComments = savedComments;
    enc.declUses = savedUses;
    enc.declRefs = savedRefs;
    // An ancestor's meaning includes what its nested declarations import and mention.
    for (const u of fact.uses ?? []) savedUses.add(u);
    for (const r of refs) savedRefs.add(r);
    this.pendingRefs.set(index, refs);
    if (parent === -1) this.shapeQueue.push(index);
    if (d.value === null) fact.degraded = d.reason;
    else if (jsDocTooDeep || this.overlapsDeep(node)) fact.degraded = 'too-deep';
    else if (this.overlapsError(node)) fact.degraded = 'syntax-error';
    if (!fact.degraded) {
      const header = declarationHeader(this.enc, node, capture);
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
  nestedDeclaration(node: TS.Node, parent: number, depth: number): number | undefined {
    const isStatic = hasModifier(node, this.SK.StaticKeyword);
    const member = (k: 'method' | 'property' | 'getter' | 'setter'): DeclKind => (isStatic ? `static-${k}` : k);
    switch (node.kind) {
      case this.SK.MethodDeclaration: {
        const n = node as TS.MethodDeclaration;
        return this.declare(n, this.enc.memberName(n.name), member('method'), parent, !!n.body, undefined, n, depth);
      }
      case this.SK.PropertyDeclaration: {
        const n = node as TS.PropertyDeclaration;
        return this.declare(n, this.enc.memberName(n.name), member('property'), parent, false, undefined, n, depth);
      }
      case this.SK.GetAccessor: {
        const n = node as TS.GetAccessorDeclaration;
        return this.declare(n, this.enc.memberName(n.name), member('getter'), parent, !!n.body, undefined, n, depth);
      }
      case this.SK.SetAccessor: {
        const n = node as TS.SetAccessorDeclaration;
        return this.declare(n, this.enc.memberName(n.name), member('setter'), parent, !!n.body, undefined, n, depth);
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
        for (const b of fact.bindings) this.enc.importSources.set(b.local, { specifier: spec, imported: b.imported });
        this.slice.imports.push(fact);
      } else if (ts.isImportEqualsDeclaration(s) && ts.isExternalModuleReference(s.moduleReference) && ts.isStringLiteral(s.moduleReference.expression)) {
        const spec = s.moduleReference.expression.text;
        this.slice.imports.push({ specifier: spec, typeOnly: s.isTypeOnly, bindings: [{ imported: '=', local: s.name.text, typeOnly: s.isTypeOnly }] });
        this.enc.importSources.set(s.name.text, { specifier: spec, imported: '=' });
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
    if (this.variant === 'dts') return true; // a declaration file evaluates nothing
    if (hasModifier(stmt, this.SK.DeclareKeyword)) return true;
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
      if (hasModifier(s, this.SK.DeclareKeyword)) return false;
      return true;
    });
  }

  // ---------------------------------------------------------------- helpers

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

function moduleExportName(n: TS.ModuleExportName): string {
  return n.text;
}
