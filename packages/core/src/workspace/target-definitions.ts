/**
 * The build targets a workspace already has, as its own files define them: `project.json` targets,
 * `package.json` `nx.targets`, and package.json scripts (which Nx turns into `nx:run-script` targets).
 * kiln keys these targets where they are (issue 11 point 1) instead of adding targets of its own, so it
 * must know, for each target name it keys, what runs and where it writes — without Nx.
 *
 * What cannot be seen here: targets another Nx plugin infers (e.g. `@nx/vite` from a vite.config). The
 * plugin checks in createDependencies, against Nx's merged configuration, that the key landed.
 *
 * Invariants: reads only the project's own two manifests (through a FileTree: any state); paths in results are workspace-relative
 * POSIX; an unreadable or malformed file yields a note, never a throw. No Nx import.
 */
import { join, posix } from 'node:path';
import type { ToolTargetSpec } from '../key/tool-key.js';
import { worktree, type FileTree } from './tree.js';

/** kiln's own executor: such a target is keyed by the build key, not a tool key. */
export const KILN_BUILD_EXECUTOR = '@kiln/nx:build';

export interface TargetDefinition {
  name: string;
  /** Where the definition that decides the executor lives. */
  origin: 'project.json' | 'package.json#nx' | 'package.json#scripts';
  /** The executor Nx will run (`nx:run-script` for a script, `nx:run-commands` for `command`). */
  executor: string;
  /** The tool key's description of it; absent for kiln's own executor. */
  spec?: ToolTargetSpec;
  /**
   * `inputs` the definition declares itself. A target's own inputs win over what a plugin infers
   * and over target defaults: kiln's key still reaches the hash through the options, but raw file
   * bytes do too, so a comment edit is no longer a hit. Reported as a shadowing note.
   */
  inputs?: unknown[];
  /**
   * kiln's own executor: the tsconfig its `tsConfig` option names, relative to the project (POSIX);
   * absent when the option is not set (the executor's default search). The build key must be computed
   * from this same file, or a change to the tsconfig that builds would keep the key (a wrong hit).
   */
  tsconfig?: string;
  /** kiln's own executor: configurations whose `tsConfig` names another file than `tsconfig` (one key cannot cover them). */
  tsconfigConfigurations?: string[];
}

export interface TargetDefinitions {
  targets: Map<string, TargetDefinition>;
  /** Problems reading the definitions (malformed JSON, a target kiln cannot describe). */
  notes: string[];
}

type Json = Record<string, unknown>;

function readJson(path: string, notes: string[], label: string, tree: FileTree = worktree): Json | undefined {
  const text = tree.readText(path);
  if (text === undefined) {
    if (tree.kindOf(path) !== undefined) notes.push(`${label} could not be read`);
    return undefined;
  }
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
  } catch (e) {
    notes.push(`${label} could not be read (${(e as Error).message.split('\n')[0]})`);
    return undefined;
  }
}

const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** Sorted-key JSON: the same options always give the same text. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

function commandsOf(options: Json): string[] {
  if (typeof options.command === 'string') return [options.command];
  if (Array.isArray(options.commands)) return options.commands.map((c) => (typeof c === 'string' ? c : isObject(c) && typeof c.command === 'string' ? c.command : stable(c)));
  return [];
}

/** String option values that name files of the workspace (tsConfig, main, a config), workspace-relative. */
function optionPaths(workspaceRoot: string, root: string, value: unknown, out: Set<string>, tree: FileTree): void {
  if (typeof value === 'string') {
    if (!/[/.]/.test(value) || value.length > 300 || /\s/.test(value)) return;
    const p = value.replace(/\{projectRoot\}/g, root).replace(/^\{workspaceRoot\}\/?/, '').replace(/^\.\//, '');
    if (p.startsWith('/') || p.startsWith('../') || p.includes('{')) return;
    for (const candidate of [p, posix.join(root, p)]) if (tree.kindOf(join(workspaceRoot, candidate)) !== undefined) out.add(posix.normalize(candidate));
  } else if (Array.isArray(value)) value.forEach((v) => optionPaths(workspaceRoot, root, v, out, tree));
  else if (isObject(value)) Object.values(value).forEach((v) => optionPaths(workspaceRoot, root, v, out, tree));
}

/**
 * The tsconfig a project's build key is computed from (project-relative), or undefined for the
 * default search: the file kiln's own build target names in its `tsConfig` option (the first such
 * definition given), else `fallback` (the plugin option `tsConfig`) — the order in which the executor
 * picks the file it compiles. The plugin, `kiln keys` and `kiln explain-miss` all use it, so the key
 * they compute is the key of the file the build reads.
 */
export function buildKeyTsconfig(definitions: Iterable<TargetDefinition | undefined>, fallback?: string): string | undefined {
  for (const d of definitions) if (d && !d.spec && d.tsconfig !== undefined) return d.tsconfig;
  return fallback;
}

/** A path option of kiln's executor (`{projectRoot}/x`, workspace-relative `libs/a/x`) → project-relative POSIX. */
function projectRelative(root: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const p = posix.normalize(value.replace(/\{projectRoot\}/g, root).replace(/^\{workspaceRoot\}\/?/, '').replace(/^\.\//, ''));
  return posix.relative(root === '.' ? '' : root, p) || '.';
}

/** Output paths, project-relative where they are inside the project (`{options.outputPath}` resolved). */
function outputsOf(root: string, outputs: unknown, options: Json): string[] {
  if (!Array.isArray(outputs)) return [];
  const out: string[] = [];
  for (const o of outputs) {
    if (typeof o !== 'string') continue;
    let p = o.replace(/\{options\.([\w.]+)\}/g, (m, k: string) => {
      const v = k.split('.').reduce<unknown>((acc, part) => (isObject(acc) ? acc[part] : undefined), options);
      return typeof v === 'string' ? v : m;
    });
    p = p.replace(/^\{workspaceRoot\}\/?/, '');
    if (p.startsWith('{projectRoot}')) out.push(p);
    else if (root !== '.' && (p === root || p.startsWith(`${root}/`))) out.push(`{projectRoot}${p.slice(root.length)}`);
  }
  return out;
}

function envOf(inputs: unknown): string[] {
  if (!Array.isArray(inputs)) return [];
  return inputs.flatMap((i) => (isObject(i) && typeof i.env === 'string' ? [i.env] : []));
}

/**
 * The definitions of `names` in the project at `root` (workspace-relative), as Nx would resolve the
 * executor: project.json over package.json's `nx.targets`, over the package.json script. `tree`: the
 * state read (default the working tree; `kiln affected` reads its base and head trees).
 */
export function readTargetDefinitions(workspaceRoot: string, root: string, names: readonly string[], tree: FileTree = worktree): TargetDefinitions {
  const notes: string[] = [];
  const dir = join(workspaceRoot, root);
  const projectJson = readJson(join(dir, 'project.json'), notes, `${posix.join(root, 'project.json')}`, tree);
  const manifest = readJson(join(dir, 'package.json'), notes, `${posix.join(root, 'package.json')}`, tree) ?? {};
  const nxField = isObject(manifest.nx) ? manifest.nx : {};
  const scripts = isObject(manifest.scripts) ? manifest.scripts : {};
  const included = Array.isArray(nxField.includedScripts) ? new Set(nxField.includedScripts.filter((s): s is string => typeof s === 'string')) : undefined;
  const targets = new Map<string, TargetDefinition>();

  for (const name of names) {
    const fromProject = isObject(projectJson?.targets) ? projectJson!.targets[name] : undefined;
    const fromPackage = isObject(nxField.targets) ? nxField.targets[name] : undefined;
    const script = typeof scripts[name] === 'string' && (!included || included.has(name)) ? name : undefined;
    const defs = [fromPackage, fromProject].filter(isObject);
    if (!defs.length && !script) continue;
    // Later definitions win, as Nx merges them; options merge shallowly.
    const merged: Json = {};
    let options: Json = {};
    let configurations: Json = {};
    for (const d of defs) {
      Object.assign(merged, d);
      if (isObject(d.options)) options = { ...options, ...d.options };
      if (isObject(d.configurations)) configurations = { ...configurations, ...d.configurations };
    }
    const origin: TargetDefinition['origin'] = isObject(fromProject) && (fromProject.executor || fromProject.command || !script) ? 'project.json' : isObject(fromPackage) && (fromPackage.executor || fromPackage.command) ? 'package.json#nx' : 'package.json#scripts';
    let executor = typeof merged.executor === 'string' ? merged.executor : undefined;
    if (!executor && typeof merged.command === 'string') {
      executor = 'nx:run-commands';
      options = { ...options, command: merged.command };
    }
    if (!executor && script) {
      executor = 'nx:run-script';
      options = { script, ...options };
    }
    if (!executor) {
      notes.push(`${name}: defined in ${origin} without an executor, a command or a script`);
      continue;
    }
    const def: TargetDefinition = { name, origin, executor };
    if (Array.isArray(merged.inputs)) def.inputs = merged.inputs;
    if (executor === KILN_BUILD_EXECUTOR) {
      const own = projectRelative(root, options.tsConfig);
      if (own !== undefined) def.tsconfig = own;
      const others = Object.entries(configurations).filter(([, c]) => isObject(c) && c.tsConfig !== undefined && projectRelative(root, c.tsConfig) !== def.tsconfig);
      if (others.length) def.tsconfigConfigurations = others.map(([k]) => k).sort();
    } else {
      const paths = new Set<string>();
      optionPaths(workspaceRoot, root, options, paths, tree);
      optionPaths(workspaceRoot, root, configurations, paths, tree);
      const rest = Object.fromEntries(Object.entries(options).filter(([k]) => k !== 'command' && k !== 'commands' && k !== 'script'));
      const extra = `${Object.keys(rest).length ? `\noptions: ${stable(rest)}` : ''}${Object.keys(configurations).length ? `\nconfigurations: ${stable(configurations)}` : ''}`;
      const spec: ToolTargetSpec = { name, command: '', outputs: outputsOf(root, merged.outputs, options), env: envOf(merged.inputs) };
      if (executor === 'nx:run-script') {
        spec.script = typeof options.script === 'string' ? options.script : name;
        spec.command = `script ${spec.script}${extra}`;
      } else if (executor === 'nx:run-commands') {
        spec.command = `${commandsOf(options).join('\n')}${extra}`;
        // run-commands runs at the workspace root unless told otherwise.
        spec.cwd = typeof options.cwd === 'string' ? posix.normalize(options.cwd.replace(/\{projectRoot\}/g, root).replace(/^\{workspaceRoot\}\/?/, '') || '.') : '.';
        if (!commandsOf(options).length) notes.push(`${name}: nx:run-commands without a command`);
      } else {
        spec.executor = executor;
        spec.command = `executor ${executor}${extra}`;
      }
      if (paths.size) spec.paths = [...paths].sort();
      def.spec = spec;
    }
    targets.set(name, def);
  }
  return { targets, notes };
}

/**
 * Every output the project's own target definitions declare, as `{projectRoot}/…` (inside the
 * project) or workspace-relative paths: kiln never adds a target whose output another target owns (a
 * cache restore of one would delete the other's files).
 */
export function declaredOutputs(workspaceRoot: string, root: string): { target: string; output: string }[] {
  const notes: string[] = [];
  const dir = join(workspaceRoot, root);
  const projectJson = readJson(join(dir, 'project.json'), notes, 'project.json');
  const manifest = readJson(join(dir, 'package.json'), notes, 'package.json') ?? {};
  const nxField = isObject(manifest.nx) ? manifest.nx : {};
  const out: { target: string; output: string }[] = [];
  for (const targets of [projectJson?.targets, nxField.targets]) {
    if (!isObject(targets)) continue;
    for (const [name, t] of Object.entries(targets)) {
      if (!isObject(t)) continue;
      for (const o of outputsOf(root, t.outputs, isObject(t.options) ? t.options : {})) out.push({ target: name, output: o });
    }
  }
  return out;
}

/** Whether two `{projectRoot}/…` outputs overlap (one is the other or inside it). */
export function outputsOverlap(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/\/\*\*.*$/, '').replace(/\/+$/, '');
  const x = norm(a);
  const y = norm(b);
  return x === y || x.startsWith(`${y}/`) || y.startsWith(`${x}/`);
}
