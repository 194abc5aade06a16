/**
 * `kiln keys [workspace]`: every package's build key and its components, without running Nx, for the
 * targets the kiln plugin keys (its nx.json options) and with the tsconfig kiln's own build target
 * compiles — as the plugin computes them. Records the components for `kiln explain-miss` unless
 * `--no-record`.
 */
import type { Command } from 'commander';
import { buildKeyTsconfig, computeWorkspaceKeys, diagnostic, discoverWorkspace, readTargetDefinitions, type Diagnostic, type ToolTargetSpec } from '@kiln/core';
import { kilnPluginOptions, treeOptions, withCommonOptions, type CommonOptions, type Io } from '../common.js';
import { formatDiagnostics, formatKeysText, jsonReport } from '../format.js';

export function registerKeys(program: Command, io: Io): void {
  withCommonOptions(
    program
      .command('keys')
      .description("every package's build key and its components (own digest, dependency surfaces, manifest view, toolchain), without running Nx — in an Nx, npm, pnpm or yarn workspace")
      .argument('[workspace]', 'workspace root', '.')
      .option('--no-record', 'do not record key components for `kiln explain-miss`'),
  ).action(async (root: string, o: CommonOptions & { record: boolean }) => {
    const t = treeOptions(o, io);
    // The targets the kiln plugin keys where the workspace defines them (nx.json's plugin options).
    const plugin = await kilnPluginOptions(root);
    const names = plugin.targets ?? ['build'];
    const ws = await discoverWorkspace(root);
    const targets: Record<string, ToolTargetSpec[]> = {};
    const shadowed: Diagnostic[] = [];
    // The tsconfig each build key reads: the one kiln's own build target compiles (as the plugin keys it).
    const tsconfigs: Record<string, string> = {};
    for (const p of ws.projects) {
      if (p.root === '.' || p.root === '') continue;
      const defs = readTargetDefinitions(root, p.root, names).targets;
      const tsconfig = buildKeyTsconfig(names.map((n) => defs.get(n)), plugin.tsConfig);
      if (tsconfig !== undefined) tsconfigs[p.root] = tsconfig;
      for (const def of defs.values()) {
        if (def.spec) (targets[p.root] ??= []).push(def.spec);
        if (def.inputs) {
          const file = `${p.root}/${def.origin.split('#')[0]}`;
          shadowed.push(diagnostic('KILN_TARGET_INPUTS_SHADOWED', `${p.name}:${def.name} declares its own inputs in ${def.origin} (${JSON.stringify(def.inputs)}): they override kiln's, so raw file bytes stay in its hash and a comment edit is not a hit`, { file, producer: 'keys' }));
        }
      }
    }
    const keys = await computeWorkspaceKeys(root, { ...t, record: o.record, targets, ...(Object.keys(tsconfigs).length ? { tsconfigs } : {}) });
    if (o.format === 'json') io.out(jsonReport(keys));
    else {
      io.out(formatKeysText(keys));
      const ds = [...keys.diagnostics, ...keys.projects.flatMap((p) => p.diagnostics)];
      if (ds.length) io.err(formatDiagnostics(ds));
    }
    if (shadowed.length) io.err(formatDiagnostics(shadowed, o.format));
  });
}
