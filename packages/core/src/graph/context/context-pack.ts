/**
 * Context packs, the pipeline: seed (task text or files) → expand over weighted edges → rank → pack
 * into the budget → render. `contextPack` is what `kiln context pack` and the MCP tools
 * `context_for_task` / `context_for_files` call; `explainContext` answers "why is this node in the
 * pack (or not)?" for `explain_context`.
 *
 * Invariants: the only I/O is reading the source tree (freshness hashes, source text and JSDoc for
 * seeding), and only when a source directory is given; the same graph, request and tree give a
 * byte-identical pack; a stale graph is always said so in the pack (and a `KILN_CONTEXT_STALE`
 * diagnostic is returned for the caller to print).
 */
import { diagnostic, KilnError, type Diagnostic } from '../../diagnostics/diagnostic.js';
import type { GraphIndex } from '../query/graph-index.js';
import { declPathOf, nameOf } from '../query/model.js';
import { resolveNode } from '../query/lookup.js';
import { expandSeeds, type Reached } from './expand.js';
import { checkFreshness, type Freshness } from './freshness.js';
import { packCandidates, renderContextPack, type ContextPack, type PackFormat } from './pack.js';
import { rankCandidates, type Candidate } from './rank.js';
import { seedsFromFiles, seedsFromTask, type Seed } from './seed.js';
import { loadSources, type SourceTree } from './source.js';

export interface ContextRequest {
  /** Free text: what the agent is about to do. Exactly one of task and files. */
  task?: string;
  /** Files (graph-relative paths, or a unique suffix of one) the agent is working in. */
  files?: string[];
  /** Token budget of the printed pack (estimate: ceil(chars / 4)). */
  budget: number;
  format?: PackFormat;
  explain?: boolean;
}

export interface ContextOptions {
  /** The tree the graph was exported from: freshness, source text and documentation come from here. */
  sourceDir?: string;
  /** A freshness already computed for this index and tree (the MCP server caches it per call). */
  freshness?: Freshness;
}

export interface ContextResult {
  pack: ContextPack;
  text: string;
  diagnostics: Diagnostic[];
}

export const MIN_BUDGET = 64;

interface Ranked {
  seeds: Seed[];
  reached: Map<string, Reached>;
  candidates: Candidate[];
  seeding: ContextPack['seeding'];
  freshness: Freshness;
  sources?: SourceTree;
}

function usage(message: string): KilnError {
  return new KilnError(diagnostic('KILN_USAGE', message, { producer: 'context' }));
}

async function rank(index: GraphIndex, req: ContextRequest, opts: ContextOptions): Promise<Ranked> {
  if ((req.task === undefined) === (req.files === undefined)) throw usage('a context pack needs a task or a list of files (exactly one)');
  if (req.task !== undefined && !req.task.trim()) throw usage('the task is empty');
  if (!Number.isInteger(req.budget) || req.budget < MIN_BUDGET) throw usage(`the budget must be an integer ≥ ${MIN_BUDGET} tokens, got ${req.budget}`);
  const freshness = opts.freshness ?? (await checkFreshness(index, opts.sourceDir));
  let sources: SourceTree | undefined;
  if (opts.sourceDir !== undefined) {
    const dirty = new Set([...freshness.changed, ...freshness.deleted]);
    sources = await loadSources(opts.sourceDir, index.files(), dirty);
  }
  let seeds: Seed[];
  let seeding: ContextPack['seeding'];
  if (req.task !== undefined) {
    const docText = sources ? (r: { span?: { file: string; startLine: number; startColumn: number; endLine: number; endColumn: number } }) => (r.span ? sources!.docText(r.span) : undefined) : undefined;
    const s = seedsFromTask(index, req.task, docText ? { docText } : {});
    seeds = s.seeds;
    seeding = { identifiers: s.terms.identifiers, keywords: s.terms.keywords };
  } else {
    const s = seedsFromFiles(index, req.files!);
    seeds = s.seeds;
    seeding = { files: req.files!, ...(s.unknown.length ? { unknown_files: s.unknown } : {}) };
  }
  const reached = expandSeeds(index, seeds);
  const candidates = rankCandidates(index, reached, seeds);
  return { seeds, reached, candidates, seeding, freshness, ...(sources ? { sources } : {}) };
}

function label(index: GraphIndex, id: string, refOf?: (id: string) => string | undefined): string {
  const r = index.node(id);
  const name = r ? (r.kind === 'declaration' ? declPathOf(r) ?? nameOf(r) : r.kind === 'module' ? `module ${nameOf(r)}` : `${r.kind} ${nameOf(r)}`) : id;
  const ref = refOf?.(id);
  return ref ? `${ref} ${name}` : name;
}

const VERB: Record<string, string> = { calls: 'calls', references: 'references', documents: 'links to', diagnoses: 'is about', imports: 'imports', defines: 'defines' };

/** The best path from a seed to `id`, as sentences ("format calls area"), seed first. */
export function pathSteps(index: GraphIndex, reached: ReadonlyMap<string, Reached>, id: string, refOf?: (id: string) => string | undefined): string[] {
  const steps: string[] = [];
  let cur = reached.get(id);
  let guard = 0;
  while (cur?.via && guard++ < 16) {
    const v = cur.via;
    const from = label(index, v.from, refOf);
    const here = label(index, cur.id, refOf);
    steps.unshift(v.direction === 'out' ? `${from} ${VERB[v.edge] ?? v.edge} ${here}` : `${here} ${VERB[v.edge] ?? v.edge} ${from}`);
    cur = reached.get(v.from);
  }
  return steps;
}

function whyLines(index: GraphIndex, ranked: Ranked, c: Candidate, refOf?: (id: string) => string | undefined): string[] {
  const lines: string[] = [];
  const f = c.factors.map((x) => `${x.name} ${x.value}`).join(' × ');
  lines.push(`score ${c.score.toFixed(4)} = proximity ${c.proximity.toFixed(4)} × ${f}`);
  if (c.seed) lines.push(`seed ${c.seed.score.toFixed(4)}: ${c.seed.reasons.join('; ')}`);
  else {
    const seed = ranked.seeds.find((s) => s.id === c.reached.seed);
    lines.push(`reached in ${c.reached.hops} step${c.reached.hops === 1 ? '' : 's'} from seed ${label(index, c.reached.seed, refOf)}${seed ? ` (${seed.reasons.join('; ')})` : ''}: ${pathSteps(index, ranked.reached, c.id, refOf).join('; ')}`);
  }
  return lines;
}

/** Build a context pack and its printed text. */
export async function contextPack(index: GraphIndex, req: ContextRequest, opts: ContextOptions = {}): Promise<ContextResult> {
  return (await run(index, req, opts)).result;
}

async function run(index: GraphIndex, req: ContextRequest, opts: ContextOptions): Promise<{ ranked: Ranked; result: ContextResult }> {
  const ranked = await rank(index, req, opts);
  const format = req.format ?? 'compact';
  const pack = packCandidates({
    index,
    candidates: ranked.candidates,
    request: { ...(req.task !== undefined ? { task: req.task } : {}), ...(req.files !== undefined ? { files: req.files } : {}), budget: req.budget, format, explain: req.explain === true },
    freshness: ranked.freshness,
    seeding: ranked.seeding,
    ...(ranked.sources ? { sources: ranked.sources } : {}),
    ...(req.explain ? { explain: (c: Candidate, refOf: (id: string) => string | undefined) => whyLines(index, ranked, c, refOf) } : {}),
  });
  const diagnostics: Diagnostic[] = [];
  if (ranked.freshness.status === 'stale') {
    const f = ranked.freshness;
    diagnostics.push(
      diagnostic('KILN_CONTEXT_STALE', `the graph (snapshot ${f.snapshot || 'unknown'}) is stale: ${f.changed.length} changed, ${f.added.length} added, ${f.deleted.length} deleted file(s) since it was exported`, { producer: 'context' }),
    );
  }
  return { ranked, result: { pack, text: renderContextPack(pack, format), diagnostics } };
}

export interface ContextExplanation {
  kind: 'kiln-context-explanation';
  id: string;
  name: string;
  task?: string;
  files?: string[];
  budget: number;
  /** In the pack at this budget, with its local ref. */
  in_pack: boolean;
  ref: string | null;
  /** 1-based rank among the candidates, or null when it is not a candidate. */
  rank: number | null;
  candidates: number;
  score: number | null;
  proximity: number | null;
  factors: { name: string; value: number }[];
  seed: { score: number; reasons: string[] } | null;
  path: string[];
  verdict: string;
}

/** Why a node is (or is not) in the pack for a task. */
export async function explainContext(index: GraphIndex, req: ContextRequest, nodeRef: string, opts: ContextOptions = {}): Promise<ContextExplanation> {
  const node = resolveNode(index, nodeRef, 'context');
  const { ranked, result } = await run(index, { ...req, format: req.format ?? 'compact', explain: false }, opts);
  const at = ranked.candidates.findIndex((c) => c.id === node.id);
  const c = at >= 0 ? ranked.candidates[at] : undefined;
  const item = result.pack.items.find((i) => i.id === node.id);
  const reached = ranked.reached.get(node.id);
  const seed = ranked.seeds.find((s) => s.id === node.id);
  let verdict: string;
  if (item) verdict = `in the pack as ${item.ref} (rank ${at + 1} of ${ranked.candidates.length}, ${item.source_mode === 'full' ? 'with its source' : item.source_mode === 'signature' ? 'with its signature line: its full source did not fit' : 'anchor only'})`;
  else if (c) {
    const last = result.pack.items.length ? ranked.candidates.findIndex((x) => x.id === result.pack.items[result.pack.items.length - 1]!.id) + 1 : 0;
    verdict = `a candidate (rank ${at + 1} of ${ranked.candidates.length}) but left out: the budget of ${req.budget} tokens was used up by higher-ranked items (the pack reaches rank ${last}); a larger budget would include it`;
  } else if (reached) verdict = `reached by the walk, but a ${node.kind} is not an item a pack holds (only declarations and diagnostics are; modules appear through them)`;
  else verdict = 'not reached: no seed of the task is within 3 weighted steps of it, and its name, module path and documentation match no task word';
  return {
    kind: 'kiln-context-explanation',
    id: node.id,
    name: label(index, node.id),
    ...(req.task !== undefined ? { task: req.task } : {}),
    ...(req.files !== undefined ? { files: req.files } : {}),
    budget: req.budget,
    in_pack: !!item,
    ref: item?.ref ?? null,
    rank: c ? at + 1 : null,
    candidates: ranked.candidates.length,
    score: c ? Math.round(c.score * 10000) / 10000 : null,
    proximity: reached ? Math.round(reached.proximity * 10000) / 10000 : null,
    factors: c?.factors ?? [],
    seed: seed ? { score: Math.round(seed.score * 10000) / 10000, reasons: seed.reasons } : null,
    path: reached ? pathSteps(index, ranked.reached, node.id) : [],
    verdict,
  };
}

export function formatExplanationText(e: ContextExplanation): string {
  const lines = [`${e.name}  (${e.id})`, `  ${e.verdict}`];
  if (e.score !== null) lines.push(`  score ${e.score} = proximity ${e.proximity} × ${e.factors.map((f) => `${f.name} ${f.value}`).join(' × ')}`);
  if (e.seed) lines.push(`  seed ${e.seed.score}: ${e.seed.reasons.join('; ')}`);
  if (e.path.length) lines.push(`  path: ${e.path.join('; ')}`);
  return lines.join('\n');
}

