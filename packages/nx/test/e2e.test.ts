/**
 * End to end, with real Nx processes: the fixture workspace (base ← left, right ← top ← tail) with the
 * kiln plugin registered by its own init generator, in a real git repository in a temp dir. Each case
 * edits the workspace, builds, and asserts exactly which builds were cache hits. The hash-stability
 * check runs for every hit: a fresh build with the cache skipped must produce JS and .d.ts equivalent
 * to the restored ones (SPEC §4). It cannot pass by never hitting: the expected hits are asserted too.
 * Two judges decide "equivalent" (issue 10, point 3): kiln's `compareOutputs` and the independent token
 * judge (tools/lib/token-judge.mjs, no code shared with kiln's extractor). Any disagreement between
 * them fails, as does a hit either calls different; a hit whose fresh build failed or whose outputs are
 * empty is counted and reported apart, never as equal.
 */
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareOutputs, formatDifference } from '../../core/dist/compile/equivalence.js';
import { readGraph } from '../../core/dist/graph/read.js';
import { validateGraphRecord } from '../../core/dist/graph/schema.js';
import { createWorkspace, disposeAll, type Workspace } from '../../../tools/testing/workspace.mjs';
import { judgeOutputs } from '../../../tools/lib/token-judge.mjs';

const LIBS = ['base', 'left', 'right', 'top', 'tail'] as const;
type Lib = (typeof LIBS)[number];
const task = (lib: Lib) => `@fx/${lib}:build`;
const BUILD = ['run-many', '-t', 'build'];

let ws: Workspace;
let baseline: string;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'kiln-e2e-'));
  ws = await createWorkspace('workspace-basic', { prepare: (w) => w.removePackageNxConfig() });
  const init = await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
  expect(init.code).toBe(0);
  baseline = await ws.commit('register kiln');
  const first = await ws.runNx(BUILD);
  expect(first.executed.sort()).toEqual(LIBS.map(task).sort());
}, 600_000);

afterAll(async () => {
  await disposeAll();
  await rm(scratch, { recursive: true, force: true });
});

async function reset(): Promise<void> {
  await ws.git('reset', '--hard', baseline);
  await ws.git('clean', '-fdq', '-e', 'node_modules', '-e', '.nx');
}

/**
 * Apply an edit, build, and return which libraries were hits. For every hit, copy what Nx restored,
 * rebuild everything with the cache skipped, and compare.
 */
async function buildAfter(edit: () => Promise<unknown>): Promise<{ hits: Lib[]; executed: Lib[] }> {
  await reset();
  await edit();
  const run = await ws.runNx(BUILD);
  const hits = LIBS.filter((l) => run.statuses[task(l)] === 'local' || run.statuses[task(l)] === 'remote');
  const executed = LIBS.filter((l) => run.statuses[task(l)] === 'executed');
  expect(hits.length + executed.length).toBe(LIBS.length);
  if (hits.length) {
    const restored = join(scratch, `restored-${Date.now()}`);
    for (const l of hits) await cp(ws.path(`libs/${l}/dist`), join(restored, l), { recursive: true });
    const fresh = await ws.runNx([...BUILD, '--skip-nx-cache']);
    expect(fresh.executed.length).toBe(LIBS.length);
    const soundness = await judgeHits(hits, restored, fresh.tasks);
    console.log(`soundness (${expect.getState().currentTestName}): ${soundness.summary}`);
    expect(soundness.failedBuilds, 'hits whose fresh build failed (not judged)').toEqual([]);
    expect(soundness.empty, 'hits with nothing to compare (not judged)').toEqual([]);
    expect(soundness.disagreements, 'the two judges disagree').toEqual([]);
    expect(soundness.different, 'cache hits that a fresh build does not reproduce').toEqual([]);
  }
  return { hits, executed };
}

/**
 * Judge every hit by both judges. Failed fresh builds and empty outputs are counted apart (a hit
 * that cannot be judged is not an equal one); a disagreement between the judges is printed with both
 * explanations; a hit both judges call different is a false hit.
 */
async function judgeHits(hits: Lib[], restored: string, freshTasks: Record<string, { code: number }>) {
  const failedBuilds: string[] = [];
  const empty: string[] = [];
  const disagreements: string[] = [];
  const different: string[] = [];
  let equal = 0;
  for (const l of hits) {
    if (freshTasks[task(l)]?.code !== 0) {
      failedBuilds.push(`${l}: fresh build exited with ${freshTasks[task(l)]?.code}`);
      continue;
    }
    const a = join(restored, l);
    const b = ws.path(`libs/${l}/dist`);
    const kiln = await compareOutputs(a, b);
    const judge = await judgeOutputs(a, b);
    if (kiln.compared === 0 || judge.compared === 0) {
      empty.push(`${l}: compared ${kiln.compared} file(s) by compareOutputs, ${judge.compared} by the token judge`);
      continue;
    }
    const kilnSays = kiln.differences.map(formatDifference);
    if (kiln.equal !== judge.equal) {
      const line = `${l}: compareOutputs says ${kiln.equal ? 'equal' : 'different'}, the token judge says ${judge.equal ? 'equal' : 'different'}\n    compareOutputs: ${kilnSays.join('\n      ') || '—'}\n    token judge: ${judge.differences.join('\n      ') || '—'}`;
      console.log(`JUDGES DISAGREE ${line}`);
      disagreements.push(line);
    } else if (!kiln.equal) different.push(`${l}:\n    ${[...kilnSays, ...judge.differences].join('\n    ')}`);
    else equal++;
  }
  const summary =
    `${hits.length} hit(s): ${equal} equal by both judges, ${different.length} different, ${disagreements.length} disagreement(s), ` +
    `${failedBuilds.length} failed fresh build(s), ${empty.length} empty output(s)`;
  return { summary, failedBuilds, empty, disagreements, different };
}

describe('nx build with kiln keys (real Nx, real git)', () => {
  it('the init generator registered the plugin; running it twice changes nothing; builds are keyed by kiln', async () => {
    const nxJson = await ws.readJson('nx.json');
    expect(nxJson.plugins).toContainEqual({ plugin: '@kiln/nx', options: { addBuildTargets: true } });
    const again = await ws.runNx(['g', '@kiln/nx:init', '--addBuildTargets', '--no-interactive']);
    expect(again.code).toBe(0);
    expect(await ws.git('status', '--porcelain', 'nx.json')).toBe('');
    const second = await ws.runNx(BUILD);
    expect(second.localHits.sort()).toEqual(LIBS.map(task).sort());
    const built = await ws.node(`import { run } from '@fx/tail'; console.log(run(' Ada '));`);
    expect(built.trim()).toBe('Hello, Ada! (left) | level=2 | label=#2 | top:2 | x6=42 | tail');
  });

  it('a. comment-only edit in the base library: every build is a hit', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/greet.ts', ['function normalize', '// squeeze whitespace\nfunction normalize']));
    expect(r.executed).toEqual([]);
  });

  it('b. prettier reformat of the whole workspace: every build is a hit', async () => {
    const prettier = await import('prettier');
    const r = await buildAfter(async () => {
      for (const lib of LIBS) {
        for (const f of (await ws.git('ls-files', `libs/${lib}/src`)).split('\n').filter(Boolean)) {
          const text = await ws.read(f);
          await ws.write(f, await prettier.format(text, { parser: 'typescript', semi: false, singleQuote: true, printWidth: 60, tabWidth: 4, trailingComma: 'all', arrowParens: 'avoid' }));
        }
      }
    });
    expect(r.executed).toEqual([]);
  });

  it('c. private helper body edit in the base: base rebuilds, dependents hit', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/greet.ts', ["replace(/\\s+/g, ' ')", "replace(/\\s+/g, ' ').normalize()"]));
    expect(r.executed).toEqual(['base']);
  });

  it('d. exported const with an inferred type whose initializer changes: base and the dependents that see it rebuild', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/label.ts', ['({ text: `#${n}`, n })', '({ text: `#${n}`, n, twice: n * 2 })']));
    expect(r.executed).toEqual(['base', 'left', 'right', 'top']);
  });

  it('e. exported function signature change: base and dependents rebuild', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/greet.ts', ['export function greet(name: string): string', 'export function greet(name: string, mark = "!"): string']));
    expect(r.executed).toEqual(['base', 'left', 'right', 'top']);
  });

  it('f. const enum member value change: dependents rebuild', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/level.ts', ['High = 2', 'High = 3']));
    expect(r.executed).toContain('left');
  });

  it("g. rename of a class's private member: dependents rebuild", async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/registry.ts', (s) => s.replaceAll('entries', 'items')));
    expect(r.executed).toContain('right');
  });

  it('h. version bump and workspace range bump: hits; a new exports entry: rebuild', async () => {
    const bump = await buildAfter(async () => {
      await ws.edit('libs/base/package.json', ['"version": "0.1.0"', '"version": "0.2.0"']);
      await ws.edit('libs/left/package.json', ['"@fx/base": "^0.1.0"', '"@fx/base": "^0.2.0"']);
    });
    expect(bump.executed).toEqual([]);
    const exported = await buildAfter(() =>
      ws.edit('libs/base/package.json', ['"exports": {', '"exports": {\n    "./math": { "types": "./dist/math.d.ts", "default": "./dist/math.js" },']),
    );
    expect(exported.executed).toContain('base');
  });

  it('i. JSDoc edit on an exported declaration: the result equals a fresh build', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/greet.ts', ['Greets a person by name.', 'Greets a person warmly by name.']));
    expect(r.executed).toContain('base'); // its .d.ts carries the doc
  });

  it('j. swapping two effectful top-level statements: rebuild', async () => {
    const r = await buildAfter(() => ws.edit('libs/base/src/effects.ts', ["trail.push('first');\ntrail.push('second');", "trail.push('second');\ntrail.push('first');"]));
    expect(r.executed).toContain('base');
  });

  it('k. a different TypeScript version in the lockfile: rebuild', async () => {
    const r = await buildAfter(() => ws.edit('package-lock.json', [/("node_modules\/typescript": \{\s*"version": ")5\.9\.3/, '$15.9.2']));
    expect(r.executed).toEqual([...LIBS]);
  });

  it('l. a devDependency no source imports, added to one library: every build is a hit (Nx hashes no AllExternalDependencies for kiln\'s builds)', async () => {
    const r = await buildAfter(() => ws.addAcornDevDependency('libs/tail'));
    // kiln's key holds the versions a library's sources and compiler resolve; acorn is neither.
    expect(r.executed).toEqual([]);
  });

  it('graph memo: a fully cached run takes the keys from the memo; a private body edit misses it, and only base rebuilds', async () => {
    const memo = ws.path('node_modules/.cache/kiln/graph-memo.json');
    const ino = async () => (await stat(memo, { bigint: true })).ino;
    await reset();
    await new Promise((r) => setTimeout(r, 2_100)); // nothing changed in the last 2 s: the memo can be written
    await ws.runNx(BUILD);
    expect(JSON.parse(await readFile(memo, 'utf8')).fingerprint).not.toBe('');
    const written = await ino();
    const cached = await ws.runNx(BUILD);
    expect(cached.localHits.sort()).toEqual(LIBS.map(task).sort());
    expect(await ino()).toBe(written); // answered from the memo: nothing keyed, nothing rewritten
    // An edit no other case makes (its build must not be in the local cache already).
    const r = await buildAfter(() => ws.edit('libs/base/src/greet.ts', ['return name.trim()', 'return name.trimStart().trimEnd()']));
    expect(r.executed).toEqual(['base']);
    expect(await ino()).not.toBe(written); // keyed again
  });

  it('reordering two exported function declarations: every build is a hit, and equal to a fresh build', async () => {
    const r = await buildAfter(() =>
      ws.edit('libs/base/src/math.ts', (s) => {
        const dbl = 'export function double(n: number): number {\n  return n * 2;\n}\n';
        const tpl = 'export function triple(n: number): number {\n  return n * 3;\n}\n';
        return s.replace(dbl, '@@D@@').replace(tpl, dbl).replace('@@D@@', tpl);
      }),
    );
    expect(r.executed).toEqual([]);
    expect(r.hits).toEqual([...LIBS]);
  });

  it('codegraph: every library exports a schema-valid graph as a cached product; a comment edit re-exports that graph while every build stays a hit', async () => {
    const GRAPH = ['run-many', '-t', 'codegraph'];
    const graphTask = (lib: Lib) => `@fx/${lib}:codegraph`;
    await reset();
    const first = await ws.runNx(GRAPH);
    expect(first.code, first.output).toBe(0);
    const texts = new Map<Lib, string>();
    for (const l of LIBS) {
      const text = await readFile(ws.path(`dist/codegraph/libs/${l}/codegraph.jsonl`), 'utf8');
      const doc = readGraph(text);
      expect(doc.header).toMatchObject({ mode: 'checked', package: `@fx/${l}` });
      for (const rec of doc.records) expect(validateGraphRecord(rec), `${l}: ${JSON.stringify(rec)}`).toBeNull();
      expect(text).not.toContain(ws.path(''));
      texts.set(l, text);
    }
    // top calls into left and right: the checker resolved it across packages.
    expect(texts.get('top')).toMatch(/"kind":"calls","id":"calls:typescript:@fx\/top\/\/[^"]*->typescript:@fx\/(left|right)\/\//);
    const again = await ws.runNx(GRAPH);
    expect(LIBS.filter((l) => again.statuses[graphTask(l)] === 'local')).toEqual([...LIBS]);
    // A comment moves the spans of tail's graph (and only tail's: nothing depends on it); its build is a hit.
    await ws.edit('libs/tail/src/index.ts', (t) => `// a comment that moves every line down\n${t}`);
    const edited = await ws.runNx(GRAPH);
    expect(LIBS.filter((l) => edited.statuses[graphTask(l)] === 'executed')).toEqual(['tail']);
    expect(edited.statuses['@fx/tail:build'] ?? 'local').not.toBe('executed');
    const moved = readGraph(await readFile(ws.path('dist/codegraph/libs/tail/codegraph.jsonl'), 'utf8'));
    expect(moved.header.snapshot).not.toEqual(readGraph(texts.get('tail')!).header.snapshot);
    const build = await ws.runNx(BUILD);
    expect(build.localHits.sort()).toEqual(LIBS.map(task).sort());
  });
});
