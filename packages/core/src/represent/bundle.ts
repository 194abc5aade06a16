/**
 * Payloads from a package's built ESM with rollup (a maintained tree-shaker): one virtual entry per
 * declaring identity (`export { <name> as value } from '<built file>'`), code splitting on, CommonJS
 * output, so a payload carries the private helpers and defaults its export needs, and module-level
 * state two exports share lives in one shared chunk both `require('./<chunk>')`.
 *
 * Two rollup builds:
 * 1. analysis (ESM output, which accepts everything the built JS may hold): which entries reach code
 *    a CommonJS payload in node:vm cannot run — `import.meta` and `import()` as rollup renders them
 *    (so tree-shaken code does not count), top-level await, `.node` addons and computed `require()`
 *    in the modules kept in a chunk — and which names the built module does not export at all
 *    (`declare`d values); those entries are left out, each with its reason;
 * 2. the payloads: CommonJS, only the remaining entries. One entry that cannot be bundled never makes
 *    another uncovered: a module only it reaches is only in its chunks (chunks group modules by the
 *    set of entries reaching them).
 *
 * Dependencies' side effects: a bare import of a dependency whose own manifest says
 * `"sideEffects": false` (as webpack, esbuild and rollup's node-resolve read it) is kept only in a
 * chunk that uses something it exports. Without this rollup assumes every external has effects, so
 * every entry of a package with one facade index `require()`d every such dependency any module of the
 * package imports (calling a path helper of @tanstack/form-core loaded @tanstack/store), and no entry
 * chunk was a plain facade (every one a stored payload). The package's OWN `sideEffects` is not
 * applied: it would drop modules `import()` of the entry evaluates (webpack's `import './register'`
 * pitfall), and the payloads answer as `import()` does; rollup's analysis decides for them.
 *
 * Invariants: entry chunks are named from a hash of the declaring identity, shared chunks from a hash
 * of their content (`s-<hash>.js`), so the output does not depend on where the package
 * is; no sourcemap; bare specifiers and `node:` builtins stay `require('<spec>')` for the consumer to
 * resolve.
 *
 * Canonical input (`canonicalModule`): every built module is reprinted from its syntax tree (esbuild
 * with whitespace minified — without it esbuild keeps an object literal's line breaks —, names kept,
 * comments other than legal ones and bundler annotations dropped — so the build's
 * `//# sourceMappingURL=` and `//# debugId=` trailers too) and its top-level function declarations,
 * which are hoisted, are moved to the end in name order. Why: after a semantic cache hit the restored
 * kiln.rep was produced from the previous JS text, which kiln judges equivalent to the fresh one when
 * they differ only by formatting, comments or the order of hoisted declarations; the representation
 * must then be the same bytes, or a restored artifact would differ from a fresh build (SPEC §4).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { OutputChunk, Plugin, RollupLog } from 'rollup';
import { findPackageDir, packageNameOf, type RepPayload } from '@kiln/runtime';

/**
 * rollup and esbuild, loaded on the first representation produced: @kiln/core is imported by the Nx
 * plugin on every graph computation, which must not pay for parsing a bundler it does not use.
 */
type Tools = { rollup: typeof import('rollup').rollup; parseAst: typeof import('rollup/parseAst').parseAst; transform: typeof import('esbuild').transform };
let loading: Promise<Tools> | undefined;
let loaded: Tools | undefined;
async function tools(): Promise<Tools> {
  loading ??= Promise.all([import('rollup'), import('rollup/parseAst'), import('esbuild')]).then(([r, p, e]) => (loaded = { rollup: r.rollup, parseAst: p.parseAst, transform: e.transform }));
  return loading;
}
/**
 * rollup's parser: the one `tools()` loaded, or, when an exported helper (restoreBindingNames,
 * facadeTarget, …) is called before any bundle was made, rollup's CommonJS build of it, loaded then.
 * (Those helpers treat a parse failure as "leave the code as it is": a parser that is not there must
 * not pass for one.)
 */
function parseAst(code: string): ReturnType<Tools['parseAst']> {
  const parse = loaded?.parseAst ?? (createRequire(import.meta.url)('rollup/parseAst') as typeof import('rollup/parseAst')).parseAst;
  return parse(code);
}

/** The reasons this stage finds (the rest of KILN_REP_UNCOVERED_* is decided from the surface). */
export type BundleReason = 'KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT' | 'KILN_REP_UNCOVERED_NATIVE_ADDON' | 'KILN_REP_UNCOVERED_DYNAMIC_IMPORT' | 'KILN_REP_UNCOVERED_IMPORT_META' | 'KILN_REP_UNCOVERED_TYPE_ONLY' | 'KILN_REP_UNCOVERED_BUNDLE_FAILED';

/** Most specific first: the reason an entry reaching several gets. */
const REASON_ORDER: BundleReason[] = ['KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT', 'KILN_REP_UNCOVERED_NATIVE_ADDON', 'KILN_REP_UNCOVERED_DYNAMIC_IMPORT', 'KILN_REP_UNCOVERED_IMPORT_META'];

export interface BundleRequest {
  /** The declaring identity (one virtual entry each). */
  key: string;
  /**
   * Where the value is exported, best first: the entry's built file with the surface's name (so the
   * payload evaluates what `import()` of the entry evaluates: the side effects of every module the
   * entry imports, tree-shaken only where rollup proves them free of effects), then the declaring
   * module's own built file. The first that exports the name is bundled.
   */
  candidates: { file: string; exported: string }[];
}

export interface BundleResult {
  payloads: RepPayload[];
  /** Declaring identity → the payload whose `module.exports[export]` is its value. */
  covered: Map<string, { payload: number; export: string }>;
  uncovered: Map<string, { reason: BundleReason | 'KILN_REP_UNCOVERED_BUNDLE_FAILED'; detail: string }>;
  /** Rollup's warnings, package-relative (for diagnostics). */
  warnings: string[];
}

const VIRTUAL = '\0kiln-rep:';
const IDENT = /^[A-Za-z_$][\w$]*$/;

/** The payload name of a declaring identity's entry chunk (without `.js`). */
export function entryName(key: string): string {
  return `e-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
}

export async function bundlePayloads(packageRoot: string, requests: BundleRequest[]): Promise<BundleResult> {
  const rel = (id: string) => relative(packageRoot, id).split(sep).join('/');
  const result: BundleResult = { payloads: [], covered: new Map(), uncovered: new Map(), warnings: [] };
  if (!requests.length) return result;
  const byName = new Map(requests.map((r) => [entryName(r.key), r]));

  // --- 1. analysis
  const flags = new Map<string, Map<BundleReason, string>>(); // module id → reason → what was found
  const flag = (id: string, reason: BundleReason, what: string) => {
    const m = flags.get(id) ?? flags.set(id, new Map()).get(id)!;
    if (!m.has(reason)) m.set(reason, what);
  };
  const missing = new Map<string, string>(); // entry name → detail
  const chosen = new Map<string, { file: string; exported: string }>(); // entry name → the candidate bundled
  const analysis: Plugin = {
    name: 'kiln-rep-analysis',
    moduleParsed(info) {
      if (info.id.startsWith(VIRTUAL) || !info.ast) return;
      scanModule(info.ast as unknown as Node, (reason, what) => flag(info.id, reason, what));
    },
    resolveImportMeta(property, { moduleId }) {
      flag(moduleId, 'KILN_REP_UNCOVERED_IMPORT_META', `import.meta${property ? `.${property}` : ''}`);
      return null;
    },
    renderDynamicImport({ moduleId }) {
      flag(moduleId, 'KILN_REP_UNCOVERED_DYNAMIC_IMPORT', 'import()');
      return null;
    },
  };
  const packageFiles = fileResolver();
  const virtual = (analysing: boolean): Plugin => ({
    name: 'kiln-rep-entries',
    resolveId(source, importer) {
      if (source.startsWith(VIRTUAL)) return source;
      if (source.endsWith('.node') && importer) {
        flag(importer, 'KILN_REP_UNCOVERED_NATIVE_ADDON', `import of ${source}`);
        return { id: source, external: true };
      }
      // A file of the package: resolved as rollup's own resolver does, from cached listings.
      if (isAbsolute(source)) return packageFiles.resolve(source);
      if ((source.startsWith('./') || source.startsWith('../')) && importer && !importer.startsWith(VIRTUAL)) return packageFiles.resolve(resolve(dirname(importer), source));
      return null;
    },
    async load(id) {
      if (!id.startsWith(VIRTUAL)) return null;
      const n = id.slice(VIRTUAL.length);
      const r = byName.get(n)!;
      if (analysing) {
        let pick: { file: string; exported: string } | undefined;
        for (const c of r.candidates) if (!pick && (await exportsName(this, c.file, c.exported, new Set()))) pick = c;
        if (!pick) {
          // A value declaration the built JS does not export: `declare`d, or erased (const enum).
          const last = r.candidates[r.candidates.length - 1]!;
          missing.set(n, `'${last.exported}' is not exported by ${rel(last.file)} (declare, or erased by the compiler)`);
          return 'export const value = undefined;';
        }
        chosen.set(n, pick);
      }
      const c = chosen.get(n)!;
      const spec = IDENT.test(c.exported) ? c.exported : JSON.stringify(c.exported);
      return `export { ${spec} as value } from ${JSON.stringify(c.file)};`;
    },
    async transform(code, id) {
      if (id.startsWith(VIRTUAL)) return null;
      return { code: await canonicalModule(code), map: null };
    },
  });
  const moduleSideEffects = sideEffectsOf(packageRoot);
  const treeshake = { moduleSideEffects };
  const external = (source: string) => !source.startsWith(VIRTUAL) && !source.startsWith('.') && !source.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(source) && !source.endsWith('.node');
  const onLog = (_level: string, log: RollupLog) => {
    if (log.code === 'CIRCULAR_DEPENDENCY' || log.code === 'EMPTY_BUNDLE') return;
    result.warnings.push(`${log.code ?? 'ROLLUP'}: ${log.message.split(packageRoot + sep).join('').split(packageRoot).join('.')}`);
  };

  const names = [...byName.keys()].sort();
  const { rollup } = await tools();
  const a = await rollup({ input: Object.fromEntries(names.map((n) => [n, VIRTUAL + n])), plugins: [virtual(true), analysis, keepNames], external, treeshake, preserveEntrySignatures: 'strict', onLog });
  let aOut: Awaited<ReturnType<typeof a.generate>>['output'];
  try {
    ({ output: aOut } = await a.generate({ format: 'es', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' }));
  } catch (e) {
    await a.close();
    throw e;
  }
  const chunks = new Map(aOut.filter((o): o is OutputChunk => o.type === 'chunk').map((c) => [c.fileName, c]));
  const chunkFlags = new Map<string, Map<BundleReason, string>>();
  for (const c of chunks.values()) {
    const m = new Map<BundleReason, string>();
    for (const [id, info] of Object.entries(c.modules).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
      const f = flags.get(id);
      if (!f || info.renderedLength === 0) continue;
      for (const [reason, what] of f) if (!m.has(reason)) m.set(reason, `${what} in ${rel(id)}`);
    }
    if (m.size) chunkFlags.set(c.fileName, m);
  }
  const keep: string[] = [];
  for (const n of names) {
    const r = byName.get(n)!;
    const gone = missing.get(n);
    if (gone) {
      result.uncovered.set(r.key, { reason: 'KILN_REP_UNCOVERED_TYPE_ONLY', detail: gone });
      continue;
    }
    const found = new Map<BundleReason, string>();
    const seen = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [reason, what] of chunkFlags.get(file) ?? []) if (!found.has(reason)) found.set(reason, what);
      const c = chunks.get(file);
      for (const d of [...(c?.imports ?? []), ...(c?.dynamicImports ?? [])]) walk(d);
    };
    walk(`${n}.js`);
    const reason = REASON_ORDER.find((x) => found.has(x));
    const c = chosen.get(n)!;
    if (reason) result.uncovered.set(r.key, { reason, detail: `'${c.exported}' of ${rel(c.file)} reaches ${found.get(reason)!}` });
    else keep.push(n);
  }
  if (!keep.length) {
    await a.close();
    return result;
  }

  // --- 2. payloads
  // Every entry kept (the common case): the analysis build is the payload build's graph, so it renders
  // the CommonJS output itself (rollup generates a bundle in several formats); else the kept entries are
  // bundled again, without the others' modules.
  let b = a;
  if (keep.length !== names.length) {
    await a.close();
    b = await rollup({ input: Object.fromEntries(keep.map((n) => [n, VIRTUAL + n])), plugins: [virtual(false), keepNames], external, treeshake, preserveEntrySignatures: 'strict', onLog });
  }
  let output: Awaited<ReturnType<typeof b.generate>>['output'];
  try {
    ({ output } = await b.generate({
      format: 'cjs',
      exports: 'named',
      sourcemap: false,
      entryFileNames: '[name].js',
      chunkFileNames: 's-[hash:12].js', // by content only: a module or virtual entry's name would only lengthen every require
      hoistTransitiveImports: false,
      // es2015 syntax, without the `Symbol.toStringTag` line in every chunk (a chunk's exports object is
      // never handed out: the index names one export of it).
      generatedCode: { preset: 'es2015', symbols: false },
    }));
  } finally {
    await b.close();
  }
  const all = output.filter((o): o is OutputChunk => o.type === 'chunk');
  // An entry whose code lives in another chunk (another entry needs it too) is a facade: one require and
  // `exports.value = chunk.name`. The index points at that chunk and name instead, and the facade is
  // not stored: fewer payloads, less to read (more than half of the chunks of a wide package).
  const files = new Set(all.map((c) => c.fileName));
  const target = new Map<string, { file: string; exported: string }>(); // entry chunk → where its value is
  for (const n of keep) {
    const t = facadeTarget(all.find((c) => c.fileName === `${n}.js`)!.code);
    const held = t ? all.find((c) => c.fileName === t.file) : undefined;
    // Its side-effect requires must be the target's own (rollup hoists a chunk's requires to its top), so
    // loading the target alone evaluates them first, as the facade did.
    if (t && held && t.sideEffects.every((f) => held.code.includes(`require('./${f}')`))) target.set(`${n}.js`, { file: t.file, exported: t.exported });
  }
  const required = new Set<string>();
  for (const c of all) if (!target.has(c.fileName)) for (const m of c.code.matchAll(/\brequire\('\.\/([^']+)'\)/g)) required.add(m[1]!);
  const out = all.filter((c) => !target.has(c.fileName) || required.has(c.fileName)).sort((x, y) => (x.fileName < y.fileName ? -1 : x.fileName > y.fileName ? 1 : 0));
  result.payloads = out.map((c) => ({ name: c.fileName, code: c.code }));
  const index = new Map(out.map((c, i) => [c.fileName, i]));
  for (const n of keep) {
    let at = { file: `${n}.js`, exported: 'value' };
    for (let hops = 0; hops < 4 && !index.has(at.file); hops++) at = target.get(at.file) ?? at;
    result.covered.set(byName.get(n)!.key, { payload: index.get(at.file)!, export: at.exported });
  }
  return result;
}

/**
 * Names rollup's deconflicting changed, given back (CommonJS payloads only): two modules of one chunk
 * that each declare a top-level `isFormData` (@trpc/client's httpLink and loggerLink chunks) get
 * `function isFormData$1`, so the export's `name` was 'isFormData$1' through the representation and
 * 'isFormData' through import(). A top-level function or class declaration, or a variable whose
 * initializer takes its name from it (an anonymous function, arrow or class), named `<name>$<n>` where
 * `<name>` is a top-level name of one of the chunk's modules and `<name>$<n>` is not, gets
 * `Object.defineProperty(<binding>, 'name', { value: '<name>' })` — the one attribute the language sets
 * differently; writable, enumerable and configurable stay as they were. A function's right after the
 * directive prologue (it is hoisted: defined before any other code runs), the others right after their
 * statement. A class with a static `name` member of its own is left alone (that member is its name).
 */
const keepNames: Plugin = {
  name: 'kiln-rep-names',
  renderChunk(code, chunk, options) {
    if (options.format !== 'cjs') return null;
    const declared = new Set<string>();
    for (const id of chunk.moduleIds) {
      const ast = this.getModuleInfo(id)?.ast as unknown as Node | null | undefined;
      if (ast) for (const n of topLevelNames(ast)) declared.add(n);
    }
    const fixed = restoreRenamedNames(code, declared);
    return fixed === code ? null : { code: fixed, map: null };
  },
};

/** The names a module's top-level statements declare (functions, classes, variables; exported or not). */
function topLevelNames(program: Node): string[] {
  const out: string[] = [];
  for (let st of program.body as Node[]) {
    if ((st.type === 'ExportNamedDeclaration' || st.type === 'ExportDefaultDeclaration') && st.declaration) st = st.declaration as Node;
    if ((st.type === 'FunctionDeclaration' || st.type === 'ClassDeclaration') && st.id) out.push((st.id as Node).name as string);
    if (st.type === 'VariableDeclaration') for (const d of st.declarations as Node[]) if ((d.id as Node).type === 'Identifier') out.push((d.id as Node).name as string);
  }
  return out;
}

/** `code` (a rendered CommonJS chunk) with the `name` of what rollup renamed set back (see keepNames). */
export function restoreRenamedNames(code: string, declared: ReadonlySet<string>): string {
  if (!code.includes('$')) return code;
  let body: Node[];
  try {
    body = parseAst(code).body as unknown as Node[];
  } catch {
    return code;
  }
  const original = (n: string): string | undefined => {
    const m = /^(.+)\$\d+$/.exec(n);
    return m && declared.has(m[1]!) && !declared.has(n) ? m[1] : undefined;
  };
  const fix = (binding: string, name: string) => `Object.defineProperty(${binding}, 'name', { value: ${JSON.stringify(name)} });`;
  const ownStaticName = (cls: Node) => ((cls.body as Node).body as Node[]).some((m) => m.static && !m.computed && (((m.key as Node)?.name ?? (m.key as Node)?.value) === 'name'));
  const hoisted: string[] = [];
  const after: { at: number; text: string }[] = [];
  let prologueEnd = 0;
  for (const st of body) {
    if (st.type === 'ExpressionStatement' && typeof st.directive === 'string') {
      prologueEnd = st.end as number;
      continue;
    }
    if (st.type === 'FunctionDeclaration' && st.id) {
      const n = (st.id as Node).name as string;
      const was = original(n);
      if (was) hoisted.push(fix(n, was));
    } else if (st.type === 'ClassDeclaration' && st.id) {
      const n = (st.id as Node).name as string;
      const was = original(n);
      if (was && !ownStaticName(st)) after.push({ at: st.end as number, text: fix(n, was) });
    } else if (st.type === 'VariableDeclaration') {
      for (const d of st.declarations as Node[]) {
        const id = d.id as Node;
        const init = d.init as Node | null;
        if (id.type !== 'Identifier' || !init) continue;
        const anonymous = (init.type === 'ArrowFunctionExpression' || init.type === 'FunctionExpression' || init.type === 'ClassExpression') && !init.id;
        const was = original(id.name as string);
        if (was && anonymous && !(init.type === 'ClassExpression' && ownStaticName(init))) after.push({ at: st.end as number, text: fix(id.name as string, was) });
      }
    }
  }
  if (!hoisted.length && !after.length) return code;
  let text = code;
  for (const e of after.sort((a, b) => b.at - a.at)) text = `${text.slice(0, e.at)}\n${e.text}${text.slice(e.at)}`;
  if (hoisted.length) text = `${text.slice(0, prologueEnd)}\n${hoisted.join('\n')}${text.slice(prologueEnd)}`;
  return text;
}

/**
 * rollup's default resolution of a file path (`addJsExtensionIfNecessary`: the path, then `.mjs`, then
 * `.js`; a symbolic link followed to its real path; a name that must appear, in its case, in its
 * folder's listing), with every lstat, realpath and listing cached for one bundling. rollup asks for
 * the same few files thousands of times (each of 400 entries' re-export chains), and its own resolver
 * stats the file and lists its folder every time: 0.8 s of 1.4 s producing a 400-export package.
 * A miss returns null, so rollup's resolver answers (and reports) it as before.
 */
function fileResolver(): { resolve(file: string): Promise<string | null> } {
  const stats = new Map<string, Promise<import('node:fs').Stats | null>>();
  const listings = new Map<string, Promise<Set<string> | null>>();
  const reals = new Map<string, Promise<string | null>>();
  const statOf = (f: string) => stats.get(f) ?? stats.set(f, lstat(f).catch(() => null)).get(f)!;
  const listing = (d: string) => listings.get(d) ?? listings.set(d, readdir(d).then((xs) => new Set(xs), () => null)).get(d)!;
  const realOf = (f: string) => reals.get(f) ?? reals.set(f, realpath(f).catch(() => null)).get(f)!;
  const find = async (file: string, depth = 0): Promise<string | null> => {
    const st = await statOf(file);
    if (!st) return null;
    if (st.isSymbolicLink()) {
      const real = depth < 32 ? await realOf(file) : null;
      return real ? find(real, depth + 1) : null;
    }
    if (!st.isFile()) return null;
    return (await listing(dirname(file)))?.has(basename(file)) ? file : null;
  };
  return {
    async resolve(file) {
      return (await find(file)) ?? (await find(`${file}.mjs`)) ?? (await find(`${file}.js`));
    },
  };
}

/** Whether a dependency's manifest declares `"sideEffects": false` (an unreadable one does not). */
function declaresNoSideEffects(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { sideEffects?: unknown }).sideEffects === false;
  } catch {
    return false;
  }
}

/**
 * rollup's `treeshake.moduleSideEffects`: `false` for a bare import of a dependency whose manifest says
 * `"sideEffects": false` (resolved from the package as Node finds it), so an import nothing uses is
 * dropped; `true` (rollup's own analysis) for everything else — the package's own modules included.
 */
export function sideEffectsOf(packageRoot: string): (id: string, external: boolean) => boolean {
  const deps = new Map<string, boolean>();
  return (id, external) => {
    if (!external || id.startsWith('node:') || id.endsWith('.node')) return true;
    const name = packageNameOf(id);
    let has = deps.get(name);
    if (has === undefined) {
      const dir = findPackageDir(name, packageRoot);
      has = dir === undefined || !declaresNoSideEffects(dir);
      deps.set(name, has);
    }
    return has;
  };
}

/**
 * The chunk and name a facade entry chunk re-exports as `value`: its only statements (besides the
 * `'use strict'` directive) are side-effect-only `require('./s.js')` calls,
 * `const x = require('./chunk.js')` and `exports.value = x.name` — or the getter rollup writes for a live
 * binding. Anything else: undefined (the chunk is kept as it is).
 */
export function facadeTarget(code: string): { file: string; exported: string; sideEffects: string[] } | undefined {
  type N = { type: string; [k: string]: unknown };
  let body: N[];
  try {
    body = (parseAst(code).body as unknown as N[]).filter((n) => !(n.type === 'ExpressionStatement' && typeof n.directive === 'string'));
  } catch {
    return undefined;
  }
  // Side-effect-only requires (`require('./effects.js');`): what importing the entry evaluates too. The
  // caller drops the facade only when the target chunk requires each of them itself (so loading the
  // target alone evaluates them, before its own body, as Node would).
  const sideEffects: string[] = [];
  const rest: N[] = [];
  for (const n of body) {
    const e = n.type === 'ExpressionStatement' ? (n.expression as N) : undefined;
    const a = e?.type === 'CallExpression' && (e.callee as N).type === 'Identifier' && (e.callee as N).name === 'require' ? (e.arguments as N[])[0] : undefined;
    if (a?.type === 'Literal' && typeof a.value === 'string' && a.value.startsWith('./')) sideEffects.push(a.value.slice(2));
    else rest.push(n);
  }
  body = rest;
  if (body.length !== 2) return undefined;
  const [decl, assign] = body as [N, N];
  const d = decl.type === 'VariableDeclaration' && (decl.declarations as N[]).length === 1 ? (decl.declarations as N[])[0]! : undefined;
  const init = d?.init as N | undefined;
  const arg = init?.type === 'CallExpression' && (init.callee as N).type === 'Identifier' && (init.callee as N).name === 'require' ? (init.arguments as N[])[0] : undefined;
  if (!d || (d.id as N).type !== 'Identifier' || arg?.type !== 'Literal' || typeof arg.value !== 'string' || !arg.value.startsWith('./')) return undefined;
  const local = (d.id as N).name as string;
  const member = (e: N | undefined): string | undefined =>
    e?.type === 'MemberExpression' && (e.object as N).type === 'Identifier' && (e.object as N).name === local && !e.computed && (e.property as N).type === 'Identifier' ? ((e.property as N).name as string) : undefined;
  let exported: string | undefined;
  const expr = assign.type === 'ExpressionStatement' ? (assign.expression as N) : undefined;
  if (expr?.type === 'AssignmentExpression' && expr.operator === '=') {
    const left = expr.left as N;
    if (left.type === 'MemberExpression' && (left.object as N).type === 'Identifier' && (left.object as N).name === 'exports' && !left.computed && (left.property as N).name === 'value') exported = member(expr.right as N);
  } else if (expr?.type === 'CallExpression') {
    // Object.defineProperty(exports, 'value', { enumerable: true, get: function () { return x.name; } })
    const [o, key, desc] = expr.arguments as N[];
    const get = desc?.type === 'ObjectExpression' ? (desc.properties as N[]).find((p) => ((p.key as N)?.name ?? (p.key as N)?.value) === 'get') : undefined;
    const fn = get?.value as N | undefined;
    const ret = fn && (fn.body as N)?.type === 'BlockStatement' ? ((fn.body as N).body as N[]) : undefined;
    if ((o as N | undefined)?.name === 'exports' && (key as N | undefined)?.value === 'value' && ret?.length === 1 && ret[0]!.type === 'ReturnStatement') exported = member(ret[0]!.argument as N);
  }
  return exported ? { file: arg.value.slice(2), exported, sideEffects } : undefined;
}

type LoadContext = { load: (o: { id: string }) => Promise<{ exportedBindings: Record<string, string[]> | null }>; resolve: (source: string, importer: string, options?: { skipSelf?: boolean }) => Promise<{ id: string; external: boolean | string } | null> };

/** Whether the module `id` exports `name`, following its re-exports (`export *` never re-exports `default`). */
async function exportsName(ctx: LoadContext, id: string, name: string, seen: Set<string>): Promise<boolean> {
  if (seen.has(id)) return false;
  seen.add(id);
  const info = await ctx.load({ id });
  const bindings = info.exportedBindings ?? {};
  if (bindings['.']?.includes(name)) return true;
  for (const [source, names] of Object.entries(bindings)) {
    if (source === '.') continue;
    if (names.includes(name)) return true;
    if (name !== 'default' && names.includes('*')) {
      // Through kiln's resolver too (rollup's default for a hook's own context skips it: skipSelf).
      const target = await ctx.resolve(source, id, { skipSelf: false });
      if (!target) continue;
      if (target.external) return true; // another package's names are not enumerable here; rollup decides
      if (await exportsName(ctx, target.id, name, seen)) return true;
    }
  }
  return false;
}

interface Node {
  type: string;
  [key: string]: unknown;
}

/** The child nodes of an ESTree node (every property holding a node or an array of nodes), in order. */
function childNodes(node: Node): Node[] {
  const out: Node[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (k === 'type' || k === 'start' || k === 'end') continue;
    if (Array.isArray(v)) {
      for (const c of v) if (c && typeof c === 'object' && typeof (c as Node).type === 'string') out.push(c as Node);
    } else if (v && typeof v === 'object' && typeof (v as Node).type === 'string') out.push(v as Node);
  }
  return out;
}

/** The program `code` parses to, or undefined where rollup's parser refuses it. */
function parsedOrUndefined(code: string): Node | undefined {
  try {
    return parseAst(code) as unknown as Node;
  } catch {
    return undefined;
  }
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/**
 * What in one module's syntax a CommonJS payload cannot carry: `await` outside any function (top-level
 * await), `require()` of a `.node` addon or of a computed specifier.
 */
function scanModule(program: Node, report: (reason: BundleReason, what: string) => void): void {
  const visit = (node: Node, inFunction: boolean) => {
    if (!inFunction && (node.type === 'AwaitExpression' || (node.type === 'ForOfStatement' && node.await === true))) {
      report('KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT', node.type === 'AwaitExpression' ? 'top-level await' : 'top-level for await');
    }
    if (node.type === 'CallExpression') {
      const callee = node.callee as Node;
      const arg = (node.arguments as Node[])[0];
      if (callee.type === 'Identifier' && callee.name === 'require' && arg) {
        if (arg.type === 'Literal' && typeof arg.value === 'string') {
          if (arg.value.endsWith('.node')) report('KILN_REP_UNCOVERED_NATIVE_ADDON', `require('${arg.value}')`);
        } else if (!(arg.type === 'TemplateLiteral' && (arg.expressions as Node[]).length === 0)) {
          report('KILN_REP_UNCOVERED_DYNAMIC_IMPORT', 'a computed require()');
        }
      }
    }
    const inner = inFunction || FUNCTIONS.has(node.type);
    for (const c of childNodes(node)) visit(c, inner);
  };
  visit(program, false);
}

/**
 * One built module in canonical form: reprinted by esbuild with whitespace minified (formatting,
 * quotes, numeric spelling, parentheses and comments normalised; identifiers kept; `export function f` becomes `function f` plus an export
 * clause) and its top-level function declarations moved after every other statement, sorted by name
 * (stable: same-named declarations keep their order, the last still wins). Function declarations are
 * hoisted, so where they stand is not observable. Input esbuild cannot parse is returned as it is
 * (rollup then reports it). Every binding keeps its own name (restoreBindingNames): esbuild renames a
 * nested binding that shadows a top-level one, which a function's or class's `name` shows.
 */
export async function canonicalModule(code: string): Promise<string> {
  let printed: string;
  try {
    printed = (await (await tools()).transform(code, { format: 'esm', target: 'esnext', legalComments: 'inline', loader: 'js', minifyWhitespace: true })).code;
  } catch {
    return code;
  }
  printed = restoreBindingNames(code, printed);
  let body: { type: string; start: number; end: number; id?: { name?: string } | null }[];
  try {
    body = parseAst(printed).body as unknown as typeof body;
  } catch {
    return printed;
  }
  const fns = body.filter((n) => n.type === 'FunctionDeclaration' && n.id?.name);
  if (fns.length < 2) return printed;
  const rest = body.filter((n) => !fns.includes(n));
  const text = (n: { start: number; end: number }) => printed.slice(n.start, n.end);
  const sorted = [...fns].sort((a, b) => (a.id!.name! < b.id!.name! ? -1 : a.id!.name! > b.id!.name! ? 1 : 0));
  // Statements only (esbuild keeps legal comments inline with the code they precede; dropped between).
  return `${[...rest.map(text), ...sorted.map(text)].join('\n')}\n`;
}

/** A binding identifier's name and range, in source order. */
type Binding = { name: string; start: number; end: number };

/** The binding identifiers of a program (declarations, parameters, catch parameters, imports), in source order. */
function bindingIdentifiers(program: Node): Binding[] {
  const out: Binding[] = [];
  const pattern = (p: Node | null | undefined): void => {
    if (!p) return;
    if (p.type === 'Identifier') out.push({ name: p.name as string, start: p.start as number, end: p.end as number });
    else if (p.type === 'ObjectPattern') for (const q of p.properties as Node[]) pattern(q.type === 'RestElement' ? (q.argument as Node) : (q.value as Node));
    else if (p.type === 'ArrayPattern') for (const q of p.elements as (Node | null)[]) pattern(q);
    else if (p.type === 'AssignmentPattern') pattern(p.left as Node);
    else if (p.type === 'RestElement') pattern(p.argument as Node);
  };
  const visit = (node: Node): void => {
    switch (node.type) {
      case 'VariableDeclarator':
        pattern(node.id as Node);
        break;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        pattern(node.id as Node | null);
        for (const q of node.params as Node[]) pattern(q);
        break;
      case 'ClassDeclaration':
      case 'ClassExpression':
        pattern(node.id as Node | null);
        break;
      case 'CatchClause':
        pattern(node.param as Node | null);
        break;
      case 'ImportSpecifier':
      case 'ImportDefaultSpecifier':
      case 'ImportNamespaceSpecifier':
        pattern(node.local as Node);
        break;
    }
    for (const c of childNodes(node)) visit(c);
  };
  visit(program);
  return out.sort((a, b) => a.start - b.start);
}

/**
 * `printed` (esbuild's reprint of `original`) with every binding named as in `original`. esbuild's
 * renamer gives a nested binding that shadows a top-level name a numbered name
 * (`var B = class B { … }` → `var B = class B2 { … }`; a nested `function helper` → `helper2`), and
 * a class's or function's `name` is observable: `new B().constructor.name` was 'B2' through the
 * representation, 'B' through import() (tsdown's output for every class of @trpc/server and
 * @trpc/client). The reprint keeps the declarations in order, so the binding identifiers of both pair
 * up one to one; a printed name paired with another original one is esbuild's, and is renamed back
 * at each identifier that is a binding or a reference (never a property key, member name, label or
 * module export/import name). The original code had these names in the same scopes, so the result
 * binds exactly as the original did. Unchanged when the pairing is not exact: the binding lists differ
 * in length, a pair differs other than by esbuild's numeric suffix, a printed name is paired with two
 * original names, or a renamed name occurs anywhere in the original.
 */
export function restoreBindingNames(original: string, printed: string): string {
  // Quick path (most modules): esbuild's renames are words of the reprint ending in a number that are
  // no word of the original; none, nothing to parse. (A renamed name the original spells only inside a
  // string or comment takes this path too: the name stays esbuild's, the binding is still correct.)
  const words = new Set(original.match(/[A-Za-z_$][\w$]*/g) ?? []);
  if (!(printed.match(/[A-Za-z_$][\w$]*\d(?![\w$])/g) ?? []).some((w) => !words.has(w))) return printed;
  const p = parsedOrUndefined(printed);
  if (!p) return printed;
  const after = bindingIdentifiers(p);
  if (!after.some((b) => /\d$/.test(b.name))) return printed; // esbuild's renames end in a number
  const o = parsedOrUndefined(original);
  if (!o) return printed;
  const before = bindingIdentifiers(o);
  if (before.length !== after.length) return printed;
  const back = new Map<string, string>(); // printed name → original name
  for (let i = 0; i < before.length; i++) {
    const was = before[i]!.name;
    const now = after[i]!.name;
    if (back.has(now) && back.get(now) !== was) return printed;
    back.set(now, was);
    if (now !== was && !(now.startsWith(was) && /^\d+$/.test(now.slice(was.length)))) return printed;
  }
  for (const [now, was] of back) if (now === was) back.delete(now);
  if (!back.size) return printed;
  // A renamed name must be esbuild's own: absent from the original (else a global or a property may share it).
  const used = new Set<string>();
  const collect = (node: Node): void => {
    if (node.type === 'Identifier') used.add(node.name as string);
    for (const c of childNodes(node)) collect(c);
  };
  collect(o);
  for (const now of back.keys()) if (used.has(now)) return printed;
  // The identifiers to rename: every one named so, except names that are not bindings or references.
  const edits: { start: number; end: number; name: string }[] = [];
  const notVariable = new Set<unknown>();
  const visit = (node: Node): void => {
    if (node.type === 'MemberExpression' && !node.computed) notVariable.add(node.property);
    if ((node.type === 'Property' || node.type === 'MethodDefinition' || node.type === 'PropertyDefinition') && !node.computed && !node.shorthand) notVariable.add(node.key);
    if (node.type === 'LabeledStatement' || node.type === 'BreakStatement' || node.type === 'ContinueStatement') notVariable.add(node.label);
    if (node.type === 'ExportSpecifier') notVariable.add(node.exported);
    if (node.type === 'ImportSpecifier') notVariable.add(node.imported);
    if (node.type === 'MetaProperty') {
      notVariable.add(node.meta);
      notVariable.add(node.property);
    }
    if (node.type === 'Identifier' && !notVariable.has(node) && back.has(node.name as string)) edits.push({ start: node.start as number, end: node.end as number, name: back.get(node.name as string)! });
    for (const c of childNodes(node)) visit(c);
  };
  visit(p);
  let text = printed;
  for (const e of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, e.start) + e.name + text.slice(e.end);
  return text;
}
