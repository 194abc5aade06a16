/**
 * Issue 14, point 8 — the build executor prints diagnostic envelopes: a real failing build of a fixture
 * library, by the executor's own function (the built one, in this process: what Nx would call, without
 * starting Nx), prints on the terminal exactly the text projections of the envelopes of the build's
 * diagnostics — the JSON records `compileProject` returns, which validate against the envelope schema.
 * The familiar `file:line:col - error TS2322: message` form is that projection.
 *
 * Needs the packages built (`npm run build`).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compileProject, formatEnvelopeJson, formatEnvelopeText, readEnvelope, toEnvelope } from '@kiln/core';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const ws = mkdtempSync(join(tmpdir(), 'kiln-exec-envelope-'));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

function write(rel: string, text: string): void {
  mkdirSync(dirname(join(ws, rel)), { recursive: true });
  writeFileSync(join(ws, rel), text);
}

describe('the build executor prints diagnostic envelopes', () => {
  it('a failing build: stderr is the text projection of each envelope, and the envelopes validate', async () => {
    write('libs/a/package.json', JSON.stringify({ name: '@ws/a', version: '1.0.0', type: 'module', main: './dist/index.js', types: './dist/index.d.ts' }));
    write(
      'libs/a/tsconfig.lib.json',
      JSON.stringify({ compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', types: [], strict: true, skipLibCheck: true, rootDir: 'src', outDir: 'dist', declaration: true }, include: ['src'] }),
    );
    write('libs/a/src/index.ts', "export function need(n: number): number {\n  return n;\n}\nexport const bad: number = 'x';\nexport const r = need();\n");
    const { default: buildExecutor } = (await import(join(REPO, 'packages/nx/dist/executors/build/impl.js'))) as {
      default: (o: Record<string, unknown>, c: Record<string, unknown>) => Promise<{ success: boolean }>;
    };
    const printed: string[] = [];
    const capture = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
    const err = vi.spyOn(console, 'error').mockImplementation(capture);
    const warn = vi.spyOn(console, 'warn').mockImplementation(capture);
    const log = vi.spyOn(console, 'log').mockImplementation(capture);
    let result: { success: boolean };
    try {
      result = await buildExecutor(
        { tsConfig: 'libs/a/tsconfig.lib.json' },
        { root: ws, projectName: 'a', targetName: 'build', projectsConfigurations: { version: 2, projects: { a: { root: 'libs/a', targets: { build: { executor: '@kiln/nx:build' } } } } } },
      );
    } finally {
      err.mockRestore();
      warn.mockRestore();
      log.mockRestore();
    }
    expect(result.success).toBe(false);

    // The same build's records (paths relative to the workspace root, as the executor compiles).
    const compiled = await compileProject({ projectRoot: join(ws, 'libs/a'), tsconfig: 'tsconfig.lib.json', relativeTo: ws });
    const envelopes = compiled.diagnostics.map(toEnvelope);
    expect(envelopes).toHaveLength(2);
    for (const e of envelopes) {
      // JSON projection: the record itself, valid against the schema.
      expect(readEnvelope(JSON.parse(formatEnvelopeJson(e)))).toEqual({ ok: true, envelope: e });
      expect(e).toMatchObject({ code: 'KILN_TYPESCRIPT_ERROR', outcome: 'failed', producer: 'build', location: { kind: 'position', file: 'libs/a/src/index.ts' } });
    }
    // Terminal projection: what the executor printed, line for line, then its summary.
    expect(printed).toEqual([...envelopes.map(formatEnvelopeText), 'kiln build libs/a failed with 2 errors; nothing was written.']);
    expect(printed[0]).toBe("libs/a/src/index.ts:4:14 - error TS2322: Type 'string' is not assignable to type 'number'.");
    expect(printed[1]).toMatch(/^libs\/a\/src\/index\.ts:5:\d+ - error TS2554: Expected 1 arguments, but got 0\.\n {2}libs\/a\/src\/index\.ts:1:22: An argument for 'n' was not provided\.$/);
  });
});
