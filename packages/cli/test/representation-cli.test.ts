/**
 * Issue 15, points 1, 5 and 9 through the real CLI: a library built by a wrapped tool (real `tsc`),
 * then `kiln represent` writes dist/kiln.rep (deterministic, the same from a copy at another path); a
 * consumer that has only the package's manifest and kiln.rep — no source, no JS — calls its exports
 * with `kiln call`, and the answers equal `import()` of the built JS (the judge); every refusal comes
 * before any result, coded, naming the package and version; `kiln inspect representation` reports a
 * directory, an installed package, a tarball (`npm pack`), "none published" and "unreadable version".
 *
 * The future-format file is made by patching the format field at its documented offset (bytes 8–11,
 * SPEC §7 / runtime format.ts), not with kiln's writer: the judge of a refusal is not the codec.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAsync } from './lib/spawn-async.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const KILN = join(ROOT, 'packages/cli/bin/kiln.js');
const TSC = join(ROOT, 'node_modules/.bin/tsc');
const PKG = '@fx/rep-lib';

const SOURCES: Record<string, string> = {
  'src/math.ts': `
function clamp(n: number): number { return Math.max(-1e6, Math.min(1e6, n)); }
export function add(a: number, b = 10): number { return clamp(a + b); }
export function div(a: number, b: number): number {
  if (b === 0) throw new RangeError('division by zero');
  return a / b;
}
`,
  'src/words.ts': `
export interface Options { loud: boolean }
export const greeting = { text: 'Hello', marks: ['!'] };
export function greet(name: string, o: Options = { loud: false }): string {
  const s = \`\${greeting.text}, \${name.trim()}\${greeting.marks.join('')}\`;
  return o.loud ? s.toUpperCase() : s;
}
`,
  // A class whose instances the caller creates, and a factory returning a function (the shapes of
  // @tanstack/form-core's FormApi and revalidateLogic, the first real-monorepo trial).
  'src/tally.ts': `
export class Tally {
  count: number;
  constructor(o: { start?: number } = {}) {
    this.count = o.start ?? 0;
    setTimeout(() => {}, 60_000); // like a devtools client's reconnect timer: kiln call must not wait for it
  }
  add(n: number): this { this.count += n; return this; }
}
export function picker(key: string): (o: Record<string, unknown>) => unknown { return (o) => o[key]; }
`,
  'src/index.ts': `
export * from './math.js';
export { Tally, picker } from './tally.js';
export { greet, greeting, type Options } from './words.js';
export { add as plus } from './math.js';
`,
};

const dirs: string[] = [];
const temp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `kiln-rep-cli-${name}-`));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const env = { ...process.env, NO_COLOR: '1', KILN_STORE: '' };
const kiln = (args: string[], cwd: string) => spawnAsync(process.execPath, [KILN, ...args], { cwd, env: { ...env, KILN_STORE: join(cwd, '.kiln-store') } });

let lib: string;
let consumer: string;
let built: Record<string, (...a: unknown[]) => unknown> & { greeting: unknown };

/** A consumer project with the package installed as manifest + kiln.rep only. */
function installRepOnly(into: string, from: string): string {
  const dir = join(into, 'node_modules', PKG);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  cpSync(join(from, 'package.json'), join(dir, 'package.json'));
  cpSync(join(from, 'dist/kiln.rep'), join(dir, 'dist/kiln.rep'));
  return dir;
}

beforeAll(async () => {
  lib = temp('lib');
  writeFileSync(
    join(lib, 'package.json'),
    JSON.stringify({ name: PKG, version: '1.2.3', type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, files: ['dist'] }, null, 2),
  );
  writeFileSync(
    join(lib, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [], declaration: true, sourceMap: true, rootDir: 'src', outDir: 'dist', strict: true }, include: ['src'] }),
  );
  for (const [rel, text] of Object.entries(SOURCES)) {
    mkdirSync(dirname(join(lib, rel)), { recursive: true });
    writeFileSync(join(lib, rel), text);
  }
  const tsc = await spawnAsync(TSC, ['-p', 'tsconfig.json'], { cwd: lib, env });
  expect(tsc.code, tsc.out + tsc.err).toBe(0);
  const rep = await kiln(['represent', '.'], lib);
  expect(rep.code, rep.err).toBe(0);
  expect(rep.out).toMatch(/kiln represent: dist\/kiln\.rep: 8 exports, 7 covered \(uncovered: 1 type-only\)/);
  // The judge: the built JS itself, imported before the consumer ever sees the package.
  built = (await import(pathToFileURL(join(lib, 'dist/index.js')).href)) as typeof built;
  consumer = temp('consumer');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  installRepOnly(consumer, lib);
}, 120_000);

const outcome = (f: () => unknown) => {
  try {
    return { result: f() };
  } catch (e) {
    return { threw: { name: (e as Error).name, message: (e as Error).message } };
  }
};

describe('kiln represent (after a wrapped tool)', () => {
  it('writes the same bytes again and from a copy at another path', async () => {
    const first = readFileSync(join(lib, 'dist/kiln.rep'));
    const copy = join(temp('copy'), 'deeper/path/lib');
    cpSync(lib, copy, { recursive: true, filter: (s) => !s.includes('.kiln-store') });
    const [again, there] = await Promise.all([kiln(['represent'], lib), kiln(['represent', 'deeper/path/lib'], dirname(dirname(dirname(copy))))]);
    expect(again.code, again.err).toBe(0);
    expect(there.code, there.err).toBe(0);
    expect(readFileSync(join(lib, 'dist/kiln.rep')).equals(first)).toBe(true);
    expect(readFileSync(join(copy, 'dist/kiln.rep')).equals(first)).toBe(true);
    expect(first.includes(Buffer.from(lib))).toBe(false);
  });
});

describe('kiln call (a consumer without the source or the JS)', () => {
  it('answers as import() of the built JS does: results, defaults, values, thrown errors', async () => {
    expect(existsSync(join(consumer, 'node_modules', PKG, 'dist/index.js'))).toBe(false);
    const cases: { target: string; args: unknown[]; expected: ReturnType<typeof outcome> }[] = [
      { target: `${PKG}#add`, args: [2, 3], expected: outcome(() => built.add!(2, 3)) },
      { target: `${PKG}#add`, args: [5], expected: outcome(() => built.add!(5)) },
      { target: `${PKG}#plus`, args: [1e7, 1], expected: outcome(() => built.plus!(1e7, 1)) },
      { target: `${PKG}#div`, args: [9, 3], expected: outcome(() => built.div!(9, 3)) },
      { target: `${PKG}#div`, args: [1, 0], expected: outcome(() => built.div!(1, 0)) },
      { target: `${PKG}#greet`, args: ['  Ada '], expected: outcome(() => built.greet!('  Ada ')) },
      { target: `${PKG}#greet`, args: ['Bo', { loud: true }], expected: outcome(() => built.greet!('Bo', { loud: true })) },
    ];
    const runs = await Promise.all(cases.map((c) => kiln(['call', c.target, '--args', JSON.stringify(c.args), '--format', 'json'], consumer)));
    runs.forEach((r, i) => {
      const c = cases[i]!;
      expect(JSON.parse(r.out), `${c.target} ${JSON.stringify(c.args)}: ${r.err}`).toEqual({ surface: c.target, ...c.expected });
      expect(r.code).toBe('threw' in c.expected ? 1 : 0);
    });
    expect(cases.some((c) => 'threw' in c.expected)).toBe(true);
    const text = await kiln(['call', `${PKG}#div`, '--args', '[1,0]'], consumer);
    expect(text.out.trim()).toBe(`${PKG}#div threw RangeError: division by zero`);
  });

  it('constructs a class export, prints a value export given no --args and refuses one given some; JSON says what it cannot carry', async () => {
    const [cls, value, valueArgs, fnText, fnJson, undef] = await Promise.all([
      kiln(['call', `${PKG}#Tally`, '--args', '[{"start":2}]', '--format', 'json'], consumer),
      kiln(['call', `${PKG}#greeting`, '--format', 'json'], consumer),
      kiln(['call', `${PKG}#greeting`, '--args', '[1]'], consumer),
      kiln(['call', `${PKG}#picker`, '--args', '["a"]'], consumer),
      kiln(['call', `${PKG}#picker`, '--args', '["a"]', '--format', 'json'], consumer),
      kiln(['call', `${PKG}#add`, '--args', '[1, null]', '--format', 'json'], consumer),
    ]);
    expect([cls.code, cls.err]).toEqual([0, '']);
    const t0 = Date.now();
    const timed = await kiln(['call', `${PKG}#Tally`], consumer);
    expect(timed.code).toBe(0);
    expect(Date.now() - t0, 'kiln call waited for the timer the constructed instance started').toBeLessThan(30_000);
    expect(JSON.parse(cls.out)).toEqual({ surface: `${PKG}#Tally`, result: { count: 2 }, notJson: '$ is a Tally', inspect: 'Tally { count: 2 }' });
    expect([value.code, JSON.parse(value.out)]).toEqual([0, { surface: `${PKG}#greeting`, result: built.greeting }]);
    expect([valueArgs.code, valueArgs.out]).toEqual([1, '']);
    expect(valueArgs.err).toContain(`KILN_REP_NOT_CALLABLE: ${PKG}@1.2.3: ${PKG}#greeting is an object, not a function; nothing was called`);
    expect([fnText.code, fnText.out.trim()]).toEqual([0, '[Function (anonymous)]']);
    expect(JSON.parse(fnJson.out)).toEqual({ surface: `${PKG}#picker`, result: null, notJson: '$ is a function', inspect: '[Function (anonymous)]' });
    // A JSON-faithful result carries no note.
    expect(JSON.parse(undef.out)).toEqual({ surface: `${PKG}#add`, ...outcome(() => built.add!(1, null)) });
  }, 120_000);

  it('refuses before any result, coded, naming the package and version', async () => {
    const [uncovered, unknown, missingPkg] = await Promise.all([
      kiln(['call', `${PKG}#Options`], consumer),
      kiln(['call', `${PKG}#nothing`], consumer),
      kiln(['call', '@fx/absent#x'], consumer),
    ]);
    expect(uncovered.code).toBe(1);
    expect(uncovered.err).toContain('KILN_REP_UNCOVERED');
    expect(uncovered.err).toContain(`${PKG}@1.2.3`);
    expect(uncovered.err).toContain('KILN_REP_UNCOVERED_TYPE_ONLY');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(new RegExp(`KILN_REP_NO_SUCH_EXPORT: ${PKG}@1\\.2\\.3 has no entry ${PKG}#nothing`));
    expect(missingPkg.code).toBe(2);
    expect(uncovered.out + unknown.out).toBe('');

    // No representation; a future format; a damaged payload: each its own consumer.
    const none = temp('none');
    rmSync(join(installRepOnly(none, lib), 'dist/kiln.rep'));
    const future = temp('future');
    const futureFile = join(installRepOnly(future, lib), 'dist/kiln.rep');
    const bytes = readFileSync(futureFile);
    bytes.writeUInt32LE(99, 8); // the format field (SPEC §7: offset 8 in every version)
    writeFileSync(futureFile, bytes);
    const damaged = temp('damaged');
    const damagedFile = join(installRepOnly(damaged, lib), 'dist/kiln.rep');
    const d = readFileSync(damagedFile);
    d[d.length - 3] ^= 0x40; // inside the last payload's stored bytes
    writeFileSync(damagedFile, d);
    const [noRep, futureRun, damagedRuns] = await Promise.all([
      kiln(['call', `${PKG}#add`, '--args', '[1,2]'], none),
      kiln(['call', `${PKG}#add`, '--args', '[1,2]', '--format', 'json'], future),
      Promise.all(['add', 'div', 'greet', 'greeting', 'plus', 'Tally', 'picker'].map((n) => kiln(['call', `${PKG}#${n}`, '--args', '[1,2]'], damaged))),
    ]);
    expect(noRep.code).toBe(1);
    expect(noRep.err).toContain('KILN_REP_NOT_FOUND');
    expect(futureRun.code).toBe(1);
    expect(futureRun.out).toBe('');
    const envelope = JSON.parse(futureRun.err.trim().split('\n').pop()!) as { code: string; message: string };
    expect(envelope.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect(envelope.message).toContain(PKG);
    expect(envelope.message).toContain('1.2.3');
    expect(envelope.message).toMatch(/99/);
    // One of the payloads is damaged: the export that needs it is refused by integrity, never run.
    const refused = damagedRuns.filter((r) => r.err.includes('KILN_REP_INTEGRITY'));
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect([r.code, r.out]).toEqual([1, '']);
  });
});

describe('kiln inspect representation', () => {
  it('reports a directory, an installed package, a tarball, "none published" and "unreadable version"', async () => {
    const pack = await spawnAsync('npm', ['pack', '--json', '--pack-destination', temp('tgz')], { cwd: lib, env });
    expect(pack.code, pack.err).toBe(0);
    const packed = JSON.parse(pack.out) as { filename: string; files: { path: string }[] }[];
    expect(packed[0]!.files.map((f) => f.path)).toContain('dist/kiln.rep');
    const tgz = join(dirs[dirs.length - 1]!, packed[0]!.filename.replace(/^@/, '').replace('/', '-'));
    const bare = temp('bare');
    writeFileSync(join(bare, 'package.json'), JSON.stringify({ name: '@fx/bare', version: '0.0.1', exports: './dist/index.js' }));
    const future = temp('inspect-future');
    const futureDir = installRepOnly(future, lib);
    const f = readFileSync(join(futureDir, 'dist/kiln.rep'));
    f.writeUInt32LE(3, 8);
    writeFileSync(join(futureDir, 'dist/kiln.rep'), f);
    const [dir, installed, tarball, json, none, unreadable] = await Promise.all([
      kiln(['inspect', 'representation', lib], lib),
      kiln(['inspect', 'representation', PKG], consumer),
      kiln(['inspect', 'representation', tgz], lib),
      kiln(['inspect', 'representation', '.', '--format', 'json'], lib),
      kiln(['inspect', 'representation', bare], bare),
      kiln(['inspect', 'representation', PKG], future),
    ]);
    for (const r of [dir, installed, tarball, json, none, unreadable]) expect(r.code, r.err).toBe(0);
    expect(dir.out).toContain(`${PKG}@1.2.3: dist/kiln.rep, format 2`);
    expect(dir.out).toMatch(/covered {4}@fx\/rep-lib#add {2}\(function\) → e-[0-9a-f]{16}\.js/);
    expect(dir.out).toMatch(/uncovered {2}@fx\/rep-lib#Options {2}\(interface\) KILN_REP_UNCOVERED_TYPE_ONLY: /);
    expect(dir.out).toContain('manifest identities missing from the index: none');
    // Installed with only the manifest and kiln.rep: nothing to read the surface from, so not claimed.
    expect(installed.out).toContain('manifest identities missing from the index: not checked');
    expect(tarball.out).toContain(`${PKG}@1.2.3: dist/kiln.rep, format 2`);
    expect(tarball.out).toContain('missing from the index: none');
    const report = JSON.parse(json.out) as { status: string; counts: { entries: number; covered: number }; entries: { surface: string; covered: boolean }[]; missing: string[] };
    expect(report).toMatchObject({ status: 'ok', counts: { entries: 8, covered: 7 }, missing: [] });
    expect(report.entries.map((e) => e.surface)).toEqual([`${PKG}#Options`, `${PKG}#Tally`, `${PKG}#add`, `${PKG}#div`, `${PKG}#greet`, `${PKG}#greeting`, `${PKG}#picker`, `${PKG}#plus`]);
    expect(none.out).toContain('@fx/bare@0.0.1: none published (no dist/kiln.rep)');
    expect(unreadable.out).toMatch(/unreadable version \(format 3\)/);
  });
});
