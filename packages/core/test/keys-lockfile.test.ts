/**
 * Issue 10: a build observes more of an external package than the package — the types of its own
 * dependencies (`@types/react` → `csstype`, `react-dom` → `scheduler`, its peer `react`) reach the
 * emitted `.d.ts`. So each external's key part is its version *and* the digest of its transitive
 * closure as the lockfile resolves it: a lockfile refresh that bumps only a transitive package moves
 * the keys of the projects that reach it, and only those.
 *
 * The lockfiles are real: fixtures/lockfiles/generate.sh wrote them with npm 11 (lockfileVersion 3),
 * pnpm 9 (lockfileVersion 9.0), pnpm 8 (6.0), yarn 1.22 (classic) and yarn 4 (berry), each in three
 * states — base; the package manager's own update of csstype under @types/react (transitive); its update
 * of ansi-styles under chalk (unrelated to @x/app). @x/app uses react, react-dom and @types/react;
 * @x/other uses chalk.
 */
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { computeWorkspaceKeys, explainKeyChange, type ProjectKey, type WorkspaceKeys } from '@kiln/core';
import { externalKeyPart, readLockfile } from '../dist/workspace/lockfile.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/lockfiles');
const temps: string[] = [];
afterAll(async () => {
  if (!process.env.KILN_TEST_KEEP) await Promise.all(temps.map((t) => rm(t, { recursive: true, force: true })));
});

type Format = 'npm' | 'pnpm9' | 'pnpm8' | 'yarn1' | 'berry';
const FORMATS: Format[] = ['npm', 'pnpm9', 'pnpm8', 'yarn1', 'berry'];
const LOCKFILE: Record<Format, [fixtureExt: string, name: string]> = {
  npm: ['json', 'package-lock.json'],
  pnpm9: ['yaml', 'pnpm-lock.yaml'],
  pnpm8: ['yaml', 'pnpm-lock.yaml'],
  yarn1: ['lock', 'yarn.lock'],
  berry: ['lock', 'yarn.lock'],
};

const TSCONFIG = (types: string[]) =>
  JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, declaration: true, rootDir: 'src', outDir: 'dist', types, lib: ['ES2022'], skipLibCheck: true }, include: ['src'] });

/** The workspace the fixtures were generated for (manifests as in generate.sh), with sources. */
function workspace(format: Format): Record<string, string> {
  const pnpm = format.startsWith('pnpm');
  return {
    'package.json': JSON.stringify({ name: 'ws', private: true, ...(pnpm ? {} : { workspaces: ['packages/*'] }) }),
    ...(pnpm ? { 'pnpm-workspace.yaml': 'packages:\n  - packages/*\n' } : {}),
    'packages/app/package.json': JSON.stringify({ name: '@x/app', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, dependencies: { react: '18.3.1', 'react-dom': '18.3.1' }, devDependencies: { '@types/react': '18.3.3' } }),
    // `types: []` (as Nx's `types: ["node"]`): @types/react is read only because 'react' is imported.
    'packages/app/tsconfig.json': TSCONFIG([]),
    // A UI library: React's types, whose CSS properties are csstype's, are in its `.d.ts`.
    'packages/app/src/index.ts': `import { createElement } from 'react';\nimport { createRoot } from 'react-dom/client';\nexport type { CSSProperties } from 'react';\nexport const box = (color: string) => createElement('div', { style: { color } });\nexport const mount = (el: Element) => createRoot(el);\n`,
    // Its consumer, which names no external: csstype reaches it through @x/app's surface.
    'packages/consumer/package.json': JSON.stringify({ name: '@x/consumer', version: '1.0.0', type: 'module', dependencies: { '@x/app': '1.0.0' } }),
    'packages/consumer/tsconfig.json': TSCONFIG([]),
    'packages/consumer/src/index.ts': `import type { CSSProperties } from '@x/app';\nexport const style: CSSProperties = { color: 'red' };\n`,
    'packages/other/package.json': JSON.stringify({ name: '@x/other', version: '1.0.0', type: 'module', dependencies: { chalk: '4.1.2' } }),
    'packages/other/tsconfig.json': TSCONFIG([]),
    'packages/other/src/index.ts': `import chalk from 'chalk';\nexport const red = (s: string) => chalk.red(s);\n`,
  };
}

async function writeWorkspace(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-lockfile-'));
  temps.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), text);
  }
  return dir;
}

const fixture = (format: Format, state: 'base' | 'transitive' | 'unrelated') => readFile(join(FIXTURES, format, `${state}.${LOCKFILE[format][0]}`), 'utf8');

/** Keys (build and a `tsc` target kiln does not run) with a given lockfile text. */
async function keysWith(format: Format, lockText: string | null): Promise<WorkspaceKeys> {
  const files = workspace(format);
  if (lockText !== null) files[LOCKFILE[format][1]] = lockText;
  const dir = await writeWorkspace(files);
  return computeWorkspaceKeys(dir, { workers: 0, targets: { 'packages/app': [{ name: 'typecheck', command: 'tsc -p tsconfig.json --noEmit' }] } });
}

const project = (r: WorkspaceKeys, name: string): ProjectKey => r.projects.find((p) => p.project === name)!;
const toolKey = (r: WorkspaceKeys) => project(r, '@x/app').targets?.typecheck?.key;
/** The tool target's closures of what @x/app imports (its key also holds every hoisted `@types/*`, ambient to a tool). */
const toolClosures = (r: WorkspaceKeys) => {
  const c = project(r, '@x/app').targets!.typecheck!.components;
  return Object.fromEntries(['react', 'react-dom', 'typescript'].map((n) => [n, c.closures[n]?.digest ?? null]));
};

describe.each(FORMATS)('lockfile closures: %s', (format) => {
  let base: WorkspaceKeys, transitive: WorkspaceKeys, unrelated: WorkspaceKeys;
  const states = (async () => {
    base = await keysWith(format, await fixture(format, 'base'));
    transitive = await keysWith(format, await fixture(format, 'transitive'));
    unrelated = await keysWith(format, await fixture(format, 'unrelated'));
  })();

  it('reads the lockfile without diagnostics, and the closures are what the package manager resolved', async () => {
    await states;
    expect(base.diagnostics.filter((d) => d.code.startsWith('KILN_LOCKFILE'))).toEqual([]);
    const app = project(base, '@x/app').components!;
    expect(app.externals).toMatchObject({ react: '18.3.1', 'react-dom': '18.3.1' });
    // 'react' is read with its types: @types/react at its version and its closure.
    expect(app.closures?.react?.packages).toEqual(['@types/prop-types@15.7.15', '@types/react@18.3.3', 'csstype@3.1.2', 'js-tokens@4.0.0', 'loose-envify@1.4.0']);
    const after = project(transitive, '@x/app').components!;
    expect(after.closures?.react?.packages).toEqual(['@types/prop-types@15.7.15', '@types/react@18.3.3', 'csstype@3.2.4', 'js-tokens@4.0.0', 'loose-envify@1.4.0']);
    // react-dom reaches scheduler and its peer react (pnpm: named by the peer suffix of its snapshot id;
    // yarn classic's lockfile records no peers — the project that provides the peer keys it itself).
    const dom = app.closures?.['react-dom']?.packages ?? [];
    expect(dom).toEqual(expect.arrayContaining(['loose-envify@1.4.0', 'js-tokens@4.0.0', ...(format === 'yarn1' ? [] : ['react@18.3.1'])]));
    expect(dom).not.toContain('csstype@3.1.2'); // no @types/react-dom here; react's types come with react
    expect(dom.some((p) => p.startsWith('scheduler@0.23.'))).toBe(true);
    expect(project(base, '@x/other').components!.closures?.chalk?.packages).toEqual(expect.arrayContaining(['ansi-styles@4.2.1', '@types/color-name@1.1.5', 'has-flag@4.0.0']));
  });

  it('a transitive-only bump (csstype under @types/react) moves the dependent key — build and tool target — and keeps the other', async () => {
    await states;
    // The versions a key named before this change are the same: only the closure tells.
    expect(project(transitive, '@x/app').components!.externals).toEqual(project(base, '@x/app').components!.externals);
    expect(project(transitive, '@x/app').key).not.toBe(project(base, '@x/app').key);
    expect(toolKey(transitive)).toBeDefined();
    expect(project(transitive, '@x/app').targets!.typecheck!.components.externals).toEqual(project(base, '@x/app').targets!.typecheck!.components.externals);
    expect(toolKey(transitive)).not.toBe(toolKey(base));
    expect(toolClosures(transitive).react).not.toBe(toolClosures(base).react);
    expect(project(transitive, '@x/other').key).toBe(project(base, '@x/other').key);
    // explain-miss names what moved.
    const why = explainKeyChange(project(base, '@x/app').components!, project(transitive, '@x/app').components!);
    expect(why.map((c) => c.detail)).toContain('transitive dependencies of react changed in the lockfile: csstype@3.1.2 → 3.2.4');
  });

  it('the same bump moves the key of a consumer that names no external (through the UI library it uses)', async () => {
    await states;
    const c = (r: WorkspaceKeys) => project(r, '@x/consumer').components!;
    expect(c(base).externals).toEqual({});
    expect(c(transitive).dependencies['@x/app']!.mode).toBe('surface');
    expect(project(transitive, '@x/consumer').key).not.toBe(project(base, '@x/consumer').key);
    expect(project(unrelated, '@x/consumer').key).toBe(project(base, '@x/consumer').key);
  });

  it("a bump outside the closure (ansi-styles under chalk) keeps the dependent key and moves the one that reaches it", async () => {
    await states;
    expect(project(unrelated, '@x/app').key).toBe(project(base, '@x/app').key);
    expect(toolClosures(unrelated)).toEqual(toolClosures(base));
    expect(project(unrelated, '@x/other').components!.externals).toEqual(project(base, '@x/other').components!.externals);
    expect(project(unrelated, '@x/other').key).not.toBe(project(base, '@x/other').key);
  });
});

describe('one digest for one set of instances', () => {
  it('the five lockfiles of one install give react (no peers on its path) the same closure digest', async () => {
    const digests = new Set<string>();
    for (const format of FORMATS) {
      const dir = await writeWorkspace({ ...workspace(format), [LOCKFILE[format][1]]: await fixture(format, 'base') });
      const part = await externalKeyPart(await readLockfile(dir), 'react', 'packages/app');
      expect(part.closure?.packages, format).toEqual(['@types/prop-types@15.7.15', '@types/react@18.3.3', 'csstype@3.1.2', 'js-tokens@4.0.0', 'loose-envify@1.4.0']);
      digests.add(part.closure!.digest);
    }
    // Registry versions are immutable: no integrity, checksum or tarball URL enters the digest.
    expect([...digests]).toHaveLength(1);
  });

  it('a git dependency at the same version but another commit is another closure (hand-edited npm lockfile)', async () => {
    const git = (sha: string) => async () => {
      const text = (await fixture('npm', 'base')).replace(/("node_modules\/csstype": \{\n\s+"version": "3\.1\.2",\n)/, `$1      "resolved": "git+ssh://git@github.com/frenic/csstype.git#${sha}",\n`);
      expect(text).toContain(sha);
      const dir = await writeWorkspace({ ...workspace('npm'), 'package-lock.json': text });
      return (await externalKeyPart(await readLockfile(dir), 'react', 'packages/app')).closure!.digest;
    };
    expect(await git('a'.repeat(40))()).not.toBe(await git('b'.repeat(40))());
  });
});

describe('pnpm peer suffixes', () => {
  it('an instance is its snapshot id with the peer resolution; its closure holds the peer it resolved', async () => {
    for (const format of ['pnpm9', 'pnpm8'] as const) {
      const dir = await writeWorkspace({ ...workspace(format), 'pnpm-lock.yaml': await fixture(format, 'base') });
      const lock = await readLockfile(dir);
      expect(await lock.versionOf('react-dom', 'packages/app')).toBe('18.3.1');
      const c = await lock.closureOf('react-dom', 'packages/app');
      expect(c?.packages).toContain('react@18.3.1');
      // Another peer resolution is another instance: a different closure even at the same version.
      const other = (await fixture(format, 'base')).replaceAll('react-dom@18.3.1(react@18.3.1)', 'react-dom@18.3.1(react@18.2.0)').replaceAll('version: 18.3.1(react@18.3.1)', 'version: 18.3.1(react@18.2.0)').replaceAll('react-dom: 18.3.1(react@18.3.1)', 'react-dom: 18.3.1(react@18.2.0)');
      const dir2 = await writeWorkspace({ ...workspace(format), 'pnpm-lock.yaml': other });
      const c2 = await (await readLockfile(dir2)).closureOf('react-dom', 'packages/app');
      expect(c2?.digest).not.toBe(c?.digest);
    }
  });
});

describe('a lockfile kiln cannot resolve: a coded diagnostic and a key that moves with the lockfile', () => {
  const cases: [string, Format, (base: string) => string, string][] = [
    ['npm: not JSON', 'npm', (t) => t.slice(0, t.length - 40), 'KILN_LOCKFILE_INVALID'],
    ['npm: lockfileVersion 1', 'npm', () => JSON.stringify({ name: 'ws', lockfileVersion: 1, dependencies: { csstype: { version: '3.1.2' } } }), 'KILN_LOCKFILE_UNSUPPORTED'],
    ['pnpm: not YAML', 'pnpm9', (t) => t.replace('importers:\n', 'importers:\n  - [\n'), 'KILN_LOCKFILE_INVALID'],
    ['pnpm: lockfileVersion 5.4', 'pnpm9', (t) => t.replace("lockfileVersion: '9.0'", 'lockfileVersion: 5.4'), 'KILN_LOCKFILE_UNSUPPORTED'],
    ['yarn classic: merge conflict', 'yarn1', (t) => t.replace('csstype@3.1.2, csstype@^3.0.2:\n', '<<<<<<< HEAD\ncsstype@3.1.2, csstype@^3.0.2:\n=======\ncsstype@^3.0.2:\n>>>>>>> theirs\n'), 'KILN_LOCKFILE_INVALID'],
    ['yarn berry: not YAML', 'berry', (t) => t.replace('__metadata:\n', '__metadata:\n  - [\n'), 'KILN_LOCKFILE_INVALID'],
    ['npm: an install path listed twice', 'npm', (t) => t.replace('    "node_modules/csstype": {', '    "node_modules/csstype": {\n      "version": "3.0.0"\n    },\n    "node_modules/csstype": {'), 'KILN_LOCKFILE_DUPLICATE'],
  ];
  it.each(cases)('%s', async (_name, format, corrupt, code) => {
    const bad = corrupt(await fixture(format, 'base'));
    const r = await keysWith(format, bad);
    expect(r.diagnostics.map((d) => d.code)).toContain(code);
    const d = r.diagnostics.find((x) => x.code === code)!;
    expect(d.hint.length).toBeGreaterThan(10);
    const app = project(r, '@x/app');
    expect(app.key).toMatch(/^[0-9a-f]+$/);
    expect(app.components!.closures?.react?.widened).toBeTruthy();
    // Any further change to the lockfile, even whitespace, moves the key: it stands for the whole file.
    const r2 = await keysWith(format, `${bad}\n\n`);
    expect(project(r2, '@x/app').key).not.toBe(app.key);
    // And never the key of the good lockfile.
    const good = await keysWith(format, await fixture(format, 'base'));
    expect(project(good, '@x/app').key).not.toBe(app.key);
  });

  it('no lockfile: KILN_LOCKFILE_MISSING, and closures from the installed tree', async () => {
    const files = workspace('npm');
    const mod = (name: string, version: string, deps: Record<string, string> = {}) => ({ [`node_modules/${name}/package.json`]: JSON.stringify({ name, version, dependencies: deps }) });
    const tree = (csstype: string) => ({ ...files, ...mod('react', '18.3.1'), ...mod('@types/react', '18.3.3', { csstype: '^3.0.2', '@types/prop-types': '*' }), ...mod('@types/prop-types', '15.7.15'), ...mod('csstype', csstype) });
    const r1 = await computeWorkspaceKeys(await writeWorkspace(tree('3.1.2')), { workers: 0 });
    expect(r1.diagnostics.map((d) => d.code)).toContain('KILN_LOCKFILE_MISSING');
    const app1 = project(r1, '@x/app');
    expect(app1.components!.externals.react).toBe('18.3.1');
    expect(app1.components!.closures?.react?.packages).toEqual(['@types/prop-types@15.7.15', '@types/react@18.3.3', 'csstype@3.1.2']);
    const r2 = await computeWorkspaceKeys(await writeWorkspace(tree('3.2.4')), { workers: 0 });
    expect(project(r2, '@x/app').key).not.toBe(app1.key);
  });
});
