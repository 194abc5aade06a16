/**
 * Issue 2, point 10 — the slice store (cacache):
 * - slices are keyed by (content hash, extractor version, variant, digest schema), written if absent
 *   and integrity-checked on read;
 * - a second run over unchanged files parses nothing and gives the same report;
 * - two copies of one tree at different absolute paths give byte-identical reports and share slices;
 * - a corrupted entry (content bytes overwritten, content truncated, or well-formed but wrong data put
 *   under the key) is detected as KILN_STORE_CORRUPT, discarded, regenerated, and the report is still
 *   the one a store-less run gives;
 * - a store that cannot be created gives KILN_STORE_UNAVAILABLE and still the right answer.
 */
import { createHash } from 'node:crypto';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cacache from 'cacache';
import { afterAll, describe, expect, it } from 'vitest';
import {
  digestTree,
  extractSlice,
  fileKind,
  readSlice,
  sha256Hex,
  sliceKey,
  writeSlice,
  DIGEST_SCHEMA,
  EXTRACTOR_VERSION,
  PREVIOUS_DIGEST_SCHEMA,
  type DigestReport,
} from '@kiln/core';

const temps: string[] = [];
async function tempDir(prefix = 'kiln-store-'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

const FILES: Record<string, string> = {
  'package.json': JSON.stringify({ name: '@fx/store', exports: { '.': './src/index.ts', './util': './src/util.ts' } }),
  'src/index.ts': `export { twice } from './util';\nexport function main(n: number): number {\n  const helper = (k: number) => k + 1;\n  return helper(n) * 2;\n}\nexport class Box<T> { constructor(readonly value: T) {} map<U>(f: (t: T) => U) { return new Box(f(this.value)); } }\n`,
  'src/util.ts': `/** Doubles. */\nexport const twice = (x: number) => x * 2;\nexport interface Options { verbose?: boolean }\n`,
  'src/copy.ts': `/** Doubles. */\nexport const twice = (x: number) => x * 2;\nexport interface Options { verbose?: boolean }\n`,
  'src/view.tsx': `export function View(props: { name: string }) { return <div className="v">{props.name}</div>; }\n`,
  'src/legacy.js': `/** @param {number} a */\nexport function legacy(a) { return a ?? 0; }\nmodule.exports = { legacy };\n`,
  'src/types.d.ts': `export declare function declared(x: string): number;\n`,
};
const SOURCES = Object.keys(FILES).filter((f) => f !== 'package.json').sort();

async function makeTree(root: string, files = FILES): Promise<string> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(join(root, rel, '..'), { recursive: true });
    await writeFile(join(root, rel), text);
  }
  return root;
}

/** The report without what legitimately differs between runs (timings, hit counts). */
const canonical = (r: DigestReport, dropCodes: string[] = []) =>
  JSON.stringify({ ...r, stats: undefined, diagnostics: r.diagnostics.filter((d) => !dropCodes.includes(d.code)) });

/** Where the store keeps the content of the slice for one source file. */
async function entryOf(store: string, root: string, rel: string) {
  const bytes = await readFile(join(root, rel));
  const key = sliceKey(sha256Hex(bytes), fileKind(rel)!.variant, DIGEST_SCHEMA);
  const info = await cacache.get.info(store, key);
  expect(info, `store entry for ${rel}`).toBeTruthy();
  return { key, info: info!, bytes };
}

describe('keys', () => {
  it('a slice key names content hash, extractor version, variant and digest schema — and nothing else', () => {
    const h = sha256Hex(Buffer.from('x'));
    const k = sliceKey(h, 'ts', DIGEST_SCHEMA);
    expect(k).toContain(h);
    expect(k).toContain(`x${EXTRACTOR_VERSION}`);
    expect(k).toContain(`d${DIGEST_SCHEMA}`);
    expect(k).toContain('/ts/');
    expect(new Set([k, sliceKey(h, 'tsx', DIGEST_SCHEMA), sliceKey(h, 'ts', PREVIOUS_DIGEST_SCHEMA), sliceKey(sha256Hex(Buffer.from('y')), 'ts', DIGEST_SCHEMA)]).size).toBe(4);
    expect(k).not.toMatch(/[/\\](tmp|home|Users|work)[/\\]/);
  });

  it('writes if absent: a second write of the same key leaves the entry untouched', async () => {
    const store = join(await tempDir(), 'store');
    const slice = extractSlice(Buffer.from('export const a = 1;\n'), 'ts');
    await writeSlice(store, slice);
    const first = await cacache.get.info(store, sliceKey(slice.contentHash, 'ts', DIGEST_SCHEMA));
    await writeSlice(store, { ...slice, decls: [] }); // would differ if it were written
    const second = await cacache.get.info(store, sliceKey(slice.contentHash, 'ts', DIGEST_SCHEMA));
    expect(second!.integrity).toBe(first!.integrity);
    expect(second!.time).toBe(first!.time);
    const r = await readSlice(store, slice.contentHash, 'ts', DIGEST_SCHEMA);
    expect(r.status).toBe('hit');
    expect(r.status === 'hit' && r.slice).toEqual(slice);
  });
});

describe('warm runs', () => {
  it.each([2, 0])('a second run over unchanged files parses nothing and gives the same report (workers: %i)', async (workers) => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const cold = await digestTree(root, { store, workers });
    expect(cold.stats).toMatchObject({ files: SOURCES.length, parsed: SOURCES.length, storeHits: 0, corruptEntries: 0 });
    const warm = await digestTree(root, { store, workers });
    expect(warm.stats).toMatchObject({ files: SOURCES.length, parsed: 0, storeHits: SOURCES.length, corruptEntries: 0, workers: 0 });
    expect(canonical(warm)).toBe(canonical(cold));
    // And both equal a run without any store.
    expect(canonical(await digestTree(root, { store: false, workers }))).toBe(canonical(cold));
    // One edited file is the only one parsed again.
    await writeFile(join(root, 'src/util.ts'), FILES['src/util.ts']!.replace('x * 2', 'x * 3'));
    const edited = await digestTree(root, { store, workers });
    expect(edited.stats).toMatchObject({ parsed: 1, storeHits: SOURCES.length - 1 });
  });

  it('two copies of a tree at different absolute paths give byte-identical reports and share slices', async () => {
    const a = await makeTree(join(await tempDir(), 'one', 'pkg'));
    const b = join(await tempDir(), 'some', 'deeper', 'place', 'pkg-copy');
    await cp(a, b, { recursive: true });
    const store = join(await tempDir(), 'store');
    const ra = await digestTree(a, { store });
    const rb = await digestTree(b, { store });
    expect(ra.stats.parsed).toBe(SOURCES.length);
    expect(rb.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length });
    const ja = canonical(ra);
    expect(canonical(rb)).toBe(ja);
    // No absolute path leaks into the report (or into the slices it came from).
    expect(ja).not.toContain(a);
    expect(ja).not.toContain(b);
    expect(ja).not.toContain(tmpdir());
    for (const rel of SOURCES) {
      const { info } = await entryOf(store, a, rel);
      const text = (await readFile(info.path)).toString('utf8');
      expect(text).not.toContain(tmpdir());
    }
    // Identical files in one tree share one slice too.
    const x = await entryOf(store, a, 'src/util.ts');
    const y = await entryOf(store, a, 'src/copy.ts');
    expect(x.key).toBe(y.key);
  });
});

describe('corrupted entries are detected, discarded and regenerated', () => {
  type Corruption = (ctx: { store: string; root: string; rel: string; key: string; path: string; size: number }) => Promise<void>;
  const writable = async (path: string) => chmod(path, 0o644).catch(() => undefined);

  const corruptions: [string, Corruption][] = [
    [
      'content bytes overwritten (same size)',
      async ({ path, size }) => {
        await writable(path);
        await writeFile(path, Buffer.alloc(size, 0x7b));
      },
    ],
    [
      'content truncated',
      async ({ path, size }) => {
        await writable(path);
        await truncate(path, Math.floor(size / 2));
      },
    ],
    [
      'content emptied',
      async ({ path }) => {
        await writable(path);
        await truncate(path, 0);
      },
    ],
    [
      'valid integrity, not JSON',
      async ({ store, key }) => {
        await cacache.put(store, key, Buffer.from('this is not { json'));
      },
    ],
    [
      'valid integrity, JSON that is not a slice',
      async ({ store, key }) => {
        await cacache.put(store, key, Buffer.from(JSON.stringify({ hello: 'world' })));
      },
    ],
    [
      'valid integrity, JSON null',
      async ({ store, key }) => {
        await cacache.put(store, key, Buffer.from('null'));
      },
    ],
    [
      "valid integrity, another file's slice",
      async ({ store, key, root }) => {
        const other = extractSlice(await readFile(join(root, 'src/util.ts')), 'ts');
        await cacache.put(store, key, Buffer.from(JSON.stringify(other)));
      },
    ],
    [
      'valid integrity, right header but no declarations list',
      async ({ store, key, root, rel }) => {
        const own = extractSlice(await readFile(join(root, rel)), fileKind(rel)!.variant);
        await cacache.put(store, key, Buffer.from(JSON.stringify({ ...own, decls: 'gone', module: null })));
      },
    ],
    [
      'valid integrity, right header but another extractor version',
      async ({ store, key, root, rel }) => {
        const own = extractSlice(await readFile(join(root, rel)), fileKind(rel)!.variant);
        await cacache.put(store, key, Buffer.from(JSON.stringify({ ...own, extractor: EXTRACTOR_VERSION + 100 })));
      },
    ],
  ];

  it.each(corruptions)('%s', async (_name, corrupt) => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 2 });
    const rel = 'src/index.ts';
    const { key, info } = await entryOf(store, root, rel);
    const size = (await stat(info.path)).size;
    await corrupt({ store, root, rel, key, path: info.path, size });

    for (const workers of [2, 0]) {
      const r = await digestTree(root, { store, workers });
      const corruptDiags = r.diagnostics.filter((d) => d.code === 'KILN_STORE_CORRUPT');
      if (workers === 2) {
        // Detected, with a stable code naming the file, and recomputed.
        expect(corruptDiags.map((d) => d.file)).toEqual([rel]);
        expect(corruptDiags[0]!.severity).toBe('warning');
        expect(r.stats).toMatchObject({ corruptEntries: 1, parsed: 1, storeHits: SOURCES.length - 1 });
      } else {
        // Regenerated by the previous run: the store is whole again.
        expect(corruptDiags).toEqual([]);
        expect(r.stats).toMatchObject({ corruptEntries: 0, parsed: 0, storeHits: SOURCES.length });
      }
      // The answer is the one a store-less run gives.
      expect(canonical(r, ['KILN_STORE_CORRUPT'])).toBe(expected);
    }
    // The regenerated entry reads back as a verified hit.
    const back = await readSlice(store, sha256Hex(await readFile(join(root, rel))), 'ts', DIGEST_SCHEMA);
    expect(back.status).toBe('hit');
    await expect(cacache.verify(store)).resolves.toMatchObject({ badContentCount: 0 });
  });

  it('a garbled index bucket costs a re-parse, never a wrong answer', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 0 });
    const { key } = await entryOf(store, root, 'src/util.ts');
    // cacache's index layout: index-v5/<sha256(key) split 2/2/rest>.
    const bucket = join(store, 'index-v5', ...createHash('sha256').update(key).digest('hex').match(/^(..)(..)(.*)$/)!.slice(1));
    await writeFile(bucket, 'garbage\tnot-json\n\u0000\u0001');
    const r = await digestTree(root, { store, workers: 0 });
    // util.ts and its identical copy share the bucket's key: both are parsed again, nothing else.
    expect(r.stats).toMatchObject({ parsed: 2, storeHits: SOURCES.length - 2 });
    expect(canonical(r, ['KILN_STORE_CORRUPT'])).toBe(expected);
    const again = await digestTree(root, { store, workers: 0 });
    expect(again.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length });
  });

  it('readSlice reports corruption itself, and removes the entry', async () => {
    const store = join(await tempDir(), 'store');
    const bytes = Buffer.from('export function f() { return 1; }\n');
    const slice = extractSlice(bytes, 'ts');
    await writeSlice(store, slice);
    const info = await cacache.get.info(store, sliceKey(slice.contentHash, 'ts', DIGEST_SCHEMA));
    await chmod(info!.path, 0o644).catch(() => undefined);
    await writeFile(info!.path, Buffer.alloc((await stat(info!.path)).size, 0x20));
    const r = await readSlice(store, slice.contentHash, 'ts', DIGEST_SCHEMA);
    expect(r.status).toBe('corrupt');
    expect(await readSlice(store, slice.contentHash, 'ts', DIGEST_SCHEMA)).toEqual({ status: 'miss' });
  });
});

describe('an unusable store', () => {
  it.each([2, 0])('a store path under a regular file gives KILN_STORE_UNAVAILABLE and the right answer (workers: %i)', async (workers) => {
    const root = await makeTree(await tempDir());
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    const blocker = join(await tempDir(), 'not-a-directory');
    await writeFile(blocker, 'x');
    const r = await digestTree(root, { store: join(blocker, 'store'), workers });
    const unavailable = r.diagnostics.filter((d) => d.code === 'KILN_STORE_UNAVAILABLE');
    // Reported once for the run (it is about the store, not about any one file)...
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]!.file).toBeUndefined();
    expect(unavailable[0]!.severity).toBe('warning');
    // ...and the answer is unaffected.
    expect(r.stats).toMatchObject({ parsed: SOURCES.length, storeHits: 0 });
    expect(canonical(r, ['KILN_STORE_UNAVAILABLE'])).toBe(expected);
    // The blocking file was not touched.
    expect(await readFile(blocker, 'utf8')).toBe('x');
  });
});
