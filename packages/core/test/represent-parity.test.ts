/**
 * Parity of the executable representation (SPEC §7, issue 15 point 7): for EVERY covered export of
 * several packages built by kiln, calls through `kiln.rep` (`createConsumer(openRepresentation(file))`,
 * node:vm) behave as calls into the built JavaScript loaded by `import()`: same results, same thrown
 * errors (name and message), and the same object identity where exports share module-level state.
 *
 * Packages:
 * - kiln's fixtures `fixtures/workspace-basic/libs/*` (base, left, right, top, tail: a const enum, a class
 *   extended across packages, module-level side effects, packages that import each other), copied to a
 *   temp workspace and built in dependency order by `compileProject`;
 * - `@fx/parity-state`, written here: module-level state shared by several exports (a counter, a memo
 *   cache returning the same object, a registry filled through one export and read through another),
 *   a custom Error subclass, an alias;
 * - a real library: `@jridgewell/sourcemap-codec@1.6.0` built by kiln from its published TypeScript
 *   sources (`src/*.ts`, MIT). Why this one: pure, dependency-free, written in TypeScript, and it ships
 *   its sources in the npm tarball; @kiln/core depends on exactly 1.6.0, so the sources are in
 *   node_modules wherever kiln's tests can run (no network, nothing vendored into this repository). If a
 *   future install hoists another version, the test takes 1.6.0 from the registry with `npm pack` (the
 *   one network CI allows) rather than testing a moving target. The only change made to the sources is
 *   mechanical: extensionless relative imports (`'./vlq'`, written for a bundler) get `.js`, as Node's
 *   ESM needs to `import()` the build at all.
 *
 * The judge never shares code with what it judges: the expected side is Node's own `import()` of a copy
 * of the built JS (called through a native `import` expression, not vitest's module runner, so it is
 * Node's ESM loader), and the representation's side runs where the package's JS is GONE: src and every
 * built file are deleted from the package directory, leaving package.json and kiln.rep, and the
 * consumer resolves bare specifiers from a directory holding only the package's dependencies.
 *
 * How calls are generated (fast-check): for each package, a sequence of operations over all its covered
 * exports — call a function (arity `fn.length` ± 1 of JSON-ish values, or a targeted arbitrary for known
 * exports), construct a class, call a method or read a getter of an instance made earlier, read a
 * value — applied in lockstep to both routes, so module-level state evolves the same way in both.
 * Outcomes are compared through a structural, realm-independent encoding (vm objects fail host
 * `instanceof`): primitives exactly (-0, NaN), arrays, plain objects and class instances by constructor
 * name and own properties, errors by name and message. Every object gets an id per route on first
 * sight (stable for the whole run), so "returns the same module-level object again" and "state changed
 * through one export is visible through another" must hold identically in both routes. Arguments are
 * cloned per route (an export that mutates its argument must not leak into the other route).
 *
 * The check is shown to fail: a copy of the library's representation with one payload's code patched
 * (and re-encoded, so integrity passes) is caught by the same differential, and so is a consumer whose
 * shared payload is evaluated twice (identity broken).
 *
 * Realm-sensitive checks on ARGUMENTS (`x instanceof Array`, `getPrototypeOf(x) === Object.prototype`)
 * agree too: payloads run in the caller's realm by default (call.ts `realm: 'host'`), as `import()` runs
 * them; in an `isolated` realm they would not (the last test shows both).
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { types } from 'node:util';
import vm from 'node:vm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileProject, writeRepresentation } from '@kiln/core';
import { createConsumer, encodeRepresentation, openRepresentation, readRepresentation, representationPath, type Consumer } from '@kiln/runtime';
import { TSCONFIG_LIB, listTree, tempDir, writeTree, type Tree } from './lib/build-fixtures.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const CODEC = '@jridgewell/sourcemap-codec';
const CODEC_VERSION = '1.6.0';

/**
 * Node's own dynamic import, not vitest's module runner (which transforms what it loads): the judge
 * is exactly what an importer of the package gets from Node's ESM loader.
 */
const nativeImport = new vm.Script('(url) => import(url)', { filename: 'parity-judge-import.js', importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }).runInThisContext() as (url: string) => Promise<Record<string, unknown>>;

// ---------------------------------------------------------------- a package under test

interface Subject {
  name: string;
  /** The representation (in a package directory with no JavaScript left). */
  repFile: string;
  /** Where the consumer resolves the package's dependencies (never the package itself). */
  requireFrom: string;
  /** The judge: the built package's entry modules by subpath, imported natively from a copy. */
  judge: Map<string, Record<string, unknown>>;
  /** Covered surfaces, sorted. */
  covered: string[];
  /** Every surface with its coverage (for the record). */
  entries: { surface: string; covered: boolean; reason?: string }[];
}

/** `@scope/pkg/sub#name` → { entry: './sub', name } for a package called `pkg`. */
function splitSurface(pkg: string, surface: string): { entry: string; name: string } {
  const hash = surface.lastIndexOf('#');
  const head = surface.slice(0, hash);
  return { entry: head === pkg ? '.' : `.${head.slice(pkg.length)}`, name: surface.slice(hash + 1) };
}

/** The ESM file an `exports` entry names (conditions `import`, then `default`), read from the manifest. */
function entryFile(manifest: Record<string, unknown>, entry: string): string {
  const exp = manifest.exports as Record<string, unknown> | undefined;
  let v: unknown = exp?.[entry] ?? (entry === '.' ? (manifest.module ?? manifest.main) : undefined);
  while (v && typeof v === 'object') v = (v as Record<string, unknown>).import ?? (v as Record<string, unknown>).default;
  if (typeof v !== 'string') throw new Error(`judge: no ESM file for ${entry}`);
  return v;
}

/**
 * Build → representation → judge copy → JS removed. `pkgDir` is built in place (it is already a temp
 * copy); `judgeDir` receives the built package; `deps` maps dependency names to their judge copies.
 */
async function build(pkgDir: string): Promise<number> {
  const built = await compileProject({ projectRoot: pkgDir });
  expect(built.success, JSON.stringify(built.diagnostics, null, 2)).toBe(true);
  return (await writeRepresentation({ packageRoot: pkgDir, store: false, workers: 0 })).covered;
}

/** After `build`: the judge's copy, the JS removed, the consumer's resolution root, the judge imported. */
async function prepare(pkgDir: string, judgeDir: string, consumerDir: string, deps: Record<string, string>, coveredCount: number): Promise<Subject> {
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const name = manifest.name as string;
  cpSync(pkgDir, judgeDir, { recursive: true, dereference: false, filter: (p) => !p.endsWith('kiln.rep') });

  // Move the JavaScript away: only package.json and kiln.rep remain where the representation is read.
  const repFile = representationPath(pkgDir, manifest);
  for (const rel of listTree(pkgDir)) {
    const abs = join(pkgDir, rel);
    if (abs !== repFile && rel !== 'package.json' && !rel.startsWith('node_modules/')) rmSync(abs);
  }
  expect(listTree(pkgDir).filter((f) => !f.startsWith('node_modules/')).sort()).toEqual([relative(pkgDir, repFile).split(sep).join('/'), 'package.json'].sort());

  // The consumer's resolution root: the dependencies' built copies, and nothing of this package.
  mkdirSync(join(consumerDir, 'node_modules'), { recursive: true });
  for (const [dep, dir] of Object.entries(deps)) {
    mkdirSync(dirname(join(consumerDir, 'node_modules', dep)), { recursive: true });
    symlinkSync(dir, join(consumerDir, 'node_modules', dep), 'dir');
  }

  const rep = readRepresentation(repFile);
  const entries = rep.entries.map((e) => ({ surface: e.surface, covered: e.coverage.covered, ...(e.coverage.covered ? {} : { reason: e.coverage.reason }) }));
  const covered = entries.filter((e) => e.covered).map((e) => e.surface);
  const judge = new Map<string, Record<string, unknown>>();
  for (const s of covered) {
    const { entry } = splitSurface(name, s);
    if (!judge.has(entry)) judge.set(entry, await nativeImport(pathToFileURL(join(judgeDir, entryFile(manifest, entry))).href));
  }
  expect(coveredCount).toBe(covered.length);
  return { name, repFile, requireFrom: consumerDir, judge, covered, entries };
}

// ---------------------------------------------------------------- outcomes, comparable across realms

type Refs = Map<object, number>;

/** A realm-independent description of a value; objects get a per-route id on first sight. */
function encode(v: unknown, refs: Refs, depth = 0): unknown {
  if (v === undefined) return ['undefined'];
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Object.is(v, -0) ? ['-0'] : Number.isNaN(v) ? ['NaN'] : Number.isFinite(v) ? v : [String(v)];
  if (typeof v === 'bigint') return ['bigint', String(v)];
  if (typeof v === 'symbol') return ['symbol', v.description];
  const o = v as object;
  const seen = refs.get(o);
  if (seen !== undefined) return ['ref', seen];
  const id = refs.size;
  refs.set(o, id);
  if (depth > 6) return ['deep', id];
  if (typeof o === 'function') {
    const isClass = /^class\b/.test(Function.prototype.toString.call(o));
    return ['function', id, (o as { name: string }).name, (o as { length: number }).length, isClass];
  }
  if (types.isNativeError(o)) return ['error', id, (o as Error).name, (o as Error).message];
  if (types.isPromise(o)) return ['promise', id];
  if (types.isTypedArray(o)) return ['typed', id, Object.prototype.toString.call(o), Array.from(o as Uint8Array)];
  if (types.isDate(o)) return ['date', id, (o as Date).getTime()];
  if (types.isRegExp(o)) return ['regexp', id, String(o)];
  if (types.isMap(o)) return ['map', id, [...(o as Map<unknown, unknown>)].map(([k, x]) => [encode(k, refs, depth + 1), encode(x, refs, depth + 1)])];
  if (types.isSet(o)) return ['set', id, [...(o as Set<unknown>)].map((x) => encode(x, refs, depth + 1))];
  if (Array.isArray(o)) return ['array', id, o.map((x) => encode(x, refs, depth + 1))];
  const proto = Object.getPrototypeOf(o) as { constructor?: { name?: string } } | null;
  const props = Object.keys(o).map((k) => [k, encode((o as Record<string, unknown>)[k], refs, depth + 1)]);
  return ['object', id, proto === null ? null : (proto.constructor?.name ?? '?'), props];
}

/** The outcome of one operation: a value, or what was thrown (an error by name and message). */
function outcome(f: () => unknown, refs: Refs): unknown {
  try {
    return ['ok', encode(f(), refs)];
  } catch (e) {
    if (types.isNativeError(e)) return ['threw', (e as Error).name, (e as Error).message];
    return ['threw-value', encode(e, refs)];
  }
}

// ---------------------------------------------------------------- operations and their generation

type Op =
  | { kind: 'call'; target: number; args: unknown[] }
  | { kind: 'new'; target: number; args: unknown[] }
  | { kind: 'member'; target: number; instance: number; member: number; args: unknown[] }
  | { kind: 'get'; target: number };

interface Target {
  surface: string;
  kind: 'function' | 'class' | 'value';
  arity: number;
  /** A class's prototype members (methods and accessors), from the judge's class. */
  members: { name: string; accessor: boolean; arity: number }[];
}

/** JSON-ish values: what a caller might pass without knowing the export's types. */
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -1000, max: 1000 }),
    fc.double({ noNaN: false }),
    fc.string({ maxLength: 12 }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const argsOfArity = (arity: number) => fc.integer({ min: Math.max(0, arity - 1), max: arity + 1 }).chain((n) => fc.array(jsonish, { minLength: n, maxLength: n }));

/** Members of a class's prototype chain (not Object's), methods and accessors, in a stable order. */
function membersOf(cls: Function): Target['members'] {
  const out: Target['members'] = [];
  const seen = new Set<string>(['constructor']);
  for (let p = cls.prototype as object | null; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p).sort()) {
      if (seen.has(name)) continue;
      seen.add(name);
      const d = Object.getOwnPropertyDescriptor(p, name)!;
      if (d.get) out.push({ name, accessor: true, arity: 0 });
      else if (typeof d.value === 'function') out.push({ name, accessor: false, arity: (d.value as Function).length });
    }
  }
  return out;
}

function targetsOf(s: Subject): Target[] {
  return s.covered.map((surface) => {
    const { entry, name } = splitSurface(s.name, surface);
    const v = s.judge.get(entry)![name];
    if (typeof v === 'function') {
      const isClass = /^class\b/.test(Function.prototype.toString.call(v));
      return { surface, kind: isClass ? 'class' : 'function', arity: v.length, members: isClass ? membersOf(v) : [] };
    }
    return { surface, kind: 'value', arity: 0, members: [] };
  });
}

type ArgsFor = (surface: string, arity: number) => fc.Arbitrary<unknown[]>;

function opsOf(targets: Target[], argsFor: ArgsFor, maxOps: number): fc.Arbitrary<Op[]> {
  const choices: fc.Arbitrary<Op>[] = [];
  targets.forEach((t, target) => {
    if (t.kind === 'value') choices.push(fc.constant<Op>({ kind: 'get', target }));
    if (t.kind === 'function') choices.push(argsFor(t.surface, t.arity).map((args): Op => ({ kind: 'call', target, args })));
    if (t.kind === 'class') {
      choices.push(argsFor(t.surface, t.arity).map((args): Op => ({ kind: 'new', target, args })));
      choices.push(fc.constant<Op>({ kind: 'call', target, args: [] })); // calling a class throws, the same way
      t.members.forEach((m, member) => {
        const args: fc.Arbitrary<unknown[]> = m.accessor ? fc.constant<unknown[]>([]) : argsFor(`${t.surface}.${m.name}`, m.arity);
        choices.push(fc.record({ instance: fc.nat(7), args }).map((r): Op => ({ kind: 'member', target, member, ...r })));
      });
    }
  });
  return fc.array(fc.oneof(...choices), { minLength: 1, maxLength: maxOps });
}

// ---------------------------------------------------------------- the differential

/** One route: how it reaches an export, its own instances and object ids. */
interface Route {
  value(surface: string): unknown;
  instances: Map<number, unknown[]>;
  refs: Refs;
}

function judgeRoute(s: Subject): Route {
  return {
    value: (surface) => {
      const { entry, name } = splitSurface(s.name, surface);
      return s.judge.get(entry)![name];
    },
    instances: new Map(),
    refs: new Map(),
  };
}

function repRoute(consumer: Consumer): Route {
  return { value: (surface) => consumer.load(surface), instances: new Map(), refs: new Map() };
}

function apply(route: Route, t: Target, op: Op): unknown {
  const args = 'args' in op ? structuredClone(op.args) : [];
  return outcome(() => {
    const v = route.value(t.surface);
    switch (op.kind) {
      case 'get':
        return v;
      case 'call':
        return (v as (...a: unknown[]) => unknown)(...args);
      case 'new': {
        const made = new (v as new (...a: unknown[]) => unknown)(...args);
        (route.instances.get(op.target) ?? route.instances.set(op.target, []).get(op.target)!).push(made);
        return made;
      }
      case 'member': {
        const list = route.instances.get(op.target) ?? [];
        if (!list.length) return ['no instance yet'];
        const inst = list[op.instance % list.length] as Record<string, unknown>;
        const m = t.members[op.member]!;
        return m.accessor ? inst[m.name] : (inst[m.name] as (...a: unknown[]) => unknown)(...args);
      }
    }
  }, route.refs);
}

interface ParityRun {
  operations: number;
  /** Operations per covered surface: proof that every covered export was exercised. */
  perSurface: Map<string, number>;
}

/**
 * Lockstep differential over every covered export of `s`: throws (fast-check's report, with the
 * shrunk counterexample) at the first operation whose outcomes differ.
 */
function runParity(s: Subject, consumer: Consumer, opts: { argsFor?: ArgsFor; numRuns: number; maxOps?: number; seed?: number; endOnFailure?: boolean }): ParityRun {
  const targets = targetsOf(s);
  const judge = judgeRoute(s);
  const rep = repRoute(consumer);
  const run: ParityRun = { operations: 0, perSurface: new Map(targets.map((t) => [t.surface, 0])) };
  const argsFor: ArgsFor = (surface, arity) => opts.argsFor?.(surface, arity) ?? argsOfArity(arity);
  fc.assert(
    fc.property(opsOf(targets, argsFor, opts.maxOps ?? 12), (ops) => {
      for (const op of ops) {
        const t = targets[op.target]!;
        const expected = apply(judge, t, op);
        const actual = apply(rep, t, op);
        run.operations++;
        run.perSurface.set(t.surface, run.perSurface.get(t.surface)! + 1);
        if (!isEqual(actual, expected)) throw new Error(`${t.surface} ${op.kind} ${JSON.stringify(op)}:\n  representation: ${show(actual)}\n  import():       ${show(expected)}`);
      }
    }),
    { numRuns: opts.numRuns, includeErrorInReport: true, ...(opts.seed !== undefined ? { seed: opts.seed } : {}), ...(opts.endOnFailure ? { endOnFailure: true } : {}) },
  );
  return run;
}

const show = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
const isEqual = (a: unknown, b: unknown) => show(a) === show(b);

// ---------------------------------------------------------------- the packages

const STATE_SOURCES: Tree = {
  'src/counter.ts': `
let n = 0;
export function increment(by: number = 1): number {
  if (typeof by !== 'number' || !Number.isFinite(by)) throw new TypeError(\`increment: not a finite number: \${String(by)}\`);
  n += by;
  return n;
}
export function count(): number { return n; }
`,
  'src/config.ts': `
const config = { name: 'parity', flags: [] as string[] };
/** The one module-level config object: the same object on every call. */
export function getConfig(): { name: string; flags: string[] } { return config; }
export function setFlag(flag: string): number { config.flags.push(String(flag)); return config.flags.length; }
`,
  'src/registry.ts': `
export class ParityError extends Error {
  constructor(message: string, readonly code: string) { super(message); this.name = 'ParityError'; }
}
const items = new Map<string, { key: string; value: unknown }>();
export function register(key: string, value: unknown): { key: string; value: unknown } {
  if (typeof key !== 'string' || key === '') throw new ParityError('register: key must be a non-empty string', 'E_KEY');
  const record = items.get(key) ?? { key, value };
  record.value = value;
  items.set(key, record);
  return record;
}
export function lookup(key: string): { key: string; value: unknown } | undefined { return items.get(key); }
export function keys(): string[] { return [...items.keys()].sort(); }
`,
  'src/stack.ts': `
let created = 0;
export class Stack<T> {
  static readonly kind = 'stack';
  readonly id: number;
  private items: T[] = [];
  constructor(...initial: T[]) { this.id = ++created; this.items.push(...initial); }
  push(x: T): number { return this.items.push(x); }
  pop(): T { if (!this.items.length) throw new RangeError(\`stack \${this.id} is empty\`); return this.items.pop()!; }
  get size(): number { return this.items.length; }
  snapshot(): T[] { return [...this.items]; }
}
export const created_ = (): number => created;
`,
  'src/index.ts': `
export { increment, count } from './counter.js';
export { increment as bump } from './counter.js';
export { getConfig, setFlag } from './config.js';
export { ParityError, register, lookup, keys } from './registry.js';
export { Stack, created_ as stacksCreated } from './stack.js';
export const LIMITS = Object.freeze({ min: -1, max: 1, list: [1, 2, 3] });
`,
};

/** Targeted arguments for the codec's exports: what real callers pass (valid and invalid). */
function codecArgs(judge: Record<string, unknown>): ArgsFor {
  const vlq = fc.stringMatching(/^[A-Za-z0-9+/,;]{0,40}$/);
  const segment = fc.oneof(
    fc.tuple(fc.nat(300)),
    fc.tuple(fc.nat(300), fc.nat(5), fc.nat(300), fc.nat(300)),
    fc.tuple(fc.nat(300), fc.nat(5), fc.nat(300), fc.nat(300), fc.nat(9)),
  );
  const mappings = fc.array(fc.array(segment, { maxLength: 6 }), { maxLength: 6 });
  // Inputs of the encoders: what the decoders produce from VLQ text (the judge generates inputs only).
  const decoded = (fn: string) => vlq.map((t) => {
    try {
      return (judge[fn] as (s: string) => unknown)(t);
    } catch {
      return [];
    }
  });
  const targeted: Record<string, fc.Arbitrary<unknown>> = {
    decode: vlq,
    encode: mappings,
    decodeRangeMappings: vlq,
    encodeRangeMappings: fc.array(fc.array(fc.nat(500), { maxLength: 6 }), { maxLength: 5 }),
    decodeOriginalScopes: vlq,
    encodeOriginalScopes: decoded('decodeOriginalScopes'),
    decodeGeneratedRanges: vlq,
    encodeGeneratedRanges: decoded('decodeGeneratedRanges'),
  };
  return (surface, arity) => {
    const name = surface.slice(surface.lastIndexOf('#') + 1);
    const arb = targeted[name];
    // Mostly what the export expects, sometimes anything (the errors must match too).
    return arb ? fc.oneof({ weight: 4, arbitrary: arb.map((a) => [a]) }, { weight: 1, arbitrary: argsOfArity(arity) }) : argsOfArity(arity);
  };
}

/** The codec's published TypeScript sources: from node_modules when it is 1.6.0, else `npm pack` (registry). */
function codecSources(scratch: string): string {
  const installed = join(REPO, 'node_modules', CODEC);
  try {
    const m = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version?: string };
    if (m.version === CODEC_VERSION && existsSync(join(installed, 'src/sourcemap-codec.ts'))) return join(installed, 'src');
  } catch {
    /* not installed: fetch it */
  }
  const out = join(scratch, 'pack');
  mkdirSync(out, { recursive: true });
  const file = execFileSync('npm', ['pack', `${CODEC}@${CODEC_VERSION}`, '--silent', '--pack-destination', out], { encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('tar', ['-xzf', join(out, file), '-C', out]);
  return join(out, 'package/src');
}

function writeCodecPackage(dir: string, scratch: string): void {
  const src = codecSources(scratch);
  const tree: Tree = {};
  for (const f of readdirSync(src).filter((x) => x.endsWith('.ts'))) {
    // Extensionless relative specifiers (bundler style) → `.js`, so Node's ESM can import the build.
    tree[`src/${f}`] = readFileSync(join(src, f), 'utf8').replace(/(from\s+['"])(\.\.?\/[^'"]+?)(['"])/g, (_m, a: string, p: string, b: string) => `${a}${/\.[cm]?js$/.test(p) ? p : `${p}.js`}${b}`);
  }
  const tsconfig = JSON.parse(TSCONFIG_LIB) as { compilerOptions: Record<string, unknown> };
  // TextDecoder and Buffer, as the library's own build has them (DOM lib, @types/node as a devDependency).
  tsconfig.compilerOptions.lib = ['ES2022', 'DOM'];
  tsconfig.compilerOptions.types = ['node'];
  mkdirSync(join(dir, 'node_modules/@types'), { recursive: true });
  symlinkSync(join(REPO, 'node_modules/@types/node'), join(dir, 'node_modules/@types/node'), 'dir');
  writeTree(dir, {
    ...tree,
    'tsconfig.lib.json': JSON.stringify(tsconfig, null, 2),
    'package.json': JSON.stringify({ name: CODEC, version: CODEC_VERSION, type: 'module', license: 'MIT', exports: { '.': { types: './dist/sourcemap-codec.d.ts', import: './dist/sourcemap-codec.js' } } }, null, 2),
  });
}

// ---------------------------------------------------------------- the tests

const FIXTURE_LIBS = ['base', 'left', 'right', 'top', 'tail'] as const; // dependency order
const NUM_RUNS = 60;

let scratch: string;
const subjects = new Map<string, Subject>();
const consumerOf = (s: Subject) => createConsumer(openRepresentation(s.repFile), { requireFrom: s.requireFrom });

beforeAll(async () => {
  scratch = realpathSync(tempDir('rep-parity'));
  const ws = join(scratch, 'ws'); // built in place, then stripped to kiln.rep
  const judge = join(scratch, 'judge'); // the built JS, imported by the judge
  // kiln's fixtures, in a workspace whose node_modules link each lib (as npm workspaces do).
  cpSync(join(REPO, 'fixtures/workspace-basic'), ws, { recursive: true });
  cpSync(join(REPO, 'fixtures/workspace-basic'), judge, { recursive: true, filter: (p) => !p.includes(`${sep}libs${sep}`) || /libs$/.test(p) });
  mkdirSync(join(ws, 'node_modules/@fx'), { recursive: true });
  mkdirSync(join(judge, 'node_modules/@fx'), { recursive: true });
  for (const lib of FIXTURE_LIBS) {
    symlinkSync(join(ws, 'libs', lib), join(ws, 'node_modules/@fx', lib), 'dir');
    symlinkSync(join(judge, 'libs', lib), join(judge, 'node_modules/@fx', lib), 'dir');
  }
  // Built first, all of them (a dependent's compile reads its dependencies' .d.ts), then stripped.
  const coveredCounts = new Map<string, number>();
  for (const lib of FIXTURE_LIBS) coveredCounts.set(lib, await build(join(ws, 'libs', lib)));
  for (const lib of FIXTURE_LIBS) {
    const manifest = JSON.parse(readFileSync(join(ws, 'libs', lib, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const deps = Object.fromEntries(Object.keys(manifest.dependencies ?? {}).map((d) => [d, join(judge, 'libs', d.replace('@fx/', ''))]));
    subjects.set(`@fx/${lib}`, await prepare(join(ws, 'libs', lib), join(judge, 'libs', lib), join(scratch, 'consumers', lib), deps, coveredCounts.get(lib)!));
  }
  const state = join(scratch, 'state');
  writeTree(state, { ...STATE_SOURCES, 'tsconfig.lib.json': TSCONFIG_LIB, 'package.json': JSON.stringify({ name: '@fx/parity-state', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } } }) });
  subjects.set('@fx/parity-state', await prepare(state, join(scratch, 'state-judge'), join(scratch, 'consumers', 'state'), {}, await build(state)));
  const codec = join(scratch, 'codec');
  writeCodecPackage(codec, scratch);
  subjects.set(CODEC, await prepare(codec, join(scratch, 'codec-judge'), join(scratch, 'consumers', 'codec'), {}, await build(codec)));
}, 120_000);
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('parity: representation vs import() of the built JS, every covered export', () => {
  it.each([...FIXTURE_LIBS.map((l) => `@fx/${l}`), '@fx/parity-state'])('%s', (name) => {
    const s = subjects.get(name)!;
    expect(s.covered.length, JSON.stringify(s.entries)).toBeGreaterThan(0);
    const run = runParity(s, consumerOf(s), { numRuns: NUM_RUNS, seed: 15 });
    for (const [surface, n] of run.perSurface) expect(n, `${surface} was never exercised`).toBeGreaterThan(0);
  });

  it(`${CODEC}@${CODEC_VERSION} (a real library built by kiln from its TypeScript sources)`, () => {
    const s = subjects.get(CODEC)!;
    // All eight functions are covered; the rest of the surface is types.
    expect(s.covered.map((x) => x.slice(x.indexOf('#') + 1)).sort()).toEqual(['decode', 'decodeGeneratedRanges', 'decodeOriginalScopes', 'decodeRangeMappings', 'encode', 'encodeGeneratedRanges', 'encodeOriginalScopes', 'encodeRangeMappings']);
    for (const e of s.entries) if (!e.covered) expect(e.reason, e.surface).toBe('KILN_REP_UNCOVERED_TYPE_ONLY');
    const run = runParity(s, consumerOf(s), { argsFor: codecArgs(s.judge.get('.')!), numRuns: 150, seed: 7 });
    for (const [surface, n] of run.perSurface) expect(n, `${surface} was never exercised`).toBeGreaterThan(0);
  });

  it('coverage: what is left uncovered in the fixtures is uncovered by design (types, erased const enums)', () => {
    for (const s of subjects.values()) for (const e of s.entries) if (!e.covered) expect(e.reason, e.surface).toBe('KILN_REP_UNCOVERED_TYPE_ONLY');
    expect(subjects.get('@fx/base')!.entries.find((e) => e.surface === '@fx/base#Level')).toMatchObject({ covered: false, reason: 'KILN_REP_UNCOVERED_TYPE_ONLY' });
  });
});

describe('parity: shared state and identity, both routes', () => {
  it('a module-level object is the same object on every call, and state set through one export is read through another', () => {
    const s = subjects.get('@fx/parity-state')!;
    const c = consumerOf(s);
    const j = s.judge.get('.')!;
    for (const [label, get] of [
      ['import()', (n: string) => j[n]],
      ['kiln.rep', (n: string) => c.load(`@fx/parity-state#${n}`)],
    ] as const) {
      const fn = (n: string) => get(n) as (...a: unknown[]) => any;
      expect(fn('getConfig')(), label).toBe(fn('getConfig')());
      const before = fn('getConfig')().flags.length as number;
      expect(fn('setFlag')('x'), label).toBe(before + 1);
      expect(fn('getConfig')().flags.at(-1), label).toBe('x');
      const rec = fn('register')('k-identity', 1);
      expect(fn('lookup')('k-identity'), label).toBe(rec);
      expect(fn('register')('k-identity', 2), label).toBe(rec);
      expect(fn('keys')(), label).toContain('k-identity');
      const n0 = fn('count')() as number;
      fn('bump')(2);
      expect(fn('increment')(), label).toBe(n0 + 3);
      expect(get('increment'), label).toBe(get('bump')); // an alias is the same function
      expect(get('LIMITS'), label).toBe(get('LIMITS'));
    }
  });

  it('the base fixture: `trail` is one array, filled once by the module body, in order', () => {
    const s = subjects.get('@fx/base')!;
    const c = consumerOf(s);
    const repTrail = c.load('@fx/base#trail');
    expect(repTrail).toBe(c.load('@fx/base#trail'));
    expect(JSON.stringify(repTrail)).toBe(JSON.stringify(s.judge.get('.')!.trail));
  });
});

describe('parity: the differential can fail', () => {
  it('catches one payload patched to compute something else (re-encoded, so integrity passes)', () => {
    const s = subjects.get(CODEC)!;
    const rep = readRepresentation(s.repFile);
    // Patch the VLQ sign decoder (shared by every decoder): wrong only for negative numbers.
    const i = rep.payloads.findIndex((p) => /function decodeSign\(/.test(p.code));
    expect(i).toBeGreaterThanOrEqual(0);
    const patched = rep.payloads[i]!.code.replace(/function decodeSign\((\w+)\) ?\{/, 'function decodeSign($1) { if ($1 & 1) return -($1 >>> 1) - 1;');
    expect(patched).not.toBe(rep.payloads[i]!.code);
    const file = join(scratch, 'patched.kiln.rep');
    writeFileSync(file, encodeRepresentation({ ...rep, payloads: rep.payloads.map((p, k) => (k === i ? { ...p, code: patched } : p)) }));
    const consumer = createConsumer(openRepresentation(file), { requireFrom: s.requireFrom });
    expect(() => runParity(s, consumer, { argsFor: codecArgs(s.judge.get('.')!), numRuns: 150, seed: 7, endOnFailure: true })).toThrow(/#decode\w* call[\s\S]*representation:/);
  });

  it('catches broken identity: a shared payload evaluated again returns a fresh module-level object', () => {
    const s = subjects.get('@fx/parity-state')!;
    const c = consumerOf(s);
    // A consumer that forgets its module cache for every load (what duplicating shared state looks like).
    const forgetful = { ...c, load: (surface: string) => consumerOf(s).load(surface) } as Consumer;
    expect(() => runParity(s, forgetful, { numRuns: NUM_RUNS, seed: 15, endOnFailure: true })).toThrow(/representation:/);
  });
});

describe('parity: realm-sensitive checks', () => {
  // Arguments are the caller's own objects. In the default (host) realm payload code sees the caller's
  // built-ins, so `x instanceof Array` and "is a plain object" checks on an argument agree with import();
  // an `isolated` realm (a fresh vm context) would answer differently — shown, so this can fail.
  it('realm-sensitive checks on arguments behave as in import() (and not in an isolated realm)', async () => {
    const code = `function kind(x) { return x instanceof Array ? 'array' : Object.getPrototypeOf(x) === Object.prototype ? 'plain' : typeof x; }\n`;
    const dir = join(scratch, 'realm');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'realm.mjs'), `export ${code}`);
    const judge = await nativeImport(pathToFileURL(join(dir, 'realm.mjs')).href);
    const rep = encodeRepresentation({
      header: { format: 2, producer: 'test', package: '@fx/realm', version: '1.0.0', requirements: { node: '20.0.0', features: ['cjs-payloads'] } },
      entries: [{ surface: '@fx/realm#kind', declaring: '@fx/realm:src/index.ts#kind:function', kind: 'function', coverage: { covered: true, payload: 0, export: 'kind' } }],
      payloads: [{ name: 'e.js', code: `'use strict';\n${code}exports.kind = kind;\n` }],
    });
    const consumer = createConsumer(openRepresentation(rep));
    for (const arg of [[1, 2], { a: 1 }]) expect(consumer.call('@fx/realm#kind', [arg])).toBe((judge.kind as (x: unknown) => string)(arg));
    const isolated = createConsumer(openRepresentation(rep), { realm: 'isolated' });
    expect(isolated.call('@fx/realm#kind', [[1, 2]])).not.toBe((judge.kind as (x: unknown) => string)([1, 2]));
  });
});
