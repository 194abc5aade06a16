/**
 * Which TypeScript compiler a project is compiled and checked with: the one its own dependencies
 * resolve to (what the workspace's lockfile pins, so a TypeScript upgrade changes the output and the
 * key, SPEC §4), falling back to the one kiln ships. Used by the build (compile/compile.ts) and the
 * checked graph (graph/checked.ts).
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type * as TS from 'typescript';
import { typescript as kilnTypescript } from '../parse/typescript.js';

/**
 * The TypeScript compiler a project builds with: the one its own dependencies resolve to (the
 * workspace's lockfile), else the one kiln ships.
 */
export function resolveTypeScript(projectRoot: string): { ts: typeof TS; version: string; source: 'workspace' | 'kiln' } {
  try {
    const req = createRequire(join(resolve(projectRoot), '__kiln_resolve__.js'));
    const path = req.resolve('typescript');
    const own = createRequire(import.meta.url).resolve('typescript');
    const ts = (path === own ? kilnTypescript() : req(path)) as typeof TS;
    if (typeof ts.createProgram === 'function') return { ts, version: ts.version, source: 'workspace' };
  } catch {
    // not resolvable from the project: use kiln's own
  }
  const ts = kilnTypescript();
  return { ts, version: ts.version, source: 'kiln' };
}
