/**
 * The `kiln` command as a user runs it: a real process, real fixture trees, exit codes, both formats.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, cpSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CODES } from '@kiln/core';
import { main } from '../dist/main.js';

const root = resolve(__dirname, '../../..');
const bin = join(root, 'packages/cli/bin/kiln.js');
const v1 = join(root, 'fixtures/demo/v1');
const v2 = join(root, 'fixtures/demo/v2');
const tmp = mkdtempSync(join(tmpdir(), 'kiln-cli-'));
const store = join(tmp, 'store');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function kiln(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, KILN_STORE: store } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The CLI's entry in this process, printing as bin/kiln.js does (a newline added where missing). */
async function kilnInProcess(...args: string[]) {
  let out = '';
  let err = '';
  const line = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);
  const code = await main(args, { out: (s) => (out += line(s)), err: (s) => (err += line(s)) });
  return { code, out, err };
}

describe('kiln CLI', () => {
  it('prints help and exits 0; bad usage exits 2', () => {
    const help = kiln('--help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/digest/);
    expect(help.out).toMatch(/diff/);
    expect(kiln('digest', '--help').code).toBe(0);
    expect(kiln('digest').code).toBe(2); // missing argument
    expect(kiln('digest', v1, '--format', 'yaml').code).toBe(2);
    expect(kiln('frobnicate').code).toBe(2);
    expect(kiln('digest', v1, '--workers', 'many').code).toBe(2);
  });

  it('--sync git reconciles from git status and the index (this repository), --sync scan lists and hashes; same report', () => {
    expect(kiln('digest', v1, '--sync', 'sometimes').code).toBe(2);
    const gitStore = join(tmp, 'sync-store');
    const run = (how: string) => {
      const r = spawnSync(process.execPath, [bin, 'digest', v1, '--format', 'json', '--sync', how, '--workers', '0'], { cwd: root, encoding: 'utf8', env: { ...process.env, KILN_STORE: gitStore } });
      expect(r.status).toBe(0);
      return JSON.parse(r.stdout) as { stats: { sync: string; vouched: number; bytes: number }; declarations: unknown[] };
    };
    run('git'); // records the blob ids of the files it reads
    const fromGit = run('git');
    expect(fromGit.stats.sync).toBe('git');
    // fixtures/demo/v1 is committed in this repository: unless it is edited in this checkout, git
    // vouches for its files and none is read
    const dirty = spawnSync('git', ['status', '--porcelain', '--', v1], { cwd: root, encoding: 'utf8' }).stdout.trim();
    if (!dirty) expect(fromGit.stats.vouched).toBeGreaterThan(0);
    const scanned = run('scan');
    expect(scanned.stats.sync).toBe('scan');
    expect(scanned.stats.vouched).toBe(0);
    expect(JSON.stringify(scanned.declarations)).toBe(JSON.stringify(fromGit.declarations));
    const text = spawnSync(process.execPath, [bin, 'digest', v1, '--sync', 'git', '--workers', '0'], { cwd: root, encoding: 'utf8', env: { ...process.env, KILN_STORE: gitStore } });
    expect(text.stdout.split('\n')[0]).toMatch(/synced from git, \d+ files? unread\)$/);
  });

  it('exits 1 with a coded diagnostic for a missing path', () => {
    const r = kiln('digest', join(tmp, 'nope'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/KILN_NOT_FOUND/);
    expect(r.err).toMatch(/hint:/);
  });

  it('digest --format json prints every declaration with identity, kind, language, digests, schema and span', () => {
    const r = kiln('digest', v1, '--format', 'json', '--no-store');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.kind).toBe('kiln-digest-report');
    expect(report.package).toBe('@demo/geometry');
    const area = report.declarations.find((d: { path: string }) => d.path === 'area');
    expect(area).toMatchObject({
      identity: 'typescript:@demo/geometry//src/shapes#area:function',
      kind: 'function',
      language: 'typescript',
      digest_schema: 2,
      surface: ['@demo/geometry#area'],
      span: { file: 'src/shapes.ts', startLine: 8, startColumn: 1 },
    });
    expect(area.semantic_digest).toMatch(/^[0-9a-f]{32}$/);
    expect(area.doc_digest).toMatch(/^[0-9a-f]{32}$/);
    // No absolute path anywhere in the product.
    expect(r.out).not.toContain(root);
    expect(r.out).not.toContain(tmpdir());
  });

  it('digest text shows the same facts; a second run parses nothing', () => {
    const first = kiln('digest', v1);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/parsed 5, store hits 0/);
    expect(first.out).toMatch(/typescript:@demo\/geometry\/\/src\/circle#Circle\.#normalise:method/);
    expect(first.out).toMatch(/kind method {2}language typescript {2}semantic [0-9a-f]{12} {2}doc - {2}schema 2 {2}span src\/circle\.ts:12:3-14:4/);
    const second = kiln('digest', v1);
    expect(second.out).toMatch(/parsed 0, store hits 5/);
  });

  it('diff names what changed, what did not, and why', () => {
    const r = kiln('diff', v1, v2, '--all');
    expect(r.code).toBe(0);
    const section = (name: string) => {
      const m = new RegExp(`^${name} \\((\\d+)\\)$`, 'm').exec(r.out);
      return m ? Number(m[1]) : 0;
    };
    expect(section('changed')).toBe(5);
    expect(section('added')).toBe(1);
    expect(section('removed')).toBe(1);
    expect(section('moved')).toBe(1);
    expect(section('redocumented')).toBe(1);
    expect(r.out).toMatch(/src\/shapes#area:function\n\s+body changed \(signature unchanged\)/);
    expect(r.out).toMatch(/src\/format#format:function\n\s+signature changed/);
    expect(r.out).toMatch(/src\/format#defaultLabel:variable\n\s+meaningful comments changed \(\+pure\)/);
    expect(r.out).toMatch(/src\/circle#Circle:class\n\s+nested declaration changed: Circle\.#normalise/);
    expect(r.out).toMatch(/src\/util#clamp:function\n\s+moved from src\/math to src\/util/);
    expect(r.out).toMatch(/src\/math#round:function\n\s+same semantic and doc digest; its file was edited/);
    expect(r.out).toMatch(/src\/format: evaluation order changed/);

    const json = JSON.parse(kiln('diff', v1, v2, '--format', 'json').out);
    expect(json.counts).toEqual({ added: 1, removed: 1, changed: 5, redocumented: 1, moved: 1, unchanged: 9 });
  });

  it('diff against a recorded report; a report from the previous digest schema gives stale hits', () => {
    const recorded = join(tmp, 'v1.json');
    writeFileSync(recorded, kiln('digest', v1, '--format', 'json').out);
    const same = JSON.parse(kiln('diff', recorded, v1, '--format', 'json').out);
    expect(same.counts.unchanged).toBe(17);
    expect(same.diagnostics).toEqual([]);

    const old = join(tmp, 'v1-schema1.json');
    writeFileSync(old, kiln('digest', v1, '--format', 'json', '--digest-schema', '1').out);
    expect(JSON.parse(readFileSync(old, 'utf8')).declarations[0].digest_schema).toBe(1);
    const stale = JSON.parse(kiln('diff', old, v1, '--format', 'json').out);
    expect(stale.counts.unchanged).toBe(17);
    expect(stale.declarations.every((d: { stale?: boolean }) => d.stale)).toBe(true);
    expect(stale.diagnostics.map((d: { code: string }) => d.code)).toContain('KILN_DIGEST_STALE_SCHEMA');

    // The previous projection ignores meaningful comments: adding /*#__PURE__*/ matches only under it.
    const edited = join(tmp, 'v1-pure');
    cpSync(v1, edited, { recursive: true });
    const f = join(edited, 'src/format.ts');
    writeFileSync(f, readFileSync(f, 'utf8').replace("= makeLabel('shape')", "= /*#__PURE__*/ makeLabel('shape')"));
    const underOld = JSON.parse(kiln('diff', old, edited, '--format', 'json').out);
    const label = underOld.declarations.find((d: { identity: string }) => d.identity.endsWith('#defaultLabel:variable'));
    expect(label).toMatchObject({ status: 'unchanged', stale: true });
    const underNew = JSON.parse(kiln('diff', recorded, edited, '--format', 'json').out);
    expect(underNew.declarations.find((d: { identity: string }) => d.identity.endsWith('#defaultLabel:variable')).status).toBe('changed');
  });

  it('rejects a record that is not a kiln report, and an unknown schema', () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{"hello": 1}');
    const r = kiln('diff', bad, v1);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/KILN_RECORD_INVALID/);
    const future = join(tmp, 'future.json');
    const report = JSON.parse(kiln('digest', v1, '--format', 'json').out);
    writeFileSync(future, JSON.stringify({ ...report, digest_schema: 99 }));
    const f = kiln('diff', future, v1);
    expect(f.code).toBe(1);
    expect(f.err).toMatch(/KILN_DIGEST_UNSUPPORTED_SCHEMA/);
  });

  it('explain works for every code in the registry, and rejects unknown codes with exit 2', async () => {
    // Every code through the CLI's own entry (`main`, what bin/kiln.js calls) in this process: a
    // process start per code (~120 of them) would test the start-up again and again, nothing more.
    const codes = Object.keys(CODES);
    const outputs = new Map<string, string>();
    for (const code of codes) {
      const r = await kilnInProcess('explain', code);
      expect(r.code, code).toBe(0);
      expect(r.out).toContain(code);
      expect(r.out).toMatch(/What it means: .+/);
      expect(r.out).toMatch(/How to fix it: .+/);
      // The code's outcome category, from the registry (issue 14 point 8).
      expect(r.out).toContain(`Outcome: ${CODES[code as keyof typeof CODES].outcome} — `);
      outputs.set(code, r.out);
    }
    // The real process prints the same, byte for byte (first, middle and last code).
    for (const code of [codes[0]!, codes[codes.length >> 1]!, codes[codes.length - 1]!]) {
      const r = kiln('explain', code);
      expect(r.code, code).toBe(0);
      expect(r.out, code).toBe(outputs.get(code));
    }
    const list = kiln('explain', '--list');
    expect(list.out.trim().split('\n')).toHaveLength(Object.keys(CODES).length);
    const unknown = kiln('explain', 'KILN_NOPE');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toMatch(/KILN_UNKNOWN_CODE/);
  });
});

describe('kiln store gc', () => {
  it('reports what a dry run would remove, removes nothing live, and exits 1 for a missing store', () => {
    const gcStore = join(tmp, 'gc-store');
    const tree = join(tmp, 'gc-tree');
    cpSync(v1, tree, { recursive: true });
    expect(kiln('digest', tree, '--store', gcStore).code).toBe(0);
    const dry = kiln('store', 'gc', '--store', gcStore, '--dry-run', '--grace', '0', '--format', 'json');
    expect(dry.code).toBe(0);
    const planned = JSON.parse(dry.out);
    expect(planned).toMatchObject({ dryRun: true, manifests: 1, livePacks: 1, removed: [] });
    const text = kiln('store', 'gc', '--store', gcStore, '--grace', '0');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/removed 0 of \d+ entries .* kept 1 pack\(s\) named by 1 view manifest\(s\)/);
    // Still warm after collecting.
    const warm = JSON.parse(kiln('digest', tree, '--store', gcStore, '--format', 'json').out);
    expect(warm.stats.parsed).toBe(0);
    const missing = kiln('store', 'gc', '--store', join(tmp, 'no-such-store'));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/KILN_NOT_FOUND/);
    expect(kiln('store', 'gc', '--grace', 'soon').code).toBe(2);
  });
});
