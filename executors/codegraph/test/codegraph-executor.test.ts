/**
 * Issue 4, point 2: the `codegraph` executor run by a real `nx` process (Nx 24, no daemon) in a temp
 * workspace that installs this repository's executors.json as a plugin package: the graph is written
 * into the declared outputs and validates against the schema, a second run is a cache hit that restores
 * the same bytes, a comment edit (spans move) re-runs it, checked mode fails on a type error and writes
 * nothing while allowErrors exports with diagnostic records, and schema.json agrees with schema.d.ts.
 *
 * Needs the executor built (`npm run build`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readGraph } from '../../../packages/core/dist/graph/read.js';
import { validateGraphRecord } from '../../../packages/core/dist/graph/schema.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NX_PKG = dirname(createRequire(join(REPO, 'package.json')).resolve('nx/package.json'));
const NX_BIN = join(NX_PKG, 'dist/bin/nx.js');
const OUT = 'dist/codegraph/libs/a/codegraph.jsonl';

let ws: string;

function write(rel: string, text: string): void {
  mkdirSync(dirname(join(ws, rel)), { recursive: true });
  writeFileSync(join(ws, rel), text);
}

function project(options: Record<string, unknown>): void {
  write(
    'libs/a/project.json',
    JSON.stringify({
      name: 'a',
      root: 'libs/a',
      targets: {
        codegraph: { executor: 'kiln-local:codegraph', cache: true, inputs: ['{projectRoot}/**/*'], outputs: ['{workspaceRoot}/dist/codegraph/{projectRoot}'], options },
      },
    }),
  );
}

function nx(...args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, [NX_BIN, ...args], {
    cwd: ws,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_INTERACTIVE: 'false', CI: 'true', NX_SKIP_NX_CACHE: '', FORCE_COLOR: '0', NO_COLOR: '1', NX_CACHE_DIRECTORY: join(ws, '.nx/cache') },
  });
  // eslint-disable-next-line no-control-regex
  return { code: r.status ?? -1, out: `${r.stdout}\n${r.stderr}`.replace(/\u001b\[[0-9;]*m/g, '') };
}

const CACHE_HIT = /read the output from the cache/;
const SOURCE = '/** Doubles. */\nexport function twice(x: number): number {\n  return x * 2;\n}\nexport const four = twice(2);\n';

beforeAll(() => {
  expect(existsSync(join(REPO, 'packages/nx/dist/executors/codegraph/impl.js')), 'build first: npm run build').toBe(true);
  ws = mkdtempSync(join(tmpdir(), 'kiln-codegraph-ws-'));
  mkdirSync(join(ws, 'node_modules/kiln-local'), { recursive: true });
  symlinkSync(NX_PKG, join(ws, 'node_modules/nx'), 'dir');
  symlinkSync(join(REPO, 'packages/nx/executors.json'), join(ws, 'node_modules/kiln-local/executors.json'));
  symlinkSync(join(REPO, 'packages/nx/dist'), join(ws, 'node_modules/kiln-local/dist'), 'dir');
  write('node_modules/kiln-local/package.json', JSON.stringify({ name: 'kiln-local', version: '0.0.0', executors: './executors.json' }));
  write('package.json', JSON.stringify({ name: 'codegraph-ws', private: true }));
  write('nx.json', JSON.stringify({}));
  write('libs/a/package.json', JSON.stringify({ name: '@ws/a', type: 'module', exports: { '.': './src/index.ts' } }));
  write(
    'libs/a/tsconfig.lib.json',
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', types: [], lib: ['ES2022'] }, include: ['src/**/*.ts'] }),
  );
  write('libs/a/src/index.ts', SOURCE);
  project({ outputFile: OUT, kilnKey: 'key-1' });
});

afterAll(() => {
  if (ws) rmSync(ws, { recursive: true, force: true });
});

describe('nx run a:codegraph with the kiln executor', () => {
  it('writes a schema-valid graph into the declared outputs; a second run restores the same bytes from the cache', () => {
    const r = nx('run', 'a:codegraph');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`kiln codegraph libs/a: ${OUT} (checked,`);
    const text = readFileSync(join(ws, OUT), 'utf8');
    const doc = readGraph(text);
    expect(doc.header).toMatchObject({ kind: 'header', mode: 'checked', root: '.', package: '@ws/a' });
    for (const rec of doc.records) expect(validateGraphRecord(rec), JSON.stringify(rec)).toBeNull();
    expect(text).not.toContain(ws);
    const twice = doc.records.find((x) => (x as { kind: string; name?: string }).kind === 'declaration' && (x as { name?: string }).name === 'twice');
    expect(twice).toMatchObject({ provenance: 'compiler_checked', span: { file: 'src/index.ts', startLine: 2 } });

    rmSync(join(ws, 'dist'), { recursive: true, force: true });
    const again = nx('run', 'a:codegraph');
    expect(again.code, again.out).toBe(0);
    expect(again.out).toMatch(CACHE_HIT);
    expect(readFileSync(join(ws, OUT), 'utf8')).toBe(text);
  });

  it('a comment edit moves spans: the graph is exported again and says so', () => {
    write('libs/a/src/index.ts', `// a leading comment\n${SOURCE}`);
    const r = nx('run', 'a:codegraph');
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toMatch(CACHE_HIT);
    const twice = readGraph(readFileSync(join(ws, OUT), 'utf8')).records.find((x) => (x as { name?: string }).name === 'twice');
    expect(twice).toMatchObject({ span: { startLine: 3 } });
  });

  it('checked mode fails on a type error and writes nothing; allowErrors exports with diagnostic records', () => {
    rmSync(join(ws, 'dist'), { recursive: true, force: true });
    write('libs/a/src/index.ts', `${SOURCE}export const bad: string = twice(1);\n`);
    const r = nx('run', 'a:codegraph', '--skip-nx-cache');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/TS2322/);
    expect(r.out).toMatch(/nothing was written/);
    expect(existsSync(join(ws, OUT))).toBe(false);

    project({ outputFile: OUT, kilnKey: 'key-1', allowErrors: true });
    const t = nx('run', 'a:codegraph', '--skip-nx-cache');
    expect(t.code, t.out).toBe(0);
    const doc = readGraph(readFileSync(join(ws, OUT), 'utf8'));
    expect(doc.header).toMatchObject({ mode: 'allow-errors' });
    expect(doc.records.some((x) => (x as { kind: string; ts_code?: unknown }).kind === 'diagnostic' && String((x as { ts_code?: unknown }).ts_code).includes('2322'))).toBe(true);
  });

  it('an outputFile outside the declared outputs fails instead of being silently uncached', () => {
    project({ outputFile: 'elsewhere/graph.jsonl', allowErrors: true });
    const r = nx('run', 'a:codegraph', '--skip-nx-cache');
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/not among the target's outputs/);
    expect(existsSync(join(ws, 'elsewhere/graph.jsonl'))).toBe(false);
  });
});

describe('codegraph schema.json and schema.d.ts', () => {
  it('agree: every option described, same names, types and optionality', () => {
    const schema = JSON.parse(readFileSync(join(REPO, 'executors/codegraph/schema.json'), 'utf8')) as { properties: Record<string, { type: string; description?: string }>; required?: string[]; additionalProperties?: boolean };
    expect(schema.additionalProperties).toBe(false);
    for (const [name, p] of Object.entries(schema.properties)) expect(p.description?.length ?? 0, name).toBeGreaterThan(40);
    const file = join(REPO, 'executors/codegraph/schema.d.ts');
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const iface = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'CodegraphExecutorSchema');
    const fromType = Object.fromEntries(iface!.members.filter(ts.isPropertySignature).map((m) => [(m.name as ts.Identifier).text, { type: m.type!.getText(sf), optional: !!m.questionToken }]));
    const required = new Set(schema.required ?? []);
    const fromSchema = Object.fromEntries(Object.entries(schema.properties).map(([k, p]) => [k, { type: p.type, optional: !required.has(k) }]));
    expect(fromType).toEqual(fromSchema);
  });
});
