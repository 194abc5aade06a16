/**
 * A real child process, without blocking: the CLI tests start a test's independent commands together
 * (most of a CLI run is Node start-up and module loading, which overlap well on two cores).
 */
import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** Run `command args` in `cwd` with `env`; resolves with its exit code and its whole stdout and stderr. */
export function spawnAsync(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, out, err }));
  });
}
