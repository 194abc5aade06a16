/**
 * Compare two digest reports declaration by declaration: added, removed, changed (semantic digest
 * moved, or could not be computed on either side), re-documented (only the doc digest moved),
 * moved (same declaration, same digest, another module of the package) and unchanged — plus
 * modules whose evaluation order or top-level statements changed.
 *
 * A null digest never equals anything: an unparseable declaration is always changed.
 */
import type { DeclarationRecord, DigestReport } from '../view/report.js';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';

export type ChangeStatus = 'added' | 'removed' | 'changed' | 'redocumented' | 'moved' | 'unchanged';

export interface DeclChange {
  status: ChangeStatus;
  identity: string;
  kind: string;
  /** For `moved`: where it was. */
  from?: string;
  /** Why, in words. */
  reason: string;
  /** Set when the match holds only under the previous digest projection. */
  stale?: boolean;
  before?: { semantic: string | null; doc: string | null; file: string; line: number };
  after?: { semantic: string | null; doc: string | null; file: string; line: number };
}

export interface ModuleChange {
  module: string;
  status: 'added' | 'removed' | 'changed' | 'unchanged';
  reason: string;
}

export interface DiffResult {
  kind: 'kiln-diff';
  declarations: DeclChange[];
  modules: ModuleChange[];
  counts: Record<ChangeStatus, number>;
  diagnostics: Diagnostic[];
}

export interface DiffOptions {
  /** Set when `before` was recorded under the previous projection and `after` recomputed under it. */
  staleSchema?: number;
}

const side = (d: DeclarationRecord) => ({ semantic: d.semantic_digest, doc: d.doc_digest, file: d.span.file, line: d.span.startLine });

/** Identity without the module: how a declaration moved between files is recognised. */
const movableKey = (d: DeclarationRecord) => `${d.language}:${d.package}#${d.path}:${d.kind}`;

export function diffReports(before: DigestReport, after: DigestReport, options: DiffOptions = {}): DiffResult {
  const a = new Map(before.declarations.map((d) => [d.identity, d]));
  const b = new Map(after.declarations.map((d) => [d.identity, d]));
  const out: DeclChange[] = [];
  const removed: DeclarationRecord[] = [];
  const added: DeclarationRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  const stale = options.staleSchema !== undefined;

  for (const [id, da] of a) {
    const db = b.get(id);
    if (!db) {
      removed.push(da);
      continue;
    }
    const base = { identity: id, kind: da.kind, before: side(da), after: side(db) };
    if (da.semantic_digest === null || db.semantic_digest === null) {
      out.push({ ...base, status: 'changed', reason: `digest could not be computed (${db.degraded ?? da.degraded ?? 'unparseable'}): counted as changed` });
    } else if (da.semantic_digest !== db.semantic_digest) {
      out.push({ ...base, status: 'changed', reason: 'semantic digest moved: its tokens, types or meaningful comments changed' });
    } else if (da.doc_digest !== db.doc_digest) {
      out.push({ ...base, status: 'redocumented', reason: da.doc_digest === null ? 'documentation added' : db.doc_digest === null ? 'documentation removed' : 'documentation changed', ...(stale ? { stale } : {}) });
    } else {
      out.push({ ...base, status: 'unchanged', reason: stale ? `unchanged under digest_schema ${options.staleSchema} (stale)` : 'same semantic and doc digest', ...(stale ? { stale } : {}) });
    }
  }
  for (const [id, db] of b) if (!a.has(id)) added.push(db);

  // A declaration that left one module and arrived in another with the same digest moved.
  const removedByKey = new Map<string, DeclarationRecord[]>();
  for (const d of removed) (removedByKey.get(movableKey(d)) ?? removedByKey.set(movableKey(d), []).get(movableKey(d))!).push(d);
  const matched = new Set<DeclarationRecord>();
  for (const db of added) {
    const candidates = removedByKey.get(movableKey(db)) ?? [];
    const da = candidates.find((c) => !matched.has(c) && c.semantic_digest !== null && c.semantic_digest === db.semantic_digest);
    if (da) {
      matched.add(da);
      out.push({
        status: 'moved',
        identity: db.identity,
        kind: db.kind,
        from: da.identity,
        reason: `moved from ${da.module} to ${db.module}; same semantic digest${da.doc_digest !== db.doc_digest ? ' (documentation changed)' : ''}`,
        before: side(da),
        after: side(db),
      });
    } else {
      out.push({ status: 'added', identity: db.identity, kind: db.kind, reason: 'new declaration', after: side(db) });
    }
  }
  for (const da of removed) {
    if (!matched.has(da)) out.push({ status: 'removed', identity: da.identity, kind: da.kind, reason: 'declaration no longer exists', before: side(da) });
  }
  out.sort((x, y) => (x.identity < y.identity ? -1 : x.identity > y.identity ? 1 : 0));

  const ma = new Map(before.files.map((f) => [f.module.identity, f]));
  const mb = new Map(after.files.map((f) => [f.module.identity, f]));
  const modules: ModuleChange[] = [];
  for (const [id, fa] of ma) {
    const fb = mb.get(id);
    if (!fb) modules.push({ module: id, status: 'removed', reason: 'module no longer exists' });
    else if (fa.module.digest !== fb.module.digest || fa.module.degraded || fb.module.degraded) {
      const why: string[] = [];
      if (fa.module.degraded || fb.module.degraded) why.push(`module could not be digested (${fb.module.degraded ?? fa.module.degraded})`);
      if (fa.module.order.join('\n') !== fb.module.order.join('\n')) why.push('evaluation order or top-level statements changed');
      if (fa.module.pragmas.join('\n') !== fb.module.pragmas.join('\n')) why.push('file-level pragmas changed');
      if (!why.length) why.push('hoisted or type-only module statements changed');
      modules.push({ module: id, status: 'changed', reason: why.join('; ') });
    } else modules.push({ module: id, status: 'unchanged', reason: 'same module digest' });
  }
  for (const id of mb.keys()) if (!ma.has(id)) modules.push({ module: id, status: 'added', reason: 'new module' });
  modules.sort((x, y) => (x.module < y.module ? -1 : x.module > y.module ? 1 : 0));

  if (stale) {
    const n = out.filter((c) => c.stale).length;
    if (n) diagnostics.push(diagnostic('KILN_DIGEST_STALE_SCHEMA', `${n} declaration(s) matched only under digest_schema ${options.staleSchema}`, { producer: 'diff' }));
  }
  const counts = { added: 0, removed: 0, changed: 0, redocumented: 0, moved: 0, unchanged: 0 } as Record<ChangeStatus, number>;
  for (const c of out) counts[c.status]++;
  return { kind: 'kiln-diff', declarations: out, modules, counts, diagnostics };
}
