/**
 * The pack executor's shape and its check, without Nx (packages/nx/test/publish.test.ts drives it through
 * real `nx` runs): schema.json and schema.d.ts agree and executors.json points at built files; options
 * normalise to absolute paths and resolved outputs; `packPackage` — real `npm pack` on a temporary
 * package — writes npm's tarball alone into its directory, and refuses (KILN_PACK_INCOMPLETE /
 * KILN_PACK_NOT_BUILT) a `files` that leaves out kiln.rep or a map, or a package whose entries are not built.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { packPackage, requiredPackFiles } from '@kiln/core';
import { encodeRepresentation, readRepresentation } from '@kiln/runtime';

/** A build's kiln.rep: unstamped (no version; the pack stamps the manifest's). */
const UNSTAMPED = encodeRepresentation({
  header: { format: 2, producer: '@kiln/core test', package: '@t/p', version: '', requirements: { node: '20.19.0', features: ['cjs-payloads'] } },
  entries: [{ surface: '@t/p#a', declaring: 'typescript:@t/p//src/index#a:variable', kind: 'variable', coverage: { covered: true, payload: 0, export: 'value' } }],
  payloads: [{ name: 'e-a.js', code: 'exports.value = 1;' }],
});

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PKG = join(REPO, 'packages/nx');

describe('schema.json, schema.d.ts and executors.json', () => {
  const schema = JSON.parse(readFileSync(join(REPO, 'executors/pack/schema.json'), 'utf8')) as { version: number; additionalProperties: boolean; properties: Record<string, { type: string; description: string }>; required?: string[] };
  it('agree on every option, and the implementation loads through require()', () => {
    const file = join(REPO, 'executors/pack/schema.d.ts');
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const iface = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'PackExecutorSchema')!;
    const fromType = Object.fromEntries(iface.members.filter(ts.isPropertySignature).map((m) => [(m.name as ts.Identifier).text, { type: m.type!.getText(sf), optional: !!m.questionToken }]));
    const fromSchema = Object.fromEntries(Object.entries(schema.properties).map(([k, p]) => [k, { type: p.type, optional: !(schema.required ?? []).includes(k) }]));
    expect(fromType).toEqual(fromSchema);
    expect(Object.keys(schema.properties).sort()).toEqual(['outputPath', 'representation']);
    for (const p of Object.values(schema.properties)) expect(p.description.length).toBeGreaterThan(40);
    expect(schema.additionalProperties).toBe(false);
    const manifest = JSON.parse(readFileSync(join(PKG, 'executors.json'), 'utf8')) as { executors: Record<string, Record<string, string>> };
    const pack = manifest.executors.pack!;
    expect(existsSync(join(PKG, pack.schema!))).toBe(true);
    expect(pack).not.toHaveProperty('hasher');
    const mod = createRequire(import.meta.url)(join(PKG, pack.implementation!)) as { default?: unknown };
    expect(typeof mod.default).toBe('function');
  });

  it('normalises options: the default directory under dist/packs, declared outputs resolved', async () => {
    const { normalizeOptions } = (await import(join(PKG, 'dist/executors/pack/lib/normalize-options.js'))) as typeof import('../lib/normalize-options.js');
    const context = (outputs?: string[]) => ({ root: '/ws', projectName: 'a', target: { executor: '@kiln/nx:pack', ...(outputs ? { outputs } : {}) }, projectsConfigurations: { version: 2, projects: { a: { root: 'libs/a' } } } }) as never;
    expect(normalizeOptions({}, context())).toEqual({ workspaceRoot: '/ws', projectRoot: '/ws/libs/a', outDir: '/ws/dist/packs/libs/a', representation: true });
    expect(normalizeOptions({ outputPath: 'out/a', representation: false }, context(['{workspaceRoot}/dist/packs/{projectRoot}']))).toEqual({
      workspaceRoot: '/ws',
      projectRoot: '/ws/libs/a',
      outDir: '/ws/out/a',
      representation: false,
      declaredOutputs: ['dist/packs/libs/a'],
    });
  });
});

describe('packPackage (real npm pack)', () => {
  let dir: string;
  const pkg = () => join(dir, 'pkg');
  const out = () => join(dir, 'out');
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(pkg(), rel)), { recursive: true });
    writeFileSync(join(pkg(), rel), text);
  };
  const manifest = (files: string[]) => write('package.json', JSON.stringify({ name: '@t/p', version: '1.2.3', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, files }));

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-pack-unit-'));
    write('dist/index.js', 'export const a = 1;\n//# debugId=00000000-0000-0000-0000-000000000000\n//# sourceMappingURL=index.js.map\n');
    write('dist/index.js.map', '{"version":3,"sources":[],"mappings":""}');
    write('dist/index.d.ts', 'export declare const a = 1;\n');
    write('dist/kiln.rep', UNSTAMPED);
    write('src/index.ts', 'export const a = 1;\n');
    write('README.md', '# p\n');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes npm\'s tarball, alone, with manifest, JS, .d.ts, map, kiln.rep and README', async () => {
    manifest(['dist']);
    mkdirSync(out(), { recursive: true });
    writeFileSync(join(out(), 't-p-0.0.1.tgz'), 'an older tarball');
    const r = await packPackage({ packageRoot: pkg(), outDir: out() });
    expect(r.diagnostics).toEqual([]);
    expect(r.success).toBe(true);
    expect(readdirSync(out())).toEqual(['t-p-1.2.3.tgz']);
    expect(r.files!.map((f) => f.path)).toEqual(['README.md', 'dist/index.d.ts', 'dist/index.js', 'dist/index.js.map', 'dist/kiln.rep', 'package.json']);
    // The tarball's kiln.rep carries the manifest's version; the build's stays as the build wrote it.
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked, { recursive: true });
    execFileSync('tar', ['-xzf', join(out(), 't-p-1.2.3.tgz'), '-C', unpacked]);
    expect(readRepresentation(readFileSync(join(unpacked, 'package/dist/kiln.rep'))).header.version).toBe('1.2.3');
    expect(Buffer.from(readFileSync(join(pkg(), 'dist/kiln.rep'))).equals(Buffer.from(UNSTAMPED))).toBe(true);
  });

  it('refuses files that leave out kiln.rep and the map; no tarball is left', async () => {
    manifest(['dist/*.js', 'dist/*.d.ts']);
    const r = await packPackage({ packageRoot: pkg(), outDir: out() });
    expect(r.success).toBe(false);
    expect(r.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['KILN_PACK_INCOMPLETE', '@t/p@1.2.3: "files": ["dist/*.js","dist/*.d.ts"] leaves dist/index.js.map (built into dist/) out of the tarball'],
      ['KILN_PACK_INCOMPLETE', '@t/p@1.2.3: "files": ["dist/*.js","dist/*.d.ts"] leaves dist/kiln.rep (the package\'s executable representation) out of the tarball'],
    ]);
    expect(existsSync(out()) ? readdirSync(out()) : []).toEqual([]);
  });

  it('without `files`, npm\'s ignore rules decide: a .gitignore `dist` line is named as such, an .npmignore as its own', async () => {
    write('package.json', JSON.stringify({ name: '@t/p', version: '1.2.3', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }));
    write('.gitignore', 'dist\n');
    try {
      const r = await packPackage({ packageRoot: pkg(), outDir: out() });
      expect(r.success).toBe(false);
      expect(r.diagnostics.map((d) => d.code)).toEqual(Array(4).fill('KILN_PACK_INCOMPLETE'));
      expect(r.diagnostics[0]!.message).toBe('@t/p@1.2.3: npm\'s ignore rules (no "files", no .npmignore: the .gitignore files of the package and the workspace apply) leaves dist/index.d.ts (exports["."]["types"]) out of the tarball');
      write('.npmignore', 'dist/kiln.rep\n');
      const n = await packPackage({ packageRoot: pkg(), outDir: out() });
      expect(n.diagnostics.map((d) => d.message)).toEqual(["@t/p@1.2.3: its .npmignore leaves dist/kiln.rep (the package's executable representation) out of the tarball"]);
    } finally {
      await rm(join(pkg(), '.gitignore'), { force: true });
      await rm(join(pkg(), '.npmignore'), { force: true });
    }
  });

  it('refuses a package whose representation or entries are not built (KILN_PACK_NOT_BUILT), unless representation: false', async () => {
    manifest(['dist']);
    await rm(join(pkg(), 'dist/kiln.rep'));
    const r = await packPackage({ packageRoot: pkg(), outDir: out() });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['KILN_PACK_NOT_BUILT']);
    expect(r.diagnostics[0]!.message).toContain('dist/kiln.rep');
    expect((await packPackage({ packageRoot: pkg(), outDir: out(), representation: false })).success).toBe(true);
    write('dist/kiln.rep', UNSTAMPED);
    expect(requiredPackFiles(pkg(), { main: './lib/x.js', bin: { p: './bin/p.js' } }, [], false).map((q) => q.path)).toEqual(['bin/p.js', 'lib/x.js']);
  });

  it('refuses an output directory that holds the package', async () => {
    const r = await packPackage({ packageRoot: pkg(), outDir: dir });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['KILN_PACK_FAILED']);
    expect(existsSync(join(pkg(), 'package.json'))).toBe(true);
  });
});
