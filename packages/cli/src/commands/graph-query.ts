/**
 * Reading a codegraph from the command line: `kiln graph summary|find|module|neighbors` and
 * `kiln context pack|explain`. Each reads a graph from `--graph FILE.jsonl` or exports one from a
 * package directory on the spot (the positional `[dirs...]`, default `.`); with both, the file is the
 * graph and the directory the source tree (freshness, source text). Several packages (directories, or
 * graph files paired with their directories by package name) are merged into one graph. Text by default, `--format json`
 * for the query result itself. Thin: every answer comes from @kiln/core.
 *
 * Exit codes as every kiln command: 0 ok (a stale graph is a warning on stderr, not a failure),
 * 1 a missing path, an unreadable graph, a node that is not there or is ambiguous, an export that
 * checked mode refused; 2 usage.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import {
  contextPack,
  diagnostic,
  explainContext,
  findIdentifiers,
  formatExplanationText,
  formatFindText,
  formatModuleText,
  formatNeighborsText,
  formatSummaryText,
  graphSummary,
  KilnError,
  loadGraph,
  moduleView,
  neighborhood,
  type Diagnostic,
  type LoadGraphOptions,
  type LoadedGraph,
} from '@kiln/core';
import { intOption, type Io } from '../common.js';
import { formatDiagnostics } from '../format.js';

interface SourceOptions {
  graph: string[];
  allowErrors?: boolean;
  tsconfig?: string;
  store?: string | false;
  workers?: string;
  format: 'text' | 'json';
}

function usage(message: string): KilnError {
  return new KilnError(diagnostic('KILN_USAGE', message, { producer: 'cli' }));
}

function withGraphSource(cmd: Command, formats: string[] = ['text', 'json']): Command {
  return cmd
    .option('--graph <file>', 'read this codegraph JSONL (from `kiln graph export`) instead of exporting now; repeat it for several packages', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--allow-errors', 'when exporting now: accept a project that does not type-check (broken modules get syntax facts only)')
    .option('--tsconfig <name>', 'when exporting now: tsconfig file name relative to the package')
    .option('--store <dir>', 'when exporting now: local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--no-store', 'when exporting now: do not read or write the local store')
    .option('--workers <n>', 'when exporting now: worker threads (default: one per core but one, at least 1; 0 = no pool)')
    .addOption(new Option('--format <format>', 'output format').choices(formats).default(formats[0]));
}

/**
 * The graph for a command: `--graph FILE` (with the directory as its source tree when given) or an export
 * of the directory; several of either give one merged graph of their packages.
 */
export async function graphFromOptions(dirs: string[], o: Omit<SourceOptions, 'format'> & { format?: string }, io: Io): Promise<LoadedGraph> {
  const opts: LoadGraphOptions = { mode: o.allowErrors ? 'allow-errors' : 'checked' };
  if (o.graph.length) opts.graph = o.graph;
  if (dirs.length) opts.dir = dirs;
  else if (!o.graph.length) opts.dir = '.';
  if (o.tsconfig !== undefined) opts.tsConfig = o.tsconfig;
  if (o.store === false) opts.store = false;
  else if (typeof o.store === 'string') opts.store = o.store;
  if (o.workers !== undefined) opts.workers = intOption('--workers', o.workers, 0);
  try {
    const g = await loadGraph(opts);
    const notable = g.diagnostics.filter((d) => d.severity !== 'info');
    if (notable.length) io.err(formatDiagnostics(notable, o.format));
    return g;
  } catch (e) {
    const more = (e as { diagnostics?: Diagnostic[] }).diagnostics;
    if (e instanceof KilnError && more?.length) {
      const rest = more.filter((d) => d !== e.diagnostic);
      if (rest.length) io.err(formatDiagnostics(rest, o.format));
    }
    throw e;
  }
}

function splitList(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Adds summary, find, module and neighbors under the `graph` command. */
export function registerGraphQueries(graph: Command, io: Io, _setExit: (code: number) => void): void {
  const print = (o: { format: string }, json: unknown, text: () => string) => io.out(o.format === 'json' ? JSON.stringify(json, null, 2) : text());

  withGraphSource(
    graph
      .command('summary')
      .description('what a codegraph holds: snapshot, counts per record kind and provenance tier, packages, modules, diagnostics')
      .argument('[dirs...]', 'package directories to export now (several: one merged graph), or the source trees of --graph'),
  ).action(async (dirs: string[], o: SourceOptions) => {
    const g = await graphFromOptions(dirs, o, io);
    const s = graphSummary(g.index);
    print(o, s, () => formatSummaryText(s));
  });

  withGraphSource(
    graph
      .command('find')
      .description('identifiers matching a query, ranked: exact, exact ignoring case, prefix, camel-case humps (gHSC → getHTTPStatusCode), substring')
      .argument('<query>', 'a name, a prefix, camel-case humps or a fragment')
      .argument('[dirs...]', 'package directories to export now (several: one merged graph), or the source trees of --graph')
      .option('--kind <kinds>', 'node kinds to search, comma-separated (default: declaration,module,namespace,file,package)')
      .option('--limit <n>', 'at most this many hits', '20'),
  ).action(async (query: string, dirs: string[], o: SourceOptions & { kind?: string; limit: string }) => {
    const limit = intOption('--limit', o.limit, 1);
    const g = await graphFromOptions(dirs, o, io);
    const kinds = splitList(o.kind);
    const hits = findIdentifiers(g.index, query, { limit, ...(kinds ? { kinds } : {}) });
    print(o, { kind: 'kiln-graph-find', query, hits }, () => formatFindText(query, hits));
  });

  withGraphSource(
    graph
      .command('module')
      .description("one module: its declarations, imports (with their resolved targets), exports, importers and diagnostics")
      .argument('<path>', 'module path (src/shapes), file (src/shapes.ts), a unique suffix (shapes) or a module id')
      .argument('[dirs...]', 'package directories to export now (several: one merged graph), or the source trees of --graph'),
  ).action(async (path: string, dirs: string[], o: SourceOptions) => {
    const g = await graphFromOptions(dirs, o, io);
    const m = moduleView(g.index, path);
    print(o, m, () => formatModuleText(m));
  });

  withGraphSource(
    graph
      .command('neighbors')
      .description('the neighbourhood of a node: nodes within --depth edges and the edges between them, with their direction')
      .argument('<id>', 'a node id (as `kiln graph find` prints it), a module path, or a name only one declaration has')
      .argument('[dirs...]', 'package directories to export now (several: one merged graph), or the source trees of --graph')
      .option('--depth <n>', 'how many edges away', '1')
      .option('--edges <kinds>', 'follow only these edge kinds, comma-separated (contains,defines,imports,exports,references,calls,documents,diagnoses)')
      .addOption(new Option('--direction <dir>', 'follow edges out of a node, into it, or both').choices(['out', 'in', 'both']).default('both'))
      .option('--limit <n>', 'at most this many nodes', '500'),
  ).action(async (id: string, dirs: string[], o: SourceOptions & { depth: string; edges?: string; direction: 'out' | 'in' | 'both'; limit: string }) => {
    const depth = intOption('--depth', o.depth, 0);
    const limit = intOption('--limit', o.limit, 1);
    const g = await graphFromOptions(dirs, o, io);
    const edges = splitList(o.edges);
    const n = neighborhood(g.index, id, { depth, direction: o.direction, limit, ...(edges ? { edges } : {}) });
    print(o, n, () => formatNeighborsText(n));
  });
}

interface PackCliOptions extends Omit<SourceOptions, 'format'> {
  task?: string;
  files?: string;
  budget: string;
  format: 'compact' | 'json' | 'text';
  explain?: boolean;
}

/** Adds `kiln context pack` and `kiln context explain`. */
export function registerContext(program: Command, io: Io, _setExit: (code: number) => void): void {
  const context = program.command('context').description('task context for agents: ranked, token-budgeted packs of declarations from the codegraph');

  const request = (o: PackCliOptions) => {
    if ((o.task === undefined) === (o.files === undefined)) throw usage('give exactly one of --task "…" and --files a.ts,b.ts');
    const budget = intOption('--budget', o.budget, 1);
    return { ...(o.task !== undefined ? { task: o.task } : { files: splitList(o.files) ?? [] }), budget };
  };

  withGraphSource(
    context
      .command('pack')
      .description('the declarations (with source anchors and, when the tree is at hand, their source) most relevant to a task, ranked and packed into a token budget; states whether the graph is fresh')
      .argument('[dirs...]', 'package directories: exported now (several: one merged graph), or the source trees of --graph (freshness and source text come from them)')
      .option('--task <text>', 'what you are about to do, in words (identifiers in it count most)')
      .option('--files <paths>', 'instead of a task: the files you work in, comma-separated')
      .option('--budget <tokens>', 'token budget of the printed pack (estimate: ceil(chars / 4))', '4000')
      .option('--explain', 'say why each item is in the pack'),
    ['compact', 'json'],
  ).action(async (dirs: string[], o: PackCliOptions) => {
    const req = request(o);
    const g = await graphFromOptions(dirs, o, io);
    const r = await contextPack(g.index, { ...req, format: o.format === 'json' ? 'json' : 'compact', explain: o.explain === true }, g.sourceDir ? { sourceDir: g.sourceDir } : {});
    io.out(r.text);
    if (r.diagnostics.length) io.err(formatDiagnostics(r.diagnostics, o.format));
  });

  withGraphSource(
    context
      .command('explain')
      .description('why one node is (or is not) in the context pack for a task: its seed, its path from a seed, its score and rank')
      .argument('<node>', 'a node id, or a name only one declaration has')
      .argument('[dirs...]', 'package directories: exported now, or the source trees of --graph')
      .option('--task <text>', 'the task the pack is for')
      .option('--files <paths>', 'instead of a task: the files, comma-separated')
      .option('--budget <tokens>', 'token budget of the pack', '4000'),
  ).action(async (node: string, dirs: string[], o: PackCliOptions) => {
    const req = request(o);
    const g = await graphFromOptions(dirs, o, io);
    const e = await explainContext(g.index, req, node, g.sourceDir ? { sourceDir: g.sourceDir } : {});
    io.out(o.format === 'json' ? JSON.stringify(e, null, 2) : formatExplanationText(e));
  });
}
