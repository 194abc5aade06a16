/**
 * The consumer: resolves a surface identity through an opened representation and evaluates its payload
 * in node:vm. NODE:VM IS NOT A SECURITY SANDBOX: payload code runs with this process's privileges (it
 * gets `process` and `require`); run only representations you would run as installed code.
 *
 * Invariants:
 * - Refusals come before any result: the requirements are checked when the consumer is created (the
 *   RFC's "at resolution"), and `load` refuses an unknown surface, an uncovered entry, or an integrity
 *   failure of the entry's payload or of ANY payload it statically requires (`require('./x')`), having
 *   verified the whole set before evaluating the first. No payload is evaluated whose bytes failed.
 * - One module registry per consumer, and one consumer per reader by default: a payload is evaluated at
 *   most once per consumer (memoised like Node's module cache), so module-level state two exports share
 *   stays shared, and an export that returns a module-level object returns the same object every time.
 * - Realm (`realm` option): by default payloads run in this process's own realm, as `import()` would
 *   run the package (parity: `instanceof`, built-ins and globals are the caller's); `isolated` gives each
 *   consumer a fresh vm context instead.
 * - `require('./<name>')` resolves to the payload of that name; another package's specifier to that
 *   package's own representation when it ships one (found from `requireFrom` as Node finds packages; its
 *   JavaScript is not loaded), else to the consumer's `createRequire(requireFrom)` — the package's
 *   dependencies stay imports the consumer resolves, never bundled into its payloads.
 *
 * Crossing the boundary (`isolated` only): values a payload creates belong to the context's realm, so host `instanceof
 * Error` / `instanceof Array` are false for them (use `util.types.isNativeError`, `Array.isArray`);
 * values passed in as arguments are the caller's own objects. A value a payload throws while being called
 * surfaces as that thrown value, unwrapped. A payload whose module body throws while being loaded is
 * reported as KILN_REP_PAYLOAD_FAILED with the thrown value as `cause` (and, as in Node, is not cached).
 *
 * Globals of an `isolated` context: console, setTimeout/clearTimeout, setInterval/clearInterval,
 * setImmediate/clearImmediate, queueMicrotask, structuredClone, URL, URLSearchParams, TextEncoder,
 * TextDecoder, AbortController, AbortSignal, atob, btoa, performance, Buffer and process (the host's
 * objects; libraries read process.env.NODE_ENV), `global`/`globalThis` (the context itself), plus
 * whatever `context` adds. The language built-ins (Object, Array, Promise, …) are the context's own.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve as resolvePath } from 'node:path';
import { createContext, runInContext, Script, type Context } from 'node:vm';
import { RepError, repError } from './errors.js';
import { KNOWN_FEATURES, REPRESENTATION_FORMAT } from './format.js';
import type { RepEntry } from './model.js';
import { findPackageDir, packageNameOf, representationPath } from './locate.js';
import { openRepresentation, type RepReader } from './read.js';

export interface ConsumerOptions {
  /** Directory whose node_modules resolve the payloads' bare specifiers (default: process.cwd()). */
  requireFrom?: string;
  /**
   * Where payloads run (default `host`):
   * - `host`: in this process's own realm (`Script.runInThisContext`), as `import()` of the package
   *   would run them — the same `Array`, `Object`, `Error`, the same globals — so realm-sensitive code
   *   (`x instanceof Array` on an argument, `e instanceof Error` on what it throws) behaves as with
   *   `import()`. Each consumer still has its own module registry: its own module-level state.
   * - `isolated`: in a fresh vm context per consumer, with its own built-ins and the globals below;
   *   host `instanceof` checks differ across that boundary. Still not a security sandbox.
   */
  realm?: 'host' | 'isolated';
  /** Extra globals for an `isolated` context (added after the defaults, so they can replace one). */
  context?: Record<string, unknown>;
}

export interface Consumer {
  readonly reader: RepReader;
  /** The realm's global object: the vm context (`isolated`) or this process's `globalThis` (`host`). */
  readonly context: Context;
  /** The value of a covered export (its payload and everything it requires evaluated once). */
  load(surface: string): unknown;
  /**
   * Calls a covered export that is a function; what it throws surfaces as thrown (a class throws the
   * engine's TypeError, as calling it after `import()` does). A value that is not a function is refused
   * with KILN_REP_NOT_CALLABLE before anything is called.
   */
  call(surface: string, args?: readonly unknown[]): unknown;
  /** `new` of a covered export (a class, or a function used as a constructor); refused like `call`. */
  construct(surface: string, args?: readonly unknown[]): unknown;
  /** How many times each payload's module body was evaluated (name → count; 0 or 1 unless it threw). */
  readonly evaluations: ReadonlyMap<string, number>;
}

interface Module {
  exports: unknown;
}

const RELATIVE = /^\.\.?\//;

/** Node's CommonJS wrapper: the payload is the body of this function, as a module is for Node. */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n})';

/**
 * Compiled payloads per reader (index → script). A vm.Script is not bound to a context: compiled once,
 * it is run in every consumer's context, so a fresh context does not compile again (compileFunction
 * with a parsingContext compiles per context and misses V8's compilation cache: ~6× slower per
 * payload, most of a warm 3-of-400 load). Only bytes that passed the integrity check are compiled.
 */
const compiled = new WeakMap<RepReader, Map<number, Script>>();
/** Static `require('./x')` calls: what the closure verification follows before anything runs. */
const STATIC_REQUIRE = /\brequire\(\s*(['"])(\.{1,2}\/[^'"\\\n]+)\1\s*\)/g;

/** Compares `major.minor.patch` strings; undefined when either does not parse. */
function compareVersions(a: string, b: string): number | undefined {
  const pa = /^v?(\d+)\.(\d+)\.(\d+)/.exec(a);
  const pb = /^v?(\d+)\.(\d+)\.(\d+)/.exec(b);
  if (!pa || !pb) return undefined;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d;
  }
  return 0;
}

/** Throws KILN_REP_REQUIREMENT_UNMET when this process cannot run the representation's payloads. */
export function checkRequirements(reader: RepReader, nodeVersion: string = process.versions.node): void {
  const { package: pkg, version, requirements, format } = reader.header;
  const subject = { package: pkg, version };
  // openRepresentation already refused another format; a reader built some other way is checked too.
  if (format !== REPRESENTATION_FORMAT) {
    throw repError('KILN_REP_UNSUPPORTED_VERSION', `${pkg}@${version}: its representation is format ${format}; this runtime reads format ${REPRESENTATION_FORMAT}`, {
      ...subject,
      requirement: `representation format ${REPRESENTATION_FORMAT}`,
    });
  }
  const unknown = requirements.features.filter((f) => !KNOWN_FEATURES.includes(f));
  if (unknown.length > 0) {
    throw repError(
      'KILN_REP_REQUIREMENT_UNMET',
      `${pkg}@${version} requires ${unknown.length === 1 ? 'feature' : 'features'} ${unknown.join(', ')}, which this runtime does not support (it supports ${KNOWN_FEATURES.join(', ')})`,
      { ...subject, requirement: `feature ${unknown[0]}` },
    );
  }
  const c = compareVersions(nodeVersion, requirements.node);
  if (c === undefined || c < 0) {
    throw repError(
      'KILN_REP_REQUIREMENT_UNMET',
      c === undefined
        ? `${pkg}@${version} requires Node.js "${requirements.node}", which is not a version this runtime can compare`
        : `${pkg}@${version} requires Node.js >=${requirements.node}; this is ${nodeVersion}`,
      { ...subject, requirement: `node >=${requirements.node}` },
    );
  }
}

function defaultGlobals(): Record<string, unknown> {
  return {
    console,
    setTimeout,
    clearTimeout,
    setInterval,
    clearInterval,
    setImmediate,
    clearImmediate,
    queueMicrotask,
    structuredClone,
    URL,
    URLSearchParams,
    TextEncoder,
    TextDecoder,
    AbortController,
    AbortSignal,
    atob,
    btoa,
    performance,
    Buffer,
    process,
  };
}

export function createConsumer(reader: RepReader, opts: ConsumerOptions = {}): Consumer {
  checkRequirements(reader);
  const { package: pkg, version } = reader.header;
  const subject = { package: pkg, version };
  const requireFrom = resolvePath(opts.requireFrom ?? process.cwd()); // createRequire needs an absolute path
  const hostRequire = createRequire(join(requireFrom, '__kiln_rep_consumer__.js'));
  const host = (opts.realm ?? 'host') === 'host';
  let context: Context;
  let newModule: () => Module;
  if (host) {
    context = globalThis;
    newModule = () => ({ exports: {} });
  } else {
    context = createContext({ ...defaultGlobals(), ...opts.context });
    runInContext('globalThis.global = globalThis;', context);
    // The context's own module record factory (compiled once per context, not per payload).
    newModule = runInContext('() => ({ exports: {} })', context) as () => Module;
  }
  const scripts = compiled.get(reader) ?? compiled.set(reader, new Map()).get(reader)!;
  const modules = new Map<number, Module>();
  const evaluations = new Map<string, number>();

  const payloadByRequest = (request: string, from: string): number => {
    const name = request.replace(RELATIVE, '');
    const i = reader.payloadIndex(name) ?? reader.payloadIndex(`${name}.js`);
    if (i === undefined) {
      throw repError('KILN_REP_PAYLOAD_FAILED', `${pkg}@${version}: payload ${from} requires ${request}, which the representation has no payload for`, {
        ...subject,
        requirement: request,
      });
    }
    return i;
  };

  /** Every payload `root` reaches through static relative requires, each integrity-checked (read). */
  const verifyClosure = (root: number): void => {
    const seen = new Set<number>();
    const stack = [root];
    while (stack.length > 0) {
      const i = stack.pop()!;
      if (seen.has(i) || modules.has(i)) continue;
      seen.add(i);
      const p = reader.payload(i); // KILN_REP_INTEGRITY / KILN_REP_CORRUPT before any evaluation
      for (const m of p.code.matchAll(STATIC_REQUIRE)) stack.push(payloadByRequest(m[2]!, p.name));
    }
  };

  const evaluate = (i: number): unknown => {
    const cached = modules.get(i);
    if (cached) return cached.exports;
    const p = reader.payload(i);
    const filename = `${pkg}@${version}/kiln.rep/${p.name}`;
    let script = scripts.get(i);
    if (script === undefined) {
      try {
        script = new Script(WRAPPER_HEAD + p.code + WRAPPER_TAIL, { filename, columnOffset: -WRAPPER_HEAD.length });
        // The wrapper must hold exactly one function: a payload that closes it early is not a module body.
        new Function('exports', 'require', 'module', '__filename', '__dirname', p.code);
      } catch (e) {
        throw repError('KILN_REP_PAYLOAD_FAILED', `${pkg}@${version}: payload ${p.name} does not compile: ${String((e as Error)?.message ?? e)}`, subject, e);
      }
      scripts.set(i, script);
    }
    const fn = (host ? script.runInThisContext() : script.runInContext(context)) as (...a: unknown[]) => unknown;
    const module = newModule();
    const req = (request: string): unknown => {
      if (typeof request === 'string' && RELATIVE.test(request)) {
        const j = payloadByRequest(request, p.name);
        if (!modules.has(j)) verifyClosure(j); // a dynamic require: still verified before it runs
        return evaluate(j);
      }
      return dependency(request);
    };
    modules.set(i, module); // before running: a require cycle sees the partial exports, as in Node
    evaluations.set(p.name, (evaluations.get(p.name) ?? 0) + 1);
    try {
      fn.call(module.exports, module.exports, req, module, filename, `${pkg}@${version}/kiln.rep`);
    } catch (e) {
      modules.delete(i);
      if (e instanceof RepError) throw e; // a nested payload's refusal, already a record
      throw repError('KILN_REP_PAYLOAD_FAILED', `${pkg}@${version}: payload ${p.name} threw while loading`, subject, e);
    }
    return module.exports;
  };

  /**
   * Another package a payload imports: through that package's own representation when it ships one
   * (resolved by surface identity, RFC 123: its JavaScript is not loaded), else Node's resolution from
   * `requireFrom`. The namespace has a getter per entry of the requested entry point; an uncovered one
   * throws KILN_REP_UNCOVERED naming that package when it is read (importing it is not an error).
   */
  const namespaces = new Map<string, unknown>();
  const dependency = (request: string): unknown => {
    const had = namespaces.get(request);
    if (had !== undefined) return had;
    const dir = request.startsWith('node:') ? undefined : findPackageDir(packageNameOf(request), requireFrom);
    let file: string | undefined;
    let depVersion: string | undefined;
    if (dir !== undefined) {
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
        const at = representationPath(dir, manifest);
        if (existsSync(at)) file = at;
        if (typeof manifest.version === 'string') depVersion = manifest.version;
      } catch {
        file = undefined; // an unreadable manifest: Node's resolution decides, as for any package
      }
    }
    if (dir === undefined || file === undefined) return hostRequire(request);
    let dep = dependencies.get(dir);
    if (dep === undefined) {
      dep = createConsumer(openRepresentation(file, depVersion !== undefined ? { version: depVersion } : {}), { ...opts, requireFrom: dir });
      dependencies.set(dir, dep);
    }
    const consumer = dep;
    const prefix = `${request}#`;
    const ns: Record<string, unknown> = {};
    Object.defineProperty(ns, '__esModule', { value: true });
    for (const e of consumer.reader.entries()) {
      if (!e.surface.startsWith(prefix)) continue;
      Object.defineProperty(ns, e.surface.slice(prefix.length), { enumerable: true, get: () => consumer.load(e.surface) });
    }
    namespaces.set(request, ns);
    return ns;
  };
  const dependencies = new Map<string, Consumer>();

  const resolve = (surface: string): RepEntry & { coverage: { covered: true } } => {
    const entry = reader.lookup(surface);
    if (entry === undefined) {
      throw repError('KILN_REP_NO_SUCH_EXPORT', `${pkg}@${version} has no entry ${surface}`, { ...subject, requirement: surface });
    }
    if (!entry.coverage.covered) {
      throw repError('KILN_REP_UNCOVERED', `${pkg}@${version}: ${surface} is not covered (${entry.coverage.reason}: ${entry.coverage.detail})`, {
        ...subject,
        requirement: surface,
        reason: entry.coverage.reason,
        detail: entry.coverage.detail,
      });
    }
    return entry as RepEntry & { coverage: { covered: true } };
  };

  const load = (surface: string): unknown => {
    const entry = resolve(surface);
    verifyClosure(entry.coverage.payload);
    const exports = evaluate(entry.coverage.payload) as Record<string, unknown>;
    const name = entry.coverage.export;
    if (exports === null || (typeof exports !== 'object' && typeof exports !== 'function') || !(name in exports)) {
      throw repError('KILN_REP_PAYLOAD_FAILED', `${pkg}@${version}: payload of ${surface} does not export ${name}`, { ...subject, requirement: surface });
    }
    return exports[name];
  };

  /** The export's value when it is a function; KILN_REP_NOT_CALLABLE (naming what it is) otherwise. */
  const callable = (surface: string): unknown => {
    const value = load(surface);
    if (typeof value === 'function') return value;
    const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
    throw repError('KILN_REP_NOT_CALLABLE', `${pkg}@${version}: ${surface} is ${what}, not a function; nothing was called`, { ...subject, requirement: surface });
  };

  return {
    reader,
    context,
    evaluations,
    load,
    call(surface, args = []) {
      return (callable(surface) as (...a: unknown[]) => unknown)(...args);
    },
    construct(surface, args = []) {
      return new (callable(surface) as new (...a: unknown[]) => unknown)(...args);
    },
  };
}

const consumers = new WeakMap<RepReader, { consumer: Consumer; opts: ConsumerOptions }>();

/** The reader's default consumer: created (requirements checked) on first use with that call's options. */
export function consumerFor(reader: RepReader, opts?: ConsumerOptions): Consumer {
  const had = consumers.get(reader);
  if (had === undefined) {
    const consumer = createConsumer(reader, opts);
    consumers.set(reader, { consumer, opts: opts ?? {} });
    return consumer;
  }
  // One context per reader: other options would need another context (createConsumer), not this one.
  if (opts !== undefined && (opts.requireFrom !== had.opts.requireFrom || opts.context !== had.opts.context || opts.realm !== had.opts.realm)) {
    throw new TypeError('the reader already has a consumer with other options; use createConsumer() for another context');
  }
  return had.consumer;
}

/** The value of a covered export, evaluated in the reader's one context. */
export function loadExport(reader: RepReader, surface: string, opts?: ConsumerOptions): unknown {
  return consumerFor(reader, opts).load(surface);
}

/** Calls a covered function export in the reader's one context. */
export function callExport(reader: RepReader, surface: string, args: readonly unknown[] = [], opts?: ConsumerOptions): unknown {
  return consumerFor(reader, opts).call(surface, args);
}
