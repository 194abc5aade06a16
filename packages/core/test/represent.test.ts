/**
 * SPEC §7 producer: `produceRepresentation` on real packages built by kiln's own build. The judge is
 * independent of the code it judges: payloads are run by a small CommonJS loader written here (node:vm,
 * a memoised `require` mapping `./name` to payloads and bare specifiers to the package's own
 * node_modules), and each covered export is compared with `import()` of the built JavaScript.
 */
import { cpSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileProject, produceRepresentation, type Diagnostic } from '@kiln/core';
import { encodeRepresentation, type Representation } from '@kiln/runtime';
import { facadeTarget } from '../dist/represent/bundle.js';
import { TSCONFIG_LIB, tempDir, writeTree, type Tree } from './lib/build-fixtures.js';
import { sameContentAsJsonBytes } from '../../../tools/lib/rep-json.mjs';

const PKG = '@fx/rep';

const SOURCES: Tree = {
  'src/math.ts': `
function clamp(n: number): number { return Math.max(-1000, Math.min(1000, n)); }
/** Adds, with a default second operand. */
export function add(a: number, b: number = 10): number { return clamp(a + b); }
export function div(a: number, b: number): number {
  if (b === 0) throw new RangeError('division by zero');
  return a / b;
}
`,
  'src/counter.ts': `
let n = 0;
export function increment(by = 1): number { n += by; return n; }
export function count(): number { return n; }
`,
  'src/shapes.ts': `
export interface Shape { area(): number }
export type Id = string;
export declare const ambient: number;
export class Point implements Shape {
  constructor(public x: number, public y: number) {}
  norm(): number { return Math.hypot(this.x, this.y); }
  area(): number { return 0; }
}
export const config = { name: 'rep', limits: [1, 2, 3] } as const;
`,
  'src/meta.ts': `
export function here(): string { return (import.meta as unknown as { url: string }).url; }
`,
  'src/tla.ts': `
const base = await Promise.resolve(41);
export function answer(): number { return base + 1; }
`,
  'src/registry.ts': `
export const registry: string[] = [];
export function registered(): string[] { return [...registry]; }
`,
  'src/plugins.ts': `
import { registry } from './registry.js';
registry.push('plugin-a');
`,
  'src/later.ts': `
export { answer } from './tla.js';
`,
  'src/usesdep.ts': `
import { twice } from 'dep';
export function quad(x: number): number { return twice(twice(x)); }
`,
  'src/index.ts': `
export * from './math.js';
export { add as plus } from './math.js';
export { increment, count } from './counter.js';
export * from './shapes.js';
export { here } from './meta.js';
import './plugins.js';
export { registered } from './registry.js';
export { quad } from './usesdep.js';
export { twice } from 'dep';
`,
  'src/sub.ts': `
export * from './math.js';
export { count as current } from './counter.js';
`,
  'node_modules/dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
  'node_modules/dep/index.js': 'exports.twice = (x) => x * 2;\n',
  'node_modules/dep/index.d.ts': 'export declare function twice(x: number): number;\n',
};

const MANIFEST = {
  name: PKG,
  version: '2.3.4',
  type: 'module',
  engines: { node: '>=20.11.1' },
  exports: {
    '.': { types: './dist/index.d.ts', import: './dist/index.js' },
    './sub': { types: './dist/sub.d.ts', import: './dist/sub.js' },
    './later': { types: './dist/later.d.ts', import: './dist/later.js' },
  },
  dependencies: { dep: '1.0.0' },
};

async function buildPackage(root: string, sources: Tree, manifest: object): Promise<void> {
  writeTree(root, { 'package.json': JSON.stringify(manifest, null, 2), 'tsconfig.lib.json': TSCONFIG_LIB, ...sources });
  const built = await compileProject({ projectRoot: root });
  expect(built.success, JSON.stringify(built.diagnostics, null, 2)).toBe(true);
}

/** The judge's CommonJS loader: one vm context, payloads by `./name`, each evaluated once. */
function loader(rep: Representation, root: string) {
  const context = vm.createContext({});
  const outside = createRequire(join(root, 'package.json'));
  const cache = new Map<string, { exports: Record<string, unknown> }>();
  const req = (spec: string): unknown => {
    if (!spec.startsWith('./')) return outside(spec);
    const name = spec.slice(2);
    const hit = cache.get(name) ?? cache.get(`${name}.js`);
    if (hit) return hit.exports;
    const payload = rep.payloads.find((p) => p.name === name || p.name === `${name}.js`);
    if (!payload) throw new Error(`judge: no payload ${spec}`);
    const module = { exports: {} as Record<string, unknown> };
    cache.set(payload.name, module);
    const fn = vm.runInContext(`(function (exports, require, module) {${payload.code}\n})`, context) as (e: unknown, r: unknown, m: unknown) => void;
    fn(module.exports, req, module);
    return module.exports;
  };
  return (surface: string): unknown => {
    const e = rep.entries.find((x) => x.surface === surface);
    if (!e) throw new Error(`judge: no entry ${surface}`);
    if (!e.coverage.covered) throw new Error(`judge: ${surface} is uncovered (${e.coverage.reason})`);
    return (req(`./${rep.payloads[e.coverage.payload]!.name}`) as Record<string, unknown>)[e.coverage.export];
  };
}

/** An outcome comparable across realms: a value as JSON, or a thrown error by name and message. */
function outcome(f: () => unknown): string {
  try {
    return `ok:${JSON.stringify(f())}`;
  } catch (e) {
    return `throw:${(e as Error).name}:${(e as Error).message}`;
  }
}

describe('produceRepresentation: a built package', () => {
  let root: string;
  let rep: Representation;
  let diagnostics: Diagnostic[];
  let built: Record<string, unknown>;
  let builtSub: Record<string, unknown>;
  const cov = (surface: string) => rep.entries.find((e) => e.surface === surface)?.coverage;

  beforeAll(async () => {
    root = realpathSync(tempDir('rep'));
    await buildPackage(root, SOURCES, MANIFEST);
    ({ representation: rep, diagnostics } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 }));
    built = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
    builtSub = (await import(pathToFileURL(join(root, 'dist/sub.js')).href)) as Record<string, unknown>;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('has the header: the package, no version (the pack step stamps it), what the payloads need (not engines)', () => {
    // The build is keyed without the manifest's version and engines: nothing it writes depends on them.
    expect(rep.header).toMatchObject({ format: 2, package: PKG, version: '', requirements: { node: '20.19.0', features: ['cjs-payloads'] } });
    expect(rep.header.producer).toMatch(/^@kiln\/core \d+\.\d+\.\d+/);
  });

  it('its kiln.rep is at most 0.3× the same content as JSON, small as the package is (issue 15 point 2; format 2)', () => {
    const bytes = encodeRepresentation(rep);
    const json = sameContentAsJsonBytes(rep);
    expect(json).toBeLessThan(8000);
    expect(bytes.length / json).toBeLessThanOrEqual(0.3);
  });

  it('indexes exactly the public surface, sorted, each entry covered or uncovered with a reason', () => {
    const surfaces = rep.entries.map((e) => e.surface);
    expect(surfaces).toEqual([...surfaces].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const names = ['Id', 'Point', 'Shape', 'add', 'ambient', 'config', 'count', 'div', 'here', 'increment', 'plus', 'quad', 'registered', 'twice'];
    expect(surfaces).toEqual([...names.map((n) => `${PKG}#${n}`), `${PKG}/later#answer`, `${PKG}/sub#add`, `${PKG}/sub#current`, `${PKG}/sub#div`].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const e of rep.entries) {
      if (!e.coverage.covered) {
        expect(e.coverage.reason).toMatch(/^KILN_REP_UNCOVERED_[A-Z_]+$/);
        expect(e.coverage.detail).not.toContain('\n');
      }
    }
    // Nothing private: no entry names the helper, and no identity is another package's spelling of ours.
    expect(rep.entries.some((e) => e.declaring.includes('#clamp'))).toBe(false);
  });

  it('resolves an alias, a re-export and a facade to one declaring identity and one payload', () => {
    const ids = [`${PKG}#add`, `${PKG}#plus`, `${PKG}/sub#add`].map((s) => rep.entries.find((e) => e.surface === s)!);
    expect(new Set(ids.map((e) => e.declaring)).size).toBe(1);
    expect(ids[0]!.declaring).toMatch(/src\/math#add:function$/);
    expect(ids[0]!.kind).toBe('function');
    expect(new Set(ids.map((e) => JSON.stringify(e.coverage))).size).toBe(1);
    const counts = [`${PKG}#count`, `${PKG}/sub#current`].map((s) => rep.entries.find((e) => e.surface === s)!);
    expect(counts[0]!.declaring).toBe(counts[1]!.declaring);
  });

  it('marks what has no payload with the reason and where it was found', () => {
    expect(cov(`${PKG}#Shape`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_TYPE_ONLY' });
    expect(cov(`${PKG}#Id`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_TYPE_ONLY' });
    // The detail reads as a sentence (`kiln inspect representation` prints it): "an interface".
    expect((cov(`${PKG}#Shape`) as { detail: string }).detail).toBe("'Shape' is an interface (src/shapes.ts): no runtime value");
    expect((cov(`${PKG}#Id`) as { detail: string }).detail).toBe("'Id' is a type alias (src/shapes.ts): no runtime value");
    expect(cov(`${PKG}#ambient`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_TYPE_ONLY' });
    expect(cov(`${PKG}#here`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_IMPORT_META' });
    expect((cov(`${PKG}#here`) as { detail: string }).detail).toContain('dist/meta.js');
    expect(cov(`${PKG}/later#answer`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT' });
    expect((cov(`${PKG}/later#answer`) as { detail: string }).detail).toContain('dist/tla.js');
    expect(cov(`${PKG}#twice`)).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_FOREIGN_DECLARATION' });
    expect((cov(`${PKG}#twice`) as { detail: string }).detail).toContain("'dep'");
    for (const s of ['add', 'div', 'plus', 'increment', 'count', 'Point', 'config', 'quad', 'registered']) expect(cov(`${PKG}#${s}`)?.covered, s).toBe(true);
    // The uncovered-by-accident ones are reported; the by-design ones (types, other packages) are not.
    expect(diagnostics.map((d) => d.code).sort()).toEqual(['KILN_REP_UNCOVERED_IMPORT_META', 'KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT']);
  });

  it('runs each covered export like the built JS (results, defaults, thrown errors)', () => {
    const load = loader(rep, root);
    const fn = (s: string) => load(s) as (...a: unknown[]) => unknown;
    for (const args of [[1, 2], [5], [999, 999], [-3, -2000]]) {
      expect(outcome(() => fn(`${PKG}#add`)(...args))).toBe(outcome(() => (built.add as (...a: unknown[]) => unknown)(...args)));
      expect(outcome(() => fn(`${PKG}#plus`)(...args))).toBe(outcome(() => (built.plus as (...a: unknown[]) => unknown)(...args)));
      expect(outcome(() => fn(`${PKG}/sub#add`)(...args))).toBe(outcome(() => (builtSub.add as (...a: unknown[]) => unknown)(...args)));
    }
    for (const args of [[6, 3], [1, 0], [0, 0]]) expect(outcome(() => fn(`${PKG}#div`)(...args))).toBe(outcome(() => (built.div as (...a: unknown[]) => unknown)(...args)));
    expect(outcome(() => fn(`${PKG}#div`)(1, 0))).toBe('throw:RangeError:division by zero');
    for (const x of [0, 3, -7]) expect(outcome(() => fn(`${PKG}#quad`)(x))).toBe(outcome(() => (built.quad as (x: number) => number)(x)));
    // A side effect of a module the entry imports (a registry filled at import): the payload ran it too.
    expect(outcome(() => fn(`${PKG}#registered`)())).toBe(outcome(() => (built.registered as () => unknown)()));
    expect(outcome(() => fn(`${PKG}#registered`)())).toBe('ok:["plugin-a"]');
    const P = load(`${PKG}#Point`) as new (x: number, y: number) => { norm(): number; x: number };
    const BP = built.Point as typeof P;
    expect(outcome(() => new P(3, 4).norm())).toBe(outcome(() => new BP(3, 4).norm()));
    expect(outcome(() => (P as unknown as () => unknown)())).toBe(outcome(() => (BP as unknown as () => unknown)()));
    expect(outcome(() => load(`${PKG}#config`))).toBe(outcome(() => built.config));
  });

  it('shares module-level state between exports: one shared payload, evaluated once', () => {
    const load = loader(rep, root);
    const inc = load(`${PKG}#increment`) as (by?: number) => number;
    const count = load(`${PKG}#count`) as () => number;
    const current = load(`${PKG}/sub#current`) as () => number;
    expect(count()).toBe(0);
    expect(inc()).toBe(1);
    expect(inc(5)).toBe(6);
    expect(count()).toBe(6);
    expect(current()).toBe(6);
    // The built JS agrees (its own state, in its own module instance).
    const bInc = built.increment as (by?: number) => number;
    const before = (built.count as () => number)();
    bInc(2);
    expect((built.count as () => number)()).toBe(before + 2);
  });

  it('points every covered entry at a payload that exports its name (facade chunks dropped where that is the same evaluation)', () => {
    for (const e of rep.entries.filter((x) => x.coverage.covered)) {
      const c = e.coverage as { payload: number; export: string };
      expect(rep.payloads[c.payload]!.code, e.surface).toMatch(new RegExp(`exports\\.${c.export} = `));
    }
    // What a facade is: a require of the chunk that holds the value, and side-effect requires.
    expect(facadeTarget(`'use strict';\nconst c = require('./s-1.js');\nrequire('./fx.js');\nexports.value = c.inc;\n`)).toEqual({ file: 's-1.js', exported: 'inc', sideEffects: ['fx.js'] });
    expect(facadeTarget(`'use strict';\nconst c = require('./s-1.js');\nObject.defineProperty(exports, 'value', { enumerable: true, get: function () { return c.n; } });\n`)).toEqual({ file: 's-1.js', exported: 'n', sideEffects: [] });
    expect(facadeTarget(`'use strict';\nconst c = require('./s-1.js');\nconst k = 1;\nexports.value = c.inc;\n`)).toBeUndefined();
    expect(facadeTarget(`'use strict';\nconst c = require('./s-1.js');\nexports.value = c.inc + 1;\n`)).toBeUndefined();
    // Here every entry of '.' also evaluates plugins.js and 'dep' (the entry imports them), which the
    // chunk holding counter.ts does not require: those facades stay, so calling `count` still runs them.
    const inc = cov(`${PKG}#increment`) as { payload: number; export: string };
    expect(rep.payloads[inc.payload]!.code).toContain("require('dep')");
  });

  it('keeps other packages as require(<spec>) and puts no absolute path in any payload', () => {
    const quad = rep.payloads.filter((p) => p.code.includes("require('dep')"));
    expect(quad.length).toBeGreaterThan(0);
    const tmp = realpathSync(join(root, '..'));
    for (const p of rep.payloads) {
      expect(p.code).not.toContain(root);
      expect(p.code).not.toContain(tmp);
      expect(p.code).not.toMatch(/sourceMappingURL|debugId|import\.meta|__filename|__dirname/);
      expect(p.name).toMatch(/^[\w.-]+\.js$/);
    }
    expect(rep.entries.map((e) => JSON.stringify(e))).not.toContainEqual(expect.stringContaining(root));
  });

  it('is byte-identical when produced again and from a copy at another path', async () => {
    const again = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
    expect(JSON.stringify(again.representation)).toBe(JSON.stringify(rep));
    const copy = realpathSync(tempDir('rep-copy'));
    try {
      cpSync(root, copy, { recursive: true });
      const there = await produceRepresentation({ packageRoot: copy, store: false, workers: 0 });
      expect(JSON.stringify(there.representation)).toBe(JSON.stringify(rep));
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('marks every entry of an unbuilt package NO_BUILD_OUTPUT', async () => {
    const bare = realpathSync(tempDir('rep-unbuilt'));
    try {
      writeTree(bare, { 'package.json': JSON.stringify({ name: '@fx/bare', version: '0.0.1', type: 'module', exports: { '.': './dist/index.js' } }), 'tsconfig.lib.json': TSCONFIG_LIB, 'src/index.ts': 'export function f() { return 1; }\nexport type T = number;\n' });
      const { representation } = await produceRepresentation({ packageRoot: bare, store: false, workers: 0 });
      expect(representation.header.requirements.node).toBe('20.19.0');
      expect(representation.entries.map((e) => [e.surface, e.coverage.covered ? 'covered' : e.coverage.reason])).toEqual([
        ['@fx/bare#T', 'KILN_REP_UNCOVERED_TYPE_ONLY'],
        ['@fx/bare#f', 'KILN_REP_UNCOVERED_NO_BUILD_OUTPUT'],
      ]);
      expect(representation.payloads).toEqual([]);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });
});

describe('produceRepresentation: what a payload cannot carry, one entry at a time', () => {
  let root: string;
  let rep: Representation;
  const reason = (name: string) => {
    const c = rep.entries.find((e) => e.surface === `@fx/edge${name.startsWith('/') ? '' : '#'}${name}`)!.coverage;
    return c.covered ? 'covered' : c.reason;
  };

  beforeAll(async () => {
    root = realpathSync(tempDir('rep-edge'));
    await buildPackage(
      root,
      {
        'src/plain.ts': 'export function one(): number { return 1; }\n',
        'src/lazy.ts': "export async function lazy(): Promise<number> { const m = await import('./plain.js'); return m.one(); }\n",
        'src/native.ts': 'export function nat(): number { return 1; }\n',
        'src/computed.ts': 'export function comp(n: string): unknown { return n; }\n',
        'src/broken.ts': 'export function bad(): number { return 1; }\n',
        // A problem inside a function body is the export's own; one at module level is every importer's
        // (import() of the entry evaluates it), so those two live behind entries of their own.
        'src/index.ts': ["export * from './plain.js';", "export * from './lazy.js';", "export * from './computed.js';"].join('\n'),
      },
      { name: '@fx/edge', version: '1.0.0', type: 'module', exports: { '.': './dist/index.js', './native': './dist/native.js', './broken': './dist/broken.js' } },
    );
    // What other build tools may write: a native addon, a computed require, a file rollup cannot parse.
    writeFileSync(join(root, 'dist/native.js'), "import addon from './addon.node';\nexport function nat() { return addon.x; }\n");
    writeFileSync(join(root, 'dist/computed.js'), 'export function comp(n) { return require(n); }\n');
    writeFileSync(join(root, 'dist/broken.js'), 'export function bad() { return 1 +; }\n');
    ({ representation: rep } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 }));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('gives each its reason and still covers the rest', () => {
    expect(reason('lazy')).toBe('KILN_REP_UNCOVERED_DYNAMIC_IMPORT');
    expect(reason('comp')).toBe('KILN_REP_UNCOVERED_DYNAMIC_IMPORT');
    expect(reason('/native#nat')).toBe('KILN_REP_UNCOVERED_NATIVE_ADDON');
    expect(reason('/broken#bad')).toBe('KILN_REP_UNCOVERED_BUNDLE_FAILED');
    expect(reason('one')).toBe('covered');
    expect((loader(rep, root)('@fx/edge#one') as () => number)()).toBe(1);
    for (const e of rep.entries) if (!e.coverage.covered) expect(e.coverage.detail, e.surface).toMatch(/dist\/(lazy|computed|native|broken)\.js/);
    expect(JSON.stringify(rep)).not.toContain(root);
  });

  it('marks a CommonJS-only build uncovered (no @rollup/plugin-commonjs here)', async () => {
    const cjs = realpathSync(tempDir('rep-cjs'));
    try {
      await buildPackage(cjs, { 'src/index.ts': 'export function f(): number { return 1; }\n' }, { name: '@fx/cjs', version: '1.0.0', main: './dist/index.js' });
      const { representation } = await produceRepresentation({ packageRoot: cjs, store: false, workers: 0 });
      expect(representation.entries.map((e) => [e.surface, e.coverage.covered ? 'covered' : e.coverage.reason])).toEqual([['@fx/cjs#f', 'KILN_REP_UNCOVERED_COMMONJS_BUILD']]);
    } finally {
      rmSync(cjs, { recursive: true, force: true });
    }
  });
});

describe("produceRepresentation: a dependency's \"sideEffects\": false", () => {
  // The shape of @tanstack/form-core (the first real-monorepo trial): one facade index re-exporting every
  // module, a class module importing a dependency that declares `"sideEffects": false` (@tanstack/store),
  // and path utilities that import none of it. Rollup assumes every external has effects, so every entry
  // required the store (calling getBy loaded it) and every entry chunk was a stored facade.
  const sources = (storeDeclares: boolean): Tree => ({
    'src/api.ts': "import { Store } from 'store';\nimport { tag } from 'loud';\nexport class FormLike { store = new Store(1); get(): string { return tag(this.store.v); } }\n",
    'src/utils.ts': "import { wrap } from 'noisy';\nexport function getBy(o: Record<string, unknown>, k: string): unknown { return o[k]; }\nexport function throttled<T>(f: T): T { return wrap(f); }\n",
    'src/registry.ts': 'export const registry: string[] = [];\nexport function registered(): string[] { return [...registry]; }\n',
    'src/register.ts': "import { registry } from './registry.js';\nregistry.push('plugin-a');\n",
    'src/index.ts': "export { FormLike } from './api.js';\nexport * from './utils.js';\nimport './register.js';\nexport { registered } from './registry.js';\n",
    'node_modules/store/package.json': JSON.stringify({ name: 'store', version: '1.0.0', main: 'index.js', ...(storeDeclares ? { sideEffects: false } : {}) }),
    'node_modules/store/index.js': 'exports.Store = class Store { constructor(v) { this.v = v; } };\n',
    'node_modules/store/index.d.ts': 'export declare class Store { v: number; constructor(v: number); }\n',
    // Neither declares anything: rollup keeps them where the entry's import() would evaluate them.
    'node_modules/loud/package.json': JSON.stringify({ name: 'loud', version: '1.0.0', main: 'index.js' }),
    'node_modules/loud/index.js': 'exports.tag = (v) => `v${v}`;\n',
    'node_modules/loud/index.d.ts': 'export declare function tag(v: number): string;\n',
    'node_modules/noisy/package.json': JSON.stringify({ name: 'noisy', version: '1.0.0', main: 'index.js', sideEffects: true }),
    'node_modules/noisy/index.js': 'exports.wrap = (f) => f;\n',
    'node_modules/noisy/index.d.ts': 'export declare function wrap<T>(f: T): T;\n',
  });
  const manifest = (own?: unknown) => ({ name: '@fx/fx-se', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } }, dependencies: { store: '1.0.0', noisy: '1.0.0', loud: '1.0.0' }, ...(own === undefined ? {} : { sideEffects: own }) });
  /** The bare specifiers and the code loading an entry evaluates (its static require closure). */
  const closure = (rep: Representation, name: string) => {
    const e = rep.entries.find((x) => x.surface === `@fx/fx-se#${name}`)!;
    if (!e.coverage.covered) throw new Error(`${name} is uncovered`);
    const bare = new Set<string>();
    const seen = new Set<string>();
    const stack = [rep.payloads[e.coverage.payload]!.name];
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      for (const m of rep.payloads.find((p) => p.name === n)!.code.matchAll(/require\('([^']+)'\)/g)) {
        if (m[1]!.startsWith('./')) stack.push(m[1]!.slice(2));
        else bare.add(m[1]!);
      }
    }
    return { bare: [...bare].sort(), code: [...seen].map((n) => rep.payloads.find((p) => p.name === n)!.code).join('\n') };
  };
  const roots: string[] = [];
  afterAll(() => {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });
  const produce = async (o: { storeDeclares: boolean; own?: unknown }) => {
    const root = realpathSync(tempDir('rep-se'));
    roots.push(root);
    await buildPackage(root, sources(o.storeDeclares), manifest(o.own));
    const { representation } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
    const built = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
    return { root, rep: representation, built };
  };
  const sameAsImport = ({ root, rep, built }: Awaited<ReturnType<typeof produce>>) => {
    const run = loader(rep, root);
    const cases: [string, (v: Record<string, unknown>) => unknown][] = [
      ['getBy', (v) => (v.getBy as (o: object, k: string) => unknown)({ a: 1 }, 'a')],
      ['FormLike', (v) => new (v.FormLike as new () => { get(): string })().get()],
      ['registered', (v) => (v.registered as () => string[])()],
    ];
    for (const [name, f] of cases) expect(outcome(() => f({ [name]: run(`@fx/fx-se#${name}`) })), name).toBe(outcome(() => f(built)));
  };

  it('drops its import from entries that do not use it; keeps undeclared dependencies and the package\'s own effects', async () => {
    const declared = await produce({ storeDeclares: true });
    expect(declared.rep.entries.every((e) => e.coverage.covered)).toBe(true);
    expect(closure(declared.rep, 'getBy').bare).toEqual(['loud', 'noisy']);
    expect(closure(declared.rep, 'registered').code).toContain('plugin-a'); // register.js: import() runs it
    expect(closure(declared.rep, 'FormLike').bare).toEqual(['loud', 'noisy', 'store']);
    sameAsImport(declared);
    // The same package with a store that declares nothing: every entry keeps it, as before.
    const undeclared = await produce({ storeDeclares: false });
    expect(closure(undeclared.rep, 'getBy').bare).toEqual(['loud', 'noisy', 'store']);
    sameAsImport(undeclared);
  });

  it('does not apply the package\'s own "sideEffects": false (the payloads answer as import() does)', async () => {
    const own = await produce({ storeDeclares: true, own: false });
    expect(closure(own.rep, 'registered').code).toContain('plugin-a');
    sameAsImport(own);
  });
});

describe('produceRepresentation: 400 exports', () => {
  it('produces a 400-export package (time printed, not asserted)', async () => {
    const root = realpathSync(tempDir('rep-400'));
    try {
      const sources: Tree = {};
      const index: string[] = [];
      for (let m = 0; m < 40; m++) {
        const lines = [`let hits = 0;`, `function helper${m}(x: number): number { hits++; return x * ${m + 1}; }`];
        for (let j = 0; j < 10; j++) lines.push(`export function f${m}_${j}(x: number, k = ${j}): number { return helper${m}(x) + k; }`);
        sources[`src/m${m}.ts`] = lines.join('\n') + '\n';
        index.push(`export * from './m${m}.js';`);
      }
      sources['src/index.ts'] = index.join('\n') + '\n';
      await buildPackage(root, sources, { name: '@fx/big', version: '1.0.0', type: 'module', exports: { '.': './dist/index.js' } });
      const t0 = performance.now();
      const { representation } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
      const ms = performance.now() - t0;
      console.log(`[represent] 400 exports: ${ms.toFixed(0)} ms, ${representation.payloads.length} payloads, ${representation.payloads.reduce((n, p) => n + p.code.length, 0)} bytes of code`);
      expect(representation.entries).toHaveLength(400);
      expect(representation.entries.every((e) => e.coverage.covered)).toBe(true);
      const load = loader(representation, root);
      expect((load('@fx/big#f7_3') as (x: number) => number)(2)).toBe(2 * 8 + 3);
      expect((load('@fx/big#f39_9') as (x: number, k?: number) => number)(1, 0)).toBe(40);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('produceRepresentation: names of classes and functions', () => {
  // The shape tsdown (rolldown) writes for every class of @trpc/server and @trpc/client (the second
  // real-monorepo trial): `var TRPCBuilder = class TRPCBuilder { … }`, whose inner name shadows the
  // top-level one. Reprinting the built module (canonicalModule) renamed the inner binding
  // (`class TRPCBuilder2`), so `initTRPC.constructor.name` was 'TRPCBuilder2' through the
  // representation and 'TRPCBuilder' through import(); a nested function shadowing a top-level one too.
  it("keeps every class's and function's own name, as import() of the built JS has it", async () => {
    const root = realpathSync(tempDir('rep-names'));
    try {
      await buildPackage(
        root,
        {
          'src/builder.ts': [
            'export const Builder = class Builder { static make(): Builder { return new Builder(); } tag(): string { return Builder.name; } };',
            'export const initBuilder = new Builder();',
            "function helper(): string { return 'top'; }",
            "export function factory(): () => string { const helper = function helper(): string { return 'inner'; }; return helper; }",
            'export function run(): string { return helper(); }',
            'export class ClientError extends Error { static from(m: string): ClientError { const ClientError = class ClientError extends Error {}; return new ClientError(m); } }',
          ].join('\n'),
          'src/index.ts': "export * from './builder.js';\n",
        },
        { name: '@fx/names', version: '1.0.0', type: 'module', exports: { '.': './dist/index.js' } },
      );
      const { representation } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
      const built = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
      const load = loader(representation, root);
      const names = (v: Record<string, unknown>) => {
        const B = v.Builder as { name: string; make(): { constructor: { name: string }; tag(): string } };
        const factory = v.factory as () => () => string;
        const C = v.ClientError as { from(m: string): Error };
        return [B.name, B.make().constructor.name, B.make().tag(), (v.initBuilder as object).constructor.name, factory().name, factory()(), (v.run as () => string)(), C.from('x').constructor.name];
      };
      const rep = names(Object.fromEntries(['Builder', 'initBuilder', 'factory', 'run', 'ClientError'].map((n) => [n, load(`@fx/names#${n}`)])));
      expect(names(built)).toEqual(['Builder', 'Builder', 'Builder', 'Builder', 'helper', 'inner', 'top', 'ClientError']);
      expect(rep).toEqual(names(built));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  // @trpc/client: its httpLink and loggerLink chunks each declare a top-level `isFormData`; modules with
  // effects at load, so one payload chunk holds both, and rollup's deconflicting wrote
  // `function isFormData$1` — the export's name was 'isFormData$1' through the representation.
  it('keeps the name of what two modules of one chunk both declare at top level', async () => {
    const root = realpathSync(tempDir('rep-dup-names'));
    try {
      const mod = (tag: string, exported: boolean) =>
        [
          "import { loaded } from './loaded.js';",
          `loaded.push('${tag}');`,
          `${exported ? 'export ' : ''}function isFormData(v: unknown): boolean { return typeof v === 'object'; }`,
          `${exported ? 'export ' : ''}class Codec { tag(): string { return '${tag}'; } }`,
          `${exported ? 'export ' : ''}const toKey = (v: unknown): string => '${tag}:' + String(v);`,
          `${exported ? 'export ' : ''}const Shape = class { static kind = '${tag}'; };`,
          `export function ${tag}Uses(v: unknown): string { return [isFormData(v), new Codec().tag(), toKey(v), Shape.kind].join(); }`,
        ].join('\n');
      await buildPackage(
        root,
        {
          'src/loaded.ts': 'export const loaded: string[] = [];\n',
          'src/http.ts': mod('http', true),
          'src/logger.ts': mod('logger', false),
          'src/index.ts': "export * from './http.js';\nexport * from './logger.js';\nexport { loaded } from './loaded.js';\n",
        },
        { name: '@fx/dup', version: '1.0.0', type: 'module', exports: { '.': './dist/index.js' } },
      );
      const { representation } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
      const renamed = representation.payloads.filter((p) => /\b(isFormData|Codec|toKey|Shape)\$\d/.test(p.code));
      expect(renamed.length, 'the fixture reproduces the rename: both modules in one chunk').toBeGreaterThan(0);
      const built = (await import(pathToFileURL(join(root, 'dist/index.js')).href)) as Record<string, unknown>;
      const load = loader(representation, root);
      const exported = ['isFormData', 'Codec', 'toKey', 'Shape', 'httpUses', 'loggerUses', 'loaded'];
      const observe = (v: Record<string, unknown>) => [
        ...['isFormData', 'Codec', 'toKey', 'Shape'].map((n) => (v[n] as { name: string }).name),
        new (v.Codec as new () => object)().constructor.name,
        (v.httpUses as (x: unknown) => string)(new Map()),
        (v.loggerUses as (x: unknown) => string)(1),
        Object.getOwnPropertyDescriptor(v.isFormData as object, 'name'),
        Object.getOwnPropertyDescriptor(v.Codec as object, 'name'),
      ];
      const rep = observe(Object.fromEntries(exported.map((n) => [n, load(`@fx/dup#${n}`)])));
      expect(observe(built).slice(0, 5)).toEqual(['isFormData', 'Codec', 'toKey', 'Shape', 'Codec']);
      expect(rep).toEqual(observe(built));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("produceRepresentation: another package's types re-exported", () => {
  // @trpc/server/adapters/next: `export type { NextApiHandler, … } from 'next'`; @trpc/client:
  // `import type { Encoder } from '@trpc/server/adapters/ws'; export type { Encoder }`, re-exported again
  // by two modules with `import type` + `export { type Encoder }`. Those were
  // KILN_REP_UNCOVERED_FOREIGN_DECLARATION ("the declaring package's representation covers it"), but
  // a type has no runtime value in any package: TYPE_ONLY. A value re-exported stays FOREIGN.
  it('marks a type-only re-export of another package TYPE_ONLY and a value re-export FOREIGN_DECLARATION', async () => {
    const root = realpathSync(tempDir('rep-foreign-types'));
    try {
      await buildPackage(
        root,
        {
          'src/encoder.ts': "import type { Encoder } from 'dep';\nexport type { Encoder };\nexport const jsonEncoder = { encode: (v: unknown): string => JSON.stringify(v) };\n",
          'src/client.ts': "import type { Encoder } from './encoder.js';\nimport { jsonEncoder } from './encoder.js';\nexport { jsonEncoder, type Encoder };\n",
          'src/index.ts': [
            "export type { Handler, Request as DepRequest } from 'dep';",
            "export { twice } from 'dep';",
            "export * from './client.js';",
            "import { twice as t2 } from 'dep';",
            'export { t2 as twiceAgain };',
          ].join('\n'),
          'node_modules/dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js', types: 'index.d.ts' }),
          'node_modules/dep/index.js': 'exports.twice = (x) => x * 2;\n',
          'node_modules/dep/index.d.ts': 'export declare function twice(x: number): number;\nexport type Handler = () => void;\nexport interface Request { url: string }\nexport interface Encoder { encode(v: unknown): string }\n',
        },
        { name: '@fx/ft', version: '1.0.0', type: 'module', exports: { '.': './dist/index.js' }, dependencies: { dep: '1.0.0' } },
      );
      const { representation, diagnostics } = await produceRepresentation({ packageRoot: root, store: false, workers: 0 });
      const reasons = Object.fromEntries(representation.entries.map((e) => [e.surface.slice('@fx/ft#'.length), e.coverage.covered ? 'covered' : e.coverage.reason]));
      expect(reasons).toEqual({
        DepRequest: 'KILN_REP_UNCOVERED_TYPE_ONLY',
        Encoder: 'KILN_REP_UNCOVERED_TYPE_ONLY',
        Handler: 'KILN_REP_UNCOVERED_TYPE_ONLY',
        jsonEncoder: 'covered',
        twice: 'KILN_REP_UNCOVERED_FOREIGN_DECLARATION',
        twiceAgain: 'KILN_REP_UNCOVERED_FOREIGN_DECLARATION',
      });
      const handler = representation.entries.find((e) => e.surface === '@fx/ft#Handler')!;
      expect(handler.coverage.covered ? '' : handler.coverage.detail).toBe("'Handler' is a type re-exported from 'dep' by src/index.ts: no runtime value");
      expect(handler.declaring).toBe('ext:dep#Handler');
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
