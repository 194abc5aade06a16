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
 * Other packages' slices come from the store by content when it has them, else are extracted here;
 * either way the same slices (a slice is a function of the content), so the edges do not depend on
 * what the store holds.
 */
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { extractSlice } from '../facts/extract.js';
import type { DeclKind, Slice } from '../facts/slice.js';
import { sha256Hex } from '../digest/hash.js';
import { declarationIdentity } from '../identity/identity.js';
import { fileKind, type Variant } from '../parse/language.js';
import { contentKey, loadContentMap, SliceResolver } from '../store/lookup.js';
import type { PackRef } from '../store/pack.js';
import { buildOutputDirs, listSourceFiles } from '../view/files.js';
import { resolveSpecifier } from '../view/resolve.js';
import { ModuleExports, type Target } from '../view/surface.js';
import type { Locator } from './locate.js';
import { parserMismatch } from '../parse/parser-version.js';

const toPosix = (p: string) => p.split(sep).join('/');
const TYPE_KINDS: ReadonlySet<DeclKind> = new Set<DeclKind>(['interface', 'type']);

/** A declaration a name resolves to: its identity and kind. */
export interface SyntaxTarget {
  id: string;
  kind: DeclKind;
}

interface ForeignPackage {
  root: string;
  files: Set<string>;
  slices: Map<string, Slice>;
  modules?: ModuleExports;
}

/**
 * Slices of other workspace packages' files, loaded on demand (the closure of a file's export and
 * re-export chains), and their export tables.
 */
export class ForeignSlices {
  private readonly packages = new Map<string, Promise<ForeignPackage | null>>();
  /** The packages `prepare` loaded, by root. */
  private readonly ready = new Map<string, ForeignPackage | null>();
  private contentMap: Promise<Map<string, PackRef>> | undefined;
  private readonly resolver: SliceResolver | undefined;

  constructor(
    private readonly locator: Locator,
    private readonly storeDir: string | null,
    private readonly digestSchema: number,
    private readonly maxFileSize: number,
    /** Slices by content key kept between exports in one process (a session); filled here. */
    private readonly memory?: Map<string, Slice>,
  ) {
    // Another parser than the store's slices were made by: other packages are parsed, not looked up.
    this.resolver = storeDir && !parserMismatch() ? new SliceResolver(storeDir, digestSchema) : undefined;
  }

  private pkg(root: string): Promise<ForeignPackage | null> {
    let p = this.packages.get(root);
    if (!p) {
      p = (async () => {
        try {
          const outDirs = await buildOutputDirs(root);
          const files = await listSourceFiles(root, outDirs);
          const pkg: ForeignPackage = { root, files: new Set(files), slices: new Map() };
          this.ready.set(root, pkg);
          return pkg;
        } catch {
          this.ready.set(root, null);
          return null;
        }
      })();
      this.packages.set(root, p);
    }
    return p;
  }

  private async sliceOf(abs: string, rel: string): Promise<Slice | null> {
    const kind = fileKind(rel);
    if (!kind) return null;
    let bytes: Buffer;
    try {
      bytes = readFileSync(abs);
    } catch {
      return null;
    }
    const hash = sha256Hex(bytes);
    const key = contentKey(hash, kind.variant);
    const kept = this.memory?.get(key);
    if (kept) return kept;
    const slice = await this.load(bytes, hash, kind.variant);
    if (slice) this.memory?.set(key, slice);
    return slice;
  }

  private async load(bytes: Buffer, hash: string, variant: Variant): Promise<Slice | null> {
    if (this.storeDir && this.resolver) {
      try {
        this.contentMap ??= loadContentMap(this.storeDir, this.digestSchema);
        const ref = (await this.contentMap).get(contentKey(hash, variant));
        if (ref) {
          const r = await this.resolver.resolve(ref, hash, variant);
          if (r.status === 'hit') return r.slice;
        }
      } catch {
        // the store is an optimisation: extract below
      }
    }
    try {
      return extractSlice(bytes, variant, { digestSchema: this.digestSchema, maxFileSize: this.maxFileSize });
    } catch {
      return null;
    }
  }

  /**
   * Load the slices `exportsOf` will need for these files of other packages (absolute source paths):
   * each file and, transitively, the modules its exports come from.
   */
  async prepare(absFiles: Iterable<string>): Promise<void> {
    const queue: { pkg: ForeignPackage; rel: string }[] = [];
    const want = async (abs: string) => {
      const place = this.locator.place(abs);
      if (!place || place.external) return;
      const pkg = await this.pkg(place.root);
      if (!pkg || !pkg.files.has(place.rel) || pkg.slices.has(place.rel)) return;
      queue.push({ pkg, rel: place.rel });
    };
    for (const abs of absFiles) await want(abs);
    while (queue.length) {
      const batch = queue.splice(0).filter((q, i, all) => !q.pkg.slices.has(q.rel) && all.findIndex((x) => x.pkg === q.pkg && x.rel === q.rel) === i);
      const loaded = await Promise.all(batch.map((q) => this.sliceOf(join(q.pkg.root, q.rel), q.rel)));
      batch.forEach((q, i) => {
        const slice = loaded[i];
        if (!slice) return;
        q.pkg.slices.set(q.rel, slice);
        q.pkg.modules = undefined;
        const exported = new Set(slice.exports.map((e) => e.local));
        const specs = [
          ...slice.reexports.map((r) => r.specifier),
          ...slice.imports.filter((imp) => imp.bindings.some((b) => exported.has(b.local))).map((imp) => imp.specifier),
        ];
        for (const spec of specs) {
          const next = resolveSpecifier(q.rel, spec, q.pkg.files);
          if (next && !q.pkg.slices.has(next)) queue.push({ pkg: q.pkg, rel: next });
        }
      });
    }
  }

  /**
   * Everything `exported` answers from, once prepared: each package's root, files and loaded slices
   * (by content). Equal fingerprints give equal answers.
   */
  fingerprint(): string {
    const parts: string[] = [];
    for (const root of [...this.ready.keys()].sort()) {
      const pkg = this.ready.get(root);
      parts.push(root, this.locator.packageOfDir(root)?.name ?? '');
      if (!pkg) continue;
      parts.push([...pkg.files].join('\u0001'));
      for (const rel of [...pkg.slices.keys()].sort()) {
        const s = pkg.slices.get(rel)!;
        parts.push(`${rel}\u0001${s.contentHash}\u0001${s.variant}`);
      }
    }
    return parts.join('\u0000');
  }

  /** What `name` exported by an (already prepared) file of another package is: its declarations. */
  exported(abs: string, name: string): SyntaxTarget[] {
    const place = this.locator.place(abs);
    if (!place || place.external) return [];
    const pkg = this.ready.get(place.root);
    if (!pkg) return [];
    pkg.modules ??= new ModuleExports(pkg.slices, pkg.files);
    const targets = implementationOf(pkg.modules.exportsOf(place.rel).names.get(name) ?? [], (f) => pkg.slices.get(f));
    return targets.flatMap((t) => {
      const slice = pkg.slices.get(t.file);
      const d = slice?.decls[t.decl];
      if (!slice || !d) return [];
      const tp = this.locator.place(join(pkg.root, t.file));
      if (!tp || tp.external) return [];
      return [{ id: declarationIdentity(tp, d), kind: d.kind }];
    });
  }
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
  foreign: ForeignSlices,
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
      else if (where?.abs !== undefined) targets = foreign.exported(where.abs, b.imported);
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
