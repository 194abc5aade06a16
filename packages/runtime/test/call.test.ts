/**
 * The consumer (SPEC §7): refusals before any result (requirements, unknown export, uncovered, integrity
 * of the payload or of any payload it requires — nothing evaluated), and evaluation in one node:vm
 * context per reader: shared module-level state, a chunk required by two entries evaluated once,
 * identical objects on repeated calls, thrown errors surfacing as thrown, bare specifiers resolved
 * through requireFrom — in an `isolated` realm (a fresh vm context per consumer; the helpers below pass
 * it), and in the default `host` realm, where what a payload creates and throws is the caller's own kind
 * (parity with `import()`), each consumer still with its own state. Payloads are hand-written in
 * rollup's cjs style.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { types } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import {
  callExport as callExportIn,
  createConsumer as createConsumerIn,
  encodeRepresentation,
  findPackageDir,
  loadExport as loadExportIn,
  openRepresentation,
  RepError,
  type ConsumerOptions,
  type RepEntry,
  type RepReader,
  type Representation,
  REPRESENTATION_FORMAT,
} from '@kiln/runtime';
import { refusal } from './lib/refusal.js';

// The isolated realm, for the tests of its semantics (a fresh context per consumer, its own globals).
const ISO: ConsumerOptions = { realm: 'isolated' };
const createConsumer = (r: RepReader, o: ConsumerOptions = {}) => createConsumerIn(r, { ...ISO, ...o });
const callExport = (r: RepReader, s: string, a: unknown[] = [], o: ConsumerOptions = {}) => callExportIn(r, s, a, { ...ISO, ...o });
const loadExport = (r: RepReader, s: string, o: ConsumerOptions = {}) => loadExportIn(r, s, { ...ISO, ...o });

const dir = mkdtempSync(join(tmpdir(), 'kiln-rep-call-'));
const bare = mkdtempSync(join(tmpdir(), 'kiln-rep-bare-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(bare, { recursive: true, force: true });
});

// A dependency the consumer has installed (the package's own imports stay imports).
mkdirSync(join(dir, 'node_modules', 'left-pad-ish'), { recursive: true });
writeFileSync(join(dir, 'node_modules', 'left-pad-ish', 'package.json'), JSON.stringify({ name: 'left-pad-ish', version: '1.0.0', main: 'index.js' }));
writeFileSync(join(dir, 'node_modules', 'left-pad-ish', 'index.js'), "module.exports = (s, n) => String(s).padStart(n, '.');\n");

const P = '@acme/counter';
const payloads = [
  {
    name: 'shared.js',
    code: `'use strict';
globalThis.__evals = (globalThis.__evals || 0) + 1;
let count = 0;
const registry = { name: 'registry', items: [] };
function bump() { return ++count; }
exports.bump = bump;
exports.registry = registry;
`,
  },
  { name: 'increment.js', code: `'use strict';\nvar shared = require('./shared.js');\nfunction increment() { return shared.bump(); }\nexports.increment = increment;\n` },
  { name: 'next.js', code: `'use strict';\nvar shared = require('./shared.js');\nfunction next() { return shared.bump() * 10; }\nfunction getRegistry() { return shared.registry; }\nexports.next = next;\nexports.getRegistry = getRegistry;\n` },
  { name: 'boom.js', code: `'use strict';\nfunction boom(msg) { throw new TypeError('boom: ' + msg); }\nfunction throwsPlain() { throw { plain: true }; }\nexports.boom = boom;\nexports.throwsPlain = throwsPlain;\n` },
  { name: 'paths.js', code: `'use strict';\nvar path = require('node:path');\nvar pad = require('left-pad-ish');\nfunction join2(a, b) { return pad(path.posix.join(a, b), 12); }\nexports.join2 = join2;\n` },
  { name: 'loadfail.js', code: `'use strict';\nthrow new Error('module body failed');\n` },
  { name: 'missing.js', code: `'use strict';\nvar x = require('./nowhere.js');\nexports.f = function f() { return x; };\n` },
  { name: 'uses-globals.js', code: `'use strict';\nfunction env() { return [typeof console.log, typeof setTimeout, typeof URL, typeof TextEncoder, typeof structuredClone, typeof Buffer, typeof process.versions.node, typeof queueMicrotask, global === globalThis]; }\nexports.env = env;\n` },
];
const idx = (name: string) => payloads.findIndex((p) => p.name === name);
const cov = (name: string, exp: string) => ({ covered: true as const, payload: idx(name), export: exp });
const entry = (name: string, coverage: RepEntry['coverage']): RepEntry => ({ surface: `${P}#${name}`, declaring: `${P}:src/index.ts#${name}`, kind: 'function', coverage });

function rep(over: Partial<Representation['header']> = {}): Representation {
  const entries: RepEntry[] = [
    entry('boom', cov('boom.js', 'boom')),
    entry('brokenLoad', cov('loadfail.js', 'x')),
    entry('dangling', cov('missing.js', 'f')),
    entry('env', cov('uses-globals.js', 'env')),
    entry('getRegistry', cov('next.js', 'getRegistry')),
    entry('increment', cov('increment.js', 'increment')),
    entry('join2', cov('paths.js', 'join2')),
    entry('next', cov('next.js', 'next')),
    entry('notThere', cov('next.js', 'nope')),
    entry('throwsPlain', cov('boom.js', 'throwsPlain')),
    entry('viaAlias', cov('increment.js', 'increment')),
    entry('weird', { covered: false, reason: 'KILN_REP_UNCOVERED_NATIVE_ADDON', detail: 'weird loads a .node binary' }),
  ];
  return {
    header: { format: 2, producer: '@kiln/core 0.1.0', package: P, version: '2.0.0', requirements: { node: '20.0.0', features: ['cjs-payloads'] }, ...over },
    entries,
    payloads,
  };
}

const open = (r = rep()) => openRepresentation(encodeRepresentation(r));
const evalCount = (c: { context: object }) => (c.context as { __evals?: number }).__evals ?? 0;

describe('evaluation in one vm context per reader', () => {
  it('two exports that share module-level state see the same counter; the shared chunk is evaluated once', () => {
    const reader = open();
    expect(callExport(reader, `${P}#increment`)).toBe(1);
    expect(callExport(reader, `${P}#next`)).toBe(20);
    expect(callExport(reader, `${P}#increment`)).toBe(3);
    expect(callExport(reader, `${P}#viaAlias`)).toBe(4); // an alias resolves to the same payload and state
    const c = createConsumer(reader); // another consumer: its own context, its own state
    expect(c.call(`${P}#increment`)).toBe(1);
    expect(c.evaluations.get('shared.js')).toBe(1);
    expect(evalCount(c)).toBe(1);
  });

  it('the same export returns the identical module-level object every time', () => {
    const reader = open();
    const a = callExport(reader, `${P}#getRegistry`);
    const b = callExport(reader, `${P}#getRegistry`);
    expect(a).toBe(b);
    expect(loadExport(reader, `${P}#getRegistry`)).toBe(loadExport(reader, `${P}#getRegistry`));
  });

  it('a thrown error surfaces as the thrown value (a context-realm Error: instanceof differs)', () => {
    const reader = open();
    let thrown: unknown;
    try {
      callExport(reader, `${P}#boom`, ['x']);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).not.toBeInstanceOf(RepError);
    expect(types.isNativeError(thrown)).toBe(true);
    expect(thrown instanceof Error).toBe(false); // the context's TypeError, not the host's
    expect((thrown as Error).name).toBe('TypeError');
    expect((thrown as Error).message).toBe('boom: x');
    expect((thrown as Error).stack).toContain(`${P}@2.0.0/kiln.rep/boom.js`);
    let plain: unknown;
    try {
      callExport(reader, `${P}#throwsPlain`);
    } catch (e) {
      plain = e;
    }
    expect(plain).toEqual({ plain: true });
  });

  it('bare specifiers resolve through requireFrom: node: built-ins and the consumer\'s dependencies', () => {
    const reader = open();
    expect(callExport(reader, `${P}#join2`, ['a', 'b'], { requireFrom: dir })).toBe('.........a/b');
    // Without the dependency installed where requireFrom points, the require fails while loading.
    const e = refusal(() => createConsumer(open(), { requireFrom: bare }).call(`${P}#join2`, ['a', 'b']));
    expect(e.code).toBe('KILN_REP_PAYLOAD_FAILED');
    expect((e.cause as Error).message).toContain('left-pad-ish');
  });

  it('the context has the globals a library expects', () => {
    expect(callExport(open(), `${P}#env`)).toEqual(['function', 'function', 'function', 'function', 'function', 'function', 'string', 'function', true]);
  });

  it('a module body that throws while loading: KILN_REP_PAYLOAD_FAILED with the thrown value as cause', () => {
    const e = refusal(() => callExport(open(), `${P}#brokenLoad`));
    expect(e.code).toBe('KILN_REP_PAYLOAD_FAILED');
    expect((e.cause as Error).message).toBe('module body failed');
  });

  it('a payload that does not export the entry\'s name, or requires a payload that does not exist: KILN_REP_PAYLOAD_FAILED before evaluation', () => {
    const reader = open();
    expect(refusal(() => loadExport(reader, `${P}#notThere`)).code).toBe('KILN_REP_PAYLOAD_FAILED');
    const c = createConsumer(open());
    const e = refusal(() => c.load(`${P}#dangling`));
    expect(e.code).toBe('KILN_REP_PAYLOAD_FAILED');
    expect(e.requirement).toBe('./nowhere.js');
    expect(c.evaluations.size).toBe(0);
  });
});

describe('payloads compiled once per reader, evaluated once per context', () => {
  it('consumers of one reader share compiled code, never state: each context evaluates every payload afresh', () => {
    const reader = open();
    const a = createConsumer(reader);
    const b = createConsumer(reader);
    expect(a.call(`${P}#increment`)).toBe(1);
    expect(a.call(`${P}#increment`)).toBe(2);
    expect(b.call(`${P}#increment`)).toBe(1); // b's own module-level counter
    expect(a.call(`${P}#getRegistry`)).not.toBe(b.call(`${P}#getRegistry`));
    expect(a.call(`${P}#getRegistry`)).toBe(a.call(`${P}#getRegistry`));
    expect([evalCount(a), evalCount(b)]).toEqual([1, 1]);
    // Functions belong to each consumer's own realm, as with compileFunction in that context.
    expect(Object.getPrototypeOf(a.load(`${P}#increment`))).not.toBe(Object.getPrototypeOf(b.load(`${P}#increment`)));
  });

  it('a payload that is not a module body (closes the CommonJS wrapper early) is refused before anything runs', () => {
    const early = { name: 'early.js', code: `'use strict';\n}); globalThis.__escaped = true; (function () {\n` };
    const r = rep();
    const bad: Representation = { ...r, payloads: [...r.payloads, early], entries: [...r.entries, entry('zEarly', { covered: true, payload: r.payloads.length, export: 'x' })].sort((x, y) => (x.surface < y.surface ? -1 : 1)) };
    const c = createConsumer(open(bad));
    const e = refusal(() => c.load(`${P}#zEarly`));
    expect(e.code).toBe('KILN_REP_PAYLOAD_FAILED');
    expect(e.message).toContain('does not compile');
    expect((c.context as { __escaped?: boolean }).__escaped).toBeUndefined();
    expect((globalThis as { __escaped?: boolean }).__escaped).toBeUndefined();
  });
});

describe('refusals before any result', () => {
  it('an unknown export: KILN_REP_NO_SUCH_EXPORT', () => {
    const e = refusal(() => callExport(open(), `${P}#nope`));
    expect(e.code).toBe('KILN_REP_NO_SUCH_EXPORT');
    expect(e.package).toBe(P);
    expect(e.version).toBe('2.0.0');
    expect(e.requirement).toBe(`${P}#nope`);
  });

  it('an uncovered entry: KILN_REP_UNCOVERED naming its reason code and detail', () => {
    const e = refusal(() => callExport(open(), `${P}#weird`));
    expect(e.code).toBe('KILN_REP_UNCOVERED');
    expect(e.record.reason).toBe('KILN_REP_UNCOVERED_NATIVE_ADDON');
    expect(e.record.detail).toBe('weird loads a .node binary');
    expect(e.message).toContain('KILN_REP_UNCOVERED_NATIVE_ADDON');
  });

  it('a newer Node.js required: KILN_REP_REQUIREMENT_UNMET naming package, version and requirement', () => {
    const reader = open(rep({ requirements: { node: '99.0.0', features: ['cjs-payloads'] } }));
    const e = refusal(() => callExport(reader, `${P}#increment`));
    expect(e.code).toBe('KILN_REP_REQUIREMENT_UNMET');
    expect([e.package, e.version, e.requirement]).toEqual([P, '2.0.0', 'node >=99.0.0']);
  });

  it('a reader of another format version: KILN_REP_UNSUPPORTED_VERSION before anything is evaluated', () => {
    const reader = open();
    const foreign = Object.create(reader, { header: { value: { ...reader.header, format: REPRESENTATION_FORMAT + 1 } } });
    const e = refusal(() => callExport(foreign, `${P}#increment`));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect([e.package, e.version]).toEqual([P, '2.0.0']);
  });

  it('an unknown feature: KILN_REP_REQUIREMENT_UNMET naming it', () => {
    const reader = open(rep({ requirements: { node: '20.0.0', features: ['cjs-payloads', 'esm-payloads'] } }));
    const e = refusal(() => loadExport(reader, `${P}#increment`));
    expect(e.code).toBe('KILN_REP_REQUIREMENT_UNMET');
    expect(e.requirement).toBe('feature esm-payloads');
    expect(e.message).toContain('esm-payloads');
  });

  it('an integrity failure of a payload the entry REQUIRES: nothing is evaluated, not even the entry\'s own payload', () => {
    const bytes = Buffer.from(encodeRepresentation(rep()));
    const info = openRepresentation(bytes).payloadInfo(idx('shared.js'));
    bytes[info.offset + info.storedLength - 1]! ^= 0x10;
    const reader = openRepresentation(bytes);
    const c = createConsumer(reader);
    const e = refusal(() => c.call(`${P}#increment`));
    expect(e.code).toBe('KILN_REP_INTEGRITY');
    expect(e.requirement).toBe('shared.js');
    expect(c.evaluations.size).toBe(0);
    expect(evalCount(c)).toBe(0);
    // A payload that does not reach the altered one still runs.
    expect(() => c.call(`${P}#boom`, ['y'])).toThrow('boom: y');
  });

  it('an integrity failure of the entry\'s own payload: KILN_REP_INTEGRITY, nothing evaluated', () => {
    const bytes = Buffer.from(encodeRepresentation(rep()));
    const info = openRepresentation(bytes).payloadInfo(idx('increment.js'));
    bytes[info.offset]! ^= 0x01;
    const c = createConsumer(openRepresentation(bytes));
    expect(refusal(() => c.call(`${P}#increment`)).code).toBe('KILN_REP_INTEGRITY');
    expect(c.evaluations.size).toBe(0);
  });
});

describe('the default realm: the host\'s own (parity with import())', () => {
  it('what a payload throws and creates is the caller\'s kind; arguments pass realm checks; each consumer keeps its own state', () => {
    const reader = open();
    let thrown: unknown;
    try {
      callExportIn(reader, `${P}#boom`, ['x']);
    } catch (e) {
      thrown = e;
    }
    expect(thrown instanceof TypeError).toBe(true); // the host's TypeError, as with import()
    expect(Object.getPrototypeOf(callExportIn(reader, `${P}#getRegistry`))).toBe(Object.prototype);
    const a = createConsumerIn(reader);
    const b = createConsumerIn(reader);
    expect([a.call(`${P}#increment`), a.call(`${P}#increment`), b.call(`${P}#increment`)]).toEqual([1, 2, 1]);
    expect(a.call(`${P}#getRegistry`)).not.toBe(b.call(`${P}#getRegistry`));
    expect(a.context).toBe(globalThis);
    // A realm-sensitive check on an argument, as a library writes it.
    const check = encodeRepresentation({
      ...rep(),
      entries: [entry('isList', { covered: true, payload: 0, export: 'isList' })],
      payloads: [{ name: 'realm.js', code: `'use strict';\nexports.isList = function isList(x) { return x instanceof Array && Object.getPrototypeOf({}) === Object.prototype; };\n` }],
    });
    expect(createConsumerIn(openRepresentation(check)).call(`${P}#isList`, [[1, 2]])).toBe(true);
    expect(createConsumerIn(openRepresentation(check), { realm: 'isolated' }).call(`${P}#isList`, [[1, 2]])).toBe(false);
  });
});

describe('another package a payload imports', () => {
  it('resolves through that package\'s own representation (no JS of it loaded); an uncovered export of it is refused when read', () => {
    const root = mkdtempSync(join(tmpdir(), 'kiln-rep-dep-'));
    try {
      const dep = join(root, 'node_modules', '@dep', 'lib');
      mkdirSync(join(dep, 'dist'), { recursive: true });
      writeFileSync(join(dep, 'package.json'), JSON.stringify({ name: '@dep/lib', version: '3.0.0', exports: { '.': './dist/index.js' } }));
      writeFileSync(
        join(dep, 'dist', 'kiln.rep'),
        encodeRepresentation({
          header: { format: 2, producer: 'test', package: '@dep/lib', version: '', requirements: { node: '20.0.0', features: ['cjs-payloads'] } },
          entries: [
            { surface: '@dep/lib#Shape', declaring: '@dep/lib:src/index.ts#Shape', kind: 'interface', coverage: { covered: false, reason: 'KILN_REP_UNCOVERED_TYPE_ONLY', detail: 'an interface' } },
            { surface: '@dep/lib#twice', declaring: '@dep/lib:src/index.ts#twice', kind: 'function', coverage: { covered: true, payload: 0, export: 'twice' } },
          ],
          payloads: [{ name: 'd.js', code: `'use strict';\nexports.twice = function twice(x) { return x * 2; };\n` }],
        }),
      );
      const main = encodeRepresentation({
        header: { format: 2, producer: 'test', package: '@app/x', version: '1.0.0', requirements: { node: '20.0.0', features: ['cjs-payloads'] } },
        entries: [
          { surface: '@app/x#quad', declaring: '@app/x:src/index.ts#quad', kind: 'function', coverage: { covered: true, payload: 0, export: 'quad' } },
          { surface: '@app/x#shape', declaring: '@app/x:src/index.ts#shape', kind: 'function', coverage: { covered: true, payload: 0, export: 'shape' } },
        ],
        payloads: [{ name: 'm.js', code: `'use strict';\nvar lib = require('@dep/lib');\nexports.quad = function quad(x) { return lib.twice(lib.twice(x)); };\nexports.shape = function shape() { return lib.Shape; };\n` }],
      });
      const c = createConsumerIn(openRepresentation(main), { requireFrom: root });
      expect(c.call('@app/x#quad', [5])).toBe(20);
      const e = refusal(() => c.call('@app/x#shape'));
      expect(e.code).toBe('KILN_REP_UNCOVERED');
      expect(e.message).toContain('@dep/lib@3.0.0'); // unstamped: the version of the package.json beside it
      expect(e.record.reason).toBe('KILN_REP_UNCOVERED_TYPE_ONLY');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('findPackageDir: where a bare name leads, judged by Node\'s own require.resolve', () => {
  /** Node's answer: the folder of the file `require(name)` resolves to from `fromDir`, or undefined. */
  const node = (name: string, fromDir: string): string | undefined => {
    try {
      return dirname(createRequire(join(fromDir, 'x.js')).resolve(name));
    } catch {
      return undefined;
    }
  };
  it("a library's own folder (Node's self-reference, needs exports), then node_modules from there up", () => {
    const root = mkdtempSync(join(tmpdir(), 'kiln-rep-self-'));
    try {
      const write = (rel: string, text: string) => {
        mkdirSync(dirname(join(root, rel)), { recursive: true });
        writeFileSync(join(root, rel), text);
      };
      write('self/package.json', JSON.stringify({ name: '@t/self', exports: { '.': './index.js' } }));
      write('self/index.js', 'module.exports = 1;');
      write('self/src/deep/a.js', '');
      write('plain/package.json', JSON.stringify({ name: '@t/plain', main: './index.js' }));
      write('plain/index.js', 'module.exports = 2;');
      write('node_modules/@t/dep/package.json', JSON.stringify({ name: '@t/dep', main: './index.js' }));
      write('node_modules/@t/dep/index.js', 'module.exports = 3;');
      const cases: [string, string][] = [
        ['@t/self', join(root, 'self')],
        ['@t/self', join(root, 'self/src/deep')],
        ['@t/plain', join(root, 'plain')], // no exports: no self-reference
        ['@t/dep', join(root, 'self/src')],
        ['@t/self', join(root, 'plain')],
      ];
      for (const [name, from] of cases) expect(findPackageDir(name, from), `${name} from ${from}`).toBe(node(name, from));
      expect(findPackageDir('@t/self', join(root, 'self/src/deep'))).toBe(join(root, 'self'));
      expect(findPackageDir('@t/plain', join(root, 'plain'))).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
