// Real Nx installs for tools/nx-mechanisms.mjs: one npm install per Nx version, kept in
// <tmpdir>/kiln-nx-installs/<label>/ (KILN_NX_INSTALLS overrides) and reused by later runs.
// Nothing of Nx is committed: the install is made by npm from the registry.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exec, cleanEnv } from '../testing/workspace.mjs';

/**
 * label → what is installed. `plugins` is the version of @nx/js, @nx/vite, @nx/rollup, @nx/esbuild
 * (the registry reachable here has no 24.x of those: Nx 24 runs them at 23.2.1, nx forced to 24.0.6
 * through an npm override, which their @nx/devkit's peer range ">= 22 <= 24" allows).
 */
export const VERSIONS = {
  '24': { nx: '24.0.6', plugins: '23.2.1', override: true, vite: '7.3.8', vitest: '3.2.4' },
  '23': { nx: '23.2.1', plugins: '23.2.1', vite: '7.3.8', vitest: '3.2.4' },
  '22': { nx: '22.7.12', plugins: '22.7.12', vite: '7.3.8', vitest: '3.2.4' },
  '21': { nx: '21.6.11', plugins: '21.6.11', vite: '7.3.8', vitest: '3.2.4' },
};

export const installsDir = () => process.env.KILN_NX_INSTALLS || join(tmpdir(), 'kiln-nx-installs');

export function manifestFor(label) {
  const v = VERSIONS[label];
  if (!v) throw new Error(`unknown Nx version label ${label} (have ${Object.keys(VERSIONS).join(', ')})`);
  const devDependencies = {
    nx: v.nx,
    '@nx/devkit': v.plugins,
    '@nx/js': v.plugins,
    '@nx/vite': v.plugins,
    '@nx/rollup': v.plugins,
    '@nx/esbuild': v.plugins,
    typescript: '5.9.3',
    vite: v.vite,
    vitest: v.vitest,
    rollup: '4.68.8',
    esbuild: '0.25.12',
    tslib: '2.8.1',
  };
  return {
    name: `kiln-nx-install-${label}`,
    version: '0.0.0',
    private: true,
    devDependencies,
    ...(v.override ? { overrides: { nx: v.nx } } : {}),
  };
}

/** Installs (once) and returns { dir, nodeModules, lock, manifest, versions: { nx, '@nx/js', … } as installed }. */
export async function ensureInstall(label, log = (s) => process.stderr.write(s + '\n')) {
  const dir = join(installsDir(), `nx-${label}`);
  const manifest = manifestFor(label);
  const done = join(dir, '.installed.json');
  if (existsSync(done)) {
    const prev = JSON.parse(await readFile(done, 'utf8'));
    if (JSON.stringify(prev.manifest) === JSON.stringify(manifest)) return prev;
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  log(`[install] npm install in ${dir} (Nx ${VERSIONS[label].nx}) …`);
  const r = await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env: cleanEnv(), timeoutMs: 900_000 });
  if (r.code !== 0) throw new Error(`npm install for Nx ${label} failed:\n${r.output.slice(-4000)}`);
  const versions = {};
  for (const name of ['nx', '@nx/devkit', '@nx/js', '@nx/vite', '@nx/rollup', '@nx/esbuild', 'vite', 'rollup', 'esbuild', 'typescript']) {
    versions[name] = JSON.parse(await readFile(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;
  }
  const info = { label, dir, nodeModules: join(dir, 'node_modules'), lock: join(dir, 'package-lock.json'), manifest, versions, seconds: Math.round(r.durationMs / 1000) };
  await writeFile(done, JSON.stringify(info, null, 2));
  log(`[install] Nx ${label}: ${JSON.stringify(versions)} in ${info.seconds} s`);
  return info;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const label of process.argv.slice(2)) await ensureInstall(label);
}
