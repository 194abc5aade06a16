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
  status: 'added' | 'removed' | 'changed' | 'redocumented' | 'unchanged';
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
  const hashA = new Map(before.files.map((f) => [f.path, f.content_hash]));
  const hashB = new Map(after.files.map((f) => [f.path, f.content_hash]));

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
      out.push({ ...base, status: 'changed', reason: whyChanged(da, db, before, after) });
    } else if (da.doc_digest !== db.doc_digest) {
      out.push({ ...base, status: 'redocumented', reason: da.doc_digest === null ? 'documentation added' : db.doc_digest === null ? 'documentation removed' : 'documentation changed', ...(stale ? { stale } : {}) });
    } else {
      const touched = hashA.get(da.span.file) !== hashB.get(db.span.file) || da.span.file !== db.span.file;
      const reason = stale
        ? `unchanged under digest_schema ${options.staleSchema} (stale)`
        : touched
          ? 'same semantic and doc digest; its file was edited (comments, formatting, position or other declarations only)'
          : 'same semantic and doc digest; file untouched';
      out.push({ ...base, status: 'unchanged', reason, ...(stale ? { stale } : {}) });
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
      const oa = fa.module.order;
      const ob = fb.module.order;
      if (oa.join('\n') !== ob.join('\n')) {
        if ([...oa].sort().join('\n') === [...ob].sort().join('\n')) why.push('evaluation order changed: the same top-level statements now run in another order');
        else why.push(`effectful top-level statements changed (${setDelta(oa, ob)})`);
      }
      if (fa.module.pragmas.join('\n') !== fb.module.pragmas.join('\n')) why.push(`file-level pragmas changed (${setDelta(fa.module.pragmas, fb.module.pragmas)})`);
      const ha = fa.module.hoisted ?? [];
      const hb = fb.module.hoisted ?? [];
      if (ha.join('\n') !== hb.join('\n')) why.push(`hoisted or type-only statements changed (${setDelta(ha, hb)}); their order is not observable`);
      if (!why.length) why.push('module digest moved');
      modules.push({ module: id, status: 'changed', reason: why.join('; ') });
    } else if ((fa.module.docs ?? '') !== (fb.module.docs ?? '')) {
      modules.push({ module: id, status: 'redocumented', reason: 'JSDoc on a statement that is not a declaration changed (export * from, an export list, a file header): same meaning, the .d.ts carries it' });
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

/** `+added -removed` of two lists of readable entries, compactly. */
function setDelta(a: string[], b: string[]): string {
  const sa = new Set(a);
  const sb = new Set(b);
  const plus = b.filter((x) => !sa.has(x)).map((x) => `+${readable(x)}`);
  const minus = a.filter((x) => !sb.has(x)).map((x) => `-${readable(x)}`);
  const all = [...plus, ...minus];
  return all.length ? all.slice(0, 6).join(' ') + (all.length > 6 ? ` …${all.length - 6} more` : '') : 'same entries';
}

function readable(entry: string): string {
  if (entry.startsWith('decl:')) return entry.slice(5).split(',').map((e) => e.split(':').slice(1).join(':')).join(',');
  if (entry.startsWith('stmt:')) return `statement ${entry.slice(5, 13)}`;
  return entry;
}

/** Why a semantic digest moved, in words: meaningful comments, signature, nested declarations, body. */
function whyChanged(da: DeclarationRecord, db: DeclarationRecord, before: DigestReport, after: DigestReport): string {
  const ca = da.meaningful_comments ?? [];
  const cb = db.meaningful_comments ?? [];
  const reasons: string[] = [];
  if (ca.join('\n') !== cb.join('\n')) reasons.push(`meaningful comments changed (${setDelta(ca, cb)})`);
  const prefix = `${da.path}.`;
  const childDigests = (r: DigestReport) =>
    new Map(r.declarations.filter((d) => d.module === da.module && d.path.startsWith(prefix)).map((d) => [d.identity, d.semantic_digest]));
  const kidsA = childDigests(before);
  const kidsB = childDigests(after);
  const movedKids = [...new Set([...kidsA.keys(), ...kidsB.keys()])].filter((k) => kidsA.get(k) !== kidsB.get(k) || kidsA.get(k) === null);
  const headerMoved = da.header_digest !== db.header_digest;
  if (headerMoved) reasons.push(da.kind === 'class' || da.kind === 'interface' ? 'header changed (type parameters, heritage or modifiers)' : 'signature changed (parameters, return type, type parameters or modifiers)');
  if (movedKids.length) {
    const names = movedKids.map((k) => k.slice(k.indexOf('#') + 1, k.lastIndexOf(':'))).sort();
    reasons.push(`nested declaration${names.length > 1 ? 's' : ''} changed: ${names.slice(0, 4).join(', ')}${names.length > 4 ? ' …' : ''}`);
  }
  if (!reasons.length) reasons.push(da.header_digest !== undefined ? 'body changed (signature unchanged)' : 'its tokens or types changed');
  return reasons.join('; ');
}
