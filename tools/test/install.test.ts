/**
 * The pure parts of the history oracle's real installs (tools/lib/install.mjs, issue 10 point 4): which
 * package manager a commit uses, and the frozen, script-free command line it gets.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error — plain ESM tool module, no type declarations
import { detectPackageManager, installArgs } from '../lib/install.mjs';

const has = (...files: string[]) => (f: string) => files.includes(f);

describe('detectPackageManager', () => {
  it('takes the packageManager field, version without its hash', () => {
    expect(detectPackageManager({ packageManager: 'pnpm@10.32.0+sha512.9b26' }, has('pnpm-lock.yaml'))).toEqual({ name: 'pnpm', version: '10.32.0', lockfile: 'pnpm-lock.yaml' });
    expect(detectPackageManager({ packageManager: 'yarn@4.5.0' }, has('yarn.lock'))).toMatchObject({ name: 'yarn', version: '4.5.0' });
  });
  it('falls back to the lockfile present', () => {
    expect(detectPackageManager({}, has('yarn.lock'))).toMatchObject({ name: 'yarn', version: null });
    expect(detectPackageManager(null, has('package-lock.json'))).toMatchObject({ name: 'npm', lockfile: 'package-lock.json' });
  });
  it('fails rather than guesses', () => {
    expect(detectPackageManager({ packageManager: 'pnpm@9.0.0' }, has('yarn.lock'))).toHaveProperty('error');
    expect(detectPackageManager({ packageManager: 'bun@1.1.0' }, has('bun.lockb'))).toHaveProperty('error');
    expect(detectPackageManager({}, has())).toHaveProperty('error');
  });
});

describe('installArgs', () => {
  it('pnpm: frozen, no scripts, filtered to the packages and their dependencies; --trust-lockfile from pnpm 12', () => {
    const a = installArgs({ name: 'pnpm', version: '10.33.1' }, { filters: ['@trpc/server'], store: '/s' });
    expect(a).toEqual(expect.arrayContaining(['install', '--frozen-lockfile', '--ignore-scripts', '--filter', '@trpc/server...', '--store-dir=/s/pnpm']));
    expect(a).not.toContain('--trust-lockfile');
    expect(installArgs({ name: 'pnpm', version: '12.0.0-rc.7' }, { store: '/s' })).toContain('--trust-lockfile');
  });
  it('npm ci and yarn, immutable and without scripts', () => {
    expect(installArgs({ name: 'npm', version: null }, { store: '/s' })).toEqual(expect.arrayContaining(['ci', '--ignore-scripts']));
    expect(installArgs({ name: 'yarn', version: '4.5.0' }, { store: '/s' })).toEqual(['install', '--immutable', '--mode=skip-build']);
    expect(installArgs({ name: 'yarn', version: '1.22.22' }, { store: '/s' })).toEqual(expect.arrayContaining(['--frozen-lockfile', '--ignore-scripts']));
  });
});
