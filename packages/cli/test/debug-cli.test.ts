/**
 * Issue 14, points 1, 2 and 4 for wrapped tools: real tsc, tsdown and rollup write a library's JS and
 * maps; `kiln debug-ids dist` (the real CLI, run after the tool as a build script would) gives each JS
 * file and its map one debug ID and the map the source texts it lacked, idempotently; then the built
 * code throws in a real Node process and `kiln symbolicate` (text and JSON, one set of records) maps the
 * frame to the authored line — found independently by searching the source.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnAsync } from './lib/spawn-async.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const KILN = join(ROOT, 'packages/cli/bin/kiln.js');
const BIN = (name: string) => join(ROOT, 'node_modules/.bin', name);
const TS_SOURCE = `// A library whose function throws.
function normalize(name: string): string {
  return name.trim();
}

export function fail(name: string): never {
  const who = normalize(name);
  throw new Error(\`no \${who}\`);
}
`;
const JS_SOURCE = TS_SOURCE.replace(/: string\)/g, ')').replace('(name): never', '(name)').replace('(name): string', '(name)');

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kiln-debug-cli-'));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

const env = (store: string) => ({ ...process.env, KILN_STORE: store, NO_COLOR: '1' });
const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;

const TOOLS: { tool: string; files: Record<string, string>; run: (root: string) => [string, string[]]; source: string; sourceFile: string }[] = [
  {
    tool: 'tsc',
    files: {
      'package.json': JSON.stringify({ name: '@fx/tsc-lib', version: '1.0.0', type: 'module' }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [], sourceMap: true, rootDir: 'src', outDir: 'dist', strict: true }, include: ['src'] }),
      'src/index.ts': TS_SOURCE,
    },
    run: () => [BIN('tsc'), ['-p', 'tsconfig.json']],
    source: TS_SOURCE,
    sourceFile: 'src/index.ts',
  },
  {
    tool: 'tsdown',
    files: {
      'package.json': JSON.stringify({ name: '@fx/tsdown-lib', version: '1.0.0', type: 'module' }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', types: [], strict: true }, include: ['src'] }),
      'src/index.ts': TS_SOURCE,
    },
    run: () => [BIN('tsdown'), ['src/index.ts', '--sourcemap', '--format', 'esm', '-d', 'dist', '--no-dts']],
    source: TS_SOURCE,
    sourceFile: 'src/index.ts',
  },
  {
    tool: 'rollup',
    files: {
      'package.json': JSON.stringify({ name: '@fx/rollup-lib', version: '1.0.0', type: 'module' }),
      'src/index.js': JS_SOURCE,
    },
    run: () => [BIN('rollup'), ['src/index.js', '--file', 'dist/index.js', '--format', 'es', '--sourcemap']],
    source: JS_SOURCE,
    sourceFile: 'src/index.js',
  },
];

describe.concurrent('kiln debug-ids after a wrapped tool, then kiln symbolicate', () => {
  for (const t of TOOLS) {
    it(`${t.tool}: IDs and retained sources added, idempotent; a thrown error symbolicates to the authored line`, async () => {
      const root = project(t.files);
      const store = join(root, '.store');
      const [cmd, args] = t.run(root);
      const built = await spawnAsync(cmd, args, { cwd: root, env: env(store) });
      expect(built.code, built.out + built.err).toBe(0);
      const first = await spawnAsync(process.execPath, [KILN, 'debug-ids', 'dist', '--format', 'json'], { cwd: root, env: env(store) });
      expect(first.code, first.err).toBe(0);
      const report = JSON.parse(first.out) as { artifacts: { file: string; debugId: string; changed: boolean }[]; ingested: number; diagnostics: unknown[] };
      expect(report.diagnostics).toEqual([]);
      expect(report.artifacts.length).toBeGreaterThan(0);
      expect(report.ingested).toBe(report.artifacts.length);
      for (const a of report.artifacts) {
        const js = readFileSync(join(root, a.file), 'utf8');
        const map = JSON.parse(readFileSync(join(root, `${a.file}.map`), 'utf8'));
        expect(js, a.file).toContain(`//# debugId=${a.debugId}`);
        expect(map.debugId, a.file).toBe(a.debugId);
        // Each source's retained text is the file the tool read.
        map.sources.forEach((s: string, i: number) => {
          expect(map.sourcesContent[i], `${a.file} ${s}`).toBe(readFileSync(join(root, dirname(a.file), map.sourceRoot ?? '', s), 'utf8'));
        });
      }
      const again = await spawnAsync(process.execPath, [KILN, 'debug-ids', 'dist'], { cwd: root, env: env(store) });
      expect(again.out).toMatch(/: 0 updated, 0 source texts retained/);

      const entry = readdirSync(join(root, 'dist')).find((f) => /^index\.m?js$/.test(f))!;
      writeFileSync(join(root, 'run.mjs'), `import { fail } from './dist/${entry}';\ntry { fail(' you '); } catch (e) { console.log(e.stack); }\n`);
      const ran = await spawnAsync(process.execPath, ['run.mjs'], { cwd: root, env: env(store) });
      expect(ran.code).toBe(0);
      writeFileSync(join(root, 'stack.txt'), ran.out);
      const [json, text] = await Promise.all([
        spawnAsync(process.execPath, [KILN, 'symbolicate', 'stack.txt', '--format', 'json'], { cwd: root, env: env(store) }),
        spawnAsync(process.execPath, [KILN, 'symbolicate', 'stack.txt'], { cwd: root, env: env(store) }),
      ]);
      expect(json.code, json.err).toBe(0);
      const out = JSON.parse(json.out) as { frames: { status: string; retained?: { file: string; line: number; text: string }; identity?: string; input: { file?: string } }[] };
      const top = out.frames[0]!;
      expect(top.status).toBe('verified');
      expect(top.retained!.file).toBe(t.sourceFile);
      expect(top.retained!.line).toBe(lineOf(t.source, 'throw new Error'));
      expect(top.identity).toBe(`${t.sourceFile.endsWith('.ts') ? 'typescript' : 'javascript'}:${JSON.parse(t.files['package.json']!).name}//src/index#fail:function`);
      // The text output is a projection of the same records.
      expect(text.out).toContain(`[verified] ${t.sourceFile}:${top.retained!.line}:`);
      expect(text.err).toMatch(/frames?: .*verified/);
    }, 120_000);
  }
});
