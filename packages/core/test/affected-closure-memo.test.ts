/**
 * The head's dependency graph kept per git tree (affected/closure-memo.ts): a second `kiln affected`
 * on the same head takes the graph from the store and answers the same; an edge found only through
 * disk (a `types` entry resolved through a node_modules link into another workspace package, which
 * no git tree holds) is part of what the memo checks again, so when disk answers otherwise the graph
 * is computed again — never the kept one. A damaged entry is a miss.
 */
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import cacache from 'cacache';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeAffected } from '../dist/affected/affected.js';
import { git, tempDirs } from './lib/git-repo.js';

const tempDir = tempDirs('kiln-affected-memo-');

const tsconfig = (types: string[]) =>
  JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, rootDir: 'src', outDir: 'dist', types, skipLibCheck: true },
    include: ['src'],
  });
const manifest = (name: string) => JSON.stringify({ name, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } });

let root: string;
const commits: Record<string, string> = {};

async function commit(name: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', name);
  commits[name] = git(root, 'rev-parse', 'HEAD').trim();
}

const link = () => join(root, 'node_modules/@types/coretypes');

beforeAll(async () => {
  root = await tempDir();
  git(root, 'init', '-q', '-b', 'main');
  await commit('c0', {
    '.gitignore': 'node_modules\n',
    'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
    'packages/core/package.json': manifest('@x/core'),
    'packages/core/tsconfig.json': tsconfig([]),
    'packages/core/src/index.ts': 'export function parse(s: string): number {\n  return s.length;\n}\n',
    'packages/core/types/index.d.ts': 'declare const coreTypes: number;\n',
    // @x/app names @x/core nowhere: its build reaches it only through `types`, resolved on disk.
    'packages/app/package.json': manifest('@x/app'),
    'packages/app/tsconfig.json': tsconfig(['coretypes']),
    'packages/app/src/index.ts': 'export const run = (s: string): number => s.length + 1;\n',
  });
  await commit('body', { 'packages/core/src/index.ts': 'export function parse(s: string): number {\n  return s.length + 1;\n}\n' });
  await mkdir(dirname(link()), { recursive: true });
  await symlink(join(root, 'packages/core/types'), link(), 'dir');
}, 60_000);

async function run(store: string) {
  const messages: string[] = [];
  const r = await computeAffected(root, { base: commits.c0!, head: commits.body!, targets: ['test'], keyedTarget: null, store, workers: 0, onProgress: (m) => messages.push(m) });
  const memo = messages.some((m) => / at the head: from the store/.test(m)) ? 'hit' : messages.some((m) => /^reading \d+ projects at the head/.test(m)) ? 'computed' : 'none';
  return { tests: r.affected.map((a) => a.project).sort(), reasons: r.affected.map((a) => a.reasons), memo };
}

describe('kiln affected: the head dependency graph kept per git tree', () => {
  it('a second run takes the graph from the store and answers the same', async () => {
    const store = await tempDir('kiln-affected-memo-store-');
    const first = await run(store);
    expect(first.memo).toBe('computed');
    expect(first.tests).toEqual(['@x/app', '@x/core']);
    expect(JSON.stringify(first.reasons)).toContain('@x/core (reached by its build)');
    const second = await run(store);
    expect(second.memo).toBe('hit');
    expect(second).toEqual({ ...first, memo: 'hit' });
  }, 120_000);

  it('an edge found on disk: when disk answers otherwise the graph is computed again, never the kept one', async () => {
    const store = await tempDir('kiln-affected-memo-store-');
    expect((await run(store)).tests).toEqual(['@x/app', '@x/core']);
    await rm(link());
    const without = await run(store);
    expect(without.memo).toBe('computed');
    expect(without.tests).toEqual(['@x/core']);
    await symlink(join(root, 'packages/core/types'), link(), 'dir');
    const again = await run(store);
    expect(again.memo).toBe('computed');
    expect(again.tests).toEqual(['@x/app', '@x/core']);
    expect((await run(store)).memo).toBe('hit');
  }, 120_000);

  it('a damaged entry is a miss', async () => {
    const store = await tempDir('kiln-affected-memo-store-');
    await run(store);
    const key = Object.keys(await cacache.ls(store)).find((k) => k.includes('/closure/'))!;
    expect(key).toBeDefined();
    const info = await cacache.get.info(store, key);
    await cacache.put(store, key, Buffer.from('{"kind":"kiln-affected-closure","format":1,"graph":"no"}'), { metadata: info.metadata });
    const r = await run(store);
    expect(r.memo).toBe('computed');
    expect(r.tests).toEqual(['@x/app', '@x/core']);
  }, 120_000);
});
