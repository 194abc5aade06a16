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
 *          [--workspace packages/a,packages/b] [--path-prepend DIR] [--pnpm-setting key=value ...]
 *          [--work DIR] [--keep] [--json FILE]
 * TanStack/form at 57a855b42 needs Node 24 and pnpm 11 (--path-prepend) and, where the registry's
 * metadata lacks the "time" field its trust policy checks, --pnpm-setting trustPolicy=off.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliArgs } from './lib/cli-args.mjs';

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
const checkout = join(work, 'repo');
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
const sameAsJson = Buffer.byteLength(JSON.stringify({ ...decoded, payloads: decoded.payloads.map((p) => ({ ...p, sha256: createHash('sha256').update(p.code).digest('hex') })) }));
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
};
const entryFile = join(pkgDir, typeof manifest.exports?.['.']?.import === 'object' ? manifest.exports['.'].import.default : manifest.module ?? manifest.exports?.['.']?.import ?? manifest.main);
const parityScript = join(work, 'parity.mjs');
writeFileSync(
  parityScript,
  `import { createConsumer, openRepresentation } from ${JSON.stringify(pathToFileURL(RUNTIME).href)};
import { isDeepStrictEqual } from 'node:util';
const [file, pkgDir, entry, name] = process.argv.slice(2);
const reader = openRepresentation(file);
const c = createConsumer(reader, { requireFrom: pkgDir });
const m = await import(entry);
const shape = (v, d = 0) => {
  if (typeof v === 'function') return 'function/' + v.length + (/^class\\b/.test(Function.prototype.toString.call(v)) ? '/class' : '') + (d < 1 ? '[' + Object.getOwnPropertyNames(v.prototype ?? {}).sort().join(',') + ']' : '');
  if (v === null || typeof v !== 'object') return typeof v + ':' + String(v);
  return (Array.isArray(v) ? 'array' : Object.getPrototypeOf(v)?.constructor?.name) + '{' + Object.keys(v).sort().map((k) => k + ':' + shape(v[k], d + 1)).join(',') + '}';
};
const values = [];
for (const e of reader.entries()) {
  if (!e.coverage.covered) continue;
  const n = e.surface.slice(e.surface.indexOf('#') + 1);
  let rep;
  try { rep = shape(c.load(e.surface)); } catch (x) { rep = 'REFUSED ' + x.message; }
  const js = shape(m[n]);
  values.push({ export: n, same: rep === js, ...(rep === js ? { shape: rep.slice(0, 120) } : { rep, js }) });
}
const cases = ${CASES[manifest.name] ?? '{}'};
const calls = [];
const settle = async (f) => { try { return { value: await f() }; } catch (e) { return { threw: e?.name + ': ' + e?.message }; } };
for (const [label, f] of Object.entries(cases)) {
  const prefix = name + '#';
  const rep = await settle(() => f((n) => c.load(prefix + n)));
  const js = await settle(() => f((n) => m[n]));
  calls.push({ case: label, same: isDeepStrictEqual(rep, js), ...(isDeepStrictEqual(rep, js) ? { outcome: JSON.stringify(rep, (k, v) => (v instanceof Map ? [...v] : v))?.slice(0, 100) } : { rep: String(JSON.stringify(rep)).slice(0, 300), js: String(JSON.stringify(js)).slice(0, 300) }) });
}
process.stdout.write(JSON.stringify({ values, calls }));
process.exit(0); // a form's timers (throttles, devtools reconnect) would keep the process alive
`,
);
say('parity');
const parity = JSON.parse(run(process.execPath, [parityScript, file, pkgDir, pathToFileURL(entryFile).href, manifest.name], { cwd: work, env: kilnEnv }).out);

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
};
const cliCalls = (CLI_CALLS[manifest.name] ?? []).map(([n, a]) => {
  const r = run(process.execPath, [KILN, 'call', `${manifest.name}#${n}`, '--args', JSON.stringify(a), '--package', pkgDir, '--format', 'json'], { cwd: work, env: kilnEnv, allowFailure: true });
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
  ...parity.calls.map((c) => `| ${c.case} | ${ok(c.same)} | \`${(c.same ? c.outcome : `rep ${c.rep} / js ${c.js}`)?.replace(/\|/g, '\\|')}\` |`),
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
