/**
 * Files of other packages as one reading of a workspace sees them (a codegraph export of one package):
 * where each belongs (view/locate.ts) and the slices of those a reading follows, in one of two ways.
 * - From syntax (`prepare`): a file and, transitively, the modules its exports come from, with each
 *   package's export tables. A slice comes from memory (by content), else the store, else the view's
 *   digest pool; what was digested is written to the store like any digest (view/collect.ts).
 * - For the checker, which asks the locator for declarations synchronously (`sliceOf`), file by file:
 *   `sliceFiles` looks up, without parsing anything, every file the program holds in memory and the
 *   store and hands what it finds to the locator; a file the checker then asks for that was not found
 *   is extracted on demand, on the calling thread (parsing only what the checker reads: a program
 *   holds far more files than it asks about), and `keep` writes those slices to the store at the end
 *   of the reading — as a digest of exactly those files would, slices supplied — so the next reading
 *   finds them.
 * Either way a slice is stored under the view of the package holding its file, and a write keeps
 * every other entry of that view's manifest as it was (collect.ts `inScope`, `lookupOnly`).
 *
 * Invariants: a slice is a function of its file's content, so what the store or memory holds changes
 * where a slice comes from, never what is answered; every slice parsed is offered to the store; the
 * store's and the pool's notices are not this reading's (a file that cannot be read or digested simply
 * has no slice); the per-file caches are this object's, one per reading, since files may change
 * between readings.
 */
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { Slice } from '../facts/slice.js';
import { sha256Hex } from '../digest/hash.js';
import { extractSlice } from '../facts/extract.js';
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

/**
 * What a ForeignFiles read. `files`: files looked for — from syntax those that have a slice; for the
 * checker every program file looked up beforehand (found or not) and any other file it asked for.
 * `parsed`: of them, parsed (not in memory or the store). `inline`: of those, extracted on demand on
 * the calling thread because the checker asked for them (all of the checker's parses; none from syntax).
 */
export interface ForeignCounts {
  files: number;
  parsed: number;
  inline: number;
}

const toPosix = (p: string) => p.split(sep).join('/');

export class ForeignFiles {
  readonly locator = new Locator((abs) => this.onDemand(abs));
  readonly counts: ForeignCounts = { files: 0, parsed: 0, inline: 0 };
  /** Files `sliceFiles` looked up (absolute). */
  private readonly looked = new Set<string>();
  /** Slices extracted on demand, for `keep`: package root → path in it → slice. */
  private readonly extracted = new Map<string, Map<string, Slice>>();
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
   * digested as a view digests (store lookup, misses through the pool, one pack and manifest written);
   * `lookupOnly`, misses are left without a slice (and without a pool).
   */
  private async slicesOf(root: string, rels: string[], lookupOnly = false): Promise<Map<string, Slice>> {
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
    if (missing.length && !(lookupOnly && !this.digest.storeDir)) {
      const files = [...missing].sort();
      const scope = new Set(files);
      const { slices, parsed } = await collectSlices({
        packageRoot: root,
        files,
        inScope: (rel) => scope.has(rel),
        schema: this.digest.schema,
        maxFileSize: this.digest.maxFileSize,
        storeDir: this.digest.storeDir,
        ...(lookupOnly ? { workers: 0, lookupOnly } : { workers: this.digest.pool ? this.digest.pool.threads : 0, ...(this.digest.pool ? { pool: this.digest.pool } : {}) }),
        // Notices of the store and the pool belong to the view's own digests, not to this reading.
        diagnostics: [],
      });
      this.counts.parsed += parsed;
      for (const [rel, s] of slices) {
        out.set(rel, s);
        this.digest.memory?.set(contentKey(s.contentHash, s.variant), s);
      }
    }
    if (!lookupOnly) this.counts.files += out.size;
    return out;
  }

  /**
   * Look up the slices of these files (absolute: what the checker's program holds outside the exported
   * package's slices) in memory and the store, each under the package holding it, and hand those found
   * to the locator, whose `sliceOf` then answers without parsing; nothing is parsed here (`onDemand`
   * extracts what the checker asks for and this did not find). A file in another package's build output
   * (`dist/x.d.ts`) brings the source it maps to, which `identityIn` confirms declarations against.
   * Files no package holds, and node_modules files, have no identities: they are skipped. One lookup
   * per package, the packages concurrently.
   */
  async sliceFiles(absFiles: Iterable<string>): Promise<void> {
    const byRoot = new Map<string, Map<string, string>>();
    const want = (root: string, abs: string) => {
      if (this.locator.has(abs) || this.looked.has(abs)) return;
      this.looked.add(abs);
      this.counts.files++;
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
        const got = await this.slicesOf(root, rels, true);
        for (const [rel, slice] of got) this.locator.provide(files.get(rel)!, slice);
      }),
    );
  }

  /**
   * The slice of a file the locator was not given one for (`sliceOf`, asked by the checker): from
   * memory by content, else extracted here, on the calling thread, counted, and kept for `keep` under
   * the package holding the file. Null when it is not a source file or cannot be read.
   */
  private onDemand(abs: string): Slice | null {
    const kind = fileKind(abs);
    if (!kind) return null;
    if (!this.looked.has(abs)) {
      this.looked.add(abs);
      this.counts.files++;
    }
    let bytes: Buffer;
    try {
      bytes = readFileSync(abs);
    } catch {
      return null;
    }
    const key = contentKey(sha256Hex(bytes), kind.variant);
    const kept = this.digest.memory?.get(key);
    if (kept) return kept;
    let slice: Slice;
    try {
      slice = extractSlice(bytes, kind.variant, { digestSchema: this.digest.schema, maxFileSize: this.digest.maxFileSize });
    } catch {
      return null;
    }
    this.counts.parsed++;
    this.counts.inline++;
    this.digest.memory?.set(key, slice);
    const place = this.locator.place(abs);
    if (place && !place.external) {
      let files = this.extracted.get(place.root);
      if (!files) this.extracted.set(place.root, (files = new Map()));
      files.set(toPosix(relative(place.root, abs)), slice);
    }
    return slice;
  }

  /**
   * Write the slices extracted on demand to the store, under the view of the package holding each file:
   * per package one digest of exactly those files with their slices supplied (collect.ts `given`: a file
   * changed since is looked up as any, and left alone when not found — nothing is parsed), which writes
   * one pack and the view's manifest with every other entry kept. Awaited before the reading ends.
   */
  async keep(): Promise<void> {
    const storeDir = this.digest.storeDir;
    const extracted = [...this.extracted];
    this.extracted.clear();
    if (!storeDir) return;
    await Promise.all(
      extracted.map(async ([root, files]) => {
        const rels = [...files.keys()].sort();
        const scope = new Set(rels);
        const given = new Map<string, Slice>();
        for (const s of files.values()) given.set(contentKey(s.contentHash, s.variant), s);
        await collectSlices({
          packageRoot: root,
          files: rels,
          inScope: (rel) => scope.has(rel),
          lookupOnly: true,
          given,
          schema: this.digest.schema,
          maxFileSize: this.digest.maxFileSize,
          storeDir,
          workers: 0,
          // As in slicesOf: the store's notices are not this reading's.
          diagnostics: [],
        });
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
