/**
 * The codegraph's references and calls. With the checker: each file's reference and call sites
 * (`reference`/`call` nodes with spans, `references`/`calls` edges counting them) and JSDoc links
 * (`documents`), walked by checked.ts. Without it: each module-level declaration's mentions from
 * kiln's slices (syntax.ts), `references` edges only, `syntax_inferred`.
 *
 * Invariants: only files of the program with a compiler tier get sites, and a site's id is its kind,
 * ends and ordinal among same-ended sites of its file, so walking a file again gives the same ids; a
 * session's sites are reused only for files the compiler's builder says are unaffected. Syntax
 * references skip files whose module is degraded, and a file's edges are one group (memo.ts), keyed
 * by its slice, its imports' answers and the versions of what its mentions resolve through.
 */
import { join } from 'node:path';
import type { Slice } from '../facts/slice.js';
import type { Target } from '../view/surface.js';
import { walkSites, type LoadedProgram } from './checked.js';
import type { ForeignFiles } from '../view/foreign.js';
import { resolveMention, type SyntaxTarget } from './syntax.js';
import type { Builder } from './builder.js';
import type { ImportsResolved } from './imports.js';
import type { SiteCache } from './session.js';
import { codePointCompare, type GraphSpan } from './records.js';

/**
 * The checker's reference and call sites and JSDoc links of every file in the program (walked, or a
 * session's previous run's where the compiler's builder says the file is unaffected); `siteCache` is
 * replaced by this run's. Returns how many files were walked.
 */
export function emitSites(b: Builder, p: LoadedProgram, siteCache: SiteCache | undefined): number {
  let walkedFiles = 0;
  const previous = siteCache ? new Map(siteCache) : undefined;
  siteCache?.clear();
  for (const rel of [...b.slices.keys()].sort(codePointCompare)) {
    const tier = b.tier(rel);
    if (tier !== 'compiler_checked' && tier !== 'compiler_unchecked') continue;
    const sf = p.program.getSourceFile(join(b.root, rel));
    if (!sf) continue;
    // A file the compiler's builder does not count as affected by the edits since the previous
    // program resolves every name as before: its sites are the previous run's.
    let walked = p.affected && !p.affected.has(sf.fileName) ? previous?.get(sf.fileName) : undefined;
    if (!walked) {
      const own = b.declsOf(sf);
      if (!own) continue;
      walked = walkSites(p, sf, own, b.declsOf);
      walkedFiles++;
    }
    siteCache?.set(sf.fileName, walked);
    const { sites, links } = walked;
    const mod = b.modId(rel);
    const lang = b.langOf(rel);
    const ordinals = new Map<string, number>();
    for (const s of sites) {
      const inId = s.in ?? mod;
      const pair = `${s.kind}:${inId}->${s.target}`;
      const n = (ordinals.get(pair) ?? 0) + 1;
      ordinals.set(pair, n);
      const id = `${pair}#${n}`;
      const span: GraphSpan = { file: rel, startLine: s.startLine, startColumn: s.startColumn, endLine: s.endLine, endColumn: s.endColumn };
      if (s.kind === 'reference') {
        b.out.addNode({ kind: 'reference', id, language: lang, provenance: tier, degraded: false, span, package: b.pkg.name, in: inId, target: s.target, name: s.name, type_position: s.typePosition });
        b.out.addEdge('references', inId, s.target, tier, lang, { count: 1, type_only: s.typePosition }, (e) => {
          e.count++;
          if (!s.typePosition) e.type_only = false;
        });
      } else {
        b.out.addNode({ kind: 'call', id, language: lang, provenance: tier, degraded: false, span, package: b.pkg.name, in: inId, target: s.target, name: s.name, form: s.form ?? 'call' });
        b.out.addEdge('calls', inId, s.target, tier, lang, { count: 1 }, (e) => {
          e.count++;
        });
      }
      b.out.addEdge('contains', inId, id, tier, lang, {});
    }
    for (const l of links) {
      b.out.addEdge('documents', l.from, l.to, tier, lang, { count: 1 }, (e) => {
        e.count++;
      });
    }
  }
  return walkedFiles;
}

/**
 * Tolerant export without the checker: each module-level declaration's mentions (graph/syntax.ts),
 * as `references` edges, `syntax_inferred`. Files whose module is degraded (a syntax error) get
 * none, as in checker mode.
 */
export async function emitSyntaxReferences(b: Builder, imports: ImportsResolved, foreign: ForeignFiles): Promise<void> {
  const memo = b.out.memo;
  const files = [...b.slices.keys()].sort(codePointCompare);
  const abroad = new Set<string>();
  for (const v of imports.files.values()) if (v.abs !== undefined) abroad.add(v.abs);
  await foreign.prepare([...abroad].sort(codePointCompare));
  if (memo) {
    const print = foreign.fingerprint();
    if (print !== memo.foreign.print) memo.foreign = { print, version: ++memo.versions };
  }
  const kindOf = (t: Target): SyntaxTarget => ({ id: b.identityOf(t.file, t.decl), kind: b.slices.get(t.file)!.decls[t.decl]!.kind });
  for (const rel of files) {
    const s = b.slices.get(rel)!;
    if (s.module.degraded) continue;
    const answers = imports.answers.get(rel) ?? '';
    const deps = memo ? referenceDeps(b, imports, rel, s) : '';
    const kept = memo?.files.get(rel)?.references;
    if (kept && kept.key.slice === s && kept.key.answers === answers && kept.key.deps === deps) {
      b.out.replay(kept);
      continue;
    }
    const g = b.out.group({ slice: s, answers, deps }, () => emitReferencesOf(b, imports, rel, s, foreign, kindOf));
    if (g) b.out.groupsOf(rel).references = g;
  }
}

/**
 * What a file's mentions resolve through besides its own slice (resolveMention): the export tables
 * of the modules its imports name (relative, or this package by name) and, when one leads to another
 * package, that package's slices — as versions (memo.ts).
 */
function referenceDeps(b: Builder, imports: ImportsResolved, rel: string, s: Slice): string {
  const deps = new Set<string>();
  for (const imp of s.imports) {
    if (imp.specifier.startsWith('.')) {
      const file = b.modules.resolve(rel, imp.specifier);
      if (file) deps.add(`${file}\u0001${b.out.tableVersion(file)}`);
      continue;
    }
    const where = imports.files.get(`${rel}\u0000${imp.specifier}`);
    if (where?.own !== undefined) deps.add(`${where.own}\u0001${b.out.tableVersion(where.own)}`);
    else if (where?.abs !== undefined) deps.add(`\u0002${b.out.memo!.foreign.version}`);
  }
  return [...deps].sort().join('\u0000');
}

function emitReferencesOf(b: Builder, imports: ImportsResolved, rel: string, s: Slice, foreign: ForeignFiles, kindOf: (t: Target) => SyntaxTarget): void {
  const lang = s.language;
  const perName = new Map<string, ReturnType<typeof resolveMention>>();
  const foreignFile = (specifier: string) => imports.files.get(`${rel}\u0000${specifier}`);
  s.decls.forEach((d, i) => {
    if (d.parent !== -1 || !d.refs?.length) return;
    const from = b.identityOf(rel, i);
    const seen = new Map<string, boolean>();
    for (const name of d.refs) {
      let mentions = perName.get(name);
      if (!mentions) {
        mentions = resolveMention(rel, s, name, b.modules, (f) => b.slices.get(f), kindOf, foreignFile, foreign);
        perName.set(name, mentions);
      }
      for (const m of mentions) {
        // The declaration itself, and what shares its name in its own module (overloads, merged
        // declarations), are not mentions of something else.
        if (m.target.id === from || (name === d.name && m.target.id.startsWith(`${b.modId(rel)}#`))) continue;
        const typeOnly = seen.get(m.target.id);
        seen.set(m.target.id, typeOnly === undefined ? m.typeOnly : typeOnly && m.typeOnly);
      }
    }
    for (const [to, typeOnly] of seen) {
      b.out.addEdge('references', from, to, 'syntax_inferred', lang, { count: 1, type_only: typeOnly }, (e) => {
        e.count++;
      });
    }
  });
}

