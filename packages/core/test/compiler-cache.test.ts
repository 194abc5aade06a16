/**
 * The compiler's V8 code cache (parse/typescript.ts): a process that loads TypeScript without a cache
 * and parses only a few files — the plugin's warm miss after a one-file edit, a fresh process per graph
 * build without the Nx daemon — writes one when its key computation ends, so the next process
 * deserialises instead of compiling 9 MB. A damaged cache is rejected by V8, the compiler still loads
 * and parses, and a good cache is written again. Each case is a real node process (the cache is per
 * process), with its own TMPDIR.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const dist = pathToFileURL(resolve(__dirname, '../dist/parse/typescript.js')).href;
const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

/** One process: load the compiler, parse one file, save the cache as computeWorkspaceKeys does; report how it loaded. */
function run(tmp: string, env: Record<string, string> = {}): { load: string; kinds: number } {
  const script = `
    const m = await import(${JSON.stringify(dist)});
    const r = m.parseTypeScript('export function f(a: number) { return a + 1 }\\n', 'ts');
    m.saveCompilerCache();
    process.stdout.write(JSON.stringify({ load: m.compilerLoad(), kinds: r.sourceFile.statements.length }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, TMPDIR: tmp, ...env }, encoding: 'utf8' });
  return JSON.parse(out) as { load: string; kinds: number };
}

describe('compiler code cache', () => {
  it('is written by a process that parsed one file, used by the next, and survives damage', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'kiln-codecache-'));
    temps.push(tmp);
    expect(run(tmp)).toEqual({ load: 'no-cache', kinds: 1 });
    const dir = join(tmp, 'kiln-code-cache');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.v8'));
    expect(files).toHaveLength(1);
    expect(run(tmp)).toEqual({ load: 'cache', kinds: 1 });

    // Damage: V8 rejects the data, the compiler is compiled from source and works, and the cache is rewritten.
    await writeFile(join(dir, files[0]!), Buffer.alloc(4096, 7));
    expect(run(tmp)).toEqual({ load: 'cache-rejected', kinds: 1 });
    expect(run(tmp)).toEqual({ load: 'cache', kinds: 1 });

    // Turned off: plain require.
    expect(run(tmp, { KILN_NO_CODE_CACHE: '1' })).toEqual({ load: 'require', kinds: 1 });
  }, 60_000);
});
