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

describe('boundaries', () => {
  it('packages/core imports no @nx/*, nx, plugins/, executors/ or generators/', () => {
    const offenders: string[] = [];
    const files = sources(join(root, 'packages/core/src'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      for (const m of readFileSync(f, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? m[3]!;
        if (/^(@nx\/|nx($|\/))/.test(spec) || /(^|\/)(plugins|executors|generators)\//.test(spec) || spec.startsWith('@kiln/cli')) {
          offenders.push(`${f.slice(root.length + 1)} imports ${spec}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('packages/core/src/store/ holds bytes only: it imports no layer above it (view/, key/, compile/, graph/, …)', () => {
    const offenders: string[] = [];
    const files = sources(join(root, 'packages/core/src/store'));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      for (const m of readFileSync(f, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? m[3]!;
        if (/^\.\.\/(view|diff|closure|key|compile|graph|pool|workspace)\//.test(spec)) offenders.push(`${f.slice(root.length + 1)} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the CLI uses only the public entry of @kiln/core', () => {
    for (const f of sources(join(root, 'packages/cli/src'))) {
      for (const m of readFileSync(f, 'utf8').matchAll(importRe)) {
        const spec = m[1] ?? m[2] ?? m[3]!;
        expect(spec.startsWith('@kiln/core/'), `${f} imports ${spec}`).toBe(false);
      }
    }
  });
});
