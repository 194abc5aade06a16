/**
 * Issue 3, point 2: the `build` executor run by a real `nx` process (Nx 24, no daemon) in a temp
 * workspace that installs this repository's executors.json as a plugin package. Checks what Nx
 * users see: outputs written, a second run is a cache hit, a changed `kilnKey` is a miss (Nx hashes
 * the option up front — no custom hasher), a type error fails the task with `file:line:col - error
 * TSxxxx`, and an outputPath outside the target's outputs fails instead of being silently uncached.
 *
 * Needs the executor built (`tsc -b executors/tsconfig.json`, part of `npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NX_PKG = dirname(createRequire(join(REPO, 'package.json')).resolve('nx/package.json'));
const NX_BIN = join(NX_PKG, 'dist/bin/nx.js');

let ws: string;

function write(rel: string, text: string): void {
  mkdirSync(dirname(join(ws, rel)), { recursive: true });
  writeFileSync(join(ws, rel), text);
}

function project(options: Record<string, unknown>, outputs = ['{projectRoot}/dist']): void {
  write(
    'libs/a/project.json',
    JSON.stringify({
      name: 'a',
      root: 'libs/a',
      targets: {
        build: { executor: 'kiln-local:build', cache: true, inputs: ['{projectRoot}/src/**/*', '{projectRoot}/tsconfig.lib.json'], outputs, options },
      },
    }),
  );
}

const OPTIONS = { tsConfig: '{projectRoot}/tsconfig.lib.json', outputPath: '{projectRoot}/dist', kilnKey: 'key-1' };

function nx(...args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, [NX_BIN, ...args], {
    cwd: ws,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_INTERACTIVE: 'false', CI: 'true', NX_SKIP_NX_CACHE: '', FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  // eslint-disable-next-line no-control-regex
  return { code: r.status ?? -1, out: `${r.stdout}\n${r.stderr}`.replace(/\u001b\[[0-9;]*m/g, '') };
}

const CACHE_HIT = /read the output from the cache/;

beforeAll(() => {
  expect(existsSync(join(REPO, 'packages/nx/dist/executors/build/impl.js')), 'build first: npm run build').toBe(true);
  ws = mkdtempSync(join(tmpdir(), 'kiln-exec-ws-'));
  mkdirSync(join(ws, 'node_modules/kiln-local'), { recursive: true });
  symlinkSync(NX_PKG, join(ws, 'node_modules/nx'), 'dir');
  // The plugin package as a user would install it: its package.json names executors.json, whose paths
  // are relative to it.
  symlinkSync(join(REPO, 'packages/nx/executors.json'), join(ws, 'node_modules/kiln-local/executors.json'));
  symlinkSync(join(REPO, 'packages/nx/dist'), join(ws, 'node_modules/kiln-local/dist'), 'dir');
  write('node_modules/kiln-local/package.json', JSON.stringify({ name: 'kiln-local', version: '0.0.0', executors: './executors.json' }));
  write('package.json', JSON.stringify({ name: 'exec-ws', private: true }));
  write('nx.json', JSON.stringify({ namedInputs: { default: ['{projectRoot}/**/*'] } }));
  write('libs/a/package.json', JSON.stringify({ name: '@ws/a', type: 'module', main: './dist/index.js' }));
  write(
    'libs/a/tsconfig.lib.json',
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', rootDir: 'src', types: [], lib: ['ES2022'] },
      include: ['src/**/*.ts'],
    }),
  );
  write('libs/a/src/index.ts', '/** A number. */\nexport const a: number = /*#__PURE__*/ Number("1"); // a comment\n');
  project(OPTIONS);
});

afterAll(() => {
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe('nx run a:build with the kiln executor', () => {
  it('builds into the declared outputs', () => {
    const r = nx('run', 'a:build');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('kiln build libs/a: 3 files into libs/a/dist');
    // The executable representation (SPEC §7) beside the main entry's JS, inside the declared outputs.
    expect(r.out).toMatch(/; libs\/a\/dist\/kiln\.rep: \d+ exports?, \d+ covered/);
    expect(readdirSync(join(ws, 'libs/a/dist')).sort()).toEqual(['index.d.ts', 'index.js', 'index.js.map', 'kiln.rep']);
    const js = readFileSync(join(ws, 'libs/a/dist/index.js'), 'utf8');
    expect(js).toContain('/*#__PURE__*/ Number("1")');
    expect(js).not.toContain('a comment');
    expect(readFileSync(join(ws, 'libs/a/dist/index.d.ts'), 'utf8')).toContain('/** A number. */');
  });

  it('is a cache hit when nothing changed, and restores the outputs', () => {
    const r = nx('run', 'a:build');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(CACHE_HIT);
    rmSync(join(ws, 'libs/a/dist'), { recursive: true });
    const again = nx('run', 'a:build');
    expect(again.out).toMatch(CACHE_HIT);
    expect(readdirSync(join(ws, 'libs/a/dist')).sort()).toEqual(['index.d.ts', 'index.js', 'index.js.map', 'kiln.rep']);
  });

  it('runs again when the kilnKey option changes (Nx hashes it up front)', () => {
    project({ ...OPTIONS, kilnKey: 'key-2' });
    const r = nx('run', 'a:build');
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(CACHE_HIT);
    expect(r.out).toContain('kiln build libs/a: 3 files');
  });

  it('fails on a type error with file:line:col and the TS code, writing nothing', () => {
    write('libs/a/src/bad.ts', '\nexport const n: number = "x";\n');
    const r = nx('run', 'a:build');
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`libs/a/src/bad.ts:2:14 - error TS2322: Type 'string' is not assignable to type 'number'.`);
    expect(r.out).toContain('kiln build libs/a failed with 1 error; nothing was written.');
    expect(existsSync(join(ws, 'libs/a/dist'))).toBe(false);
    rmSync(join(ws, 'libs/a/src/bad.ts'));
  });

  it('fails when outputPath is not covered by the target outputs (Nx would not cache it)', () => {
    project({ ...OPTIONS, outputPath: 'libs/a/elsewhere', kilnKey: 'key-3' });
    const r = nx('run', 'a:build');
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("output directory libs/a/elsewhere is not among the target's outputs (libs/a/dist)");
    expect(existsSync(join(ws, 'libs/a/elsewhere'))).toBe(false);
    project(OPTIONS);
  });

  it('a missing tsconfig is a coded error with its hint', () => {
    project({ ...OPTIONS, tsConfig: '{projectRoot}/tsconfig.missing.json', kilnKey: 'key-4' });
    const r = nx('run', 'a:build');
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('error KILN_TSCONFIG_NOT_FOUND: no tsconfig in libs/a: tried tsconfig.missing.json');
    expect(r.out).toContain('hint: ');
    project(OPTIONS);
  });
});
