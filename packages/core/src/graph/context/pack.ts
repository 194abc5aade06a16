/**
 * Context packs, stage 4 — packing and rendering: take ranked candidates in order and keep each one
 * whose text still fits the token budget (full source, else its signature line, else nothing), then
 * render the pack as compact text for a model or as JSON.
 *
 * Token estimate: ceil(characters / 4) of the text as printed (UTF-16 code units). It is the usual rule
 * of thumb for English and code with BPE tokenizers; the pack never asks a tokenizer, so it needs no
 * model and no network, and the same text always costs the same.
 *
 * Compact format (version 2): a header (task, graph snapshot, freshness, legend), then one block per
 * item in rank order: `d1 function area* src/shapes.ts:8-13 C` — a local short id (d = declaration,
 * ! = diagnostic), the declaration's path in its module (never a repeated qualified name: the package
 * is named once in the header), `*` for public API, the source anchor, the provenance tier as one letter;
 * a diagnostic is `!1 C src/x.ts:16:12 - error TS2322: message`, the head of its envelope's text
 * (the JSON item carries the whole envelope);
 * then `rel:` its edges to items above it, with direction (`→calls d1`: this item calls d1; `←calls d1`:
 * d1 calls it), then `why:` lines with --explain, then the source text in a fence.
 *
 * Invariants: deterministic — the same graph, request, freshness and source text give byte-identical
 * output (no clock, no randomness, no absolute paths, every order total); the printed text never
 * estimates above the budget, except for a pack whose header alone does not fit (it then holds no item
 * and says so); an item's source is only text read from an unchanged file.
 */
import { formatEnvelopeText, type DiagnosticEnvelope } from '../../diagnostics/envelope.js';
import { graphDiagnosticOf } from '../query/diagnostic.js';
import type { GraphIndex } from '../query/graph-index.js';
import { anchorOf, byCodePoint, declKindOf, declPathOf, isPublic, nameOf, type QueryRecord, type GraphSpan } from '../query/model.js';
import type { Freshness } from './freshness.js';
import type { Candidate } from './rank.js';
import type { SourceTree } from './source.js';
import { CONTEXT_PACK_VERSION } from '../../version.js';

export const TOKEN_ESTIMATE = 'ceil(chars / 4)';

/** Tokens of a text by the pack's estimate. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export type PackFormat = 'compact' | 'json';
export type SourceMode = 'full' | 'signature' | 'in-parent' | 'none';

export interface PackRelation {
  /** 'out': this item → the other (this calls it); 'in': the other → this item. */
  direction: 'out' | 'in';
  kind: string;
  ref: string;
  id: string;
}

export interface PackedItem {
  ref: string;
  id: string;
  kind: string;
  decl_kind: string | null;
  path: string;
  module: string | null;
  anchor: string | null;
  span: GraphSpan | null;
  provenance: string | null;
  exported: boolean;
  degraded: boolean;
  language: string | null;
  score: number;
  source_mode: SourceMode;
  source?: string;
  /** Diagnostics only. */
  severity?: string;
  message?: string;
  /** Diagnostics only: the record as the diagnostic envelope (null for a code a newer kiln wrote). */
  envelope?: DiagnosticEnvelope | null;
  relations: PackRelation[];
  why?: string[];
}

export interface ContextPack {
  kind: 'kiln-context-pack';
  version: number;
  request: { task?: string; files?: string[]; budget: number; format: PackFormat; explain: boolean };
  estimate: string;
  tokens_used: number;
  /** `package` for one package's graph; `packages` too when several were merged. */
  graph: { package: string | null; packages?: string[]; snapshot: string; schema_version: number | string; mode: string | null };
  freshness: Freshness;
  seeding: { identifiers?: string[]; keywords?: string[]; files?: string[]; unknown_files?: string[] };
  candidates: number;
  items: PackedItem[];
  /** Set when not even the header fits the budget. */
  note?: string;
}

export interface PackInput {
  index: GraphIndex;
  candidates: readonly Candidate[];
  request: ContextPack['request'];
  freshness: Freshness;
  seeding: ContextPack['seeding'];
  sources?: SourceTree;
  /** Explanation lines of a candidate (only asked with `explain`). */
  explain?: (c: Candidate, refOf: (id: string) => string | undefined) => string[];
}

/** Candidates considered for packing, at most (the rest cannot fit any sane budget). */
const MAX_CONSIDERED = 600;
/** One item's full source may take at most this share of the budget (else its signature is shown). */
const FULL_SOURCE_SHARE = 0.35;
const MIN_FULL_SOURCE_TOKENS = 160;
/** The shortest item block there is (`\nd9 type T src/a.ts:1 C\n`). */
const MIN_ITEM_CHARS = 24;
/** Edges listed between items. */
const RELATION_KINDS = ['calls', 'references', 'documents', 'diagnoses', 'imports'];
const REL_SHORT: Record<string, string> = { calls: 'calls', references: 'refs', documents: 'docs', diagnoses: 'diagnoses', imports: 'imports' };
const PROV_LETTER: Record<string, string> = { compiler_checked: 'C', compiler_unchecked: 'U', syntax_inferred: 'S', manifest_declared: 'M' };
const FENCE_LANG: Record<string, string> = { typescript: 'ts', tsx: 'tsx', javascript: 'js', jsx: 'jsx', rust: 'rust', json: 'json' };

const round = (x: number) => Math.round(x * 10000) / 10000;

function listFiles(label: string, files: string[]): string {
  const shown = files.slice(0, 10).join(', ');
  return `${label} ${shown}${files.length > 10 ? ` and ${files.length - 10} more` : ''}`;
}

export function freshnessLine(f: Freshness): string {
  if (f.status === 'unknown') return 'freshness: unknown — no source tree given, so the pack cannot tell whether the graph still matches it (anchors only, no source text)';
  if (f.status === 'fresh') return `freshness: fresh — the working tree matches the graph (${f.checked} files compared)`;
  const parts = [f.changed.length ? listFiles('changed', f.changed) : '', f.added.length ? listFiles('added', f.added) : '', f.deleted.length ? listFiles('deleted', f.deleted) : ''].filter(Boolean);
  return `freshness: STALE — the working tree moved since the graph was exported: ${parts.join('; ')}. Anchors into these files may be off and their source is left out; re-export the graph (kiln graph export, or the MCP reindex tool)`;
}

function headerText(p: ContextPack, used: number, count: number): string {
  const lines = [
    `# kiln context pack v${p.version} · budget ${p.request.budget} tokens (${p.estimate}) · used ${used} · ${count} of ${p.candidates} candidates`,
    p.request.task !== undefined ? `task: ${p.request.task.replace(/\s+/g, ' ').trim()}` : `files: ${(p.request.files ?? []).join(', ')}`,
    `graph: ${p.graph.package ?? p.graph.packages?.join(', ') ?? '(no package)'} · snapshot ${p.graph.snapshot || '(none)'} · mode ${p.graph.mode ?? '-'} · schema ${p.graph.schema_version}`,
    freshnessLine(p.freshness),
    'legend: d# declaration, !# diagnostic; * public API; provenance C checked, U unchecked, S syntax only, M manifest; rel: →kind dN = this item → dN, ←kind dN = dN → this item',
  ];
  if (p.seeding.unknown_files?.length) lines.push(`not in the graph: ${p.seeding.unknown_files.join(', ')}`);
  if (p.note) lines.push(`note: ${p.note}`);
  return `${lines.join('\n')}\n`;
}

function itemHead(it: PackedItem): string {
  if (it.kind === 'diagnostic') {
    const prov = PROV_LETTER[it.provenance ?? ''] ?? '?';
    // The envelope's terminal head (`file:line:col - error TS2322: message`), on one line; the hint and
    // related locations are in the JSON form's envelope.
    if (it.envelope) return `${it.ref} ${prov} ${formatEnvelopeText({ ...it.envelope, message: it.message ?? '', related: [] }).split('\n')[0]}`;
    return `${it.ref} ${prov} ${it.anchor ?? '(no location)'} - ${it.severity ?? 'diagnostic'} ${it.path}: ${it.message ?? ''}`;
  }
  return `${it.ref} ${it.decl_kind ?? it.kind} ${it.path}${it.exported ? '*' : ''} ${it.anchor ?? '(no location)'} ${PROV_LETTER[it.provenance ?? ''] ?? '?'}${it.degraded ? ' degraded' : ''}`;
}

export function compactItemText(it: PackedItem): string {
  const lines = [itemHead(it)];
  if (it.relations.length) lines.push(`  rel: ${it.relations.map((r) => `${r.direction === 'out' ? '→' : '←'}${REL_SHORT[r.kind] ?? r.kind} ${r.ref}`).join(', ')}`);
  if (it.source_mode === 'in-parent') lines.push('  (source within its parent above)');
  for (const w of it.why ?? []) lines.push(`  why: ${w}`);
  if (it.source !== undefined) lines.push(`\`\`\`${FENCE_LANG[it.language ?? ''] ?? ''}`, it.source, '```');
  return `\n${lines.join('\n')}\n`;
}

function jsonItemText(it: PackedItem, first: boolean): string {
  // as it appears inside `"items": [ … ]` of JSON.stringify(pack, null, 2)
  const body = JSON.stringify(it, null, 2)
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
  return `${first ? '\n' : ',\n'}${body}`;
}

export function renderContextPack(p: ContextPack, format: PackFormat): string {
  if (format === 'json') return JSON.stringify(p, null, 2);
  return renderCompact(p, p.tokens_used);
}

function renderCompact(p: ContextPack, used: number): string {
  let out = headerText(p, used, p.items.length);
  for (const it of p.items) out += compactItemText(it);
  return out;
}

function spanWithin(inner: GraphSpan, outer: GraphSpan): boolean {
  return inner.file === outer.file && (inner.startLine > outer.startLine || (inner.startLine === outer.startLine && inner.startColumn >= outer.startColumn)) && (inner.endLine < outer.endLine || (inner.endLine === outer.endLine && inner.endColumn <= outer.endColumn));
}

/** Select items within the budget and build the pack. */
export function packCandidates(input: PackInput): ContextPack {
  const { index, request } = input;
  const h = index.header;
  const pack: ContextPack = {
    kind: 'kiln-context-pack',
    version: CONTEXT_PACK_VERSION,
    request,
    estimate: TOKEN_ESTIMATE,
    tokens_used: 0,
    graph: {
      package: typeof h.package === 'string' ? h.package : null,
      ...(Array.isArray(h.packages) ? { packages: (h.packages as unknown[]).filter((x): x is string => typeof x === 'string') } : {}),
      snapshot: typeof h.snapshot?.id === 'string' ? h.snapshot.id : '',
      schema_version: h.schema_version,
      mode: typeof h.mode === 'string' ? h.mode : null,
    },
    freshness: input.freshness,
    seeding: input.seeding,
    candidates: input.candidates.length,
    items: [],
  };
  const budget = request.budget;
  const format = request.format;
  const maxDigits = (n: number) => String(n).replace(/\d/g, '9');
  // header cost with the widest numbers it can show
  const headerTokens =
    format === 'json'
      ? estimateTokens(JSON.stringify({ ...pack, tokens_used: Number(maxDigits(budget)), items: [] }, null, 2))
      : estimateTokens(headerText(pack, Number(maxDigits(budget)), Number(maxDigits(input.candidates.length))));
  if (headerTokens > budget) {
    pack.note = `the budget (${budget} tokens) does not hold even the header; no item was packed`;
    pack.tokens_used = estimateTokens(renderContextPack(pack, format));
    return pack;
  }

  const refOf = new Map<string, string>();
  const fullSource = new Map<string, GraphSpan>(); // items packed with full source
  let chars = 0; // item text so far
  let counts = { d: 0, x: 0 };
  const fullCap = Math.max(MIN_FULL_SOURCE_TOKENS, Math.floor(budget * FULL_SOURCE_SHARE));
  const fits = (extraChars: number) => headerTokens + Math.ceil((chars + extraChars) / 4) + 1 <= budget;

  for (const c of input.candidates.slice(0, MAX_CONSIDERED)) {
    if (!fits(MIN_ITEM_CHARS)) break; // not even a one-line item fits any more
    const r = c.record;
    const isDiag = r.kind === 'diagnostic';
    const ref = isDiag ? `!${counts.x + 1}` : `d${counts.d + 1}`;
    const relations: PackRelation[] = [];
    for (const a of index.adjacent(r.id, { kinds: RELATION_KINDS })) {
      const other = refOf.get(a.other);
      if (other) relations.push({ direction: a.direction, kind: a.edge.kind, ref: other, id: a.other });
    }
    relations.sort((x, y) => byCodePoint(x.ref.replace(/\d+$/, ''), y.ref.replace(/\d+$/, '')) || Number(x.ref.slice(1)) - Number(y.ref.slice(1)) || byCodePoint(x.kind, y.kind) || byCodePoint(x.direction, y.direction));
    const modId = index.moduleIdOf(r);
    const mod = modId ? index.node(modId) : undefined;
    const item: PackedItem = {
      ref,
      id: r.id,
      kind: r.kind,
      decl_kind: declKindOf(r) ?? null,
      path: isDiag ? (typeof r.ts_code === 'string' && r.ts_code ? r.ts_code : nameOf(r)) : declPathOf(r) ?? nameOf(r),
      module: mod ? nameOf(mod) : null,
      anchor: anchorOf(r) ?? null,
      span: r.span ?? null,
      provenance: typeof r.provenance === 'string' ? r.provenance : null,
      exported: isPublic(r),
      degraded: r.degraded === true,
      language: typeof r.language === 'string' ? r.language : null,
      score: round(c.score),
      source_mode: 'none',
      relations,
    };
    if (isDiag) {
      if (typeof r.severity === 'string') item.severity = r.severity;
      item.message = typeof r.message === 'string' ? r.message.replace(/\s+/g, ' ').trim() : '';
      item.envelope = graphDiagnosticOf(r).envelope;
    }
    // the parent holds this item's text already
    if (r.span && typeof r.parent === 'string') {
      let p: string | undefined = r.parent;
      while (p) {
        const ps = fullSource.get(p);
        if (ps && spanWithin(r.span, ps)) {
          item.source_mode = 'in-parent';
          break;
        }
        const pr: QueryRecord | undefined = index.node(p);
        p = typeof pr?.parent === 'string' ? pr.parent : undefined;
      }
    }
    if (input.explain) item.why = input.explain(c, (id) => refOf.get(id));
    const cost = (it: PackedItem) => (format === 'json' ? jsonItemText(it, pack.items.length === 0) : compactItemText(it)).length;
    let chosen: PackedItem | undefined;
    const sources = input.sources;
    if (item.source_mode === 'none' && !isDiag && r.span && sources?.has(r.span.file)) {
      // measure before building: a 2 000-line class is not joined just to learn it does not fit
      const size = sources.size(r.span);
      const body = size !== undefined && Math.ceil(size / 4) <= fullCap ? sources.text(r.span) : undefined;
      if (size !== undefined) {
        const doc = sources.leadingDocBlock(r.span);
        const full: PackedItem | undefined = body === undefined ? undefined : { ...item, source_mode: 'full', source: doc ? `${doc}\n${body}` : body };
        const fullCost = full ? cost(full) : Infinity;
        if (full && Math.ceil(fullCost / 4) <= fullCap && fits(fullCost)) chosen = full;
        else {
          const first = (sources.firstLine(r.span) ?? '').trimEnd();
          const sig = first.length > 200 ? `${first.slice(0, 200)} …` : r.span.endLine > r.span.startLine ? `${first} …` : first;
          const short: PackedItem = { ...item, source_mode: 'signature', source: sig };
          if (fits(cost(short))) chosen = short;
        }
      }
    }
    if (!chosen) {
      if (fits(cost(item))) chosen = item;
      else continue;
    }
    chars += cost(chosen);
    pack.items.push(chosen);
    refOf.set(r.id, ref);
    if (chosen.source_mode === 'full' && r.span) fullSource.set(r.id, r.span);
    counts = isDiag ? { ...counts, x: counts.x + 1 } : { ...counts, d: counts.d + 1 };
  }

  // settle the printed numbers: `tokens_used` is the estimate of the very text that prints it
  for (;;) {
    let used = 0;
    for (let i = 0; i < 6; i++) {
      pack.tokens_used = used;
      const t = estimateTokens(renderContextPack(pack, format));
      if (t === used) break;
      used = Math.max(used, t);
    }
    pack.tokens_used = used;
    if (used <= budget || pack.items.length === 0) break;
    pack.items.pop();
  }
  return pack;
}
