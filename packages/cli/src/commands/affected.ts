/**
 * `kiln affected [-t build,test] [--base REF] [--head REF] [--format text|json|projects] [--run]`:
 * the projects whose targets a change can reach, by declaration (core affected/affected.ts), each with
 * a reason chain. The base is read from git objects (no checkout); the head is the working tree unless
 * `--head` names a revision. `--format projects` prints a comma list `nx run-many --projects=` accepts;
 * `--run` runs `nx run-many -t … --projects=…` with it and exits with its status.
 * Exit 1 when a diagnostic of severity error was reported (the result is then not to be trusted).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
// Core's light entry: `kiln affected` loads what comparing two states needs, not the rest of core.
import { KilnError, buildKeyTsconfig, computeAffected, diagnostic, discoverWorkspace, readTargetDefinitions, type AffectedResult } from '@kiln/core/affected';
import { EXIT_FAILURE, intOption, kilnPluginOptions, TRACE_FLAGS, TRACE_HELP, type Io, type SetExit } from '../common.js';
import { formatDiagnostics, jsonReport } from '../format.js';

interface AffectedCliOptions {
  target: string;
  base?: string;
  head?: string;
  format: 'text' | 'json' | 'projects';
  run?: boolean;
  store?: string | false;
  workers?: string;
  progress?: boolean;
}

export function registerAffected(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('affected')
    .description('the projects whose targets a change can reach, by declaration — never fewer than a target can observe — with the reason for each')
    .argument('[workspace]', 'workspace root', '.')
    .option('-t, --target <names>', 'targets, comma-separated (kiln\'s build: by its key; test, e2e, typecheck, bundler builds: by what they execute; others: as nx affected)', 'build,test')
    .option('--base <ref>', "base revision (default: the merge-base of nx.json's defaultBase, else main, with the head)")
    .option('--head <ref>', 'head revision (default: the working tree, uncommitted and untracked files included)')
    .addOption(new Option('--format <format>', 'text (reason chains), json (the same records), projects (a comma list for nx run-many --projects)').choices(['text', 'json', 'projects']).default('text'))
    .option('--run', 'run `nx run-many -t <targets> --projects=<affected>` and exit with its status')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'do not read or write the local store')
    .option('--workers <n>', 'worker threads (default: one per core but one, at least 1; 0 = no pool)')
    .option('--progress', 'print progress on stderr (default: when stderr is a terminal)')
    .option(TRACE_FLAGS, TRACE_HELP)
    .action(async (root: string, o: AffectedCliOptions) => {
      const targets = o.target.split(',').map((t) => t.trim()).filter(Boolean);
      if (!targets.length) throw new KilnError(diagnostic('KILN_USAGE', '-t names no target', { producer: 'cli' }));
      const plugin = await kilnPluginOptions(root);
      const keyedTarget = plugin.addBuildTargets === false || !(await hasKilnPlugin(root)) ? null : plugin.buildTargetName ?? 'build';
      // The tsconfig each build key reads: the one kiln's own build target compiles (as the plugin keys it).
      const tsconfigs: Record<string, string> = {};
      if (keyedTarget) {
        const ws = await discoverWorkspace(root);
        for (const p of ws.projects) {
          if (p.root === '.' || p.root === '') continue;
          const defs = readTargetDefinitions(root, p.root, [keyedTarget]).targets;
          const tsconfig = buildKeyTsconfig([defs.get(keyedTarget)], plugin.tsConfig);
          if (tsconfig !== undefined) tsconfigs[p.root] = tsconfig;
        }
      }
      const showProgress = o.progress ?? process.stderr.isTTY;
      const result = await computeAffected(root, {
        targets,
        keyedTarget,
        ...(o.base ? { base: o.base } : {}),
        ...(o.head ? { head: o.head } : {}),
        ...(o.store === false ? { store: false } : typeof o.store === 'string' ? { store: o.store } : {}),
        ...(o.workers !== undefined ? { workers: intOption('--workers', o.workers, 0) } : {}),
        ...(Object.keys(tsconfigs).length ? { tsconfigs } : {}),
        ...(showProgress ? { onProgress: (m: string) => io.err(`kiln affected: ${m}`) } : {}),
      });
      const projects = [...new Set(result.affected.map((a) => a.project))].sort();
      if (o.format === 'json') io.out(jsonReport(result));
      else if (o.format === 'projects') io.out(projects.join(','));
      else io.out(formatAffectedText(result));
      if (result.diagnostics.length) io.err(formatDiagnostics(result.diagnostics, o.format));
      if (result.diagnostics.some((d) => d.severity === 'error')) {
        setExit(EXIT_FAILURE);
        return;
      }
      if (o.run) {
        if (!projects.length) {
          io.err('kiln affected: no project is affected; nothing to run');
          return;
        }
        setExit(runNx(root, targets, projects, io));
      }
    });
}

async function hasKilnPlugin(root: string): Promise<boolean> {
  const { readFile } = await import('node:fs/promises');
  try {
    const nx = JSON.parse(await readFile(join(root, 'nx.json'), 'utf8')) as { plugins?: (string | { plugin: string })[] };
    return (nx.plugins ?? []).some((p) => (typeof p === 'string' ? p : p.plugin) === '@kiln/nx');
  } catch {
    return false;
  }
}

/** `nx run-many` from the workspace's own Nx, with the affected projects; its exit status. */
function runNx(root: string, targets: string[], projects: string[], io: Io): number {
  let bin: string;
  try {
    bin = createRequire(join(resolve(root), 'package.json')).resolve('nx/bin/nx.js');
  } catch {
    throw new KilnError(diagnostic('KILN_USAGE', `--run needs Nx installed in ${root} (nx/bin/nx.js was not found)`, { producer: 'cli' }));
  }
  const args = [bin, 'run-many', '-t', targets.join(','), `--projects=${projects.join(',')}`];
  io.err(`kiln affected: nx ${args.slice(1).join(' ')}`);
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  return r.status ?? EXIT_FAILURE;
}

/** One line per affected target with its first reason chain; further chains indented below. */
export function formatAffectedText(r: AffectedResult): string {
  const lines: string[] = [];
  lines.push(`base ${r.base.commit.slice(0, 12)} (${r.base.from}) → ${r.head.worktree ? 'working tree' : r.head.commit!.slice(0, 12)}: ${r.changed.length} changed path${r.changed.length === 1 ? '' : 's'}`);
  for (const [target, c] of Object.entries(r.counts)) lines.push(`${target}: ${c.affected} of ${c.projects} projects affected`);
  for (const a of r.affected) {
    const [first, ...rest] = a.reasons;
    lines.push(`${(first ?? [`${a.project}:${a.target}`]).join(' ← ')}  [${a.rule}]`);
    for (const chain of rest) lines.push(`    ${chain.slice(1).join(' ← ')}`);
  }
  return lines.join('\n');
}
