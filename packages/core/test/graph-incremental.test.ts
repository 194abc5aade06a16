/**
 * Issue 4 points 3 and 9 — a one-file edit after an export: through the store (another process) only
 * the edited file is parsed; through a GraphSession (the same process) no unchanged file is parsed or
 * read from the store, and with the checker only the files the compiler's builder counts as affected
 * are walked again (the builder learns a file's declaration signature at its first change, so the
 * first edit of a file also walks its importers). Either way the records are byte-for-byte those of a fresh export of the edited
 * tree, in tolerant syntax mode and in checked mode, for a body edit and for a signature edit.
 */
import { cp, mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphSession, exportGraph, graphText, type GraphExportOptions } from '@kiln/core';
import { forgetGraphMemos } from '../dist/graph/resolve.js';
import { GEO, NPM_WORKSPACE, writeTree } from './lib/graph-fixtures.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-graph-incremental-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** An export that remembers nothing: no store, no session, and the process's kept answers forgotten. */
async function fresh(dir: string, opts: GraphExportOptions): Promise<string> {
  forgetGraphMemos();
  return graphText(await exportGraph(dir, { ...opts, store: false, workers: 0 }));
}

const edit = async (file: string, from: string, to: string) => {
  const text = await readFile(file, 'utf8');
  expect(text).toContain(from);
  await writeFile(file, text.replace(from, to));
};

describe('one-file edits', () => {
  it('through the store: the next export parses only the edited file', async () => {
    const dir = await writeTree(join(tmp, 'store'), GEO);
    const store = join(tmp, 'store-dir');
    const first = await exportGraph(dir, { mode: 'allow-errors', syntax: true, store, workers: 1 });
    expect(first.stats).toMatchObject({ files: 6, parsed: 6 });
    await edit(join(dir, 'src/math.ts'), 'return n * 3;', 'return n * 3 + 0;');
    const next = await exportGraph(dir, { mode: 'allow-errors', syntax: true, store, workers: 1 });
    expect(next.stats).toMatchObject({ files: 6, parsed: 1 });
    expect(graphText(next)).toBe(await fresh(dir, { mode: 'allow-errors', syntax: true }));
  });

  it('tolerant from syntax, in a session: one file parsed, nothing else read again; the records of a fresh export', async () => {
    const dir = await writeTree(join(tmp, 'syntax'), GEO);
    const session = createGraphSession();
    const opts: GraphExportOptions = { mode: 'allow-errors', syntax: true, store: join(tmp, 'syntax-store'), workers: 0, session };
    expect(graphText(await exportGraph(dir, opts))).toBe(await fresh(dir, { mode: 'allow-errors', syntax: true }));
    await edit(join(dir, 'src/math.ts'), 'return n * 2;', 'return n * 2 + triple(0);');
    const r = await exportGraph(dir, opts);
    expect(r.stats).toMatchObject({ parsed: 1, walked: 0 });
    expect(graphText(r)).toBe(await fresh(dir, { mode: 'allow-errors', syntax: true }));
    // The new mention is there.
    expect(r.records.some((x) => x.kind === 'references' && x.from.endsWith('/math#double:function') && x.to.endsWith('/math#triple:function'))).toBe(true);
    // Without a store too.
    await edit(join(dir, 'src/types.ts'), 'name: string;', 'name: string;\n  tag?: string;');
    const noStore = await exportGraph(dir, { ...opts, store: false });
    expect(noStore.stats).toMatchObject({ parsed: 1 });
    expect(graphText(noStore)).toBe(await fresh(dir, { mode: 'allow-errors', syntax: true }));
  });

  it('tolerant from syntax, in a session: edits of every kind keep only the groups of records whose inputs are unchanged; each export is a fresh one', async () => {
    const dir = await writeTree(join(tmp, 'groups'), GEO);
    const session = createGraphSession();
    const opts: GraphExportOptions = { mode: 'allow-errors', syntax: true, store: false, workers: 0, session };
    const syntax: GraphExportOptions = { mode: 'allow-errors', syntax: true };
    const first = await exportGraph(dir, opts);
    const firstText = graphText(first);
    expect(first.stats?.reused).toBe(0);
    expect(firstText).toBe(await fresh(dir, syntax));
    const steps: [string, () => Promise<void>][] = [
      ['a body edit', () => edit(join(dir, 'src/math.ts'), 'return n * 3;', 'return n * 3 + 0;')],
      ['a new local function', () => edit(join(dir, 'src/math.ts'), 'export const PI2', 'function helper() {\n  return 1;\n}\n\nexport const PI2')],
      ['a mention of it', () => edit(join(dir, 'src/math.ts'), 'return n * 2;', 'return n * 2 * helper();')],
      ['an exported function renamed (its importers mention nothing now)', () => edit(join(dir, 'src/math.ts'), 'export function double(', 'export function twice(')],
      ['renamed back', () => edit(join(dir, 'src/math.ts'), 'export function twice(', 'export function double(')],
      ['a re-export added', () => edit(join(dir, 'src/index.ts'), "export { triple } from './math.js';", "export { triple, double } from './math.js';")],
      ['a new file', () => writeFile(join(dir, 'src/extra.ts'), "import { triple } from './math.js';\nexport const nine = triple(3);\n")],
      ['the new file exported', () => edit(join(dir, 'src/index.ts'), "export * from './shapes.js';", "export * from './shapes.js';\nexport * from './extra.js';")],
      ['a file deleted', () => unlink(join(dir, 'src/legacy.js'))],
      ['a syntax error', () => edit(join(dir, 'src/shapes.ts'), 'return new Circle(1);', 'return new Circle(1;')],
      ['the syntax error fixed', () => edit(join(dir, 'src/shapes.ts'), 'return new Circle(1;', 'return new Circle(1);')],
      ['an entry point added to package.json', () => edit(join(dir, 'package.json'), '"./math": "./src/math.ts"', '"./math": "./src/math.ts",\n    "./extra": "./src/extra.ts"')],
      ['an import changed', () => edit(join(dir, 'src/extra.ts'), "import { triple } from './math.js';", "import { triple } from './math.js';\nimport { unit } from './shapes.js';")],
    ];
    for (const [what, step] of steps) {
      await step();
      const r = await exportGraph(dir, opts);
      expect(graphText(r), what).toBe(await fresh(dir, syntax));
      // Nothing is rebuilt whole after a one-file edit that leaves the file list alone.
      if (what !== 'a new file' && what !== 'a file deleted' && !what.startsWith('an entry point')) expect(r.stats?.reused, what).toBeGreaterThan(0);
      // An export with nothing changed replays every group.
      const again = await exportGraph(dir, opts);
      expect(again.stats?.parsed, what).toBe(0);
      expect(graphText(again), what).toBe(graphText(r));
    }
    // Kept records are shared between results: frozen, so neither a caller nor a later export can
    // change what an earlier result says.
    const decl = first.records.find((x) => x.kind === 'declaration')!;
    expect(() => {
      (decl as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect(graphText(first)).toBe(firstText);
  });

  it('tolerant from syntax, in a session: a change in another workspace package moves the references into it', async () => {
    const root = await writeTree(join(tmp, 'ws-groups'), NPM_WORKSPACE);
    const dir = join(root, 'packages/b');
    const session = createGraphSession();
    const opts: GraphExportOptions = { mode: 'allow-errors', syntax: true, store: false, workers: 0, session };
    const syntax: GraphExportOptions = { mode: 'allow-errors', syntax: true };
    const refs = (r: Awaited<ReturnType<typeof exportGraph>>) => r.records.filter((x) => x.kind === 'references').map((x) => (x as { to: string }).to);
    const before = await exportGraph(dir, opts);
    expect(refs(before)).toEqual(['typescript:@ws/a//src/index#greet:function']);
    await edit(join(root, 'packages/a/src/index.ts'), 'export function greet(', 'export function hail(');
    const after = await exportGraph(dir, opts);
    expect(after.stats).toMatchObject({ parsed: 0 });
    expect(refs(after)).toEqual([]);
    expect(graphText(after)).toBe(await fresh(dir, syntax));
    await edit(join(root, 'packages/a/src/index.ts'), 'export function hail(', 'export function greet(');
    const back = await exportGraph(dir, opts);
    expect(graphText(back)).toBe(graphText(before));
    // b's files unchanged, but its import now names a package outside the workspace.
    await edit(join(root, 'packages/a/package.json'), '"name": "@ws/a"', '"name": "@ws/other"');
    const renamed = await exportGraph(dir, opts);
    expect(renamed.records.find((x) => x.kind === 'import')).toMatchObject({ specifier: '@ws/a', external: true });
    expect(graphText(renamed)).toBe(await fresh(dir, syntax));
  });

  it("the compiler's module resolution answers (kept per tsconfig for the process, with or without a session) are used only while what they were read from is unchanged", async () => {
    const dir = await writeTree(join(tmp, 'resolution'), GEO);
    const session = createGraphSession();
    const syntax: GraphExportOptions = { mode: 'allow-errors', syntax: true };
    const plain: GraphExportOptions = { ...syntax, store: false, workers: 0 };
    const importOf = (r: Awaited<ReturnType<typeof exportGraph>>, specifier: string) => r.records.find((x) => x.kind === 'import' && (x as { specifier: string }).specifier === specifier);
    // Each step: an export in the session and one without, both after the other's answers were kept;
    // both must be the export of a process that remembers nothing.
    const exportAll = async () => {
      const inSession = await exportGraph(dir, { ...plain, session });
      const alone = await exportGraph(dir, plain);
      const text = await fresh(dir, syntax);
      expect(graphText(inSession)).toBe(text);
      expect(graphText(alone)).toBe(text);
      return inSession;
    };
    await edit(join(dir, 'src/types.ts'), 'export interface Named {', "import leftPad from 'left-pad';\nexport const padded = leftPad('a', 2);\nexport interface Named {");
    await exportGraph(dir, { ...plain, session });
    expect(importOf(await exportAll(), 'left-pad')).toMatchObject({ resolved_by: 'kiln', target: 'package:left-pad' });
    // No source file changes: a package appears in node_modules, and the compiler now finds it.
    const lp = join(dir, 'node_modules/left-pad');
    await mkdir(lp, { recursive: true });
    await writeFile(join(lp, 'package.json'), JSON.stringify({ name: 'left-pad', version: '1.3.0', types: 'index.d.ts' }));
    await writeFile(join(lp, 'index.d.ts'), 'export default function leftPad(s: string, n: number): string;\n');
    expect(importOf(await exportAll(), 'left-pad')).toMatchObject({ resolved_by: 'compiler', external: true });
    // Its package.json, rewritten in place (no directory changes), now exports a file that does not
    // exist: read again, not remembered.
    await writeFile(join(lp, 'package.json'), JSON.stringify({ name: 'left-pad', version: '1.3.0', exports: { '.': { types: './missing.d.ts' } } }));
    expect(importOf(await exportAll(), 'left-pad')).toMatchObject({ resolved_by: 'kiln' });
    // The package.json is fixed by a rename over it.
    await writeFile(join(lp, 'types.tmp'), JSON.stringify({ name: 'left-pad', version: '1.3.0', exports: { '.': { types: './index.d.ts' } } }));
    await rename(join(lp, 'types.tmp'), join(lp, 'package.json'));
    expect(importOf(await exportAll(), 'left-pad')).toMatchObject({ resolved_by: 'compiler' });
    // And removed again.
    await rm(lp, { recursive: true });
    expect(importOf(await exportAll(), 'left-pad')).toMatchObject({ resolved_by: 'kiln' });
  });

  it('checked, in a session: a body edit walks only the edited file, a signature edit its dependents too; the records of a fresh export', async () => {
    const dir = join(tmp, 'checked');
    await cp(await writeTree(join(tmp, 'checked-src'), GEO), dir, { recursive: true });
    const session = createGraphSession();
    const opts: GraphExportOptions = { store: false, workers: 0, session };
    const first = await exportGraph(dir, opts);
    expect(first.ok).toBe(true);
    expect(first.stats!.walked).toBe(4); // the four files of the program (src/*.ts)
    expect(graphText(first)).toBe(await fresh(dir, {}));

    // The first change of math.ts: its importers are walked too (see above).
    await edit(join(dir, 'src/math.ts'), 'return n * 3;', 'return n * 3 + 0;');
    const once = await exportGraph(dir, opts);
    expect(once.stats).toMatchObject({ parsed: 1 });
    expect(graphText(once)).toBe(await fresh(dir, {}));
    await edit(join(dir, 'src/math.ts'), 'return n * 3 + 0;', 'return n * 3 + double(0);');
    const body = await exportGraph(dir, opts);
    expect(body.stats).toMatchObject({ parsed: 1, walked: 1 });
    expect(graphText(body)).toBe(await fresh(dir, {}));
    expect(body.records.some((x) => x.kind === 'calls' && x.from.endsWith('/math#triple:function') && x.to.endsWith('/math#double:function'))).toBe(true);

    // A changed signature: the files importing math are checked and walked again.
    await edit(join(dir, 'src/math.ts'), 'export function double(n: number): number {', 'export function double(n: number, by = 2): number {');
    const sig = await exportGraph(dir, opts);
    expect(sig.stats!.walked).toBeGreaterThan(1);
    expect(graphText(sig)).toBe(await fresh(dir, {}));

    // A type error in a session: checked mode refuses, as without one; fixed, the same graph again.
    await edit(join(dir, 'src/math.ts'), 'return n * 3 + double(0);', "return n * 3 + double('0');");
    expect((await exportGraph(dir, opts)).ok).toBe(false);
    await edit(join(dir, 'src/math.ts'), "return n * 3 + double('0');", 'return n * 3 + double(0);');
    expect(graphText(await exportGraph(dir, opts))).toBe(graphText(sig));
  });

  it('tolerant with the checker, in a session: the records of a fresh export after an edit', async () => {
    const dir = await writeTree(join(tmp, 'tolerant'), GEO);
    const session = createGraphSession();
    const opts: GraphExportOptions = { mode: 'allow-errors', store: false, workers: 0, session };
    await exportGraph(dir, opts);
    await edit(join(dir, 'src/shapes.ts'), 'return new Circle(1);', 'return new Circle(2);');
    expect(graphText(await exportGraph(dir, opts))).toBe(await fresh(dir, { mode: 'allow-errors' }));
    await edit(join(dir, 'src/shapes.ts'), 'return new Circle(2);', 'return new Circle(3);');
    const r = await exportGraph(dir, opts);
    expect(r.stats).toMatchObject({ parsed: 1, walked: 1 });
    expect(graphText(r)).toBe(await fresh(dir, { mode: 'allow-errors' }));
  });
});
