/**
 * Options as the user (or the kiln plugin) wrote them → what `packPackage` takes. Paths in options are
 * workspace-relative (Nx has already replaced `{workspaceRoot}`/`{projectRoot}`).
 */
import { resolve } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
import { interpolateOutput } from '../../lib/outputs.js';
import type { PackExecutorSchema } from '../schema.js';

export interface NormalizedPackOptions {
  workspaceRoot: string;
  /** Absolute project (package) directory. */
  projectRoot: string;
  /** Absolute directory the tarball goes into. */
  outDir: string;
  representation: boolean;
  /** The target's declared outputs, workspace-relative, tokens resolved. */
  declaredOutputs?: string[];
}

export const DEFAULT_PACK_OUTPUT = 'dist/packs/{projectRoot}';

export function normalizeOptions(options: PackExecutorSchema, context: ExecutorContext): NormalizedPackOptions {
  const workspaceRoot = context.root;
  const projectName = context.projectName;
  const project = projectName ? context.projectsConfigurations?.projects?.[projectName] : undefined;
  if (!projectName || !project) throw new Error(`kiln pack: no project configuration for "${projectName ?? '(none)'}"`);
  const out: NormalizedPackOptions = {
    workspaceRoot,
    projectRoot: resolve(workspaceRoot, project.root),
    outDir: resolve(workspaceRoot, options.outputPath ?? DEFAULT_PACK_OUTPUT.replace('{projectRoot}', project.root)),
    representation: options.representation ?? true,
  };
  const outputs = context.target?.outputs;
  if (outputs) out.declaredOutputs = outputs.map((o) => interpolateOutput(o, project.root, projectName, options as Record<string, unknown>));
  return out;
}
