/**
 * The producer of a package's executable representation (SPEC §7, RFC 123): its public surface from
 * kiln's facts (surface.ts), payloads bundled by rollup from its built ESM (bundle.ts), and explicit
 * coverage for every surface identity. The binary encoding of the result is the runtime's (`kiln.rep`).
 *
 * Invariants:
 * - every surface identity of the manifest's public surface has exactly one entry, covered or
 *   uncovered with a registered KILN_REP_UNCOVERED_* reason and a one-line detail naming what was
 *   found and where (package-relative); nothing else is indexed (no private declaration);
 * - aliases, re-exports and facades of one declaration share its declaring identity and payload;
 * - entries are sorted by surface in code-point order, payloads by name; the result depends on the
 *   package's files only, not on where they are (no absolute path, byte-identical across clones);
 * - the package is read, never written.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import type { RepEntry, Representation } from '@kiln/runtime';
import { diagnostic, KilnError, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { REPRESENTATION_FORMAT } from '../version.js';
import { builtEntries } from './built-entries.js';
import { bundlePayloads, type BundleRequest, type BundleResult } from './bundle.js';
import { readPublicSurface, type SurfaceOptions } from './surface.js';

export interface ProduceOptions extends SurfaceOptions {
  /** The package directory (where package.json is); absolute, or relative to the current directory. */
  packageRoot: string;
  /** Diagnostics' file paths are relative to it (default: the package root). */
  workspaceRoot?: string;
}

export interface ProduceResult {
  representation: Representation;
  diagnostics: Diagnostic[];
}

/** The Node.js version payloads need when the manifest states no simple lower bound. */
export const DEFAULT_NODE_REQUIREMENT = '20.19.0';

/** Capabilities every payload of this producer uses (RepRequirements.features). */
export const REPRESENTATION_FEATURES = ['cjs-payloads'] as const;

const PRODUCER = 'represent';

/** Produce the executable representation of the built package at `packageRoot`. */
export async function produceRepresentation(opts: ProduceOptions): Promise<ProduceResult> {
  const root = resolve(opts.packageRoot);
  const base = resolve(opts.workspaceRoot ?? root);
  const inBase = (relToPackage: string) => relative(base, resolve(root, relToPackage)).split(sep).join('/');
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(await readFile(resolve(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest)) throw new Error('package.json is not an object');
  } catch (e) {
    throw new KilnError(diagnostic('KILN_READ_FAILED', `package.json of ${relative(base, root) || '.'}: ${(e as Error).message}`, { producer: PRODUCER, noLocation: 'the package has no readable manifest' }));
  }
  const surface = await readPublicSurface(root, { ...(opts.store !== undefined ? { store: opts.store } : {}), ...(opts.workers !== undefined ? { workers: opts.workers } : {}) });
  const diagnostics: Diagnostic[] = [];
  const built = builtEntries(root, manifest, surface.pkg.entries.map((e) => e.subpath));

  type Cov = RepEntry['coverage'];
  const coverage = new Map<string, Cov>(); // surface → coverage, for what is decided before bundling
  const requests = new Map<string, BundleRequest>(); // declaring identity → what to bundle
  const bundled: { surface: string; key: string }[] = [];
  const uncovered = (reason: DiagnosticCode, detail: string): Cov => ({ covered: false, reason, detail });
  for (const item of surface.items) {
    const d = item.declaring;
    if (!d) {
      const from = item.foreign!.map((p) => `'${p}'`).join(', ');
      // Another package's type (`export type { X } from 'pkg'`): no runtime value anywhere, so not the
      // declaring package's to cover either.
      if (item.foreignTypeOnly) coverage.set(item.surface, uncovered('KILN_REP_UNCOVERED_TYPE_ONLY', `'${item.name}' is a type re-exported from ${from} by ${item.entrySource}: no runtime value`));
      else coverage.set(item.surface, uncovered('KILN_REP_UNCOVERED_FOREIGN_DECLARATION', `'${item.name}' is re-exported from ${from} by ${item.entrySource}`));
      continue;
    }
    if (d.typeOnly) {
      coverage.set(item.surface, uncovered('KILN_REP_UNCOVERED_TYPE_ONLY', `'${item.name}' is ${article(d.kind === 'type' ? 'type alias' : d.kind)} (${d.file}): no runtime value`));
      continue;
    }
    const b = built.get(item.entry);
    if (!b || !b.ok) {
      const paths = b?.paths.length ? b.paths.join(', ') : 'no JavaScript path';
      coverage.set(
        item.surface,
        b && b.why === 'commonjs'
          ? uncovered('KILN_REP_UNCOVERED_COMMONJS_BUILD', `entry '${item.entry}' has only a CommonJS build (${paths}); @rollup/plugin-commonjs is not installed`)
          : uncovered('KILN_REP_UNCOVERED_NO_BUILD_OUTPUT', `entry '${item.entry}' names ${paths}, which does not exist (build the package first)`),
      );
      continue;
    }
    // One virtual entry per declaring identity: the first surface (in order) that reaches it names it.
    // Bundled from that entry's built file, as `import()` of the entry evaluates it: the side effects of
    // the modules the entry imports (a registry filled, a prototype patched) are in the payload too,
    // so the export behaves as it does for an importer. The declaring module's own file is the
    // fallback for a name the entry's file does not export by that spelling.
    if (!requests.has(d.identity)) {
      const own = d.moduleLevel ? builtModuleOf(root, d.file, item.entrySource, b.rel) : undefined;
      requests.set(d.identity, { key: d.identity, candidates: [{ file: b.file, exported: item.name }, ...(own ? [{ file: own, exported: d.path }] : [])] });
    }
    bundled.push({ surface: item.surface, key: d.identity });
  }

  const bundle = await bundleIsolating(root, [...requests.values()]);
  for (const { surface: s, key } of bundled) {
    const p = bundle.covered.get(key);
    if (p !== undefined) coverage.set(s, { covered: true, payload: p.payload, export: p.export });
    else coverage.set(s, uncovered(bundle.uncovered.get(key)!.reason, bundle.uncovered.get(key)!.detail));
  }

  const entries: RepEntry[] = surface.items.map((item) => ({
    surface: item.surface,
    declaring: item.declaring?.identity ?? `ext:${item.foreign![0]}#${item.name}`,
    kind: item.declaring?.kind ?? 'foreign',
    coverage: coverage.get(item.surface)!,
  }));

  // What a reader must act on: uncovered for a reason other than design (types, other packages).
  for (const e of entries) {
    if (e.coverage.covered || e.coverage.reason === 'KILN_REP_UNCOVERED_TYPE_ONLY' || e.coverage.reason === 'KILN_REP_UNCOVERED_FOREIGN_DECLARATION') continue;
    diagnostics.push(diagnostic(e.coverage.reason as DiagnosticCode, `${e.surface}: ${e.coverage.detail}`, { producer: PRODUCER, file: inBase('package.json') }));
  }
  for (const s of surface.starForeign) {
    diagnostics.push(diagnostic('KILN_REP_UNCOVERED_FOREIGN_DECLARATION', `entry '${s.entry}' (${s.entrySource}) re-exports everything of ${s.packages.map((p) => `'${p}'`).join(', ')}: those names are not listed, their declaring packages own them`, { producer: PRODUCER, file: inBase(s.entrySource || 'package.json') }));
  }

  const representation: Representation = {
    header: {
      format: REPRESENTATION_FORMAT,
      producer: `@kiln/core ${await coreVersion()}`,
      package: surface.pkg.name,
      // Unstamped: the build is keyed without the manifest's version (a version bump is a cache hit),
      // so nothing it writes may depend on it; the pack step stamps it (stampRepresentation).
      version: '',
      // What the payloads need, not the package's engines (also not keyed): a constant of this producer.
      requirements: { node: DEFAULT_NODE_REQUIREMENT, features: [...REPRESENTATION_FEATURES] },
    },
    entries,
    payloads: bundle.payloads,
  };
  return { representation, diagnostics };
}

/**
 * Bundle, and when rollup refuses the whole build for a reason the analysis does not know (a syntax it
 * cannot parse, a missing export it cannot shim), find the entries that cause it by bundling each
 * alone, mark those uncovered with rollup's own message, and bundle the rest: one entry that cannot
 * be bundled never makes the others uncovered. The isolation costs one build per entry, only then.
 */
async function bundleIsolating(root: string, requests: BundleRequest[]): Promise<BundleResult> {
  const messageOf = (e: unknown) => String((e as Error)?.message ?? e).split(root + sep).join('').split(root).join('.').split('\n')[0]!;
  try {
    return await bundlePayloads(root, requests);
  } catch (whole) {
    const failed = new Map<string, { reason: 'KILN_REP_UNCOVERED_BUNDLE_FAILED'; detail: string }>();
    for (const r of requests) {
      try {
        await bundlePayloads(root, [r]);
      } catch (e) {
        failed.set(r.key, { reason: 'KILN_REP_UNCOVERED_BUNDLE_FAILED', detail: `rollup: ${messageOf(e)}` });
      }
    }
    // Only together do they fail (rollup's error is about the build, not one entry): all uncovered.
    if (!failed.size) for (const r of requests) failed.set(r.key, { reason: 'KILN_REP_UNCOVERED_BUNDLE_FAILED', detail: `rollup: ${messageOf(whole)}` });
    const rest = requests.filter((r) => !failed.has(r.key));
    const result = rest.length ? await bundleIsolating(root, rest) : { payloads: [], covered: new Map(), uncovered: new Map(), warnings: [] };
    for (const [k, v] of failed) result.uncovered.set(k, v);
    return result;
  }
}

/**
 * The built file of a source module, in the layout the entry's built file is in: the entry's source
 * and built paths share a tail (`src/index.ts` ↔ `dist/index.js`), and the rest is the layout's
 * directory (`src/` ↔ `dist/`) and extension. Undefined when it does not exist.
 */
function builtModuleOf(root: string, declFile: string, entrySource: string, entryBuilt: string): string | undefined {
  const stem = (p: string) => p.replace(/\.(d\.)?[mc]?[jt]sx?$/, '');
  const src = stem(entrySource).split('/');
  const out = stem(entryBuilt).split('/');
  let k = 0;
  while (k < src.length && k < out.length && src[src.length - 1 - k] === out[out.length - 1 - k]) k++;
  if (k === 0) return undefined;
  const srcDir = src.slice(0, src.length - k).join('/');
  const outDir = out.slice(0, out.length - k).join('/');
  const d = stem(declFile);
  if (srcDir && !d.startsWith(`${srcDir}/`)) return undefined;
  const restPath = srcDir ? d.slice(srcDir.length + 1) : d;
  const ext = /\.[mc]?js$/.exec(entryBuilt)?.[0] ?? '.js';
  const file = resolve(root, outDir, `${restPath}${/\.mts$/.test(declFile) ? '.mjs' : ext}`);
  return existsSync(file) ? file : undefined;
}

let versionRead: Promise<string> | undefined;
/** @kiln/core's own version, read on first use (no I/O at import time). */
function coreVersion(): Promise<string> {
  return (versionRead ??= readFile(new URL('../../package.json', import.meta.url), 'utf8')
    .then((t) => String((JSON.parse(t) as { version?: unknown }).version ?? '0.0.0'))
    .catch(() => '0.0.0'));
}

/** "a type alias", "an interface": the kind with its article, for details printed as sentences. */
function article(kind: string): string {
  return `${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind}`;
}
