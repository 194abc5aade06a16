#!/usr/bin/env node
/**
 * Real-monorepo trial of the executable representation (SPEC §7, issue 15): a real library built by its
 * own build tool (a wrapped tool, e.g. vite in TanStack/form), then `kiln represent`, `kiln inspect
 * representation`, `kiln call`, and parity of every covered export against `import()` of the built JS.
 * One run:
 *   1. clones --repo into --work (reused when present), narrows its pnpm workspace to --package (its
 *      workspace dependencies must be listed with --workspace too), applies --pnpm-setting, and installs
 *      with the checkout's package manager — under --path-prepend (a Node and a pnpm of the versions the
 *      checkout asks for: .nvmrc, packageManager) for the trial's commands only;
 *   2. builds the package with its own `build` script (`pnpm run build`);
 *   3. runs kiln with THIS process's Node (kiln's own): `kiln represent` (wall time), `kiln inspect
 *      representation --format json` (entries, covered / uncovered by reason code, payloads), and the
 *      size of kiln.rep beside the same content as JSON (as tools/bench-representation-call.mjs §0:
 *      the decoded model, each payload with its SHA-256 in hex);
 *   4. parity, in a fresh Node process: for every covered export, the value's kind and shape through
 *      @kiln/runtime (createConsumer(openRepresentation(file), { requireFrom: package dir })) against
 *      `import()` of the package's built entry; then real calls (the package's own cases below, e.g.
 *      `new FormApi(...)` then `.getFieldValue`, mergeForm, getBy/setBy/deleteBy…) compared with
 *      util.isDeepStrictEqual, thrown errors by name and message. Dependencies (@tanstack/store…)
 *      resolve through Node from the package's node_modules on both sides;
 *   5. `kiln call` of a few exports through the CLI (a function, a value, a class);
 *   6. prints a markdown summary (and --json FILE writes everything).
 * Nothing of the checkout is written into this repository. Requires `npm run build`.
 *
 * Usage: node tools/trial-representation.mjs --repo CHECKOUT [--package packages/form-core]
 *          [--workspace packages/a,packages/b] [--build-first packages/a] [--path-prepend DIR]
 *          [--pnpm-setting key=value ...] [--work DIR] [--checkout DIR] [--keep] [--json FILE]
 * TanStack/form at 57a855b42 needs Node 24 and pnpm 11 (--path-prepend) and, where the registry's
 * metadata lacks the "time" field its trust policy checks, --pnpm-setting trustPolicy=off.
 * trpc/trpc at 340811ba5 (tsdown; .mjs + .cjs; 15 subpath entries in @trpc/server) needs Node 24 and
 * pnpm 10.33.1: --package packages/server --workspace packages/server,packages/client, then
 * --package packages/client --build-first packages/server (the client's build needs the server's).
 * Every entry is compared with `import()` of its own built ESM (subpath exports included); a case
 * names an export of a subpath entry as 'sub/path#name'.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs } from './lib/cli-args.mjs';
import { sameContentAsJsonBytes } from './lib/rep-json.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const KILN = join(ROOT, 'packages/cli/bin/kiln.js');
const RUNTIME = join(ROOT, 'packages/runtime/dist/index.js');
const HELP = `Usage: node tools/trial-representation.mjs --repo CHECKOUT [options]
  --repo DIR            a git repository (work tree or bare mirror) of the monorepo
  --package DIR         the package to trial, relative to the checkout (default packages/form-core)
  --workspace LIST      comma-separated workspace packages to keep (default: --package alone)
  --path-prepend DIR    put DIR first on PATH for the checkout's commands (install, build) only
  --pnpm-setting K=V    a top-level pnpm-workspace.yaml setting (repeatable), e.g. trustPolicy=off
  --work DIR            work directory (default: a new temporary one; a clone there is reused)
  --checkout DIR        where the clone goes (default WORK/repo; reused when present)
  --build-first LIST    comma-separated workspace packages to build (own \`build\` script) before --package,
                        in order — the workspace dependencies its build needs (e.g. packages/server)
  --keep                keep the work directory (always kept when --work is given)
  --json FILE           write every figure as JSON
`;
const { args } = cliArgs(
  {
    repo: { type: 'string' },
    package: { type: 'string', default: 'packages/form-core' },
    workspace: { type: 'string' },
    'path-prepend': { type: 'string' },
    'pnpm-setting': { type: 'string', multiple: true, default: [] },
    work: { type: 'string' },
    checkout: { type: 'string' },
    'build-first': { type: 'string' },
    keep: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
  HELP,
);
if (!args.repo) {
  process.stderr.write(`--repo is required\n${HELP}`);
  process.exit(2);
}

const started = Date.now();
const say = (m) => process.stderr.write(`[+${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);
const work = args.work ? resolve(args.work) : mkdtempSync(join(tmpdir(), 'kiln-trial-rep-'));
mkdirSync(work, { recursive: true });
const checkout = args.checkout ? resolve(args.checkout) : join(work, 'repo');
const trialEnv = { ...process.env, PATH: args['path-prepend'] ? `${resolve(args['path-prepend'])}:${process.env.PATH}` : process.env.PATH, CI: 'true', NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NO_COLOR: '1', FORCE_COLOR: '0' };
const kilnEnv = { ...process.env, NO_COLOR: '1', KILN_STORE: join(work, 'kiln-store') };

/** Runs a command; throws with its output's tail on failure unless allowFailure. */
function run(cmd, argv, { cwd, env = trialEnv, allowFailure = false } = {}) {
  const t = performance.now();
  const r = spawnSync(cmd, argv, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 30 * 60_000 });
  const ms = performance.now() - t;
  if ((r.status !== 0 || r.error) && !allowFailure) throw new Error(`${cmd} ${argv.join(' ')} (in ${cwd}) failed: ${r.error ?? `exit ${r.status}`}\n${(r.stdout + r.stderr).slice(-3000)}`);
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '', ms };
}

// ---------------------------------------------------------------------------------------------
// 1. Clone, narrow, install

if (!existsSync(join(checkout, 'package.json'))) {
  say(`cloning ${args.repo}`);
  run('git', ['clone', '--quiet', resolve(args.repo), checkout], { cwd: work });
  const ws = join(checkout, 'pnpm-workspace.yaml');
  if (existsSync(ws)) {
    const keep = (args.workspace ?? args.package).split(',').map((s) => s.trim()).filter(Boolean);
    const lines = readFileSync(ws, 'utf8').split('\n');
    const i = lines.findIndex((l) => /^packages:\s*$/.test(l));
    if (i >= 0) {
      let j = i + 1;
      while (j < lines.length && /^\s+-|^\s*$/.test(lines[j])) j++;
      lines.splice(i + 1, j - i - 1, ...keep.map((k) => `  - ${k}`), '');
    }
    let y = lines.join('\n');
    for (const kv of args['pnpm-setting']) {
      const [key, ...rest] = kv.split('=');
      const re = new RegExp(`^${key}:.*$`, 'm');
      y = re.test(y) ? y.replace(re, `${key}: ${rest.join('=')}`) : `${y.replace(/\n*$/, '\n')}${key}: ${rest.join('=')}\n`;
    }
    writeFileSync(ws, y);
  }
}
const commit = run('git', ['rev-parse', 'HEAD'], { cwd: checkout }).out.trim();
const rootManifest = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8'));
const pm = String(rootManifest.packageManager ?? '').startsWith('pnpm') || existsSync(join(checkout, 'pnpm-lock.yaml')) ? 'pnpm' : 'npm';
const nodeVersion = run('node', ['-v'], { cwd: checkout }).out.trim();
const pmVersion = run(pm, ['-v'], { cwd: checkout }).out.trim().split('\n').pop();
say(`checkout ${commit.slice(0, 9)}; trial commands under node ${nodeVersion}, ${pm} ${pmVersion}; kiln under node ${process.version}`);
const pkgDir = join(checkout, args.package);
let install = { ms: 0, skipped: true };
if (!existsSync(join(pkgDir, 'node_modules'))) {
  say(`${pm} install`);
  const r = run(pm, pm === 'pnpm' ? ['install', '--no-frozen-lockfile', '--config.confirmModulesPurge=false'] : ['install', '--no-audit', '--no-fund'], { cwd: checkout });
  install = { ms: r.ms, skipped: false };
}

// ---------------------------------------------------------------------------------------------
// 2. The package's own build

const buildFirst = [];
for (const dep of (args['build-first'] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
  say(`${dep}: ${pm} run build (a workspace dependency of ${args.package})`);
  const ms = Math.round(run(pm, ['run', 'build'], { cwd: join(checkout, dep) }).ms);
  // Its representation too (its build emptied dist/): the cases reach it as a peer (see peerOf below).
  const rep = run(process.execPath, [KILN, 'represent', join(checkout, dep)], { cwd: work, env: kilnEnv, allowFailure: true });
  buildFirst.push({ package: dep, ms, represent: rep.code === 0 ? (rep.out + rep.err).trim() : `failed: ${(rep.out + rep.err).trim().slice(0, 300)}` });
}
const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
say(`${manifest.name}: ${pm} run build (${manifest.scripts?.build ?? 'no build script'})`);
const build = run(pm, ['run', 'build'], { cwd: pkgDir });

// ---------------------------------------------------------------------------------------------
// 3. kiln represent / inspect, size beside JSON

say('kiln represent');
const represent = run(process.execPath, [KILN, 'represent', pkgDir, '--format', 'json'], { cwd: work, env: kilnEnv });
const produced = JSON.parse(represent.out);
const inspected = JSON.parse(run(process.execPath, [KILN, 'inspect', 'representation', pkgDir, '--format', 'json'], { cwd: work, env: kilnEnv }).out);
const { readRepresentation, representationPath } = await import(pathToFileURL(RUNTIME).href);
const file = representationPath(pkgDir, manifest);
const size = statSync(file).size;
const decoded = readRepresentation(readFileSync(file));
const sameAsJson = sameContentAsJsonBytes(decoded);
const reasons = {};
for (const e of inspected.entries) if (!e.covered) reasons[e.reason] = (reasons[e.reason] ?? 0) + 1;

// ---------------------------------------------------------------------------------------------
// 4. Parity in a fresh process (the package's built entry vs the representation)

/** Calls per package: name → a function of `g(exportName)` (the export's value on either side). */
const CASES = {
  '@tanstack/form-core': `{
    'new FormApi → getFieldValue/setFieldValue': (g) => { const f = new (g('FormApi'))({ defaultValues: { a: 1, b: { c: [1, 2] } } }); f.mount(); f.setFieldValue('b.c[1]', 5); return [f.getFieldValue('a'), f.getFieldValue('b.c'), f.state.values, f.state.isDirty, f.state.canSubmit]; },
    'FormApi form validator (onChange)': async (g) => { const f = new (g('FormApi'))({ defaultValues: { a: 1 }, validators: { onChange: ({ value }) => (value.a > 2 ? 'too big' : undefined) } }); f.mount(); f.setFieldValue('a', 3); await f.validate('change'); return [f.state.errors, f.state.isValid, f.state.errorMap]; },
    'FormApi + FieldApi field validator': (g) => { const f = new (g('FormApi'))({ defaultValues: { name: '' } }); f.mount(); const fld = new (g('FieldApi'))({ form: f, name: 'name', validators: { onChange: ({ value }) => (value.length < 3 ? 'short' : undefined) } }); fld.mount(); fld.handleChange('ab'); return [fld.state.value, fld.state.meta.errors, f.state.values]; },
    'FormApi handleSubmit': async (g) => { let got; const f = new (g('FormApi'))({ defaultValues: { x: 'y' }, onSubmit: ({ value }) => { got = value; } }); f.mount(); await f.handleSubmit(); return [got, f.state.submissionAttempts, f.state.isSubmitted]; },
    mergeForm: (g) => g('mergeForm')({ state: { values: { a: 1, n: { x: 1 } } } }, { values: { b: 2, n: { y: 2 } } }),
    formOptions: (g) => g('formOptions')({ defaultValues: { a: 1 } }),
    functionalUpdate: (g) => [g('functionalUpdate')((x) => x + 1, 1), g('functionalUpdate')(5, 1)],
    getBy: (g) => [g('getBy')({ a: { b: [1, { c: 3 }] } }, 'a.b[1].c'), g('getBy')({}, 'x.y')],
    setBy: (g) => [g('setBy')({ a: { b: [1, 2] } }, 'a.b[1]', 5), g('setBy')({}, 'x[0].y', (p) => p ?? 'new')],
    deleteBy: (g) => [g('deleteBy')({ a: { b: [1, 2, 3] } }, 'a.b[1]'), g('deleteBy')({ a: 1, b: 2 }, 'a')],
    isNonEmptyArray: (g) => [g('isNonEmptyArray')([]), g('isNonEmptyArray')([1])],
    makePathArray: (g) => [g('makePathArray')('a.b[0].c'), g('makePathArray')(['a', 1])],
    concatenatePaths: (g) => [g('concatenatePaths')('a', 'b'), g('concatenatePaths')('a', '[0]'), g('concatenatePaths')('', 'x')],
    deepCopy: (g) => { const o = { a: [1, { b: new Date(0) }], m: new Map([[1, 2]]) }; const r = g('deepCopy')(o); return [r, r !== o, r.a !== o.a]; },
    mutateMergeDeep: (g) => g('mutateMergeDeep')({ a: { b: 1 }, l: [1] }, { a: { c: 2 }, l: [2] }),
    mergeOpts: (g) => g('mergeOpts')({ a: 1 }, { b: 2 }),
    isGlobalFormValidationError: (g) => [g('isGlobalFormValidationError')({ fields: {} }), g('isGlobalFormValidationError')('x')],
    isStandardSchemaValidator: (g) => [g('isStandardSchemaValidator')({ '~standard': { validate() {} } }), g('isStandardSchemaValidator')({})],
    'standardSchemaValidators.validate': (g) => g('standardSchemaValidators').validate({ value: 1, validationSource: 'form' }, { '~standard': { version: 1, vendor: 'x', validate: (v) => (v === 1 ? { issues: [{ message: 'no ones', path: ['a'] }] } : { value: v }) } }),
    determineFormLevelErrorSourceAndValue: (g) => g('determineFormLevelErrorSourceAndValue')({ newFormValidatorError: 'e', isPreviousErrorFromFormValidator: false, previousErrorValue: undefined }),
    'getSyncValidatorArray (throws without validationLogic)': (g) => g('getSyncValidatorArray')('change', { validators: { onChange: () => 'x' } }),
    'revalidateLogic() kind': (g) => typeof g('revalidateLogic')(),
    'uuid shape': (g) => /^[0-9a-f-]{36}$/.test(g('uuid')()),
    'FormApi identity across loads': (g) => g('FormApi') === g('FormApi'),
  }`,
  // tRPC (packages/server, packages/client of trpc/trpc): a router built and called in-process, errors,
  // observables, the fetch adapter on a WHATWG Request, and a client over a custom link / fake fetch.
  // 'sub#name' is the export of the entry './sub' (e.g. 'http#getHTTPStatusCodeFromError').
  '@trpc/server': `{
    'initTRPC.create → router → createCallerFactory': async (g) => { const t = g('initTRPC').create(); const r = t.router({ hello: t.procedure.query(() => 'hi'), nested: t.router({ echo: t.procedure.query(({ input }) => input) }) }); const caller = t.createCallerFactory(r)({}); return [await caller.hello(), await caller.nested.echo({ a: [1, 2] })]; },
    'router.createCaller (deprecated form)': async (g) => { const t = g('initTRPC').create(); const r = t.router({ hello: t.procedure.query(() => 'hi') }); return r.createCaller({}).hello(); },
    'plain-function input validator: ok and BAD_REQUEST': async (g) => { const t = g('initTRPC').create(); const num = (v) => { if (typeof v !== 'number') throw new Error('not a number'); return v; }; const r = t.router({ inc: t.procedure.input(num).query(({ input }) => input + 1) }); const caller = t.createCallerFactory(r)({}); const ok = await caller.inc(41); let bad; try { await caller.inc('x'); } catch (e) { bad = [e.name, e.code, e.message, e instanceof g('TRPCError'), e.cause?.message]; } return [ok, bad]; },
    'middleware + context + mutation': async (g) => { const t = g('initTRPC').context().create(); const authed = t.procedure.use(({ ctx, next }) => next({ ctx: { ...ctx, user: 'u-' + ctx.id } })); const r = t.router({ who: authed.mutation(({ ctx }) => ctx.user) }); return t.createCallerFactory(r)({ id: 7 }).who(); },
    'procedure throws TRPCError (code, instanceof)': async (g) => { const t = g('initTRPC').create(); const T = g('TRPCError'); const r = t.router({ nope: t.procedure.query(() => { throw new T({ code: 'NOT_FOUND', message: 'no such thing' }); }) }); try { await t.createCallerFactory(r)({}).nope(); return 'resolved'; } catch (e) { return [e.name, e.code, e.message, e instanceof T, e instanceof Error]; } },
    'new TRPCError({ code: NOT_FOUND })': (g) => { const T = g('TRPCError'); const e = new T({ code: 'NOT_FOUND' }); return [e.code, e.message, e.name, e instanceof T, e instanceof Error, e.constructor.name, Object.keys(e)]; },
    'getTRPCErrorFromUnknown': (g) => { const e = g('getTRPCErrorFromUnknown')(new Error('boom')); return [e.code, e.message, e instanceof g('TRPCError')]; },
    'http#getHTTPStatusCodeFromError (TRPCError of the main entry)': (g) => [g('http#getHTTPStatusCodeFromError')(new (g('TRPCError'))({ code: 'NOT_FOUND' })), g('http#getHTTPStatusCodeFromError')(new (g('TRPCError'))({ code: 'UNAUTHORIZED' }))],
    'http#getHTTPStatusCode': (g) => [g('http#getHTTPStatusCode')([{ error: { code: -32004 } }]), g('http#getHTTPStatusCode')([])],
    'TRPCError identity across entries (. vs unstable-core-do-not-import)': (g) => g('TRPCError') === g('unstable-core-do-not-import#TRPCError'),
    'initTRPC.constructor.name': (g) => [g('initTRPC').constructor.name, typeof g('initTRPC').create],
    'observable#observable + map + observableToPromise': async (g) => { const o = g('observable#observable')((obs) => { obs.next(1); obs.next(2); obs.complete(); }); const seen = []; o.pipe(g('observable#map')((x) => x * 10)).subscribe({ next: (v) => seen.push(v) }); return [seen, await g('observable#observableToPromise')(g('observable#observable')((obs) => { obs.next('first'); obs.complete(); }))]; },
    'tracked / isTrackedEnvelope': (g) => { const e = g('tracked')('id-1', { x: 1 }); return [g('isTrackedEnvelope')(e), g('isTrackedEnvelope')([1, 2]), e.slice(0, 2), typeof e[2]]; }, // e[2]: a module's own Symbol, one per module instance
    'adapters/fetch#fetchRequestHandler (GET query, error shape)': async (g) => { const t = g('initTRPC').create({ isDev: false }); const T = g('TRPCError'); const r = t.router({ hello: t.procedure.input((v) => v).query(({ input }) => ({ greeting: 'hi ' + input.name })), nope: t.procedure.query(() => { throw new T({ code: 'FORBIDDEN', message: 'no' }); }) }); const h = g('adapters/fetch#fetchRequestHandler'); const ask = async (path) => { const res = await h({ endpoint: '/trpc', router: r, req: new Request('http://localhost/trpc/' + path), createContext: () => ({}) }); return [res.status, await res.json()]; }; return [await ask('hello?input=' + encodeURIComponent(JSON.stringify({ name: 'kiln' }))), await ask('nope'), await ask('missing')]; },
    'unstable-core-do-not-import#TRPC_ERROR_CODES_BY_KEY.NOT_FOUND': (g) => g('unstable-core-do-not-import#TRPC_ERROR_CODES_BY_KEY').NOT_FOUND,
  }`,
  '@trpc/client': `{
    'createTRPCClient over a custom link (query, mutation)': async (g) => { const seen = []; const link = () => ({ op }) => ({ subscribe(o) { seen.push([op.type, op.path, op.input]); o.next({ result: { type: 'data', data: { path: op.path, input: op.input } } }); o.complete(); return { unsubscribe() {} }; }, pipe(...ops) { return ops.reduce((a, f) => f(a), this); } }); const c = g('createTRPCClient')({ links: [link] }); return [await c.greet.hello.query({ a: 1 }), await c.save.mutate('x'), seen]; },
    'custom link erroring → TRPCClientError': async (g) => { const link = () => () => ({ subscribe(o) { o.error(g('TRPCClientError').from(new Error('link down'))); return { unsubscribe() {} }; }, pipe(...ops) { return ops.reduce((a, f) => f(a), this); } }); const c = g('createTRPCClient')({ links: [link] }); try { await c.x.query(); return 'resolved'; } catch (e) { return [e.name, e.message, e instanceof g('TRPCClientError'), g('isTRPCClientError')(e)]; } },
    'httpLink with a fake fetch': async (g) => { const calls = []; const fetch = async (url, init) => { calls.push([String(url), init?.method]); return new Response(JSON.stringify({ result: { data: 'hi from ' + new URL(url).pathname } }), { headers: { 'content-type': 'application/json' } }); }; const c = g('createTRPCClient')({ links: [g('httpLink')({ url: 'http://localhost/trpc', fetch })] }); return [await c.hello.query({ n: 1 }), calls]; },
    'httpBatchLink with a fake fetch (two queries, one request)': async (g) => { const calls = []; const fetch = async (url) => { calls.push(String(url)); return new Response(JSON.stringify([{ result: { data: 1 } }, { result: { data: 2 } }]), { headers: { 'content-type': 'application/json' } }); }; const c = g('createTRPCClient')({ links: [g('httpBatchLink')({ url: 'http://localhost/trpc', fetch })] }); return [await Promise.all([c.a.query(), c.b.query()]), calls]; },
    'server error over httpLink → TRPCClientError with data': async (g) => { const fetch = async () => new Response(JSON.stringify({ error: { message: 'nope', code: -32004, data: { code: 'NOT_FOUND', httpStatus: 404 } } }), { status: 404, headers: { 'content-type': 'application/json' } }); const c = g('createTRPCClient')({ links: [g('httpLink')({ url: 'http://localhost/trpc', fetch })] }); try { await c.x.query(); return 'resolved'; } catch (e) { return [e.name, e.message, e.data, e.shape, e instanceof g('TRPCClientError')]; } },
    'splitLink routes by op type': async (g) => { const mk = (tag) => () => ({ op }) => ({ subscribe(o) { o.next({ result: { data: tag + ':' + op.path } }); o.complete(); return { unsubscribe() {} }; }, pipe(...ops) { return ops.reduce((a, f) => f(a), this); } }); const c = g('createTRPCClient')({ links: [g('splitLink')({ condition: (op) => op.type === 'query', true: mk('Q'), false: mk('M') })] }); return [await c.a.query(), await c.b.mutate()]; },
    'TRPCClientError.from(Error)': (g) => { const e = g('TRPCClientError').from(new Error('x')); return [e.name, e.message, e instanceof Error, e.constructor.name]; },
    'getFetch / isFormData / isNonJsonSerializable': (g) => [typeof g('getFetch')(), g('isFormData')(new FormData()), g('isNonJsonSerializable')(new Blob([]))],
    // End to end, both packages on each side (peer: @trpc/server through its kiln.rep, or import()): a
    // real HTTP server (standalone adapter) and a WebSocket server (ws adapter, the 'ws' package), zod
    // input validation, the superjson transformer (Date, Set), batching, jsonl streaming, ws
    // subscriptions of tracked() events. (SSE subscriptions need an EventSource Node has not.)
    'end to end: standalone HTTP + ws servers, batch/stream/ws links, zod, superjson': async (g, peer, dep) => {
      const s = (q) => peer('@trpc/server', q);
      const { z } = dep('zod'); const superjson = dep('superjson').default ?? dep('superjson'); const { WebSocketServer, WebSocket } = dep('ws');
      const t = s('initTRPC').create({ transformer: superjson }); const T = s('TRPCError');
      const router = t.router({
        hello: t.procedure.input((v) => v).query(({ input }) => 'hello ' + (input?.name ?? 'world')),
        add: t.procedure.input((v) => { if (typeof v?.a !== 'number') throw new Error('a must be a number'); return v; }).mutation(({ input }) => input.a + input.b),
        typed: t.procedure.input(z.object({ when: z.date(), tags: z.set(z.string()) })).query(({ input }) => ({ year: input.when.getUTCFullYear(), tags: [...input.tags].sort(), back: input.when })),
        boom: t.procedure.query(() => { throw new T({ code: 'UNAUTHORIZED', message: 'who are you' }); }),
        stream: t.procedure.query(async function* () { for (let i = 0; i < 3; i++) yield i; }),
        ticks: t.procedure.subscription(async function* () { for (let i = 0; i < 3; i++) { await new Promise((r) => setTimeout(r, 5)); yield s('tracked')(String(i), { n: i }); } }),
      });
      const server = s('adapters/standalone#createHTTPServer')({ router, createContext: () => ({}) });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const url = 'http://127.0.0.1:' + server.address().port;
      const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
      await new Promise((r) => wss.on('listening', r));
      const handler = s('adapters/ws#applyWSSHandler')({ wss, router, createContext: () => ({}) });
      const ws = g('createWSClient')({ url: 'ws://127.0.0.1:' + wss.address().port, WebSocket });
      const out = {};
      try {
        const batch = g('createTRPCClient')({ links: [g('httpBatchLink')({ url, transformer: superjson })] });
        out.batch = await Promise.all([batch.hello.query({ name: 'kiln' }), batch.hello.query(), batch.add.mutate({ a: 1, b: 2 })]);
        out.typed = await batch.typed.query({ when: new Date(Date.UTC(2020, 1, 2)), tags: new Set(['b', 'a']) });
        try { await batch.add.mutate({ a: 'x' }); } catch (e) { out.badInput = [e.name, e.message, e.data?.code, e.data?.httpStatus, e instanceof g('TRPCClientError')]; }
        try { await batch.typed.query({ when: 'nope', tags: new Set() }); } catch (e) { out.zodBad = [e.name, e.data?.code, e.data?.httpStatus, JSON.parse(e.message)[0]?.path]; }
        try { await batch.boom.query(); } catch (e) { out.boom = [e.name, e.message, e.data?.code, e.data?.httpStatus]; }
        const streaming = g('createTRPCClient')({ links: [g('httpBatchStreamLink')({ url, transformer: superjson })] });
        out.stream = []; for await (const v of await streaming.stream.query()) out.stream.push(v);
        const wc = g('createTRPCClient')({ links: [g('wsLink')({ client: ws, transformer: superjson })] });
        out.ws = [await wc.hello.query({ name: 'ws' }), await wc.add.mutate({ a: 2, b: 3 })];
        out.wsSub = await new Promise((resolve, reject) => { const seen = []; const u = wc.ticks.subscribe(undefined, { onData: (d) => { seen.push(d); if (seen.length === 3) { u.unsubscribe(); resolve(seen); } }, onError: reject }); setTimeout(() => reject(new Error('ws subscription timeout')), 5000); });
        return out;
      } finally { await ws.close(); handler.broadcastReconnectNotification(); wss.close(); server.close(); server.closeAllConnections?.(); }
    },
  }`,
};
/** The ESM file `import()` of a subpath loads (conditions import → module → default, then module/main for `.`). */
const esmOf = (man, dir, sub) => {
  const exp = man.exports;
  let v = exp && typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.')) ? exp[sub] : sub === '.' ? exp : undefined;
  for (let i = 0; i < 4 && v && typeof v === 'object'; i++) v = v.import ?? v.module ?? v.node ?? v.default;
  const rel = typeof v === 'string' ? v : sub === '.' ? man.module ?? man.main : undefined;
  return rel ? pathToFileURL(join(dir, rel)).href : undefined;
};
/** Subpath → file URL of its ESM build, for every entry the representation at `rep` indexes. */
const entryFilesOf = (man, dir, rep) => Object.fromEntries(rep.entries.map((e) => e.surface.slice(0, e.surface.indexOf('#'))).filter((v, i, a) => a.indexOf(v) === i).map((id) => {
  const sub = id === man.name ? '.' : `.${id.slice(man.name.length)}`;
  return [sub, esmOf(man, dir, sub)];
}));
const entryFiles = entryFilesOf(manifest, pkgDir, decoded);
// The --build-first packages, represented after their build: a case reaches their exports with
// peer(name, 'sub#export') — through their kiln.rep on the representation's side, import() on the other.
const peers = buildFirst.flatMap(({ package: dep }) => {
  const dir = join(checkout, dep);
  const man = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const rep = representationPath(dir, man);
  return existsSync(rep) ? [{ name: man.name, dir, rep, entries: entryFilesOf(man, dir, readRepresentation(readFileSync(rep))) }] : [];
});
const parityScript = join(work, 'parity.mjs');
writeFileSync(
  parityScript,
  `import { createConsumer, openRepresentation } from ${JSON.stringify(pathToFileURL(RUNTIME).href)};
import { isDeepStrictEqual } from 'node:util';
import { createRequire } from 'node:module';
const [file, pkgDir, entriesJson, name, peersJson] = process.argv.slice(2);
const reader = openRepresentation(file);
const c = createConsumer(reader, { requireFrom: pkgDir });
const entryFiles = JSON.parse(entriesJson); // subpath → file URL of its ESM build
const mods = {};
for (const [sub, url] of Object.entries(entryFiles)) mods[sub] = url ? await import(url) : {};
const m = mods['.'] ?? {};
// 'name' (the main entry) or 'sub/path#name' (the entry './sub/path')
const split = (q) => (q.includes('#') ? ['./' + q.slice(0, q.indexOf('#')), q.slice(q.indexOf('#') + 1)] : ['.', q]);
const jsOf = (q) => { const [sub, n] = split(q); return mods[sub]?.[n]; };
const repOf = (q) => { const [sub, n] = split(q); return c.load(name + (sub === '.' ? '' : sub.slice(1)) + '#' + n); };
const peerSides = { rep: {}, js: {} };
const dirs = [pkgDir];
for (const p of JSON.parse(peersJson ?? '[]')) {
  dirs.push(p.dir);
  const pc = createConsumer(openRepresentation(p.rep), { requireFrom: p.dir });
  const pm = {};
  for (const [sub, url] of Object.entries(p.entries)) pm[sub] = url ? await import(url) : {};
  peerSides.rep[p.name] = (q) => { const [sub, n] = split(q); return pc.load(p.name + (sub === '.' ? '' : sub.slice(1)) + '#' + n); };
  peerSides.js[p.name] = (q) => { const [sub, n] = split(q); return pm[sub]?.[n]; };
}
/** A package the cases use as input on both sides (zod, superjson, ws): required from the package or a peer. */
const dep = (spec) => { for (const d of dirs) { try { return createRequire(d + '/package.json')(spec); } catch {} } throw new Error('no ' + spec + ' from ' + dirs.join(', ')); };
const shape = (v, d = 0) => {
  if (typeof v === 'function') return 'function ' + v.name + '/' + v.length + (/^class\\b/.test(Function.prototype.toString.call(v)) ? '/class' : '') + (d < 1 ? '[' + Object.getOwnPropertyNames(v.prototype ?? {}).sort().join(',') + ']' : '');
  if (v === null || typeof v !== 'object') return typeof v + ':' + String(v);
  return (Array.isArray(v) ? 'array' : Object.getPrototypeOf(v)?.constructor?.name) + '{' + Object.keys(v).sort().map((k) => k + ':' + shape(v[k], d + 1)).join(',') + '}';
};
const values = [];
for (const e of reader.entries()) {
  if (!e.coverage.covered) continue;
  const id = e.surface.slice(0, e.surface.indexOf('#'));
  const n = e.surface.slice(e.surface.indexOf('#') + 1);
  const sub = id === name ? '.' : '.' + id.slice(name.length);
  let rep;
  try { rep = shape(c.load(e.surface)); } catch (x) { rep = 'REFUSED ' + x.message; }
  const js = shape(mods[sub]?.[n]);
  values.push({ export: e.surface.slice(name.length), same: rep === js, ...(rep === js ? { shape: rep.slice(0, 120) } : { rep, js }) });
}
const cases = ${CASES[manifest.name] ?? '{}'};
const calls = [];
const settle = async (f) => { try { return { value: await f() }; } catch (e) { return { threw: e?.name + ': ' + e?.message }; } };
for (const [label, f] of Object.entries(cases)) {
  const rep = await settle(() => f(repOf, (pkg, q) => peerSides.rep[pkg](q), dep));
  const js = await settle(() => f(jsOf, (pkg, q) => peerSides.js[pkg](q), dep));
  calls.push({ case: label, same: isDeepStrictEqual(rep, js), ...(isDeepStrictEqual(rep, js) ? { outcome: JSON.stringify(rep, (k, v) => (v instanceof Map ? [...v] : v))?.slice(0, 2000) } : { rep: String(JSON.stringify(rep)).slice(0, 300), js: String(JSON.stringify(js)).slice(0, 300) }) });
}
process.stdout.write(JSON.stringify({ values, calls }));
process.exit(0); // a form's timers (throttles, devtools reconnect) would keep the process alive
`,
);
say('parity');
const parity = JSON.parse(run(process.execPath, [parityScript, file, pkgDir, JSON.stringify(entryFiles), manifest.name, JSON.stringify(peers)], { cwd: work, env: kilnEnv }).out);

// ---------------------------------------------------------------------------------------------
// 5. kiln call through the CLI

const CLI_CALLS = {
  '@tanstack/form-core': [
    ['mergeForm', [{ state: { values: { a: 1 } } }, { values: { b: 2 } }]],
    ['getBy', [{ a: { b: [1, 2] } }, 'a.b[1]']],
    ['formOptions', [{ defaultValues: { a: 1 } }]],
    ['standardSchemaValidators', []],
    ['FormApi', [{ defaultValues: { a: 1 } }]],
  ],
  '@trpc/server': [
    ['http#getHTTPStatusCode', [[{ error: { code: -32004 } }]]],
    ['unstable-core-do-not-import#getStatusCodeFromKey', ['NOT_FOUND']],
    ['TRPCError', [{ code: 'NOT_FOUND', message: 'nope' }]],
    ['initTRPC', []],
    ['observable#isObservable', [{}]],
  ],
  '@trpc/client': [
    ['TRPCClientError', ['boom']],
    ['isTRPCClientError', [{}]],
    ['links/httpLink#httpLink', [{ url: 'http://localhost/trpc' }]],
  ],
};
const cliCalls = (CLI_CALLS[manifest.name] ?? []).map(([n, a]) => {
  const target = n.includes('#') ? `${manifest.name}/${n}` : `${manifest.name}#${n}`; // 'sub#name': the entry './sub'
  const r = run(process.execPath, [KILN, 'call', target, '--args', JSON.stringify(a), '--package', pkgDir, '--format', 'json'], { cwd: work, env: kilnEnv, allowFailure: true });
  let out;
  try {
    out = JSON.parse(r.out);
  } catch {
    out = { raw: (r.out + r.err).trim().slice(0, 300) };
  }
  return { export: n, args: a, code: r.code, ms: Math.round(r.ms), ...(out.notJson ? { notJson: out.notJson } : {}), result: out.threw ? `threw ${out.threw.name}: ${out.threw.message}` : out.raw ?? JSON.stringify(out.result)?.slice(0, 100) };
});

// ---------------------------------------------------------------------------------------------
// 6. Summary

const summary = {
  repo: args.repo,
  commit,
  package: manifest.name,
  version: manifest.version,
  node: { trial: nodeVersion, kiln: process.version },
  packageManager: `${pm} ${pmVersion}`,
  installMs: Math.round(install.ms),
  buildMs: Math.round(build.ms),
  buildFirst,
  buildScript: manifest.scripts?.build,
  representation: { file: relative(pkgDir, file), produceMs: Math.round(represent.ms), bytes: size, sameAsJsonBytes: sameAsJson, ratio: size / sameAsJson, entries: inspected.entries.length, covered: inspected.entries.filter((e) => e.covered).length, uncovered: reasons, payloads: produced.payloads, diagnostics: produced.diagnostics, missing: inspected.missing },
  parity,
  cliCalls,
};
const ok = (b) => (b ? 'same' : '**DIFF**');
const lines = [
  `## kiln.rep trial: ${manifest.name}@${manifest.version} (${args.package} of ${commit.slice(0, 9)})`,
  '',
  `Built by its own \`${summary.buildScript}\` (${pm} ${pmVersion}, node ${nodeVersion}) in ${(build.ms / 1000).toFixed(1)} s; kiln ran on node ${process.version}.`,
  '',
  '| figure | value |',
  '| --- | --- |',
  `| entries | ${summary.representation.entries} |`,
  `| covered | ${summary.representation.covered} |`,
  `| uncovered | ${Object.entries(reasons).map(([r, n]) => `${n} ${r}`).join(', ') || 'none'} |`,
  `| payloads | ${produced.payloads} |`,
  `| kiln.rep / same content as JSON | ${size} / ${sameAsJson} B = ${(size / sameAsJson).toFixed(3)}× |`,
  `| \`kiln represent\` wall time | ${Math.round(represent.ms)} ms |`,
  `| manifest identities missing from the index | ${Array.isArray(inspected.missing) ? inspected.missing.length || 'none' : inspected.missing} |`,
  '',
  `### Covered exports: value kind/shape, representation vs import() — ${parity.values.filter((v) => v.same).length}/${parity.values.length} same`,
  '',
  ...parity.values.filter((v) => !v.same).map((v) => `- **DIFF** ${v.export}: rep \`${v.rep}\` vs import() \`${v.js}\``),
  '',
  `### Calls (representation vs import()) — ${parity.calls.filter((v) => v.same).length}/${parity.calls.length} same`,
  '',
  '| case | parity | outcome |',
  '| --- | --- | --- |',
  ...parity.calls.map((c) => `| ${c.case} | ${ok(c.same)} | \`${(c.same ? c.outcome?.slice(0, 160) : `rep ${c.rep} / js ${c.js}`)?.replace(/\|/g, '\\|')}\` |`),
  '',
  '### `kiln call` (CLI)',
  '',
  '| export | args | exit | ms | result |',
  '| --- | --- | --- | --- | --- |',
  ...cliCalls.map((c) => `| ${c.export} | \`${JSON.stringify(c.args)}\` | ${c.code} | ${c.ms} | \`${String(c.result).replace(/\|/g, '\\|')}\`${c.notJson ? ` (notJson: ${c.notJson})` : ''} |`),
];
process.stdout.write(lines.join('\n') + '\n');
if (args.json) writeFileSync(args.json, JSON.stringify(summary, null, 2));
if (!args.keep && !args.work) rmSync(work, { recursive: true, force: true });
else say(`work directory kept: ${work}`);
