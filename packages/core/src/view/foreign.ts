/**
 * Files of other packages as one reading of a workspace sees them (a codegraph export of one package):
 * where each belongs (view/locate.ts) and, loaded on demand, the slices of those a reading follows —
 * a file and, transitively, the modules its exports come from (`prepare`, a reading from syntax) with
 * each package's export tables, or exactly the files the checker's program holds (`sliceFiles`, for
 * the locator's synchronous `sliceOf`). A slice comes from memory (by content), else the store, else
 * the view's digest pool, and what was digested is written to the store like any digest
 * (view/collect.ts, under the view of the package holding the file).
 *
 * Invariants: a slice is a function of its file's content, so what the store or memory holds changes
 * where a slice comes from, never what is answered; the store's and the pool's notices are not this
 * reading's (a file that cannot be read or digested simply has no slice); the per-file caches are
 * this object's, one per reading, since files may change between readings.
 */
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Slice } from '../facts/slice.js';
import { sha256Hex } from '../digest/hash.js';
import { fileKind } from '../parse/language.js';
import type { DigestPool } from '../pool/pool.js';
import { contentKey } from '../store/lookup.js';
import { collectSlices } from './collect.js';
import { buildOutputDirs, listSourceFiles } from './files.js';
import { Locator } from './locate.js';
import { resolveSpecifier } from './resolve.js';
import { ModuleExports } from './surface.js';

/** Another package as far as a reading loaded it: its source files, the slices loaded, their export tables. */
export interface ForeignPackage {
  /** Absolute directory. */
  root: string;
  files: Set<string>;
  slices: Map<string, Slice>;
  /** Export tables over `slices`; dropped whenever a slice is added. */
  modules?: ModuleExports;
}

/** Where a ForeignFiles digests: the view's store and pool (view/workspace-view.ts `foreign`). */
export interface ForeignDigest {
  storeDir: string | null;
  schema: number;
  maxFileSize: number;
  /** The view's pool; absent, misses are digested on the calling thread (the view's `workers: 0`). */
  pool?: DigestPool;
  /** Slices by content key kept between readings in one process (a graph session); filled here. */
  memory?: Map<string, Slice>;
}

/** What a ForeignFiles loaded: slices, and how many of them were parsed (the rest came from memory or the store). */
export interface ForeignCounts {
  files: number;
  parsed: number;
}

const toPosix = (p: string) => p.split(sep).join('/');

export class ForeignFiles {
  readonly locator = new Locator();
  readonly counts: ForeignCounts = { files: 0, parsed: 0 };
  private readonly packages = new Map<string, Promise<ForeignPackage | null>>();
  /** The packages `prepare` loaded, by root. */
  private readonly ready = new Map<string, ForeignPackage | null>();

  constructor(private readonly digest: ForeignDigest) {}

  /** A package `prepare` loaded, by root; null when its files could not be listed. */
  packageAt(root: string): ForeignPackage | null | undefined {
    return this.ready.get(root);
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

  /**
   * Slices of these files of the package at `root` (relative paths): from memory by content, the rest
   * digested as a view digests (store lookup, misses through the pool, one pack and manifest written).
   */
  private async slicesOf(root: string, rels: string[]): Promise<Map<string, Slice>> {
    const out = new Map<string, Slice>();
    const missing: string[] = [];
    for (const rel of rels) {
      const kind = fileKind(rel);
      if (!kind) continue;
      let kept: Slice | undefined;
      if (this.digest.memory) {
        try {
          kept = this.digest.memory.get(contentKey(sha256Hex(readFileSync(join(root, rel))), kind.variant));
        } catch {
          continue; // unreadable: no slice
        }
      }
      if (kept) out.set(rel, kept);
      else missing.push(rel);
    }
    if (missing.length) {
      const files = [...missing].sort();
      const scope = new Set(files);
      const { slices, parsed } = await collectSlices({
        packageRoot: root,
        files,
        inScope: (rel) => scope.has(rel),
        schema: this.digest.schema,
        maxFileSize: this.digest.maxFileSize,
        storeDir: this.digest.storeDir,
        workers: this.digest.pool ? this.digest.pool.threads : 0,
        ...(this.digest.pool ? { pool: this.digest.pool } : {}),
        // Notices of the store and the pool belong to the view's own digests, not to this reading.
        diagnostics: [],
      });
      this.counts.parsed += parsed;
      for (const [rel, s] of slices) {
        out.set(rel, s);
        this.digest.memory?.set(contentKey(s.contentHash, s.variant), s);
      }
    }
    this.counts.files += out.size;
    return out;
  }

  /**
   * Load the slices of exactly these files (absolute: what the checker's program holds outside the
   * exported package's slices), each under the package holding it, and hand them to the locator, whose
   * `sliceOf` then answers without parsing. A file in another package's build output (`dist/x.d.ts`)
   * brings the source it maps to, which `identityIn` confirms declarations against. Files no package
   * holds, and node_modules files, have no identities: they are skipped. One digest per package, the
   * packages concurrently (as `prepare`).
   */
  async sliceFiles(absFiles: Iterable<string>): Promise<void> {
    const byRoot = new Map<string, Map<string, string>>();
    const want = (root: string, abs: string) => {
      if (this.locator.has(abs)) return;
      let files = byRoot.get(root);
      if (!files) byRoot.set(root, (files = new Map()));
      files.set(toPosix(relative(root, abs)), abs);
    };
    for (const abs of absFiles) {
      const place = this.locator.place(abs);
      if (!place || place.external) continue;
      want(place.root, abs);
      // The very path identityIn reads the source at.
      if (toPosix(relative(place.root, abs)) !== place.rel) want(place.root, join(place.root, place.rel));
    }
    await Promise.all(
      [...byRoot].map(async ([root, files]) => {
        const rels = [...files.keys()];
        const got = await this.slicesOf(root, rels);
        for (const rel of rels) this.locator.provide(files.get(rel)!, got.get(rel) ?? null);
      }),
    );
  }

  /**
   * Load the slices a reading of these files of other packages (absolute paths) needs: each file
   * and, transitively, the modules its exports come from.
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
      // One digest per package and round: a view's store entries are written by one run at a time.
      const byPkg = new Map<ForeignPackage, string[]>();
      for (const q of batch) byPkg.set(q.pkg, [...(byPkg.get(q.pkg) ?? []), q.rel]);
      const loaded = new Map(await Promise.all([...byPkg].map(async ([pkg, rels]) => [pkg, await this.slicesOf(pkg.root, rels)] as const)));
      for (const q of batch) {
        const slice = loaded.get(q.pkg)!.get(q.rel);
        if (!slice) continue;
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
      }
    }
  }

  /** The export tables of a loaded package (built once per set of loaded slices). */
  modulesOf(pkg: ForeignPackage): ModuleExports {
    return (pkg.modules ??= new ModuleExports(pkg.slices, pkg.files));
  }

  /**
   * Everything answered from, once prepared: each package's root, name, files and loaded slices (by
   * content). Equal fingerprints give equal answers.
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
}
