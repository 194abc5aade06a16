/**
 * Issue 14, points 1–3 for a wrapped tool: the workspace's own build (`tsc` through nx:run-commands, keyed
 * by kiln) runs `kiln debug-ids` after the tool in the same task, so what Nx caches already carries the
 * debug IDs and the retained sources. After a comment-only edit (a cache hit: Nx restores the outputs),
 * the restored JS still carries them, and with an empty debug store the artifact is ingested from the
 * task outputs on first use and a thrown error is symbolicated as relocated to the current line.
 * Expected lines are found by searching the source text. The same task also runs `kiln represent` (issue
 * 15, point 1 for a wrapped tool): its kiln.rep is a cached output, restored by the hit as the task wrote
 * it, and `kiln call` answers through it as the built JS does.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanEnv, createWorkspace, disposeAll, exec, KILN_ROOT, type Workspace } from '../../../tools/testing/workspace.mjs';

const GREET = 'libs/base/src/greet.ts';
const KILN = join(KILN_ROOT, 'packages/cli/bin/kiln.js');

let ws: Workspace;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-debug-wrapped-'));
  ws = await createWorkspace('workspace-basic');
  await ws.edit(GREET, (s) => `${s}\nexport function fail(name: string): never {\n  const who = normalize(name);\n  throw new Error(\`no greeting for \${who}\`);\n}\n`);
  await ws.edit('libs/base/src/index.ts', (s) => `${s}export { fail } from './greet.js';\n`);
  await ws.editJson('libs/base/package.json', (p: { nx: { targets: { build: { options: { command: string } } } } }) => {
    p.nx.targets.build.options.command = 'tsc -p libs/base/tsconfig.lib.json && kiln debug-ids libs/base/dist && kiln represent libs/base';
  });
  const init = await ws.runNx(['g', '@kiln/nx:init', '--no-interactive']);
  expect(init.code, init.output).toBe(0);
  await ws.commit('kiln, a throwing function, and debug IDs after tsc');
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await rm(scratch, { recursive: true, force: true });
});

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;

it('the wrapped tool\'s cached outputs carry debug IDs and sources; after a cache hit they are ingested on first use and relocate', async () => {
  const store1 = join(scratch, 'store-1');
  const first = await ws.runNx(['run', '@fx/base:build'], { env: { KILN_STORE: store1 } });
  expect(first.statuses['@fx/base:build']).toBe('executed');
  const builtText = await ws.read(GREET);
  const js = await ws.read('libs/base/dist/greet.js');
  const id = /\/\/# debugId=([0-9a-f-]{36})/.exec(js)?.[1];
  expect(id).toBeDefined();
  expect((await ws.readJson('libs/base/dist/greet.js.map')).sourcesContent).toEqual([builtText]);
  expect(first.output).toMatch(/kiln represent: libs\/base\/dist\/kiln\.rep: \d+ exports/);
  const rep = await readFile(ws.path('libs/base/dist/kiln.rep'));

  const edited = await ws.edit(GREET, (s) => s.replace('export function fail', '// a comment\n// and another\nexport function fail'));
  await rm(ws.path('libs/base/dist'), { recursive: true });
  const hit = await ws.runNx(['run', '@fx/base:build'], { env: { KILN_STORE: store1 } });
  expect(hit.statuses['@fx/base:build']).toBe('local');
  const restored = await ws.read('libs/base/dist/greet.js');
  expect(restored).toContain(`//# debugId=${id}`);
  expect((await ws.readJson('libs/base/dist/greet.js.map')).sourcesContent).toEqual([builtText]);
  expect(await readdir(ws.path('libs/base/dist'))).toContain('greet.js.map');
  // The representation the wrapped task wrote is one of its cached outputs, and answers as the JS does.
  expect(await readFile(ws.path('libs/base/dist/kiln.rep'))).toEqual(rep);
  const called = await exec(process.execPath, [KILN, 'call', '@fx/base#greet', '--args', '["  Ada "]', '--package', 'libs/base', '--format', 'json'], { cwd: ws.root, env: cleanEnv() });
  expect(called.code, called.output).toBe(0);
  expect(JSON.parse(called.stdout)).toEqual({ surface: '@fx/base#greet', result: 'Hello, Ada!' });

  const script = join(scratch, 'run.mjs');
  await writeFile(script, `import { fail } from ${JSON.stringify(ws.path('libs/base/dist/index.js'))};\ntry { fail('you'); } catch (e) { console.log(e.stack); }\n`);
  const ran = await exec(process.execPath, [script], { cwd: ws.root, env: cleanEnv() });
  expect(ran.code).toBe(0);
  // A store that never saw this build (the hit could have come from a remote cache).
  const sym = await exec(process.execPath, [KILN, 'symbolicate', '--format', 'json', '--store', join(scratch, 'store-2')], { cwd: ws.root, env: cleanEnv(), input: ran.stdout });
  expect(sym.code, sym.output).toBe(0);
  const frame = (JSON.parse(sym.stdout) as { frames: { status: string; debugId?: string; current?: { line: number }; retained?: { line: number }; input: { file?: string } }[] }).frames.find((f) => f.input.file?.includes('greet.js'))!;
  expect(frame.debugId).toBe(id);
  expect(frame.status).toBe('relocated');
  expect(frame.current!.line).toBe(lineOf(edited, 'throw new Error'));
  expect(frame.retained!.line).toBe(lineOf(builtText, 'throw new Error'));
}, 600_000);
