/**
 * Helpers for tests on real git repositories: temporary directories removed after the file's tests,
 * and `git` run with a fixed identity (commits work on a machine with no git config).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A `tempDir(prefix)` whose directories are removed after the calling test file's tests. */
export function tempDirs(defaultPrefix: string): (prefix?: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.map((d) => rm(d, { recursive: true, force: true })));
  });
  return async (prefix = defaultPrefix) => {
    const d = await mkdtemp(join(tmpdir(), prefix));
    made.push(d);
    return d;
  };
}

/** Run git in `cwd`; returns its stdout, throws on a non-zero exit. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
}
