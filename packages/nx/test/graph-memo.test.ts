/**
 * The plugin's on-disk graph memo (plugins/src/graph-memo.ts): createNodesV2 answers again from
 * `node_modules/.cache/kiln/graph-memo.json` only while nothing a key can read has changed. Called as Nx
 * calls it, on a real copy of the fixture workspace with a hand-made node_modules (a tsconfig extended
 * from a package, an external package the lockfile does not list, an install marker).
 *
 * Every case: make sure a valid memo exists and is a hit (core not called: graphMemoStats().computed
 * does not move, and the memo file is not rewritten), change one thing, and check the next call is a
 * miss whose keys are exactly what @kiln/core computes from scratch — or, for what no key reads (build
 * outputs), still a hit. A memo is never written valid within 2 s of a change, so cases wait that long.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(__dirname, '../../..');
const FIXTURE = join(REPO, 'fixtures/workspace-basic');
const LIBS = ['base', 'left', 'right', 'top', 'tail'];
const FILES = ['package.json', ...LIBS.map((l) => `libs/${l}/package.json`)];
const RACY_MS = 2_100;

let ws: string;
let code: string;
const p = (rel: string) => join(ws, rel);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let createNodesV2: typeof import('@kiln/nx').createNodesV2;
let graphMemoStats: typeof import('@kiln/nx').graphMemoStats;
let computeWorkspaceKeys: typeof import('@kiln/core').computeWorkspaceKeys;

/**
 * A private copy of the built @kiln/nx, @kiln/core and @kiln/runtime, loaded from there. The memo vouches for kiln's
 * code as this process loaded it, and refuses to be written once the files on disk differ: a rebuild
 * of the repository while these tests run (tsc -w) would otherwise fail them.
 */
async function privateKiln(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-memo-code-'));
  const modules = join(dir, 'node_modules');
  for (const pkg of ['runtime', 'core', 'nx']) {
    await cp(join(REPO, 'packages', pkg, 'package.json'), join(modules, '@kiln', pkg, 'package.json'));
    await cp(join(REPO, 'packages', pkg, 'dist'), join(modules, '@kiln', pkg, 'dist'), { recursive: true });
  }
  for (const entry of await readdir(join(REPO, 'node_modules'))) {
    if (entry !== '@kiln' && !entry.startsWith('.')) await symlink(join(REPO, 'node_modules', entry), join(modules, entry));
  }
  const nx = (await import(pathToFileURL(join(modules, '@kiln/nx/dist/plugins/src/index.js')).href)) as typeof import('@kiln/nx');
  const core = (await import(pathToFileURL(join(modules, '@kiln/core/dist/index.js')).href)) as typeof import('@kiln/core');
  ({ createNodesV2, graphMemoStats } = nx);
  ({ computeWorkspaceKeys } = core);
  return dir;
}

beforeAll(async () => {
  code = await privateKiln();
  ws = await mkdtemp(join(tmpdir(), 'kiln-memo-'));
  await cp(FIXTURE, ws, { recursive: true, filter: (s) => !s.includes('node_modules') });
  // kiln's own build targets (the memo answers for their keys): the libraries' own build targets go.
  for (const lib of LIBS) {
    const manifest = JSON.parse(await readFile(p(`libs/${lib}/package.json`), 'utf8'));
    delete manifest.nx;
    await writeFile(p(`libs/${lib}/package.json`), JSON.stringify(manifest, null, 2));
  }
  process.env.KILN_STORE = join(ws, '.store');
  // A shared tsconfig installed as a package, extended by the workspace's base config.
  await mkdir(p('node_modules/@fx-config/tsconfig'), { recursive: true });
  await writeFile(p('node_modules/@fx-config/tsconfig/package.json'), JSON.stringify({ name: '@fx-config/tsconfig', version: '1.0.0' }));
  await writeFile(p('node_modules/@fx-config/tsconfig/tsconfig.json'), JSON.stringify({ compilerOptions: { removeComments: false } }));
  const base = JSON.parse(await readFile(p('tsconfig.base.json'), 'utf8'));
  await writeFile(p('tsconfig.base.json'), JSON.stringify({ extends: '@fx-config/tsconfig/tsconfig.json', ...base }, null, 2));
  // An external package the lockfile does not list: its version comes from its installed package.json.
  await mkdir(p('node_modules/fx-ext'), { recursive: true });
  await writeFile(p('node_modules/fx-ext/package.json'), JSON.stringify({ name: 'fx-ext', version: '1.0.0', types: 'index.d.ts' }));
  await writeFile(p('node_modules/fx-ext/index.d.ts'), 'export type Ext = string;\n');
  await writeFile(p('libs/base/src/ext.ts'), "import type { Ext } from 'fx-ext';\nexport type Wrapped = Ext[];\n");
  await writeFile(p('libs/base/src/unused.ts'), 'export const unused = 1;\n');
  // Workspace packages linked as an install links them: resolution through node_modules reaches their folders.
  for (const lib of LIBS) {
    await mkdir(p('node_modules/@fx'), { recursive: true });
    await symlink(join('..', '..', 'libs', lib), p(`node_modules/@fx/${lib}`), 'dir');
  }
  await writeFile(p('node_modules/.package-lock.json'), '{}\n');
  // kiln's cache directory, as after any earlier run (creating it changes node_modules, which TypeScript
  // probes: the first computation in a fresh install cannot vouch for what it read).
  await mkdir(p('node_modules/.cache/kiln'), { recursive: true });
}, 60_000);
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
  await rm(code, { recursive: true, force: true });
});

type Keys = Record<string, string>;

/** createNodesV2 called once in a new Node.js process that loads the private kiln afresh; its graphMemoStats(). */
async function freshProcessNodes(options: object): Promise<ReturnType<typeof graphMemoStats>> {
  const entry = pathToFileURL(join(code, 'node_modules/@kiln/nx/dist/plugins/src/index.js')).href;
  const script = `const nx = await import(${JSON.stringify(entry)});
await nx.createNodesV2[1](${JSON.stringify(FILES)}, ${JSON.stringify(options)}, { workspaceRoot: ${JSON.stringify(ws)}, nxJsonConfiguration: {} });
process.stdout.write(JSON.stringify(nx.graphMemoStats()));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: process.env });
  return JSON.parse(stdout) as ReturnType<typeof graphMemoStats>;
}

/** createNodesV2 as Nx calls it: the key of each library, and whether the memo answered. */
async function nodes(): Promise<{ keys: Keys; hit: boolean }> {
  const before = graphMemoStats();
  const [, fn] = createNodesV2;
  const results = await fn(FILES, { addBuildTargets: true }, { workspaceRoot: ws, nxJsonConfiguration: {} } as never);
  const after = graphMemoStats();
  const keys: Keys = {};
  for (const [file, result] of results) {
    for (const [root, project] of Object.entries(result.projects ?? {})) keys[root] = project.targets!.build!.options.kilnKey;
    expect(file === 'package.json' || Object.keys(result.projects ?? {}).length === 1).toBe(true);
  }
  const hit = after.hits === before.hits + 1;
  expect(after.computed).toBe(before.computed + (hit ? 0 : 1));
  return { keys, hit };
}

/** What @kiln/core computes from scratch (no memo involved). */
async function fresh(): Promise<Keys> {
  const keys = await computeWorkspaceKeys(ws, { roots: LIBS.map((l) => `libs/${l}`), record: false });
  return Object.fromEntries(keys.projects.map((k) => [k.root, k.key!]));
}

const memoIno = async () => (await stat(p('node_modules/.cache/kiln/graph-memo.json'), { bigint: true })).ino;

/**
 * Wait out the racy window, compute until the memo is written valid, then check the next call is a hit.
 * One more computation is allowed (and needed) when the last one found an output directory it used to
 * leave out now read: it has no earlier stamps of that directory's files to vouch for.
 */
async function settle(): Promise<Keys> {
  await sleep(RACY_MS);
  let computed = await nodes();
  // At most two more: an output directory left out before is now read (no earlier stamps of its
  // files), then the set fingerprinted by content changed (the snapshot before it walked them by stamps).
  for (let i = 0; i < 2 && graphMemoStats().lastWrite !== 'valid'; i++) {
    expect(graphMemoStats().lastWrite).toMatch(/^(an output directory left out before is read|the output directories fingerprinted by content changed)/);
    computed = await nodes();
    expect(computed.hit).toBe(false);
  }
  expect(graphMemoStats().lastWrite).toBe('valid');
  const ino = await memoIno();
  const again = await nodes();
  expect(again.hit).toBe(true);
  expect(again.keys).toEqual(computed.keys);
  expect(await memoIno()).toBe(ino); // a hit writes nothing
  return again.keys;
}

/** After `change`: a miss, with exactly the keys core computes now; returns [keys before, keys after]. */
async function missAfter(change: () => Promise<unknown>): Promise<[Keys, Keys]> {
  const before = await settle();
  await change();
  const after = await nodes();
  expect(after.hit, 'the memo answered after a change').toBe(false);
  expect(after.keys).toEqual(await fresh());
  return [before, after.keys];
}

describe('graph memo', () => {
  it('answers again when nothing changed, with the keys core computes', async () => {
    const keys = await settle();
    expect(keys).toEqual(await fresh());
    expect(Object.keys(keys).sort()).toEqual(LIBS.map((l) => `libs/${l}`).sort());
    const memo = JSON.parse(await readFile(p('node_modules/.cache/kiln/graph-memo.json'), 'utf8'));
    // What the keys read outside the walk is probed: the extended tsconfig and the installed version.
    expect(memo.probes).toEqual(expect.arrayContaining([p('node_modules/@fx-config/tsconfig/tsconfig.json'), p('node_modules/fx-ext/package.json')]));
    for (let i = 0; i < 3; i++) expect((await nodes()).hit).toBe(true);
  });

  it('misses after a same-size source edit that keeps the mtime (in place, and by rename)', async () => {
    const file = p('libs/base/src/greet.ts');
    const second = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000); // a whole second, a minute ago
    await utimes(file, second, second);
    const edit = async (from: string, to: string, byRename: boolean) => {
      const text = await readFile(file, 'utf8');
      const next = text.replace(from, to);
      expect(next.length).toBe(text.length);
      expect(next).not.toBe(text);
      const was = await stat(file, { bigint: true });
      const target = byRename ? `${file}.tmp` : file;
      await writeFile(target, next);
      await utimes(target, second, second);
      if (byRename) await rename(target, file);
      const is = await stat(file, { bigint: true });
      expect([is.size, is.mtimeNs]).toEqual([was.size, was.mtimeNs]); // only ctime (and the inode) tell
    };
    const [a, b] = await missAfter(() => edit('Hello', 'Hallo', false));
    expect(b['libs/base']).not.toBe(a['libs/base']);
    expect(b['libs/left']).toBe(a['libs/left']); // a private body: dependents keep their keys
    const [c, d] = await missAfter(() => edit('Hallo', 'Hullo', true));
    expect(d['libs/base']).not.toBe(c['libs/base']);
  });

  it('misses after a new, a deleted and a renamed file', async () => {
    const [a, b] = await missAfter(() => writeFile(p('libs/base/src/extra.ts'), 'export const extra = 2;\n'));
    expect(b['libs/base']).not.toBe(a['libs/base']);
    const [, d] = await missAfter(() => unlink(p('libs/base/src/extra.ts')));
    expect(d['libs/base']).toBe(a['libs/base']);
    const [e, f] = await missAfter(() => rename(p('libs/base/src/unused.ts'), p('libs/base/src/unused2.ts')));
    expect(f['libs/base']).not.toBe(e['libs/base']);
  });

  it('misses after a package.json edit and a lockfile edit', async () => {
    const [a, b] = await missAfter(async () => {
      const pkg = JSON.parse(await readFile(p('libs/base/package.json'), 'utf8'));
      await writeFile(p('libs/base/package.json'), JSON.stringify({ ...pkg, sideEffects: false }, null, 2));
    });
    expect(b['libs/base']).not.toBe(a['libs/base']);
    const [c, d] = await missAfter(async () => {
      const lock = await readFile(p('package-lock.json'), 'utf8');
      const next = lock.replace(/("node_modules\/typescript": \{\s*"version": ")5\.9\.3/, '$15.9.2');
      expect(next).not.toBe(lock);
      await writeFile(p('package-lock.json'), next);
    });
    for (const lib of LIBS) expect(d[`libs/${lib}`]).not.toBe(c[`libs/${lib}`]); // the toolchain is in every key
  });

  it('misses after a tsconfig edit, and after an edit of a tsconfig extended from node_modules', async () => {
    const [a, b] = await missAfter(async () => {
      const config = JSON.parse(await readFile(p('libs/top/tsconfig.lib.json'), 'utf8'));
      config.compilerOptions.removeComments = true;
      await writeFile(p('libs/top/tsconfig.lib.json'), JSON.stringify(config, null, 2));
    });
    expect(b['libs/top']).not.toBe(a['libs/top']);
    const [c, d] = await missAfter(() => writeFile(p('node_modules/@fx-config/tsconfig/tsconfig.json'), JSON.stringify({ compilerOptions: { removeComments: true, stripInternal: true } })));
    for (const lib of LIBS) expect(d[`libs/${lib}`]).not.toBe(c[`libs/${lib}`]);
  });

  it("misses after an install (the marker), and after an installed package's version changes without one", async () => {
    const [a, b] = await missAfter(() => writeFile(p('node_modules/.package-lock.json'), '{ "reinstalled": true }\n'));
    expect(b).toEqual(a); // nothing a key reads changed: the same keys, computed again
    const [c, d] = await missAfter(() => writeFile(p('node_modules/fx-ext/package.json'), JSON.stringify({ name: 'fx-ext', version: '2.0.0', types: 'index.d.ts' })));
    expect(d['libs/base']).not.toBe(c['libs/base']);
  });

  it('stays a hit while build outputs are written, replaced and removed', async () => {
    // A computation that finds an output directory there before and after it leaves it out of the memo.
    for (const lib of LIBS) await mkdir(p(`libs/${lib}/dist`), { recursive: true });
    const keys = await settle();
    const memo = JSON.parse(await readFile(p('node_modules/.cache/kiln/graph-memo.json'), 'utf8'));
    expect(memo.skip).toEqual(LIBS.map((l) => `libs/${l}/dist`).sort());
    for (const lib of LIBS) {
      await writeFile(p(`libs/${lib}/dist/index.js`), 'export {};\n');
      await writeFile(p(`libs/${lib}/dist/index.d.ts`), 'export {};\n');
    }
    let r = await nodes();
    expect(r.hit).toBe(true);
    expect(r.keys).toEqual(keys);
    await rm(p('libs/base/dist'), { recursive: true });
    await mkdir(p('libs/base/dist/nested'), { recursive: true });
    await writeFile(p('libs/base/dist/nested/x.d.ts'), 'export declare const x: 1;\n');
    r = await nodes();
    expect(r.hit).toBe(true);
    expect(r.keys).toEqual(await fresh());
  });

  it('misses after an edit in a build-output directory that a key reads (an imported asset)', async () => {
    await writeFile(p('libs/left/dist/meta.json'), '{ "v": 1 }\n');
    await writeFile(p('libs/left/src/meta.ts'), "import meta from '../dist/meta.json' with { type: 'json' };\nexport const v = meta.v;\n");
    const keys = await settle();
    const memo = JSON.parse(await readFile(p('node_modules/.cache/kiln/graph-memo.json'), 'utf8'));
    expect(memo.skip).not.toContain('libs/left/dist');
    const [, b] = await missAfter(() => writeFile(p('libs/left/dist/meta.json'), '{ "v": 2 }\n'));
    expect(b['libs/left']).not.toBe(keys['libs/left']);
  });

  it('stays a hit when a build-output directory a key reads is restored with the same bytes (as Nx restores a cache hit)', async () => {
    // Without the daemon, Nx restores every cache hit's outputs: the same bytes, a new directory, new
    // inodes and times. Stamps alone would miss on every fully cached run.
    const keys = await settle();
    const memo = JSON.parse(await readFile(p('node_modules/.cache/kiln/graph-memo.json'), 'utf8'));
    expect(memo.byContent).toContain('libs/left/dist');
    await cp(p('libs/left/dist'), p('left-dist-saved'), { recursive: true });
    await sleep(RACY_MS);
    await rm(p('libs/left/dist'), { recursive: true });
    await cp(p('left-dist-saved'), p('libs/left/dist'), { recursive: true });
    await rm(p('left-dist-saved'), { recursive: true });
    const r = await nodes();
    expect(r.hit, 'a restore with the same bytes is a memo hit').toBe(true);
    expect(r.keys).toEqual(keys);
    expect(r.keys).toEqual(await fresh());
    // A new file there, even one no key reads, is a miss: by content means the listing too.
    const [, b] = await missAfter(() => writeFile(p('libs/left/dist/extra.txt'), 'x\n'));
    expect(b).toEqual(keys);
  });

  it('misses after an output-directory edit when the tsconfig includes that directory (TypeScript lists it)', async () => {
    // No `exclude`: TypeScript leaves outDir out. With one that does not name it, `**/*` reaches dist.
    const config = JSON.parse(await readFile(p('libs/tail/tsconfig.lib.json'), 'utf8'));
    await writeFile(p('libs/tail/tsconfig.lib.json'), JSON.stringify({ ...config, include: ['**/*.ts'], exclude: ['node_modules'] }, null, 2));
    await rm(p('libs/tail/dist'), { recursive: true, force: true });
    await mkdir(p('libs/tail/dist'));
    const keys = await settle();
    const memo = JSON.parse(await readFile(p('node_modules/.cache/kiln/graph-memo.json'), 'utf8'));
    expect(memo.skip).not.toContain('libs/tail/dist');
    const [, b] = await missAfter(() => writeFile(p('libs/tail/dist/index.d.ts'), 'export declare const t: 1;\n'));
    expect(b['libs/tail']).not.toBe(keys['libs/tail']);
  });

  it('misses when a KILN_* variable or the plugin options change', async () => {
    await settle();
    process.env.KILN_SOMETHING = '1';
    try {
      expect((await nodes()).hit).toBe(false);
    } finally {
      delete process.env.KILN_SOMETHING;
    }
    await settle();
    const [, fn] = createNodesV2;
    const before = graphMemoStats();
    await fn(FILES, { buildTargetName: 'compile' }, { workspaceRoot: ws, nxJsonConfiguration: {} } as never);
    expect(graphMemoStats().computed).toBe(before.computed + 1);
  });

  it('misses when NODE_ENV changes (tool keys read it), and answers again once it is back', async () => {
    await settle();
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = 'kiln-memo-test';
    try {
      expect((await nodes()).hit).toBe(false);
    } finally {
      if (before === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = before;
    }
    await settle();
  });

  it('is never written valid while the workspace holds a symbolic link to a directory', async () => {
    await symlink(p('libs/base/src'), p('libs/base/src-link'));
    try {
      await sleep(RACY_MS);
      await nodes();
      expect(graphMemoStats().lastWrite).toMatch(/^no snapshot/);
      expect((await nodes()).hit).toBe(false);
    } finally {
      await unlink(p('libs/base/src-link'));
    }
  });

  it('KILN_TRACE is no input: a traced call is still a hit, and its capture says so (memo: hit)', async () => {
    await settle();
    const dir = await mkdtemp(join(tmpdir(), 'kiln-memo-trace-'));
    process.env.KILN_TRACE = join(dir, 'trace.json');
    try {
      expect((await nodes()).hit).toBe(true);
    } finally {
      delete process.env.KILN_TRACE;
    }
    const lines = (await readFile(join(dir, 'trace.json'), 'utf8')).split('\n').filter((l) => l.includes('"createNodes"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!.replace(/,$/, ''))).toMatchObject({ ph: 'X', args: { memo: 'hit' } });
  });

  it("misses in a process that loads kiln after kiln's code changed; one that loaded it before never writes a valid memo again", async () => {
    await settle();
    const file = join(code, 'node_modules/@kiln/core/dist/key/unit-key.js');
    await writeFile(file, `${await readFile(file, 'utf8')}\n`); // a rebuild (or an upgrade) of kiln
    // This process runs the code it loaded: the memo it wrote is still its answer.
    expect((await nodes()).hit).toBe(true);
    // A new plugin worker loads the plugin afresh (a new process here: the plugin is several modules,
    // which a query-string import would not load again): the memo was not made by its code.
    await sleep(RACY_MS);
    expect(await freshProcessNodes({})).toMatchObject({ hits: 0, computed: 1 });
    // And this process, whose loaded code is no longer what is on disk, cannot vouch for a computation.
    await writeFile(p('notes.txt'), 'after the rebuild\n');
    await sleep(RACY_MS);
    expect((await nodes()).hit).toBe(false);
    expect(graphMemoStats().lastWrite).toBe("kiln's code changed");
  });
});
