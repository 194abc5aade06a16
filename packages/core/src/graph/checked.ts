/**
 * The checker's part of the codegraph: build the project's program from its tsconfig (the compiler the
 * project itself resolves, as the build does), collect its diagnostics, resolve module specifiers with
 * the compiler's own resolution (tsconfig `paths`, package `exports`, node_modules links), and walk the
 * bodies of error-free files asking the checker what each name and call refers to.
 *
 * Invariants:
 * - Only references and calls that resolve to a kiln declaration (an extractor-declared node of this or
 *   another workspace package) are recorded; targets in node_modules or the default library, locals and
 *   parameters are not. A target inside a declaration kiln does not itself declare (an interface member,
 *   an enum member, an object-literal property) is attributed to the nearest enclosing kiln
 *   declaration, unless that is the site's own declaration or one of its ancestors (a local).
 * - A call is recorded once, as a call: its callee name is not also a reference.
 * - Sites are visited in source order; nothing here depends on absolute paths except file lookups.
 * - No compiler is loaded at import time.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import type * as TS from 'typescript';
import { resolveTypeScript } from '../workspace/typescript.js';
import { findTsconfig, TSCONFIG_CANDIDATES } from '../workspace/tsconfig.js';
import type { Slice } from '../facts/slice.js';

/**
 * A package's tsconfig, parsed (the `extends` chain, `include` expanded) with the compiler the project
 * resolves, and a host and module-resolution cache: enough to resolve module specifiers the way the
 * compiler does (tsconfig `paths`, package `exports`) without building a program.
 */
export interface LoadedConfig {
  ts: typeof TS;
  version: string;
  options: TS.CompilerOptions;
  host: TS.CompilerHost;
  /** Absolute path of the tsconfig. */
  configPath: string;
  parsed: TS.ParsedCommandLine;
  cache: TS.ModuleResolutionCache;
  /**
   * The host module resolution reads the file system through, remembering what it saw for the life
   * of this config (one export): the same directories and package.json files are probed for many
   * specifiers.
   */
  resolutionHost: TS.ModuleResolutionHost;
  /** Module format of each importing file, as the compiler would imply it (files without a program). */
  formats: Map<string, TS.ResolutionMode>;
}

/** A config with its program and checker. */
export interface LoadedProgram extends LoadedConfig {
  program: TS.Program;
  checker: TS.TypeChecker;
  /** With a ProgramReuse: the builder that knows which files this program changed for the checker. */
  builder?: TS.SemanticDiagnosticsBuilderProgram;
  /**
   * With a ProgramReuse and a previous program: the files (absolute names) whose checking may differ
   * from the previous program's — edited files and the files that depend on a changed declaration
   * surface (the compiler's own builder decides, as `tsc --watch` does). Undefined: every file.
   */
  affected?: Set<string>;
}

/**
 * What one process keeps between builds of the same config (a session): parsed source files by text,
 * and the last builder program. A rebuild parses only files whose text changed, reuses the rest of
 * the program's structure, and asks the checker again only about affected files.
 */
export interface ProgramReuse {
  files: Map<string, { text: string; sf: TS.SourceFile }>;
  builder?: TS.SemanticDiagnosticsBuilderProgram;
}

export type ConfigLoad =
  | { status: 'ok'; config: LoadedConfig }
  | { status: 'not-found'; tried: string[]; version: string }
  | { status: 'invalid'; configPath: string; errors: readonly TS.Diagnostic[]; ts: typeof TS; version: string };

export type ProgramLoad =
  | { status: 'ok'; loaded: LoadedProgram }
  | Exclude<ConfigLoad, { status: 'ok' }>;

/** Read the package's tsconfig (`tsconfigName` relative to the root, else the usual candidates); no program. */
export function loadConfig(root: string, tsconfigName?: string): ConfigLoad {
  const { ts, version } = resolveTypeScript(root);
  const found = findTsconfig(root, tsconfigName);
  if (found === undefined) return { status: 'not-found', tried: tsconfigName ? [tsconfigName] : TSCONFIG_CANDIDATES, version };
  const configPath = `${root}${sep}${found}`;
  const errors: TS.Diagnostic[] = [];
  let parsed: TS.ParsedCommandLine | undefined;
  try {
    parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => errors.push(d) });
  } catch {
    parsed = undefined;
  }
  if (parsed) errors.push(...parsed.errors.filter((e) => e.category === ts.DiagnosticCategory.Error));
  if (!parsed || errors.length) return { status: 'invalid', configPath, errors, ts, version };
  const options = parsed.options;
  const host = ts.createCompilerHost(options, true);
  const cache = ts.createModuleResolutionCache(host.getCurrentDirectory(), (f) => host.getCanonicalFileName(f), options);
  return { status: 'ok', config: { ts, version, options, host, configPath, parsed, cache, resolutionHost: rememberingHost(host), formats: new Map() } };
}

/** A module-resolution host over `base` that asks the file system each question once. */
function rememberingHost(base: TS.CompilerHost): TS.ModuleResolutionHost {
  const memo = <T>(f: (x: string) => T) => {
    const seen = new Map<string, T>();
    return (x: string): T => {
      if (seen.has(x)) return seen.get(x)!;
      const v = f(x);
      seen.set(x, v);
      return v;
    };
  };
  return {
    fileExists: memo((f) => base.fileExists(f)),
    readFile: memo((f) => base.readFile(f)),
    ...(base.directoryExists ? { directoryExists: memo((d) => base.directoryExists!(d)) } : {}),
    ...(base.realpath ? { realpath: memo((p) => base.realpath!(p)) } : {}),
    ...(base.getDirectories ? { getDirectories: (d: string) => base.getDirectories!(d) } : {}),
    getCurrentDirectory: () => base.getCurrentDirectory(),
    useCaseSensitiveFileNames: base.useCaseSensitiveFileNames(),
  };
}

/**
 * Build the program of a loaded config. `oldProgram` (a program of the same config built earlier in
 * this process) lets the compiler reuse the source files that did not change: only edited files are
 * parsed again. The checker is always new.
 */
export function buildProgram(config: LoadedConfig, reuse?: ProgramReuse): LoadedProgram {
  const { ts, options, parsed } = config;
  const host = reuse ? reusingHost(ts, config.host, reuse) : config.host;
  const oldProgram = reuse?.builder?.getProgram();
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options,
    projectReferences: parsed.projectReferences,
    host,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(parsed),
    ...(oldProgram ? { oldProgram } : {}),
  });
  const loaded: LoadedProgram = { ...config, program, checker: program.getTypeChecker() };
  if (!reuse) return loaded;
  const builder = ts.createSemanticDiagnosticsBuilderProgram(program, { createHash: sha256 }, reuse.builder);
  // Walk the affected files now (their diagnostics are computed and kept by the builder).
  let affected: Set<string> | undefined = reuse.builder ? new Set() : undefined;
  for (;;) {
    const next = builder.getSemanticDiagnosticsOfNextAffectedFile();
    if (!next) break;
    if (next.affected === program || !('fileName' in next.affected)) affected = undefined;
    else affected?.add((next.affected as TS.SourceFile).fileName);
  }
  reuse.builder = builder;
  return { ...loaded, builder, ...(affected ? { affected } : {}) };
}

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');

/**
 * A compiler host that hands back the SourceFile parsed earlier for the same file, parse options and
 * text (each file is still read, and compared), and gives every source file a version (a hash of its
 * text) as the builder needs.
 */
function reusingHost(ts: typeof TS, base: TS.CompilerHost, reuse: ProgramReuse): TS.CompilerHost {
  const seen = new Set<string>();
  return {
    ...base,
    getSourceFile(fileName, languageVersionOrOptions, onError, shouldCreateNewSourceFile) {
      const lv = languageVersionOrOptions;
      const key = `${fileName}\u0000${typeof lv === 'object' ? `${lv.languageVersion}/${lv.impliedNodeFormat}/${lv.jsDocParsingMode}` : lv}`;
      const text = base.readFile(fileName);
      if (text === undefined) return base.getSourceFile(fileName, lv, onError, shouldCreateNewSourceFile);
      const had = reuse.files.get(key);
      seen.add(key);
      if (had && had.text === text && !shouldCreateNewSourceFile) return had.sf;
      const sf = ts.createSourceFile(fileName, text, lv, true);
      (sf as { version?: string }).version = sha256(text);
      reuse.files.set(key, { text, sf });
      return sf;
    },
  };
}

/** Build the program of the package's tsconfig (`tsconfigName` relative to the root, else the usual candidates). */
export function loadProgram(root: string, tsconfigName?: string): ProgramLoad {
  const load = loadConfig(root, tsconfigName);
  if (load.status !== 'ok') return load;
  return { status: 'ok', loaded: buildProgram(load.config) };
}

/**
 * The program's diagnostics as `tsc --noEmit` reports them: configuration, options, global, syntactic
 * and semantic. Not the declaration emitter's (TS4xxx): those are about emitting `.d.ts`, which the
 * build reports, not about whether the code type-checks — and they cost a declaration emit.
 */
export function checkProgram(p: LoadedProgram): readonly TS.Diagnostic[] {
  const { program } = p;
  const out: TS.Diagnostic[] = [...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  // Semantic diagnostics even where another file has syntax errors (tsc stops there): tolerant mode
  // needs to know which files check. The compiler itself skips what skipLibCheck/checkJs leave out.
  // With a builder, unaffected files' diagnostics are the ones it kept from the previous program.
  out.push(...program.getSyntacticDiagnostics(), ...(p.builder ? p.builder.getSemanticDiagnostics() : program.getSemanticDiagnostics()));
  return p.ts.sortAndDeduplicateDiagnostics(out);
}

/**
 * Where the compiler's module resolution takes `specifier` from `absFile` (absolute path), or
 * undefined. With a program, the file's module format is the program's; without one it is worked out
 * the way the program would (package.json `type`, file extension).
 */
export function compilerResolve(p: LoadedConfig & { program?: TS.Program }, absFile: string, specifier: string, host: TS.ModuleResolutionHost = p.resolutionHost): string | undefined {
  try {
    let format: TS.ResolutionMode;
    if (p.program) format = p.program.getSourceFile(absFile)?.impliedNodeFormat;
    else if (p.formats.has(absFile)) format = p.formats.get(absFile);
    else {
      format = p.ts.getImpliedNodeFormatForFile(absFile, p.cache.getPackageJsonInfoCache(), host, p.options);
      p.formats.set(absFile, format);
    }
    const r = p.ts.resolveModuleName(specifier, absFile, p.options, host, p.cache, undefined, format);
    return r.resolvedModule?.resolvedFileName;
  } catch {
    return undefined;
  }
}

/**
 * compilerResolve's answers kept between exports in one process (by tsconfig), each valid while
 * what it was read from is unchanged. Every probe the compiler makes goes through a host that first
 * stamps what the probe's answer depends on: for a file or directory tested for existence, its parent
 * directory (an entry added, removed or renamed changes the parent's modification time); for a file
 * read (package.json), the file itself; for a path made real, every directory above it (symlinks).
 * Stamps are taken before the probe, so a change racing with it invalidates. Before an export uses
 * the answers, every stamp is taken again: one differing, or another configuration (`key`), and all
 * answers are dropped.
 */
export interface ResolutionMemo {
  key: string;
  answers: Map<string, string | undefined>;
  /** Path → stat signature (`-` when missing) taken before the compiler looked. */
  stamps: Map<string, string>;
}

export function createResolutionMemo(): ResolutionMemo {
  return { key: '', answers: new Map(), stamps: new Map() };
}

function statStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.mtimeMs}:${st.size}:${st.ino}`;
  } catch {
    return '-';
  }
}

/** Drop the memo's answers unless it was filled under `key` and every stamp still holds. */
export function checkResolutionMemo(memo: ResolutionMemo, key: string): void {
  let valid = memo.key === key;
  if (valid) {
    for (const [path, stamp] of memo.stamps) {
      if (statStamp(path) !== stamp) {
        valid = false;
        break;
      }
    }
  }
  if (!valid) {
    memo.key = key;
    memo.answers.clear();
    memo.stamps.clear();
  }
}

const stampingHosts = new WeakMap<LoadedConfig, { memo: ResolutionMemo; host: TS.ModuleResolutionHost }>();

function stampingHost(p: LoadedConfig, memo: ResolutionMemo): TS.ModuleResolutionHost {
  const had = stampingHosts.get(p);
  if (had && had.memo === memo) return had.host;
  const base = p.resolutionHost;
  const stamp = (path: string) => {
    if (!memo.stamps.has(path)) memo.stamps.set(path, statStamp(path));
  };
  const parent = (path: string) => stamp(dirname(path));
  const ancestors = (path: string) => {
    for (let d = dirname(path); ; d = dirname(d)) {
      stamp(d);
      if (dirname(d) === d) break;
    }
  };
  const host: TS.ModuleResolutionHost = {
    fileExists: (f) => (parent(f), base.fileExists(f)),
    readFile: (f) => (parent(f), stamp(f), base.readFile(f)),
    ...(base.directoryExists ? { directoryExists: (d: string) => (parent(d), base.directoryExists!(d)) } : {}),
    ...(base.realpath ? { realpath: (f: string) => (ancestors(f), base.realpath!(f)) } : {}),
    ...(base.getDirectories ? { getDirectories: (d: string) => (stamp(d), base.getDirectories!(d)) } : {}),
    getCurrentDirectory: () => base.getCurrentDirectory!(),
    ...(base.useCaseSensitiveFileNames !== undefined ? { useCaseSensitiveFileNames: base.useCaseSensitiveFileNames } : {}),
  };
  stampingHosts.set(p, { memo, host });
  return host;
}

/** compilerResolve through a ResolutionMemo (checked with checkResolutionMemo first, once per export). */
export function memoResolve(p: LoadedConfig, memo: ResolutionMemo, absFile: string, specifier: string): string | undefined {
  const k = `${absFile}\u0000${specifier}`;
  if (memo.answers.has(k)) return memo.answers.get(k);
  const found = compilerResolve(p, absFile, specifier, stampingHost(p, memo));
  memo.answers.set(k, found);
  return found;
}

// ------------------------------------------------------------------ declarations of a file, by node

/** The kiln declarations of one file, found by the node the extractor declared them from. */
export interface FileDecls {
  /** `${start}:${end}` (offsets, start without trivia) → declaration indices in the slice. */
  byRange: Map<string, number[]>;
  slice: Slice;
  /** Identity of declaration i, or undefined when it cannot be named (never guessed). */
  identity: (i: number) => string | undefined;
}

export function indexDecls(sf: TS.SourceFile, slice: Slice, identity: (i: number) => string | undefined): FileDecls {
  const byRange = new Map<string, number[]>();
  slice.decls.forEach((d, i) => {
    let start: number;
    let end: number;
    try {
      start = sf.getPositionOfLineAndCharacter(d.span.startLine - 1, d.span.startColumn - 1);
      end = sf.getPositionOfLineAndCharacter(d.span.endLine - 1, d.span.endColumn - 1);
    } catch {
      return;
    }
    const k = `${start}:${end}`;
    const list = byRange.get(k);
    if (list) list.push(i);
    else byRange.set(k, [i]);
  });
  return { byRange, slice, identity };
}

// ------------------------------------------------------------------ sites

export interface Site {
  kind: 'reference' | 'call';
  /** Identity of the innermost enclosing kiln declaration, or undefined at top level. */
  in: string | undefined;
  target: string;
  name: string;
  /** 1-based. */
  startLine: number;
  startColumn: number;
  endLine: number;
  endColumn: number;
  typePosition: boolean;
  form?: 'call' | 'new' | 'tagged-template' | 'decorator';
}

export interface DocLink {
  from: string;
  to: string;
}

interface Resolved {
  id: string;
  exact: boolean;
}

/**
 * Walk one checked file and return its reference and call sites, and the JSDoc links of its
 * declarations. `declsOf` gives the declarations of any source file (undefined for files that are
 * not workspace sources: libraries, node_modules).
 */
export function walkSites(
  p: LoadedProgram,
  sf: TS.SourceFile,
  own: FileDecls,
  declsOf: (sf: TS.SourceFile) => FileDecls | undefined,
): { sites: Site[]; links: DocLink[] } {
  const { ts, checker } = p;
  const SK = ts.SyntaxKind;
  const declKinds = new Set<number>([
    SK.FunctionDeclaration, SK.ClassDeclaration, SK.InterfaceDeclaration, SK.TypeAliasDeclaration, SK.EnumDeclaration,
    SK.ModuleDeclaration, SK.VariableDeclaration, SK.ExportAssignment, SK.MethodDeclaration, SK.PropertyDeclaration,
    SK.GetAccessor, SK.SetAccessor, SK.Constructor, SK.IndexSignature, SK.ClassStaticBlockDeclaration,
  ]);
  const sites: Site[] = [];
  const links: DocLink[] = [];
  /** Identities of the enclosing kiln declarations, innermost last. */
  const stack: string[] = [];
  const consumed = new Set<TS.Node>();

  const declIndicesAt = (node: TS.Node, decls: FileDecls, file: TS.SourceFile): number[] | undefined => {
    if (!declKinds.has(node.kind)) return undefined;
    return decls.byRange.get(`${node.getStart(file)}:${node.end}`);
  };

  const nameOf = (node: TS.Node): string | undefined => {
    const n = (node as { name?: TS.Node }).name;
    return n && (ts.isIdentifier(n) || ts.isPrivateIdentifier(n)) ? n.text : undefined;
  };

  /** The kiln declaration a compiler declaration node belongs to. */
  const targetOf = (decl: TS.Node): Resolved | undefined => {
    const file = decl.getSourceFile();
    const decls = file === sf ? own : declsOf(file);
    if (!decls) return undefined;
    const wanted = nameOf(decl);
    for (let n: TS.Node | undefined = decl; n && n.kind !== SK.SourceFile; n = n.parent) {
      const at = declIndicesAt(n, decls, file);
      if (!at) continue;
      // Several declarations from one node: a destructuring `const { a, b } = …` — pick by name.
      const i = at.length > 1 && wanted ? at.find((x) => decls.slice.decls[x]!.name === wanted) ?? at[0]! : at[0]!;
      const id = decls.identity(i);
      if (!id) return undefined;
      const exact = n === decl || (ts.isBindingElement(decl) && at.length > 0 && decls.slice.decls[i]!.name === wanted);
      return { id, exact };
    }
    return undefined;
  };

  const targetsOfSymbol = (symbol: TS.Symbol | undefined): Resolved[] => {
    if (!symbol) return [];
    let s = symbol;
    if (s.flags & ts.SymbolFlags.Alias) {
      try {
        s = checker.getAliasedSymbol(s);
      } catch {
        return [];
      }
    }
    let decls = s.declarations ?? [];
    // Overload signatures and their implementation: a name means the implementation.
    const withBody = decls.filter((d) => ts.isFunctionLike(d) && (d as TS.FunctionLikeDeclaration).body !== undefined);
    if (withBody.length && withBody.length < decls.length && decls.every((d) => ts.isFunctionLike(d))) decls = withBody;
    const out: Resolved[] = [];
    for (const d of decls) {
      const r = targetOf(d);
      if (r && !out.some((x) => x.id === r.id)) out.push(r);
    }
    return out;
  };

  const keep = (r: Resolved): boolean => r.exact || !stack.includes(r.id);

  const addSite = (kind: Site['kind'], node: TS.Node, name: string, r: Resolved, typePosition: boolean, form?: Site['form']) => {
    const s = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    const e = sf.getLineAndCharacterOfPosition(node.end);
    sites.push({
      kind,
      in: stack[stack.length - 1],
      target: r.id,
      name,
      startLine: s.line + 1,
      startColumn: s.character + 1,
      endLine: e.line + 1,
      endColumn: e.character + 1,
      typePosition,
      ...(form ? { form } : {}),
    });
  };

  const calleeName = (expr: TS.Expression): TS.Node | undefined => {
    let e: TS.Expression = expr;
    while (ts.isParenthesizedExpression(e) || ts.isNonNullExpression(e)) e = e.expression;
    if (ts.isIdentifier(e) || ts.isPrivateIdentifier(e)) return e;
    if (ts.isPropertyAccessExpression(e)) return e.name;
    if (e.kind === SK.SuperKeyword) return e;
    return undefined;
  };

  const visitCall = (node: TS.CallExpression | TS.NewExpression | TS.TaggedTemplateExpression | TS.Decorator, form: NonNullable<Site['form']>) => {
    const calleeExpr = ts.isTaggedTemplateExpression(node) ? node.tag : node.expression;
    const name = calleeName(calleeExpr);
    if (!name) return;
    let targets: Resolved[] = [];
    // The callee's symbol decides, except where only the checker's chosen signature can: overloads
    // (each overload signature is its own identity) and `super(…)`. Asking for the signature costs a
    // re-resolution of the call, so it is asked only then.
    let symbol: TS.Symbol | undefined;
    if (name.kind !== SK.SuperKeyword) {
      try {
        symbol = checker.getSymbolAtLocation(name);
        if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      } catch {
        symbol = undefined;
      }
    }
    let callable = symbol?.declarations ?? [];
    if (symbol && symbol.flags & ts.SymbolFlags.Class && ts.isNewExpression(node)) {
      const ctors = symbol.members?.get('__constructor' as TS.__String)?.declarations ?? [];
      if (ctors.length) callable = ctors;
    }
    const overloaded = callable.filter((d) => ts.isFunctionLike(d)).length > 1;
    if ((overloaded || !symbol) && !ts.isDecorator(node)) {
      try {
        const d = checker.getResolvedSignature(node)?.declaration;
        if (d && !ts.isJSDocSignature(d)) {
          const r = targetOf(d);
          if (r) targets = [r];
        }
      } catch {
        // no signature: fall back to the callee's symbol
      }
    }
    if (!targets.length && callable.length === 1 && callable !== symbol?.declarations) {
      const r = targetOf(callable[0]!); // the class's one constructor
      if (r) targets = [r];
    }
    if (!targets.length && symbol) targets = targetsOfSymbol(symbol);
    targets = targets.filter(keep);
    if (!targets.length) return;
    const text = name.kind === SK.SuperKeyword ? 'super' : (name as TS.Identifier).text;
    for (const r of targets) addSite('call', name, text, r, false, form);
    consumed.add(name);
  };

  const isDeclarationName = (node: TS.Node): boolean => {
    const parent = node.parent;
    if (!parent) return false;
    if ((parent as { name?: TS.Node }).name !== node) return false;
    return parent.kind !== SK.PropertyAccessExpression && parent.kind !== SK.JsxAttribute && parent.kind !== SK.MetaProperty && parent.kind !== SK.ShorthandPropertyAssignment;
  };

  const visitName = (node: TS.Identifier | TS.PrivateIdentifier, inType: boolean) => {
    if (consumed.has(node) || isDeclarationName(node)) return;
    let symbol: TS.Symbol | undefined;
    try {
      symbol = ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node
        ? checker.getShorthandAssignmentValueSymbol(node.parent)
        : checker.getSymbolAtLocation(node);
    } catch {
      return;
    }
    for (const r of targetsOfSymbol(symbol)) if (keep(r)) addSite('reference', node, node.text, r, inType);
  };

  const visitDocs = (node: TS.Node, from: string) => {
    const found: TS.Node[] = [];
    const collect = (n: TS.Node) => {
      if (n.kind === SK.JSDocLink || n.kind === SK.JSDocLinkCode || n.kind === SK.JSDocLinkPlain) {
        const name = (n as TS.JSDocLink).name;
        if (name) found.push(name);
      } else if (n.kind === SK.JSDocNameReference) {
        found.push((n as TS.JSDocNameReference).name);
        return;
      }
      ts.forEachChild(n, collect);
    };
    for (const doc of ts.getJSDocCommentsAndTags(node)) {
      // Only the documentation written on this node (a member's JSDoc is visited with the member).
      if (doc.parent !== node && !(ts.isVariableDeclaration(node) && doc.parent === node.parent?.parent)) continue;
      collect(doc);
    }
    for (const name of found) {
      const target = name.kind === SK.JSDocMemberName ? (name as TS.JSDocMemberName).right : name;
      let symbol: TS.Symbol | undefined;
      try {
        symbol = checker.getSymbolAtLocation(target);
      } catch {
        continue;
      }
      for (const r of targetsOfSymbol(symbol)) if (r.id !== from) links.push({ from, to: r.id });
    }
  };

  const visit = (node: TS.Node, inType: boolean): void => {
    // Import and export declarations are recorded as import/export records, not references.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isImportEqualsDeclaration(node)) return;
    let pushed = 0;
    const at = declIndicesAt(node, own, sf);
    if (at) {
      const id = own.identity(at[0]!);
      if (id) {
        stack.push(id);
        pushed = 1;
        visitDocs(node, id);
      }
    }
    let childInType = inType;
    if (ts.isTypeNode(node) && node.kind !== SK.ExpressionWithTypeArguments) childInType = true;
    else if (ts.isHeritageClause(node) && (node.token === SK.ImplementsKeyword || ts.isInterfaceDeclaration(node.parent))) childInType = true;
    if (ts.isCallExpression(node)) visitCall(node, 'call');
    else if (ts.isNewExpression(node)) visitCall(node, 'new');
    else if (ts.isTaggedTemplateExpression(node)) visitCall(node, 'tagged-template');
    else if (ts.isDecorator(node)) visitCall(node, 'decorator');
    else if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) visitName(node, inType);
    ts.forEachChild(node, (child) => visit(child, childInType));
    if (pushed) stack.pop();
  };
  visit(sf, false);
  return { sites, links };
}

/** A compiler diagnostic's file, relative to the package root (POSIX); node_modules paths from their package. */
export function diagnosticFile(root: string, fileName: string): string {
  const posixName = fileName.split(sep).join('/');
  const nm = posixName.lastIndexOf('/node_modules/');
  if (nm >= 0) return posixName.slice(nm + 1);
  return relative(root, fileName).split(sep).join('/');
}
