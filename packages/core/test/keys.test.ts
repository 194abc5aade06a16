/**
 * Unit keys on a real workspace (fixtures/workspace-basic: base ← left, right ← top ← tail, a chain
 * and a diamond). Each case edits a copy, recomputes every key, and asserts exactly which projects'
 * keys moved — hits where meaning did not change, misses wherever it did. (The end-to-end suite runs
 * the same cases through real Nx builds and checks the restored outputs.)
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeWorkspaceKeys, type WorkspaceKeys } from '@kiln/core';

const FIXTURE = resolve(__dirname, '../../../fixtures/workspace-basic');
const ALL = ['@fx/base', '@fx/left', '@fx/right', '@fx/top', '@fx/tail'];
// `tail` sees `top` only through `summary(name: string): string`, a declared signature: nothing below
// `top` can change tail's output, so tail keeps its key unless top's surface moves.
const ALL_BUT_TAIL = ['@fx/base', '@fx/left', '@fx/right', '@fx/top'];
let tmp: string;
let baseline: Map<string, string>;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'kiln-keys-'));
  baseline = keysOf(await computeWorkspaceKeys(await copy('baseline'), { store: false, workers: 0 }));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

async function copy(name: string): Promise<string> {
  const dir = join(tmp, name);
  await cp(FIXTURE, dir, { recursive: true, filter: (src) => !src.includes('node_modules') && !src.includes(`${'/'}dist`) });
  return dir;
}

function keysOf(r: WorkspaceKeys): Map<string, string> {
  return new Map(r.projects.map((p) => [p.project, p.key ?? 'null']));
}

async function edit(dir: string, file: string, f: (s: string) => string): Promise<void> {
  const path = join(dir, file);
  const before = await readFile(path, 'utf8');
  const after = f(before);
  expect(after, `edit of ${file} changed nothing`).not.toBe(before);
  await writeFile(path, after);
}

async function movedAfter(name: string, change: (dir: string) => Promise<void>): Promise<string[]> {
  const dir = await copy(name);
  await change(dir);
  const keys = keysOf(await computeWorkspaceKeys(dir, { store: false, workers: 0 }));
  const moved = ALL.filter((p) => keys.get(p) !== baseline.get(p));
  console.log(`${name}: keys moved for ${moved.join(', ') || 'none'}`);
  return moved;
}

describe('unit keys', () => {
  it('every project of the fixture gets a key, and the diamond is seen', async () => {
    const r = await computeWorkspaceKeys(await copy('shape'), { store: false, workers: 0 });
    expect(r.projects.map((p) => p.project).sort()).toEqual([...ALL].sort());
    for (const p of r.projects) expect(p.key, p.project).toMatch(/^[0-9a-f]{32}$/);
    const top = r.projects.find((p) => p.project === '@fx/top')!;
    expect(Object.keys(top.components!.dependencies)).toEqual(['@fx/left', '@fx/right']);
    expect(JSON.stringify(r)).not.toContain(tmp); // no absolute path anywhere
  });

  it('two clones at different paths compute identical keys', async () => {
    const a = keysOf(await computeWorkspaceKeys(await copy('clone-a'), { store: false, workers: 0 }));
    expect(a).toEqual(baseline);
  });

  it('a. comment-only edit in the base library: every key holds', async () => {
    expect(await movedAfter('a', (d) => edit(d, 'libs/base/src/greet.ts', (s) => s.replace('function normalize', '// squeeze spaces\nfunction normalize').replace("return `Hello", "/* warm */ return `Hello")))).toEqual([]);
  });

  it('b. prettier reformat of the whole workspace: every key holds', async () => {
    const prettier = await import('prettier');
    const moved = await movedAfter('b', async (d) => {
      for (const lib of ['base', 'left', 'right', 'top', 'tail']) {
        const dir = join(d, 'libs', lib, 'src');
        for (const f of await (await import('node:fs/promises')).readdir(dir)) {
          const p = join(dir, f);
          const src = await readFile(p, 'utf8');
          await writeFile(p, await prettier.format(src, { parser: 'typescript', semi: false, singleQuote: true, printWidth: 50, tabWidth: 4, trailingComma: 'all', arrowParens: 'avoid' }));
        }
      }
    });
    expect(moved).toEqual([]);
  });

  it('c. private helper body edit (callers declare return types): base rebuilds, dependents hit', async () => {
    expect(await movedAfter('c', (d) => edit(d, 'libs/base/src/greet.ts', (s) => s.replace("replace(/\\s+/g, ' ')", "replace(/\\s+/g, ' ').normalize()")))).toEqual(['@fx/base']);
  });

  it('d. exported const with an inferred type whose initializer changes: base and dependents rebuild', async () => {
    expect(await movedAfter('d', (d) => edit(d, 'libs/base/src/label.ts', (s) => s.replace('({ text: `#${n}`, n })', '({ text: `#${n}`, n, twice: n * 2 })')))).toEqual(ALL_BUT_TAIL);
  });

  it('e. exported function signature change: base and dependents rebuild', async () => {
    expect(await movedAfter('e', (d) => edit(d, 'libs/base/src/greet.ts', (s) => s.replace('export function greet(name: string): string', 'export function greet(name: string, punctuation = "!"): string')))).toEqual(ALL_BUT_TAIL);
  });

  it('e2. a signature change in the middle of the chain reaches the end of it', async () => {
    expect(await movedAfter('e2', (d) => edit(d, 'libs/top/src/index.ts', (s) => s.replace('export function summary(name: string): string', 'export function summary(name: string, extra = 0): string')))).toEqual(['@fx/top', '@fx/tail']);
  });

  it('f. const enum member value change: dependents rebuild', async () => {
    const moved = await movedAfter('f', (d) => edit(d, 'libs/base/src/level.ts', (s) => s.replace('High = 2', 'High = 3')));
    expect(moved).toEqual(ALL_BUT_TAIL);
  });

  it("g. rename of a class's private member: dependents rebuild", async () => {
    const moved = await movedAfter('g', (d) => edit(d, 'libs/base/src/registry.ts', (s) => s.replaceAll('entries', 'items')));
    expect(moved).toEqual(ALL_BUT_TAIL);
  });

  it('g2. body edit of a public method with a declared return type: only base rebuilds', async () => {
    expect(await movedAfter('g2', (d) => edit(d, 'libs/base/src/registry.ts', (s) => s.replace('return [...this.entries];', 'return this.entries.slice();')))).toEqual(['@fx/base']);
  });

  it('h. version bump and workspace range bump: hits; a new exports entry: rebuild', async () => {
    const bumped = await movedAfter('h', async (d) => {
      await edit(d, 'libs/base/package.json', (s) => s.replace('"version": "0.1.0"', '"version": "0.2.0"'));
      await edit(d, 'libs/left/package.json', (s) => s.replace('"@fx/base": "^0.1.0"', '"@fx/base": "^0.2.0"').replace('"version": "0.1.0"', '"version": "0.1.1"'));
    });
    expect(bumped).toEqual([]);
    const exported = await movedAfter('h2', (d) =>
      edit(d, 'libs/base/package.json', (s) => s.replace('"exports": {', '"exports": {\n    "./math": { "types": "./dist/math.d.ts", "default": "./dist/math.js" },')),
    );
    expect(exported).toContain('@fx/base');
  });

  it('i. JSDoc edit on an exported declaration: base rebuilds (its .d.ts carries docs)', async () => {
    const moved = await movedAfter('i', (d) => edit(d, 'libs/base/src/greet.ts', (s) => s.replace('Greets a person by name.', 'Greets a person warmly by name.')));
    expect(moved).toContain('@fx/base');
  });

  it('j. swapping two effectful top-level statements: rebuild', async () => {
    const moved = await movedAfter('j', (d) => edit(d, 'libs/base/src/effects.ts', (s) => s.replace("trail.push('first');\ntrail.push('second');", "trail.push('second');\ntrail.push('first');")));
    expect(moved).toContain('@fx/base');
  });

  it('k. a different TypeScript version in the lockfile: every project rebuilds', async () => {
    const moved = await movedAfter('k', (d) =>
      edit(d, 'package-lock.json', (s) => s.replace(/("node_modules\/typescript": \{\s*"version": ")5\.9\.3/, '$15.9.2')),
    );
    expect(moved).toEqual(ALL);
  });

  it("k2. a compiler option kiln's TypeScript does not know is keyed by its raw value, through extends", async () => {
    // TypeScript 6's `stableTypeOrdering` changes declaration emit; TypeScript 5.9 drops it from its
    // parse. Set in the root config every project extends, then flipped: both must move every key.
    const on = await copy('k2-on');
    await edit(on, 'tsconfig.base.json', (s) => s.replace('"compilerOptions": {', '"compilerOptions": {\n    "stableTypeOrdering": true,'));
    const rOn = await computeWorkspaceKeys(on, { store: false, workers: 0 });
    const unknown = rOn.projects.flatMap((p) => p.diagnostics ?? []).concat(rOn.diagnostics ?? []).filter((d) => d.code === 'KILN_TSCONFIG_UNKNOWN_OPTION');
    expect(unknown.length, 'a KILN_TSCONFIG_UNKNOWN_OPTION diagnostic per project').toBeGreaterThan(0);
    expect(unknown[0]!.message).toContain("'stableTypeOrdering'");
    expect(JSON.stringify(rOn)).not.toContain('KILN_TSCONFIG_INVALID');
    const keysOn = keysOf(rOn);
    expect(ALL.filter((p) => keysOn.get(p) !== baseline.get(p))).toEqual(ALL);
    await edit(on, 'tsconfig.base.json', (s) => s.replace('"stableTypeOrdering": true', '"stableTypeOrdering": false'));
    const keysOff = keysOf(await computeWorkspaceKeys(on, { store: false, workers: 0 }));
    expect(ALL.filter((p) => keysOff.get(p) !== keysOn.get(p))).toEqual(ALL);
    expect(JSON.stringify(rOn)).not.toContain(on); // no absolute path in keys or components
  });

  it('reordering overload signatures moves the key (consumers resolve overloads in order)', async () => {
    const withOverloads = async (dir: string, first: string, second: string) =>
      edit(dir, 'libs/base/src/math.ts', (s) => `${s}\nexport function pick(x: ${first}): ${first};\nexport function pick(x: ${second}): ${second};\nexport function pick(x: unknown): unknown { return x; }\n`);
    const a = await copy('overloads-a');
    await withOverloads(a, 'string', 'number');
    const b = await copy('overloads-b');
    await withOverloads(b, 'number', 'string');
    const ka = keysOf(await computeWorkspaceKeys(a, { store: false, workers: 0 }));
    const kb = keysOf(await computeWorkspaceKeys(b, { store: false, workers: 0 }));
    expect(kb.get('@fx/base')).not.toBe(ka.get('@fx/base'));
  });

  it('a JSDoc edit on an interface member moves the key (the .d.ts carries it)', async () => {
    const moved = await movedAfter('member-doc', async (d) => {
      await edit(d, 'libs/base/src/math.ts', (s) => `${s}\nexport interface Options {\n  /** How many. */\n  count: number;\n}\n`);
    });
    expect(moved).toContain('@fx/base');
    const dir = await copy('member-doc-2');
    await edit(dir, 'libs/base/src/math.ts', (s) => `${s}\nexport interface Options {\n  /** How many. */\n  count: number;\n}\n`);
    const before = keysOf(await computeWorkspaceKeys(dir, { store: false, workers: 0 })).get('@fx/base');
    await edit(dir, 'libs/base/src/math.ts', (s) => s.replace('/** How many. */', '/** How many, at most. */'));
    const after = keysOf(await computeWorkspaceKeys(dir, { store: false, workers: 0 })).get('@fx/base');
    expect(after).not.toBe(before);
  });

  it('in a project that emits CommonJS, reordering exported functions moves the key (exports.a/exports.b order)', async () => {
    const reorder = (s: string) => {
      const dbl = 'export function double(n: number): number {\n  return n * 2;\n}\n';
      const tpl = 'export function triple(n: number): number {\n  return n * 3;\n}\n';
      return s.replace(dbl, '@@D@@').replace(tpl, dbl).replace('@@D@@', tpl);
    };
    const cjs = async (d: string) => {
      await edit(d, 'libs/base/package.json', (s) => s.replace('"type": "module"', '"type": "commonjs"'));
    };
    const a = await copy('cjs-a');
    await cjs(a);
    const before = keysOf(await computeWorkspaceKeys(a, { store: false, workers: 0 })).get('@fx/base');
    await edit(a, 'libs/base/src/math.ts', reorder);
    const after = keysOf(await computeWorkspaceKeys(a, { store: false, workers: 0 })).get('@fx/base');
    expect(after).not.toBe(before);
  });

  it('reordering two exported function declarations: every key holds', async () => {
    const moved = await movedAfter('reorder', (d) =>
      edit(d, 'libs/base/src/math.ts', (s) => {
        const dbl = 'export function double(n: number): number {\n  return n * 2;\n}\n';
        const tpl = 'export function triple(n: number): number {\n  return n * 3;\n}\n';
        expect(s).toContain(dbl);
        expect(s).toContain(tpl);
        return s.replace(dbl, '@@D@@').replace(tpl, dbl).replace('@@D@@', tpl);
      }),
    );
    expect(moved).toEqual([]);
  });
});
