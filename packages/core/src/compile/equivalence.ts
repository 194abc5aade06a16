/**
 * The soundness comparison of SPEC §4: is a build output (e.g. one restored from a cache entry kiln
 * keyed as unchanged) equivalent to another (a fresh build)?
 *
 * - JavaScript (`.js .mjs .cjs .jsx`) and declaration files (`.d.ts .d.mts .d.cts`) are equivalent when
 *   they are token-for-token equal after removing non-meaningful comments and whitespace, with
 *   hoisted declarations (function declarations, interfaces, type aliases, `declare` statements — in a
 *   declaration file, every statement) compared as a set rather than in sequence.
 * - Source maps (`*.map`) are excluded: they differ by construction (positions of comments and
 *   formatting); the debug store handles them (SPEC §8).
 * - Every other file must be byte-equal.
 *
 * **How.** Token equality "after normalisation" must normalise exactly what kiln's digests treat as
 * formatting — quote style, numeric spelling, redundant parentheses, property-key quoting, `new X` vs
 * `new X()`, empty statements — or the check would flag every reformatted-but-cached artifact. So it
 * reuses the extractor: each file becomes a slice (`extractSlice`), and two files are equivalent when
 *
 *   1. their **module digests** are equal (file-level pragmas and meaningful comments, the ordered list
 *      of effectful top-level statements with the digest of each non-declaration statement, and the
 *      *set* of hoisted ones), and
 *   2. their **declarations** are equal: the same (path, kind) identities, each with the same semantic
 *      digest. Paths carry the signature digest of overloads and the ordinal of same-named
 *      implementations, and nested declarations fold into their parent (Merkle), so a changed method
 *      body shows as that method and its class;
 *
 * plus two checks the digests alone do not make (found while evaluating this design; each has a test):
 *
 *   3. **Order among same-named hoisted declarations.** Overload signatures and merged declarations
 *      (`function f(a: string)` / `function f(a: number)`, two `interface I`) are hoisted, but their
 *      relative order is observable — overload resolution takes the first match, later interface
 *      blocks' overloads come first. The module digest sees them as a set, so their order is compared
 *      separately.
 *   4. **Documentation in declaration files.** A `.d.ts` carries JSDoc, and an artifact that carries
 *      docs must match the docs a fresh build writes (SPEC §3). The extractor's doc digests cover
 *      declarations (and class members), not interface members, parameters, enum members or type
 *      literal members, so every JSDoc block of a `.d.ts` is compared, anchored to the declaration path
 *      it documents (order-free across hoisted declarations, like the rest). JavaScript docs are not
 *      compared: JSDoc in emitted JavaScript is a non-meaningful comment (its type-bearing tags, which
 *      `checkJs` reads, are part of the semantic digest).
 *
 * A file the extractor cannot digest completely (a syntax error, nesting beyond the walk limit,
 * invalid UTF-8) is equivalent only when byte-equal: kiln never calls undigested content equal.
 *
 * Each difference names the file, the declaration where it has one, the first differing token in each
 * output (after the same literal normalisation; positions are 1-based line/column) and the reason.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type * as TS from 'typescript';
import { extractSlice } from '../facts/extract.js';
import { classifyComment, leadingDocs } from '../facts/comments.js';
import type { DeclFact, Slice } from '../facts/slice.js';
import { typescript } from '../parse/typescript.js';
import type { Variant } from '../parse/language.js';
import { canonicalNumber } from '../digest/canonical.js';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';

export type DifferenceReason =
  /** The file exists in only one of the outputs. */
  | 'only-in-a'
  | 'only-in-b'
  /** A file compared byte for byte (not JavaScript or a declaration file) differs. */
  | 'bytes'
  /** A JavaScript/declaration file differs and could not be digested completely. */
  | 'undigestible'
  /** A declaration exists in only one of the outputs. */
  | 'declaration-only-in-a'
  | 'declaration-only-in-b'
  /** A declaration exists in both with different tokens. */
  | 'declaration-changed'
  /** The order of effectful top-level statements, or of same-named hoisted declarations, differs. */
  | 'order'
  /** Module-level content differs: non-declaration statements, file-level pragmas and meaningful comments. */
  | 'module'
  /** Documentation in a declaration file differs. */
  | 'docs';

export interface TokenAt {
  /** The token as written (truncated to 80 characters), or `<end>` past the last token. */
  text: string;
  line: number;
  column: number;
}

export interface OutputDifference {
  /** Path relative to the compared directories, POSIX separators. */
  file: string;
  reason: DifferenceReason;
  /** Declaration path (`Class.method`, `f~1d3861df` for an overload) where the difference is in one. */
  declaration?: string;
  /** The first differing token in output A and in output B, where one can be pointed at. */
  a?: TokenAt;
  b?: TokenAt;
  message: string;
}

export interface CompareResult {
  equal: boolean;
  /** Files compared (present in both, not excluded). */
  compared: number;
  /** Files excluded from the comparison (source maps), relative paths. */
  excluded: string[];
  differences: OutputDifference[];
}

export interface CompareOptions {
  /** Files to leave out besides source maps (relative POSIX path). */
  exclude?: (file: string) => boolean;
}

/** How an output file is compared: by meaning, excluded, or byte for byte. */
export function outputFileKind(file: string): { variant: Variant } | 'map' | 'bytes' {
  if (file.endsWith('.map')) return 'map';
  if (/\.d\.[mc]?ts$/.test(file)) return { variant: 'dts' };
  if (/\.[mc]?js$/.test(file)) return { variant: 'js' };
  if (file.endsWith('.jsx')) return { variant: 'jsx' };
  return 'bytes';
}

/** Compare two output directories (e.g. a restored cache entry and a fresh build). */
export async function compareOutputs(dirA: string, dirB: string, options: CompareOptions = {}): Promise<CompareResult> {
  const [filesA, filesB] = await Promise.all([listFiles(dirA), listFiles(dirB)]);
  const setA = new Set(filesA);
  const setB = new Set(filesB);
  const all = [...new Set([...filesA, ...filesB])].sort();
  const result: CompareResult = { equal: true, compared: 0, excluded: [], differences: [] };
  for (const file of all) {
    if (outputFileKind(file) === 'map' || options.exclude?.(file)) {
      result.excluded.push(file);
      continue;
    }
    if (!setB.has(file)) {
      result.differences.push({ file, reason: 'only-in-a', message: `${file} exists only in ${dirLabel('a')}` });
      continue;
    }
    if (!setA.has(file)) {
      result.differences.push({ file, reason: 'only-in-b', message: `${file} exists only in ${dirLabel('b')}` });
      continue;
    }
    result.compared++;
    const [a, b] = await Promise.all([readFile(join(dirA, file)), readFile(join(dirB, file))]);
    result.differences.push(...compareOutputFiles(file, a, b));
  }
  result.equal = result.differences.length === 0;
  return result;
}

function dirLabel(which: 'a' | 'b'): string {
  return which === 'a' ? 'output A' : 'output B';
}

/** Compare one file's content in two outputs; `file` (relative path) decides how. */
export function compareOutputFiles(file: string, a: Uint8Array, b: Uint8Array): OutputDifference[] {
  if (bytesEqual(a, b)) return [];
  const kind = outputFileKind(file);
  if (kind === 'map') return [];
  if (kind === 'bytes') {
    const at = firstDifferentByte(a, b);
    return [{ file, reason: 'bytes', message: `${file} differs at byte ${at} (compared byte for byte)` }];
  }
  return new FileComparison(file, kind.variant, a, b).run();
}

/** One line per difference, for terminals and test failure messages. */
export function formatDifference(d: OutputDifference): string {
  const where = (t?: TokenAt) => (t ? `${t.line}:${t.column} \`${t.text}\`` : '—');
  const tokens = d.a || d.b ? ` [A ${where(d.a)} | B ${where(d.b)}]` : '';
  return `${d.file}: ${d.reason}${d.declaration ? ` ${d.declaration}` : ''}: ${d.message}${tokens}`;
}

/** A difference as a coded diagnostic (located in output B, the fresh build, when it can be). */
export function differenceDiagnostic(d: OutputDifference, producer = 'equivalence'): Diagnostic {
  return diagnostic('KILN_OUTPUTS_DIFFER', formatDifference(d), {
    file: d.file,
    ...(d.b ? { line: d.b.line, column: d.b.column } : d.a ? { line: d.a.line, column: d.a.column } : {}),
    producer,
  });
}

// ---------------------------------------------------------------------------------------------------

interface Side {
  bytes: Uint8Array;
  text: string;
  slice: Slice;
  lineStarts: number[];
  sf?: TS.SourceFile;
}

class FileComparison {
  private readonly a: Side;
  private readonly b: Side;
  private readonly out: OutputDifference[] = [];

  constructor(
    private readonly file: string,
    private readonly variant: Variant,
    bytesA: Uint8Array,
    bytesB: Uint8Array,
  ) {
    this.a = side(bytesA, variant);
    this.b = side(bytesB, variant);
  }

  run(): OutputDifference[] {
    const { a, b } = this;
    const undigested = (s: Slice) => !!s.module.degraded || s.decls.some((d) => d.semantic === null);
    if (undigested(a.slice) || undigested(b.slice)) {
      const why = [a.slice, b.slice]
        .flatMap((s, i) => s.diagnostics.slice(0, 1).map((d) => `${i === 0 ? 'A' : 'B'}: ${d.code} ${d.message}`))
        .join('; ');
      this.push({ reason: 'undigestible', message: `the file differs and cannot be digested completely${why ? ` (${why})` : ''}` });
      return this.out;
    }
    this.compareDeclarations();
    this.compareModule();
    this.compareSameNamedOrder();
    if (this.variant === 'dts') this.compareDocs();
    // The verdict never rests on the reporting above: unequal digests are a difference even if no
    // finer explanation was found.
    const decls = (s: Slice) => s.decls.map((d) => `${d.path}\u0000${d.kind}\u0000${d.semantic}`);
    if (!this.out.length && (a.slice.module.digest !== b.slice.module.digest || !multisetEqual(decls(a.slice), decls(b.slice)))) {
      this.push({ reason: 'module', message: 'the module or declaration digests differ' });
    }
    return this.out;
  }

  private push(d: Omit<OutputDifference, 'file'>): void {
    this.out.push({ file: this.file, ...d });
  }

  // ---- 2. declarations

  private compareDeclarations(): void {
    const { a, b } = this;
    const key = (d: DeclFact) => `${d.path}\u0000${d.kind}`;
    const mapA = new Map(a.slice.decls.map((d) => [key(d), d]));
    const mapB = new Map(b.slice.decls.map((d) => [key(d), d]));
    const changed = new Set<string>();
    for (const [k, da] of mapA) {
      const db = mapB.get(k);
      if (db && db.semantic !== da.semantic) changed.add(k);
    }
    // A parent's digest folds its children's: report the innermost declarations that changed.
    const parentKey = (s: Slice, d: DeclFact) => (d.parent >= 0 ? key(s.decls[d.parent]!) : undefined);
    const explainedByChild = new Set<string>();
    for (const k of changed) {
      let p = parentKey(a.slice, mapA.get(k)!);
      while (p !== undefined) {
        explainedByChild.add(p);
        const pd = mapA.get(p);
        p = pd ? parentKey(a.slice, pd) : undefined;
      }
    }
    const removedOrAdded = (from: Map<string, DeclFact>, other: Map<string, DeclFact>, s: Slice) =>
      [...from].filter(([k, d]) => !other.has(k) && !(d.parent >= 0 && !other.has(parentKey(s, d)!)));
    for (const [, d] of removedOrAdded(mapA, mapB, a.slice)) {
      this.push({
        reason: 'declaration-only-in-a',
        declaration: d.path,
        a: this.tokenAtDecl(a, d),
        message: `${d.kind} ${d.path} exists only in output A`,
      });
      markAncestors(a.slice, d, key, explainedByChild);
    }
    for (const [, d] of removedOrAdded(mapB, mapA, b.slice)) {
      this.push({
        reason: 'declaration-only-in-b',
        declaration: d.path,
        b: this.tokenAtDecl(b, d),
        message: `${d.kind} ${d.path} exists only in output B`,
      });
      markAncestors(b.slice, d, key, explainedByChild);
    }
    // Same-named top-level declarations whose digests only moved between them are an order change
    // (numbered in source order), reported by compareSameNamedOrder.
    const reorderedNames = new Set<string>();
    const byName = (s: Slice) => {
      const m = new Map<string, string[]>();
      for (const d of s.decls) if (d.parent === -1) (m.get(d.name) ?? m.set(d.name, []).get(d.name)!).push(`${d.kind}:${d.semantic}`);
      return m;
    };
    const namesA = byName(a.slice);
    const namesB = byName(b.slice);
    for (const [name, la] of namesA) {
      const lb = namesB.get(name);
      if (lb && !arrayEqual(la, lb) && multisetEqual(la, lb)) reorderedNames.add(name);
    }
    for (const k of changed) {
      if (explainedByChild.has(k)) continue;
      if (mapA.get(k)!.parent === -1 && reorderedNames.has(mapA.get(k)!.name)) continue;
      const da = mapA.get(k)!;
      const db = mapB.get(k)!;
      const { found, ...t } = this.firstDifferentToken(a, spanRange(a, da), b, spanRange(b, db));
      this.push({
        reason: 'declaration-changed',
        declaration: da.path,
        ...t,
        message: `${da.kind} ${da.path} differs${
          found && t.a && t.b
            ? ` (first difference: \`${t.a.text}\` vs \`${t.b.text}\`)`
            : ' in structure, not in any one token (the tokens shown are where it starts)'
        }`,
      });
    }
  }

  // ---- 1. module digest

  private compareModule(): void {
    const ma = this.a.slice.module;
    const mb = this.b.slice.module;
    if (ma.digest === mb.digest) return;
    let explained = false;
    // Evaluation order: compared position by position. Declaration entries name the declaration (its
    // content is compared above); statement entries carry the statement's digest.
    const n = Math.max(ma.order.length, mb.order.length);
    for (let i = 0; i < n; i++) {
      const ea = ma.order[i];
      const eb = mb.order[i];
      if (ea === eb) continue;
      // Same statements in another order, or different statements (an added/removed declaration is
      // also reported as such above; a changed non-declaration statement only here).
      const reordered = multisetEqual(ma.order, mb.order);
      this.push({
        reason: reordered ? 'order' : 'module',
        a: this.tokenAtOrdered(this.a, i),
        b: this.tokenAtOrdered(this.b, i),
        message: reordered
          ? `the evaluation order of top-level statements differs at effectful statement ${i + 1} (${describeEntry(ea)} vs ${describeEntry(eb)})`
          : `effectful top-level statement ${i + 1} differs (${describeEntry(ea)} vs ${describeEntry(eb)})`,
      });
      explained = true;
      break;
    }
    if (!multisetEqual(ma.hoisted, mb.hoisted)) {
      const onlyA = multisetMinus(ma.hoisted, mb.hoisted).filter((e) => !isDeclEntry(e));
      const onlyB = multisetMinus(mb.hoisted, ma.hoisted).filter((e) => !isDeclEntry(e));
      // Hoisted declarations added or removed are reported as declarations above.
      if (onlyA.length || onlyB.length) {
        this.push({
          reason: 'module',
          message: `hoisted top-level statements differ (${onlyA.length} only in A, ${onlyB.length} only in B)`,
        });
      }
      explained = true;
    }
    if (!arrayEqual(ma.pragmas, mb.pragmas)) {
      const onlyA = multisetMinus(ma.pragmas, mb.pragmas);
      const onlyB = multisetMinus(mb.pragmas, ma.pragmas);
      this.push({
        reason: 'module',
        message: `file-level pragmas or meaningful comments differ (only in A: ${onlyA.join(', ') || 'none'}; only in B: ${onlyB.join(', ') || 'none'})`,
      });
      explained = true;
    }
    if (!explained) this.push({ reason: 'module', message: 'the module digests differ' });
  }

  // ---- 3. order among same-named hoisted declarations

  private compareSameNamedOrder(): void {
    const seqs = (s: Slice) => {
      const m = new Map<string, DeclFact[]>();
      for (const d of s.decls) {
        if (d.parent !== -1) continue;
        const list = m.get(d.name);
        if (list) list.push(d);
        else m.set(d.name, [d]);
      }
      return m;
    };
    const sa = seqs(this.a.slice);
    const sb = seqs(this.b.slice);
    for (const [name, la] of sa) {
      const lb = sb.get(name);
      if (!lb || la.length < 2 || la.length !== lb.length) continue;
      // A declaration here is its kind, its path without the source-order ordinal (overloads keep their
      // signature digest), and its digest — so a swap shows whether it moved paths or digests.
      const id = (d: DeclFact) => `${d.kind}:${d.path.replace(/#\d+$/, '')}:${d.semantic}`;
      const ida = la.map(id);
      const idb = lb.map(id);
      if (arrayEqual(ida, idb) || !multisetEqual(ida, idb)) continue;
      const i = ida.findIndex((x, j) => x !== idb[j]);
      this.push({
        reason: 'order',
        declaration: name,
        a: this.tokenAtDecl(this.a, la[i]!),
        b: this.tokenAtDecl(this.b, lb[i]!),
        message: `the order of the ${la.length} declarations named ${name} (overloads or merged declarations) differs; it is observable (overload resolution, merge order)`,
      });
    }
  }

  // ---- 4. documentation in declaration files

  private compareDocs(): void {
    const da = docAnchors(parsed(this.a));
    const db = docAnchors(parsed(this.b));
    const keys = (l: DocAnchor[]) => l.map((d) => `${d.anchor}\u0000${d.doc}`);
    const ka = keys(da);
    const kb = keys(db);
    if (multisetEqual(ka, kb)) return;
    const onlyA = multisetMinus(ka, kb);
    const onlyB = multisetMinus(kb, ka);
    const first = (list: DocAnchor[], k: string | undefined) => (k === undefined ? undefined : list.find((d) => `${d.anchor}\u0000${d.doc}` === k));
    const fa = first(da, onlyA[0]);
    const fb = first(db, onlyB[0]);
    const anchor = (fa ?? fb)!.anchor;
    this.push({
      reason: 'docs',
      declaration: readableAnchor(anchor),
      ...(fa ? { a: this.tokenAtOffset(this.a, fa.pos, fa.end) } : {}),
      ...(fb ? { b: this.tokenAtOffset(this.b, fb.pos, fb.end) } : {}),
      message: `documentation differs (${onlyA.length} JSDoc block(s) only in A, ${onlyB.length} only in B; first at ${readableAnchor(anchor)})`,
    });
  }

  // ---- locating tokens (reporting only: the verdict never depends on these)

  private tokenAtDecl(s: Side, d: DeclFact): TokenAt | undefined {
    const [start, end] = spanRange(s, d);
    return tokenStream(s, start, end)[0]?.at ?? undefined;
  }

  private tokenAtOffset(s: Side, pos: number, end: number): TokenAt {
    const lc = lineCol(s, pos);
    return { text: clip(s.text.slice(pos, end)), ...lc };
  }

  /** The i-th effectful top-level statement of a JavaScript file (statements other than function declarations). */
  private tokenAtOrdered(s: Side, i: number): TokenAt {
    const sf = parsed(s);
    const ts = typescript();
    const stmts = sf.statements.filter(
      (st) => st.kind !== ts.SyntaxKind.EmptyStatement && (this.variant === 'dts' || st.kind !== ts.SyntaxKind.FunctionDeclaration),
    );
    const st = stmts[i];
    if (!st) return { text: '<end>', ...lineCol(s, s.text.length) };
    return tokenStream(s, st.getStart(sf), st.end)[0]?.at ?? { text: '<end>', ...lineCol(s, s.text.length) };
  }

  private firstDifferentToken(a: Side, ra: [number, number], b: Side, rb: [number, number]): { found: boolean; a?: TokenAt; b?: TokenAt } {
    const ta = tokenStream(a, ra[0], ra[1]);
    const tb = tokenStream(b, rb[0], rb[1]);
    const n = Math.max(ta.length, tb.length);
    for (let i = 0; i < n; i++) {
      if (ta[i]?.norm === tb[i]?.norm) continue;
      return {
        found: true,
        a: ta[i]?.at ?? { text: '<end>', ...lineCol(a, ra[1]) },
        b: tb[i]?.at ?? { text: '<end>', ...lineCol(b, rb[1]) },
      };
    }
    // Same tokens after literal normalisation (the difference is structural): point at the start.
    return { found: false, ...(ta[0] ? { a: ta[0].at } : {}), ...(tb[0] ? { b: tb[0].at } : {}) };
  }
}

function side(bytes: Uint8Array, variant: Variant): Side {
  const slice = extractSlice(bytes, variant);
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  } catch {
    text = '';
  }
  return { bytes, text, slice, lineStarts: computeLineStarts(text) };
}

function parsed(s: Side): TS.SourceFile {
  if (!s.sf) {
    const ts = typescript();
    const isJsx = s.slice.variant === 'jsx';
    const name = s.slice.variant === 'dts' ? 'm.d.ts' : isJsx ? 'm.jsx' : 'm.js';
    s.sf = ts.createSourceFile(name, s.text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, true);
  }
  return s.sf;
}

// ---- documentation anchors

interface DocAnchor {
  /** Path of the declaration the block documents: `/kind:name#n/...`. */
  anchor: string;
  /** Normalised documentation text (gutters and indentation are formatting). */
  doc: string;
  pos: number;
  end: number;
}

/**
 * Every JSDoc block of a declaration file with the declaration it documents. A block belongs to the
 * outermost named declaration that starts at the token the block leads, else to the innermost named
 * declaration around it. Same-named siblings are numbered in source order (overloads keep their
 * docs apart); different names are not, so reordering hoisted declarations moves no anchor.
 */
function docAnchors(sf: TS.SourceFile): DocAnchor[] {
  const ts = typescript();
  const SK = ts.SyntaxKind;
  const text = sf.text;
  const seen = new Set<number>();
  const out: DocAnchor[] = [];
  const register = (pos: number, anchor: string) => {
    const take = (p: number, e: number, kind: TS.CommentKind) => {
      if (seen.has(p)) return;
      seen.add(p);
      const raw = text.slice(p, e);
      if (kind !== SK.MultiLineCommentTrivia || !raw.startsWith('/**') || raw === '/**/') return;
      for (const doc of leadingDocs(raw, 0)) out.push({ anchor, doc, pos: p, end: e });
    };
    // Trailing (same line as the previous token) and leading (later lines) together: all the trivia.
    ts.forEachTrailingCommentRange(text, pos, take);
    ts.forEachLeadingCommentRange(text, pos, take);
  };
  // A name by what it denotes, not how it is spelled: `'--'` and `"--"`, `a` and `'a'`, `1` and `0x1`
  // name the same member, and a comment inside a computed name is not part of it.
  const nameKey = (n: TS.Node): string => {
    if (ts.isIdentifier(n) || ts.isPrivateIdentifier(n) || ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
    if (ts.isNumericLiteral(n)) return canonicalNumber(n.text);
    const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text.slice(n.getStart(sf), n.end));
    const parts: string[] = [];
    for (let t = scanner.scan(); t !== SK.EndOfFileToken; t = scanner.scan()) {
      parts.push(t === SK.StringLiteral || t === SK.NoSubstitutionTemplateLiteral ? JSON.stringify(scanner.getTokenValue()) : t === SK.NumericLiteral ? canonicalNumber(scanner.getTokenText()) : scanner.getTokenText());
    }
    return parts.join(' ');
  };
  const segment = (node: TS.Node): string | undefined => {
    const k = node.kind;
    const named = (node as { name?: TS.Node }).name;
    if (named && typeof named === 'object' && 'kind' in named) return `${SK[k]}:${nameKey(named)}`;
    if (ts.isVariableStatement(node)) return `${SK[k]}:${node.declarationList.declarations.map((d) => nameKey(d.name)).join(',')}`;
    if (
      k === SK.CallSignature || k === SK.ConstructSignature || k === SK.IndexSignature || k === SK.Constructor ||
      k === SK.ExportAssignment || k === SK.ExportDeclaration || k === SK.ImportDeclaration || k === SK.ClassStaticBlockDeclaration
    ) {
      return SK[k];
    }
    return undefined;
  };
  const visit = (node: TS.Node, anchor: string, counters: Map<string, number>): void => {
    const k = node.kind;
    if ((k >= SK.FirstJSDocNode && k <= SK.LastJSDocNode) || k === SK.JsxText || k === SK.JsxTextAllWhiteSpaces) return;
    const seg = segment(node);
    let here = anchor;
    let childCounters = counters;
    if (seg !== undefined) {
      const n = (counters.get(seg) ?? 0) + 1;
      counters.set(seg, n);
      here = `${anchor}/${seg}#${n}`;
      childCounters = new Map();
    }
    if (seg !== undefined || k < SK.FirstNode) register(node.pos, here);
    for (const child of node.getChildren(sf)) visit(child, here, childCounters);
  };
  visit(sf, '', new Map());
  return out;
}

function readableAnchor(anchor: string): string {
  return (
    anchor
      .split('/')
      .filter(Boolean)
      .map((s) => s.replace(/^[A-Za-z]+:/, '').replace(/#1$/, ''))
      .join('.') || '(file)'
  );
}

// ---- tokens (reporting)

interface Tok {
  norm: string;
  at: TokenAt;
}

function tokenStream(s: Side, start: number, end: number): Tok[] {
  const ts = typescript();
  const SK = ts.SyntaxKind;
  const isJsx = s.slice.variant === 'jsx';
  const isJs = isJsx || s.slice.variant === 'js';
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, isJsx ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, s.text, undefined, start, end - start);
  const out: Tok[] = [];
  let prev: number = SK.Unknown;
  const templates: number[] = [];
  let braces = 0;
  for (let kind = scanner.scan(); kind !== SK.EndOfFileToken && out.length < 100_000; kind = scanner.scan()) {
    if (kind === SK.WhitespaceTrivia || kind === SK.NewLineTrivia) continue;
    if ((kind === SK.SlashToken || kind === SK.SlashEqualsToken) && regexAllowedAfter(ts, prev)) kind = scanner.reScanSlashToken();
    else if (kind === SK.CloseBraceToken && templates.length && templates[templates.length - 1] === braces) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === SK.TemplateTail) templates.pop();
    } else if (kind === SK.CloseBraceToken) braces--;
    else if (kind === SK.OpenBraceToken) braces++;
    if (kind === SK.TemplateHead) templates.push(braces);
    const pos = scanner.getTokenStart();
    const raw = scanner.getTokenText();
    let norm: string;
    if (kind === SK.SingleLineCommentTrivia || kind === SK.MultiLineCommentTrivia) {
      const c = classifyComment(raw, kind === SK.SingleLineCommentTrivia);
      // In JavaScript, JSDoc can carry checkJs types, which are part of the digest: show it.
      if (c) norm = `c:${c.value}`;
      else if (isJs && raw.startsWith('/**') && raw !== '/**/') norm = `d:${leadingDocs(raw, 0).join('\n')}`;
      else continue;
    } else if (kind === SK.StringLiteral) norm = `s:${scanner.getTokenValue()}`;
    else if (kind === SK.NumericLiteral) norm = `n:${canonicalNumber(raw)}`;
    else norm = raw;
    prev = kind;
    out.push({ norm, at: { text: clip(raw), ...lineCol(s, pos) } });
  }
  return out;
}

function regexAllowedAfter(ts: typeof TS, k: number): boolean {
  const SK = ts.SyntaxKind;
  return !(
    k === SK.Identifier || k === SK.PrivateIdentifier || k === SK.NumericLiteral || k === SK.BigIntLiteral ||
    k === SK.StringLiteral || k === SK.NoSubstitutionTemplateLiteral || k === SK.TemplateTail ||
    k === SK.RegularExpressionLiteral || k === SK.CloseParenToken || k === SK.CloseBracketToken ||
    k === SK.CloseBraceToken || k === SK.ThisKeyword || k === SK.SuperKeyword || k === SK.TrueKeyword ||
    k === SK.FalseKeyword || k === SK.NullKeyword || k === SK.PlusPlusToken || k === SK.MinusMinusToken
  );
}

function spanRange(s: Side, d: DeclFact): [number, number] {
  return [offsetOf(s, d.span.startLine, d.span.startColumn), offsetOf(s, d.span.endLine, d.span.endColumn)];
}

function offsetOf(s: Side, line: number, column: number): number {
  const start = s.lineStarts[line - 1] ?? s.text.length;
  return Math.min(start + column - 1, s.text.length);
}

function lineCol(s: Side, pos: number): { line: number; column: number } {
  let lo = 0;
  let hi = s.lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (s.lineStarts[mid]! <= pos) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: pos - s.lineStarts[lo]! + 1 };
}

function computeLineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10 || c === 0x2028 || c === 0x2029) starts.push(i + 1);
  }
  return starts;
}

function clip(t: string): string {
  const one = t.replace(/\s+/g, ' ');
  return one.length > 80 ? `${one.slice(0, 77)}...` : one;
}

// ---- small helpers

function isDeclEntry(e: string | undefined): boolean {
  return !!e && e.startsWith('decl:');
}

function describeEntry(e: string | undefined): string {
  if (e === undefined) return 'nothing';
  if (e.startsWith('decl:')) return e.slice(5).split(',').map((x) => x.replace(':', ' ')).join(', ');
  return `statement ${e.slice(5, 13)}`;
}

function markAncestors(s: Slice, d: DeclFact, key: (d: DeclFact) => string, into: Set<string>): void {
  let p = d.parent;
  while (p >= 0) {
    const pd = s.decls[p]!;
    into.add(key(pd));
    p = pd.parent;
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

function firstDifferentByte(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function arrayEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function multisetEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && arrayEqual([...a].sort(), [...b].sort());
}

/** Elements of `a` not matched one-for-one in `b`. */
function multisetMinus(a: readonly string[], b: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const x of b) counts.set(x, (counts.get(x) ?? 0) + 1);
  const out: string[] = [];
  for (const x of a) {
    const c = counts.get(x) ?? 0;
    if (c > 0) counts.set(x, c - 1);
    else out.push(x);
  }
  return out;
}

async function listFiles(root: string): Promise<string[]> {
  try {
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `output directory ${root.split('\\').join('/').split('/').pop()} does not exist`, { producer: 'equivalence' }));
  }
  const out: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), rel);
      else out.push(rel);
    }
  };
  await walk(root, '');
  return out.sort();
}
