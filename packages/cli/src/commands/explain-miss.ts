/**
 * `kiln explain-miss <project:target>`: why a target is (or is not) a cache hit — its key now against
 * the key it was last built with (recorded by the plugin after each run, or by `kiln keys`), and what
 * moved between them; unless `--no-nx`, also what Nx hashes besides kiln's key (`nx show target inputs`).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  KILN_BUILD_EXECUTOR,
  KilnError,
  buildKeyTsconfig,
  computeWorkspaceKeys,
  diagnostic,
  formatDiagnostic,
  discoverWorkspace,
  explainKeyChange,
  explainToolKeyChange,
  readBuilt,
  readComponents,
  readTargetDefinitions,
  type KeyChange,
  type ToolKeyComponents,
} from '@kiln/core';
import { kilnPluginOptions, treeOptions, withCommonOptions, type CommonOptions, type Io } from '../common.js';

interface NxInputs {
  files: string[];
  environment: string[];
  external: string[];
  runtime: string[];
  /** What defeats kiln's key: source files of a project, or every external dependency. */
  raw: string[];
  error?: string;
}

/**
 * What Nx itself hashes for a task besides kiln's key, from `nx show target inputs` (Nx ≥ 24). A
 * target kiln keys should show no project sources and no `AllExternalDependencies`: where it does,
 * the key is in the hash but so are raw bytes, and "nothing moved" is not a promise of a hit.
 */
function nxHashedInputs(workspace: string, task: string): NxInputs | undefined {
  let bin: string;
  try {
    bin = createRequire(join(resolve(workspace), 'package.json')).resolve('nx/bin/nx.js');
  } catch {
    return undefined;
  }
  const r = spawnSync(process.execPath, [bin, 'show', 'target', 'inputs', task, '--json'], { cwd: workspace, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NX_DAEMON: process.env.NX_DAEMON ?? 'false' } });
  const empty = { files: [], environment: [], external: [], runtime: [], raw: [] };
  if (r.status !== 0) return { ...empty, error: (r.stderr || r.stdout || String(r.error ?? '')).trim().split('\n').slice(-3).join(' ') };
  try {
    const j = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as Partial<NxInputs>;
    const files = j.files ?? [];
    const external = j.external ?? [];
    const raw = [...files.filter((f) => /\.(?:[cm]?[jt]sx?|vue|svelte)$/.test(f)), ...external.filter((e) => e === 'AllExternalDependencies')];
    return { files, environment: j.environment ?? [], external, runtime: j.runtime ?? [], raw };
  } catch (e) {
    return { ...empty, error: `could not read the output of nx show target inputs: ${(e as Error).message}` };
  }
}

function formatNxInputs(n: NxInputs): string {
  if (n.error) return `Nx's own inputs: unknown (nx show target inputs failed: ${n.error})`;
  const lines = ["Nx also hashes, besides kiln's key:"];
  lines.push(`  files        ${n.files.length ? n.files.join(', ') : 'none'}`);
  if (n.environment.length) lines.push(`  environment  ${n.environment.join(', ')}`);
  if (n.runtime.length) lines.push(`  runtime      ${n.runtime.join(', ')}`);
  lines.push(`  external     ${n.external.length ? n.external.join(', ') : 'none'}`);
  if (n.raw.length) {
    const d = diagnostic('KILN_TARGET_RAW_INPUTS', `raw inputs in the hash: ${n.raw.slice(0, 5).join(', ')}${n.raw.length > 5 ? ', …' : ''}`, { producer: 'explain-miss' });
    lines.push(...formatDiagnostic(d).split('\n').map((l) => `  ${l}`));
  }
  return lines.join('\n');
}

export function registerExplainMiss(program: Command, io: Io): void {
  withCommonOptions(
    program
      .command('explain-miss')
      .description('why a target is (or is not) a cache hit: what moved since the key it was last built with')
      .argument('<project:target>', 'e.g. @acme/util:build')
      .option('--workspace <dir>', 'workspace root', '.')
      .option('--no-nx', "do not ask Nx which inputs it hashes besides kiln's key (`nx show target inputs`)"),
  ).action(async (spec: string, o: CommonOptions & { workspace: string; nx: boolean }) => {
    const i = spec.lastIndexOf(':');
    if (i <= 0) throw new KilnError(diagnostic('KILN_USAGE', `expected <project>:<target>, got "${spec}"`, { producer: 'cli' }));
    const projectName = spec.slice(0, i);
    const target = spec.slice(i + 1);
    const ws = await discoverWorkspace(o.workspace);
    const project = ws.projects.find((p) => p.name === projectName || p.root === projectName);
    if (!project) throw new KilnError(diagnostic('KILN_NOT_FOUND', `no project named ${projectName} in the workspace (${ws.projects.map((p) => p.name).join(', ') || 'none found'})`, { producer: 'cli' }));
    const plugin = await kilnPluginOptions(o.workspace);
    const keyedNames = plugin.targets ?? ['build'];
    const def = readTargetDefinitions(o.workspace, project.root, [target]).targets.get(target);
    const mode = def?.spec && keyedNames.includes(target) ? 'tool' : (def ? def.executor === KILN_BUILD_EXECUTOR : target === (plugin.buildTargetName ?? 'build')) ? 'own' : 'none';
    const nxInputs = o.nx ? nxHashedInputs(o.workspace, `${project.name}:${target}`) : undefined;
    if (mode === 'none') {
      const why = def ? `its definition (${def.origin}, ${def.executor}) is not among the targets kiln keys (${keyedNames.join(', ')}); add it to the plugin's "targets" option in nx.json` : `the project defines no "${target}" target kiln can see (project.json, package.json "nx" or scripts), and it is not kiln's own build target`;
      const result = { project: project.name, target, status: 'not-keyed', reason: why, nx: nxInputs ?? null };
      if (o.format === 'json') io.out(JSON.stringify(result, null, 2));
      else {
        io.out(`${spec}: not keyed by kiln — ${why}. Whether Nx hits is up to its own inputs.`);
        if (nxInputs) io.out(formatNxInputs(nxInputs));
      }
      return;
    }
    // The build key reads the tsconfig kiln's own build target compiles (as the plugin keys it).
    const keyedDefs = readTargetDefinitions(o.workspace, project.root, keyedNames).targets;
    const buildTsconfig = buildKeyTsconfig([mode === 'own' ? def : undefined, ...keyedNames.map((n) => keyedDefs.get(n))], plugin.tsConfig);
    const keys = await computeWorkspaceKeys(o.workspace, {
      ...treeOptions(o, io),
      roots: [project.root],
      record: true,
      ...(mode === 'tool' ? { targets: { [project.root]: [def!.spec!] } } : {}),
      ...(buildTsconfig !== undefined ? { tsconfigs: { [project.root]: buildTsconfig } } : {}),
    });
    const p = keys.projects.find((x) => x.root === project.root);
    const current = mode === 'tool' ? p?.targets?.[target] : p?.key && p.components ? { key: p.key, components: p.components } : undefined;
    if (!current) {
      throw new KilnError(diagnostic('KILN_TSCONFIG_NOT_FOUND', `${project.name}:${target} has no key: ${p?.diagnostics.map((d) => d.message).join('; ') || 'no tsconfig'}`, { producer: 'cli' }));
    }
    const built = await readBuilt(o.workspace, project.name, target);
    const previous = built ? await readComponents(o.workspace, built.key) : undefined;
    let changes: KeyChange[] = [];
    if (built && previous && built.key !== current.key) {
      changes = mode === 'tool' ? explainToolKeyChange(previous as unknown as ToolKeyComponents, current.components as ToolKeyComponents) : explainKeyChange(previous, current.components as Parameters<typeof explainKeyChange>[1]);
    }
    const result = {
      project: project.name,
      target,
      keyed: mode === 'tool' ? `${def!.origin} (${def!.executor})` : 'kiln build executor',
      key: current.key,
      lastBuiltKey: built?.key ?? null,
      status: !built ? 'never-built' : built.key === current.key ? 'hit' : previous ? 'miss' : 'miss-unexplained',
      changes,
      nx: nxInputs ?? null,
    };
    if (o.format === 'json') {
      io.out(JSON.stringify(result, null, 2));
      return;
    }
    if (result.status === 'never-built') io.out(`${spec}: no build recorded in this workspace yet; the next build runs (key ${current.key.slice(0, 12)}).`);
    else if (result.status === 'hit') io.out(`${spec}: nothing moved — the key (${current.key.slice(0, 12)}) equals the one it was last built with${nxInputs?.raw.length ? '; a hit as far as kiln is concerned (see what Nx hashes besides, below)' : ', so the build is a cache hit'}.`);
    else if (result.status === 'miss-unexplained') io.out(`${spec}: the key moved (${built!.key.slice(0, 12)} → ${current.key.slice(0, 12)}), but the components of the old key were not recorded here, so kiln cannot say what moved.`);
    else {
      io.out(`${spec}: the key moved (${built!.key.slice(0, 12)} → ${current.key.slice(0, 12)}) because:`);
      for (const c of result.changes) io.out(`  ${c.category.padEnd(13)} ${c.change.padEnd(8)} ${c.subject}\n      ${c.detail}`);
    }
    if (nxInputs) io.out(formatNxInputs(nxInputs));
  });
}
