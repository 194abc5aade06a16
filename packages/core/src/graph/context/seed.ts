/**
 * Context packs, stage 1 — seeding: which nodes a task (or a list of files) is about, before any graph
 * walk. A task seeds from exact identifiers it names (`httpBatchLink`, `TRPCError.from`, a module path),
 * then from keywords (camelCase / snake_case split, stemmed, stop words dropped) matched against
 * declaration names, their enclosing path, their module's path, their documentation (when the source
 * tree is at hand) and diagnostic messages, weighted by how rare the word is (idf).
 *
 * Invariants: pure (documentation text comes in through a callback); deterministic (seeds sorted by
 * score, then id in code-point order; scores are computed in a fixed order); a seed's score is in
 * (0, 1], and every seed says why it is one.
 */
import type { GraphIndex } from '../query/graph-index.js';
import { byCodePoint, declPathOf, nameOf, type QueryRecord } from '../query/model.js';
import { identifiersOf, isStopWord, keywordsOf, splitIdentifier, stem } from '../query/terms.js';

export interface Seed {
  id: string;
  score: number;
  reasons: string[];
}

export interface TaskTerms {
  identifiers: string[];
  keywords: string[];
}

export interface SeedOptions {
  /** Documentation text of a declaration, when the source tree is available. */
  docText?: (r: QueryRecord) => string | undefined;
  /** At most this many seeds (default 48). */
  maxSeeds?: number;
}

const SEED_KINDS = new Set(['declaration', 'module', 'diagnostic']);

/** Field weights for a keyword found in each part of a node. */
const W_NAME = 1;
const W_PATH = 0.5; // enclosing declarations (`Circle` for `Circle.scaled`)
const W_MODULE = 0.3;
const W_DOC = 0.35;
const W_MESSAGE = 0.5;
/** A keyword seed is this share "how much of the name the task explains", the rest "how much of the task the node matches". */
const NAME_SHARE = 0.6;
/** A keyword that only prefixes a word (`valid` / `validation`) counts this much of a whole-word match. */
const PREFIX_FACTOR = 0.7;

function tokensOf(text: string): Set<string> {
  return new Set(splitIdentifier(text).map(stem));
}

/** How well keyword `k` matches a token set: 1 for a whole word, PREFIX_FACTOR for a prefix, else 0. */
function wordMatch(k: string, tokens: ReadonlySet<string>): number {
  if (tokens.has(k)) return 1;
  if (k.length < 4) return 0;
  for (const t of tokens) if (t.length >= 4 && (t.startsWith(k) || k.startsWith(t))) return PREFIX_FACTOR;
  return 0;
}

export function taskTerms(task: string): TaskTerms {
  return { identifiers: identifiersOf(task), keywords: keywordsOf(task) };
}

type Field = 'name' | 'path' | 'module' | 'doc' | 'message';
const FIELD_WEIGHT: Record<Field, number> = { name: W_NAME, path: W_PATH, module: W_MODULE, doc: W_DOC, message: W_MESSAGE };
const FIELD_LABEL: Record<Field, string> = { name: 'name', path: 'enclosing declaration', module: 'module path', doc: 'documentation', message: 'message' };
const FIELDS: readonly Field[] = ['name', 'path', 'module', 'doc', 'message'];

/** Token → node ids, per field; built once per graph index (and once per source tree for documentation). */
type Postings = Map<string, string[]>;

interface Lexicon {
  /** Declarations counted for idf. */
  n: number;
  df: Map<string, number>;
  fields: Record<Exclude<Field, 'doc'>, Postings>;
  nameTokens: Map<string, string[]>;
}

const lexicons = new WeakMap<GraphIndex, Lexicon>();

function post(p: Postings, tokens: Iterable<string>, id: string): void {
  for (const t of tokens) {
    const l = p.get(t);
    if (l) l.push(id);
    else p.set(t, [id]);
  }
}

function lexiconOf(index: GraphIndex): Lexicon {
  const hit = lexicons.get(index);
  if (hit) return hit;
  const lex: Lexicon = { n: 0, df: new Map(), fields: { name: new Map(), path: new Map(), module: new Map(), message: new Map() }, nameTokens: new Map() };
  const moduleTokens = new Map<string, Set<string>>();
  for (const r of index.nodes.values()) {
    if (!SEED_KINDS.has(r.kind)) continue;
    const name = r.kind === 'declaration' ? tokensOf(nameOf(r)) : new Set<string>();
    const p = declPathOf(r);
    const modId = index.moduleIdOf(r);
    let mt = modId ? moduleTokens.get(modId) : undefined;
    if (modId && !mt) {
      const m = index.node(modId);
      mt = tokensOf(m ? nameOf(m) : '');
      moduleTokens.set(modId, mt);
    }
    post(lex.fields.name, name, r.id);
    if (p && p.includes('.')) post(lex.fields.path, tokensOf(p.slice(0, p.lastIndexOf('.'))), r.id);
    if (mt) post(lex.fields.module, mt, r.id);
    if (r.kind === 'diagnostic') post(lex.fields.message, tokensOf(`${typeof r.message === 'string' ? r.message : ''} ${nameOf(r)}`), r.id);
    lex.nameTokens.set(r.id, [...name]);
    if (r.kind === 'declaration') {
      lex.n++;
      for (const tok of name) lex.df.set(tok, (lex.df.get(tok) ?? 0) + 1);
    }
  }
  lexicons.set(index, lex);
  return lex;
}

/** Tokens of `postings` that keyword `k` matches, with the match factor (whole word 1, prefix PREFIX_FACTOR). */
function matchingTokens(k: string, postings: Postings): [string, number][] {
  const out: [string, number][] = [];
  if (postings.has(k)) out.push([k, 1]);
  if (k.length >= 4) for (const t of postings.keys()) if (t !== k && t.length >= 4 && (t.startsWith(k) || k.startsWith(t))) out.push([t, PREFIX_FACTOR]);
  return out;
}

export function seedsFromTask(index: GraphIndex, task: string, opts: SeedOptions = {}): { seeds: Seed[]; terms: TaskTerms } {
  const terms = taskTerms(task);
  const found = new Map<string, { identifier: number; keyword: number; reasons: string[] }>();
  const note = (id: string) => {
    let e = found.get(id);
    if (!e) found.set(id, (e = { identifier: 0, keyword: 0, reasons: [] }));
    return e;
  };

  // 1. exact identifiers: a declaration's name or path, a module's path or file
  for (const ident of terms.identifiers) {
    const variants = new Set([ident]);
    if (ident.includes('.') && !ident.includes('/')) for (const part of ident.split('.')) if (part.length > 1) variants.add(part);
    for (const v of variants) {
      for (const id of index.byName(v)) {
        const r = index.node(id)!;
        if (!SEED_KINDS.has(r.kind)) continue;
        const exact = nameOf(r) === v || declPathOf(r) === v;
        if (!exact) continue;
        const whole = v === ident;
        const e = note(id);
        const s = whole ? 1 : 0.8;
        if (s > e.identifier) e.identifier = s;
        e.reasons.push(`the task names it: "${v}"`);
      }
      if (/[/.]/.test(v)) {
        const m = index.findModule(v) ?? index.findModule(v.replace(/^\.\//, '')) ?? index.findModule(v.replace(/\.(d\.)?[cm]?[jt]sx?$/, ''));
        if (m) {
          const e = note(m.id);
          e.identifier = Math.max(e.identifier, 1);
          e.reasons.push(`the task names its module: "${v}"`);
        }
      }
    }
  }

  // a plain word of the task that is a declaration's whole name ("area", "retry") names it, a little less surely
  const identSet = new Set(terms.identifiers);
  for (const w of new Set(task.split(/[^A-Za-z0-9_$]+/))) {
    if (w.length < 3 || identSet.has(w) || isStopWord(w.toLowerCase())) continue;
    for (const id of index.byName(w)) {
      const r = index.node(id)!;
      if (r.kind !== 'declaration' || nameOf(r).toLowerCase() !== w.toLowerCase()) continue;
      const e = note(id);
      if (e.identifier < 0.75) e.identifier = 0.75;
      e.reasons.push(`the task says "${w}", its name`);
    }
  }

  // 2. keywords, weighted by rarity among declaration names
  const keywords = terms.keywords;
  if (keywords.length) {
    const lex = lexiconOf(index);
    let doc: Postings | undefined;
    if (opts.docText) {
      doc = new Map();
      for (const r of index.nodes.values()) {
        if (r.kind !== 'declaration') continue;
        const text = opts.docText(r);
        if (text) post(doc, tokensOf(text), r.id);
      }
    }
    const idf = (k: string) => Math.log(1 + (lex.n + 1) / (1 + (lex.df.get(k) ?? 0)));
    const total = keywords.reduce((sum, k) => sum + idf(k), 0) || 1;
    // per node: per keyword, the best field weight × match factor
    const best = new Map<string, Map<string, { w: number; field: Field }>>();
    for (const k of keywords) {
      for (const field of FIELDS) {
        const postings = field === 'doc' ? doc : lex.fields[field];
        if (!postings) continue;
        for (const [tok, factor] of matchingTokens(k, postings)) {
          const w = FIELD_WEIGHT[field] * factor;
          for (const id of postings.get(tok)!) {
            let m = best.get(id);
            if (!m) best.set(id, (m = new Map()));
            const prev = m.get(k);
            if (!prev || w > prev.w) m.set(k, { w, field });
          }
        }
      }
    }
    for (const id of [...best.keys()].sort(byCodePoint)) {
      const m = best.get(id)!;
      let matched = 0;
      const why: string[] = [];
      for (const k of keywords) {
        const b = m.get(k);
        if (!b) continue;
        matched += b.w * idf(k);
        why.push(`"${k}" in its ${FIELD_LABEL[b.field]}`);
      }
      // how much of its name the task explains (`applyDiscount` for "apply a discount"), rare words weighing more
      let nameIdf = 0;
      let nameHit = 0;
      for (const tok of lex.nameTokens.get(id) ?? []) {
        const w = idf(tok);
        nameIdf += w;
        let f = 0;
        for (const k of keywords) f = Math.max(f, wordMatch(k, new Set([tok])));
        nameHit += f * w;
      }
      const nameCoverage = nameIdf > 0 ? nameHit / nameIdf : 0;
      const taskCoverage = Math.min(1, matched / total);
      const score = NAME_SHARE * nameCoverage + (1 - NAME_SHARE) * taskCoverage;
      const e = note(id);
      e.keyword = Math.max(e.keyword, Math.min(1, score));
      e.reasons.push(`task words ${why.join(', ')}`);
    }
  }

  const seeds: Seed[] = [];
  for (const [id, e] of found) {
    const score = 1 - (1 - e.identifier) * (1 - e.keyword);
    if (score > 0) seeds.push({ id, score, reasons: [...new Set(e.reasons)] });
  }
  seeds.sort((a, b) => b.score - a.score || byCodePoint(a.id, b.id));
  const max = seeds[0]?.score ?? 0;
  // drop the long tail of weak matches: they would drown the walk in noise
  const kept = seeds.filter((s) => s.score >= max * 0.12).slice(0, opts.maxSeeds ?? 48);
  return { seeds: kept, terms };
}

/** Seeds for "context for these files": their modules and declarations (nested ones weaker). */
export function seedsFromFiles(index: GraphIndex, files: readonly string[]): { seeds: Seed[]; unknown: string[] } {
  const seeds = new Map<string, Seed>();
  const unknown: string[] = [];
  const known = index.files();
  for (const raw of files) {
    const f = raw.replace(/\\/g, '/').replace(/^\.\//, '');
    const file = known.includes(f) ? f : known.find((k) => k.endsWith(`/${f}`));
    if (!file) {
      unknown.push(raw);
      continue;
    }
    for (const id of index.inFile(file)) {
      const r = index.node(id)!;
      if (!SEED_KINDS.has(r.kind)) continue;
      const nested = r.kind === 'declaration' && typeof r.parent === 'string' && r.parent.length > 0;
      const score = r.kind === 'declaration' ? (nested ? 0.6 : 1) : r.kind === 'module' ? 1 : 0.9;
      if (!seeds.has(id)) seeds.set(id, { id, score, reasons: [`it is in ${file}, a file asked for`] });
    }
  }
  const list = [...seeds.values()].sort((a, b) => b.score - a.score || byCodePoint(a.id, b.id));
  return { seeds: list, unknown };
}
