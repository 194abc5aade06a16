/**
 * Issue 12 ("every parse goes through the pool and the store"), the checker's part: an export with a
 * program slices the files of other workspace packages the program holds through the workspace view's
 * store and pool (view/foreign.ts `sliceFiles`), before any record is built — none on the calling
 * thread past the store (`stats.foreign.inline`). Proved on real files: the foreign files' slices are
 * in the store under their package's view after one export, and a second export that remembers
 * nothing in the process parses none of them; a package reached through its build output
 * (`dist/index.d.ts`) brings the source it maps to. The records are the same whichever way the slices
 * came (store cold, warm, off, a session's memory).
 */
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGraphSession, exportGraph, graphText, type GraphExportResult } from '@kiln/core';
import { forgetGraphMemos } from '../dist/graph/resolve.js';
import { readManifest } from '../dist/store/manifest.js';
import { viewIdOf } from '../dist/store/format.js';
import { DIGEST_SCHEMA } from '../dist/version.js';
import { writeTree, type Tree } from './lib/graph-fixtures.js';

const TSCONFIG = { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: [] };

/** An npm workspace: b imports a by name, and a's types are its build output (dist/index.d.ts). */
const BUILT_WORKSPACE: Tree = {
  'package.json': JSON.stringify({ name: 'ws-root', private: true, workspaces: ['packages/*'] }),
  'packages/a/package.json': JSON.stringify({ name: '@ws/a', version: '0.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
  'packages/a/tsconfig.json': JSON.stringify({ compilerOptions: { ...TSCONFIG, outDir: 'dist', declaration: true }, include: ['src'] }),
  'packages/a/src/index.ts': `export function greet(name: string): string {
  return 'hello ' + name;
}

export const GREETING = 'hello';
`,
  'packages/a/dist/index.d.ts': `export declare function greet(name: string): string;
export declare const GREETING = "hello";
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

describe('checked export: files of other packages go through the store and the pool', () => {
  it('a second export with nothing kept in the process finds their slices in the store, parses none, extracts none inline', async () => {
    const store = join(tmp, 'store');
    forgetGraphMemos();
    const cold = await exportGraph(b, { store, workers: 1 });
    expectForeignCall(cold);
    // Written to the store under a's own view, as a digest of a would be: a's build output the program
    // holds, and the source it maps to (declarations are confirmed against it).
    const m = await readManifest(store, viewIdOf(await realpath(join(ws, 'packages/a'))), DIGEST_SCHEMA);
    expect(m.status).toBe('hit');
    if (m.status === 'hit') expect([...m.manifest.files.keys()].sort()).toEqual(['dist/index.d.ts', 'src/index.ts']);
    expect(cold.stats?.foreign).toEqual({ files: 2, parsed: 2, inline: 0 });

    forgetGraphMemos();
    const warm = await exportGraph(b, { store, workers: 0 });
    expectForeignCall(warm);
    expect(warm.stats?.foreign).toEqual({ files: 2, parsed: 0, inline: 0 });
    expect(graphText(warm)).toBe(graphText(cold));

    forgetGraphMemos();
    const off = await exportGraph(b, { store: false, workers: 0 });
    expect(off.stats?.foreign).toEqual({ files: 2, parsed: 2, inline: 0 });
    expect(graphText(off)).toBe(graphText(cold));
  });

  it("a session's memory answers the next export: nothing parsed, the same records", async () => {
    forgetGraphMemos();
    const session = createGraphSession();
    const first = await exportGraph(b, { store: false, workers: 0, session });
    expect(first.stats?.foreign).toEqual({ files: 2, parsed: 2, inline: 0 });
    const second = await exportGraph(b, { store: false, workers: 0, session });
    expect(second.stats?.foreign).toEqual({ files: 2, parsed: 0, inline: 0 });
    expect(graphText(second)).toBe(graphText(first));
    // Tolerant mode with the checker takes the same path.
    const tolerant = await exportGraph(b, { mode: 'allow-errors', store: false, workers: 0 });
    expect(tolerant.stats?.foreign).toEqual({ files: 2, parsed: 2, inline: 0 });
  });
});
