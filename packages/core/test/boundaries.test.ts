/**
 * Architecture boundaries (ARCHITECTURE.md): core packages never import `@nx/*`, the Nx units or
 * other kiln layers above them; nothing in core is imported from deep paths by the CLI.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const importRe = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

/** `file imports spec` for every import of the .ts files under `dir` that `forbidden` matches. */
function forbiddenImports(dir: string, minFiles: number, forbidden: (spec: string) => boolean): string[] {
  const offenders: string[] = [];
  const files = sources(join(root, dir));
  expect(files.length).toBeGreaterThan(minFiles);
  for (const f of files) {
    for (const m of readFileSync(f, 'utf8').matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (forbidden(spec)) offenders.push(`${f.slice(root.length + 1)} imports ${spec}`);
    }
  }
  return offenders;
}

describe('boundaries', () => {
  it('packages/core imports no @nx/*, nx, plugins/, executors/ or generators/', () => {
    const offenders = forbiddenImports('packages/core/src', 10, (spec) => /^(@nx\/|nx($|\/))/.test(spec) || /(^|\/)(plugins|executors|generators)\//.test(spec) || spec.startsWith('@kiln/cli'));
    expect(offenders).toEqual([]);
  });

  it('packages/core/src/store/ holds bytes only: it imports no layer above it (view/, key/, compile/, graph/, …)', () => {
    const offenders = forbiddenImports('packages/core/src/store', 5, (spec) => /^\.\.\/(view|diff|closure|key|compile|graph|pool|workspace|debug|affected)\//.test(spec));
    expect(offenders).toEqual([]);
  });

  it('packages/core/src/view/ imports neither graph/ nor key/: graphs and keys are computed on views, not the reverse', () => {
    const offenders = forbiddenImports('packages/core/src/view', 5, (spec) => /^\.\.\/(graph|key)\//.test(spec));
    expect(offenders).toEqual([]);
  });

  it('packages/core/src/trace/ loads alone (the plugin\'s memo hit loads it): node built-ins, version.ts and the diagnostics only', () => {
    const offenders = forbiddenImports('packages/core/src/trace', 3, (spec) => !spec.startsWith('node:') && !spec.startsWith('./') && spec !== '../version.js' && !spec.startsWith('../diagnostics/'));
    expect(offenders).toEqual([]);
  });

  it("the CLI uses only @kiln/core's public entries (those its package.json exports), never a deep path", () => {
    const exported = Object.keys((JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports).map((k) => (k === '.' ? '@kiln/core' : `@kiln/core/${k.slice(2)}`));
    expect(exported).toContain('@kiln/core');
    for (const f of sources(join(root, 'packages/cli/src'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? m[3]!;
        if (spec === '@kiln/core' || spec.startsWith('@kiln/core/')) expect(exported, `${f} imports ${spec}`).toContain(spec);
      }
    }
  });
});
