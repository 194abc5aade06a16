/**
 * Options as the user (or the kiln plugin) wrote them → what `compileProject` takes. Paths in options
 * are workspace-relative, as in @nx/js (Nx has already replaced `{workspaceRoot}`/`{projectRoot}`).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
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
  };
  if (options.tsConfig) out.tsConfig = relative(projectRoot, fromWorkspace(options.tsConfig));
  if (options.outputPath) out.outDir = fromWorkspace(options.outputPath);
  const outputs = context.target?.outputs;
  if (outputs) {
    out.declaredOutputs = outputs.map((o) => interpolateOutput(o, project.root, projectName, options as Record<string, unknown>));
  }
  return out;
}

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
 * Whether the declared outputs capture a directory the build writes (workspace-relative): some
 * output is that directory or one of its ancestors. `unknown` when only glob outputs could match.
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

export function toWorkspacePath(workspaceRoot: string, abs: string): string {
  const r = relative(workspaceRoot, abs);
  return isAbsolute(r) ? abs : r.split(sep).join('/');
}
