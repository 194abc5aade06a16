/**
 * The import records of an export: each file's import, re-export and dynamic import statements
 * merged per specifier (`import` nodes, with their bindings and re-exported names), resolved
 * (resolve.ts) and linked: a module `imports` the module or package it names, one edge per target and
 * provenance, with the specifiers it goes through.
 *
 * Invariants: an import resolved by the compiler has its file's tier; one resolved by kiln is
 * `syntax_inferred`; an unresolved one is a degraded node without an edge, and an import of the module
 * itself has no edge. A file's import records are one group (memo.ts), keyed by its slice and how
 * each of its specifiers resolved.
 */
import { codePointCompare, importId, type Provenance } from './records.js';
import type { Slice } from '../facts/slice.js';
import type { Language } from '../parse/language.js';
import type { Builder } from './builder.js';
import type { ImportAnswer, ImportResolver, PendingImport } from './resolve.js';

/** What emitImports learnt, for syntax references (references.ts). */
export interface ImportsResolved {
  /** (file, bare specifier) → the file it resolved to: a file of this package, or another's (absolute). */
  files: Map<string, { own?: string; abs?: string }>;
  /** How each file's imports resolved (a string compared between exports, memo.ts). */
  answers: Map<string, string>;
}

/** Each file's imports, re-exports and dynamic imports, merged per specifier (files in code point order). */
export function collectImports(slices: ReadonlyMap<string, Slice>): PendingImport[] {
  const out: PendingImport[] = [];
  for (const rel of [...slices.keys()].sort(codePointCompare)) {
    const s = slices.get(rel)!;
    const bySpec = new Map<string, PendingImport>();
    const get = (specifier: string) => {
      let p = bySpec.get(specifier);
      if (!p) {
        p = { rel, specifier, forms: new Set(), typeOnly: true, bindings: [], reexports: [], reexportAll: false };
        bySpec.set(specifier, p);
      }
      return p;
    };
    for (const imp of s.imports) {
      const p = get(imp.specifier);
      p.forms.add('import');
      if (!imp.typeOnly && !(imp.bindings.length && imp.bindings.every((b) => b.typeOnly))) p.typeOnly = false;
      for (const b of imp.bindings) p.bindings.push({ imported: b.imported, local: b.local, type_only: imp.typeOnly || b.typeOnly });
    }
    for (const re of s.reexports) {
      const p = get(re.specifier);
      p.forms.add('re-export');
      if (!re.typeOnly) p.typeOnly = false;
      if (re.names === '*') p.reexportAll = true;
      else for (const n of re.names) p.reexports.push({ imported: n.imported, exported: n.exported });
    }
    for (const spec of s.dynamicImports ?? []) {
      const p = get(spec);
      p.forms.add('dynamic');
      p.typeOnly = false;
    }
    out.push(...bySpec.values());
  }
  return out;
}

/**
 * The import records of every file: its pending imports resolved, then one group per file (kept while
 * its slice and its answers are). Returns, for syntax references, the file behind each bare specifier
 * and each file's answers as the string its groups are keyed by.
 */
export function emitImports(b: Builder, pendingImports: PendingImport[], resolver: ImportResolver): ImportsResolved {
  const importFiles: ImportsResolved['files'] = new Map();
  const answersOf: ImportsResolved['answers'] = new Map();
  const memo = b.out.memo;
  const byFile = new Map<string, PendingImport[]>();
  for (const p of pendingImports) {
    const list = byFile.get(p.rel);
    if (list) list.push(p);
    else byFile.set(p.rel, [p]);
  }
  for (const [rel, pending] of byFile) {
    const answers = pending.map((p) => resolver.answer(p));
    pending.forEach((p, i) => {
      const found = answers[i]!.found;
      if (found) importFiles.set(`${rel}\u0000${p.specifier}`, found);
    });
    const slice = b.slices.get(rel)!;
    let key = '';
    if (memo) {
      key = answers.map((a, i) => `${pending[i]!.specifier}\u0001${a.target}\u0001${a.external}\u0001${a.by}\u0001${a.found?.own ?? ''}\u0001${a.found?.abs ?? ''}`).join('\u0000');
      answersOf.set(rel, key);
      const kept = memo.files.get(rel)?.imports;
      if (kept && kept.key.slice === slice && kept.key.answers === key) {
        b.out.replay(kept);
        continue;
      }
    }
    const g = b.out.group({ slice, answers: key }, () => emitImportsOf(b, rel, pending, answers));
    if (g) b.out.groupsOf(rel).imports = g;
  }
  return { files: importFiles, answers: answersOf };
}

function emitImportsOf(b: Builder, rel: string, pending: PendingImport[], answers: ImportAnswer[]): void {
  const byTarget = new Map<string, { from: string; to: string; provenance: Provenance; language: Language; via: Set<string>; typeOnly: boolean }>();
  const mod = b.modId(rel);
  const lang = b.langOf(rel);
  const tier = b.tier(rel);
  pending.forEach((p, i) => {
    const { target, external, by } = answers[i]!;
    const iid = importId(mod, p.specifier);
    b.out.addNode({
      kind: 'import',
      id: iid,
      language: lang,
      provenance: tier,
      degraded: target === null,
      ...(target === null ? { degraded_reason: 'unresolved' } : {}),
      package: b.pkg.name,
      module: mod,
      specifier: p.specifier,
      forms: [...p.forms].sort(codePointCompare),
      type_only: p.typeOnly,
      bindings: p.bindings.sort((a, b) => codePointCompare(a.local, b.local) || codePointCompare(a.imported, b.imported)),
      reexports: p.reexports.sort((a, b) => codePointCompare(a.exported, b.exported) || codePointCompare(a.imported, b.imported)),
      reexport_all: p.reexportAll,
      target,
      external,
      resolved_by: by,
    });
    b.out.addEdge('contains', mod, iid, tier, lang, {});
    if (target === null || target === mod) return;
    const provenance: Provenance = by === 'compiler' ? tier : 'syntax_inferred';
    const key = `${mod}\u0000${target}\u0000${provenance}`;
    const e = byTarget.get(key) ?? { from: mod, to: target, provenance, language: lang, via: new Set<string>(), typeOnly: true };
    e.via.add(p.specifier);
    if (!p.typeOnly) e.typeOnly = false;
    byTarget.set(key, e);
  });
  for (const e of byTarget.values()) {
    b.out.addEdge('imports', e.from, e.to, e.provenance, e.language, { via: [...e.via].sort(codePointCompare), type_only: e.typeOnly });
  }
}
