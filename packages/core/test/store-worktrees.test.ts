/**
 * Issue 4, point 4 — the two-level store across real git worktrees, and its garbage collection:
 * - two worktrees of one repository editing the same file differently each get their own answer;
 * - byte-identical files are extracted once for both (the second worktree parses only what differs);
 * - a rename (git mv) re-parses nothing;
 * - GC removes packs that no view manifest names (and nothing a manifest names), reclaims their bytes,
 *   respects the grace period and --dry-run, and a run after GC still answers right.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import cacache from 'cacache';
import { describe, expect, it } from 'vitest';
import { collectGarbage, digestTree, type DigestReport } from '@kiln/core';
import { git, tempDirs } from './lib/git-repo.js';

const tempDir = tempDirs('kiln-wt-');

const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: '@fx/wt', exports: { '.': './src/index.ts' } }),
  'src/index.ts': `export { area } from './shape';\nexport function main(n: number): number {\n  return n + 1;\n}\n`,
  'src/shape.ts': `export function area(r: number): number {\n  return Math.PI * r * r;\n}\n`,
  'src/util.ts': `export const twice = (x: number) => x * 2;\n`,
  'src/extra.ts': `export interface Options { verbose?: boolean }\n`,
};
const SOURCES = Object.keys(FILES).filter((f) => f !== 'package.json').length;

async function makeRepo(): Promise<{ main: string; second: string }> {
  const base = await tempDir();
  const main = join(base, 'main');
  await mkdir(main);
  for (const [rel, text] of Object.entries(FILES)) {
    await mkdir(join(main, rel, '..'), { recursive: true });
    await writeFile(join(main, rel), text);
  }
  git(main, 'init', '-q', '-b', 'main');
  git(main, 'add', '.');
  git(main, 'commit', '-q', '-m', 'init');
  const second = join(base, 'second');
  git(main, 'worktree', 'add', '-q', second);
  return { main, second };
}

const decl = (r: DigestReport, path: string) => r.declarations.find((d) => d.path === path && d.module_level);
const canonical = (r: DigestReport) => JSON.stringify({ ...r, stats: undefined });

describe.each([
  ['lists and hashes its tree', false],
  ['syncs from git status and the index', true],
] as const)('two git worktrees share one store: each view %s', (_how, useGit) => {
  it('each sees its own edit of the same file; identical files are extracted once; a rename parses nothing', async () => {
    const { main, second } = await makeRepo();
    const store = join(await tempDir(), 'store');
    await writeFile(join(main, 'src/shape.ts'), FILES['src/shape.ts']!.replace('Math.PI * r * r', 'r * r * 3'));
    await writeFile(join(second, 'src/shape.ts'), FILES['src/shape.ts']!.replace('Math.PI * r * r', '4 * r * r'));

    const a = await digestTree(main, { store, workers: 0, git: useGit });
    expect(a.stats).toMatchObject({ parsed: SOURCES, storeHits: 0 });
    const b = await digestTree(second, { store, workers: 0, git: useGit });
    // Only the file whose bytes differ between the worktrees is extracted again.
    expect(b.stats).toMatchObject({ parsed: 1, storeHits: SOURCES - 1 });
    // Each worktree's answer is its own, and equals a store-less run of that worktree.
    expect(decl(a, 'area')!.semantic_digest).not.toBe(decl(b, 'area')!.semantic_digest);
    expect(decl(a, 'main')!.semantic_digest).toBe(decl(b, 'main')!.semantic_digest);
    expect(canonical(a)).toBe(canonical(await digestTree(main, { store: false, workers: 0 })));
    expect(canonical(b)).toBe(canonical(await digestTree(second, { store: false, workers: 0 })));
    // Warm again: nothing parsed in either (from git: the committed files are not even read).
    const warmMain = await digestTree(main, { store, workers: 0, git: useGit });
    expect(warmMain.stats.parsed).toBe(0);
    expect((await digestTree(second, { store, workers: 0, git: useGit })).stats.parsed).toBe(0);
    const warmer = await digestTree(main, { store, workers: 0, git: useGit });
    expect(warmer.stats.sync).toBe(useGit ? 'git' : 'scan');
    // shape.ts is edited (read); the other files are vouched for once their blob ids are recorded
    if (useGit) expect(warmer.stats.vouched).toBe(SOURCES - 1);
    else expect(warmer.stats.vouched).toBe(0);

    // A rename in one worktree: the content is known, so nothing is parsed; the report follows the move.
    git(second, 'mv', 'src/util.ts', 'src/helpers.ts');
    const moved = await digestTree(second, { store, workers: 0, git: useGit });
    expect(moved.stats).toMatchObject({ parsed: 0, storeHits: SOURCES });
    expect(moved.files.map((f) => f.path)).toContain('src/helpers.ts');
    expect(moved.files.map((f) => f.path)).not.toContain('src/util.ts');
    expect(canonical(moved)).toBe(canonical(await digestTree(second, { store: false, workers: 0 })));
    // A deletion: gone from the report, and the other worktree is untouched.
    await rm(join(second, 'src/extra.ts'));
    const deleted = await digestTree(second, { store, workers: 0, git: useGit });
    expect(deleted.files.map((f) => f.path)).not.toContain('src/extra.ts');
    expect((await digestTree(main, { store, workers: 0, git: useGit })).files.map((f) => f.path)).toContain('src/extra.ts');
  });
});

describe('store gc', () => {
  const packKeys = async (store: string) => Object.keys(await cacache.ls(store)).filter((k) => k.includes('/pack/')).sort();

  it('removes packs no manifest names, keeps what any manifest names, and runs still answer right', async () => {
    const { main, second } = await makeRepo();
    const store = join(await tempDir(), 'store');
    await digestTree(main, { store, workers: 0 });
    const [first] = await packKeys(store);
    // Every file of `main` edited: its manifest now names only the new pack; `second` never ran.
    for (const rel of Object.keys(FILES).filter((f) => f !== 'package.json')) {
      await writeFile(join(main, rel), `${await readFile(join(main, rel), 'utf8')}export const edited${rel.length} = ${rel.length};\n`);
    }
    await digestTree(main, { store, workers: 0 });
    const both = await packKeys(store);
    expect(both).toHaveLength(2);

    // Within the grace period nothing is collected.
    expect((await collectGarbage(store)).removed).toEqual([]);
    // Dry run: reported, not removed.
    const later = Date.now() + 60 * 60_000;
    const dry = await collectGarbage(store, { dryRun: true, now: later });
    expect(dry.removed.map((r) => [r.key, r.reason])).toEqual([[first, 'pack no manifest names']]);
    expect(await packKeys(store)).toEqual(both);

    const gc = await collectGarbage(store, { now: later });
    expect(gc.removed.map((r) => r.key)).toEqual([first]);
    expect(gc.reclaimedBytes).toBeGreaterThan(0);
    expect(await packKeys(store)).toEqual(both.filter((k) => k !== first));
    await expect(cacache.verify(store)).resolves.toMatchObject({ badContentCount: 0 });

    // The live view is still warm; the other worktree (whose contents were in the collected pack only)
    // parses again and answers right.
    expect((await digestTree(main, { store, workers: 0 })).stats.parsed).toBe(0);
    const b = await digestTree(second, { store, workers: 0 });
    expect(b.stats.parsed).toBe(SOURCES);
    expect(canonical(b)).toBe(canonical(await digestTree(second, { store: false, workers: 0 })));
    // Collecting again removes nothing live.
    expect((await collectGarbage(store, { now: later })).removed).toEqual([]);
  });

  it('a manifest whose pack was collected (e.g. by a concurrent gc) costs a re-parse, never a wrong answer', async () => {
    const { main } = await makeRepo();
    const store = join(await tempDir(), 'store');
    await digestTree(main, { store, workers: 0, reportMemo: false });
    for (const k of await packKeys(store)) await cacache.rm.entry(store, k);
    await cacache.verify(store);
    const r = await digestTree(main, { store, workers: 0 });
    expect(r.stats.parsed).toBe(SOURCES);
    expect(canonical(r)).toBe(canonical(await digestTree(main, { store: false, workers: 0 })));
  });
});
