/**
 * Issue 13: `computeAffected` on a real git repository — one workspace, a commit per kind of change,
 * each compared with its parent. What is asserted is what each target can observe:
 *   - a comment edit: no build key moves and no test can see it; a lint (a target kiln does not model)
 *     runs where `nx affected` would: the project and its dependents;
 *   - a private body edit: only that package's build key moves (its surface did not); every
 *     dependent's tests run (they execute the body), with a reason chain down to the declaration;
 *   - a test file: no build; that project's tests;
 *   - a root config (nx.json): every test, with that reason; no build key (kiln's keys do not read it);
 *   - documentation at the root: nothing;
 *   - a lockfile entry: only the project whose manifest names the package;
 *   - the working tree as head (the default): uncommitted edits count, the base is the merge-base;
 *   - a build that was another tool's at the base: compared by what changed, not by key.
 * The expected sets are written by hand from the edit, not computed by kiln's code.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { computeAffected } from '../dist/affected/affected.js';
import { resolveStates } from '../dist/affected/changes.js';
import { KilnError } from '../dist/diagnostics/diagnostic.js';
import { git, tempDirs } from './lib/git-repo.js';

const tempDir = tempDirs('kiln-affected-');

const tsconfig = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, rootDir: 'src', outDir: 'dist', types: [], lib: ['ES2022'], skipLibCheck: true },
  include: ['src'],
  exclude: ['src/**/*.test.ts'],
});
const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name, version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, ...extra }, null, 2);
const lockfile = (zod: string) =>
  JSON.stringify({
    name: 'ws',
    lockfileVersion: 3,
    packages: {
      '': { name: 'ws', workspaces: ['packages/*'] },
      'node_modules/zod': { version: zod, resolved: `https://registry.npmjs.org/zod/-/zod-${zod}.tgz`, integrity: `sha512-${zod}` },
    },
  });

let root: string;
const commits: Record<string, string> = {};

async function write(files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}
async function commit(name: string, files: Record<string, string>): Promise<void> {
  await write(files);
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', name);
  commits[name] = git(root, 'rev-parse', 'HEAD').trim();
}

const INTERNAL = (body: string, comment = '') => `${comment}export function clamp(n: number): number {\n  return ${body};\n}\n`;

beforeAll(async () => {
  root = await tempDir();
  git(root, 'init', '-q', '-b', 'main');
  await commit('c0', {
    'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }),
    'package-lock.json': lockfile('3.22.4'),
    'nx.json': JSON.stringify({ defaultBase: 'main' }),
    'README.md': '# ws\n',
    'packages/core/package.json': manifest('@x/core'),
    'packages/core/tsconfig.json': tsconfig,
    'packages/core/src/internal.ts': INTERNAL('Math.max(0, n)'),
    'packages/core/src/index.ts': 'import { clamp } from "./internal.js";\nexport function parse(s: string): number {\n  return clamp(s.length);\n}\n',
    'packages/app/package.json': manifest('@x/app', { dependencies: { '@x/core': '*' } }),
    'packages/app/tsconfig.json': tsconfig,
    'packages/app/src/index.ts': 'import { parse } from "@x/core";\nexport const run = (s: string): number => parse(s) + 1;\n',
    'packages/app/src/index.test.ts': 'import { run } from "./index.js";\nif (run("a") !== 2) throw new Error("run");\n',
    'packages/web/package.json': manifest('@x/web', { dependencies: { '@x/app': '*' } }),
    'packages/web/tsconfig.json': tsconfig,
    'packages/web/src/index.ts': 'import { run } from "@x/app";\nexport const page = (): number => run("page");\n',
    'packages/solo/package.json': manifest('@x/solo', { dependencies: { zod: '^3.22.0' } }),
    'packages/solo/tsconfig.json': tsconfig,
    'packages/solo/src/index.ts': 'import type { ZodType } from "zod";\nexport type Schema = ZodType;\nexport const solo = 1;\n',
  });
  await commit('comment', { 'packages/core/src/internal.ts': INTERNAL('Math.max(0, n)', '// clamps below at zero\n') });
  await commit('body', { 'packages/core/src/internal.ts': INTERNAL('Math.max(1, n)', '// clamps below at zero\n') });
  await commit('testfile', { 'packages/app/src/index.test.ts': 'import { run } from "./index.js";\nif (run("ab") !== 3) throw new Error("run");\n' });
  await commit('nxjson', { 'nx.json': JSON.stringify({ defaultBase: 'main', namedInputs: { default: ['{projectRoot}/**/*'] } }) });
  await commit('docs', { 'README.md': '# ws\n\nMore words.\n' });
  await commit('lockfile', { 'package-lock.json': lockfile('3.23.0') });
}, 60_000);

async function affected(base: string, head: string | undefined, targets: string[]) {
  const store = await tempDir('kiln-affected-store-');
  const r = await computeAffected(root, { base, ...(head ? { head } : {}), targets, keyedTarget: 'build', store, workers: 0 });
  const by = (t: string) => r.affected.filter((a) => a.target === t).map((a) => a.project).sort();
  return { r, by };
}

const ALL = ['@x/app', '@x/core', '@x/solo', '@x/web'];

describe('kiln affected: per target, what a change can reach', () => {
  it('a comment edit: no build, no test; a target kiln does not model runs as nx affected would', async () => {
    const { r, by } = await affected(commits.c0!, commits.comment!, ['build', 'test', 'lint']);
    expect(by('build')).toEqual([]);
    expect(by('test')).toEqual([]);
    expect(by('lint')).toEqual(['@x/app', '@x/core', '@x/web']);
    expect(r.affected.find((a) => a.project === '@x/web' && a.target === 'lint')!.rule).toBe('files');
  }, 120_000);

  it('a private body edit: only its own build key moves; every dependent test runs, with the chain to the declaration', async () => {
    const { r, by } = await affected(commits.comment!, commits.body!, ['build', 'test']);
    expect(by('build')).toEqual(['@x/core']);
    expect(r.affected.find((a) => a.target === 'build')!.rule).toBe('key');
    expect(by('test')).toEqual(['@x/app', '@x/core', '@x/web']);
    const web = r.affected.find((a) => a.project === '@x/web' && a.target === 'test')!;
    expect(web.reasons[0]).toEqual(['@x/web:test', '@x/app (dependency)', '@x/core (dependency)', expect.stringMatching(/^@x\/core\/\/src\/internal#clamp:function: /)]);
  }, 120_000);

  it('a test file: no build; the tests of that project (and of its dependents)', async () => {
    const { by } = await affected(commits.body!, commits.testfile!, ['build', 'test']);
    expect(by('build')).toEqual([]);
    expect(by('test')).toEqual(['@x/app', '@x/web']);
  }, 120_000);

  it('nx.json: every test, with that reason; no build key moves', async () => {
    const { r, by } = await affected(commits.testfile!, commits.nxjson!, ['build', 'test']);
    expect(by('build')).toEqual([]);
    expect(by('test')).toEqual(ALL);
    expect(r.affected[0]!.reasons[0]![1]).toMatch(/^nx\.json: workspace configuration changed/);
  }, 120_000);

  it('documentation at the root reaches nothing', async () => {
    const { by } = await affected(commits.nxjson!, commits.docs!, ['build', 'test', 'lint']);
    expect([...by('build'), ...by('test'), ...by('lint')]).toEqual([]);
  }, 120_000);

  it('a lockfile entry: only the project whose manifest names the package', async () => {
    const { r, by } = await affected(commits.docs!, commits.lockfile!, ['build', 'test']);
    expect(by('test')).toEqual(['@x/solo']);
    expect(by('build')).toEqual(['@x/solo']);
    expect(r.affected.find((a) => a.target === 'test')!.reasons[0]![1]).toBe('lockfile: zod: 3.22.4 → 3.23.0');
  }, 120_000);

  it('the working tree is the default head; the base defaults to the merge-base with main', async () => {
    git(root, 'checkout', '-q', '-b', 'feature');
    await write({ 'packages/web/src/index.ts': 'import { run } from "@x/app";\nexport const page = (): number => run("other");\n' });
    try {
      const store = await tempDir('kiln-affected-store-');
      const r = await computeAffected(root, { targets: ['test'], store, workers: 0 });
      expect(r.base.commit).toBe(commits.lockfile);
      expect(r.head.worktree).toBe(true);
      expect(r.affected.map((a) => a.project)).toEqual(['@x/web']);
    } finally {
      git(root, 'checkout', '-q', '--', '.');
      git(root, 'checkout', '-q', 'main');
    }
  }, 120_000);

  it('an unknown base is KILN_GIT_REF_UNKNOWN; a shallow clone without the base is KILN_GIT_SHALLOW', async () => {
    const code = async (f: () => Promise<unknown>) => f().then(() => 'no error', (e) => (e instanceof KilnError ? e.diagnostic.code : String(e)));
    expect(await code(() => computeAffected(root, { base: 'no-such', targets: ['test'], store: false, workers: 0 }))).toBe('KILN_GIT_REF_UNKNOWN');
    const shallow = join(await tempDir('kiln-affected-shallow-'), 'ws');
    git(root, 'clone', '-q', '--depth', '1', `file://${root}`, shallow);
    expect(await code(() => computeAffected(shallow, { base: commits.c0!, targets: ['test'], store: false, workers: 0 }))).toBe('KILN_GIT_SHALLOW');
  }, 120_000);

  it('a merge commit as head: what the merged branch changed, in meaning', async () => {
    git(root, 'checkout', '-q', '-b', 'side', commits.lockfile!);
    await commit('side', { 'packages/solo/src/index.ts': 'import type { ZodType } from "zod";\nexport type Schema = ZodType;\nexport const solo = 2;\n' });
    git(root, 'checkout', '-q', 'main');
    git(root, 'merge', '-q', '--no-ff', '-m', 'merge side', 'side');
    commits.merge = git(root, 'rev-parse', 'HEAD').trim();
    const { by } = await affected(commits.lockfile!, commits.merge, ['build', 'test']);
    expect(by('build')).toEqual(['@x/solo']);
    expect(by('test')).toEqual(['@x/solo']);
  }, 120_000);

  it('the states: a parent base (one git process) and an older one (merge-base) both as git says', async () => {
    const expected = (base: string, head: string) => ({
      base: git(root, 'merge-base', base, head).trim(),
      baseTree: git(root, 'rev-parse', `${git(root, 'merge-base', base, head).trim()}^{tree}`).trim(),
      headTree: git(root, 'rev-parse', `${head}^{tree}`).trim(),
      changed: git(root, 'diff', '--name-only', '--no-renames', git(root, 'merge-base', base, head).trim(), head).split('\n').filter(Boolean).sort(),
    });
    // The merge's parents (first and second), the merge itself, an ancestor two commits back, a side branch.
    for (const [base, head] of [[commits.lockfile!, commits.merge!], [commits.side!, commits.merge!], [commits.merge!, commits.merge!], [commits.c0!, commits.body!], [commits.merge!, commits.side!]]) {
      const s = await resolveStates(root, { base, head });
      expect({ base: s.base, baseTree: s.baseTree, headTree: s.headTree, changed: s.changed }).toEqual(expected(base, head));
      expect(s.head).toBe(head);
    }
  });

  it('a package removed at head: its dependents are affected though none of their files changed; a renamed folder is a new project', async () => {
    git(root, 'rm', '-r', '-q', 'packages/app');
    await commit('rm-app', {});
    const removed = await affected(commits.merge!, commits['rm-app']!, ['build', 'test']);
    expect(removed.by('test')).toEqual(['@x/web']);
    expect(removed.r.affected.find((a) => a.target === 'test')!.reasons[0]![1]).toMatch(/^@x\/app: workspace package removed/);
    git(root, 'mv', 'packages/solo', 'packages/solo2');
    await commit('mv-solo', {});
    const moved = await affected(commits['rm-app']!, commits['mv-solo']!, ['build', 'test']);
    expect(moved.by('test')).toEqual(['@x/solo']);
    expect(moved.by('build')).toEqual(['@x/solo']);
    expect(moved.r.affected[0]!.reasons[0]![1]).toBe('@x/solo: new project');
  }, 120_000);

  it('the kiln plugin registered only at head: kiln\'s build is not compared by key (the base built with something else)', async () => {
    await commit('plugin', { 'nx.json': JSON.stringify({ defaultBase: 'main', plugins: [{ plugin: '@kiln/nx', options: {} }] }) });
    const { r, by } = await affected(commits['mv-solo']!, commits.plugin!, ['build']);
    expect(by('build')).toEqual(['@x/core', '@x/solo', '@x/web']);
    expect(r.affected.every((a) => a.rule === 'full')).toBe(true);
  }, 120_000);

  it('a changed path that is not UTF-8 counts as a change, with KILN_GIT_PATH_NOT_UTF8', async () => {
    await writeFile(Buffer.concat([Buffer.from(join(root, 'packages/core/src/caf')), Buffer.from([0xe9]), Buffer.from('.txt')]), 'x\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'nonutf8');
    commits.nonutf8 = git(root, 'rev-parse', 'HEAD').trim();
    const { r, by } = await affected(commits.plugin!, commits.nonutf8, ['test']);
    // (@x/app was removed above: @x/web no longer reaches @x/core.)
    expect(by('test')).toEqual(['@x/core']);
    expect(r.diagnostics.map((d) => d.code)).toContain('KILN_GIT_PATH_NOT_UTF8');
  }, 120_000);

  it('a lockfile bump of a tool the root manifest names (the test runner): every test, with that reason', async () => {
    const withRunner = (v: string) => {
      const l = JSON.parse(lockfile('3.23.0'));
      l.packages['node_modules/vitest'] = { version: v, resolved: `https://registry.npmjs.org/vitest/-/vitest-${v}.tgz`, integrity: `sha512-${v}`, dev: true };
      return JSON.stringify(l);
    };
    await commit('runner', { 'package.json': JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'], devDependencies: { vitest: '^4.0.0' } }), 'package-lock.json': withRunner('4.0.1') });
    await commit('runner-bump', { 'package-lock.json': withRunner('4.0.2') });
    const { r, by } = await affected(commits.runner!, commits['runner-bump']!, ['test']);
    expect(by('test')).toEqual(['@x/core', '@x/solo', '@x/web']);
    expect(r.affected[0]!.reasons[0]![1]).toBe('lockfile: vitest: 4.0.1 → 4.0.2');
  }, 120_000);

  it("a build that was the package's own script at the base is not compared by key, whatever the working tree says", async () => {
    await commit('script', { 'packages/core/package.json': manifest('@x/core', { scripts: { build: 'tsc -p tsconfig.json' } }) });
    // The head drops the script (kiln builds it from now on) and edits a comment: the key says nothing
    // of what the script built. The working tree stays at the head, where the build is kiln's.
    await commit('unscript', { 'packages/core/package.json': manifest('@x/core'), 'packages/core/src/internal.ts': INTERNAL('Math.max(1, n)', '// clamps below at one\n') });
    const { r, by } = await affected(commits.script!, commits.unscript!, ['build']);
    expect(by('build')).toEqual(['@x/core']);
    const core = r.affected.find((a) => a.project === '@x/core')!;
    expect(core.rule).toBe('full');
    expect(core.reasons[0]![1]).toBe('packages/core/package.json: changed');
  }, 120_000);

  it('the changed paths of every pair of commits above are what git diff lists (removals, moves, a name not UTF-8 included)', async () => {
    const all = Object.values(commits);
    for (const [i, head] of all.entries()) {
      for (const base of [all[i - 1], all[0]]) {
        if (!base) continue;
        const mb = git(root, 'merge-base', base, head).trim();
        const diff = git(root, '-c', 'core.quotepath=off', 'diff', '--name-only', '-z', '--no-renames', mb, head).split('\0').filter(Boolean);
        expect((await resolveStates(root, { base, head })).changed).toEqual([...new Set(diff.map((p) => Buffer.from(p, 'utf8').toString('utf8')))].sort());
      }
    }
  });
});
