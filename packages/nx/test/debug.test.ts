/**
 * Issue 14, point 10 (and 3, 5, 6): debug artifacts through real Nx runs of kiln's build executor on a
 * fixture workspace, a real Node process throwing from the built package, and the real `kiln` CLI.
 * - a comment-only edit is an Nx cache hit; the error thrown by the restored JS is symbolicated as
 *   "source changed, relocated" to the right current line (and by `node --import @kiln/core/register`);
 * - `node --enable-source-maps` still maps kiln's output (to the line the artifact was built from);
 * - a body edit rebuilds: verified at the current line;
 * - a deleted source file: source changed, with the retained text;
 * - the built package copied to another absolute path: still symbolicated, through its debug ID;
 * - no map and no store entry: unavailable.
 * Expected lines are found by searching the source text, never by kiln's own mapping.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, disposeAll, exec, cleanEnv, KILN_ROOT, type Workspace } from '../../../tools/testing/workspace.mjs';

const GREET = 'libs/base/src/greet.ts';
const FAIL = `
export function fail(name: string): never {
  const who = normalize(name);
  throw new Error(\`no greeting for \${who}\`);
}
`;
const KILN = join(KILN_ROOT, 'packages/cli/bin/kiln.js');

let ws: Workspace;
let scratch: string;
let store: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-debug-e2e-'));
  store = join(scratch, 'store');
  ws = await createWorkspace('workspace-basic', { prepare: (w) => w.removePackageNxConfig() });
  await ws.edit(GREET, (s) => s + FAIL);
  await ws.edit('libs/base/src/index.ts', (s) => `${s}export { fail } from './greet.js';\n`);
  const init = await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
  expect(init.code).toBe(0);
  await ws.commit('kiln, and a function that throws');
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await rm(scratch, { recursive: true, force: true });
});

const env = () => cleanEnv({ KILN_STORE: store });
const build = () => ws.runNx(['run', '@fx/base:build'], { env: { KILN_STORE: store } });

/** Runs the built package's `fail` in a fresh Node process from `dir`; returns the printed stack. */
async function throwFrom(dir: string, nodeArgs: string[] = []): Promise<string> {
  const script = join(scratch, `run-${Date.now()}-${Math.random().toString(36).slice(2)}.mjs`);
  await writeFile(script, `import { fail } from ${JSON.stringify(join(dir, 'dist/index.js'))};\ntry { fail('you'); } catch (e) { console.log(e.stack); }\n`);
  const r = await exec(process.execPath, [...nodeArgs, script], { cwd: ws.root, env: env() });
  expect(r.code, r.output).toBe(0);
  return r.stdout;
}

async function symbolicate(stack: string, args: string[] = []): Promise<{ frames: { status: string; retained?: { file: string; line: number; text: string }; current?: { file: string; line: number; text: string }; identity?: string; input: { file?: string } }[] }> {
  const r = await exec(process.execPath, [KILN, 'symbolicate', '--format', 'json', ...args], { cwd: ws.root, env: env(), input: stack });
  expect(r.code, r.output).toBe(0);
  return JSON.parse(r.stdout);
}

const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;
/** The frame of `fail` (the first frame in the built greet module). */
const failFrame = (out: Awaited<ReturnType<typeof symbolicate>>) => out.frames.find((f) => f.input.file?.includes('greet.js'))!;

describe('debug artifacts through Nx', () => {
  it('a comment-only edit is a cache hit, and the restored artifact relocates to the current line', async () => {
    const first = await build();
    expect(first.statuses['@fx/base:build']).toBe('executed');
    const builtText = await ws.read(GREET);
    const stack1 = await throwFrom(ws.path('libs/base'));
    const v = failFrame(await symbolicate(stack1));
    expect(v.status).toBe('verified');
    expect(v.retained!.file).toBe(GREET);
    expect(v.retained!.line).toBe(lineOf(builtText, 'throw new Error'));
    expect(v.identity).toBe('typescript:@fx/base//src/greet#fail:function');

    // Comment lines above and inside `fail`: kiln's key does not move, Nx restores the old outputs.
    const edited = await ws.edit(GREET, (s) => s.replace('export function fail', '// why fail:\n// it throws\nexport function fail').replace('  const who', '  // the name\n  const who'));
    const hit = await build();
    expect(hit.statuses['@fx/base:build']).toBe('local');
    const stack2 = await throwFrom(ws.path('libs/base'));
    const rel = failFrame(await symbolicate(stack2));
    expect(rel.status).toBe('relocated');
    expect(rel.current!.line).toBe(lineOf(edited, 'throw new Error'));
    expect(rel.current!.text).toContain('throw new Error');
    expect(rel.retained!.line).toBe(lineOf(builtText, 'throw new Error'));

    // Node's own stack through kiln's hook says the same.
    const hooked = await throwFrom(ws.path('libs/base'), ['--import', '@kiln/core/register']);
    expect(hooked).toContain(`${GREET}:${lineOf(edited, 'throw new Error')}:`);
    expect(hooked).toContain('[source changed, relocated; built from line');
    // And `node --enable-source-maps` still maps kiln's output — to the text it was built from.
    const native = await throwFrom(ws.path('libs/base'), ['--enable-source-maps']);
    expect(native).toContain(`src/greet.ts:${lineOf(builtText, 'throw new Error')}:`);

    // A body edit rebuilds: verified at the current line.
    const body = await ws.edit(GREET, ['no greeting for', 'nobody to greet, not even']);
    const miss = await build();
    expect(miss.statuses['@fx/base:build']).toBe('executed');
    const stack3 = await throwFrom(ws.path('libs/base'));
    const v3 = failFrame(await symbolicate(stack3));
    expect(v3.status).toBe('verified');
    expect(v3.retained!.line).toBe(lineOf(body, 'throw new Error'));

    // The source file deleted: source changed, the retained text shown, no current location.
    await rm(ws.path(GREET));
    const gone = failFrame(await symbolicate(stack3));
    expect(gone.status).toBe('changed');
    expect(gone.current).toBeUndefined();
    expect(gone.retained!.text).toContain('nobody to greet');
    await writeFile(ws.path(GREET), body);
  }, 600_000);

  it('a copy of the built package at another path symbolicates through its debug ID; without map or store entry it is unavailable', async () => {
    const elsewhere = join(scratch, 'elsewhere/node_modules/@fx/base');
    await cp(ws.path('libs/base/dist'), join(elsewhere, 'dist'), { recursive: true });
    await cp(ws.path('libs/base/package.json'), join(elsewhere, 'package.json'));
    const stack = await throwFrom(elsewhere);
    expect(stack).toContain(elsewhere);
    const f = failFrame(await symbolicate(stack));
    expect(f.status).toBe('verified');
    expect(f.retained!.file).toBe(GREET);

    const bare = join(scratch, 'bare/node_modules/@fx/base');
    await cp(join(elsewhere), bare, { recursive: true });
    for (const m of ['greet.js.map', 'index.js.map']) await rm(join(bare, 'dist', m));
    const stackBare = await throwFrom(bare);
    const u = failFrame(await symbolicate(stackBare, ['--store', join(scratch, 'empty-store')]));
    expect(u.status).toBe('unavailable');
    expect(u.retained).toBeUndefined();
  }, 300_000);
});
