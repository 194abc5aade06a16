/**
 * Declared outputs, as every kiln executor reads them: `interpolateOutput` resolves the tokens of a
 * target's `outputs` entry the way Nx does (workspace-relative, negation kept), `outputsCover` says
 * whether they capture a path the executor writes — checked before anything is written, since Nx
 * caches and restores only what the outputs name.
 *
 * Shared by the executors (an executor never imports another executor's lib); pure, no I/O.
 */
import { sep } from 'node:path';

/** `{workspaceRoot}`, `{projectRoot}`, `{projectName}` and `{options.x}` in a declared output. */
export function interpolateOutput(output: string, projectRoot: string, projectName: string, options: Record<string, unknown>): string {
  const negated = output.startsWith('!');
  let o = negated ? output.slice(1) : output;
  o = o
    .replace(/^\{workspaceRoot\}\/?/, '')
    .replace(/\{projectRoot\}/g, projectRoot)
    .replace(/\{projectName\}/g, projectName)
    .replace(/\{options\.([\w-]+)\}/g, (_, k: string) => String(options[k] ?? ''));
  o = o.replace(/^\.\//, '').replace(/\/+$/, '');
  return negated ? `!${o}` : o;
}

/**
 * Whether the declared outputs capture a path an executor writes (workspace-relative): some
 * output is that path or one of its ancestors. `unknown` when only glob outputs could match.
 */
export function outputsCover(declared: string[], dir: string): 'yes' | 'no' | 'unknown' {
  const d = dir.split(sep).join('/').replace(/\/+$/, '');
  let globs = false;
  for (const o of declared) {
    if (o.startsWith('!')) continue;
    if (/[*?{[]/.test(o)) {
      globs = true;
      continue;
    }
    if (o === '' || o === '.' || d === o || d.startsWith(`${o}/`)) return 'yes';
  }
  return globs ? 'unknown' : 'no';
}
