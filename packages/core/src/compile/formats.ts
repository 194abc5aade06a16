/**
 * Writes the compiler's output into every layout a package needs (package-layout.ts): the same
 * modules under another directory or extension (`dist/esm/*.js`, `*.mjs`, `*.d.cts`), and CommonJS
 * derived from the compiler's ESM. In-memory, before anything is written: `compileProject` writes
 * all of it or nothing.
 *
 * **How CommonJS is produced — chosen by measurement.** Three ways, each measured on kiln's own
 * `packages/core` (76 files, 720 KB of TypeScript; minimum of 3 runs on the 2-core build machine,
 * beside the ESM build itself, 5.8 s of type-checking and emit):
 *
 * | way | added time | notes |
 * |---|---|---|
 * | a second TypeScript program emitting CommonJS (the package scope read as `"type": "commonjs"` through the host, `.cjs` specifiers by a `before`/`afterDeclarations` transformer) | 3.3 s (+57%) | the emit asks the checker again for every file; CommonJS interop is TypeScript's `__importDefault` (Babel's rule), so `import x from 'cjs-dep'` binds `exports.default` where Node's ESM build binds `module.exports`; older compilers refuse ESM-only dependencies from a CommonJS file (TS1479) |
 * | rollup (`preserveModules`, `treeshake: false`, format `cjs`) over the compiler's ESM | 0.66 s (+11%) | rewrites specifiers itself and chains source maps; a bundler's module graph for a per-file transform, and a native parser package |
 * | **esbuild `transform` (format `cjs`) of each file of the compiler's ESM** | **0.34 s (+6%)** | syntactic only: the checker already elided type-only imports and inlined `const enum`s in the ESM; Node's interop for default imports (`__toESM(require(x), 1)`), so both builds bind the same values; live bindings through getters; the `0 && (module.exports = {…})` annotation lets Node's ESM loader see the named exports; chains an inline input source map |
 *
 * esbuild, then. It does not resolve anything in transform mode, so relative specifiers are
 * rewritten first, from the compiler's parse of the emitted file (`./a.js` → `./a.cjs`, extensionless
 * and directory specifiers made explicit, specifiers that leave the build rebased to the new
 * directory), and the input map's columns are moved with them (`@jridgewell/sourcemap-codec`), so
 * the maps stay exact. What CommonJS cannot express is a coded error, found on the TypeScript source
 * so it carries `file:line:col` (`KILN_BUILD_CJS_UNSUPPORTED`): top-level `await`, and `import.meta`
 * other than `.url`, `.dirname`, `.filename` — those three are defined as
 * `require('node:url').pathToFileURL(__filename).href`, `__dirname` and `__filename`.
 *
 * Declarations for another layout are the compiler's declarations with the same specifier
 * rewriting (`./a.js` → `./a.cjs` in a `.d.cts`, so TypeScript resolves `./a.d.cts` from it); a
 * declaration file holds no module syntax that differs between the formats otherwise.
 */
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type * as TS from 'typescript';
import { decode, encode, type SourceMapMappings } from '@jridgewell/sourcemap-codec';
import {
  fixedFormat,
  isInside,
  jsExtFor,
  splitOutputExt,
  type DtsExtension,
  type JsExtension,
  type Layout,
  type ModuleFormat,
} from './package-layout.js';

/** The compiler's output, in memory: absolute path → text. */
export type Outputs = Map<string, string>;

export interface PrimaryOutputs {
  outDir: string;
  declarationDir: string;
  jsModules: Map<string, JsExtension>;
  dtsModules: Map<string, DtsExtension>;
  /** Files under outDir that are neither modules nor maps nor declarations (JSON the compiler copied). */
  assets: string[];
  primaryFormat: ModuleFormat;
}

/** Index the compiler's outputs by module path (relative to outDir / declarationDir, no extension). */
export function indexOutputs(outputs: Outputs, outDir: string, declarationDir: string, primaryFormat: ModuleFormat): PrimaryOutputs {
  const jsModules = new Map<string, JsExtension>();
  const dtsModules = new Map<string, DtsExtension>();
  const assets: string[] = [];
  for (const file of [...outputs.keys()].sort()) {
    if (file.endsWith('.map')) continue;
    const split = splitOutputExt(file);
    if (split?.kind === 'dts' && isInside(file, declarationDir)) {
      dtsModules.set(toPosix(relative(declarationDir, split.stem)), split.ext as DtsExtension);
    } else if (split?.kind === 'js' && isInside(file, outDir)) {
      jsModules.set(toPosix(relative(outDir, split.stem)), split.ext as JsExtension);
    } else if (!split && isInside(file, outDir)) {
      assets.push(file);
    }
  }
  return { outDir, declarationDir, jsModules, dtsModules, assets, primaryFormat };
}

export interface FormatDiagnostic {
  code: 'KILN_BUILD_CJS_UNSUPPORTED' | 'KILN_BUILD_COMPILER_FAILED';
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

/**
 * The files of every layout (absolute path → text), from the compiler's outputs. Primary layouts
 * are the outputs as emitted; the others are copies with rewritten specifiers and rebased maps, or
 * CommonJS transforms.
 */
export async function writeLayouts(
  ts: typeof TS,
  outputs: Outputs,
  primary: PrimaryOutputs,
  layouts: Layout[],
): Promise<{ files: Outputs; diagnostics: FormatDiagnostic[] }> {
  const files: Outputs = new Map();
  const diagnostics: FormatDiagnostic[] = [];
  const jobs: Promise<void>[] = [];
  let esbuild: typeof import('esbuild') | undefined;
  if (layouts.some((l) => l.kind === 'js' && !l.primary && l.format === 'cjs' && primary.primaryFormat === 'esm')) {
    esbuild = await import('esbuild');
  }
  for (const layout of layouts) {
    if (layout.scopeType) files.set(join(layout.dir, 'package.json'), `${JSON.stringify({ type: layout.scopeType }, null, 2)}\n`);
    const root = layout.kind === 'js' ? primary.outDir : primary.declarationDir;
    const modules = layout.kind === 'js' ? primary.jsModules : primary.dtsModules;
    for (const [m, ext] of modules) {
      const from = join(root, m + ext);
      const text = outputs.get(from)!;
      const mapText = outputs.get(`${from}.map`);
      if (layout.primary) {
        files.set(from, text);
        if (mapText !== undefined) files.set(`${from}.map`, mapText);
        continue;
      }
      const fixed = fixedFormat(ext);
      const to = join(layout.dir, m + (fixed ? ext : layout.ext));
      const rewritten = rewriteSpecifiers(ts, text, from, to, layout, primary);
      const map = mapText === undefined ? undefined : rebaseMap(mapText, `${from}.map`, `${to}.map`, rewritten.edits);
      const out = retargetMapComment(rewritten.text, mapText === undefined ? undefined : `${basename(to)}.map`);
      const moduleFormat = fixed ?? primary.primaryFormat;
      if (layout.kind === 'js' && !fixed && layout.format !== moduleFormat) {
        // ESM → CommonJS (planLayouts never asks for the other direction)
        jobs.push(
          toCommonJs(esbuild!, out, map, basename(to)).then(
            (r) => {
              files.set(to, r.code);
              if (r.map !== undefined) files.set(`${to}.map`, r.map);
            },
            (e: Error) => {
              diagnostics.push({ code: 'KILN_BUILD_COMPILER_FAILED', message: `turning ${basename(from)} into CommonJS failed: ${e.message}` });
            },
          ),
        );
        continue;
      }
      files.set(to, out);
      if (map !== undefined) files.set(`${to}.map`, map);
    }
    if (layout.kind === 'js') {
      // Files the compiler copied (JSON modules) beside every JavaScript layout that imports them.
      for (const asset of primary.assets) files.set(join(layout.dir, relative(primary.outDir, asset)), outputs.get(asset)!);
    }
  }
  await Promise.all(jobs);
  return { files, diagnostics };
}

interface Edit {
  /** 0-based line and column of the replaced text in the original, and the change of length. */
  line: number;
  column: number;
  delta: number;
}

/**
 * Rewrite the relative module specifiers of an emitted file (JavaScript or declarations) for its
 * place in another layout. Positions come from the compiler's parse of the file.
 */
export function rewriteSpecifiers(
  ts: typeof TS,
  text: string,
  from: string,
  to: string,
  layout: Layout,
  primary: PrimaryOutputs,
): { text: string; edits: Edit[] } {
  const kind = layout.kind;
  const sf = ts.createSourceFile(from, text, ts.ScriptTarget.Latest, true, kind === 'js' ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const spans: { start: number; end: number; value: string; reference?: boolean }[] = [];
  const literal = (node: TS.Node | undefined) => {
    if (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))) {
      spans.push({ start: node.getStart(sf) + 1, end: node.end - 1, value: node.text });
    }
  };
  const visit = (node: TS.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) literal(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) literal(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) literal(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) literal(node.argument.literal);
    else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) literal(node.name);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  for (const r of sf.referencedFiles) spans.push({ start: r.pos, end: r.end, value: r.fileName, reference: true });
  spans.sort((a, b) => a.start - b.start);

  const edits: Edit[] = [];
  let out = '';
  let last = 0;
  for (const s of spans) {
    if (!s.value.startsWith('./') && !s.value.startsWith('../') && s.value !== '.' && s.value !== '..') continue;
    const next = s.reference ? retargetReference(s.value, from, to, layout, primary) : retargetSpecifier(s.value, from, to, layout, primary);
    if (next === s.value) continue;
    const { line, character } = ts.getLineAndCharacterOfPosition(sf, s.start);
    edits.push({ line, column: character, delta: next.length - (s.end - s.start) });
    out += text.slice(last, s.start) + next;
    last = s.end;
  }
  return { text: out + text.slice(last), edits };
}

/** Where a relative specifier of `from` (a primary output) leads, seen from `to` in `layout`. */
function retargetSpecifier(spec: string, from: string, to: string, layout: Layout, primary: PrimaryOutputs): string {
  const target = resolve(dirname(from), spec);
  let next = target;
  if (layout.kind === 'js') {
    const found = findModule(target, primary.outDir, primary.jsModules, ['.js', '.mjs', '.cjs']);
    if (found) next = join(layout.dir, found.module + (fixedFormat(found.ext) ? found.ext : layout.ext));
    else if (primary.assets.includes(target)) next = join(layout.dir, relative(primary.outDir, target));
  } else {
    const found = findModule(target, primary.declarationDir, primary.dtsModules, ['.js', '.mjs', '.cjs', '.d.ts', '.d.mts', '.d.cts', '.ts', '.mts', '.cts']);
    if (found) next = join(layout.dir, found.module + jsExtFor((fixedFormat(found.ext) ? found.ext : layout.ext) as DtsExtension));
  }
  let r = toPosix(relative(dirname(to), next));
  if (!r.startsWith('.')) r = `./${r}`;
  if (r === './') r = '.';
  // Same place, same name: keep the specifier as written (extensionless stays extensionless).
  return resolve(dirname(to), r) === resolve(dirname(from), spec) && next === target ? spec : r;
}

/** `/// <reference path="…" />`: rebased, and pointed at the layout's own declaration file. */
function retargetReference(path: string, from: string, to: string, layout: Layout, primary: PrimaryOutputs): string {
  const target = resolve(dirname(from), path);
  let next = target;
  const found = findModule(target, primary.declarationDir, primary.dtsModules, ['.d.ts', '.d.mts', '.d.cts']);
  if (found) next = join(layout.dir, found.module + (fixedFormat(found.ext) ? found.ext : layout.ext));
  let r = toPosix(relative(dirname(to), next));
  if (!r.startsWith('.')) r = `./${r}`;
  return next === target && dirname(to) === dirname(from) ? path : r;
}

/** The module an absolute specifier target names: with an extension, without one, or a directory's index. */
function findModule(
  target: string,
  root: string,
  modules: Map<string, string>,
  exts: string[],
): { module: string; ext: string } | undefined {
  if (!isInside(target, root)) return undefined;
  const rel = toPosix(relative(root, target));
  for (const e of exts) {
    if (!rel.endsWith(e)) continue;
    const m = rel.slice(0, -e.length);
    const ext = modules.get(m);
    if (ext !== undefined) return { module: m, ext };
  }
  const bare = modules.get(rel);
  if (bare !== undefined) return { module: rel, ext: bare };
  const index = modules.get(rel ? `${rel}/index` : 'index');
  if (index !== undefined) return { module: rel ? `${rel}/index` : 'index', ext: index };
  return undefined;
}

function retargetMapComment(text: string, mapName: string | undefined): string {
  if (mapName === undefined) return text;
  return text.replace(/(\/\/# sourceMappingURL=)[^\s]*(\s*)$/, (_, head: string, tail: string) => `${head}${mapName}${tail}`);
}

/** A map moved with its file: columns after rewritten specifiers shifted, sources relative to the new place. */
export function rebaseMap(mapText: string, fromMap: string, toMap: string, edits: Edit[]): string {
  let map: { file?: string; sources?: string[]; sourceRoot?: string; mappings?: string; [k: string]: unknown };
  try {
    map = JSON.parse(mapText);
  } catch {
    return mapText;
  }
  if (edits.length && typeof map.mappings === 'string') {
    const lines: SourceMapMappings = decode(map.mappings);
    for (const e of [...edits].sort((a, b) => b.column - a.column)) {
      const segs = lines[e.line];
      if (!segs) continue;
      for (const seg of segs) if (seg[0] > e.column) seg[0] += e.delta;
    }
    map.mappings = encode(lines);
  }
  map.file = basename(toMap).replace(/\.map$/, '');
  if (!map.sourceRoot && Array.isArray(map.sources) && dirname(fromMap) !== dirname(toMap)) {
    map.sources = map.sources.map((s) => (typeof s === 'string' && !/^[a-z]+:/i.test(s) && !s.startsWith('/') ? toPosix(relative(dirname(toMap), resolve(dirname(fromMap), s))) : s));
  }
  return JSON.stringify(map);
}

const IMPORT_META_URL = '__kiln_import_meta_url';

/** One ESM file → CommonJS with esbuild, its (already moved) map chained through. */
async function toCommonJs(
  esbuild: typeof import('esbuild'),
  code: string,
  mapText: string | undefined,
  fileName: string,
): Promise<{ code: string; map?: string }> {
  const body = code.replace(/\/\/# sourceMappingURL=[^\s]*\s*$/, '');
  const hasContent = mapText !== undefined && /"sourcesContent"\s*:\s*\[\s*"/.test(mapText);
  const input = mapText === undefined ? body : `${body}\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(mapText).toString('base64')}\n`;
  const usesUrl = body.includes('import.meta.url');
  const r = await esbuild.transform(input, {
    format: 'cjs',
    platform: 'node',
    target: 'esnext',
    // `.mjs`: esbuild applies Node's interop (a default import is module.exports), as the ESM build gets.
    sourcefile: fileName.replace(/\.[cm]?js$/, '.mjs'),
    sourcemap: mapText === undefined ? false : 'external',
    sourcesContent: hasContent,
    legalComments: 'inline',
    charset: 'utf8',
    logLevel: 'silent',
    define: { 'import.meta.url': IMPORT_META_URL, 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename' },
    ...(usesUrl ? { banner: `const ${IMPORT_META_URL} = require("node:url").pathToFileURL(__filename).href;` } : {}),
  });
  let map: string | undefined;
  if (mapText !== undefined && r.map) {
    const m = JSON.parse(r.map) as Record<string, unknown>;
    map = JSON.stringify({ version: m.version, file: fileName, ...m });
  }
  return { code: mapText === undefined ? r.code : `${r.code}//# sourceMappingURL=${fileName}.map`, ...(map !== undefined ? { map } : {}) };
}

/**
 * What CommonJS cannot express, in the TypeScript sources of modules that become CommonJS:
 * top-level `await` (and `for await`), `import.meta` other than `.url`, `.dirname`, `.filename`.
 */
export function findCjsBlockers(ts: typeof TS, sf: TS.SourceFile): { message: string; pos: number }[] {
  const found: { message: string; pos: number }[] = [];
  const visit = (node: TS.Node, topLevel: boolean): void => {
    if (topLevel && (ts.isAwaitExpression(node) || (ts.isForOfStatement(node) && node.awaitModifier))) {
      found.push({ message: 'top-level await cannot run in CommonJS', pos: node.getStart(sf) });
    }
    if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      const parent = node.parent;
      const prop = parent && ts.isPropertyAccessExpression(parent) && parent.expression === node ? parent.name.text : undefined;
      if (prop !== 'url' && prop !== 'dirname' && prop !== 'filename') {
        found.push({ message: `import.meta${prop ? `.${prop}` : ''} has no CommonJS equivalent (import.meta.url, .dirname and .filename are translated)`, pos: node.getStart(sf) });
      }
    }
    const inner = topLevel && !(ts.isFunctionLike(node) || ts.isClassStaticBlockDeclaration(node));
    ts.forEachChild(node, (c) => visit(c, inner));
  };
  visit(sf, true);
  return found;
}

function toPosix(p: string): string {
  return p.split(sep).join('/');
}
