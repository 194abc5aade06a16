/**
 * The soundness check of a cache hit (SPEC §4, issue 3 point 5): is what a project's output
 * directories hold now — typically just restored from a cache entry kiln keyed as unchanged —
 * equivalent to what a fresh build of the current sources writes?
 *
 * The current outputs are copied aside, a fresh build is made *in place* (same paths, so nothing can
 * differ by location: relative `/// <reference>` paths and map `sources` depend on where the output
 * sits), and the copy is compared with the fresh output by `compareOutputs`. Afterwards the output
 * directories hold the fresh build (equivalent to what was there when the check passes).
 */
import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { compileProject, resolveBuildOutputs, type CompileOptions, type CompileResult } from './compile.js';
import { compareOutputs, type OutputDifference } from './equivalence.js';

export interface FreshBuildCheck {
  /** The current outputs are equivalent to a fresh build (false when the fresh build failed). */
  equal: boolean;
  /** Differences (A = the outputs found, B = the fresh build); paths relative to `relativeTo`. */
  differences: OutputDifference[];
  /** Files compared, over all output directories. */
  compared: number;
  /** The fresh build (its diagnostics say why when it failed). */
  build: CompileResult;
}

export async function checkAgainstFreshBuild(options: CompileOptions): Promise<FreshBuildCheck> {
  const projectRoot = resolve(options.projectRoot);
  const relativeTo = resolve(options.relativeTo ?? projectRoot);
  const { outputDirs } = resolveBuildOutputs(options);
  const aside = await mkdtemp(join(tmpdir(), 'kiln-soundness-'));
  try {
    for (const [i, dir] of outputDirs.entries()) {
      const copy = join(aside, String(i));
      if (await isDirectory(dir)) await cp(dir, copy, { recursive: true });
      else await mkdir(copy);
    }
    const build = await compileProject({ ...options, clean: true });
    const result: FreshBuildCheck = { equal: false, differences: [], compared: 0, build };
    if (!build.success) return result;
    for (const [i, dir] of outputDirs.entries()) {
      const prefix = relative(relativeTo, dir).split(sep).join('/');
      const cmp = await compareOutputs(join(aside, String(i)), dir);
      result.compared += cmp.compared;
      for (const d of cmp.differences) result.differences.push({ ...d, file: prefix ? `${prefix}/${d.file}` : d.file });
    }
    result.equal = result.differences.length === 0;
    return result;
  } finally {
    await rm(aside, { recursive: true, force: true });
  }
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}
