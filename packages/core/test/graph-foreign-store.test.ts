/**
 * Issue 12 ("every parse goes through the pool and the store"), the checker's part: an export with a
 * program looks up the files of other workspace packages the program holds in the workspace view's
 * store before any record is built (view/foreign.ts `sliceFiles`, parsing nothing), extracts on demand
 * only those the checker asks for and were not found (`stats.foreign.inline`), and writes those to the
 * store before it returns (`keep`). Proved on real files: the foreign files' slices are in the store
 * under their package's view after one export, without losing the entries that view already had, and
 * a second export that remembers nothing in the process parses none of them; a package reached
 * through its build output (`dist/index.d.ts`) brings the source it maps to. The records are the same
 * whichever way the slices came (store cold, warm, off, a session's memory).
 */
import { mkdir, mkdtemp, readdir, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphSession, digestTree, exportGraph, graphText, type GraphExportResult } from '@kiln/core';
import { forgetGraphMemos } from '../dist/graph/resolve.js';
import { readManifest } from '../dist/store/manifest.js';
import { viewIdOf } from '../dist/store/format.js';
import { DIGEST_SCHEMA } from '../dist/version.js';
import { writeTree, type Tree } from './lib/graph-fixtures.js';

const TSCONFIG = { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] };

/**
 * An npm workspace: b imports a by name, and a's types are its build output (dist/index.d.ts). a's
 * dist/extra.d.ts is in b's program (re-exported) but nothing b uses is declared there: the checker
 * never asks for it. a's src/other.ts is in no program.
 */
const BUILT_WORKSPACE: Tree = {
  'package.json': JSON.stringify({ name: 'ws-root', private: true, workspaces: ['packages/*'] }),
  'packages/a/package.json': JSON.stringify({ name: '@ws/a', version: '0.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
  'packages/a/tsconfig.json': JSON.stringify({ compilerOptions: { ...TSCONFIG, outDir: 'dist', declaration: true }, include: ['src'] }),
  'packages/a/src/index.ts': `export function greet(name: string): string {
  return 'hello ' + name;
}

export const GREETING = 'hello';
`,
  'packages/a/src/extra.ts': `export const EXTRA = 1;
`,
  'packages/a/src/other.ts': `export const OTHER = 2;
`,
  'packages/a/dist/index.d.ts': `export declare function greet(name: string): string;
export declare const GREETING = "hello";
export * from './extra.js';
`,
  'packages/a/dist/extra.d.ts': `export declare const EXTRA = 1;
`,
  'packages/b/package.json': JSON.stringify({ name: '@ws/b', version: '0.0.0', type: 'module', dependencies: { '@ws/a': '*' } }),
  'packages/b/tsconfig.json': JSON.stringify({ compilerOptions: { ...TSCONFIG, noEmit: true }, include: ['src'] }),
  'packages/b/src/main.ts': `import { greet, GREETING } from '@ws/a';

export const hello = greet('b');
export const loud = GREETING.toUpperCase();
`,
};

let tmp: string;
let ws: string;
let b: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-graph-foreign-'));
  ws = await writeTree(join(tmp, 'ws'), BUILT_WORKSPACE);
  await mkdir(join(ws, 'node_modules/@ws'), { recursive: true });
  await symlink(join(ws, 'packages/a'), join(ws, 'node_modules/@ws/a'), 'dir');
  b = join(ws, 'packages/b');
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

const CALL = { kind: 'calls', from: 'typescript:@ws/b//src/main#hello:variable', to: 'typescript:@ws/a//src/index#greet:function' };

/** The export resolved b's call into a's declaration: the foreign slices were used. */
function expectForeignCall(r: GraphExportResult): void {
  expect(r.ok).toBe(true);
  expect(r.records.find((x) => x.kind === CALL.kind && 'from' in x && x.from === CALL.from && x.to === CALL.to)).toMatchObject({ provenance: 'compiler_checked' });
}

/** The files a's view has in the store's manifest. */
/** The store's content files (cacache content-v2), sorted: new bytes show up here. */
async function contentOf(store: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(store, 'content-v2'), { recursive: true, withFileTypes: true })) if (e.isFile()) out.push(join(e.parentPath ?? e.path, e.name));
  return out.sort();
}

async function filesOfA(store: string): Promise<string[]> {
  const m = await readManifest(store, viewIdOf(await realpath(join(ws, 'packages/a'))), DIGEST_SCHEMA);
  expect(m.status).toBe('hit');
  return m.status === 'hit' ? [...m.manifest.files.keys()].sort() : [];
}

// The program holds four files of a (two build outputs and the sources they map to), all looked up;
// the checker asks for two (dist/index.d.ts declares what b uses, src/index.ts confirms it).
describe('checked export: files of other packages go through the store', () => {
  it('only the files the checker asks for are parsed; a second export with nothing kept in the process finds them in the store and parses none', async () => {
    const store = join(tmp, 'store');
    forgetGraphMemos();
    const cold = await exportGraph(b, { store, workers: 1 });
    expectForeignCall(cold);
    expect(cold.stats?.foreign).toEqual({ files: 4, parsed: 2, inline: 2 });
    // Written to the store under a's own view, as a digest of a would be: a's build output the checker
    // read, and the source it maps to (declarations are confirmed against it).
    expect(await filesOfA(store)).toEqual(['dist/index.d.ts', 'src/index.ts']);

    forgetGraphMemos();
    const warm = await exportGraph(b, { store, workers: 0 });
    expectForeignCall(warm);
    expect(warm.stats?.foreign).toEqual({ files: 4, parsed: 0, inline: 0 });
    expect(graphText(warm)).toBe(graphText(cold));
    // A default pool changes nothing either: the checker's files are never sent to it.
    forgetGraphMemos();
    const pooled = await exportGraph(b, { store });
    expect(pooled.stats?.foreign).toEqual({ files: 4, parsed: 0, inline: 0 });
    expect(graphText(pooled)).toBe(graphText(cold));

    forgetGraphMemos();
    const off = await exportGraph(b, { store: false, workers: 0 });
    expect(off.stats?.foreign).toEqual({ files: 4, parsed: 2, inline: 2 });
    expect(graphText(off)).toBe(graphText(cold));
  });

  it("what an export writes under another package's view keeps that view's entries", async () => {
    const store = join(tmp, 'store-kept');
    // a digested first: its sources (not its build output) are in its view.
    await digestTree(join(ws, 'packages/a'), { store, workers: 0 });
    expect(await filesOfA(store)).toEqual(['src/extra.ts', 'src/index.ts', 'src/other.ts']);
    forgetGraphMemos();
    const cold = await exportGraph(b, { store, workers: 0 });
    expectForeignCall(cold);
    // src/index.ts came from a's view; only the build output the checker read was parsed, and added.
    expect(cold.stats?.foreign).toEqual({ files: 4, parsed: 1, inline: 1 });
    expect(await filesOfA(store)).toEqual(['dist/index.d.ts', 'src/extra.ts', 'src/index.ts', 'src/other.ts']);
    forgetGraphMemos();
    const contentBefore = await contentOf(store);
    const warm = await exportGraph(b, { store, workers: 0 });
    expect(warm.stats?.foreign).toEqual({ files: 4, parsed: 0, inline: 0 });
    expect(graphText(warm)).toBe(graphText(cold));
    // Nothing new was learnt: not a byte of new content (a's manifest, read in another order, is the same text).
    expect(await contentOf(store)).toEqual(contentBefore);
    // And a's own digest still finds all of its files.
    const again = await digestTree(join(ws, 'packages/a'), { store, workers: 0 });
    expect(again.stats.parsed).toBe(0);
    // A tolerant export from syntax reads a's files through a's view too: nothing new, no new bytes.
    forgetGraphMemos();
    const settled = await contentOf(store);
    await exportGraph(b, { mode: 'allow-errors', syntax: true, store, workers: 0 });
    expect(await contentOf(store)).toEqual(settled);
  });

  it("a session's memory answers the next export: nothing parsed, the same records", async () => {
    forgetGraphMemos();
    const session = createGraphSession();
    const first = await exportGraph(b, { store: false, workers: 0, session });
    expect(first.stats?.foreign).toEqual({ files: 4, parsed: 2, inline: 2 });
    const second = await exportGraph(b, { store: false, workers: 0, session });
    expect(second.stats?.foreign).toEqual({ files: 4, parsed: 0, inline: 0 });
    expect(graphText(second)).toBe(graphText(first));
    // Tolerant mode with the checker takes the same path.
    const tolerant = await exportGraph(b, { mode: 'allow-errors', store: false, workers: 0 });
    expect(tolerant.stats?.foreign).toEqual({ files: 4, parsed: 2, inline: 2 });
  });
});
