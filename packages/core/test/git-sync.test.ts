/**
 * Issue 4, point 4 — a view syncs to its tree from git (view/git-state.ts):
 * - git's file list equals the directory walk's on a tree with every kind of path git distinguishes
 *   (tracked, staged, modified, deleted, untracked, ignored files and directories, symlinks, dot and
 *   output directories, node_modules, a nested repository);
 * - a second run reads no file git vouches for, and the report is byte-identical to a scan;
 * - every way a file can change under git is seen: an edit, a staged edit, a commit, a branch switch,
 *   a stash, a reset, a deletion, a new untracked or ignored file, an edit of an ignored file, an
 *   untracked file made tracked;
 * - vouching is off where the bytes on disk need not be the blob (line-ending or filter settings);
 * - a manifest only records a blob id checked against the bytes that were hashed.
 */
import { mkdir, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestTree, type DigestReport } from '@kiln/core';
import { listSourceFiles } from '../src/view/files.js';
import { GIT_SYNC_MIN_FILES } from '../src/view/digest-tree.js';
import { gitBlobId, gitTreeState } from '../src/view/git-state.js';
import { git, tempDirs } from './lib/git-repo.js';

const tempDir = tempDirs('kiln-gitsync-');

async function put(root: string, rel: string, text: string): Promise<void> {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), text);
}

/** A repository whose package lives in `pkg/` (status paths carry a prefix), committed. */
async function makeRepo(files: Record<string, string>): Promise<{ repo: string; pkg: string; store: string }> {
  const repo = await tempDir();
  const pkg = join(repo, 'pkg');
  await put(repo, '.gitignore', 'gen/\n*.local.ts\nnode_modules/\ndist/\n');
  await put(pkg, 'package.json', JSON.stringify({ name: '@fx/gitsync', exports: { '.': './src/index.ts' } }));
  await put(pkg, 'tsconfig.json', JSON.stringify({ compilerOptions: { outDir: 'dist' } }));
  for (const [rel, text] of Object.entries(files)) await put(pkg, rel, text);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'init');
  return { repo, pkg, store: join(await tempDir('kiln-gitsync-store-'), 'store') };
}

const BASE: Record<string, string> = {
  'src/index.ts': `export { area } from './shape';\nexport function main(n: number): number {\n  return n + 1;\n}\n`,
  'src/shape.ts': `export function area(r: number): number {\n  return Math.PI * r * r;\n}\n`,
  'src/util.ts': `export const twice = (x: number) => x * 2;\n`,
};

const canonical = (r: DigestReport) => JSON.stringify({ ...r, stats: undefined });
const digestOf = (r: DigestReport, path: string) => r.declarations.find((d) => d.path === path && d.module_level)?.semantic_digest;
const run = (pkg: string, store: string, git: boolean | "auto" = true) => digestTree(pkg, { store, workers: 0, git });

/** The git-synced report must always equal a scan of the same tree (a fresh store: no history at all). */
async function expectSameAsScan(pkg: string, report: DigestReport): Promise<void> {
  const scan = await digestTree(pkg, { store: false, workers: 0 });
  expect(report.stats.sync).toBe('git');
  expect(canonical(report)).toBe(canonical(scan));
}

describe('git sync: the file list', () => {
  it('equals the directory walk on every kind of path git distinguishes', async () => {
    const { repo, pkg } = await makeRepo({ ...BASE, 'src/staged.ts': 'export const s = 1;\n', 'src/gone.ts': 'export const g = 1;\n', 'src/mod.ts': 'export const m = 1;\n' });
    await put(pkg, 'src/untracked.ts', 'export const u = 1;\n');
    await put(pkg, 'src/deep/untracked/more.tsx', 'export const v = <div/>;\n');
    await put(pkg, 'gen/generated.ts', 'export const gen = 1;\n'); // ignored directory
    await put(pkg, 'src/secret.local.ts', 'export const l = 1;\n'); // ignored file
    await put(pkg, 'node_modules/dep/index.ts', 'export const n = 1;\n');
    await put(pkg, 'dist/out.js', 'export const o = 1;\n');
    await put(pkg, '.cache/c.ts', 'export const c = 1;\n');
    await put(pkg, 'src/notes.md', '# not a source\n');
    await symlink('shape.ts', join(pkg, 'src/alias.ts')); // symlinks are never listed
    await put(pkg, 'src/staged.ts', 'export const s = 2;\n');
    git(repo, 'add', 'pkg/src/staged.ts');
    await put(pkg, 'src/mod.ts', 'export const m = 2;\n');
    await unlink(join(pkg, 'src/gone.ts'));
    // a nested repository: git shows only its directory
    await put(pkg, 'vendor/lib/x.ts', 'export const x = 1;\n');
    git(join(pkg, 'vendor/lib'), 'init', '-q');

    const state = await gitTreeState(pkg, ['dist']);
    expect(state).not.toBeNull();
    expect(state!.files).toEqual(await listSourceFiles(pkg, ['dist']));
    expect(state!.files).toEqual(expect.arrayContaining(['gen/generated.ts', 'src/secret.local.ts', 'src/untracked.ts', 'src/deep/untracked/more.tsx', 'vendor/lib/x.ts', 'src/staged.ts', 'src/mod.ts']));
    expect(state!.files).not.toContain('src/gone.ts');
    expect(state!.files).not.toContain('src/alias.ts');
    // vouched: tracked files git reports unchanged in the working tree (a staged-only change included)
    expect([...state!.blobs.keys()].sort()).toEqual(['src/index.ts', 'src/shape.ts', 'src/staged.ts', 'src/util.ts']);
    expect(state!.blobs.get('src/staged.ts')).toBe(git(repo, 'rev-parse', ':pkg/src/staged.ts').trim());
  });

  it('is null outside a git checkout, and with KILN_GIT_SYNC=0', async () => {
    const plain = await tempDir();
    await put(plain, 'a.ts', 'export const a = 1;\n');
    expect(await gitTreeState(plain)).toBeNull();
    const { pkg } = await makeRepo(BASE);
    process.env.KILN_GIT_SYNC = '0';
    try {
      expect(await gitTreeState(pkg)).toBeNull();
    } finally {
      delete process.env.KILN_GIT_SYNC;
    }
    expect(await gitTreeState(pkg)).not.toBeNull();
  });

  it('gitBlobId is git hash-object', async () => {
    const dir = await tempDir();
    const bytes = Buffer.from('export const a = "é";\r\n\u0000tail');
    await writeFile(join(dir, 'f'), bytes);
    expect(gitBlobId(bytes, 40)).toBe(git(dir, 'hash-object', join(dir, 'f')).trim());
  });
});

describe('git sync: digestTree', () => {
  it('a second run reads no file git vouches for, and answers exactly as a scan', async () => {
    const { pkg, store } = await makeRepo(BASE);
    const first = await run(pkg, store);
    expect(first.stats.sync).toBe('git');
    expect(first.stats.vouched).toBe(0); // nothing recorded yet: every file read, blob ids checked
    const second = await run(pkg, store);
    expect(second.stats.vouched).toBe(3);
    expect(second.stats.bytes).toBe(0);
    expect(second.stats.parsed).toBe(0);
    await expectSameAsScan(pkg, second);
    // the same store with git off: every file read, same answer
    const scanned = await run(pkg, store, false);
    expect(scanned.stats.sync).toBe('scan');
    expect(scanned.stats.bytes).toBeGreaterThan(0);
    expect(canonical(scanned)).toBe(canonical(second));
  });

  it('sees every way a file changes under git', async () => {
    const { repo, pkg, store } = await makeRepo(BASE);
    await run(pkg, store);
    const base = await run(pkg, store);
    const areaDigest = digestOf(base, 'area');

    // 1. an edit in the working tree
    await put(pkg, 'src/shape.ts', `export function area(r: number): number {\n  return 3 * r * r;\n}\n`);
    let r = await run(pkg, store);
    expect(digestOf(r, 'area')).not.toBe(areaDigest);
    await expectSameAsScan(pkg, r);
    const edited = digestOf(r, 'area');

    // 2. staged, then committed: the index blob changes, the bytes do not
    git(repo, 'add', '.');
    r = await run(pkg, store);
    expect(digestOf(r, 'area')).toBe(edited);
    git(repo, 'commit', '-q', '-m', 'edit');
    r = await run(pkg, store);
    expect(digestOf(r, 'area')).toBe(edited);
    expect(r.stats.vouched).toBe(3);
    await expectSameAsScan(pkg, r);

    // 3. a branch switch brings the old content back (every file clean, blob ids differ)
    git(repo, 'checkout', '-q', '-b', 'old', 'HEAD~1');
    r = await run(pkg, store);
    expect(digestOf(r, 'area')).toBe(areaDigest);
    await expectSameAsScan(pkg, r);
    git(repo, 'checkout', '-q', 'main');
    r = await run(pkg, store);
    expect(digestOf(r, 'area')).toBe(edited);

    // 4. stash an edit, then pop it
    await put(pkg, 'src/util.ts', `export const twice = (x: number) => x * 3;\n`);
    const dirty = await run(pkg, store);
    git(repo, 'stash', '-q');
    r = await run(pkg, store);
    expect(digestOf(r, 'twice')).toBe(digestOf(base, 'twice'));
    git(repo, 'stash', 'pop', '-q');
    r = await run(pkg, store);
    expect(digestOf(r, 'twice')).toBe(digestOf(dirty, 'twice'));
    expect(digestOf(r, 'twice')).not.toBe(digestOf(base, 'twice'));

    // 5. a hard reset throws the edit away
    git(repo, 'reset', '-q', '--hard');
    r = await run(pkg, store);
    expect(digestOf(r, 'twice')).toBe(digestOf(base, 'twice'));
    await expectSameAsScan(pkg, r);

    // 6. a deletion (working tree), then committed
    await unlink(join(pkg, 'src/util.ts'));
    r = await run(pkg, store);
    expect(r.files.map((f) => f.path)).not.toContain('src/util.ts');
    await expectSameAsScan(pkg, r);
    git(repo, 'commit', '-q', '-am', 'rm');
    r = await run(pkg, store);
    expect(r.files.map((f) => f.path)).not.toContain('src/util.ts');

    // 7. new untracked and ignored files, an ignored directory, and an edit of an ignored file
    await put(pkg, 'src/fresh.ts', 'export const fresh = 1;\n');
    await put(pkg, 'src/own.local.ts', 'export const own = 1;\n');
    await put(pkg, 'gen/api.ts', 'export const api = 1;\n');
    r = await run(pkg, store);
    expect(r.files.map((f) => f.path)).toEqual(expect.arrayContaining(['src/fresh.ts', 'src/own.local.ts', 'gen/api.ts']));
    const before = await run(pkg, store);
    await put(pkg, 'gen/api.ts', 'export const api = 2;\n');
    await put(pkg, 'src/own.local.ts', 'export const own = 2;\n');
    r = await run(pkg, store);
    expect(digestOf(r, 'api')).not.toBe(digestOf(before, 'api'));
    expect(digestOf(r, 'own')).not.toBe(digestOf(before, 'own'));
    await expectSameAsScan(pkg, r);

    // 8. the untracked file becomes tracked and is edited again after being committed
    git(repo, 'add', 'pkg/src/fresh.ts');
    git(repo, 'commit', '-q', '-m', 'fresh');
    await run(pkg, store);
    await put(pkg, 'src/fresh.ts', 'export const fresh = 2;\n');
    r = await run(pkg, store);
    await expectSameAsScan(pkg, r);
  });

  it('auto: a small view lists and hashes; a view of GIT_SYNC_MIN_FILES files or more syncs from git', async () => {
    const small = await makeRepo(BASE);
    await run(small.pkg, small.store, 'auto');
    expect((await run(small.pkg, small.store, 'auto')).stats.sync).toBe('scan');
    const many: Record<string, string> = {};
    for (let i = 0; i < GIT_SYNC_MIN_FILES; i++) many[`src/many/m${i}.ts`] = `export const v${i} = ${i};\n`;
    const big = await makeRepo(many);
    const first = await digestTree(big.pkg, { store: big.store, git: 'auto' });
    expect(first.stats.sync).toBe('scan'); // no manifest yet: nothing to sync against
    const second = await digestTree(big.pkg, { store: big.store, git: 'auto' });
    expect(second.stats.sync).toBe('git');
    const third = await digestTree(big.pkg, { store: big.store, git: 'auto' });
    expect(third.stats.vouched).toBe(GIT_SYNC_MIN_FILES);
    expect(third.stats.bytes).toBe(0);
    await expectSameAsScan(big.pkg, third);
  });

  it('vouches for nothing where a checkout can rewrite bytes (line endings, filters, attributes)', async () => {
    const { repo, pkg, store } = await makeRepo(BASE);
    git(repo, 'config', 'core.autocrlf', 'input');
    let state = await gitTreeState(pkg);
    expect(state!.blobs.size).toBe(0);
    expect(state!.noVouching).toMatch(/core\.autocrlf/);
    await run(pkg, store);
    const r = await run(pkg, store);
    expect(r.stats.vouched).toBe(0);
    await expectSameAsScan(pkg, r);
    git(repo, 'config', '--unset', 'core.autocrlf');
    expect((await gitTreeState(pkg))!.blobs.size).toBe(3);
    // the repository's attributes: only the paths they name lose vouching
    await put(repo, '.gitattributes', 'shape.ts text eol=crlf\n');
    git(repo, 'add', '.gitattributes');
    state = await gitTreeState(pkg);
    expect([...state!.blobs.keys()].sort()).toEqual(['src/index.ts', 'src/util.ts']);
    expect(state!.noVouching).toMatch(/1 tracked file has checkout attributes/);
    await put(repo, '.gitattributes', '*.ts text eol=lf\n');
    state = await gitTreeState(pkg);
    expect(state!.blobs.size).toBe(0);
    // the user's global attributes file counts too (git reads $XDG_CONFIG_HOME/git/attributes)
    await put(repo, '.gitattributes', '');
    expect((await gitTreeState(pkg))!.blobs.size).toBe(3);
    const xdg = await tempDir('kiln-gitsync-xdg-');
    await put(xdg, 'git/attributes', '*.ts filter=kiln-test\n');
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = xdg;
    try {
      state = await gitTreeState(pkg);
      expect(state!.blobs.size).toBe(0);
      await run(pkg, store);
      const r = await run(pkg, store);
      expect(r.stats.vouched).toBe(0);
      await expectSameAsScan(pkg, r);
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });

  it('records a blob id only for the bytes it hashed, so a file saved mid-run is never mis-associated', async () => {
    const { repo, pkg, store } = await makeRepo(BASE);
    // git's answer is taken for the committed content, then the file changes before it is read:
    // the blob id no longer matches the bytes, so it is not recorded, and reverting later is still seen.
    const committed = BASE['src/util.ts']!;
    await run(pkg, store, false); // a manifest without blob ids
    const state = await gitTreeState(pkg, ['dist']);
    await put(pkg, 'src/util.ts', `export const twice = (x: number) => x * 5;\n`);
    const { collectSlices } = await import('../src/view/collect.js');
    const { DIGEST_SCHEMA } = await import('@kiln/core');
    const collected = await collectSlices({
      packageRoot: pkg,
      files: state!.files,
      inScope: () => true,
      schema: DIGEST_SCHEMA,
      maxFileSize: 1 << 24,
      storeDir: store,
      workers: 0,
      diagnostics: [],
      vouched: state!.blobs,
    });
    const changed = collected.slices.get('src/util.ts')!.contentHash;
    // back to the committed bytes: git vouches again, and the run must not take the x * 5 content
    await put(pkg, 'src/util.ts', committed);
    const r = await run(pkg, store);
    const truth = await digestTree(pkg, { store: false, workers: 0 });
    expect(r.files.find((f) => f.path === 'src/util.ts')!.content_hash).not.toBe(changed);
    expect(canonical(r)).toBe(canonical(truth));
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });
});
