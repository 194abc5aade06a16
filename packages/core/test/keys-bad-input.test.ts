/**
 * Bad input to unit keys: a type error (keys do not type-check: the key is computed and the build
 * fails later with the compiler's diagnostics), a file that cannot be parsed (its broken declarations
 * count as changed, coded warning), a missing tsconfig and a malformed package.json (coded, no key,
 * the rest of the workspace still keyed). Never a crash.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWorkspaceKeys } from '@kiln/core';

const FIXTURE = resolve(__dirname, '../../../fixtures/workspace-basic');
let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-keys-bad-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function copy(name: string): Promise<string> {
  const dir = join(tmp, name);
  await cp(FIXTURE, dir, { recursive: true, filter: (s) => !s.includes('node_modules') });
  return dir;
}
const keysOf = async (dir: string) => computeWorkspaceKeys(dir, { store: false, workers: 0 });

describe('unit keys on bad input', () => {
  it('a type error: the key is still computed (and moves with the edit)', async () => {
    const good = await keysOf(await copy('good'));
    const dir = await copy('type-error');
    const f = join(dir, 'libs/base/src/math.ts');
    await writeFile(f, (await readFile(f, 'utf8')).replace('return n * 2;', "return 'two' as unknown as string;"));
    const bad = await keysOf(dir);
    const base = bad.projects.find((p) => p.project === '@fx/base')!;
    expect(base.key).toMatch(/^[0-9a-f]{32}$/);
    expect(base.key).not.toBe(good.projects.find((p) => p.project === '@fx/base')!.key);
  });

  it('a file that cannot be parsed: coded warning, its broken declarations count as changed, keys still computed', async () => {
    const dir = await copy('syntax');
    const f = join(dir, 'libs/base/src/math.ts');
    await writeFile(f, (await readFile(f, 'utf8')).replace('return n * 3;', 'return n * ;;; (('));
    const r = await keysOf(dir);
    const base = r.projects.find((p) => p.project === '@fx/base')!;
    expect(base.key).toMatch(/^[0-9a-f]{32}$/);
    expect(base.diagnostics.map((d) => d.code)).toContain('KILN_SYNTAX_ERROR');
    expect(base.diagnostics.find((d) => d.code === 'KILN_SYNTAX_ERROR')!.file).toBe('libs/base/src/math.ts');
    expect(Object.entries(base.components!.declarations).filter(([, v]) => v.startsWith('degraded:')).map(([k]) => k)).toContain(
      'typescript:@fx/base//src/math#triple:function',
    );
    // A dependent that sees the broken declaration's surface cannot trust it: its key moves too.
    const good = await keysOf(await copy('syntax-good'));
    const right = (x: typeof r) => x.projects.find((p) => p.project === '@fx/right')!.key;
    expect(right(r)).not.toBe(right(good));
  });

  it('a missing tsconfig: coded diagnostic and no key for that project; the others are keyed', async () => {
    const dir = await copy('no-tsconfig');
    await rm(join(dir, 'libs/tail/tsconfig.lib.json'));
    await rm(join(dir, 'libs/tail/tsconfig.json'));
    const r = await keysOf(dir);
    const tail = r.projects.find((p) => p.project === '@fx/tail')!;
    expect(tail.key).toBeNull();
    expect(tail.diagnostics.map((d) => d.code)).toEqual(['KILN_TSCONFIG_NOT_FOUND']);
    expect(tail.diagnostics[0]!.hint).toMatch(/tsconfig/);
    expect(r.projects.filter((p) => p.key).length).toBe(4);
  });

  it('a malformed package.json: coded diagnostic, no key for it, the rest keyed', async () => {
    const dir = await copy('bad-manifest');
    await writeFile(join(dir, 'libs/tail/package.json'), '{ "name": "@fx/tail", ');
    const r = await keysOf(dir);
    expect(r.diagnostics.map((d) => d.code)).toContain('KILN_MANIFEST_INVALID');
    const tail = r.projects.find((p) => p.root === 'libs/tail')!;
    expect(tail.key).toBeNull();
    expect(tail.diagnostics.map((d) => d.code)).toContain('KILN_MANIFEST_INVALID');
    expect(r.projects.filter((p) => p.key).length).toBe(4);
  });
});
