/**
 * Harness for the SPEC §3 invariant suite (fixtures/invariants/<case>/{before,after,expect.json}).
 *
 * A case names only the declaration(s) it edits. The harness derives everything else:
 * - the Merkle ancestors of a changed/added/removed nested declaration must be `changed`, those of a
 *   re-documented one `redocumented` (a container's doc digest covers the docs inside it);
 * - EVERY OTHER declaration of the package must be `unchanged`;
 * - every module not named in `modules` must keep its module digest;
 * and it refuses fixtures that do not satisfy the SPEC's load-bearing conditions:
 * - in every edited file, a declaration positioned after the edit (first differing byte) exists,
 *   stays unchanged, and owns a nested scope (function body, class body, block…);
 * - a body-change fixture adds or removes a scope in the edited declaration.
 *
 * `checkCase` returns a list of problems instead of throwing, so that the harness itself can be
 * tested against wrong expectations and bad fixtures (see invariants.test.ts).
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import * as prettier from 'prettier';
import ts from 'typescript';
import { diffReports, digestTree, type DiffResult, type DigestReport } from '@kiln/core';
import type { DeclarationRecord } from '../../dist/view/report.js';

export const FIXTURES = join(import.meta.dirname, '../../../../fixtures/invariants');

/** SPEC §3 table: row → the status its edited declaration must have. */
export const ROWS = {
  comment: { change: 'add/remove a comment', edited: ['unchanged'] },
  documentation: { change: 'add/remove documentation', edited: ['redocumented'] },
  reformat: { change: 'reformat (prettier with other options)', edited: ['unchanged'] },
  reorder: { change: 'reorder declarations within a module', edited: ['unchanged'] },
  move: { change: 'move a declaration between files of one package', edited: ['moved'] },
  add: { change: 'add a declaration', edited: ['added'] },
  remove: { change: 'remove a declaration', edited: ['removed'] },
  body: { change: 'change a body', edited: ['changed'] },
  signature: { change: 'change a public signature', edited: ['changed'] },
} as const;
export type Row = keyof typeof ROWS;

type DeclStatus = 'added' | 'removed' | 'changed' | 'redocumented' | 'moved' | 'unchanged';
type ModuleStatus = 'added' | 'removed' | 'changed' | 'unchanged';

export interface EditExpectation {
  /** Logical module path (`src/cache`); for `moved`, the module it arrives in. */
  module: string;
  path: string;
  kind: string;
  status: DeclStatus;
  /** For `moved`: the module it left. */
  from?: string;
}

export interface CaseExpectation {
  row: Row;
  description: string;
  edits: EditExpectation[];
  /** Module digest statuses; every module not listed must be `unchanged`. */
  modules?: Record<string, ModuleStatus>;
  /** Generate `after/` from `before/` at run time instead of reading it. */
  generate?: { prettier: prettier.Options };
}

export interface CaseResult {
  name: string;
  problems: string[];
  /** Declarations asserted unchanged beyond the edited ones and their ancestors. */
  othersUnchanged: number;
  /** Declarations whose status was asserted, in total. */
  checked: number;
  /** Variants (ts/js/tsx) of the edited files. */
  variants: string[];
  /** Per edited file: where the edit starts and the trailing declaration that carries the load. */
  loadBearing: { file: string; editLine: number; trailing?: string }[];
  diff?: DiffResult;
}

export async function listCases(): Promise<string[]> {
  const entries = await readdir(FIXTURES, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
}

export async function readExpectation(name: string): Promise<CaseExpectation> {
  return JSON.parse(await readFile(join(FIXTURES, name, 'expect.json'), 'utf8')) as CaseExpectation;
}

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) await walk(abs);
      else out.push(relative(root, abs).split(sep).join('/'));
    }
  }
  await walk(root);
  return out.sort();
}

/** The two trees of a case; `after` is generated into a temporary directory when the case asks. */
export async function materialize(caseDir: string, exp: CaseExpectation): Promise<{ before: string; after: string; cleanup: () => Promise<void> }> {
  const before = join(caseDir, 'before');
  if (!exp.generate) return { before, after: join(caseDir, 'after'), cleanup: async () => undefined };
  const tmp = await mkdtemp(join(tmpdir(), 'kiln-inv-'));
  const after = join(tmp, 'after');
  await cp(before, after, { recursive: true });
  for (const rel of await listFiles(after)) {
    if (!/\.(ts|tsx|js|jsx)$/.test(rel)) continue;
    const abs = join(after, rel);
    const text = await readFile(abs, 'utf8');
    await writeFile(abs, await prettier.format(text, { ...exp.generate.prettier, filepath: abs }));
  }
  return { before, after, cleanup: () => rm(tmp, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------- syntax helpers (load-bearing checks)

const SCOPE_KINDS = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Block,
  ts.SyntaxKind.ModuleBlock,
  ts.SyntaxKind.CaseBlock,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.ClassExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ForStatement,
  ts.SyntaxKind.ForInStatement,
  ts.SyntaxKind.ForOfStatement,
  ts.SyntaxKind.CatchClause,
  ts.SyntaxKind.ClassStaticBlockDeclaration,
]);

/** Scopes a node owns: blocks, class bodies, arrow/function expressions, loop heads (itself included). */
export function countScopes(node: ts.Node): number {
  let n = SCOPE_KINDS.has(node.kind) ? 1 : 0;
  ts.forEachChild(node, (c) => {
    n += countScopes(c);
  });
  return n;
}

function scriptKind(file: string): ts.ScriptKind {
  if (file.endsWith('.tsx')) return ts.ScriptKind.TSX;
  if (file.endsWith('.jsx')) return ts.ScriptKind.JSX;
  if (/\.[mc]?js$/.test(file)) return ts.ScriptKind.JS;
  return ts.ScriptKind.TS;
}

function parse(file: string, text: string): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
}

function offsetOf(sf: ts.SourceFile, line: number, column: number): number {
  return sf.getPositionOfLineAndCharacter(line - 1, column - 1);
}

/** The syntax node a declaration record's span designates (outermost node with exactly that span). */
export function nodeOf(sf: ts.SourceFile, d: DeclarationRecord): ts.Node | undefined {
  const start = offsetOf(sf, d.span.startLine, d.span.startColumn);
  const end = offsetOf(sf, d.span.endLine, d.span.endColumn);
  let found: ts.Node | undefined;
  const visit = (n: ts.Node): void => {
    if (found || n.end < start || n.pos > end) return;
    if (n.getStart(sf) === start && n.end === end) {
      found = n;
      return;
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** Character offset of the first differing byte, or -1 when the contents are equal. */
export function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  if (i === n && a.length === b.length) return -1;
  return a.subarray(0, i).toString('utf8').length;
}

// ---------------------------------------------------------------- the check

const declKey = (module: string, path: string, kind: string) => `${module}#${path}:${kind}`;
const recKey = (d: DeclarationRecord) => declKey(d.module, d.path, d.kind);

function ancestorPaths(path: string): string[] {
  const segs = path.split('.');
  const out: string[] = [];
  for (let i = 1; i < segs.length; i++) out.push(segs.slice(0, i).join('.'));
  return out;
}

export async function digest(dir: string): Promise<DigestReport> {
  return digestTree(dir, { store: false, workers: 0 });
}

/**
 * Check one case. `override` replaces the expectation read from expect.json (used to prove that
 * the harness rejects wrong expectations); `caseDir` may point outside the fixtures folder.
 */
export async function checkCase(caseDir: string, override?: CaseExpectation): Promise<CaseResult> {
  const name = caseDir.split(sep).pop()!;
  const exp = override ?? (JSON.parse(await readFile(join(caseDir, 'expect.json'), 'utf8')) as CaseExpectation);
  const problems: string[] = [];
  const result: CaseResult = { name, problems, othersUnchanged: 0, checked: 0, variants: [], loadBearing: [] };

  // -- the expectation itself
  const row = ROWS[exp.row];
  if (!row) problems.push(`unknown row ${JSON.stringify(exp.row)} (one of ${Object.keys(ROWS).join(', ')})`);
  if (!exp.edits?.length) problems.push('expect.json names no edited declaration');
  for (const e of exp.edits ?? []) {
    if (row && !(row.edited as readonly string[]).includes(e.status)) {
      problems.push(`row "${exp.row}" requires the edited declaration to be ${row.edited.join('/')}, expect.json says ${e.status} for ${e.path}`);
    }
    if (e.status === 'moved' && !e.from) problems.push(`moved edit ${e.path} must name the module it came from`);
  }

  const trees = await materialize(caseDir, exp);
  try {
    const [before, after] = await Promise.all([digest(trees.before), digest(trees.after)]);
    for (const [side, rep] of [['before', before], ['after', after]] as const) {
      for (const d of rep.diagnostics) problems.push(`${side}: fixture has diagnostic ${d.code} ${d.file ?? ''}:${d.line ?? ''} ${d.message}`);
      for (const d of rep.declarations) if (d.semantic_digest === null) problems.push(`${side}: ${recKey(d)} has no digest (${d.degraded})`);
      if (!rep.declarations.length) problems.push(`${side}: no declarations`);
    }
    const diff = diffReports(before, after);
    result.diff = diff;

    const beforeByKey = new Map(before.declarations.map((d) => [recKey(d), d]));
    const afterByKey = new Map(after.declarations.map((d) => [recKey(d), d]));

    // -- expected status per identity; every identity not listed must be unchanged
    const expected = new Map<string, { status: DeclStatus; why: string; from?: string }>();
    const editedKeys = new Set<string>();
    const editedRecords: { e: EditExpectation; before?: DeclarationRecord; after?: DeclarationRecord }[] = [];
    for (const e of exp.edits ?? []) {
      const key = declKey(e.module, e.path, e.kind);
      const fromKey = e.from ? declKey(e.from, e.path, e.kind) : key;
      const b = beforeByKey.get(fromKey);
      const a = afterByKey.get(key);
      const needBefore = e.status !== 'added';
      const needAfter = e.status !== 'removed';
      if (needBefore && !b) problems.push(`expect.json names ${fromKey}, which does not exist before the edit`);
      if (needAfter && !a) problems.push(`expect.json names ${key}, which does not exist after the edit`);
      if (!needBefore && b) problems.push(`${key} is expected to be added but already exists before`);
      if (!needAfter && a) problems.push(`${key} is expected to be removed but still exists after`);
      editedKeys.add(key);
      editedKeys.add(fromKey);
      editedRecords.push({ e, before: b, after: a });
      const rec = a ?? b;
      if (rec) expected.set(rec.identity, { status: e.status, why: 'edited', ...(e.status === 'moved' && b ? { from: b.identity } : {}) });
      if (e.status === 'changed' || e.status === 'added' || e.status === 'removed') {
        // Merkle: a nested declaration's digest is part of each ancestor's digest.
        for (const p of ancestorPaths(e.path)) {
          const anc = [...(afterByKey.values()), ...(beforeByKey.values())].find((d) => d.module === e.module && d.path === p);
          if (!anc) continue;
          if (!expected.has(anc.identity)) expected.set(anc.identity, { status: 'changed', why: `ancestor of ${e.path}` });
          editedKeys.add(recKey(anc));
        }
      }
      if (e.status === 'redocumented') {
        // A container's doc digest covers the docs inside it (a .d.ts carries them all): the
        // ancestors of a re-documented member are re-documented, their meaning untouched.
        for (const p of ancestorPaths(e.path)) {
          const anc = [...(afterByKey.values()), ...(beforeByKey.values())].find((d) => d.module === e.module && d.path === p);
          if (!anc) continue;
          if (!expected.has(anc.identity)) expected.set(anc.identity, { status: 'redocumented', why: `ancestor of ${e.path}` });
          editedKeys.add(recKey(anc));
        }
      }
    }
    for (const { e, before: b, after: a } of editedRecords) {
      const v = (a ?? b)?.span.file;
      const variant = v ? /\.(\w+)$/.exec(v)![1]! : '';
      if (variant && !result.variants.includes(variant)) result.variants.push(variant);
      void e;
    }

    const seen = new Set<string>();
    for (const c of diff.declarations) {
      seen.add(c.identity);
      const want = expected.get(c.identity);
      const status = want?.status ?? 'unchanged';
      result.checked++;
      if (!want) result.othersUnchanged++;
      if (c.status !== status) {
        problems.push(`${c.identity}: expected ${status}${want ? ` (${want.why})` : ' (not edited)'}, got ${c.status} — ${c.reason}`);
      } else if (want?.from && c.from !== want.from) {
        problems.push(`${c.identity}: expected to have moved from ${want.from}, diff says from ${c.from}`);
      }
    }
    for (const [id, want] of expected) {
      if (!seen.has(id)) problems.push(`${id}: expected ${want.status} (${want.why}) but the diff does not list it`);
    }
    if (result.othersUnchanged === 0) problems.push('no other declaration is checked: the fixture needs declarations beside the edited ones');

    // -- modules
    const moduleExpect = exp.modules ?? {};
    const seenModules = new Set<string>();
    for (const m of diff.modules) {
      const mod = m.module.slice(m.module.indexOf('//') + 2);
      seenModules.add(mod);
      const want = moduleExpect[mod] ?? 'unchanged';
      if (m.status !== want) problems.push(`module ${mod}: expected ${want}, got ${m.status} — ${m.reason}`);
    }
    for (const mod of Object.keys(moduleExpect)) if (!seenModules.has(mod)) problems.push(`module ${mod} named in expect.json does not exist`);

    // -- load-bearing conditions
    const filesBefore = await listFiles(trees.before);
    const filesAfter = await listFiles(trees.after);
    const edited: string[] = [];
    for (const f of new Set([...filesBefore, ...filesAfter])) {
      if (f === 'package.json') continue;
      if (!filesBefore.includes(f) || !filesAfter.includes(f)) {
        problems.push(`${f} exists on one side only: edit existing files so the edit has a position`);
        continue;
      }
      const [ba, bb] = await Promise.all([readFile(join(trees.before, f)), readFile(join(trees.after, f))]);
      if (!ba.equals(bb)) edited.push(f);
    }
    if (!edited.length) problems.push('before and after are identical: the fixture edits nothing');
    const unchangedIds = new Set(diff.declarations.filter((c) => c.status === 'unchanged').map((c) => c.identity));
    for (const f of edited) {
      const [ba, bb] = await Promise.all([readFile(join(trees.before, f)), readFile(join(trees.after, f))]);
      const pos = firstDifference(ba, bb);
      const sf = parse(f, ba.toString('utf8'));
      const editLine = sf.getLineAndCharacterOfPosition(pos).line + 1;
      const lb: CaseResult['loadBearing'][number] = { file: f, editLine };
      result.loadBearing.push(lb);
      const trailing = before.declarations.filter(
        (d) => d.span.file === f && offsetOf(sf, d.span.startLine, d.span.startColumn) > pos && !editedKeys.has(recKey(d)),
      );
      if (!trailing.length) {
        problems.push(`${f}: no declaration is positioned after the edit (line ${editLine}); add one after it`);
        continue;
      }
      const carrying = trailing.filter((d) => {
        const node = nodeOf(sf, d);
        return node !== undefined && countScopes(node) > 0 && unchangedIds.has(d.identity);
      });
      if (!carrying.length) {
        problems.push(
          `${f}: the declarations after the edit (line ${editLine}: ${trailing.map((d) => d.path).join(', ')}) own no nested scope or are not asserted unchanged; one must own a function body, class body or block`,
        );
        continue;
      }
      lb.trailing = carrying.map((d) => `${d.path}:${d.kind}`).join(', ');
    }
    if (exp.row === 'body') {
      for (const { e, before: b, after: a } of editedRecords) {
        if (!b || !a) continue;
        const sb = parse(b.span.file, await readFile(join(trees.before, b.span.file), 'utf8'));
        const sa = parse(a.span.file, await readFile(join(trees.after, a.span.file), 'utf8'));
        const nb = nodeOf(sb, b);
        const na = nodeOf(sa, a);
        if (!nb || !na) {
          problems.push(`${e.path}: cannot locate its syntax node to count scopes`);
          continue;
        }
        const [cb, ca] = [countScopes(nb), countScopes(na)];
        if (cb === ca) problems.push(`${e.path}: a body-change fixture must add or remove a scope (it has ${cb} before and after)`);
      }
    }
  } finally {
    await trees.cleanup();
  }
  return result;
}
