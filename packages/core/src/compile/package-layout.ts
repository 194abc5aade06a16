/**
 * What a package's manifest asks of its build: every path that `exports` (conditions `import`,
 * `require`, `module`, `types`, `default`, nested conditions, subpaths and subpath patterns), `main`,
 * `module`, `types`/`typings` and `bin` — and the same fields under `publishConfig`, which pnpm and
 * yarn publish in their place — point at inside the build's output directory, grouped into
 * **layouts**: one directory, one extension, one module format, one kind (JavaScript or declarations).
 * `compileProject` then writes every module of the library in every layout, so that a relative
 * import between two files of one layout resolves within it.
 *
 * Rules (Node's and TypeScript's, not kiln's own):
 *
 * - A file's format is fixed by its extension — `.mjs`/`.d.mts` ESM, `.cjs`/`.d.cts` CommonJS — or,
 *   for `.js`/`.d.ts`, by the nearest package.json `type` (`module` → ESM, otherwise CommonJS). A
 *   layout of `.js` files in the other format than the package's gets a package.json `{"type": …}` of
 *   its own in its directory (what tshy and the TypeScript handbook's dual setups do), unless that
 *   directory is the compiler's own output directory (then the condition conflicts).
 * - `import`, `module` and `module-sync` ask for ESM, `require` for CommonJS; the innermost wins. A
 *   path that cannot hold the format its conditions ask for, one path asked for in both formats, and
 *   types for one consumer in another format than the JavaScript the same consumer loads (what
 *   "are the types wrong" calls masquerading) are `KILN_EXPORTS_FORMAT_CONFLICT`.
 * - A path is the build's when it lies inside the output directory (or the declaration directory);
 *   a build path is matched to a source module by its tail (`dist/cjs/sub/a.cjs` is module `sub/a`
 *   in the layout `dist/cjs`, `.cjs`). A build path no module compiles to, and a path elsewhere that
 *   does not exist, is `KILN_EXPORTS_TARGET_MISSING`. Paths with other extensions (`.json`, `.css`,
 *   `.ts` sources) are not build products and are left alone.
 * - A `.js`/`.d.ts` path no condition asks a format of takes whatever the layout at that place
 *   holds: the compiler's own output where it is, else the package's type. So a manifest that names
 *   only what `tsc` writes builds exactly what it built before.
 * - Every JavaScript layout gets declarations beside it in the matching extension (`.d.cts` beside
 *   `.cjs`), because that is where TypeScript looks for a file's types; the compiler's own layout is
 *   written unless the manifest (or the `formats` option) moves its format elsewhere.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

export type ModuleFormat = 'esm' | 'cjs';
export type OutputKind = 'js' | 'dts';
export type JsExtension = '.js' | '.mjs' | '.cjs';
export type DtsExtension = '.d.ts' | '.d.mts' | '.d.cts';

/** One directory of outputs in one format. */
export interface Layout {
  kind: OutputKind;
  format: ModuleFormat;
  /** Absolute directory. */
  dir: string;
  /** Extension of the modules compiled from `.ts`/`.tsx` sources (`.mts`/`.cts` sources keep theirs). */
  ext: JsExtension | DtsExtension;
  /** The compiler's own output (outDir or declarationDir, its own extensions): written as emitted. */
  primary: boolean;
  /** A package.json `{"type": …}` written into `dir` so Node and TypeScript read `.js`/`.d.ts` there in `format`. */
  scopeType?: 'module' | 'commonjs';
}

export interface PlanProblem {
  code: 'KILN_EXPORTS_TARGET_MISSING' | 'KILN_EXPORTS_FORMAT_CONFLICT' | 'KILN_BUILD_FORMAT_UNAVAILABLE';
  message: string;
}

export interface LayoutPlan {
  /** What the build writes: the layouts, in a stable order (JavaScript first, then by directory and extension). */
  layouts: Layout[];
  problems: PlanProblem[];
  /** Manifest entries that are build products (for messages and tests), e.g. `exports["."].require`. */
  entries: { field: string; path: string; layout?: Layout }[];
}

export interface PlanInput {
  /** Absolute package directory (where package.json is). */
  packageDir: string;
  /** The parsed package.json, or undefined (no manifest: only `formats` places anything). */
  manifest: Record<string, unknown> | undefined;
  /** Read the manifest's entry points (the build option `exports`, default true). */
  useManifest: boolean;
  /** Absolute outDir and declarationDir (the same when the tsconfig sets none). */
  outDir: string;
  declarationDir: string;
  /** Modules the compiler emitted JavaScript for: path relative to outDir, POSIX, no extension → its extension. */
  jsModules: Map<string, JsExtension>;
  /** Modules the compiler emitted declarations for: path relative to declarationDir → extension. */
  dtsModules: Map<string, DtsExtension>;
  /** The format of the compiler's `.js` outputs. */
  primaryFormat: ModuleFormat;
  /** Formats the build must write (the build option `formats`); undefined: what the manifest asks. */
  formats?: ModuleFormat[];
}

const JS_EXTS: JsExtension[] = ['.mjs', '.cjs', '.js'];
const DTS_EXTS: DtsExtension[] = ['.d.mts', '.d.cts', '.d.ts'];

export function packageType(manifest: Record<string, unknown> | undefined): 'module' | 'commonjs' {
  return manifest?.type === 'module' ? 'module' : 'commonjs';
}

/** `.d.cts` for `.cjs`, and so on: where TypeScript looks for a JavaScript file's types. */
export function dtsExtFor(ext: JsExtension): DtsExtension {
  return ext === '.mjs' ? '.d.mts' : ext === '.cjs' ? '.d.cts' : '.d.ts';
}
/** The extension a relative specifier names in a declaration file of extension `ext`. */
export function jsExtFor(ext: DtsExtension): JsExtension {
  return ext === '.d.mts' ? '.mjs' : ext === '.d.cts' ? '.cjs' : '.js';
}

/** Kind and extension of a build product path, or undefined for anything else (sources, JSON, CSS). */
export function splitOutputExt(path: string): { kind: OutputKind; ext: JsExtension | DtsExtension; stem: string } | undefined {
  for (const ext of DTS_EXTS) if (path.endsWith(ext)) return { kind: 'dts', ext, stem: path.slice(0, -ext.length) };
  for (const ext of JS_EXTS) if (path.endsWith(ext)) return { kind: 'js', ext, stem: path.slice(0, -ext.length) };
  return undefined;
}

/** The format an extension fixes, or undefined for `.js`/`.d.ts` (the package scope decides). */
export function fixedFormat(ext: string): ModuleFormat | undefined {
  if (ext === '.mjs' || ext === '.d.mts') return 'esm';
  if (ext === '.cjs' || ext === '.d.cts') return 'cjs';
  return undefined;
}

/** The extension for a format in a package scope: ESM in a module scope is `.js`, elsewhere `.mjs`. */
export function extFor(kind: OutputKind, format: ModuleFormat, scope: 'module' | 'commonjs'): JsExtension | DtsExtension {
  const plain = (format === 'esm') === (scope === 'module');
  const js: JsExtension = plain ? '.js' : format === 'esm' ? '.mjs' : '.cjs';
  return kind === 'js' ? js : dtsExtFor(js);
}

interface Leaf {
  field: string;
  /** Package-relative POSIX path, no leading `./`. */
  path: string;
  conditions: string[];
}

const ESM_CONDITIONS = new Set(['import', 'module', 'module-sync']);

/** The format the innermost format condition asks for. */
function demandOf(conditions: string[], field: string): ModuleFormat | undefined {
  for (let i = conditions.length - 1; i >= 0; i--) {
    const c = conditions[i]!;
    if (ESM_CONDITIONS.has(c)) return 'esm';
    if (c === 'require') return 'cjs';
  }
  return /(^|\.)module$/.test(field) ? 'esm' : undefined;
}

/** Every path the manifest names, with the conditions leading to it. */
export function manifestLeaves(manifest: Record<string, unknown>): { leaves: Leaf[]; invalid: { field: string; path: string }[] } {
  const leaves: Leaf[] = [];
  const invalid: { field: string; path: string }[] = [];
  const add = (field: string, value: unknown, conditions: string[]) => {
    if (typeof value !== 'string') return;
    if (!value.startsWith('./') && (isAbsolute(value) || value.startsWith('../'))) invalid.push({ field, path: value });
    else leaves.push({ field, path: value.replace(/^\.\//, ''), conditions });
  };
  const walk = (value: unknown, field: string, conditions: string[]) => {
    if (typeof value === 'string') {
      // exports targets must start with ./ (Node refuses anything else)
      if (!value.startsWith('./')) invalid.push({ field, path: value });
      else leaves.push({ field, path: value.slice(2), conditions });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${field}[${i}]`, conditions));
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, `${field}.${k}`, k === 'default' ? conditions : [...conditions, k]);
    }
  };
  const fromRoot = (m: Record<string, unknown>, prefix: string) => {
    const exp = m.exports;
    if (exp !== undefined && exp !== null) {
      const subpaths = typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
      if (subpaths) for (const [k, v] of Object.entries(exp as object)) walk(v, `${prefix}exports[${JSON.stringify(k)}]`, []);
      else walk(exp, `${prefix}exports`, []);
    }
    for (const f of ['main', 'module', 'types', 'typings']) add(`${prefix}${f}`, m[f], []);
    if (typeof m.bin === 'string') add(`${prefix}bin`, m.bin, []);
    else if (m.bin && typeof m.bin === 'object') for (const [k, v] of Object.entries(m.bin)) add(`${prefix}bin.${k}`, v, []);
  };
  fromRoot(manifest, '');
  if (manifest.publishConfig && typeof manifest.publishConfig === 'object') fromRoot(manifest.publishConfig as Record<string, unknown>, 'publishConfig.');
  return { leaves, invalid };
}

/**
 * What Node (runtime) or TypeScript (types) resolves an exports entry to for a set of conditions:
 * object keys in order, `default` always matching, the first array element that resolves.
 */
export function resolveConditions(value: unknown, conditions: ReadonlySet<string>): string | null | undefined {
  if (typeof value === 'string') return value;
  if (value === null) return null;
  if (Array.isArray(value)) {
    for (const v of value) {
      const r = resolveConditions(v, conditions);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as object)) {
      if (k !== 'default' && !conditions.has(k)) continue;
      const r = resolveConditions(v, conditions);
      if (r !== undefined) return r;
    }
  }
  return undefined;
}

export function planLayouts(input: PlanInput): LayoutPlan {
  const { packageDir, outDir, declarationDir, primaryFormat } = input;
  const scope = packageType(input.manifest);
  const problems: PlanProblem[] = [];
  const entries: LayoutPlan['entries'] = [];
  const rel = (abs: string) => toPosix(relative(packageDir, abs)) || '.';
  const conflict = (message: string) => problems.push({ code: 'KILN_EXPORTS_FORMAT_CONFLICT', message });
  const missing = (message: string) => problems.push({ code: 'KILN_EXPORTS_TARGET_MISSING', message });

  interface Candidate extends Layout {
    demands: Map<ModuleFormat, string>;
    required: boolean;
  }
  const candidates = new Map<string, Candidate>();
  const keyOf = (kind: OutputKind, dir: string, ext: string) => `${kind}\0${dir}\0${ext}`;
  const primaryJs: Candidate = { kind: 'js', format: primaryFormat, dir: outDir, ext: '.js', primary: true, demands: new Map(), required: false };
  // A .d.ts file's format is the package scope's (that is how TypeScript reads it), whatever the compiler's JavaScript is.
  const primaryDts: Candidate = { kind: 'dts', format: scope === 'module' ? 'esm' : 'cjs', dir: declarationDir, ext: '.d.ts', primary: true, demands: new Map(), required: false };
  candidates.set(keyOf('js', outDir, '.js'), primaryJs);
  candidates.set(keyOf('dts', declarationDir, '.d.ts'), primaryDts);
  const candidate = (kind: OutputKind, dir: string, ext: JsExtension | DtsExtension): Candidate => {
    const k = keyOf(kind, dir, ext);
    let c = candidates.get(k);
    if (!c) {
      c = { kind, format: fixedFormat(ext) ?? (scope === 'module' ? 'esm' : 'cjs'), dir, ext, primary: false, demands: new Map(), required: false };
      candidates.set(k, c);
    }
    return c;
  };

  // ---- manifest leaves → candidate layouts
  const leaves: Leaf[] = [];
  if (input.useManifest && input.manifest) {
    const { leaves: found, invalid } = manifestLeaves(input.manifest);
    for (const i of invalid) missing(`${i.field} is "${i.path}", which does not start with "./"; Node refuses it`);
    leaves.push(...found);
  }
  for (const leaf of leaves) {
    const split = splitOutputExt(leaf.path);
    if (!split) continue; // not a build product (a source, JSON, CSS, a directory)
    const abs = resolve(packageDir, leaf.path);
    const territory = split.kind === 'js' ? [outDir] : [...new Set([declarationDir, outDir])];
    const inside = territory.some((d) => isInside(abs, d));
    const pattern = leaf.path.includes('*');
    if (!inside) {
      if (!pattern && !existsSync(abs)) {
        missing(`${leaf.field} points at ${leaf.path}, which does not exist and is outside the build output (${rel(outDir)})`);
      }
      continue; // a file the package ships that this build does not make (or a pattern over such files)
    }
    const demand = demandOf(leaf.conditions, leaf.field);
    const fixed = fixedFormat(split.ext);
    if (demand && fixed && demand !== fixed) {
      conflict(`${leaf.field} asks for ${name(demand)} but points at ${leaf.path}, which is always ${name(fixed)}`);
      continue;
    }
    const modules = split.kind === 'js' ? input.jsModules : input.dtsModules;
    const moduleRoot = split.kind === 'js' ? outDir : declarationDir;
    const placed = pattern
      ? placePattern(abs, split.ext, modules, moduleRoot, territory, [...candidates.values()].filter((c) => c.kind === split.kind).map((c) => c.dir))
      : placeFile(abs, split.ext, modules, moduleRoot, territory, [...candidates.values()].filter((c) => c.kind === split.kind).map((c) => c.dir));
    if (!placed) {
      missing(
        pattern
          ? `${leaf.field} is the pattern ${leaf.path}, which matches no module the build compiles`
          : `${leaf.field} points at ${leaf.path}, but no source of the build compiles to it`,
      );
      continue;
    }
    const c = placed.fixedModule ? candidateForFixed(placed.dir, split.kind, split.ext) : candidate(split.kind, placed.dir, split.ext);
    c.required = true;
    if (demand && !placed.fixedModule && !c.demands.has(demand)) c.demands.set(demand, leaf.field);
    entries.push({ field: leaf.field, path: leaf.path, layout: c });
  }
  function candidateForFixed(dir: string, kind: OutputKind, ext: JsExtension | DtsExtension): Candidate {
    // A module compiled from .mts/.cts keeps its extension in every layout: any layout in `dir` carries it.
    const existing = [...candidates.values()].find((c) => c.kind === kind && c.dir === dir);
    return existing ?? candidate(kind, dir, extFor(kind, fixedFormat(ext)!, scope));
  }

  // ---- formats of the candidates
  for (const c of candidates.values()) {
    const fixed = fixedFormat(c.ext);
    const asked = [...c.demands.keys()];
    if (asked.length > 1) {
      conflict(`${rel(join(c.dir, `*${c.ext}`))} is asked for as ESM (${c.demands.get('esm')}) and as CommonJS (${c.demands.get('cjs')}); one file holds one format`);
      continue;
    }
    if (fixed) {
      c.format = fixed;
      continue;
    }
    const want = asked[0];
    if (c.primary && c.kind === 'js' && want === 'cjs' && c.format === 'esm' && scope === 'commonjs') {
      // The compiler writes ESM where the manifest asks for CommonJS (module ESNext in a package
      // without "type": "module", what tsup-style configs do): CommonJS derived from it replaces it.
      c.primary = false;
      c.format = 'cjs';
      continue;
    }
    if (c.primary) {
      if (want && want !== c.format) {
        conflict(
          `${c.demands.get(want)} asks for ${name(want)} in ${rel(c.dir)}/*${c.ext}, where the compiler writes ${name(c.format)}${
            c.kind === 'js' ? ` (${want === 'cjs' ? `use .cjs` : `use .mjs`}, or another directory)` : ''
          }`,
        );
      }
      continue;
    }
    if (!want) continue; // the package's type; settled below when a format layout claims the place
    c.format = want;
    const scopeOfFormat = want === 'esm' ? 'module' : 'commonjs';
    if (scopeOfFormat !== scope) {
      if (c.dir === outDir || c.dir === declarationDir || c.dir === packageDir) {
        conflict(`${c.demands.get(want)} asks for ${name(want)} at ${rel(c.dir)}/*${c.ext}, which Node reads as ${name(want === 'esm' ? 'cjs' : 'esm')} ("type": "${scope}"); use ${extFor(c.kind, want, scope)}`);
      } else c.scopeType = scopeOfFormat;
    }
  }

  // ---- the formats option: a layout for each format nothing places yet
  const required = () => [...candidates.values()].filter((c) => c.required);
  if (input.formats) {
    for (const f of input.formats) {
      if (required().some((c) => c.kind === 'js' && c.format === f)) continue;
      const ext = extFor('js', f, scope) as JsExtension;
      const k = keyOf('js', outDir, ext);
      const existing = candidates.get(k);
      if (existing?.primary && existing.format !== f) {
        // the compiler writes the other format where this one belongs: this layout replaces it
        candidates.delete(k);
      }
      const c = candidate('js', outDir, ext);
      c.format = f;
      c.required = true;
    }
    for (const c of required()) {
      if (c.kind === 'js' && !input.formats.includes(c.format)) {
        const asked = [...c.demands.values()][0] ?? entries.find((e) => e.layout === c)?.field ?? rel(c.dir);
        missing(`${asked} needs ${name(c.format)} in ${rel(c.dir)}, but the build option formats is [${input.formats.join(', ')}]`);
      }
    }
  }
  // The compiler's own JavaScript is written unless its format is placed elsewhere (or excluded).
  const jsFormatsPlaced = new Set(required().filter((c) => c.kind === 'js' && !c.primary).map((c) => c.format));
  if (candidates.get(keyOf('js', outDir, '.js')) === primaryJs && !primaryJs.required) {
    primaryJs.required = !jsFormatsPlaced.has(primaryFormat) && (!input.formats || input.formats.includes(primaryFormat));
  }
  // Declarations beside every JavaScript layout, in the matching extension.
  for (const c of required()) {
    if (c.kind !== 'js') continue;
    const dir = declarationDir === outDir ? c.dir : join(declarationDir, relative(outDir, c.dir));
    let d = candidate('dts', dir, dtsExtFor(c.ext as JsExtension));
    if (d.primary && d.format !== c.format && !d.required) {
      // the compiler's declarations sit where this format's belong, and nothing asks for them: replaced
      candidates.delete(keyOf('dts', d.dir, d.ext));
      d = candidate('dts', dir, dtsExtFor(c.ext as JsExtension));
      d.format = c.format;
    }
    if (!d.demands.size && !d.primary) d.format = c.format;
    if (d.primary && d.format !== c.format) {
      conflict(`declarations for ${rel(c.dir)}/*${c.ext} (${name(c.format)}) would be ${rel(d.dir)}/*${d.ext}, where the compiler writes ${name(d.format)} declarations`);
    }
    if (!d.scopeType && c.scopeType && d.dir === c.dir) d.scopeType = c.scopeType;
    d.required = true;
  }
  const dtsFormatsPlaced = new Set(required().filter((c) => c.kind === 'dts' && !c.primary).map((c) => c.format));
  if (candidates.get(keyOf('dts', declarationDir, '.d.ts')) === primaryDts && !primaryDts.required) {
    primaryDts.required = !dtsFormatsPlaced.has(primaryDts.format) && (!input.formats || input.formats.includes(primaryDts.format));
  }

  // ---- one package.json type per directory
  const scopes = new Map<string, Candidate>();
  for (const c of required()) {
    if (!c.scopeType) continue;
    const other = scopes.get(c.dir);
    if (other && other.scopeType !== c.scopeType) conflict(`${rel(c.dir)} would need to be both "type": "module" and "type": "commonjs"`);
    scopes.set(c.dir, c);
    for (const o of required()) {
      if (o !== c && o.dir === c.dir && !fixedFormat(o.ext) && o.format !== c.format) {
        conflict(`${rel(c.dir)} holds ${name(c.format)} (${c.ext}) and ${name(o.format)} (${o.ext}) files that both rely on the directory's type`);
      }
    }
  }

  // ---- a format the compiler output cannot be turned into
  for (const c of required()) {
    if (c.kind === 'js' && c.format === 'esm' && primaryFormat === 'cjs' && !c.primary) {
      problems.push({
        code: 'KILN_BUILD_FORMAT_UNAVAILABLE',
        message: `${rel(c.dir)}/*${c.ext} must be ESM, but the build tsconfig makes the compiler emit CommonJS`,
      });
      break;
    }
  }

  // ---- what each consumer gets: types in the format of the JavaScript it loads
  const layouts = required();
  const formatOfPath = (p: string): ModuleFormat | undefined => {
    const split = splitOutputExt(p);
    if (!split) return undefined;
    const fixed = fixedFormat(split.ext);
    if (fixed) return fixed;
    const abs = resolve(packageDir, p);
    let best: Layout | undefined;
    for (const l of layouts) {
      if (l.kind === split.kind && l.ext === split.ext && isInside(abs, l.dir) && (!best || l.dir.length > best.dir.length)) best = l;
    }
    if (best) return best.format;
    let scoped: Layout | undefined;
    for (const l of layouts) if (l.scopeType && isInside(abs, l.dir) && (!scoped || l.dir.length > scoped.dir.length)) scoped = l;
    return scoped ? (scoped.scopeType === 'module' ? 'esm' : 'cjs') : scope === 'module' ? 'esm' : 'cjs';
  };
  if (input.useManifest && input.manifest) {
    for (const [prefix, m] of [['', input.manifest], ['publishConfig.', input.manifest.publishConfig]] as const) {
      if (!m || typeof m !== 'object') continue;
      checkConsumers(m as Record<string, unknown>, prefix, formatOfPath, conflict);
    }
  }

  layouts.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'js' ? -1 : 1) || a.dir.localeCompare(b.dir) || a.ext.localeCompare(b.ext));
  return {
    layouts: layouts.map(({ kind, format, dir, ext, primary, scopeType }) => ({ kind, format, dir, ext, primary, ...(scopeType ? { scopeType } : {}) })),
    problems,
    entries: entries.map((e) => ({ field: e.field, path: e.path })),
  };
}

/** Types and JavaScript of each consumer (import, require) of each subpath agree on the format. */
function checkConsumers(
  manifest: Record<string, unknown>,
  prefix: string,
  formatOfPath: (p: string) => ModuleFormat | undefined,
  conflict: (m: string) => void,
): void {
  const subpaths: [string, unknown][] = [];
  const exp = manifest.exports;
  if (exp !== undefined && exp !== null) {
    const hasSubpaths = typeof exp === 'object' && !Array.isArray(exp) && Object.keys(exp).some((k) => k.startsWith('.'));
    if (hasSubpaths) subpaths.push(...Object.entries(exp as object));
    else subpaths.push(['.', exp]);
  }
  for (const [sub, value] of subpaths) {
    for (const mode of ['import', 'require'] as const) {
      const js = resolveConditions(value, new Set(['node', mode]));
      const types = resolveConditions(value, new Set(['types', 'node', mode]));
      if (typeof js !== 'string' || typeof types !== 'string') continue;
      const dts = typesFile(types);
      if (!dts) continue;
      const jf = formatOfPath(js.replace(/^\.\//, ''));
      const tf = formatOfPath(dts.replace(/^\.\//, ''));
      if (jf && tf && jf !== tf) {
        conflict(
          `${prefix}exports[${JSON.stringify(sub)}]: a TypeScript consumer that ${mode === 'import' ? 'imports' : 'requires'} it gets the types ${dts.replace(/^\.\//, '')} (${name(tf)}) for ${js.replace(/^\.\//, '')} (${name(jf)}); put a "types" condition inside each of "import" and "require"`,
        );
      }
    }
  }
  if (exp === undefined || exp === null) {
    const main = typeof manifest.main === 'string' ? manifest.main : undefined;
    const types = typeof manifest.types === 'string' ? manifest.types : typeof manifest.typings === 'string' ? manifest.typings : undefined;
    if (main && types) {
      const jf = formatOfPath(main.replace(/^\.\//, ''));
      const dts = typesFile(types);
      const tf = dts ? formatOfPath(dts.replace(/^\.\//, '')) : undefined;
      if (jf && tf && jf !== tf) conflict(`${prefix}types is ${types} (${name(tf)}) but ${prefix}main is ${main} (${name(jf)})`);
    }
  }
}

/** The declaration file TypeScript reads for a types target (a JavaScript target's sibling). */
function typesFile(target: string): string | undefined {
  const split = splitOutputExt(target);
  if (!split) return undefined;
  return split.kind === 'dts' ? target : split.stem + dtsExtFor(split.ext as JsExtension);
}

/** The layout directory of a concrete build path: the module it names by its tail. */
function placeFile(
  abs: string,
  ext: JsExtension | DtsExtension,
  modules: Map<string, string>,
  moduleRoot: string,
  territory: string[],
  knownDirs: string[],
): { dir: string; fixedModule: boolean } | undefined {
  const stem = toPosix(abs.slice(0, -ext.length));
  const found: { dir: string; fixedModule: boolean }[] = [];
  for (const [m, mext] of modules) {
    if (stem !== m && !stem.endsWith(`/${m}`)) continue;
    const fixed = fixedFormat(mext) !== undefined;
    if (fixed && mext !== ext) continue; // a .mts module is .mjs everywhere
    const dir = stem.slice(0, stem.length - m.length).replace(/\/$/, '');
    if (!territory.some((t) => isInside(dir, t))) continue;
    found.push({ dir: resolve(dir), fixedModule: fixed });
  }
  if (!found.length) return undefined;
  const known = found.find((f) => f.dir === resolve(moduleRoot)) ?? found.find((f) => knownDirs.includes(f.dir));
  // Otherwise the longest module path: the directory closest to the output root.
  return known ?? found.sort((a, b) => a.dir.length - b.dir.length)[0];
}

/** The layout directory of a subpath pattern (`dist/cjs/*.cjs`): one that makes it match a module. */
function placePattern(
  abs: string,
  ext: JsExtension | DtsExtension,
  modules: Map<string, string>,
  moduleRoot: string,
  territory: string[],
  knownDirs: string[],
): { dir: string; fixedModule: boolean } | undefined {
  const p = toPosix(abs);
  const star = p.indexOf('*');
  const before = p.slice(0, star);
  const after = p.slice(star + 1);
  const dirs = [...new Set([resolve(moduleRoot), ...knownDirs, resolve(before.slice(0, before.lastIndexOf('/') + 1) || '.')])];
  for (const dir of dirs) {
    if (!territory.some((t) => isInside(dir, t))) continue;
    const d = toPosix(dir);
    for (const [m, mext] of modules) {
      const path = `${d}/${m}${fixedFormat(mext) ? mext : ext}`;
      if (path.length >= before.length + after.length && path.startsWith(before) && path.endsWith(after)) return { dir, fixedModule: false };
    }
  }
  return undefined;
}

function name(f: ModuleFormat): string {
  return f === 'esm' ? 'ESM' : 'CommonJS';
}

export function isInside(path: string, dir: string): boolean {
  const r = relative(resolve(dir), resolve(path));
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

function toPosix(p: string): string {
  return p.split(sep).join('/');
}

