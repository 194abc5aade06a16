/**
 * The `kiln` command line. Thin: parse arguments, call one core function, print a projection of its
 * result. Exit codes: 0 ok, 1 failure, 2 usage.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { readFile, stat } from 'node:fs/promises';
import { Command, CommanderError, Option } from 'commander';
import {
  CODES,
  DIGEST_REPORT_VERSION,
  KilnError,
  PREVIOUS_DIGEST_SCHEMA,
  DIGEST_SCHEMA,
  diagnostic,
  diffReports,
  digestTree,
  formatDiagnostic,
  isDiagnosticCode,
  computeWorkspaceKeys,
  collectGarbage,
  defaultStoreDir,
  discoverWorkspace,
  explainKeyChange,
  explainToolKeyChange,
  KILN_BUILD_EXECUTOR,
  readTargetDefinitions,
  type KeyChange,
  type ToolKeyComponents,
  type ToolTargetSpec,
  readBuilt,
  readComponents,
  supportedDigestSchemas,
  type DigestReport,
  type DigestTreeOptions,
  type Diagnostic,
} from '@kiln/core';
import { formatDiagnostics, formatDiffText, formatDigestText, formatKeysText } from './format.js';
import { registerGraphExport } from './commands/graph-export.js';
import { registerContext, registerGraphQueries } from './commands/graph-query.js';
import { registerMcp } from './commands/mcp.js';

/** The kiln plugin's options in nx.json (none: the defaults). */
async function kilnPluginOptions(workspace: string): Promise<{ targets?: string[]; buildTargetName?: string; tsConfig?: string; addBuildTargets?: boolean }> {
  try {
    const nx = JSON.parse(await readFile(join(workspace, 'nx.json'), 'utf8')) as { plugins?: (string | { plugin: string; options?: Record<string, unknown> })[] };
    const entry = (nx.plugins ?? []).find((p) => (typeof p === 'string' ? p : p.plugin) === '@kiln/nx');
    return entry && typeof entry === 'object' ? ((entry.options ?? {}) as never) : {};
  } catch {
    return {};
  }
}

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
  if (n.raw.length) lines.push(`  warning: raw inputs in the hash (${n.raw.slice(0, 5).join(', ')}${n.raw.length > 5 ? ', …' : ''}) — an edit kiln calls meaningless still misses. Fix: \`nx g @kiln/nx:init\` (target defaults for keyed projects), or remove the target's own "inputs".`);
  return lines.join('\n');
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
};

interface CommonOptions {
  format: 'text' | 'json';
  store?: string | false;
  workers?: string;
  maxFileSize?: string;
  progress?: boolean;
  sync?: 'auto' | 'git' | 'scan';
}

function treeOptions(o: CommonOptions, io: Io): DigestTreeOptions {
  const opts: DigestTreeOptions = {};
  if (o.store === false) opts.store = false;
  else if (typeof o.store === 'string') opts.store = o.store;
  if (o.workers !== undefined) opts.workers = intOption('--workers', o.workers, 0);
  if (o.sync !== undefined) opts.git = o.sync === 'auto' ? 'auto' : o.sync === 'git';
  const max = o.maxFileSize ?? process.env.KILN_MAX_FILE_SIZE;
  if (max !== undefined) opts.maxFileSize = intOption('--max-file-size', max, 1);
  const showProgress = o.progress ?? (process.stderr.isTTY && o.format === 'text');
  if (showProgress) {
    let last = 0;
    opts.onProgress = (done, total) => {
      const now = Date.now();
      if (done === total || now - last > 200) {
        last = now;
        io.err(`\rdigesting ${done}/${total} files`);
      }
    };
  }
  return opts;
}

function intOption(name: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new KilnError(diagnostic('KILN_USAGE', `${name} must be an integer ≥ ${min}, got "${value}"`, { producer: 'cli' }));
  }
  return n;
}

function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'do not read or write the local store')
    .option('--workers <n>', 'worker threads (default: one per core but one, at least 1; 0 = no pool)')
    .addOption(
      new Option('--sync <how>', 'reconcile the view with its tree from git status and the index (git), by listing and hashing (scan), or git for views of 1000+ files (auto; $KILN_GIT_SYNC=0/1 changes the default)').choices(['auto', 'git', 'scan']),
    )
    .option('--max-file-size <bytes>', 'do not parse files larger than this (default 8 MiB, or $KILN_MAX_FILE_SIZE)')
    .option('--progress', 'print progress on stderr (default: when stderr is a terminal)');
}

/** A recorded JSON report (from `kiln digest --format json`) or a directory to digest now. */
async function loadSide(path: string, o: CommonOptions, io: Io, schema?: number): Promise<DigestReport> {
  let st;
  try {
    st = await stat(path);
  } catch {
    throw new KilnError(diagnostic('KILN_NOT_FOUND', `${path} does not exist`, { producer: 'cli' }));
  }
  if (st.isFile() && path.endsWith('.json')) {
    let parsed: DigestReport;
    try {
      parsed = JSON.parse(await readFile(path, 'utf8')) as DigestReport;
    } catch (e) {
      throw new KilnError(diagnostic('KILN_RECORD_INVALID', `${path}: ${(e as Error).message}`, { producer: 'cli' }));
    }
    if (parsed?.kind !== 'kiln-digest-report' || parsed.version !== DIGEST_REPORT_VERSION || !Array.isArray(parsed.declarations)) {
      throw new KilnError(diagnostic('KILN_RECORD_INVALID', `${path} is not a kiln digest report of version ${DIGEST_REPORT_VERSION}`, { producer: 'cli' }));
    }
    return parsed;
  }
  return digestTree(path, { ...treeOptions(o, io), ...(schema !== undefined ? { digestSchema: schema } : {}) });
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  let exitCode = EXIT_OK;
  const program = new Command()
    .name('kiln')
    .description('kiln: semantic digests for TypeScript and JavaScript — what changed, not what was touched')
    .version('0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError('(run with --help for usage)');

  withCommonOptions(
    program
      .command('digest')
      .description('print every declaration of a package tree or file: identity, kind, language, semantic and doc digests, digest schema, span')
      .argument('<path>', 'a package directory, a source directory or a single file')
      .addOption(new Option('--digest-schema <n>', 'digest projection to compute').choices(supportedDigestSchemas().map(String))),
  ).action(async (path: string, o: CommonOptions & { digestSchema?: string }) => {
    const report = await digestTree(path, { ...treeOptions(o, io), ...(o.digestSchema ? { digestSchema: Number(o.digestSchema) } : {}) });
    if (o.format === 'json') io.out(JSON.stringify(report, null, 2));
    else {
      io.out(formatDigestText(report));
      if (report.diagnostics.length) io.err(formatDiagnostics(report.diagnostics));
    }
    if (report.diagnostics.some((d) => d.severity === 'error')) exitCode = EXIT_FAILURE;
  });

  withCommonOptions(
    program
      .command('diff')
      .description('compare two versions declaration by declaration: added, removed, changed, re-documented, moved, unchanged — and why')
      .argument('<before>', 'directory, file, or a JSON report recorded with `kiln digest --format json`')
      .argument('<after>', 'directory or file')
      .option('--all', 'list unchanged declarations too'),
  ).action(async (beforePath: string, afterPath: string, o: CommonOptions & { all?: boolean }) => {
    const before = await loadSide(beforePath, o, io);
    const diagnostics: Diagnostic[] = [];
    let staleSchema: number | undefined;
    if (before.digest_schema !== DIGEST_SCHEMA) {
      if (before.digest_schema === PREVIOUS_DIGEST_SCHEMA) staleSchema = before.digest_schema;
      else {
        throw new KilnError(
          diagnostic('KILN_DIGEST_UNSUPPORTED_SCHEMA', `${beforePath} was recorded with digest_schema ${before.digest_schema}; this kiln computes ${supportedDigestSchemas().join(' and ')}`, { producer: 'cli' }),
        );
      }
    }
    const after = await loadSide(afterPath, o, io, staleSchema);
    const result = diffReports(before, after, staleSchema !== undefined ? { staleSchema } : {});
    diagnostics.push(...before.diagnostics, ...after.diagnostics, ...result.diagnostics);
    if (o.format === 'json') io.out(JSON.stringify({ ...result, diagnostics }, null, 2));
    else {
      io.out(formatDiffText(result, !!o.all));
      if (diagnostics.length) io.err(formatDiagnostics(diagnostics));
    }
    if (diagnostics.some((d) => d.severity === 'error')) exitCode = EXIT_FAILURE;
  });

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
    const shadowed: string[] = [];
    for (const p of ws.projects) {
      if (p.root === '.' || p.root === '') continue;
      for (const def of readTargetDefinitions(root, p.root, names).targets.values()) {
        if (def.spec) (targets[p.root] ??= []).push(def.spec);
        if (def.inputs) shadowed.push(`${p.name}:${def.name} declares its own inputs in ${def.origin} (${JSON.stringify(def.inputs)}): they override kiln's, so raw file bytes stay in its hash and a comment edit is not a hit. Remove them (kiln's key covers the sources).`);
      }
    }
    const keys = await computeWorkspaceKeys(root, { ...t, record: o.record, targets, ...(plugin.tsConfig ? { tsconfigs: Object.fromEntries(ws.projects.map((p) => [p.root, plugin.tsConfig!])) } : {}) });
    if (o.format === 'json') io.out(JSON.stringify(keys, null, 2));
    else {
      io.out(formatKeysText(keys));
      const ds = [...keys.diagnostics, ...keys.projects.flatMap((p) => p.diagnostics)];
      if (ds.length) io.err(formatDiagnostics(ds));
    }
    for (const line of shadowed) io.err(`kiln: warning: ${line}`);
  });

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
    const keys = await computeWorkspaceKeys(o.workspace, {
      ...treeOptions(o, io),
      roots: [project.root],
      record: true,
      ...(mode === 'tool' ? { targets: { [project.root]: [def!.spec!] } } : {}),
      ...(plugin.tsConfig ? { tsconfigs: { [project.root]: plugin.tsConfig } } : {}),
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

  const store = program.command('store').description('the local store of slices, manifests and reports');
  store
    .command('gc')
    .description('remove packs no view manifest names, and entries of other store formats or extractor versions')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--dry-run', 'list what would be removed; remove nothing')
    .option('--grace <minutes>', 'keep entries younger than this, whatever names them', '15')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: { store?: string; dryRun?: boolean; grace: string; format: 'text' | 'json' }) => {
      const dir = o.store ?? defaultStoreDir();
      const graceMs = intOption('--grace', o.grace, 0) * 60_000;
      try {
        await stat(dir);
      } catch {
        throw new KilnError(diagnostic('KILN_NOT_FOUND', `no store at ${dir}`, { producer: 'cli' }));
      }
      const r = await collectGarbage(dir, { dryRun: o.dryRun ?? false, graceMs });
      if (o.format === 'json') {
        io.out(JSON.stringify(r, null, 2));
        return;
      }
      const bytes = r.removed.reduce((s, x) => s + x.size, 0);
      io.out(`${r.dryRun ? 'would remove' : 'removed'} ${r.removed.length} of ${r.entries} entries (${(bytes / 1e6).toFixed(2)} MB indexed${r.dryRun ? '' : `, ${(r.reclaimedBytes / 1e6).toFixed(2)} MB reclaimed`}); kept ${r.livePacks} pack(s) named by ${r.manifests} view manifest(s)`);
      const byReason = new Map<string, number>();
      for (const x of r.removed) byReason.set(x.reason, (byReason.get(x.reason) ?? 0) + 1);
      for (const [reason, n] of [...byReason].sort()) io.out(`  ${String(n).padStart(5)}  ${reason}`);
    });

  const graph = program.command('graph').description('the codegraph: a versioned JSONL record of files, modules, declarations, imports, references and calls');
  registerGraphExport(graph, io, (code) => {
    exitCode = code;
  });
  registerGraphQueries(graph, io, (code) => {
    exitCode = code;
  });
  registerContext(program, io, (code) => {
    exitCode = code;
  });
  registerMcp(program, io);

  program
    .command('explain')
    .description('explain a diagnostic code: what it means and how to fix it')
    .argument('[code]', 'a code such as KILN_SYNTAX_ERROR')
    .option('--list', 'list every code')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((code: string | undefined, o: { list?: boolean; format: 'text' | 'json' }) => {
      if (o.list || !code) {
        const codes = Object.keys(CODES) as (keyof typeof CODES)[];
        if (o.format === 'json') io.out(JSON.stringify(codes.map((c) => ({ code: c, ...CODES[c] })), null, 2));
        else io.out(codes.map((c) => `${c.padEnd(32)} ${CODES[c].severity.padEnd(8)} ${CODES[c].title}`).join('\n'));
        return;
      }
      const upper = code.toUpperCase();
      if (!isDiagnosticCode(upper)) {
        throw new KilnError(diagnostic('KILN_UNKNOWN_CODE', `${code} is not a kiln diagnostic code`, { producer: 'cli' }));
      }
      const e = CODES[upper];
      if (o.format === 'json') io.out(JSON.stringify({ code: upper, ...e }, null, 2));
      else io.out(`${upper} (${e.severity})\n\n${e.title}.\n\nWhat it means: ${e.meaning}\n\nHow to fix it: ${e.hint}`);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (e instanceof KilnError) {
      io.err(formatDiagnostic(e.diagnostic));
      return e.code === 'KILN_USAGE' || e.code === 'KILN_UNKNOWN_CODE' ? EXIT_USAGE : EXIT_FAILURE;
    }
    io.err(`kiln: internal error: ${(e as Error).stack ?? String(e)}`);
    return EXIT_FAILURE;
  }
}
