/**
 * Where a file of another package belongs (the codegraph asks, through view/foreign.ts): which
 * package holds it (nearest package.json), its module there, the identities of its declarations, and
 * the workspace root above a package.
 *
 * Invariants: ids never contain absolute paths; a file under `node_modules` is external (its package is
 * named, never its path); a file in another package's build output (`dist/x.d.ts`) is mapped back to
 * the source it was built from, and a declaration found there is used only if the source declares
 * the same identity — otherwise nothing is returned (never guessed). Synchronous file reads, cached
 * per Locator (one per export: files may change between exports); nothing happens at import time.
 * `sliceOf` is synchronous, since the checker asks for declarations synchronously: it answers from the
 * slices view/foreign.ts found beforehand in memory or the store (`provide`), and a file it was not
 * given a slice for is extracted then, on the calling thread, by the Locator's `extract` — view/
 * foreign.ts's, which keeps the slice for the store — once per file.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Slice } from '../facts/slice.js';
import { declarationIdentity } from '../identity/identity.js';
import { fileKind, logicalModulePath, type Language } from '../parse/language.js';
import { resolveInTree } from './resolve.js';
import { UNNAMED_PACKAGE } from './package.js';

export interface PackageRoot {
  /** Absolute directory. */
  root: string;
  name: string;
  /** Parsed package.json (null when unreadable). */
  manifest: Record<string, unknown> | null;
}

/** A file's place in the workspace. */
export type FilePlace =
  | { external: true; package: string }
  | { external: false; package: string; root: string; rel: string; language: Language; module: string };

const toPosix = (p: string) => p.split(sep).join('/');

export class Locator {
  private readonly packageByDir = new Map<string, PackageRoot | null>();
  private readonly slices = new Map<string, Slice | null>();
  private readonly outDirs = new Map<string, string[]>();

  /**
   * @param extract how `sliceOf` slices a file it was not given (`provide`), synchronously: null when
   *   it has none (view/foreign.ts: extracted on demand and kept for the store).
   */
  constructor(private readonly extract: (absFile: string) => Slice | null) {}

  /** The package directory holding `dir` (nearest package.json upwards). */
  packageOfDir(dir: string): PackageRoot | undefined {
    const seen: string[] = [];
    let found: PackageRoot | null | undefined;
    for (let d = dir; ; d = dirname(d)) {
      const cached = this.packageByDir.get(d);
      if (cached !== undefined) {
        found = cached;
        break;
      }
      seen.push(d);
      const pj = join(d, 'package.json');
      if (existsSync(pj)) {
        let manifest: Record<string, unknown> | null = null;
        try {
          const v = JSON.parse(readFileSync(pj, 'utf8')) as unknown;
          if (v && typeof v === 'object' && !Array.isArray(v)) manifest = v as Record<string, unknown>;
        } catch {
          // unreadable manifest: the directory is still a package root, unnamed
        }
        const name = manifest && typeof manifest.name === 'string' && manifest.name ? manifest.name : UNNAMED_PACKAGE;
        found = { root: d, name, manifest };
        break;
      }
      if (dirname(d) === d) {
        found = null;
        break;
      }
    }
    for (const d of seen) this.packageByDir.set(d, found ?? null);
    return found ?? undefined;
  }

  /** Where an absolute file belongs; undefined when no package holds it. */
  place(absFile: string): FilePlace | undefined {
    const posixPath = toPosix(absFile);
    const nm = posixPath.lastIndexOf('/node_modules/');
    if (nm >= 0) {
      const rest = posixPath.slice(nm + '/node_modules/'.length).split('/');
      const pkg = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
      return { external: true, package: pkg };
    }
    const kind = fileKind(absFile);
    if (!kind) return undefined;
    const pkg = this.packageOfDir(dirname(absFile));
    if (!pkg) return undefined;
    let rel = toPosix(relative(pkg.root, absFile));
    rel = this.sourceOf(pkg, rel) ?? rel;
    const lang = fileKind(rel)?.language ?? kind.language;
    const module = logicalModulePath(rel);
    return { external: false, package: pkg.name, root: pkg.root, rel, language: lang, module };
  }

  /**
   * A file in the package's build output (`dist/x.d.ts`, `dist/x.js`) → the source file it was built
   * from, when one exists; undefined when `rel` is not build output.
   */
  sourceOf(pkg: PackageRoot, rel: string): string | undefined {
    const exists = { has: (p: string) => existsSync(join(pkg.root, p)) && statSync(join(pkg.root, p)).isFile() } as ReadonlySet<string>;
    for (const out of this.outDirsOf(pkg.root)) {
      const prefix = `${out}/`;
      if (!rel.startsWith(prefix)) continue;
      const rest = rel.slice(prefix.length);
      for (const srcRoot of ['src/', 'lib/', '']) {
        const hit = resolveInTree(srcRoot + rest, exists);
        if (hit && !hit.startsWith(prefix)) return hit;
      }
    }
    return undefined;
  }

  private outDirsOf(root: string): string[] {
    let dirs = this.outDirs.get(root);
    if (!dirs) {
      const found = new Set<string>();
      for (const name of ['tsconfig.json', 'tsconfig.lib.json', 'tsconfig.build.json']) {
        let text: string;
        try {
          text = readFileSync(join(root, name), 'utf8');
        } catch {
          continue;
        }
        for (const m of text.matchAll(/"(outDir|declarationDir)"\s*:\s*"([^"]+)"/g)) found.add(m[2]!.replace(/^\.\//, '').replace(/\/$/, ''));
      }
      for (const d of ['dist', 'build', 'out']) found.add(d);
      dirs = [...found].sort();
      this.outDirs.set(root, dirs);
    }
    return dirs;
  }

  /** The slice of an absolute file, found beforehand (view/foreign.ts); null: it has none. */
  provide(absFile: string, slice: Slice | null): void {
    this.slices.set(absFile, slice);
  }

  /** Whether `sliceOf` answers this file without extracting it. */
  has(absFile: string): boolean {
    return this.slices.has(absFile);
  }

  /**
   * The slice of an absolute file: as given (`provide`), else extracted now (`extract`, on the calling
   * thread) and remembered; null when it has none.
   */
  sliceOf(absFile: string): Slice | null {
    let s = this.slices.get(absFile);
    if (s === undefined) {
      s = this.extract(absFile);
      this.slices.set(absFile, s);
    }
    return s;
  }

  /**
   * The identity of declaration `index` of the slice of `absFile`, a file outside the exported package.
   * For build output mapped to a source, the source must declare the same path and kind.
   */
  identityIn(absFile: string, index: number): string | undefined {
    const place = this.place(absFile);
    if (!place || place.external) return undefined;
    const slice = this.sliceOf(absFile);
    const d = slice?.decls[index];
    if (!slice || !d) return undefined;
    const own = toPosix(relative(place.root, absFile));
    if (own !== place.rel) {
      // Build output: confirm against the source's own declarations.
      const src = this.sliceOf(join(place.root, place.rel));
      if (!src?.decls.some((x) => x.path === d.path && x.kind === d.kind)) return undefined;
    }
    return declarationIdentity(place, d);
  }
}

/** The workspace root above a package: the nearest ancestor with workspaces, pnpm-workspace.yaml or nx.json. */
export function findWorkspaceRoot(packageRoot: string): string | undefined {
  for (let d = dirname(packageRoot); ; d = dirname(d)) {
    if (existsSync(join(d, 'pnpm-workspace.yaml')) || existsSync(join(d, 'nx.json'))) return d;
    const pj = join(d, 'package.json');
    if (existsSync(pj)) {
      try {
        const v = JSON.parse(readFileSync(pj, 'utf8')) as { workspaces?: unknown };
        if (v && typeof v === 'object' && v.workspaces) return d;
      } catch {
        // not a workspace root
      }
    }
    if (dirname(d) === d) return undefined;
  }
}
