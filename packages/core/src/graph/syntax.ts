/**
 * The codegraph's references from syntax alone (tolerant export without the checker, the default of
 * `--allow-errors`): what each module-level declaration mentions, from kiln's own slices — the names
 * the extractor recorded per declaration (`refs`: module-level names and imported bindings it or
 * its nested declarations mention) — resolved the way the digest view resolves them (same module,
 * relative imports through export and re-export chains) and, one step further, through a bare import
 * that resolves to another workspace package's source, into that package's export chains.
 *
 * What syntax cannot know, it does not claim:
 * - every edge is `syntax_inferred`; a name is matched by its spelling, so a local that shadows a
 *   module-level name is counted as a mention of it;
 * - no site records (`reference`/`call` nodes with spans) and no `calls` edges: the slices keep which
 *   names a declaration mentions, not where or how; a call is a mention like any other;
 * - `from` is the module-level declaration (a method's mentions are its class's); `count` is the number
 *   of names through which it reaches the target (usually 1), not a number of sites;
 * - `type_only` is true only when it is certain from syntax: the binding is a type-only import, or
 *   the target is an interface or a type alias; otherwise false ("not known to be type-only");
 * - an overloaded function's name means its implementation (the last of its same-named function
 *   declarations in a source file; in a declaration file, every overload), as the checker's references do;
 * - namespace imports (`import * as ns`) are not followed (which member is used is not recorded), nor
 *   names a module takes from a package it re-exports (`export { x } from 'pkg'` inside a chain).
 *
 * Other packages' slices come from the workspace view (view/foreign.ts: by content from the store
 * when it has them, else digested by the view's pool); either way the same slices (a slice is a
 * function of the content), so the edges do not depend on what the store holds.
 */
import { join, relative, sep } from 'node:path';
import type { DeclKind, Slice } from '../facts/slice.js';
import { declarationIdentity } from '../identity/identity.js';
import type { ForeignFiles } from '../view/foreign.js';
import type { ModuleExports, Target } from '../view/surface.js';

const toPosix = (p: string) => p.split(sep).join('/');
const TYPE_KINDS: ReadonlySet<DeclKind> = new Set<DeclKind>(['interface', 'type']);

/** A declaration a name resolves to: its identity and kind. */
export interface SyntaxTarget {
  id: string;
  kind: DeclKind;
}

/** What `name` exported by an (already prepared, view/foreign.ts) file of another package is: its declarations. */
export function foreignExported(foreign: ForeignFiles, abs: string, name: string): SyntaxTarget[] {
  const place = foreign.locator.place(abs);
  if (!place || place.external) return [];
  const pkg = foreign.packageAt(place.root);
  if (!pkg) return [];
  const targets = implementationOf(foreign.modulesOf(pkg).exportsOf(place.rel).names.get(name) ?? [], (f) => pkg.slices.get(f));
  return targets.flatMap((t) => {
    const slice = pkg.slices.get(t.file);
    const d = slice?.decls[t.decl];
    if (!slice || !d) return [];
    const tp = foreign.locator.place(join(pkg.root, t.file));
    if (!tp || tp.external) return [];
    return [{ id: declarationIdentity(tp, d), kind: d.kind }];
  });
}

/** One resolved mention: the target and whether it is certainly a type-only mention. */
export interface Mention {
  target: SyntaxTarget;
  typeOnly: boolean;
}

/**
 * Resolve a name a module-level declaration of `rel` mentions. `ownTarget` names declarations of the
 * exported package; `foreignFile` gives the source file of another workspace package a bare import
 * of this file resolved to (absolute), if any.
 */
export function resolveMention(
  rel: string,
  slice: Slice,
  name: string,
  modules: ModuleExports,
  ownSlice: (file: string) => Slice | undefined,
  ownTarget: (t: Target) => SyntaxTarget,
  foreignFile: (specifier: string) => { own?: string; abs?: string } | undefined,
  foreign: ForeignFiles,
): Mention[] {
  const out: Mention[] = [];
  const local: Target[] = [];
  slice.decls.forEach((d, i) => {
    if (d.parent === -1 && d.name === name) local.push({ file: rel, decl: i });
  });
  for (const t of implementationOf(local, ownSlice)) {
    const target = ownTarget(t);
    out.push({ target, typeOnly: TYPE_KINDS.has(target.kind) });
  }
  for (const imp of slice.imports) {
    const b = imp.bindings.find((x) => x.local === name);
    if (!b || b.imported === '*') continue;
    const typeOnlyImport = imp.typeOnly || b.typeOnly;
    let targets: SyntaxTarget[] = [];
    if (imp.specifier.startsWith('.')) {
      const file = modules.resolve(rel, imp.specifier);
      if (file) targets = implementationOf(modules.exportsOf(file).names.get(b.imported) ?? [], ownSlice).map(ownTarget);
    } else {
      const where = foreignFile(imp.specifier);
      if (where?.own !== undefined) targets = implementationOf(modules.exportsOf(where.own).names.get(b.imported) ?? [], ownSlice).map(ownTarget);
      else if (where?.abs !== undefined) targets = foreignExported(foreign, where.abs, b.imported);
    }
    for (const target of targets) out.push({ target, typeOnly: typeOnlyImport || TYPE_KINDS.has(target.kind) });
  }
  return out;
}

/**
 * Overloads: of several same-named module-level `function` declarations of one source file, the last
 * (the implementation, which TypeScript requires after its overload signatures); a declaration file
 * has no implementation, so all of them stay. Anything else is kept as is (merged declarations).
 */
export function implementationOf(targets: Target[], sliceOf: (file: string) => Slice | undefined): Target[] {
  if (targets.length < 2) return targets;
  const out: Target[] = [];
  const groups = new Map<string, Target[]>();
  for (const t of targets) {
    const s = sliceOf(t.file);
    const d = s?.decls[t.decl];
    if (!s || !d || d.kind !== 'function' || s.variant === 'dts') {
      out.push(t);
      continue;
    }
    const key = `${t.file}\u0000${d.name}`;
    const g = groups.get(key);
    if (g) g.push(t);
    else groups.set(key, [t]);
  }
  for (const g of groups.values()) out.push(g.reduce((a, b) => (b.decl > a.decl ? b : a)));
  return out;
}

/** A path relative to a root, POSIX, or undefined when it is outside. */
export function inside(root: string, abs: string): string | undefined {
  const rel = toPosix(relative(root, abs));
  return rel.startsWith('../') || rel === '..' ? undefined : rel;
}
