/**
 * Which package a representation command means: a directory (holding package.json), a `.tgz` tarball
 * (unpacked to a temporary directory with the system `tar`), or a package name resolved the way Node
 * resolves it from a directory (each `node_modules/<name>` from there up; a package's `exports` need
 * not expose package.json; the runtime's `findPackageDir`, the lookup payload imports use too).
 *
 * Invariant: nothing is written except the unpacked tarball, which the caller removes (`dispose`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KilnError, diagnostic } from '@kiln/core/affected';
import { findPackageDir, packageNameOf } from '@kiln/runtime';

export interface PackageDir {
  dir: string;
  /** What the user named, for messages. */
  named: string;
  dispose(): void;
}

const isPath = (s: string) => s.startsWith('.') || s.startsWith('/') || /^[A-Za-z]:[\\/]/.test(s);

export function openPackageDir(what: string, from: string): PackageDir {
  const none = () => undefined;
  if (what.endsWith('.tgz') || what.endsWith('.tar.gz')) {
    const file = resolve(from, what);
    if (!existsSync(file)) throw new KilnError(diagnostic('KILN_USAGE', `no tarball ${what}`, { producer: 'cli', noLocation: 'a command-line argument' }));
    const tmp = mkdtempSync(join(tmpdir(), 'kiln-tarball-'));
    try {
      // npm's tarballs hold one folder, `package/`.
      execFileSync('tar', ['-xzf', file, '-C', tmp], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw new KilnError(diagnostic('KILN_READ_FAILED', `${what} is not a readable npm tarball: ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`, { producer: 'cli', file: what }));
    }
    const dir = join(tmp, 'package');
    return { dir: existsSync(join(dir, 'package.json')) ? dir : tmp, named: what, dispose: () => rmSync(tmp, { recursive: true, force: true }) };
  }
  if (isPath(what) || (existsSync(resolve(from, what)) && statSync(resolve(from, what)).isDirectory())) {
    const dir = resolve(from, what);
    if (!existsSync(join(dir, 'package.json'))) throw new KilnError(diagnostic('KILN_USAGE', `${what} has no package.json`, { producer: 'cli', noLocation: 'a command-line argument' }));
    return { dir, named: what, dispose: none };
  }
  const dir = findPackageDir(packageNameOf(what), from);
  if (!dir) {
    throw new KilnError(
      diagnostic('KILN_USAGE', `package ${packageNameOf(what)} is not installed in node_modules from ${from} up (install it, or give its directory or tarball)`, { producer: 'cli', noLocation: 'a command-line argument' }),
    );
  }
  return { dir, named: what, dispose: none };
}
