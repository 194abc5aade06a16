/**
 * Issue 12 point 1 (and the base state of issue 13): a WorkspaceView of a git revision, read from git
 * objects without a checkout, is the view a checkout of that revision gives — packages, tsconfig views,
 * digest reports, reach and lockfile answers — and reading it writes nothing to the working tree.
 *
 * The judge is a real checkout (`git worktree add` in another directory) viewed through node:fs: it
 * shares no reading code with the git tree (workspace/tree.ts's GitTree). The workspace exercises what
 * a tree must answer like a file system: workspace globs, `include`/`exclude` globs expanded by the
 * compiler, `extends` chains, `paths` aliases, a `/// <reference path>` into a shared folder, a JSON
 * module, project references, a symlinked source file, and files that exist only in the working tree.
 */
import { mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkspaceView } from '../dist/view/workspace-view.js';
import { GitTree } from '../dist/workspace/tree.js';
import { KilnError } from '../dist/diagnostics/diagnostic.js';
import { git, tempDirs } from './lib/git-repo.js';

const tempDir = tempDirs('kiln-gittree-');

const TSCONFIG_BASE = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, skipLibCheck: true, types: [], lib: ['ES2022'], resolveJsonModule: true },
});
const tsconfig = (extra: Record<string, unknown> = {}, top: Record<string, unknown> = {}) =>
  JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { rootDir: 'src', outDir: 'dist', ...extra }, include: ['src/**/*'], exclude: ['src/**/*.test.ts'], ...top });
const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, ...extra });

async function write(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

/** Everything a view says about the workspace, without paths of this machine or timings. */
async function describeView(view: WorkspaceView) {
  await view.load(view.projects);
  const packages: Record<string, unknown> = {};
  for (const [root, p] of [...view.packages].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { stats: _stats, ...report } = p.report ?? ({ stats: undefined } as never);
    packages[root] = {
      name: p.project.name,
      tsconfig: p.tsconfig && { configFile: p.tsconfig.configFile, options: p.tsconfig.options, fileNames: p.tsconfig.fileNames, outsideFiles: p.tsconfig.outsideFiles, references: p.tsconfig.references, errors: p.tsconfig.errors },
      report,
      reach: p.reach && { edges: p.reach.edges, files: [...p.reach.files], packages: [...p.reach.packages], externals: [...p.reach.externals] },
      diagnostics: p.diagnostics,
    };
  }
  const lockfile = await view.lockfile();
  return {
    kind: view.kind,
    projects: view.projects.map((p) => ({ name: p.name, root: p.root })),
    diagnostics: view.diagnostics,
    packages,
    versions: { zod: await lockfile.versionOf('zod', 'packages/app') },
  };
}

/** Paths and modification times of every file in the working tree (outside .git): what "nothing written" is checked against. */
async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const rel of (await readdir(root, { recursive: true })) as string[]) {
    if (rel === '.git' || rel.startsWith(`.git/`)) continue;
    const s = await stat(join(root, rel));
    out.push(`${rel}:${s.isFile() ? s.mtimeMs : 'dir'}`);
  }
  return out.sort();
}

async function repo() {
  const root = await tempDir();
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'core.autocrlf', 'false');
  await write(root, {
    'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*', 'tools/**'] }),
    'package-lock.json': JSON.stringify({
      name: 'ws',
      lockfileVersion: 3,
      packages: { '': { name: 'ws', workspaces: ['packages/*'] }, 'node_modules/zod': { version: '3.22.4', resolved: 'https://registry.npmjs.org/zod/-/zod-3.22.4.tgz', integrity: 'sha512-x' } },
    }),
    'tsconfig.base.json': TSCONFIG_BASE,
    'types/globals.d.ts': 'declare const KILN_FLAG: boolean;\n',
    'packages/core/package.json': manifest('@x/core'),
    'packages/core/tsconfig.json': tsconfig({ composite: true }),
    'packages/core/src/index.ts': '/// <reference path="../../../types/globals.d.ts" />\nimport data from "./data.json" with { type: "json" };\nexport { helper } from "./lib/helper.js";\n/** doc */\nexport function parse(s: string): number {\n  return KILN_FLAG ? s.length + data.n : 0;\n}\n',
    'packages/core/src/data.json': '{ "n": 1 }\n',
    'packages/core/src/lib/helper.ts': 'export const helper = (n: number): number => n * 2;\n',
    'packages/core/src/lib/helper.test.ts': 'import { helper } from "./helper.js";\nhelper(1);\n',
    'packages/app/package.json': manifest('@x/app', { dependencies: { '@x/core': '*', zod: '^3.22.0' } }),
    'packages/app/tsconfig.json': tsconfig({ paths: { '~core/*': ['../core/src/*'] } }, { references: [{ path: '../core' }] }),
    'packages/app/src/index.ts': 'import { parse } from "@x/core";\nimport { helper } from "~core/lib/helper.js";\nexport const run = (s: string): number => helper(parse(s));\n',
    'packages/app/src/shared.ts': 'export const shared = 1;\n',
    'tools/gen/package.json': manifest('@x/gen'),
    'tools/gen/tsconfig.json': JSON.stringify({ extends: '../../tsconfig.base.json', compilerOptions: { outDir: 'dist' }, include: ['*.ts'] }),
    'tools/gen/gen.ts': 'export const gen = "g";\n',
  });
  // A symlinked source file (a link git stores as a link).
  await symlink('../../app/src/shared.ts', join(root, 'packages/core/src/shared-link.ts'));
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'one');
  const one = git(root, 'rev-parse', 'HEAD').trim();
  // Two: a comment edit in core, a new file, a deleted file, a package added, a renamed package folder.
  await write(root, {
    'packages/core/src/lib/helper.ts': '// a comment\nexport const helper = (n: number): number => n * 2;\n',
    'packages/core/src/lib/extra.ts': 'export const extra = 3;\n',
    'packages/web/package.json': manifest('@x/web', { dependencies: { '@x/app': '*' } }),
    'packages/web/tsconfig.json': tsconfig(),
    'packages/web/src/index.ts': 'export { run } from "@x/app";\n',
  });
  git(root, 'rm', '-q', 'packages/app/src/shared.ts');
  await write(root, { 'packages/app/src/shared.ts': 'export const shared = 2;\n' });
  git(root, 'mv', 'tools/gen', 'tools/generator');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'two');
  const two = git(root, 'rev-parse', 'HEAD').trim();
  // The working tree moves on (uncommitted): a git view must not see any of it.
  await write(root, { 'packages/core/src/index.ts': 'export const uncommitted = true;\n', 'packages/core/src/untracked.ts': 'export const u = 1;\n' });
  return { root, one, two };
}

async function checkout(root: string, rev: string): Promise<string> {
  const dir = join(await tempDir('kiln-gittree-co-'), 'ws');
  git(root, 'worktree', 'add', '-q', '--detach', dir, rev);
  return dir;
}

describe('WorkspaceView of a git revision, without a checkout', () => {
  it('equals the view of a checkout of that revision, for every state; the working tree is not touched', async () => {
    const { root, one, two } = await repo();
    const before = await snapshot(root);
    const statusBefore = git(root, 'status', '--porcelain');
    for (const rev of [one, two]) {
      const store = await tempDir('kiln-gittree-store-');
      const fromGit = await WorkspaceView.at(root, rev, { store, workers: 0 });
      const gitSide = await describeView(fromGit);
      await fromGit.close();
      const co = await checkout(root, rev);
      const fromDisk = await WorkspaceView.open(co, { store: await tempDir('kiln-gittree-store-'), workers: 0 });
      const diskSide = await describeView(fromDisk);
      await fromDisk.close();
      expect(gitSide).toEqual(diskSide);
      // The cases are really there (a vacuous equality would pass too).
      const pk = gitSide.packages as Record<string, { report: { files: { path: string }[] }; reach: { edges: { request: string; target: string }[] }; tsconfig: { fileNames: string[] } }>;
      expect(pk['packages/core']!.tsconfig.fileNames).toContain('src/shared-link.ts');
      expect(pk['packages/core']!.tsconfig.fileNames).not.toContain('src/lib/helper.test.ts');
      expect(pk['packages/core']!.reach.edges.map((e) => e.target)).toContain('file:types/globals.d.ts');
      // The `paths` alias lands in core's sources, seen through its outputs (a project reference).
      expect(pk['packages/app']!.reach.edges).toContainEqual({ request: 'src/index.ts import:~core/lib/helper.js', target: 'package:@x/core', origin: 'source' });
      expect(pk['packages/app']!.reach.edges).toContainEqual({ request: 'reference:packages/core', target: 'package:@x/core', origin: 'config' });
      expect(gitSide.versions.zod).toBe('3.22.4');
      if (rev === two) {
        expect(Object.keys(pk)).toContain('packages/web');
        expect(gitSide.projects.map((p) => p.root)).toContain('tools/generator');
        expect(pk['packages/core']!.report.files.map((f) => f.path)).toContain('src/lib/extra.ts');
        expect(pk['packages/core']!.report.files.map((f) => f.path)).not.toContain('src/untracked.ts');
      } else expect(gitSide.projects.map((p) => p.root)).toContain('tools/gen');
    }
    expect(await snapshot(root)).toEqual(before);
    expect(git(root, 'status', '--porcelain')).toBe(statusBefore);
  }, 120_000);

  it('two trees opened as a pair (listed at once, one batch, one map of blobs) are the views two separate trees give', async () => {
    const { root, one, two } = await repo();
    const ids = [one, two].map((c) => git(root, 'rev-parse', `${c}^{tree}`).trim()) as [string, string];
    const [a, b] = await GitTree.pair(root, ids[1], ids[0], { recordDisk: true });
    expect(a.diskRecording).toBeDefined();
    expect(b.diskRecording).toBeUndefined();
    for (const [paired, id] of [[a, ids[1]], [b, ids[0]]] as const) {
      const alone = GitTree.ofTree(root, id);
      const paths = git(root, 'ls-tree', '-r', '--name-only', id).split('\n').filter(Boolean);
      for (const p of paths) expect(paired.readFile(join(root, p))?.toString('base64')).toBe(alone.readFile(join(root, p))?.toString('base64'));
      const listing = (t: GitTree) => paths.map((p) => dirname(join(root, p))).map((d) => JSON.stringify(t.list(d)));
      expect(listing(paired)).toEqual(listing(alone));
      const fromGit = await WorkspaceView.open(root, { tree: paired, store: await tempDir('kiln-gittree-store-'), workers: 0 });
      const fromOne = await WorkspaceView.open(root, { tree: alone, store: await tempDir('kiln-gittree-store-'), workers: 0 });
      expect(await describeView(fromGit)).toEqual(await describeView(fromOne));
      await Promise.all([fromGit.close(), fromOne.close()]);
    }
    expect(GitTree.changedPaths(b, a)).toEqual(git(root, 'diff', '--name-only', '--no-renames', one, two).split('\n').filter(Boolean).sort());
    await expect(GitTree.pair(root, ids[0], 'f'.repeat(40))).rejects.toThrow();
  }, 120_000);

  it('a second reading of a revision parses nothing and reads no source blob: every file is known by its blob id', async () => {
    const { root, one, two } = await repo();
    const store = await tempDir('kiln-gittree-store-');
    const first = await WorkspaceView.at(root, one, { store, workers: 0 });
    await first.load(first.projects);
    const parsedFirst = [...first.packages.values()].reduce((n, p) => n + (p.report?.stats.parsed ?? 0), 0);
    expect(parsedFirst).toBeGreaterThan(0);
    const again = await WorkspaceView.at(root, one, { store, workers: 0 });
    const tree = again.tree as GitTree;
    const readBefore = tree.blobsRead;
    await again.load(again.projects);
    const reports = [...again.packages.values()].map((p) => p.report!).filter(Boolean);
    expect(reports.reduce((n, r) => n + r.stats.parsed, 0)).toBe(0);
    expect(reports.every((r) => r.stats.sync === 'tree' && r.stats.vouched === r.stats.files)).toBe(true);
    // Only configs and manifests were read (json), never a source file's blob.
    expect(tree.blobsRead - readBefore).toBeLessThan(15);
    // The next revision: only what changed is parsed (core's edited and new files and its link to app's changed file, web's new file, app's changed file).
    const next = await WorkspaceView.at(root, two, { store, workers: 0 });
    await next.load(next.projects);
    const parsed = Object.fromEntries([...next.packages].map(([r, p]) => [r, p.report?.stats.parsed ?? 0]));
    expect(parsed).toEqual({ 'packages/app': 1, 'packages/core': 3, 'packages/web': 1, 'tools/generator': 0 });
  }, 120_000);

  it('a revision read after the working tree reuses its slices: only files that differ from it are parsed', async () => {
    const { root, two } = await repo();
    const store = await tempDir('kiln-gittree-store-');
    const work = await WorkspaceView.open(root, { store, workers: 0 });
    await work.load(work.projects);
    const base = await WorkspaceView.at(root, two, { store, workers: 0 });
    await base.load(base.projects);
    const parsed = Object.fromEntries([...base.packages].map(([r, p]) => [r, p.report?.stats.parsed ?? 0]));
    // Only core's index.ts: the working tree has an uncommitted edit of it (its untracked file is not in the revision).
    expect(parsed).toEqual({ 'packages/app': 0, 'packages/core': 1, 'packages/web': 0, 'tools/generator': 0 });
  }, 120_000);

  it('an unknown revision is KILN_GIT_REF_UNKNOWN; outside a repository KILN_GIT_UNAVAILABLE', async () => {
    const { root } = await repo();
    const code = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        return e instanceof KilnError ? e.diagnostic.code : String(e);
      }
      return 'no error';
    };
    expect(await code(() => WorkspaceView.at(root, 'no-such-branch'))).toBe('KILN_GIT_REF_UNKNOWN');
    expect(await code(() => WorkspaceView.at(root, '0123456789012345678901234567890123456789'))).toBe('KILN_GIT_REF_UNKNOWN');
    const bare = await tempDir('kiln-gittree-nogit-');
    expect(await code(() => GitTree.open(bare, 'HEAD'))).toBe('KILN_GIT_UNAVAILABLE');
  }, 60_000);

  it('a path that is not UTF-8 is left out with KILN_GIT_PATH_NOT_UTF8, and the rest is read', async () => {
    const { root } = await repo();
    // A file name with a Latin-1 byte, added to the index by its raw bytes.
    const name = Buffer.concat([Buffer.from(join(root, 'packages/core/src/caf')), Buffer.from([0xe9]), Buffer.from('.ts')]);
    await writeFile(name, 'export const c = 1;\n'); // a Buffer path: the name's bytes as they are
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'nonutf8');
    const view = await WorkspaceView.at(root, 'HEAD', { store: false, workers: 0 });
    expect(view.diagnostics.map((d) => d.code)).toContain('KILN_GIT_PATH_NOT_UTF8');
    await view.load(view.projects);
    expect(view.packageAt('packages/core')!.report!.files.length).toBeGreaterThan(2);
    await readFile(join(root, 'package.json')); // the working tree is intact
  }, 60_000);
});
