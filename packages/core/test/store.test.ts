/**
 * Issue 2, point 10 — the slice store (cacache, two levels per ADR 0012; layout in src/store/format.ts):
 * - slices are identified by (content hash, extractor version, variant, digest schema), stored in
 *   content-addressed packs written if absent and integrity-checked on read; a view's manifest maps its
 *   paths to contents and packs; a loose slice (writeSlice) is written if absent;
 * - a cold run writes O(1) entries (one pack, one manifest, the registry of views), a warm run writes
 *   none and parses nothing, and gives the same report;
 * - two copies of one tree at different absolute paths give byte-identical reports and share slices
 *   (the second copy parses nothing); no absolute path is stored;
 * - a corrupted entry — pack or manifest bytes overwritten, truncated or emptied; well-formed data that
 *   is not a manifest or pack; a pack whose slice is another content's, malformed, or of another
 *   extractor — is detected as KILN_STORE_CORRUPT, discarded, regenerated, and the report is still the
 *   one a store-less run gives;
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
  DIGEST_SCHEMA,
  EXTRACTOR_VERSION,
  PREVIOUS_DIGEST_SCHEMA,
  type DigestReport,
} from '@kiln/core';
import { createDigestPool } from '../dist/pool/pool.js';
import { encodePack, packItemOf } from '../dist/store/pack.js';
import { extractSlice } from '../dist/facts/extract.js';
import { fileKind } from '../dist/parse/language.js';
import { manifestKey, sliceKey, viewIdOf, viewReportKey } from '../dist/store/format.js';
import { readSlice } from '../dist/store/read-slice.js';
import { sha256Hex } from '../dist/digest/hash.js';
import { reportInput } from '../dist/view/report-memo.js';
import { writeSlice } from '../dist/store/write-slice.js';

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

type ManifestJson = { packs: [string, string, number][]; files: [string, string, string, number][] } & Record<string, unknown>;

/** The view's manifest (key, cacache entry, parsed JSON). */
async function manifestOf(store: string, root: string) {
  const key = manifestKey(viewIdOf(root), DIGEST_SCHEMA);
  const info = await cacache.get.info(store, key);
  expect(info, 'manifest entry of the view').toBeTruthy();
  const { data } = await cacache.get(store, key);
  return { key, info: info!, json: JSON.parse(data.toString('utf8')) as ManifestJson };
}

/** Where the store keeps the slice of one source file: the pack its view's manifest names. */
async function entryOf(store: string, root: string, rel: string) {
  const bytes = await readFile(join(root, rel));
  const { json } = await manifestOf(store, root);
  const row = json.files.find((f) => f[0] === rel);
  expect(row, `manifest row for ${rel}`).toBeTruthy();
  expect(row![1]).toBe(sha256Hex(bytes));
  const [key, integrity, size] = json.packs[row![3]]!;
  const info = await cacache.get.info(store, key);
  expect(info, `pack entry for ${rel}`).toBeTruthy();
  expect(info!.integrity).toBe(integrity);
  return { key, info: info!, size, bytes, contentHash: row![1] };
}

/** Replace the view's manifest with a well-formed one (valid integrity) that maps `rel` to `pack`. */
async function pointAt(store: string, root: string, rel: string, pack: Buffer) {
  const { key, json } = await manifestOf(store, root);
  const packKeyName = `kiln-test/pack/${sha256Hex(pack)}`;
  const integrity = await cacache.put(store, packKeyName, pack);
  json.packs.push([packKeyName, String(integrity), pack.length]);
  json.files = json.files.map((f) => (f[0] === rel ? [f[0], f[1], f[2], json.packs.length - 1] : f));
  await cacache.put(store, key, Buffer.from(JSON.stringify(json)));
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

  it('a cold run writes O(1) store entries; a warm run writes none', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    await digestTree(root, { store, workers: 2 });
    const keys = Object.keys(await cacache.ls(store)).sort();
    // One pack, this view's manifest, its memoised report, the registry of views — whatever the number of files.
    expect(keys.map((k) => k.replace(/[0-9a-f]{32,}/g, '<hash>'))).toEqual([
      `kiln/v2/manifest/x${EXTRACTOR_VERSION}/d${DIGEST_SCHEMA}/<hash>`,
      'kiln/v2/pack/<hash>',
      `kiln/v2/report/x${EXTRACTOR_VERSION}/d${DIGEST_SCHEMA}/<hash>`,
      `kiln/v2/views/x${EXTRACTOR_VERSION}/d${DIGEST_SCHEMA}`,
    ]);
    const before = await manifestOf(store, root);
    const warm = await digestTree(root, { store, workers: 2 });
    expect(warm.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length });
    const after = await manifestOf(store, root);
    expect(after.info.time).toBe(before.info.time); // not rewritten
    expect(Object.keys(await cacache.ls(store)).sort()).toEqual(keys);
  });

  it('a manifest never names more than a few packs: edits are repacked', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    await digestTree(root, { store, workers: 0 });
    for (let i = 0; i < 12; i++) {
      await writeFile(join(root, 'src/util.ts'), FILES['src/util.ts']!.replace('x * 2', `x * ${i + 3}`));
      const r = await digestTree(root, { store, workers: 0 });
      expect(r.stats).toMatchObject({ parsed: 1, storeHits: SOURCES.length - 1 });
      const { json } = await manifestOf(store, root);
      expect(json.packs.length).toBeLessThanOrEqual(8);
      expect(json.files.map((f) => f[0])).toEqual(SOURCES);
    }
    expect(canonical(await digestTree(root, { store, workers: 0 }))).toBe(canonical(await digestTree(root, { store: false, workers: 0 })));
  });

  it('runs on part of a view keep the rest of its manifest; deleted files leave it', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    await digestTree(root, { store, workers: 0 });
    // A file list (as a tsconfig gives) and a single file: only those entries are touched.
    const part = await digestTree(root, { store, workers: 0, files: ['src/util.ts', 'src/view.tsx'] });
    expect(part.stats).toMatchObject({ files: 2, parsed: 0, storeHits: 2 });
    await digestTree(join(root, 'src/index.ts'), { store, workers: 0 });
    expect((await manifestOf(store, root)).json.files.map((f) => f[0])).toEqual(SOURCES);
    await rm(join(root, 'src/legacy.js'));
    const whole = await digestTree(root, { store, workers: 0 });
    expect(whole.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length - 1 });
    expect((await manifestOf(store, root)).json.files.map((f) => f[0])).toEqual(SOURCES.filter((f) => f !== 'src/legacy.js'));
  });

  it('a caller-owned pool is used for misses and left open', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const pool = createDigestPool(2);
    try {
      const cold = await digestTree(root, { store, pool });
      expect(cold.stats).toMatchObject({ parsed: SOURCES.length, storeHits: 0, workers: 2 });
      const warm = await digestTree(root, { store, pool });
      expect(warm.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length, workers: 0 });
      expect(canonical(warm)).toBe(canonical(cold));
      // Still usable: it was not closed by digestTree.
      const again = await digestTree(root, { store: false, pool });
      expect(canonical(again)).toBe(canonical(cold));
    } finally {
      await pool.destroy();
    }
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
    // No absolute path leaks into the report, or into anything stored (keys, manifests, packs).
    expect(ja).not.toContain(a);
    expect(ja).not.toContain(b);
    expect(ja).not.toContain(tmpdir());
    const listed = await cacache.ls(store);
    expect(JSON.stringify(Object.keys(listed))).not.toContain(tmpdir());
    for (const entry of Object.values(listed)) {
      expect((await readFile(entry.path)).toString('utf8')).not.toContain(tmpdir());
    }
    for (const rel of SOURCES) {
      // The second view's slices are the first view's: the same pack.
      const x = await entryOf(store, a, rel);
      const y = await entryOf(store, b, rel);
      expect(y.info.integrity).toBe(x.info.integrity);
    }
    // Identical files in one tree share one slice too: one content, one place in the pack.
    const x = await entryOf(store, a, 'src/util.ts');
    const y = await entryOf(store, a, 'src/copy.ts');
    expect(y.contentHash).toBe(x.contentHash);
    const head = JSON.parse((await readFile(x.info.path)).toString('utf8').split('\n')[0]!) as { slices: string[][] };
    expect(head.slices.filter((e) => e[0] === x.contentHash)).toHaveLength(1);
  });
});

describe('corrupted entries are detected, discarded and regenerated', () => {
  type Ctx = { store: string; root: string; rel: string; packPath: string; packSize: number; manifestPath: string; manifestSize: number };
  type Corruption = (ctx: Ctx) => Promise<void>;
  const writable = async (path: string) => chmod(path, 0o644).catch(() => undefined);
  const ALL = 'every file of the pack';
  const VIEW = 'the manifest (then every file)';
  const ONE = 'that file only';

  /** A pack (valid integrity) whose header says it holds `rel`'s content, with `body` as the slice. */
  const craftedPack = async (root: string, rel: string, body: (own: ReturnType<typeof extractSlice>) => unknown) => {
    const own = extractSlice(await readFile(join(root, rel)), fileKind(rel)!.variant);
    return encodePack([{ ...packItemOf(own), json: JSON.stringify(body(own)) }]);
  };

  const corruptions: [string, string, Corruption][] = [
    [
      'pack bytes overwritten (same size)',
      ALL,
      async ({ packPath, packSize }) => {
        await writable(packPath);
        await writeFile(packPath, Buffer.alloc(packSize, 0x7b));
      },
    ],
    [
      'pack truncated',
      ALL,
      async ({ packPath, packSize }) => {
        await writable(packPath);
        await truncate(packPath, Math.floor(packSize / 2));
      },
    ],
    [
      'pack emptied',
      ALL,
      async ({ packPath }) => {
        await writable(packPath);
        await truncate(packPath, 0);
      },
    ],
    [
      'manifest bytes overwritten (same size)',
      VIEW,
      async ({ manifestPath, manifestSize }) => {
        await writable(manifestPath);
        await writeFile(manifestPath, Buffer.alloc(manifestSize, 0x20));
      },
    ],
    [
      'manifest truncated',
      VIEW,
      async ({ manifestPath, manifestSize }) => {
        await writable(manifestPath);
        await truncate(manifestPath, Math.floor(manifestSize / 2));
      },
    ],
    [
      'manifest: valid integrity, not JSON',
      VIEW,
      async ({ store, root }) => {
        await cacache.put(store, manifestKey(viewIdOf(root), DIGEST_SCHEMA), Buffer.from('this is not { json'));
      },
    ],
    [
      'manifest: valid integrity, JSON that is not a manifest',
      VIEW,
      async ({ store, root }) => {
        await cacache.put(store, manifestKey(viewIdOf(root), DIGEST_SCHEMA), Buffer.from(JSON.stringify({ hello: 'world' })));
      },
    ],
    [
      'manifest: valid integrity, JSON null',
      VIEW,
      async ({ store, root }) => {
        await cacache.put(store, manifestKey(viewIdOf(root), DIGEST_SCHEMA), Buffer.from('null'));
      },
    ],
    [
      'manifest names, for one file, content that is not a pack (valid integrity)',
      ONE,
      async ({ store, root, rel }) => {
        await pointAt(store, root, rel, Buffer.from('this is not a pack\n{}'));
      },
    ],
    [
      "pack: valid integrity, another file's slice under this content",
      ONE,
      async ({ store, root, rel }) => {
        const other = extractSlice(await readFile(join(root, 'src/util.ts')), 'ts');
        await pointAt(store, root, rel, await craftedPack(root, rel, () => other));
      },
    ],
    [
      'pack: valid integrity, right header but no declarations list',
      ONE,
      async ({ store, root, rel }) => {
        await pointAt(store, root, rel, await craftedPack(root, rel, (own) => ({ ...own, decls: 'gone', module: null })));
      },
    ],
    [
      'pack: valid integrity, right header but another extractor version',
      ONE,
      async ({ store, root, rel }) => {
        await pointAt(store, root, rel, await craftedPack(root, rel, (own) => ({ ...own, extractor: EXTRACTOR_VERSION + 100 })));
      },
    ],
    [
      'pack: valid integrity, not JSON where the slice should be',
      ONE,
      async ({ store, root, rel }) => {
        const own = extractSlice(await readFile(join(root, rel)), fileKind(rel)!.variant);
        await pointAt(store, root, rel, encodePack([{ ...packItemOf(own), json: 'not { json' }]));
      },
    ],
  ];

  it.each(corruptions)('%s (%s)', async (_name, scope, corrupt) => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    // No memoised report: it would answer the next run without reading a slice (its own damage is
    // covered in 'the view report memo' below); these cases are about slices, packs and manifests.
    await digestTree(root, { store, workers: 2, reportMemo: false });
    const rel = 'src/index.ts';
    const { info } = await entryOf(store, root, rel);
    const m = await manifestOf(store, root);
    await corrupt({
      store,
      root,
      rel,
      packPath: info.path,
      packSize: (await stat(info.path)).size,
      manifestPath: m.info.path,
      manifestSize: (await stat(m.info.path)).size,
    });

    for (const workers of [2, 0]) {
      const r = await digestTree(root, { store, workers });
      const corruptDiags = r.diagnostics.filter((d) => d.code === 'KILN_STORE_CORRUPT');
      if (workers === 2) {
        // Detected, with a stable code (naming the file where it is about one), and recomputed.
        expect(corruptDiags.length).toBeGreaterThan(0);
        for (const d of corruptDiags) expect(d.severity).toBe('warning');
        if (scope === ONE) {
          expect(corruptDiags.map((d) => d.file)).toEqual([rel]);
          expect(r.stats).toMatchObject({ corruptEntries: 1, parsed: 1, storeHits: SOURCES.length - 1 });
        } else if (scope === ALL) {
          expect(corruptDiags.map((d) => d.file).sort()).toEqual(SOURCES);
          expect(r.stats).toMatchObject({ corruptEntries: SOURCES.length, parsed: SOURCES.length, storeHits: 0 });
        } else {
          expect(corruptDiags.map((d) => d.file)).toEqual([undefined]);
          expect(r.stats).toMatchObject({ corruptEntries: 1, parsed: SOURCES.length, storeHits: 0 });
        }
      } else {
        // Regenerated by the previous run: the store is whole again.
        expect(corruptDiags).toEqual([]);
        expect(r.stats).toMatchObject({ corruptEntries: 0, parsed: 0, storeHits: SOURCES.length });
      }
      // The answer is the one a store-less run gives.
      expect(canonical(r, ['KILN_STORE_CORRUPT'])).toBe(expected);
    }
    // The regenerated slice reads back as a verified hit.
    const back = await readSlice(store, sha256Hex(await readFile(join(root, rel))), 'ts', DIGEST_SCHEMA);
    expect(back.status).toBe('hit');
    await expect(cacache.verify(store)).resolves.toMatchObject({ badContentCount: 0 });
  });

  it('a garbled index bucket costs a re-parse, never a wrong answer', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 0 });
    // cacache's index layout: index-v5/<sha256(key) split 2/2/rest>.
    const bucketOf = (key: string) => join(store, 'index-v5', ...createHash('sha256').update(key).digest('hex').match(/^(..)(..)(.*)$/)!.slice(1));
    // The pack's bucket: packs are read by integrity through the manifest, so nothing is lost.
    const { key: packEntry } = await entryOf(store, root, 'src/util.ts');
    await writeFile(bucketOf(packEntry), 'garbage\tnot-json\n\u0000\u0001');
    const r1 = await digestTree(root, { store, workers: 0 });
    expect(r1.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length });
    expect(canonical(r1, ['KILN_STORE_CORRUPT'])).toBe(expected);
    // The manifest's bucket: the view's manifest is gone, every file is parsed again, nothing else.
    const { key } = await manifestOf(store, root);
    await writeFile(bucketOf(key), 'garbage\tnot-json\n\u0000\u0001');
    const r = await digestTree(root, { store, workers: 0 });
    expect(r.stats).toMatchObject({ parsed: SOURCES.length, storeHits: 0 });
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

describe('the view report memo', () => {
  const memoEntry = async (store: string, root: string) => cacache.get.info(store, viewReportKey(viewIdOf(root), DIGEST_SCHEMA));

  it('a warm run answers from the memo without reading a slice, and equals a store-less run', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 0 });
    expect(await memoEntry(store, root)).toBeTruthy();
    // Every pack made unreadable: a run that decoded any slice would report KILN_STORE_CORRUPT.
    const { info } = await entryOf(store, root, 'src/index.ts');
    await chmod(info.path, 0o644).catch(() => undefined);
    await truncate(info.path, 0);
    const warm = await digestTree(root, { store, workers: 0 });
    expect(warm.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length, corruptEntries: 0 });
    expect(canonical(warm)).toBe(expected);
    // Without the memo, the same store is read slice by slice (and the damage is found).
    const slices = await digestTree(root, { store, workers: 0, reportMemo: false });
    expect(slices.stats.corruptEntries).toBe(SOURCES.length);
    expect(canonical(slices, ['KILN_STORE_CORRUPT'])).toBe(expected);
  });

  it.each([
    ['a source edit', async (root: string) => writeFile(join(root, 'src/util.ts'), FILES['src/util.ts']!.replace('x * 2', 'x * 3'))],
    ['a new file', async (root: string) => writeFile(join(root, 'src/extra.ts'), 'export const extra = 1;\n')],
    ['a deleted file', async (root: string) => rm(join(root, 'src/copy.ts'))],
    ['a renamed file', async (root: string) => { await writeFile(join(root, 'src/moved.ts'), FILES['src/copy.ts']!); await rm(join(root, 'src/copy.ts')); }],
    ['a package.json edit (an entry point removed)', async (root: string) => writeFile(join(root, 'package.json'), JSON.stringify({ name: '@fx/store', exports: { '.': './src/index.ts' } }))],
    ['a package rename', async (root: string) => writeFile(join(root, 'package.json'), JSON.stringify({ name: '@fx/renamed', exports: { '.': './src/index.ts', './util': './src/util.ts' } }))],
    ['a tsconfig outDir over the sources', async (root: string) => writeFile(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { outDir: 'src' } }))],
  ])('never answers for other inputs: %s', async (_name, edit) => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    await digestTree(root, { store, workers: 0 });
    await digestTree(root, { store, workers: 0 }); // the memo is in use
    await edit(root);
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    const after = await digestTree(root, { store, workers: 0 });
    expect(canonical(after)).toBe(expected);
    // ... and the memo now holds the new answer.
    expect(canonical(await digestTree(root, { store, workers: 0 }))).toBe(expected);
  });

  it('the input digest covers every input of the assembly', () => {
    const base: Parameters<typeof reportInput>[0] = {
      pkg: { name: 'p', entries: [{ subpath: '.', targets: ['./a.js'] }], found: true },
      outDirs: ['dist'],
      files: [{ rel: 'a.ts', contentHash: 'h1', variant: 'ts' }],
      diagnostics: [],
      digestSchema: DIGEST_SCHEMA,
      maxFileSize: 1000,
    };
    const variants: Parameters<typeof reportInput>[0][] = [
      { ...base, pkg: { ...base.pkg, name: 'q' } },
      { ...base, pkg: { ...base.pkg, entries: [{ subpath: './x', targets: ['./a.js'] }] } },
      { ...base, outDirs: [] },
      { ...base, files: [{ rel: 'b.ts', contentHash: 'h1', variant: 'ts' }] },
      { ...base, files: [{ rel: 'a.ts', contentHash: 'h2', variant: 'ts' }] },
      { ...base, files: [{ rel: 'a.ts', contentHash: 'h1', variant: 'tsx' }] },
      { ...base, files: [...base.files, { rel: 'c.ts', contentHash: 'h3', variant: 'ts' }] },
      { ...base, diagnostics: [{ code: 'KILN_NO_SOURCES', severity: 'warning', message: 'm' } as never] },
      { ...base, digestSchema: PREVIOUS_DIGEST_SCHEMA },
      { ...base, maxFileSize: 2000 },
    ];
    const digests = new Set([base, ...variants].map(reportInput));
    expect(digests.size).toBe(variants.length + 1);
    expect(reportInput({ ...base })).toBe(reportInput(base));
  });

  it.each([
    ['bytes overwritten (same size)', async (path: string) => writeFile(path, Buffer.alloc((await stat(path)).size, 0x20))],
    ['truncated', async (path: string) => truncate(path, 3)],
  ])('a damaged memo (%s) is discarded: the run assembles, and answers right', async (_name, damage) => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 0 });
    const info = await memoEntry(store, root);
    await chmod(info!.path, 0o644).catch(() => undefined);
    await damage(info!.path);
    const r = await digestTree(root, { store, workers: 0 });
    expect(canonical(r)).toBe(expected);
    expect(r.stats).toMatchObject({ parsed: 0, storeHits: SOURCES.length });
    await expect(cacache.verify(store)).resolves.toMatchObject({ badContentCount: 0 });
    expect(canonical(await digestTree(root, { store, workers: 0 }))).toBe(expected);
  });

  it('a memo that names this input but holds something else (valid integrity) is not used', async () => {
    const root = await makeTree(await tempDir());
    const store = join(await tempDir(), 'store');
    const expected = canonical(await digestTree(root, { store: false, workers: 0 }));
    await digestTree(root, { store, workers: 0 });
    const key = viewReportKey(viewIdOf(root), DIGEST_SCHEMA);
    const { metadata } = (await cacache.get.info(store, key)) as { metadata: { input: string } };
    for (const body of ['not json', JSON.stringify({ kind: 'kiln-view-report', format: 1, input: 'other', report: {} }), JSON.stringify(null)]) {
      await cacache.put(store, key, Buffer.from(body), { metadata });
      expect(canonical(await digestTree(root, { store, workers: 0 }))).toBe(expected);
    }
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
