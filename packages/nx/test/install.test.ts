/**
 * Installs in one step (issue 11, point 7): kiln's packed tarballs (tools/pack.mjs: @kiln/nx and
 * @kiln/cli, each with the @kiln/* packages it needs vendored) install into a fresh Nx workspace with
 * npm, pnpm and yarn (classic), each with the one command the README documents — read from the README,
 * run as written, no overrides, no other install step. The workspace is one a user has (its package.json
 * names Nx; for pnpm it is installed first, see below). Then `nx g @kiln/nx:init` registers the plugin,
 * kiln's build target is in the graph, a build runs through the installed executor, and `kiln keys`
 * runs from the installed CLI.
 *
 * pnpm and yarn are installed from the npm registry (pinned in tools/testing/fresh-workspace.mjs) and
 * put first on PATH, while kiln is packed. The three workspaces install at once (mostly waiting on the
 * network and disk).
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshEnv, freshWorkspace, packageManagers, type FreshWorkspace } from '../../../tools/testing/fresh-workspace.mjs';
import { exec, KILN_ROOT } from '../../../tools/testing/workspace.mjs';

const NX = '24.0.6';
type Pm = 'npm' | 'pnpm' | 'yarn';
const PMS: Pm[] = ['npm', 'pnpm', 'yarn'];

/** The install commands of the README's "Installing from the packed tarballs" block, by package manager. */
async function documentedCommands(): Promise<Record<Pm, string[]>> {
  const readme = await readFile(join(KILN_ROOT, 'README.md'), 'utf8');
  const section = readme.split('\n## ').find((s) => s.startsWith('Installing'));
  if (!section) throw new Error('README.md has no "## Installing" section');
  const out: Partial<Record<Pm, string[]>> = {};
  for (const line of section.split('\n')) {
    const command = line.replace(/#.*$/, '').trim();
    const pm = PMS.find((p) => command.startsWith(`${p} `));
    if (pm && command.includes('.tgz')) {
      if (out[pm]) throw new Error(`README.md documents two ${pm} install commands`);
      out[pm] = command.split(/\s+/);
    }
  }
  for (const pm of PMS) if (!out[pm]) throw new Error(`README.md documents no ${pm} install command`);
  return out as Record<Pm, string[]>;
}

let tmp: string;
let commands: Record<Pm, string[]>;
const installs = new Map<Pm, Promise<{ ws: FreshWorkspace; ms: number }>>();

/**
 * tools/pack.mjs's packSelfContained for each name, in a child process (it is synchronous: run here it
 * would hold this process while the package managers install); the tarballs' paths.
 */
async function packInChild(dest: string, names: string[]): Promise<string[]> {
  const r = await exec(process.execPath, [join(KILN_ROOT, 'tools/pack.mjs'), dest, ...names], { cwd: KILN_ROOT, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`packing ${names.join(', ')} failed:\n${r.output}`);
  const files = r.stdout.trim().split('\n').map((line) => JSON.parse(line) as { name: string; file: string });
  if (files.map((f) => f.name).join() !== names.join()) throw new Error(`packing ${names.join(', ')} gave ${r.stdout}`);
  return files.map((f) => f.file);
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-install-'));
  commands = await documentedCommands();
  // The package managers install and kiln packs at once; each workspace waits only for what it needs.
  const pms = packageManagers(join(tmp, 'pms'));
  const packed = packInChild(join(tmp, 'tgz'), ['@kiln/nx', '@kiln/cli']);
  pms.catch(() => {});
  packed.catch(() => {});
  let active = 0;
  const waiting: (() => void)[] = [];
  for (const pm of PMS) {
    installs.set(
      pm,
      (async () => {
        if (active >= 3) await new Promise<void>((r) => waiting.push(r));
        active++;
        try {
          const path = await pms;
          // yarn 1 keys a local tarball in its cache by file name: a fresh cache, or a repacked
          // same-version tarball would come from an earlier run.
          const env = freshEnv({ path, yarnCache: join(tmp, 'yarn-cache') });
          const ws = await freshWorkspace(join(tmp, pm), { nx: NX, pm, env });
          if (pm === 'pnpm') {
            // `pnpm add -w` in a workspace never installed links no workspace package (@fresh/b could
            // not import @fresh/a); a user's workspace is installed. npm and yarn link them either way.
            const before = await ws.run(pm, ['install'], 300_000);
            if (before.code !== 0) throw new Error(`${pm} install (before kiln) failed:\n${before.output}`);
          }
          const tarballs = await packed;
          for (const t of tarballs) await copyFile(t, join(ws.root, basename(t)));
          const [command, ...args] = commands[pm];
          const r = await ws.run(command, args, 300_000);
          if (r.code !== 0) throw new Error(`${commands[pm].join(' ')} failed:\n${r.output}`);
          return { ws, ms: r.durationMs };
        } finally {
          active--;
          waiting.shift()?.();
        }
      })(),
    );
  }
  for (const p of installs.values()) p.catch(() => {});
}, 300_000);

afterAll(async () => {
  await Promise.allSettled(installs.values());
  if (tmp && process.env.KILN_KEEP_TEMP !== '1') await rm(tmp, { recursive: true, force: true });
});

describe.each(PMS)('%s', (pm) => {
  it('the documented command installs the tarballs; init, the graph, a build and the CLI work', { timeout: 600_000 }, async () => {
    const { ws, ms } = await installs.get(pm)!;
    expect(commands[pm].join(' ')).not.toMatch(/override|resolution/i);
    const manifest = await ws.readJson('package.json');
    expect(Object.keys(manifest.devDependencies).sort()).toEqual(['@kiln/cli', '@kiln/nx', 'nx']);
    expect(manifest.pnpm?.overrides ?? manifest.overrides ?? manifest.resolutions).toBeUndefined();

    const init = await ws.nx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
    expect(init.code, init.output).toBe(0);
    expect((await ws.readJson('nx.json')).plugins).toContainEqual({ plugin: '@kiln/nx', options: { addBuildTargets: true } });

    const show = await ws.nx(['show', 'project', '@fresh/b', '--json']);
    expect(show.code, show.output).toBe(0);
    const b = JSON.parse(show.stdout);
    expect(b.targets.build).toMatchObject({ executor: '@kiln/nx:build', inputs: [{ externalDependencies: [] }] });
    expect(b.targets.build.options.kilnKey).toMatch(/^[0-9a-f]{32}$/);

    // A build through the installed executor: on pnpm, whose layout differs most (the vendored
    // @kiln/core finds its dependencies through .pnpm/); nx-versions.test.ts builds on npm.
    let build: { durationMs: number } | undefined;
    if (pm === 'pnpm') {
      const r = await ws.nx(['run', '@fresh/b:build']); // @fresh/a first (^build)
      expect(r.code, r.output).toBe(0);
      expect(existsSync(join(ws.root, 'packages/b/dist/index.js'))).toBe(true);
      build = r;
    }

    const keys = await ws.run(join(ws.root, 'node_modules/.bin/kiln'), ['keys']);
    expect(keys.code, keys.output).toBe(0);
    expect(keys.stdout).toContain('@fresh/b');
    const t = (x: number) => `${(x / 1000).toFixed(1)} s`;
    console.log(`${pm}: kiln install ${t(ms)} (${commands[pm].join(' ')}); init ${t(init.durationMs)}, show project ${t(show.durationMs)}, ${build ? `build ${t(build.durationMs)}, ` : ''}kiln keys ${t(keys.durationMs)}`);
  });
});
