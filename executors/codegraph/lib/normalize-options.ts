/**
 * Options as the user (or the kiln plugin) wrote them → what `exportGraph` takes. Paths in options are
 * workspace-relative (Nx has already replaced `{workspaceRoot}`/`{projectRoot}`).
 */
import { relative, resolve } from 'node:path';
import type { ExecutorContext } from '@nx/devkit';
import { interpolateOutput } from '../../lib/outputs.js';
import type { CodegraphExecutorSchema } from '../schema.js';

export interface NormalizedCodegraphOptions {
  workspaceRoot: string;
  /** Absolute project directory. */
  projectRoot: string;
  /** Absolute file to write. */
  outputFile: string;
  mode: 'checked' | 'allow-errors';
  /** tsconfig relative to the project root, or undefined for the default search. */
  tsConfig?: string;
  /** The target's declared outputs, workspace-relative, tokens resolved. */
  declaredOutputs?: string[];
}

export const DEFAULT_CODEGRAPH_OUTPUT = 'dist/codegraph/{projectRoot}/codegraph.jsonl';

export function normalizeOptions(options: CodegraphExecutorSchema, context: ExecutorContext): NormalizedCodegraphOptions {
  const workspaceRoot = context.root;
  const projectName = context.projectName;
  const project = projectName ? context.projectsConfigurations?.projects?.[projectName] : undefined;
  if (!projectName || !project) throw new Error(`kiln codegraph: no project configuration for "${projectName ?? '(none)'}"`);
  const projectRoot = resolve(workspaceRoot, project.root);
  const out: NormalizedCodegraphOptions = {
    workspaceRoot,
    projectRoot,
    outputFile: resolve(workspaceRoot, options.outputFile ?? DEFAULT_CODEGRAPH_OUTPUT.replace('{projectRoot}', project.root)),
    mode: options.allowErrors ? 'allow-errors' : 'checked',
  };
  if (options.tsConfig) out.tsConfig = relative(projectRoot, resolve(workspaceRoot, options.tsConfig));
  const outputs = context.target?.outputs;
  if (outputs) out.declaredOutputs = outputs.map((o) => interpolateOutput(o, project.root, projectName, options as Record<string, unknown>));
  return out;
}
