// Fresh Nx workspaces installed from the registry, as a user has them: a root package.json that names
// `nx` (an exact version), nx.json, and three TypeScript libraries: `@fresh/b` imports `@fresh/a`
// (neither has a build target), `@fresh/c` has a `build` script.
// Nothing is linked from the kiln repository: kiln comes from its packed tarball (tools/pack.mjs).
//
//   const ws = await freshWorkspace(dir, { nx: '22.6.5', pm: 'npm', extraDevDependencies: { '@kiln/nx': 'file:./kiln-nx-0.1.0.tgz' } });
//   await ws.install();                 // npm install / pnpm install / yarn install
//   const r = await ws.nx(['show', 'projects']);
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanEnv, exec } from './workspace.mjs';

/** The package managers the install tests use, pinned (installed by `packageManagers()` from the npm registry). */
export const PNPM = 'pnpm@10.34.9';
export const YARN = 'yarn@1.22.22';

/**
 * Installs pnpm and yarn (classic) from the npm registry into `dir` once; returns a PATH that has
 * them first, so `pnpm` / `yarn` run as on a user's machine (Nx itself calls `yarn --version`).
 * @param {string} dir
 */
export async function packageManagers(dir) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'pms', private: true }));
  const r = await exec('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', PNPM, YARN], { cwd: dir, env: cleanEnv(), timeoutMs: 180_000 });
  if (r.code !== 0) throw new Error(`installing ${PNPM} and ${YARN} failed:\n${r.output}`);
  return `${join(dir, 'node_modules', '.bin')}:${process.env.PATH}`;
}

/**
 * The environment every command in a fresh workspace runs with: no outer NX_* / GIT_*, no daemon, no
 * cloud, static output; the package managers' own caches as on the machine (a yarn cache folder can be
 * given: yarn 1 keys a local tarball by its file name, so a repacked same-version tarball would be
 * served stale from the machine's cache).
 * @param {{ path?: string, yarnCache?: string }} [options]
 */
export function freshEnv({ path, yarnCache } = {}) {
  return cleanEnv({
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    NX_TUI: 'false',
    NX_DEFAULT_OUTPUT_STYLE: 'static',
    NX_SKIP_NX_CACHE: undefined,
    CI: 'true',
    NO_COLOR: '1',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...(path ? { PATH: path } : {}),
    ...(yarnCache ? { YARN_CACHE_FOLDER: yarnCache } : {}),
  });
}

/**
 * Writes a fresh workspace into `dir` (which must not hold one).
 * @param {string} dir
 * @param {{ nx: string, pm: 'npm' | 'pnpm' | 'yarn', devDependencies?: Record<string, string>, env?: NodeJS.ProcessEnv }} options
 */
export async function freshWorkspace(dir, { nx, pm, devDependencies = {}, env = freshEnv() }) {
  await mkdir(join(dir, 'packages/a/src'), { recursive: true });
  await mkdir(join(dir, 'packages/b/src'), { recursive: true });
  const json = (file, value) => writeFile(join(dir, file), JSON.stringify(value, null, 2) + '\n');
  await json('package.json', {
    name: 'fresh',
    private: true,
    version: '0.0.0',
    workspaces: ['packages/*'],
    devDependencies: { nx, ...devDependencies },
  });
  if (pm === 'pnpm') await writeFile(join(dir, 'pnpm-workspace.yaml'), 'packages:\n  - "packages/*"\n');
  await json('nx.json', {});
  const tsconfig = { compilerOptions: { outDir: 'dist', declaration: true, module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true }, include: ['src'] };
  await json('packages/a/package.json', { name: '@fresh/a', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } });
  await json('packages/a/tsconfig.json', tsconfig);
  await writeFile(join(dir, 'packages/a/src/index.ts'), 'export const inc = (n: number): number => n + 1;\n');
  const workspaceDep = pm === 'npm' ? '1.0.0' : pm === 'pnpm' ? 'workspace:*' : '1.0.0';
  await json('packages/b/package.json', { name: '@fresh/b', version: '1.0.0', type: 'module', dependencies: { '@fresh/a': workspaceDep } });
  await json('packages/b/tsconfig.json', tsconfig);
  await writeFile(join(dir, 'packages/b/src/index.ts'), "import { inc } from '@fresh/a';\nexport const twice = (n: number): number => inc(inc(n));\n");
  // @fresh/c has a build target of its own (a package.json script): kiln keys it without running it.
  await mkdir(join(dir, 'packages/c/src'), { recursive: true });
  await json('packages/c/package.json', { name: '@fresh/c', version: '1.0.0', type: 'module', scripts: { build: 'node -e "require(\'fs\').mkdirSync(\'dist\',{recursive:true})"' } });
  await json('packages/c/tsconfig.json', tsconfig);
  await writeFile(join(dir, 'packages/c/src/index.ts'), 'export const c = 1;\n');
  const git = await exec('git', ['init', '-q', '.'], { cwd: dir, env });
  if (git.code !== 0) throw new Error(git.output);

  const run = (command, args, timeoutMs = 240_000) => exec(command, args, { cwd: dir, env, timeoutMs });
  return {
    root: dir,
    pm,
    env,
    run,
    /** Runs the workspace's own nx (node_modules/.bin/nx). */
    nx: (args, timeoutMs = 180_000) => run(join(dir, 'node_modules', '.bin', 'nx'), args, timeoutMs),
    readJson: async (file) => JSON.parse(await readFile(join(dir, file), 'utf8')),
    readText: (file) => readFile(join(dir, file), 'utf8'),
    writeJson: json,
  };
}
