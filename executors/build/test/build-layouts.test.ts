/**
 * Issue 11, point 5, end to end: kiln's own build executor (`@kiln/nx:build`, opted into in
 * project.json) run by real `nx` with the kiln plugin registered, on packages whose package.json asks
 * for different things — a dual ESM/CommonJS package with subpath and pattern exports, an ESM-only
 * and a CommonJS-only package, a package whose target names its build tsconfig, and one whose output
 * folder another target declares. What is checked is what a consumer of the published package sees:
 * real `node` processes `require()` the CommonJS entries and `import()` the ESM ones, and the real
 * `tsc` type-checks a consumer with `module`/`moduleResolution` `node16` against the `.d.cts` and
 * `.d.ts` files (each consumer file holds one deliberate type error, so declarations that were not
 * read — everything `any` — would show as a missing error).
 *
 * Needs `npm run build` (the plugin and executor are loaded from packages/nx/dist).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, disposeAll, type Workspace } from '../../../tools/testing/workspace.mjs';

let ws: Workspace;
let first: Awaited<ReturnType<Workspace['runNx']>>;

const TSCONFIG = (options: Record<string, unknown> = {}, include = ['src/**/*.ts']) =>
  JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, rootDir: 'src', outDir: 'dist', types: [], lib: ['ES2022'], skipLibCheck: true, ...options }, include }, null, 2);

function projectJson(name: string, options: Record<string, unknown> = {}, extraTargets: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, targets: { build: { executor: '@kiln/nx:build', outputs: ['{projectRoot}/dist'], options }, ...extraTargets } }, null, 2);
}

const LIB = `/** Greets someone. */
export function greet(name: string): string {
  return \`hi \${name}\`;
}
export default greet;
export { feature } from './sub/feature.js';
`;

const FILES: Record<string, string> = {
  // --- a dual package: import and require conditions, types inside each, a subpath, a pattern
  'libs/dual/package.json': JSON.stringify({
    name: '@fx/dual',
    version: '1.0.0',
    type: 'module',
    exports: {
      '.': { import: { types: './dist/index.d.ts', default: './dist/index.js' }, require: { types: './dist/index.d.cts', default: './dist/index.cjs' } },
      './sub': { import: { types: './dist/sub/feature.d.ts', default: './dist/sub/feature.js' }, require: { types: './dist/sub/feature.d.cts', default: './dist/sub/feature.cjs' } },
      './features/*': { import: { types: './dist/features/*.d.ts', default: './dist/features/*.js' }, require: { types: './dist/features/*.d.cts', default: './dist/features/*.cjs' } },
    },
  }),
  'libs/dual/project.json': projectJson('@fx/dual'),
  // The tsconfig includes tests and tool configs, as many do: the build leaves them out.
  'libs/dual/tsconfig.lib.json': TSCONFIG({}, ['src/**/*.ts', 'test/**/*.ts', '*.config.ts']),
  'libs/dual/src/index.ts': LIB,
  'libs/dual/src/sub/feature.ts': 'export const feature = (): number => 42;\n',
  'libs/dual/src/features/alpha.ts': "export const alpha = 'a';\n",
  'libs/dual/src/index.test.ts': "import { greet } from './index.js';\nexport const t: number = greet('x'); // a type error nobody builds\n",
  'libs/dual/src/__tests__/helper.ts': 'export const helper = 1;\n',
  'libs/dual/src/sub/feature.spec.ts': 'export {};\n',
  'libs/dual/test/setup.ts': 'export {};\n',
  'libs/dual/vitest.config.ts': 'export default { test: {} };\n',

  // --- ESM only
  'libs/esm-only/package.json': JSON.stringify({ name: '@fx/esm-only', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './sub': { types: './dist/sub/feature.d.ts', default: './dist/sub/feature.js' } } }),
  'libs/esm-only/project.json': projectJson('@fx/esm-only'),
  'libs/esm-only/tsconfig.lib.json': TSCONFIG(),
  'libs/esm-only/src/index.ts': LIB,
  'libs/esm-only/src/sub/feature.ts': 'export const feature = (): number => 42;\n',

  // --- CommonJS only (no "type": the compiler emits CommonJS under NodeNext)
  'libs/cjs-only/package.json': JSON.stringify({ name: '@fx/cjs-only', version: '1.0.0', main: './dist/index.js', types: './dist/index.d.ts', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './sub': { types: './dist/sub/feature.d.ts', default: './dist/sub/feature.js' } } }),
  'libs/cjs-only/project.json': projectJson('@fx/cjs-only'),
  'libs/cjs-only/tsconfig.lib.json': TSCONFIG(),
  'libs/cjs-only/src/index.ts': LIB,
  'libs/cjs-only/src/sub/feature.ts': 'export const feature = (): number => 42;\n',

  // --- the target names its build tsconfig; the default one (tsconfig.lib.json) is not used
  'libs/named/package.json': JSON.stringify({ name: '@fx/named', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
  'libs/named/project.json': projectJson('@fx/named', { tsConfig: '{projectRoot}/tsconfig.build.json' }),
  'libs/named/tsconfig.lib.json': TSCONFIG(),
  'libs/named/tsconfig.build.json': TSCONFIG({ target: 'ES2017' }),
  'libs/named/src/index.ts': 'export const pick = (o?: { a?: number }): number => o?.a ?? 1;\n',

  // --- another target declares an output inside the build's folder
  'libs/shared/package.json': JSON.stringify({ name: '@fx/shared', version: '1.0.0', type: 'module', exports: './dist/index.js' }),
  'libs/shared/project.json': projectJson('@fx/shared', {}, { typecheck: { command: 'echo typecheck', outputs: ['{projectRoot}/dist/tsconfig.tsbuildinfo'] } }),
  'libs/shared/tsconfig.lib.json': TSCONFIG(),
  'libs/shared/src/index.ts': 'export const s = 1;\n',

  // --- consumers (not a project: no package.json)
  'consumer/cjs.cjs': `const out = {};
for (const s of process.argv.slice(2)) {
  const m = require(s);
  out[s] = { file: require.resolve(s), greet: typeof m.greet === 'function' ? m.greet('c') : undefined, defaultIsGreet: m.default === m.greet, feature: typeof m.feature === 'function' ? m.feature() : undefined, alpha: m.alpha };
}
process.stdout.write(JSON.stringify(out));
`,
  'consumer/esm.mjs': `import { fileURLToPath } from 'node:url';
const out = {};
for (const s of process.argv.slice(2)) {
  const m = await import(s);
  out[s] = { file: fileURLToPath(import.meta.resolve(s)), greet: typeof m.greet === 'function' ? m.greet('c') : undefined, defaultIsGreet: m.default === m.greet, feature: typeof m.feature === 'function' ? m.feature() : undefined, alpha: m.alpha };
}
process.stdout.write(JSON.stringify(out));
`,
};

/** A node16 TypeScript consumer of one package: an .mts that imports it, a .cts that requires it. */
function tsConsumer(pkg: string, { esmDefault = true } = {}): Record<string, string> {
  const dir = `consumer/ts-${pkg.split('/')[1]}`;
  // An ES module's default import of a CommonJS module is its module.exports (Node's rule, and
  // TypeScript's under node16), not `exports.default`: that consumer uses the named export.
  const esm = esmDefault
    ? `import greet, { greet as named, feature } from '${pkg}';\nimport { feature as f2 } from '${pkg}/sub';\nexport const ok: string = greet('x') + named('y') + feature() + f2();\nexport const bad: number = greet('z');\n`
    : `import lib, { greet as named, feature } from '${pkg}';\nimport { feature as f2 } from '${pkg}/sub';\nexport const ok: string = lib.greet('x') + named('y') + feature() + f2();\nexport const bad: number = named('z');\n`;
  return {
    [`${dir}/tsconfig.json`]: JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'ES2022', strict: true, noEmit: true, types: [], lib: ['ES2022'], skipLibCheck: false }, files: ['esm.mts', 'cjs.cts'] }),
    [`${dir}/esm.mts`]: esm,
    [`${dir}/cjs.cts`]: `import lib = require('${pkg}');\nimport sub = require('${pkg}/sub');\nexport const ok: string = lib.greet('x') + lib.default('y') + lib.feature() + sub.feature();\nexport const bad: number = lib.greet('z');\n`,
  };
}

const TSC = () => join(ws.root, 'node_modules/typescript/bin/tsc');

/** The real tsc over a consumer: its errors, and the package files it read (--explainFiles). */
function typecheck(pkg: string): { errors: string[]; read: string[] } {
  const dir = ws.path(`consumer/ts-${pkg.split('/')[1]}`);
  const r = spawnSync(process.execPath, [TSC(), '-p', join(dir, 'tsconfig.json'), '--explainFiles', '--pretty', 'false'], { cwd: ws.root, encoding: 'utf8' });
  const lines = r.stdout.split('\n');
  return {
    errors: lines.filter((l) => /error TS\d+/.test(l)).map((l) => l.replace(/^.*?consumer\/ts-[\w-]+\//, '')).sort(),
    read: lines.filter((l) => /^libs\//.test(l)).map((l) => l.trim()).sort(),
  };
}

function consume(specs: string[]): { cjs: Record<string, Record<string, unknown>>; esm: Record<string, Record<string, unknown>> } {
  const run = (f: string) => {
    const r = spawnSync(process.execPath, [ws.path(`consumer/${f}`), ...specs], { cwd: ws.path('consumer'), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${f} ${specs.join(' ')} failed:\n${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
  };
  return { cjs: run('cjs.cjs'), esm: run('esm.mjs') };
}

function tree(rel: string): string[] {
  const root = ws.path(rel);
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(root, p).split('\\').join('/'));
    }
  };
  if (existsSync(root)) walk(root);
  return out.sort();
}

async function showBuild(project: string): Promise<{ executor: string; options: Record<string, unknown>; inputs?: unknown[] }> {
  const r = await ws.runNx(['show', 'project', project, '--json']);
  return JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))).targets.build;
}

const TYPE_ERRORS = ["cjs.cts(4,14): error TS2322: Type 'string' is not assignable to type 'number'.", "esm.mts(4,14): error TS2322: Type 'string' is not assignable to type 'number'."];
const PROJECTS = ['@fx/dual', '@fx/esm-only', '@fx/cjs-only', '@fx/named', '@fx/shared'];

beforeAll(async () => {
  ws = await createWorkspace('workspace-basic', {
    prepare: async (w) => {
      for (const [rel, text] of Object.entries({ ...FILES, ...tsConsumer('@fx/dual'), ...tsConsumer('@fx/esm-only'), ...tsConsumer('@fx/cjs-only', { esmDefault: false }) })) await w.write(rel, text);
      // The kiln plugin keys the build targets; no raw-input target defaults, so only the key decides hits.
      await w.editJson('nx.json', (j: Record<string, unknown>) => {
        j.plugins = ['@kiln/nx'];
        j.targetDefaults = { build: { dependsOn: ['^build'], cache: true } };
      });
    },
  });
  first = await ws.runNx(['run-many', '-t', 'build', '-p', ...PROJECTS], { allowFailure: true });
}, 600_000);

afterAll(async () => {
  await disposeAll();
});

describe('kiln build executor: what a published package needs (real nx, node, tsc)', () => {
  it('a dual package: ESM .js/.d.ts and CommonJS .cjs/.d.cts for the root, a subpath and a pattern; no tests or configs', () => {
    expect(first.tasks['@fx/dual:build']?.code, first.output).toBe(0);
    expect(tree('libs/dual/dist')).toEqual(
      [...['features/alpha', 'index', 'sub/feature'].flatMap((m) => [`${m}.cjs`, `${m}.cjs.map`, `${m}.d.cts`, `${m}.d.ts`, `${m}.js`, `${m}.js.map`]), 'kiln.rep'].sort(),
    );
    expect(first.output).toMatch(/kiln build libs\/dual: 18 files into libs\/dual\/dist \(CommonJS libs\/dual\/dist\/\*\.cjs, ESM libs\/dual\/dist\/\*\.js; TypeScript [\d.]+, libs\/dual\/tsconfig\.lib\.json; 5 test\/config files not built\)/);
    const { cjs, esm } = consume(['@fx/dual', '@fx/dual/sub', '@fx/dual/features/alpha']);
    expect(cjs['@fx/dual']).toEqual({ file: ws.path('libs/dual/dist/index.cjs'), greet: 'hi c', defaultIsGreet: true, feature: 42 });
    expect(esm['@fx/dual']).toEqual({ file: ws.path('libs/dual/dist/index.js'), greet: 'hi c', defaultIsGreet: true, feature: 42 });
    expect(cjs['@fx/dual/sub']).toMatchObject({ file: ws.path('libs/dual/dist/sub/feature.cjs'), feature: 42 });
    expect(esm['@fx/dual/sub']).toMatchObject({ file: ws.path('libs/dual/dist/sub/feature.js'), feature: 42 });
    expect(cjs['@fx/dual/features/alpha']).toMatchObject({ file: ws.path('libs/dual/dist/features/alpha.cjs'), alpha: 'a' });
    expect(esm['@fx/dual/features/alpha']).toMatchObject({ file: ws.path('libs/dual/dist/features/alpha.js'), alpha: 'a' });
  });

  it('a dual package type-checks under node16 for both consumers, each against its own declarations', () => {
    const { errors, read } = typecheck('@fx/dual');
    expect(errors).toEqual(TYPE_ERRORS);
    expect(read).toEqual(['libs/dual/dist/index.d.cts', 'libs/dual/dist/index.d.ts', 'libs/dual/dist/sub/feature.d.cts', 'libs/dual/dist/sub/feature.d.ts']);
  });

  it('an ESM-only package: .js/.d.ts only; import() and require() (require(esm)) load the ESM; node16 types', () => {
    expect(first.tasks['@fx/esm-only:build']?.code, first.output).toBe(0);
    expect(tree('libs/esm-only/dist')).toEqual(['index.d.ts', 'index.js', 'index.js.map', 'kiln.rep', 'sub/feature.d.ts', 'sub/feature.js', 'sub/feature.js.map']);
    const { cjs, esm } = consume(['@fx/esm-only', '@fx/esm-only/sub']);
    expect(esm['@fx/esm-only']).toEqual({ file: ws.path('libs/esm-only/dist/index.js'), greet: 'hi c', defaultIsGreet: true, feature: 42 });
    expect(cjs['@fx/esm-only']).toMatchObject({ file: ws.path('libs/esm-only/dist/index.js'), greet: 'hi c' });
    const { errors, read } = typecheck('@fx/esm-only');
    expect(read).toEqual(['libs/esm-only/dist/index.d.ts', 'libs/esm-only/dist/sub/feature.d.ts']);
    // Under node16 a .cts consumer may not require() an ES-module-only package (TS1471): TypeScript
    // says so, from the types the build wrote; the deliberate errors show both files were typed.
    expect(errors).toEqual([
      expect.stringMatching(/^cjs\.cts\(1,22\): error TS1471: Module '@fx\/esm-only' cannot be imported using this construct/),
      expect.stringMatching(/^cjs\.cts\(2,22\): error TS1471: Module '@fx\/esm-only\/sub' cannot be imported using this construct/),
      ...TYPE_ERRORS,
    ]);
  });

  it('a CommonJS-only package: .js/.d.ts in CommonJS, no ESM copy; require() and import() work; node16 types', () => {
    expect(first.tasks['@fx/cjs-only:build']?.code, first.output).toBe(0);
    expect(tree('libs/cjs-only/dist')).toEqual(['index.d.ts', 'index.js', 'index.js.map', 'kiln.rep', 'sub/feature.d.ts', 'sub/feature.js', 'sub/feature.js.map']);
    expect(readFileSync(ws.path('libs/cjs-only/dist/index.js'), 'utf8')).toMatch(/exports\.greet = greet|Object\.defineProperty\(exports/);
    const { cjs, esm } = consume(['@fx/cjs-only', '@fx/cjs-only/sub']);
    expect(cjs['@fx/cjs-only']).toEqual({ file: ws.path('libs/cjs-only/dist/index.js'), greet: 'hi c', defaultIsGreet: true, feature: 42 });
    expect(esm['@fx/cjs-only']).toMatchObject({ file: ws.path('libs/cjs-only/dist/index.js'), greet: 'hi c', feature: 42 });
    const { errors, read } = typecheck('@fx/cjs-only');
    expect(read).toEqual(['libs/cjs-only/dist/index.d.ts', 'libs/cjs-only/dist/sub/feature.d.ts']);
    expect(errors).toEqual(TYPE_ERRORS);
  });

  it("refuses to build into a folder another target declares as output, naming it, before writing", () => {
    expect(first.tasks['@fx/shared:build']?.code).not.toBe(0);
    expect(first.output).toContain('error KILN_BUILD_OUTPUTS_SHARED: libs/shared/dist is written by this build, and @fx/shared:typecheck declares the output libs/shared/dist/tsconfig.tsbuildinfo');
    expect(existsSync(ws.path('libs/shared/dist'))).toBe(false);
  });

  it('the tsconfig the target names builds, and it is the one keyed: editing it is a miss and changes the output; the unused default is not keyed', async () => {
    expect(first.tasks['@fx/named:build']?.code, first.output).toBe(0);
    expect(readFileSync(ws.path('libs/named/dist/index.js'), 'utf8')).not.toContain('?.'); // ES2017: downlevelled
    const before = await showBuild('@fx/named');
    expect(before.executor).toBe('@kiln/nx:build');
    expect(before.options.tsConfig).toBe('libs/named/tsconfig.build.json'); // as Nx shows it, {projectRoot} replaced
    expect(before.options.kilnKey).toMatch(/^[0-9a-f]{32}$/);

    // The default tsconfig, which this target does not build with: the key stays, a cache hit.
    await ws.write('libs/named/tsconfig.lib.json', TSCONFIG({ target: 'ES5' }));
    expect((await showBuild('@fx/named')).options.kilnKey).toBe(before.options.kilnKey);
    const unchanged = await ws.runNx(['run', '@fx/named:build']);
    expect(unchanged.statuses['@fx/named:build']).toBe('local');

    // The named tsconfig: the key moves, the build runs, the output follows.
    await ws.write('libs/named/tsconfig.build.json', TSCONFIG({ target: 'ES2022' }));
    const after = await showBuild('@fx/named');
    expect(after.options.kilnKey).not.toBe(before.options.kilnKey);
    const rebuilt = await ws.runNx(['run', '@fx/named:build']);
    expect(rebuilt.statuses['@fx/named:build']).toBe('executed');
    expect(readFileSync(ws.path('libs/named/dist/index.js'), 'utf8')).toContain('o?.a ?? 1');
  });

  it('a target that names no tsconfig gets the keyed one filled in', async () => {
    const b = await showBuild('@fx/dual');
    expect(b.options).toMatchObject({ tsConfig: 'libs/dual/tsconfig.lib.json', kilnKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
  });
});
