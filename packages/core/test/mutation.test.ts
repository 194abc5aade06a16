/**
 * Mutation tests on real code (issue 2, point 7).
 *
 * Corpus: this repository's sources plus real `.ts`/`.d.ts`/`.js` files shipped inside installed
 * packages (tools/lib/corpus.mjs: fixed package list, sorted paths, seeded sampling). For every file:
 *   (a) prettier under two option sets, (b) strip non-meaningful comments, (c) insert comments
 *       between tokens (`/* kiln *\/` everywhere; in JavaScript also prose `/** kiln *\/` where no
 *       JSDoc is yet) — no declaration's semantic digest may move (compared by (path, kind)), nor the
 *       module's digest, and the declaration set stays identical; for (a) and (c) the doc digests do
 *       not move either (the words of the documentation are unchanged);
 *   (d) random real edits (literal, operator, identifier reference, dropped statement) inside a
 *       declaration — the innermost declaration containing the edit moves, and no other declaration
 *       does except its ancestors.
 * Reproducible: the corpus and every random choice come from fixed seeds.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { extractSlice } from '../dist/facts/extract.js';
import { fileKind } from '../dist/parse/language.js';
import type { Slice } from '../dist/facts/slice.js';
// @ts-expect-error — plain ESM helper shared with tools/, no type declarations
import { loadCorpus, prng, REPO_ROOT } from '../../../tools/lib/corpus.mjs';
// @ts-expect-error — plain ESM helper shared with tools/, no type declarations
import { directoryCorpus } from '../../../tools/lib/collisions.mjs';
import {
  EDIT_KINDS,
  PRETTIER_OPTION_SETS,
  ancestorsOf,
  applyEdit,
  candidateEdits,
  declKey,
  declSpans,
  indexByKey,
  innermostDeclaration,
  insertComments,
  parse,
  prettierFormat,
  stripComments,
  type Edit,
  type EditKind,
  type Variant,
} from './lib/mutate.js';

const SEED = 0x6b696c6e; // "kiln"
/** Real edits tried per file and edit kind (sampled from all candidates of that kind). */
const EDITS_PER_KIND = 2;
/** Show at most this many failure lines (the count is always exact). */
const SHOW = 60;

interface CorpusFile {
  abs: string;
  group: string;
  rel: string;
  variant: Variant;
  text: string;
  slice: Slice;
}

const corpus: CorpusFile[] = [];
const excluded: string[] = [];
let declarations = 0;

function slice(text: string, variant: Variant): Slice {
  return extractSlice(Buffer.from(text, 'utf8'), variant);
}

function hasSyntaxErrors(s: Slice): boolean {
  return s.diagnostics.some((d) => d.code === 'KILN_SYNTAX_ERROR');
}

function label(f: CorpusFile): string {
  return f.abs.startsWith(REPO_ROOT) ? f.abs.slice(REPO_ROOT.length + 1) : f.abs;
}

function seedFor(f: CorpusFile, salt: number): () => number {
  let h = SEED ^ salt;
  const id = `${f.group}/${f.rel}`;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return prng(h >>> 0);
}

/**
 * Meaning-preserving mutation: the module digest and every declaration's semantic digest (and with
 * `checkDocs` its doc digest) must be equal, and no declaration may appear or disappear.
 */
function compareInvariant(f: CorpusFile, mutation: string, after: Slice, failures: string[], checkDocs = false): number {
  const before = f.slice;
  const where = `${label(f)} [${mutation}]`;
  if (hasSyntaxErrors(after)) {
    failures.push(`${where}: the mutated file has syntax errors: ${after.diagnostics.find((d) => d.code === 'KILN_SYNTAX_ERROR')!.message}`);
    return 0;
  }
  if (after.module.digest !== before.module.digest) {
    failures.push(`${where}: module digest moved (order ${JSON.stringify(before.module.order.slice(0, 3))}… pragmas ${JSON.stringify(before.module.pragmas)} → ${JSON.stringify(after.module.pragmas)})`);
  }
  const afterIdx = indexByKey(after);
  const beforeIdx = indexByKey(before);
  let compared = 0;
  for (const d of before.decls) {
    const j = afterIdx.get(declKey(d));
    if (j === undefined) {
      failures.push(`${where}: declaration ${d.path} (${d.kind}) at ${d.span.startLine}:${d.span.startColumn} disappeared`);
      continue;
    }
    const e = after.decls[j]!;
    compared++;
    if (d.semantic === null || e.semantic !== d.semantic) {
      failures.push(`${where}: declaration ${d.path} (${d.kind}) at ${d.span.startLine}:${d.span.startColumn} semantic digest moved ${d.semantic?.slice(0, 12)} → ${e.semantic?.slice(0, 12)}`);
    }
    if (checkDocs && e.doc !== d.doc) {
      failures.push(`${where}: declaration ${d.path} (${d.kind}) at ${d.span.startLine}:${d.span.startColumn} doc digest moved ${d.doc?.slice(0, 12)} → ${e.doc?.slice(0, 12)}`);
    }
  }
  for (const e of after.decls) {
    if (!beforeIdx.has(declKey(e))) failures.push(`${where}: declaration ${e.path} (${e.kind}) appeared`);
  }
  return compared;
}

function report(title: string, failures: string[]): void {
  if (failures.length) {
    console.log(`${title}: ${failures.length} failure(s)\n  ${failures.slice(0, SHOW).join('\n  ')}${failures.length > SHOW ? `\n  … ${failures.length - SHOW} more` : ''}`);
  }
}

beforeAll(() => {
  const t0 = performance.now();
  // KILN_MUTATION_FILES=<substring> narrows the corpus while investigating a failure;
  // KILN_MUTATION_DIR=<path> runs the same checks on every source file under a directory instead.
  const only = process.env.KILN_MUTATION_FILES;
  const dir = process.env.KILN_MUTATION_DIR;
  const entries = (dir ? directoryCorpus(dir) : loadCorpus()) as { abs: string; group: string; rel: string }[];
  for (const e of entries) {
    if (only && !e.abs.includes(only)) continue;
    const variant = fileKind(e.abs)!.variant as Variant;
    const text = readFileSync(e.abs, 'utf8');
    const s = slice(text, variant);
    // A file that does not parse cleanly has degraded (always-changed) declarations: nothing to test.
    if (hasSyntaxErrors(s)) {
      excluded.push(`${e.abs}: syntax errors`);
      continue;
    }
    corpus.push({ ...e, variant, text, slice: s });
    declarations += s.decls.length;
  }
  const groups = new Map<string, number>();
  for (const f of corpus) groups.set(f.group, (groups.get(f.group) ?? 0) + 1);
  const bytes = corpus.reduce((n, f) => n + f.text.length, 0);
  console.log(
    `mutation corpus: ${corpus.length} files (${(bytes / 1e6).toFixed(2)} MB), ${declarations} declarations, ` +
      `${excluded.length} excluded (syntax errors); by variant ${JSON.stringify(countBy(corpus, (f) => f.variant))}; ` +
      `by source ${JSON.stringify(Object.fromEntries(groups))}; sliced in ${Math.round(performance.now() - t0)} ms`,
  );
});

function countBy<T>(xs: T[], f: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[f(x)] = (out[f(x)] ?? 0) + 1;
  return out;
}

describe('mutation tests on real code', () => {
  it.skipIf(!!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR))('has a corpus of at least 300 real files', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(300);
  });

  it('(a) reformatting with prettier under two option sets moves no digest', async () => {
    const t0 = performance.now();
    const failures: string[] = [];
    const stats: Record<string, { formatted: number; rejected: number; skippedJsx: number; unchanged: number; compared: number }> = {};
    for (const set of PRETTIER_OPTION_SETS) {
      const st = (stats[set.name] = { formatted: 0, rejected: 0, skippedJsx: 0, unchanged: 0, compared: 0 });
      for (const f of corpus) {
        if (f.variant === 'tsx' || f.variant === 'jsx') {
          // Exclusion: in JSX, prettier rewrites whitespace between children (`{' '}` ↔ a space in the
          // text, text split across lines), which changes the children the compiler emits — a real
          // edit, not a reformat (seen on TanStack/query). The default corpus has no JSX files; other
          // corpora (KILN_MUTATION_DIR) get (b)(c)(d) on them, and this count.
          st.skippedJsx++;
          continue;
        }
        const out = await prettierFormat(f.text, f.variant, set.options);
        if (out === undefined) {
          st.rejected++;
          continue;
        }
        st.formatted++;
        if (out === f.text) st.unchanged++;
        st.compared += compareInvariant(f, set.name, slice(out, f.variant), failures, true);
      }
    }
    console.log(`(a) prettier: ${JSON.stringify(stats)} (rejected = prettier refused the file; skippedJsx = JSX file, prettier's JSX whitespace rewrites are real edits); ${Math.round(performance.now() - t0)} ms`);
    report('(a) prettier', failures);
    expect(failures).toEqual([]);
    if (!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR)) for (const s of Object.values(stats)) expect(s.formatted).toBeGreaterThanOrEqual(300);
  });

  it('(b) stripping every non-meaningful comment moves no digest and keeps the declaration set', () => {
    const t0 = performance.now();
    const failures: string[] = [];
    let files = 0;
    let removed = 0;
    let kept = 0;
    let compared = 0;
    for (const f of corpus) {
      const r = stripComments(f.text, f.variant);
      files++;
      removed += r.removed;
      kept += r.kept;
      compared += compareInvariant(f, 'strip-comments', slice(r.text, f.variant), failures);
    }
    console.log(`(b) strip comments: ${files} files, ${removed} comments removed, ${kept} meaningful kept, ${compared} declarations compared; ${Math.round(performance.now() - t0)} ms`);
    report('(b) strip comments', failures);
    expect(failures).toEqual([]);
    if (!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR)) expect(removed).toBeGreaterThan(1000);
  });

  it('(c) inserting comments between tokens moves no digest and keeps the declaration set', () => {
    const t0 = performance.now();
    const failures: string[] = [];
    let files = 0;
    let inserted = 0;
    let compared = 0;
    for (const f of corpus) {
      const r = insertComments(f.text, f.variant, seedFor(f, 3));
      files++;
      inserted += r.inserted;
      compared += compareInvariant(f, 'insert-comments', slice(r.text, f.variant), failures, true);
    }
    console.log(`(c) insert comments: ${files} files, ${inserted} comments inserted, ${compared} declarations compared; ${Math.round(performance.now() - t0)} ms`);
    report('(c) insert comments', failures);
    expect(failures).toEqual([]);
    // Not vacuous: on the default corpus (684 files, ~229k comments, ~13.6k declarations when written).
    if (!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR)) {
      expect(inserted).toBeGreaterThanOrEqual(100_000);
      expect(compared).toBeGreaterThanOrEqual(10_000);
    }
  });

  it('(c) inserting prose documentation comments between tokens of JavaScript moves no semantic digest', () => {
    // In JavaScript the walk reads JSDoc (types are code there), so a `/** … */` without tags is the
    // comment most likely to leak into a digest. Inserted only where no JSDoc leads the token yet.
    const t0 = performance.now();
    const failures: string[] = [];
    let files = 0;
    let inserted = 0;
    let compared = 0;
    for (const f of corpus) {
      if (f.variant !== 'js' && f.variant !== 'jsx') continue;
      const r = insertComments(f.text, f.variant, seedFor(f, 5), 0.5, '/** kiln */');
      files++;
      inserted += r.inserted;
      compared += compareInvariant(f, 'insert-jsdoc', slice(r.text, f.variant), failures);
    }
    console.log(`(c) insert prose JSDoc (JavaScript): ${files} files, ${inserted} comments inserted, ${compared} declarations compared; ${Math.round(performance.now() - t0)} ms`);
    report('(c) insert prose JSDoc', failures);
    expect(failures).toEqual([]);
    // Not vacuous: the JavaScript part of the default corpus (261 files, ~103k comments, ~3.9k
    // declarations when written).
    if (!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR)) {
      expect(files).toBeGreaterThanOrEqual(200);
      expect(inserted).toBeGreaterThanOrEqual(50_000);
      expect(compared).toBeGreaterThanOrEqual(3_000);
    }
  });

  it('(d) a real edit moves the edited declaration and nothing else but its ancestors', () => {
    const t0 = performance.now();
    const failures: string[] = [];
    const stats: Record<EditKind, { candidates: number; applied: number; skippedSyntax: number; identityMoved: number }> = Object.fromEntries(
      EDIT_KINDS.map((k) => [k, { candidates: 0, applied: 0, skippedSyntax: 0, identityMoved: 0 }]),
    ) as never;
    let files = 0;
    let compared = 0;
    for (const f of corpus) {
      const sf = parse(f.text, f.variant);
      const spans = declSpans(f.slice, sf);
      const candidates = candidateEdits(f.text, f.variant, (pos, end) => innermostDeclaration(spans, pos, end) !== undefined);
      const rand = seedFor(f, 4);
      let touched = false;
      for (const kind of EDIT_KINDS) {
        const all = candidates.get(kind)!;
        stats[kind].candidates += all.length;
        for (const edit of pick(all, EDITS_PER_KIND, rand)) {
          const after = slice(applyEdit(f.text, edit), f.variant);
          if (hasSyntaxErrors(after)) {
            stats[kind].skippedSyntax++;
            continue;
          }
          stats[kind].applied++;
          touched = true;
          const r = checkEdit(f, edit, spans, after, failures);
          compared += r.compared;
          if (r.identityMoved) stats[kind].identityMoved++;
        }
      }
      if (touched) files++;
    }
    const applied = EDIT_KINDS.reduce((n, k) => n + stats[k].applied, 0);
    console.log(
      `(d) real edits: ${applied} edits applied in ${files} files, ${compared} declarations compared; per kind ${JSON.stringify(stats)} ` +
        `(identityMoved = the edit changed an overload/merge signature, so the edited declaration's identity moved); ${Math.round(performance.now() - t0)} ms`,
    );
    report('(d) real edits', failures);
    expect(failures).toEqual([]);
    if (!(process.env.KILN_MUTATION_FILES || process.env.KILN_MUTATION_DIR)) for (const k of EDIT_KINDS) expect(stats[k].applied, k).toBeGreaterThan(100);
  });
});

function pick<T>(xs: T[], k: number, rand: () => number): T[] {
  const out: T[] = [];
  const used = new Set<number>();
  while (out.length < Math.min(k, xs.length)) {
    const i = Math.floor(rand() * xs.length);
    if (used.has(i)) continue;
    used.add(i);
    out.push(xs[i]!);
  }
  return out;
}

/**
 * The innermost declaration containing the edit (with any declaration sharing its exact node, as the
 * names of one destructuring do) must move; every other declaration must still be there, unmoved,
 * except the ancestors of the edited one, which contain it. No declaration may disappear or appear,
 * except where the edit changed an overload/merge signature on the edited declaration's chain: that
 * declaration's identity (its path) moves, and with it the paths of everything nested in it.
 */
function checkEdit(
  f: CorpusFile,
  edit: Edit,
  spans: ReturnType<typeof declSpans>,
  after: Slice,
  failures: string[],
): { compared: number; identityMoved: boolean } {
  const before = f.slice;
  const inner = innermostDeclaration(spans, edit.pos, edit.end)!;
  const edited = new Set(spans.filter((s) => s.start === inner.start && s.end === inner.end && s.depth === inner.depth).map((s) => s.index));
  const allowed = new Set<number>(edited);
  for (const i of edited) for (const a of ancestorsOf(before, i)) allowed.add(a);
  const lc = (pos: number) => {
    const lines = f.text.slice(0, pos).split('\n');
    return `${lines.length}:${lines[lines.length - 1]!.length + 1}`;
  };
  const where = `${label(f)} [edit ${edit.kind}: ${edit.description} → ${edit.replacement.trim().slice(0, 40)} at ${lc(edit.pos)}]`;
  const afterIdx = indexByKey(after);
  const beforeIdx = indexByKey(before);
  let compared = 0;
  let identityMoved = false;
  // Signature-carrying declarations on the edited chain whose identity the edit moved (before), and
  // the signature-carrying declarations that are new (after): what is nested in them may move paths.
  const movedRoots = new Set<number>();
  for (const i of edited) {
    for (let p = i; p !== -1; p = before.decls[p]!.parent) {
      const d = before.decls[p]!;
      if (d.sig && !afterIdx.has(declKey(d))) movedRoots.add(p);
    }
  }
  const newRoots = new Set<number>();
  if (movedRoots.size) after.decls.forEach((e, k) => e.sig && !beforeIdx.has(declKey(e)) && newRoots.add(k));
  const under = (s: Slice, i: number, roots: Set<number>) => {
    for (let p = i; p !== -1; p = s.decls[p]!.parent) if (roots.has(p)) return true;
    return false;
  };
  for (const i of edited) {
    const d = before.decls[i]!;
    const j = afterIdx.get(declKey(d));
    if (j === undefined) {
      // Only a signature digest (overloads, merged declarations) may carry an edit into an identity.
      let sigged = false;
      for (let p = i; p !== -1; p = before.decls[p]!.parent) if (before.decls[p]!.sig) sigged = true;
      if (sigged) identityMoved = true;
      else failures.push(`${where}: edited declaration ${d.path} (${d.kind}) disappeared`);
      continue;
    }
    compared++;
    const e = after.decls[j]!;
    if (d.semantic !== null && e.semantic === d.semantic) failures.push(`${where}: edited declaration ${d.path} (${d.kind}) did not move`);
  }
  const inner0 = before.decls[[...edited][0]!]!;
  before.decls.forEach((d, i) => {
    if (edited.has(i)) return;
    const j = afterIdx.get(declKey(d));
    if (j === undefined) {
      if (!under(before, i, movedRoots)) {
        failures.push(`${where}: ${allowed.has(i) ? 'ancestor' : 'unrelated'} declaration ${d.path} (${d.kind}) disappeared (edited: ${inner0.path} (${inner0.kind}))`);
      }
      return;
    }
    if (allowed.has(i)) return;
    compared++;
    const e = after.decls[j]!;
    if (e.semantic !== d.semantic) {
      const inner = before.decls[[...edited][0]!]!;
      failures.push(`${where}: unrelated declaration ${d.path} (${d.kind}) moved (edited: ${inner.path} (${inner.kind}))`);
    }
  });
  after.decls.forEach((e, k) => {
    if (beforeIdx.has(declKey(e)) || under(after, k, newRoots)) return;
    failures.push(`${where}: declaration ${e.path} (${e.kind}) appeared (edited: ${inner0.path} (${inner0.kind}))`);
  });
  return { compared, identityMoved };
}

/** Small cases for the engine defects the mutations above found, so each stays fixed. */
describe('engine defects found by the mutation tests', () => {
  const digests = (text: string, variant: Variant = 'ts') => slice(text, variant).decls.map((d) => `${d.path}:${d.semantic}`);

  it('a meaningful comment belongs to the token it precedes, whatever redundant parentheses surround it', () => {
    // prettier drops the parentheses: `(/*#__PURE__*/ new X()).y` → `/*#__PURE__*/ new X().y`
    expect(digests('function f() { return (/*#__PURE__*/ new Error("x")).stack; }')).toEqual(
      digests('function f() { return /*#__PURE__*/ new Error("x").stack; }'),
    );
    expect(digests('function f() { return (/*#__PURE__*/ new Error("x")).stack; }')).not.toEqual(
      digests('function f() { return (new Error("x")).stack; }'),
    );
  });

  it('a comment before a statement-closing `;` leads the next statement (prettier without semicolons)', () => {
    expect(digests('function f() {\n  var a;\n  // @ts-expect-error\n  (a = g()).h();\n}')).toEqual(
      digests('function f() {\n  var a\n  // @ts-expect-error\n  ;(a = g()).h()\n}'),
    );
  });

  it('a comment no node takes does not hide every later meaningful comment of the file', () => {
    const before = slice('export const a = 1 /* @__PURE__ */;\nexport function f() { return g(); }\n', 'ts');
    const after = slice('export const a = 1 /* @__PURE__ */;\nexport function f() { return /* @__PURE__ */ g(); }\n', 'ts');
    expect(after.decls[1]!.semantic).not.toBe(before.decls[1]!.semantic);
    expect(after.decls[0]!.semantic).toBe(before.decls[0]!.semantic);
  });

  it('JavaScript: prose JSDoc on parentheses is not a cast; only the last JSDoc block types a node', () => {
    expect(digests('function f(x) { return /** note */ (x).y; }', 'js')).toEqual(digests('function f(x) { return (x).y; }', 'js'));
    expect(digests('function f(x) { return /** @type {T} */ (x).y; }', 'js')).not.toEqual(digests('function f(x) { return (x).y; }', 'js'));
    // The compiler reads the tags of the last block only: a prose block after `@type` drops the type.
    expect(digests('/** @type {number} */\n/** prose */\nvar n = g();', 'js')).not.toEqual(digests('/** @type {number} */\nvar n = g();', 'js'));
    expect(digests('/** @type {number} */\n/** prose */\nvar n = g();', 'js')).toEqual(digests('/** prose */\nvar n = g();', 'js'));
  });
});
