/**
 * Options as the user (or the kiln plugin) wrote them → what `compileProject` takes. Paths in options
 * are workspace-relative, as in @nx/js (Nx has already replaced `{workspaceRoot}`/`{projectRoot}`).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
import { interpolateOutput } from '../../lib/outputs.js';
import type { BuildExecutorSchema } from '../schema.js';

export interface NormalizedBuildOptions {
  workspaceRoot: string;
  /** Absolute project directory. */
  projectRoot: string;
  /** tsconfig relative to the project root, or undefined for the default search. */
  tsConfig?: string;
  /** Absolute output directory, or undefined for the tsconfig's outDir. */
  outDir?: string;
  deleteOutputPath: boolean;
  /** Module formats to write beyond what package.json names (undefined: what package.json asks). */
  formats?: ('esm' | 'cjs')[];
  /** Read package.json's entry points (default true). */
  exports: boolean;
  /** Write kiln.rep after the build (SPEC §7). */
  representation: boolean;
  /** Globs of files not compiled or emitted (undefined: core's DEFAULT_BUILD_EXCLUDE). */
  exclude?: string[];
  /** The target's declared outputs, workspace-relative, tokens resolved (negations and globs kept as written). */
  declaredOutputs?: string[];
}

export function normalizeOptions(options: BuildExecutorSchema, context: ExecutorContext): NormalizedBuildOptions {
  const workspaceRoot = context.root;
  const projectName = context.projectName;
  const project = projectName ? context.projectsConfigurations?.projects?.[projectName] : undefined;
  if (!projectName || !project) throw new Error(`kiln build: no project configuration for "${projectName ?? '(none)'}"`);
  const projectRoot = resolve(workspaceRoot, project.root);
  const fromWorkspace = (p: string) => resolve(workspaceRoot, p);
  const out: NormalizedBuildOptions = {
    workspaceRoot,
    projectRoot,
    deleteOutputPath: options.deleteOutputPath ?? true,
    exports: options.exports ?? true,
    representation: options.representation ?? true,
  };
  if (options.formats?.length) out.formats = [...new Set(options.formats)];
  if (options.exclude) out.exclude = [...options.exclude];
  if (options.tsConfig) out.tsConfig = relative(projectRoot, fromWorkspace(options.tsConfig));
  if (options.outputPath) out.outDir = fromWorkspace(options.outputPath);
  const outputs = context.target?.outputs;
  if (outputs) {
    out.declaredOutputs = outputs.map((o) => interpolateOutput(o, project.root, projectName, options as Record<string, unknown>));
  }
  return out;
}

export function toWorkspacePath(workspaceRoot: string, abs: string): string {
  const r = relative(workspaceRoot, abs);
  return isAbsolute(r) ? abs : r.split(sep).join('/');
}

/** Another target's declared output that overlaps a directory the build writes. */
export interface SharedOutput {
  /** `project:target` */
  task: string;
  /** The other target's output, workspace-relative. */
  output: string;
  /** The build's directory it overlaps, workspace-relative. */
  dir: string;
}

/**
 * Declared outputs of every other target in the workspace that overlap a directory this build writes
 * (workspace-relative): the same directory, one inside it, or one containing it. Nx restores a cached
 * output by replacing it, so two targets sharing a folder delete each other's files. A glob output
 * overlaps when its fixed part lies inside the build's directory (a glob over a containing folder
 * restores only what it matches).
 */
export function sharedOutputs(context: ExecutorContext, dirs: string[]): SharedOutput[] {
  const found: SharedOutput[] = [];
  const projects = context.projectsConfigurations?.projects ?? {};
  const norm = (d: string) => d.split(sep).join('/').replace(/\/+$/, '');
  const inside = (a: string, b: string) => b === '' || b === '.' || a === b || a.startsWith(`${b}/`);
  for (const [name, project] of Object.entries(projects)) {
    for (const [targetName, target] of Object.entries(project.targets ?? {})) {
      if (name === context.projectName && targetName === context.targetName) continue;
      for (const raw of target.outputs ?? []) {
        if (raw.startsWith('!')) continue;
        const options = (target.options ?? {}) as Record<string, unknown>;
        // An option the target does not set: nothing is written there.
        if ([...raw.matchAll(/\{options\.([\w-]+)\}/g)].some((m) => typeof options[m[1]!] !== 'string' || options[m[1]!] === '')) continue;
        const output = interpolateOutput(raw, project.root, name, options);
        if (output === '' || output.includes('{')) continue;
        const glob = /[*?{[]/.test(output);
        const fixed = glob ? output.slice(0, output.search(/[*?{[]/)).replace(/\/[^/]*$/, '') : output;
        for (const d of dirs.map(norm)) {
          if (inside(fixed, d) || (!glob && inside(d, fixed))) found.push({ task: `${name}:${targetName}`, output, dir: d });
        }
      }
    }
  }
  return found;
}
