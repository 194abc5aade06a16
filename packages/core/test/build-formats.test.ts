/**
 * Issue 11, point 5: the build writes what a published package needs, as its package.json says —
 * ESM and CommonJS, `.d.ts`/`.d.cts`/`.d.mts`, the `exports` map's conditions, subpaths and patterns,
 * `main`/`module`/`types` — and leaves tests and tool configuration out. Checked the way consumers
 * see a package: real Node processes that `import` and `require` it from a temp workspace, a
 * TypeScript consumer with moduleResolution NodeNext type-checking each condition, and
 * @arethetypeswrong/core (the "are the types wrong" checker) over the built files.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { checkPackage, Package } from '@arethetypeswrong/core';
import { compileProject, type CompileOptions, type CompileResult } from '@kiln/core';
import { cleanup, listTree, read, tempDir, writeTree, type Tree } from './lib/build-fixtures.js';

const dirs: string[] = [];
afterAll(() => cleanup(...dirs));

const TSCONFIG = (options: Record<string, unknown> = {}, include = ['src/**/*.ts']) =>
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'DOM'],
      types: [],
      strict: true,
      rootDir: 'src',
      outDir: 'dist',
      skipLibCheck: true,
      ...options,
    },
    include,
  });

/** The library: a default export, a named re-export from a subfolder, a default import of a CommonJS dependency, import.meta.url. */
const SOURCES: Tree = {
  'src/index.ts': `/*! @fx/dual — MIT */
// DROPME: a plain comment
import dep from 'cjs-dep';
import { feature } from './sub/feature.js';
export { feature };
/** Greets someone. */
export function greet(name: string): string {
  return \`hi \${name} \${feature()}\`;
}
export default greet;
export const depDefault: unknown = dep;
export const here: string = import.meta.url;
export const made = /*#__PURE__*/ greet('pure');
`,
  'src/sub/feature.ts': `export const feature = (): number => 42;\n`,
  'src/features/alpha.ts': `export const alpha = 'a';\n`,
  // A CommonJS dependency compiled by Babel/TypeScript: __esModule and an exports.default. Node's ESM
  // import of it binds module.exports; a CommonJS build must bind the same.
  'node_modules/cjs-dep/package.json': JSON.stringify({ name: 'cjs-dep', version: '1.0.0', main: 'index.js', types: 'index.d.ts' }),
  'node_modules/cjs-dep/index.js': `Object.defineProperty(exports, '__esModule', { value: true });\nexports.default = 'the default';\nexports.other = 'other';\n`,
  'node_modules/cjs-dep/index.d.ts': `declare const _default: string;\nexport default _default;\nexport declare const other: string;\n`,
};

const DUAL_EXPORTS = {
  '.': {
    import: { types: './dist/index.d.ts', default: './dist/index.js' },
    require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
  },
  './sub': {
    import: { types: './dist/sub/feature.d.ts', default: './dist/sub/feature.js' },
    require: { types: './dist/sub/feature.d.cts', default: './dist/sub/feature.cjs' },
  },
  './features/*': {
    import: { types: './dist/features/*.d.ts', default: './dist/features/*.js' },
    require: { types: './dist/features/*.d.cts', default: './dist/features/*.cjs' },
  },
  './package.json': './package.json',
};

function pkg(root: string, manifest: Record<string, unknown>, files: Tree = {}, tsconfig = TSCONFIG()): string {
  writeTree(root, { ...SOURCES, 'package.json': JSON.stringify({ name: '@fx/dual', version: '1.0.0', ...manifest }, null, 2), 'tsconfig.lib.json': tsconfig, ...files });
  return root;
}

function newPkg(prefix: string, manifest: Record<string, unknown>, files: Tree = {}, tsconfig?: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  return pkg(join(d, 'pkg'), manifest, files, tsconfig);
}

async function build(root: string, options: Partial<CompileOptions> = {}): Promise<CompileResult> {
  return compileProject({ projectRoot: root, ...options });
}

/** Every path package.json names (exports leaves, main, module, types), patterns expanded by the subpaths given. */
function manifestPaths(root: string, expand: Record<string, string[]> = {}): string[] {
  const m = JSON.parse(read(root, 'package.json')) as Record<string, unknown>;
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') out.push(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(m.exports);
  for (const f of ['main', 'module', 'types']) if (typeof m[f] === 'string') out.push(m[f] as string);
  return out.flatMap((p) => (p.includes('*') ? (expand[p] ?? []).map((s) => p.replace('*', s)) : [p])).map((p) => p.replace(/^\.\//, ''));
}

/**
 * Real Node consumers in a workspace beside the package: one `require`s, one `import`s, each reports
 * what it got and which file Node loaded.
 */
function consume(root: string, name: string, subpaths: string[]): { cjs: Record<string, unknown>; esm: Record<string, unknown> } {
  const ws = join(dirname(root), 'consumer');
  mkdirSync(join(ws, 'node_modules', dirname(name)), { recursive: true });
  if (!existsSync(join(ws, 'node_modules', name))) symlinkSync(root, join(ws, 'node_modules', name), 'dir');
  const specs = ['', ...subpaths].map((s) => (s ? `${name}/${s}` : name));
  writeTree(ws, {
    'package.json': JSON.stringify({ name: 'consumer', private: true }),
    'cjs.cjs': `const out = {};
for (const s of ${JSON.stringify(specs)}) {
  const m = require(s);
  out[s] = { file: require.resolve(s), keys: Object.keys(m).sort(), greet: typeof m.greet === 'function' ? m.greet('c') : undefined,
    defaultIsGreet: typeof m.default === 'function' && m.default === m.greet, depDefault: m.depDefault, here: m.here, feature: typeof m.feature === 'function' ? m.feature() : undefined, alpha: m.alpha };
}
process.stdout.write(JSON.stringify(out));
`,
    'esm.mjs': `import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
const out = {};
for (const s of ${JSON.stringify(specs)}) {
  const m = await import(s);
  out[s] = { file: fileURLToPath(import.meta.resolve(s)), keys: Object.keys(m).sort(), greet: typeof m.greet === 'function' ? m.greet('c') : undefined,
    defaultIsGreet: typeof m.default === 'function' && m.default === m.greet, depDefault: m.depDefault, here: m.here, feature: typeof m.feature === 'function' ? m.feature() : undefined, alpha: m.alpha };
}
process.stdout.write(JSON.stringify(out));
`,
  });
  const run = (f: string) => JSON.parse(execFileSync(process.execPath, [join(ws, f)], { cwd: ws, encoding: 'utf8' })) as Record<string, unknown>;
  return { cjs: run('cjs.cjs'), esm: run('esm.mjs') };
}

/**
 * A TypeScript consumer (module/moduleResolution NodeNext): an .mts file imports the package, a
 * .cts file requires it. Each holds one deliberate type error, so a declaration file that was not
 * read (everything `any`) would show as a missing error. Returns the errors and, for each file,
 * the declaration file TypeScript resolved the package to.
 */
function typecheckConsumer(root: string, name: string): { errors: string[]; resolved: Record<string, string | undefined> } {
  const ws = join(dirname(root), 'ts-consumer');
  mkdirSync(join(ws, 'node_modules', dirname(name)), { recursive: true });
  if (!existsSync(join(ws, 'node_modules', name))) symlinkSync(root, join(ws, 'node_modules', name), 'dir');
  writeTree(ws, {
    'package.json': JSON.stringify({ name: 'ts-consumer', private: true }),
    'esm.mts': `import greet, { feature, greet as named } from '${name}';\nimport { feature as f2 } from '${name}/sub';\nconst a: string = greet('x') + named('y') + feature() + f2();\nconst bad: number = greet('z');\nexport { a, bad };\n`,
    'cjs.cts': `import lib = require('${name}');\nimport sub = require('${name}/sub');\nconst a: string = lib.greet('x') + lib.default('y') + sub.feature();\nconst bad: number = lib.greet('z');\nexport { a, bad };\n`,
  });
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, types: [], lib: ['lib.es2022.d.ts'], skipLibCheck: false };
  const files = [join(ws, 'esm.mts'), join(ws, 'cjs.cts')];
  const program = ts.createProgram(files, options);
  const errors = ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? d.file.fileName.slice(ws.length + 1) : '-'}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  const resolved: Record<string, string | undefined> = {};
  for (const f of files) {
    const sf = program.getSourceFile(f)!;
    const mode = f.endsWith('.mts') ? ts.ModuleKind.ESNext : ts.ModuleKind.CommonJS;
    const r = ts.resolveModuleName(name, f, options, ts.sys, undefined, undefined, mode).resolvedModule;
    resolved[sf.fileName.slice(ws.length + 1)] = r ? relative(realpathSync(root), realpathSync(r.resolvedFileName)).split('\\').join('/') : undefined;
  }
  return { errors, resolved };
}

/** @arethetypeswrong/core over the files a publish would ship (package.json and the build output). */
async function arethetypeswrong(root: string, name: string, outDir = 'dist'): Promise<string[]> {
  const files: Record<string, string> = { [`/node_modules/${name}/package.json`]: read(root, 'package.json') };
  for (const f of listTree(join(root, outDir))) files[`/node_modules/${name}/${outDir}/${f}`] = read(root, join(outDir, f));
  const result = await checkPackage(new Package(files, name, '1.0.0'));
  if (!('problems' in result)) return ['no types'];
  // node10 (moduleResolution "node") ignores `exports`, so no subpath resolves there: not the build's concern.
  return result.problems
    .filter((p) => !('resolutionKind' in p) || p.resolutionKind !== 'node10')
    .map((p) => `${p.kind}${'entrypoint' in p ? ` ${p.entrypoint} (${p.resolutionKind})` : ''}`);
}

const TYPE_ERRORS = [
  "cjs.cts: TS2322 Type 'string' is not assignable to type 'number'.",
  "esm.mts: TS2322 Type 'string' is not assignable to type 'number'.",
];

describe('a "type": "module" package with a dual exports map (import/require, nested types, subpaths, a pattern)', async () => {
  const root = newPkg('dual', { type: 'module', exports: DUAL_EXPORTS, main: './dist/index.cjs', module: './dist/index.js', types: './dist/index.d.cts' });
  const result = await build(root);

  it('builds ESM .js/.d.ts and CommonJS .cjs/.d.cts beside it, every path package.json names existing', () => {
    expect(result.diagnostics).toEqual([]);
    expect(result.layouts).toEqual([
      { kind: 'js', format: 'cjs', dir: 'dist', ext: '.cjs' },
      { kind: 'js', format: 'esm', dir: 'dist', ext: '.js' },
      { kind: 'dts', format: 'cjs', dir: 'dist', ext: '.d.cts' },
      { kind: 'dts', format: 'esm', dir: 'dist', ext: '.d.ts' },
    ]);
    const built = listTree(join(root, 'dist'));
    for (const p of manifestPaths(root, { './dist/features/*.js': ['alpha'], './dist/features/*.cjs': ['alpha'], './dist/features/*.d.ts': ['alpha'], './dist/features/*.d.cts': ['alpha'] })) {
      if (p === 'package.json') continue;
      expect(built, p).toContain(p.slice('dist/'.length));
    }
    expect(built).toEqual(
      ['features/alpha', 'index', 'sub/feature'].flatMap((m) => [`${m}.cjs`, `${m}.cjs.map`, `${m}.d.cts`, `${m}.d.ts`, `${m}.js`, `${m}.js.map`]).sort(),
    );
    // Formats: CommonJS where require points, ESM where import points.
    const cjs = read(root, 'dist/index.cjs');
    expect(cjs).toMatch(/require\("\.\/sub\/feature\.cjs"\)/);
    expect(cjs).not.toMatch(/^\s*(import|export)\s/m);
    expect(read(root, 'dist/index.js')).toMatch(/^import .* from '\.\/sub\/feature\.js';$/m);
    expect(read(root, 'dist/index.d.cts')).toContain(`from './sub/feature.cjs'`);
    expect(read(root, 'dist/index.d.ts')).toContain(`from './sub/feature.js'`);
  });

  it('keeps meaningful comments in the CommonJS build and drops the others', () => {
    const cjs = read(root, 'dist/index.cjs');
    expect(cjs).toContain('/*! @fx/dual — MIT */');
    expect(cjs).toMatch(/\/\*\s*[@#]__PURE__\s*\*\/ greet\("pure"\)/);
    expect(cjs).not.toContain('DROPME');
    expect(read(root, 'dist/index.d.cts')).toContain('/** Greets someone. */');
  });

  it('works when required and when imported by real Node consumers, with the same values', () => {
    const { cjs, esm } = consume(root, '@fx/dual', ['sub', 'features/alpha']);
    const main = cjs['@fx/dual'] as Record<string, unknown>;
    expect(main.file).toBe(join(root, 'dist/index.cjs'));
    expect((esm['@fx/dual'] as Record<string, unknown>).file).toBe(join(root, 'dist/index.js'));
    expect((cjs['@fx/dual/sub'] as Record<string, unknown>).file).toBe(join(root, 'dist/sub/feature.cjs'));
    expect((cjs['@fx/dual/features/alpha'] as Record<string, unknown>).file).toBe(join(root, 'dist/features/alpha.cjs'));
    expect(main).toMatchObject({ greet: 'hi c 42', defaultIsGreet: true, feature: 42 });
    // import.meta.url is this file's URL in both builds (translated for CommonJS, no absolute path baked in).
    expect(main.here).toBe(`file://${join(root, 'dist/index.cjs')}`);
    expect((esm['@fx/dual'] as Record<string, unknown>).here).toBe(`file://${join(root, 'dist/index.js')}`);
    // The default import of a CommonJS dependency binds module.exports in both builds (Node's rule).
    expect(main.depDefault).toEqual({ default: 'the default', other: 'other' });
    expect((esm['@fx/dual'] as Record<string, unknown>).depDefault).toEqual(main.depDefault);
    const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, { ...(v as object), file: undefined, here: undefined }]));
    // Same exports, same behaviour; CommonJS adds only its own default/interop keys.
    expect(strip(esm)).toEqual(strip(cjs));
    expect((cjs['@fx/dual/features/alpha'] as Record<string, unknown>).alpha).toBe('a');
  });

  it('type-checks in a NodeNext TypeScript consumer under both conditions, each against its own declarations', () => {
    const { errors, resolved } = typecheckConsumer(root, '@fx/dual');
    expect(errors).toEqual(TYPE_ERRORS);
    expect(resolved).toEqual({ 'esm.mts': 'dist/index.d.ts', 'cjs.cts': 'dist/index.d.cts' });
  });

  it('has no problem @arethetypeswrong/core can find', async () => {
    expect(await arethetypeswrong(root, '@fx/dual')).toEqual([]);
  });

  it('maps the CommonJS output back to the TypeScript source', () => {
    const js = read(root, 'dist/index.cjs');
    const map = JSON.parse(read(root, 'dist/index.cjs.map')) as { sources: string[]; file: string };
    expect(map.file).toBe('index.cjs');
    expect(map.sources).toEqual(['../src/index.ts']);
    expect(js.trimEnd().endsWith('//# sourceMappingURL=index.cjs.map')).toBe(true);
    const src = read(root, 'src/index.ts').split('\n');
    const sm = new SourceMap(map as never);
    let checked = 0;
    js.split('\n').forEach((line, l) => {
      for (const m of line.matchAll(/\b(greet|feature|depDefault|here|made)\b/g)) {
        const e = sm.findEntry(l, m.index!) as { generatedLine?: number; generatedColumn?: number; originalLine?: number; originalColumn?: number };
        if (e.generatedLine !== l || e.generatedColumn !== m.index) continue;
        expect(src[e.originalLine!]!.slice(e.originalColumn!).startsWith(m[1]!), `${l + 1}:${m.index} ${m[1]}`).toBe(true);
        checked++;
      }
    });
    expect(checked).toBeGreaterThan(4);
  });
});

describe('a package without "type": "module": ESM as .mjs/.d.mts, CommonJS as .js/.d.ts', async () => {
  const root = newPkg(
    'cjs-pkg',
    {
      exports: {
        '.': { import: { types: './dist/index.d.mts', default: './dist/index.mjs' }, require: { types: './dist/index.d.ts', default: './dist/index.js' } },
        './sub': { import: { types: './dist/sub/feature.d.mts', default: './dist/sub/feature.mjs' }, require: { types: './dist/sub/feature.d.ts', default: './dist/sub/feature.js' } },
      },
      main: './dist/index.js',
      types: './dist/index.d.ts',
    },
    {},
    // tsup-style: the tsconfig emits ESM syntax (module ESNext, resolution Bundler)
    TSCONFIG({ module: 'ESNext', moduleResolution: 'Bundler' }),
  );
  const result = await build(root);

  it('builds both, and the compiler\'s ESM-in-.js is replaced by CommonJS where require points', () => {
    expect(result.diagnostics).toEqual([]);
    expect(listTree(join(root, 'dist')).filter((f) => !f.endsWith('.map') && f.startsWith('index'))).toEqual(['index.d.mts', 'index.d.ts', 'index.js', 'index.mjs']);
    expect(read(root, 'dist/index.js')).toContain('require("./sub/feature.js")');
    expect(read(root, 'dist/index.mjs')).toContain(`from './sub/feature.mjs'`);
    expect(read(root, 'dist/index.d.mts')).toContain(`from './sub/feature.mjs'`);
  });

  it('works for both Node consumers and both TypeScript conditions, and passes @arethetypeswrong/core', async () => {
    const { cjs, esm } = consume(root, '@fx/dual', ['sub']);
    expect((cjs['@fx/dual'] as Record<string, unknown>).file).toBe(join(root, 'dist/index.js'));
    expect((esm['@fx/dual'] as Record<string, unknown>).file).toBe(join(root, 'dist/index.mjs'));
    expect(cjs['@fx/dual']).toMatchObject({ greet: 'hi c 42', defaultIsGreet: true });
    expect(esm['@fx/dual']).toMatchObject({ greet: 'hi c 42', defaultIsGreet: true });
    const { errors, resolved } = typecheckConsumer(root, '@fx/dual');
    expect(errors).toEqual(TYPE_ERRORS);
    expect(resolved).toEqual({ 'esm.mts': 'dist/index.d.mts', 'cjs.cts': 'dist/index.d.ts' });
    expect(await arethetypeswrong(root, '@fx/dual')).toEqual([]);
  });
});

describe('ESM and CommonJS in separate folders (dist/esm, dist/cjs with its own package.json type)', async () => {
  const root = newPkg('split', {
    type: 'module',
    exports: {
      '.': { import: { types: './dist/esm/index.d.ts', default: './dist/esm/index.js' }, require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' } },
      './sub': { import: './dist/esm/sub/feature.js', require: './dist/cjs/sub/feature.js' },
    },
  });
  const result = await build(root);

  it('writes only the two layouts, with a package.json that makes dist/cjs CommonJS', () => {
    expect(result.diagnostics).toEqual([]);
    const built = listTree(join(root, 'dist'));
    expect(built.filter((f) => !f.includes('/'))).toEqual([]); // the compiler's own dist/*.js were moved, not duplicated
    expect(read(root, 'dist/cjs/package.json')).toBe('{\n  "type": "commonjs"\n}\n');
    expect(built).toContain('esm/index.js');
    expect(built).toContain('cjs/index.d.ts');
    expect(JSON.parse(read(root, 'dist/esm/index.js.map')).sources).toEqual(['../../src/index.ts']);
    expect(result.emitted.every((f) => f.startsWith('dist/esm/') || f.startsWith('dist/cjs/'))).toBe(true);
  });

  it('works for both Node consumers and both TypeScript conditions, and passes @arethetypeswrong/core', async () => {
    const { cjs, esm } = consume(root, '@fx/dual', ['sub']);
    expect((cjs['@fx/dual'] as Record<string, unknown>).file).toBe(join(root, 'dist/cjs/index.js'));
    expect((esm['@fx/dual'] as Record<string, unknown>).file).toBe(join(root, 'dist/esm/index.js'));
    expect(cjs['@fx/dual']).toMatchObject({ greet: 'hi c 42', feature: 42 });
    const { errors, resolved } = typecheckConsumer(root, '@fx/dual');
    expect(errors).toEqual(TYPE_ERRORS);
    expect(resolved).toEqual({ 'esm.mts': 'dist/esm/index.d.ts', 'cjs.cts': 'dist/cjs/index.d.ts' });
    expect(await arethetypeswrong(root, '@fx/dual')).toEqual([]);
  });
});

describe('options: formats, exports, the named tsconfig', () => {
  it('formats ["esm", "cjs"] builds both without any exports map; by default only what the tsconfig emits', async () => {
    const root = newPkg('formats', { type: 'module' });
    const plain = await build(root);
    expect(plain.diagnostics).toEqual([]);
    expect(listTree(join(root, 'dist')).filter((f) => f.startsWith('index.'))).toEqual(['index.d.ts', 'index.js', 'index.js.map']);
    const both = await build(root, { formats: ['esm', 'cjs'] });
    expect(both.diagnostics).toEqual([]);
    expect(listTree(join(root, 'dist')).filter((f) => f.startsWith('index.'))).toEqual(['index.cjs', 'index.cjs.map', 'index.d.cts', 'index.d.ts', 'index.js', 'index.js.map']);
    const cjsOnly = await build(root, { formats: ['cjs'] });
    expect(listTree(join(root, 'dist')).filter((f) => f.startsWith('index.'))).toEqual(['index.cjs', 'index.cjs.map', 'index.d.cts']);
    expect(cjsOnly.layouts.map((l) => l.format)).toEqual(['cjs', 'cjs']);
  });

  it('exports: false builds what the tsconfig emits and reads nothing from package.json', async () => {
    const root = newPkg('no-exports', { type: 'module', exports: { '.': { require: './dist/nowhere.cjs' } } });
    expect((await build(root)).diagnostics.map((d) => d.code)).toEqual(['KILN_EXPORTS_TARGET_MISSING']);
    const r = await build(root, { exports: false });
    expect(r.diagnostics).toEqual([]);
    expect(listTree(join(root, 'dist')).filter((f) => f.startsWith('index.'))).toEqual(['index.d.ts', 'index.js', 'index.js.map']);
  });

  it('compiles with the tsconfig the caller names, not the first default', async () => {
    const root = newPkg('named', { type: 'module' }, { 'tsconfig.build.json': TSCONFIG({ outDir: 'lib', declaration: true }) });
    const r = await build(root, { tsconfig: 'tsconfig.build.json' });
    expect(r.diagnostics).toEqual([]);
    expect(r.tsconfig).toBe('tsconfig.build.json');
    expect(r.outputDirs).toEqual(['lib']);
    expect(existsSync(join(root, 'lib/index.js'))).toBe(true);
    expect(existsSync(join(root, 'dist'))).toBe(false);
  });
});

describe('tests and tool configuration are not built', () => {
  const FILES: Tree = {
    'src/index.test.ts': `import { greet } from './index.js';\ndescribe('greet', () => greet('x'));\n`,
    'src/sub/feature.spec.ts': `it('works', () => {});\n`,
    'src/__tests__/helpers.ts': `export const helper = 1;\n`,
    'src/types.test-d.ts': `export {};\n`,
    'vitest.config.ts': `export default { test: {} };\n`,
    'tsdown.config.ts': `export default { entry: ['src/index.ts'] };\n`,
    'test/setup.ts': `export {};\n`,
  };
  // A tsconfig that includes everything (as a root tsconfig.json often does), no rootDir.
  const ALL = TSCONFIG({ rootDir: undefined }, ['**/*.ts']);

  it('even when the tsconfig includes them: not compiled (their type errors do not fail the build), not emitted', async () => {
    const root = newPkg('excluded', { type: 'module' }, FILES, ALL);
    const r = await build(root);
    expect(r.diagnostics).toEqual([]);
    expect(r.excluded).toEqual([
      'src/__tests__/helpers.ts',
      'src/index.test.ts',
      'src/sub/feature.spec.ts',
      'src/types.test-d.ts',
      'test/setup.ts',
      'tsdown.config.ts',
      'vitest.config.ts',
    ]);
    // The layout is tsc's for the whole include (rootDir = the common directory), minus the excluded files.
    expect(listTree(join(root, 'dist')).filter((f) => !f.endsWith('.map'))).toEqual(
      ['src/features/alpha', 'src/index', 'src/sub/feature'].flatMap((m) => [`${m}.d.ts`, `${m}.js`]).sort(),
    );
  });

  it('the exclude option replaces the default list ([] builds everything the tsconfig includes)', async () => {
    const root = newPkg('exclude-option', { type: 'module' }, { ...FILES, 'src/index.test.ts': `export const t = 1;\n`, 'src/sub/feature.spec.ts': `export {};\n` }, ALL);
    const r = await build(root, { exclude: ['**/*.config.ts', 'test/**', '**/*.test-d.ts'] });
    expect(r.diagnostics).toEqual([]);
    const built = listTree(join(root, 'dist'));
    expect(built).toContain('src/index.test.js');
    expect(built).toContain('src/__tests__/helpers.js');
    expect(built).not.toContain('vitest.config.js');
    expect(r.excluded).toEqual(['src/types.test-d.ts', 'test/setup.ts', 'tsdown.config.ts', 'vitest.config.ts']);
  });

  it('a built module importing an excluded file is KILN_BUILD_EXCLUDED_IMPORTED at the import, nothing written', async () => {
    const root = newPkg('excluded-import', { type: 'module' }, { 'src/index.ts': `export { helper } from './__tests__/helpers.js';\n`, 'src/__tests__/helpers.ts': `export const helper = 1;\n` });
    const r = await build(root);
    expect(r.diagnostics.map((d) => [d.code, d.file, d.line, d.column])).toEqual([['KILN_BUILD_EXCLUDED_IMPORTED', 'src/index.ts', 1, 24]]);
    expect(existsSync(join(root, 'dist'))).toBe(false);
  });
});

describe('bad input: coded diagnostics, nothing written', () => {
  async function failsWith(manifest: Record<string, unknown>, files: Tree = {}, tsconfig?: string, options: Partial<CompileOptions> = {}) {
    const root = newPkg('bad', manifest, files, tsconfig);
    const r = await build(root, options);
    expect(r.success).toBe(false);
    expect(r.emitted).toEqual([]);
    expect(existsSync(join(root, 'dist'))).toBe(false);
    return r.diagnostics.map((d) => ({ code: d.code, file: d.file, line: d.line, column: d.column, message: d.message }));
  }

  it('an exports map pointing nowhere', async () => {
    const d = await failsWith({ type: 'module', exports: { '.': './dist/index.js', './gone': { import: './dist/gone.js' }, './out': './lib/out.js' } });
    expect(d.map((x) => [x.code, x.file, x.message])).toEqual([
      ['KILN_EXPORTS_TARGET_MISSING', 'package.json', 'exports["./gone"].import points at dist/gone.js, but no source of the build compiles to it'],
      ['KILN_EXPORTS_TARGET_MISSING', 'package.json', 'exports["./out"] points at lib/out.js, which does not exist and is outside the build output (dist)'],
    ]);
  });

  it('conditions that ask for a format their path cannot hold, or types in the other format', async () => {
    const wrongExt = await failsWith({ type: 'module', exports: { '.': { require: './dist/index.js', import: './dist/index.cjs' } } });
    expect(wrongExt.map((x) => x.code)).toEqual(['KILN_EXPORTS_FORMAT_CONFLICT', 'KILN_EXPORTS_FORMAT_CONFLICT']);
    expect(wrongExt.map((x) => x.message).join('\n')).toMatch(/exports\["\."\]\.import asks for ESM but points at dist\/index\.cjs, which is always CommonJS/);
    expect(wrongExt.map((x) => x.message).join('\n')).toMatch(/exports\["\."\]\.require asks for CommonJS in dist\/\*\.js, where the compiler writes ESM/);
    // The classic masquerade: one "types" for both conditions.
    const masquerade = await failsWith({ type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js', require: './dist/index.cjs' } } });
    expect(masquerade.map((x) => [x.code, x.message])).toEqual([
      [
        'KILN_EXPORTS_FORMAT_CONFLICT',
        'exports["."]: a TypeScript consumer that requires it gets the types dist/index.d.ts (ESM) for dist/index.cjs (CommonJS); put a "types" condition inside each of "import" and "require"',
      ],
    ]);
  });

  it('CommonJS of code with top-level await or import.meta.resolve, at the source location', async () => {
    const d = await failsWith(
      { type: 'module', exports: { '.': { import: './dist/index.js', require: './dist/index.cjs' } } },
      { 'src/late.ts': `export const v = await Promise.resolve(1);\nexport function f(): Promise<number> { return (async () => await v)(); }\nexport const meta: object = import.meta;\n` },
    );
    expect(d.map((x) => [x.code, x.file, x.line, x.column])).toEqual([
      ['KILN_BUILD_CJS_UNSUPPORTED', 'src/late.ts', 1, 18],
      ['KILN_BUILD_CJS_UNSUPPORTED', 'src/late.ts', 3, 29],
    ]);
    expect(d[0]!.message).toContain('top-level await');
    expect(d[1]!.message).toContain('import.meta has no CommonJS equivalent');
  });

  it('ESM asked of a tsconfig that emits CommonJS', async () => {
    const d = await failsWith(
      { exports: { '.': { import: './dist/index.mjs', require: './dist/index.js' } } },
      { 'src/index.ts': `export const a = 1;\n`, 'src/sub/feature.ts': `export {};\n`, 'src/features/alpha.ts': `export {};\n` },
      TSCONFIG({ module: 'CommonJS', moduleResolution: 'Node10' }),
    );
    expect(d.map((x) => x.code)).toEqual(['KILN_BUILD_FORMAT_UNAVAILABLE']);
  });
});

describe('deterministic and path-free', () => {
  it('two clones at different paths write byte-identical dual outputs with no absolute path', async () => {
    const a = join(tempDir('clone-a'), 'pkg');
    const b = join(tempDir('clone-bb-longer'), 'x', 'pkg');
    dirs.push(dirname(a), dirname(dirname(b)));
    const manifest = { type: 'module', exports: DUAL_EXPORTS };
    pkg(a, manifest, {}, TSCONFIG({ declarationMap: true, inlineSources: true }));
    pkg(b, manifest, {}, TSCONFIG({ declarationMap: true, inlineSources: true }));
    const [ra, rb] = await Promise.all([build(a), build(b)]);
    expect(ra.diagnostics).toEqual([]);
    expect(rb.diagnostics).toEqual([]);
    const files = listTree(join(a, 'dist'));
    expect(files).toEqual(listTree(join(b, 'dist')));
    expect(files).toContain('index.d.cts.map');
    for (const f of files) {
      const x = readFileSync(join(a, 'dist', f));
      expect(x.equals(readFileSync(join(b, 'dist', f))), f).toBe(true);
      for (const p of [a, b]) expect(x.includes(p), `${f} contains ${p}`).toBe(false);
    }
    // inlineSources: the CommonJS map carries the authored text too.
    expect((JSON.parse(read(a, 'dist/index.cjs.map')) as { sourcesContent: string[] }).sourcesContent).toEqual([read(a, 'src/index.ts')]);
    const dmap = JSON.parse(read(a, 'dist/index.d.cts.map')) as { file: string; sources: string[] };
    expect(dmap).toMatchObject({ file: 'index.d.cts', sources: ['../src/index.ts'] });
  });
});
