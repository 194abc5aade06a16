/**
 * The record builder of an export (`exportGraph`): one package's file, module, declaration, namespace,
 * export and package records, built from its slices, the digest report and its manifests, and the
 * context every other emitter of records reads (imports.ts, references.ts, diagnostics.ts): where a
 * file belongs (`placeOf`), module ids and declaration identities, each file's provenance tier, and
 * the declarations of any source file the program knows (`declsOf`; other packages' files looked up
 * beforehand in memory and the store, `loadForeign`, the others extracted when asked). Records go into
 * a RecordSet (memo.ts), grouped when a session's memo is given; `finish` sorts them and puts the
 * header first.
 *
 * Invariants: the records are a function of the inputs (no absolute path in any of them, module ids
 * and identities computed once per file, the same for every emitter); a file's tier is decided once,
 * in `build`, before any record of it is emitted: `syntax_inferred` outside the program, with errors
 * of its own or a degraded module, else `compiler_unchecked` when the program has errors elsewhere,
 * else `compiler_checked`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type * as TS from 'typescript';
import { sha256Hex } from '../digest/hash.js';
import type { Slice } from '../facts/slice.js';
import type { DigestReport } from '../view/report.js';
import { declarationIdentity } from '../identity/identity.js';
import { fileKind, logicalModulePath, type Language } from '../parse/language.js';
import type { ForeignFiles } from '../view/foreign.js';
import type { Locator } from '../view/locate.js';
import type { PackageInfo } from '../view/package.js';
import { resolveManifestTarget } from '../view/resolve.js';
import { ModuleExports, type ExportTable } from '../view/surface.js';
import { DIGEST_SCHEMA, EXTRACTOR_VERSION, GRAPH_SCHEMA_VERSION } from '../version.js';
import { diagnosticFile, indexDecls, type ConfigLoad, type FileDecls, type LoadedProgram } from './checked.js';
import type { TsDiag } from './diagnostics.js';
import { implementationOf } from './syntax.js';
import { RecordSet, type GraphMemo } from './memo.js';
import {
  codePointCompare,
  exportId,
  fileId,
  isEdgeKind,
  moduleId,
  namespaceId,
  packageId,
  snapshotId,
  type DeclarationNode,
  type GraphLanguage,
  type GraphMode,
  type HeaderRecord,
  type KnownRecord,
  type PackageNode,
  type Provenance,
} from './records.js';

const toPosix = (p: string) => p.split(sep).join('/');
const SECTIONS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'] as const;

/** Where a file belongs: a module of this package or of another workspace package, or an external package (its id). */
export interface Place {
  external: boolean;
  moduleId: string;
  package: string;
}

/** What a Builder is built from. */
export interface BuilderInput {
  /** The package root (absolute). */
  root: string;
  pkg: PackageInfo;
  /** The package's slices by file (relative to the root). */
  slices: ReadonlyMap<string, Slice>;
  /** The package's source files, for the snapshot. */
  files: { path: string; content_hash: string }[];
  outDirs: string[];
  /** The program, when the checker runs. */
  loaded: LoadedProgram | undefined;
  mode: GraphMode;
  /** A session's groups of records of the previous export (memo.ts); only without a program. */
  memo: GraphMemo | undefined;
  /** Files of other packages, from the workspace view (view/foreign.ts): one per export. */
  foreign: ForeignFiles;
}

export class Builder {
  readonly root: string;
  readonly pkg: PackageInfo;
  readonly slices: ReadonlyMap<string, Slice>;
  readonly loaded: LoadedProgram | undefined;
  private readonly files: { path: string; content_hash: string }[];
  private readonly outDirs: string[];
  private readonly mode: GraphMode;
  /** The records, and the memo's groups (memo.ts). */
  readonly out: RecordSet;
  readonly foreign: ForeignFiles;
  /** Where files of other packages belong (the workspace view's, view/locate.ts). */
  readonly locator: Locator;
  readonly modules: ModuleExports;
  readonly pkgId: string;
  /** The package's manifests (package.json, the tsconfig chain, project.json), once `build` has read them. */
  readonly manifests: { path: string; content_hash: string }[] = [];
  private readonly fileSet: Set<string>;
  private readonly tiers = new Map<string, Provenance>();
  private readonly fileErrors = new Set<string>();
  private programHasErrors = false;
  private readonly decls = new Map<string, FileDecls | null>();
  private header!: Omit<HeaderRecord, 'snapshot' | 'counts' | 'languages' | 'degraded'>;

  constructor(input: BuilderInput) {
    this.root = input.root;
    this.pkg = input.pkg;
    this.slices = input.slices;
    this.files = input.files;
    this.outDirs = input.outDirs;
    this.loaded = input.loaded;
    this.mode = input.mode;
    this.out = new RecordSet(input.memo);
    this.foreign = input.foreign;
    this.locator = input.foreign.locator;
    this.modules = new ModuleExports(input.slices as Map<string, Slice>);
    this.fileSet = new Set(input.slices.keys());
    this.pkgId = packageId(input.pkg.name);
  }

  // ---------------------------------------------------------------- helpers

  /** The session's memo of groups, while this export uses it (memo.ts). */
  private get memo(): GraphMemo | undefined {
    return this.out.memo;
  }

  langOf(rel: string): Language {
    return this.slices.get(rel)?.language ?? fileKind(rel)?.language ?? 'typescript';
  }

  /** Module ids and declaration identities, computed once per file (they are asked for many times). */
  private readonly modIds = new Map<string, string>();
  private readonly identities = new Map<string, string[]>();

  modId(rel: string): string {
    let id = this.modIds.get(rel);
    if (id === undefined) {
      id = moduleId(this.langOf(rel), this.pkg.name, logicalModulePath(rel));
      this.modIds.set(rel, id);
    }
    return id;
  }

  identityOf(rel: string, i: number): string {
    let ids = this.identities.get(rel);
    if (!ids) {
      const s = this.slices.get(rel)!;
      const module = logicalModulePath(rel);
      ids = s.decls.map((d) => declarationIdentity({ language: s.language, package: this.pkg.name, module }, d));
      this.identities.set(rel, ids);
    }
    return ids[i]!;
  }

  tier(rel: string): Provenance {
    return this.tiers.get(rel) ?? 'syntax_inferred';
  }

  /** Where a resolved file belongs: a module of this package first, else wherever the locator says. */
  private readonly places = new Map<string, Place | undefined>();
  placeOf(absFile: string): Place | undefined {
    if (this.places.has(absFile)) return this.places.get(absFile);
    const p = this.placeOfUncached(absFile);
    this.places.set(absFile, p);
    return p;
  }

  private placeOfUncached(absFile: string): Place | undefined {
    const rel = toPosix(relative(this.root, absFile));
    if (!rel.startsWith('../') && this.slices.has(rel)) return { external: false, moduleId: this.modId(rel), package: this.pkg.name };
    const p = this.locator.place(absFile);
    if (!p) return undefined;
    return p.external ? { external: true, moduleId: packageId(p.package), package: p.package } : { external: false, moduleId: moduleId(p.language, p.package, p.module), package: p.package };
  }

  /** The declarations of any source file the program knows, for resolving targets. */
  declsOf = (sf: TS.SourceFile): FileDecls | undefined => {
    const key = sf.fileName;
    const cached = this.decls.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let out: FileDecls | null = null;
    const rel = this.ownRel(sf.fileName);
    if (rel !== undefined) {
      out = indexDecls(sf, this.slices.get(rel)!, (i) => this.identityOf(rel, i));
    } else if (this.located(sf)) {
      // Found by loadForeign, else extracted now (view/foreign.ts, kept for the store).
      const slice = this.locator.sliceOf(sf.fileName);
      if (slice) out = indexDecls(sf, slice, (i) => this.locator.identityIn(sf.fileName, i));
    }
    this.decls.set(key, out);
    return out ?? undefined;
  };

  /** The file's path in this package when it is one of the package's slices. */
  private ownRel(absFile: string): string | undefined {
    const rel = toPosix(relative(this.root, absFile));
    return !rel.startsWith('../') && this.slices.has(rel) ? rel : undefined;
  }

  /**
   * Whether a program file outside this package's slices has declarations with identities: a file of
   * a workspace package, neither the default library nor under node_modules. A workspace package
   * reached through a node_modules link counts as an "external library" to the compiler, but its real
   * path is a workspace source: only real node_modules paths are external. A file no package holds
   * names no identity (Locator.identityIn), so it needs no slice.
   */
  private located(sf: TS.SourceFile): boolean {
    if (this.loaded!.program.isSourceFileDefaultLibrary(sf) || toPosix(sf.fileName).includes('/node_modules/')) return false;
    const place = this.locator.place(sf.fileName);
    return !!place && !place.external;
  }

  /**
   * Look up the slices `declsOf` may ask the locator for — every program file it locates — in the
   * session's memory and the workspace view's store (view/foreign.ts `sliceFiles`), parsing nothing.
   * Before any record is built: the checker asks for declarations synchronously, file by file; a file
   * it asks for that was not found is extracted then, only that file, and written to the store when
   * the export ends (ForeignFiles `keep`).
   */
  async loadForeign(): Promise<void> {
    const p = this.loaded;
    if (!p) return;
    const files: string[] = [];
    for (const sf of p.program.getSourceFiles()) if (this.ownRel(sf.fileName) === undefined && this.located(sf)) files.push(sf.fileName);
    await this.foreign.sliceFiles(files);
  }

  // ---------------------------------------------------------------- build

  /**
   * Each file's tier, then the package, namespace, file, module, declaration and export records and the
   * header's fields. Import, site and diagnostic records are emitted after this (imports.ts,
   * references.ts, diagnostics.ts), into the same RecordSet.
   */
  build(report: DigestReport, diags: TsDiag[], load: ConfigLoad): void {
    const p = this.loaded;
    const rootPosix = toPosix(this.root);
    // Which files failed checking.
    for (const d of diags) {
      if (d.severity !== 'error') continue;
      this.programHasErrors = true;
      if (d.absFile) {
        const rel = toPosix(relative(rootPosix, toPosix(d.absFile)));
        if (!rel.startsWith('../')) this.fileErrors.add(rel);
      }
    }
    for (const f of report.files) {
      const inProgram = p ? !!p.program.getSourceFile(join(this.root, f.path)) : false;
      let tier: Provenance;
      if (!inProgram || this.fileErrors.has(f.path) || f.module.degraded) tier = 'syntax_inferred';
      else tier = this.programHasErrors ? 'compiler_unchecked' : 'compiler_checked';
      this.tiers.set(f.path, tier);
    }

    this.openMemo(report);
    this.emitPackage(load);
    const tables = this.exportTables();
    const notes = this.emitNamespaces();
    this.emitFiles(report, notes);
    this.emitModuleExports(tables);
    const configRel = load.status === 'ok' ? toPosix(relative(this.root, load.config.configPath)) : load.status === 'invalid' ? toPosix(relative(this.root, load.configPath)) : null;
    this.header = {
      kind: 'header',
      id: `header:${this.pkg.name}`,
      language: 'json',
      provenance: 'manifest_declared',
      format: 'kiln-codegraph',
      schema_version: GRAPH_SCHEMA_VERSION,
      mode: this.mode,
      root: '.',
      package: this.pkg.name,
      toolchain: { kiln_extractor: EXTRACTOR_VERSION, digest_schema: DIGEST_SCHEMA, typescript: load.status === 'ok' ? load.config.version : load.version },
      tsconfig: configRel,
    };
  }

  /**
   * Drop the memo's groups when what they all depend on changed (package name and entries, the source
   * files, output directories), or use no memo when two files would share a module id.
   */
  private openMemo(report: DigestReport): void {
    const memo = this.memo;
    if (!memo) return;
    const ids = new Set(report.files.map((f) => this.modId(f.path)));
    if (ids.size !== report.files.length || this.slices.size !== report.files.length) {
      this.out.drop();
      return;
    }
    const epoch = JSON.stringify([this.pkg.name, this.pkg.entries, report.files.map((f) => f.path), this.outDirs]);
    if (epoch !== memo.epoch) {
      memo.epoch = epoch;
      memo.files.clear();
      memo.tables.clear();
      memo.namespaces = undefined;
    }
  }

  /**
   * Every module's export table; with a memo, each projected to what records are made of (identities
   * and kinds of the targets, before and after choosing an overload's implementation, and the packages
   * a name comes from), its version moved when the projection differs from the previous export's.
   */
  private exportTables(): Map<string, ExportTable> {
    const tables = new Map<string, ExportTable>();
    const sliceOf = (f: string) => this.slices.get(f);
    for (const rel of [...this.slices.keys()].sort(codePointCompare)) {
      const table = this.modules.exportsOf(rel);
      tables.set(rel, table);
      if (!this.memo) continue;
      const parts: string[] = [];
      for (const name of [...new Set([...table.names.keys(), ...table.external.keys()])].sort(codePointCompare)) {
        const targets = table.names.get(name) ?? [];
        parts.push(
          name,
          targets.map((t) => this.identityOf(t.file, t.decl)).join('\u0001'),
          implementationOf(targets, sliceOf).map((t) => `${this.identityOf(t.file, t.decl)}\u0002${this.slices.get(t.file)!.decls[t.decl]!.kind}`).join('\u0001'),
          [...(table.external.get(name) ?? [])].sort(codePointCompare).join('\u0001'),
        );
      }
      const projected = parts.join('\u0000');
      if (this.memo.tables.get(rel)?.projected !== projected) this.memo.tables.set(rel, { projected, version: ++this.memo.versions });
    }
    return tables;
  }

  private emitPackage(load: ConfigLoad): void {
    const manifestBytes = readBytes(join(this.root, 'package.json'));
    let manifest: Record<string, unknown> | null = null;
    if (manifestBytes !== undefined) {
      this.manifests.push({ path: 'package.json', content_hash: sha256Hex(manifestBytes) });
      try {
        const v = JSON.parse(manifestBytes.toString('utf8')) as unknown;
        if (v && typeof v === 'object' && !Array.isArray(v)) manifest = v as Record<string, unknown>;
      } catch {
        // reported by the digest pipeline (KILN_MANIFEST_INVALID)
      }
    }
    const dependencies: { name: string; section: string }[] = [];
    for (const section of SECTIONS) {
      const deps = manifest?.[section];
      if (!deps || typeof deps !== 'object' || Array.isArray(deps)) continue;
      for (const name of Object.keys(deps).sort(codePointCompare)) dependencies.push({ name, section });
    }
    dependencies.sort((a, b) => codePointCompare(a.name, b.name) || codePointCompare(a.section, b.section));

    let tsconfig: PackageNode['tsconfig'] = null;
    const refTargets: string[] = [];
    const configPath = load.status === 'ok' ? load.config.configPath : load.status === 'invalid' ? load.configPath : undefined;
    if (configPath) {
      const chain = [configPath];
      if (load.status === 'ok') {
        const cf = load.config.parsed.options.configFile as (TS.TsConfigSourceFile & { extendedSourceFiles?: string[] }) | undefined;
        chain.push(...(cf?.extendedSourceFiles ?? []));
      }
      for (const f of chain) {
        const bytes = readBytes(f);
        if (bytes !== undefined) this.manifests.push({ path: diagnosticFile(this.root, f), content_hash: sha256Hex(bytes) });
      }
      if (load.status === 'ok') {
        const opts = load.config.options;
        const paths: Record<string, string[]> = {};
        for (const k of Object.keys(opts.paths ?? {}).sort(codePointCompare)) paths[k] = [...opts.paths![k]!];
        const references = (load.config.parsed.projectReferences ?? []).map((r) => toPosix(relative(this.root, r.path))).sort(codePointCompare);
        tsconfig = { file: toPosix(relative(this.root, configPath)), paths, references };
        for (const r of load.config.parsed.projectReferences ?? []) {
          const dir = r.path.endsWith('.json') ? dirname(r.path) : r.path;
          const other = this.locator.packageOfDir(dir);
          if (other && other.root !== this.root) refTargets.push(other.name);
        }
      }
    }
    let project: PackageNode['project'] = null;
    const projectBytes = readBytes(join(this.root, 'project.json'));
    const implicit: string[] = [];
    if (projectBytes !== undefined) {
      this.manifests.push({ path: 'project.json', content_hash: sha256Hex(projectBytes) });
      try {
        const pj = JSON.parse(projectBytes.toString('utf8')) as { name?: unknown; tags?: unknown; implicitDependencies?: unknown };
        const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
        implicit.push(...strings(pj.implicitDependencies).filter((x) => !x.startsWith('!')));
        project = { name: typeof pj.name === 'string' ? pj.name : null, tags: strings(pj.tags).sort(codePointCompare), implicit_dependencies: strings(pj.implicitDependencies).sort(codePointCompare) };
      } catch {
        project = { name: null, tags: [], implicit_dependencies: [] };
      }
    }
    this.manifests.sort((a, b) => codePointCompare(a.path, b.path));
    const rec: PackageNode = {
      kind: 'package',
      id: this.pkgId,
      language: 'json',
      provenance: 'manifest_declared',
      degraded: !!this.pkg.invalid,
      ...(this.pkg.invalid ? { degraded_reason: 'manifest-invalid' } : {}),
      name: this.pkg.name,
      manifests: this.manifests,
      dependencies,
      entries: this.pkg.entries.map((e) => e.subpath),
      tsconfig,
      project,
    };
    this.out.addNode(rec);
    const via = new Map<string, Set<string>>();
    const add = (name: string, how: string) => {
      if (name === this.pkg.name) return;
      const set = via.get(name) ?? new Set<string>();
      set.add(how);
      via.set(name, set);
    };
    for (const d of dependencies) add(d.name, d.section);
    for (const r of refTargets) add(r, 'tsconfig-reference');
    for (const i of implicit) add(i, 'project.json');
    for (const [name, hows] of via) {
      this.out.addEdge('imports', this.pkgId, packageId(name), 'manifest_declared', 'json', { via: [...hows].sort(codePointCompare), type_only: false });
    }
  }

  private emitFiles(report: DigestReport, notes: ReadonlyMap<string, string[]>): void {
    const byFile = new Map<string, typeof report.declarations>();
    for (const d of report.declarations) {
      const list = byFile.get(d.span.file) ?? [];
      list.push(d);
      byFile.set(d.span.file, list);
    }
    for (const f of report.files) {
      const slice = this.slices.get(f.path);
      if (!slice) continue;
      const mod = this.modId(f.path);
      const records = byFile.get(f.path) ?? [];
      const reason = f.module.degraded ?? (this.fileErrors.has(f.path) ? 'type-error' : undefined);
      const namespaces = notes.get(mod) ?? [];
      let extra = '';
      if (this.memo) {
        // Everything the file's records take besides its slice: the report's view of it, its namespaces.
        const parts = [f.content_hash, f.variant, f.module.digest, reason ?? '', this.tier(f.path), namespaces.join('\u0001')];
        for (const r of records) parts.push(r.identity, r.semantic_digest ?? '', r.surface.join('\u0001'));
        extra = parts.join('\u0000');
        const kept = this.memo.files.get(f.path)?.files;
        if (kept && kept.key.slice === slice && kept.key.extra === extra) {
          this.out.replay(kept);
          continue;
        }
      }
      const g = this.out.group({ slice, extra }, () => this.emitFile(f, slice, mod, records, reason, namespaces));
      if (g) this.out.groupsOf(f.path).files = g;
    }
  }

  private emitFile(f: DigestReport['files'][number], slice: Slice, mod: string, records: DigestReport['declarations'], reason: string | undefined, namespaces: string[]): void {
    const tier = this.tier(f.path);
    const lang = slice.language;
    const fid = fileId(this.pkg.name, f.path);
    const degraded = reason ? { degraded: true, degraded_reason: reason } : { degraded: false };
    this.out.addNode({ kind: 'file', id: fid, language: lang, provenance: tier, ...degraded, package: this.pkg.name, path: f.path, variant: f.variant, content_hash: f.content_hash, module: mod });
    this.out.addNode({
      kind: 'module',
      id: mod,
      language: lang,
      provenance: tier,
      ...degraded,
      package: this.pkg.name,
      module_path: logicalModulePath(f.path),
      file: f.path,
      module_digest: f.module.digest,
      namespaces,
      internal: !namespaces.length,
    });
    this.out.addEdge('contains', this.pkgId, fid, tier, lang, {});
    this.out.addEdge('contains', this.pkgId, mod, tier, lang, {});
    this.out.addEdge('defines', fid, mod, tier, lang, {});
    slice.decls.forEach((d, i) => {
      const r = records[i];
      const id = this.identityOf(f.path, i);
      const parent = d.parent === -1 ? null : this.identityOf(f.path, d.parent);
      const rec: DeclarationNode = {
        kind: 'declaration',
        id,
        language: lang,
        provenance: tier,
        degraded: !!d.degraded,
        ...(d.degraded ? { degraded_reason: d.degraded } : {}),
        span: { file: f.path, ...d.span },
        package: this.pkg.name,
        module: mod,
        module_path: logicalModulePath(f.path),
        path: d.path,
        name: d.name,
        decl_kind: d.kind,
        parent,
        semantic_digest: r && r.identity === id ? r.semantic_digest : d.semantic,
        doc_digest: d.doc,
        digest_schema: slice.digestSchema,
        header_digest: d.signature ?? null,
        surface: r && r.identity === id ? [...r.surface] : [],
        exported_as: [...new Set(d.exportedAs ?? [])].sort(codePointCompare),
      };
      this.out.addNode(rec);
      this.out.addEdge('defines', parent ?? mod, id, tier, lang, {});
    });
  }

  /**
   * The entry points' namespaces and their exports; returns, per module, the namespaces it is part of
   * (sorted; a module in none is internal). One group: kept while every export table is.
   */
  private emitNamespaces(): Map<string, string[]> {
    const entryFiles = this.pkg.entries.map((entry) => entry.targets.map((t) => resolveManifestTarget(t, this.fileSet, this.outDirs)).find((f) => f !== undefined));
    const key = this.memo ? entryFiles.map((f) => (f === undefined ? '-' : `${f}\u0001${this.out.tableVersion(f)}`)).join('\u0000') : '';
    const kept = this.memo?.namespaces;
    if (kept && kept.key === key) {
      this.out.replay(kept);
      return kept.notes;
    }
    const moduleNamespaces = new Map<string, Set<string>>();
    const note = (mod: string, ns: string) => {
      const set = moduleNamespaces.get(mod) ?? new Set<string>();
      set.add(ns);
      moduleNamespaces.set(mod, set);
    };
    const g = this.out.group(key, () => {
      this.pkg.entries.forEach((entry, i) => {
        const file = entryFiles[i];
        const ns = namespaceId(this.pkg.name, entry.subpath);
        const table = file ? this.modules.exportsOf(file) : undefined;
        const names = new Set<string>([...(table?.names.keys() ?? []), ...(table?.external.keys() ?? [])]);
        const lang: GraphLanguage = file ? this.langOf(file) : 'json';
        this.out.addNode({
          kind: 'namespace',
          id: ns,
          language: lang,
          provenance: 'manifest_declared',
          degraded: !file,
          ...(!file ? { degraded_reason: 'entry-not-in-tree' } : {}),
          package: this.pkg.name,
          entry: entry.subpath,
          module: file ? this.modId(file) : null,
          names: [...names].sort(codePointCompare),
        });
        this.out.addEdge('contains', this.pkgId, ns, 'manifest_declared', 'json', {});
        if (!file || !table) return;
        this.out.addEdge('contains', ns, this.modId(file), 'manifest_declared', lang, {});
        note(this.modId(file), ns);
        this.exportEdges(ns, table.names, (t) => this.tier(t));
        for (const targets of table.names.values()) for (const t of targets) note(this.modId(t.file), ns);
      });
    });
    const notes = new Map<string, string[]>();
    for (const [mod, set] of moduleNamespaces) notes.set(mod, [...set].sort(codePointCompare));
    if (g && this.memo) this.memo.namespaces = { ...g, notes };
    return notes;
  }

  /** Each module's own exports: one group per module, kept while its export table is. */
  private emitModuleExports(tables: ReadonlyMap<string, ExportTable>): void {
    for (const [rel, table] of tables) {
      const version = this.out.tableVersion(rel);
      const kept = this.memo?.files.get(rel)?.exports;
      if (kept && kept.key === version) {
        this.out.replay(kept);
        continue;
      }
      const g = this.out.group(version, () => {
        const mod = this.modId(rel);
        const lang = this.langOf(rel);
        const tier = this.tier(rel);
        const names = new Set<string>([...table.names.keys(), ...table.external.keys()]);
        for (const name of [...names].sort(codePointCompare)) {
          const eid = exportId(mod, name);
          const targets = table.names.get(name) ?? [];
          this.out.addNode({
            kind: 'export',
            id: eid,
            language: lang,
            provenance: tier,
            degraded: false,
            package: this.pkg.name,
            module: mod,
            name,
            targets: [...new Set(targets.map((t) => this.identityOf(t.file, t.decl)))].sort(codePointCompare),
            external: [...(table.external.get(name) ?? [])].sort(codePointCompare),
          });
          this.out.addEdge('contains', mod, eid, tier, lang, {});
          for (const t of targets) this.out.addEdge('exports', eid, this.identityOf(t.file, t.decl), tier, lang, { names: [name] });
        }
      });
      if (g) this.out.groupsOf(rel).exports = g;
    }
  }

  private exportEdges(from: string, names: Map<string, { file: string; decl: number }[]>, tierOf: (file: string) => Provenance): void {
    for (const [name, targets] of names) {
      for (const t of targets) {
        const to = this.identityOf(t.file, t.decl);
        this.out.addEdge('exports', from, to, tierOf(t.file), this.langOf(t.file), { names: [name] }, (e) => {
          if (!e.names.includes(name)) e.names = [...e.names, name].sort(codePointCompare);
        });
      }
    }
  }

  // ---------------------------------------------------------------- finish

  /** The records: the header, then nodes and edges in canonical order (records.ts). */
  finish(): KnownRecord[] {
    const { nodes, edges } = this.out.finish();
    const languages = new Set<GraphLanguage>();
    let degraded = false;
    for (const r of [...nodes, ...edges]) {
      languages.add(r.language);
      if (r.degraded) degraded = true;
    }
    const snapshotEntries = [...this.files.map((f) => ({ path: f.path, content_hash: f.content_hash })), ...this.manifests];
    const { kind, id, language, provenance, ...rest } = this.header;
    const header: HeaderRecord = {
      kind,
      id,
      language,
      provenance,
      degraded,
      ...rest,
      languages: [...languages].sort(codePointCompare),
      snapshot: { id: snapshotId(snapshotEntries), files: snapshotEntries.length },
      counts: { nodes: nodes.length, edges: edges.filter((e) => isEdgeKind(e.kind)).length },
    };
    return [header, ...nodes, ...edges];
  }
}

function readBytes(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
