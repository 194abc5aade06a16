/**
 * Slices are keyed by EXTRACTOR_VERSION, which was cut for one exact TypeScript parser:
 * - the installed typescript is that parser (an upgrade without bumping EXTRACTOR_VERSION and
 *   EXTRACTOR_PARSER_VERSION fails here);
 * - a process with another parser neither reads nor writes the store, says so with
 *   KILN_PARSER_MISMATCH, and still gives the right answer.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import cacache from 'cacache';
import { digestTree } from '../src/view/digest-tree.js';
import { EXTRACTOR_VERSION } from '../src/version.js';
import { EXTRACTOR_PARSER_VERSION } from '../src/version.js';
import { installedParserVersion, setObservedParserVersionForTesting } from '../src/parse/parser-version.js';
import { extractSlice } from '../src/facts/extract.js';
import { readSlice } from '../src/store/read-slice.js';
import { writeSlice } from '../src/store/write-slice.js';

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(() => setObservedParserVersionForTesting(undefined));

async function fixture(): Promise<{ pkg: string; store: string }> {
  const base = await mkdtemp(join(tmpdir(), 'kiln-parser-'));
  temps.push(base);
  const pkg = join(base, 'pkg');
  await mkdir(join(pkg, 'src'), { recursive: true });
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@fx/parser' }));
  await writeFile(join(pkg, 'src/a.ts'), 'export function a(n: number): number {\n  return n + 1;\n}\n');
  await writeFile(join(pkg, 'src/b.ts'), 'export const b = 2;\n');
  return { pkg, store: join(base, 'store') };
}

const canonical = (r: object) => JSON.stringify({ ...r, stats: undefined, diagnostics: undefined });

describe('the parser the extractor was cut for', () => {
  it('is the installed typescript (bump EXTRACTOR_VERSION and EXTRACTOR_PARSER_VERSION together)', () => {
    const ts = createRequire(import.meta.url)('typescript') as { version: string };
    expect(installedParserVersion()).toBe(ts.version);
    expect(ts.version, `typescript ${ts.version} is installed but extractor ${EXTRACTOR_VERSION} was cut for ${EXTRACTOR_PARSER_VERSION}`).toBe(EXTRACTOR_PARSER_VERSION);
  });

  it('another parser neither reads nor writes the store, reports KILN_PARSER_MISMATCH, and answers right', async () => {
    const { pkg, store } = await fixture();
    const truth = await digestTree(pkg, { store: false, workers: 0 });
    const warmup = await digestTree(pkg, { store, workers: 0 });
    expect(warmup.stats.parsed).toBe(2);
    const entries = Object.keys(await cacache.ls(store)).length;

    setObservedParserVersionForTesting('6.0.0');
    const other = await digestTree(pkg, { store, workers: 0 });
    expect(other.stats.parsed).toBe(2); // nothing taken from the store
    expect(other.stats.storeHits).toBe(0);
    expect(other.diagnostics.map((d) => d.code)).toContain('KILN_PARSER_MISMATCH');
    expect(other.diagnostics.find((d) => d.code === 'KILN_PARSER_MISMATCH')!.message).toMatch(/6\.0\.0.*5\.9|5\.9.*6\.0\.0/s);
    expect(canonical(other)).toBe(canonical(truth));
    expect(Object.keys(await cacache.ls(store)).length).toBe(entries); // nothing written
    // the per-content API refuses too
    const slice = extractSlice(Buffer.from('export const z = 1;\n'), 'ts');
    await writeSlice(store, slice);
    expect(Object.keys(await cacache.ls(store)).length).toBe(entries);
    expect((await readSlice(store, slice.contentHash, 'ts', slice.digestSchema)).status).toBe('unavailable');

    setObservedParserVersionForTesting(undefined);
    const back = await digestTree(pkg, { store, workers: 0 });
    expect(back.stats.parsed).toBe(0);
    expect(back.diagnostics.map((d) => d.code)).not.toContain('KILN_PARSER_MISMATCH');
  });
});
