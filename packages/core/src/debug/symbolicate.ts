/**
 * Symbolication (SPEC §8, RFC 167): map each frame of a stack trace to authored file, line, column and
 * the enclosing declaration's identity, with a match status:
 * - `verified`   — the working tree holds exactly the source the artifact was built from;
 * - `relocated`  — ("source changed, relocated") the file changed but the declaration's semantic digest
 *   did not: the frame is mapped to the same token of the current file (relocate.ts), and the retained
 *   line is shown beside it;
 * - `changed`    — ("source changed") the declaration changed, or the file is gone: the retained source
 *   is shown, never a line of the current file;
 * - `unavailable` — no debug artifact for the frame (no debug ID the store knows, no map beside the file,
 *   no mapping at that position, no retained text): a distinct outcome, not a guess.
 *
 * Artifacts are found by identity, never by file name: the frame's debug ID (JSON frames), else the
 * `//# debugId=` of the JS file the frame names, else the sha256 of that file's text. An artifact the
 * store does not know yet is ingested from the file and its map on first use (ingest.ts). Sources are
 * resolved in the working tree through the record's *package name* (the workspace's package of that
 * name), so a copy of a built package elsewhere (node_modules, a tarball, another clone) maps to the
 * sources of this workspace; without such a package, through the package root the JS file sits in.
 *
 * Source maps are read with @jridgewell/trace-mapping (no VLQ decoding here). Work is memoised per
 * artifact, per source and per declaration, so a long trace of few artifacts costs one lookup a frame.
 */
import { readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceMap, traceSegment } from '@jridgewell/trace-mapping';
import type { DiagnosticCode } from '../diagnostics/codes.js';
import { sha256Hex } from '../digest/hash.js';
import { fileKind } from '../parse/language.js';
import { discoverWorkspace } from '../workspace/discover.js';
import { readDebugIdComment } from './debug-id.js';
import { indexDeclarations, ingestArtifact } from './ingest.js';
import { readDebugBlob, readDebugRecord } from './lookup.js';
import { toPosix, type DebugDecl, type DebugRecord } from './record.js';
import { alignDeclaration, alignOffset, lineStarts, lineText, offsetAt, positionAt, spanOffsets, type AlignedDeclaration } from './relocate.js';
import type { FrameInput } from './stack-input.js';

export type MatchStatus = 'verified' | 'relocated' | 'changed' | 'unavailable';

/** How each status reads in text output (RFC 167's names). */
export const MATCH_STATUS_TEXT: Record<MatchStatus, string> = {
  verified: 'verified',
  relocated: 'source changed, relocated',
  changed: 'source changed',
  unavailable: 'unavailable',
};

export interface FramePosition {
  /** Workspace-relative path when the package is in the workspace, else `<package>/<package-relative path>`. */
  file: string;
  line: number;
  column: number;
  /** The text of that line (retained text for `retained`, the working tree's for `current`). */
  text: string;
}

export interface SymbolicatedFrame {
  /** 0-based index of the frame in the input. */
  index: number;
  input: FrameInput;
  status: MatchStatus;
  debugId?: string;
  package?: string;
  /** The JS file, relative to its package root. */
  artifact?: string;
  /** The original name the map records at that position. */
  name?: string;
  /** The enclosing declaration's identity (in the text the artifact was built from). */
  identity?: string;
  /** Where the frame is in the source the artifact was built from. */
  retained?: FramePosition;
  /** Where it is in the working tree: for `verified` the same place, for `relocated` the aligned token. */
  current?: FramePosition;
  /** Why the status is not `verified`. */
  reason?: string;
  code?: DiagnosticCode;
}

export interface SymbolicateOptions {
  storeDir: string;
  /** The workspace whose working tree frames are compared with. */
  workspaceRoot: string;
  /** Relative frame paths are resolved against this (default: process.cwd()). */
  cwd?: string;
  /** Ingest artifacts the store does not know from the files the frames name (default true). */
  ingest?: boolean;
}

/** A retained source and, once read, the working tree's text of the same file. */
export interface SourceState {
  retained: string;
  retainedStarts: number[];
  decls: DebugDecl[];
  displayPath: string;
  /** The working tree's text, or undefined when the file is not there. */
  current?: string;
  /** Whether `current` equals `retained` (compared once, not per frame). */
  same?: boolean;
  /** Token alignments of declarations, by identity (computed once, not per frame). */
  aligned?: Map<string, AlignedDeclaration>;
  currentStarts?: number[];
  currentDecls?: Map<string, DebugDecl>;
  packageName: string;
  packagePath: string;
}

interface Artifact {
  record: DebugRecord;
  map: TraceMap;
  /** Absolute root its sources are resolved against, and whether that is a workspace package. */
  root?: string;
  inWorkspace: boolean;
  sources: Map<number, Promise<SourceState | undefined>>;
}

type Resolved = { artifact: Artifact } | { reason: string; code: DiagnosticCode };

export class Symbolicator {
  private readonly opts: Required<SymbolicateOptions>;
  private packages?: Promise<Map<string, string>>;
  private readonly byFile = new Map<string, Promise<Resolved>>();
  private readonly byId = new Map<string, Promise<Resolved>>();
  private readonly byRecord = new Map<string, Promise<Artifact | undefined>>();

  constructor(options: SymbolicateOptions) {
    this.opts = { cwd: process.cwd(), ingest: true, ...options };
  }

  /** Package name → absolute root, for the workspace's packages. */
  private workspacePackages(): Promise<Map<string, string>> {
    return (this.packages ??= discoverWorkspace(this.opts.workspaceRoot)
      .then((ws) => new Map(ws.projects.map((p) => [p.name, join(this.opts.workspaceRoot, p.root)] as [string, string])))
      .catch(() => new Map<string, string>()));
  }

  async frame(input: FrameInput, index: number): Promise<SymbolicatedFrame> {
    const out: SymbolicatedFrame = { index, input, status: 'unavailable' };
    const unavailable = (reason: string, code: DiagnosticCode = 'KILN_DEBUG_UNAVAILABLE') => Object.assign(out, { status: 'unavailable' as const, reason, code });
    if (input.line === undefined) return unavailable('the frame has no line number');
    const resolved = await this.resolve(input);
    if ('reason' in resolved) return unavailable(resolved.reason, resolved.code);
    const a = resolved.artifact;
    out.package = a.record.package;
    out.artifact = a.record.artifact;
    if (a.record.debugId) out.debugId = a.record.debugId;
    const seg = traceSegment(a.map, input.line - 1, Math.max(0, (input.column ?? 1) - 1));
    if (!seg || seg.length < 4) return unavailable(`the map of ${a.record.package}/${a.record.artifact} has no mapping at ${input.line}:${input.column ?? 1}`);
    const [, sourceIndex, srcLine, srcCol, nameIndex] = seg as unknown as [number, number, number, number, number | undefined];
    if (nameIndex !== undefined) out.name = a.map.names[nameIndex];
    const state = await this.source(a, sourceIndex);
    if (!state) {
      const name = a.map.sources[sourceIndex] ?? `source ${sourceIndex}`;
      return unavailable(`the map of ${a.record.package}/${a.record.artifact} retains no text for ${name}`, 'KILN_DEBUG_SOURCES_MISSING');
    }
    return judgeFrame(out, state, srcLine + 1, srcCol + 1);
  }

  async frames(inputs: readonly FrameInput[], onFrame?: (f: SymbolicatedFrame) => void): Promise<SymbolicatedFrame[]> {
    const out: SymbolicatedFrame[] = [];
    for (let i = 0; i < inputs.length; i++) {
      const f = await this.frame(inputs[i]!, i);
      if (onFrame) onFrame(f);
      else out.push(f);
    }
    return out;
  }

  private resolve(input: FrameInput): Promise<Resolved> {
    if (input.debugId) {
      const id = input.debugId.toLowerCase();
      let p = this.byId.get(id);
      if (!p) {
        p = this.fromRecord(readDebugRecord(this.opts.storeDir, { debugId: id }), undefined).then(async (a) => {
          if (a) return { artifact: a };
          if (input.file) return this.resolveFile(input.file);
          return { reason: `no debug artifact with debug ID ${id} in the store`, code: 'KILN_DEBUG_UNAVAILABLE' as const };
        });
        this.byId.set(id, p);
      }
      return p;
    }
    if (!input.file) return Promise.resolve({ reason: 'the frame names no file', code: 'KILN_DEBUG_UNAVAILABLE' });
    return this.resolveFile(input.file);
  }

  private resolveFile(file: string): Promise<Resolved> {
    let p = this.byFile.get(file);
    if (!p) {
      p = this.resolveFileUncached(file);
      this.byFile.set(file, p);
    }
    return p;
  }

  private async resolveFileUncached(file: string): Promise<Resolved> {
    if (file.startsWith('node:') || file === 'native' || file === '<anonymous>') return { reason: `${file} is Node's or the engine's own code: no debug artifact`, code: 'KILN_DEBUG_UNAVAILABLE' };
    const path = localPath(file, this.opts.cwd);
    if (!path) return { reason: `${file} is not a file on this machine, and the frame names no debug ID`, code: 'KILN_DEBUG_UNAVAILABLE' };
    let js: string;
    try {
      js = await readFile(path, 'utf8');
    } catch (e) {
      return { reason: `${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}), and the frame names no debug ID`, code: 'KILN_DEBUG_UNAVAILABLE' };
    }
    const debugId = readDebugIdComment(js);
    const jsSha256 = sha256Hex(js);
    const pkg = packageOf(path);
    const known = await this.fromRecord(readDebugRecord(this.opts.storeDir, debugId ? { debugId, jsSha256 } : { jsSha256 }), pkg?.root);
    if (known) return { artifact: known };
    if (!this.opts.ingest) return { reason: `the store has no debug artifact for ${file}${debugId ? ` (debug ID ${debugId})` : ''}`, code: 'KILN_DEBUG_UNAVAILABLE' };
    const r = await ingestArtifact(this.opts.storeDir, {
      jsPath: path,
      jsText: js,
      packageName: pkg?.name ?? '',
      packageRoot: pkg?.root ?? dirname(path),
      relativeTo: this.opts.workspaceRoot,
    });
    if (!r.record) {
      const d = r.diagnostics[0];
      return { reason: d ? d.message : `no debug artifact for ${file}`, code: d?.code ?? 'KILN_DEBUG_UNAVAILABLE' };
    }
    const a = await this.fromRecord(Promise.resolve(r.record), pkg?.root);
    return a ? { artifact: a } : { reason: `the map of ${file} cannot be read`, code: 'KILN_DEBUG_MAP_INVALID' };
  }

  private async fromRecord(recordP: Promise<DebugRecord | undefined>, diskRoot: string | undefined): Promise<Artifact | undefined> {
    const record = await recordP;
    if (!record) return undefined;
    const memoKey = `${record.js}\0${diskRoot ?? ''}`;
    let p = this.byRecord.get(memoKey);
    if (!p) {
      p = (async () => {
        const mapText = await readDebugBlob(this.opts.storeDir, record.map);
        if (mapText === undefined) return undefined;
        let map: TraceMap;
        try {
          map = new TraceMap(mapText);
        } catch {
          return undefined;
        }
        const wsRoot = record.package ? (await this.workspacePackages()).get(record.package) : undefined;
        const root = wsRoot ?? diskRoot;
        return { record, map, root, inWorkspace: wsRoot !== undefined, sources: new Map() };
      })();
      this.byRecord.set(memoKey, p);
    }
    return p;
  }

  private source(a: Artifact, index: number): Promise<SourceState | undefined> {
    let p = a.sources.get(index);
    if (!p) {
      p = (async () => {
        const s = a.record.sources[index];
        if (!s) return undefined;
        const retained = await readDebugBlob(this.opts.storeDir, s.sha256);
        if (retained === undefined) return undefined;
        const abs = a.root ? join(a.root, s.path) : undefined;
        const displayPath = abs && a.inWorkspace ? toPosix(relative(this.opts.workspaceRoot, abs)) : `${a.record.package || '(no package)'}/${s.path}`;
        let current: string | undefined;
        if (abs) current = await readFile(abs, 'utf8').catch(() => undefined);
        return { retained, retainedStarts: lineStarts(retained), decls: s.decls, displayPath, current, packageName: a.record.package, packagePath: s.path };
      })();
      a.sources.set(index, p);
    }
    return p;
  }
}

/**
 * The match status of a frame whose artifact maps it to (line, column) of a retained source: compares
 * the retained text with the working tree's, and relocates through an unchanged declaration. Synchronous,
 * shared by the CLI (sources from the store) and the runtime hook (sources from the map on disk).
 */
export function judgeFrame(out: SymbolicatedFrame, state: SourceState, line: number, column: number): SymbolicatedFrame {
  out.retained = { file: state.displayPath, line, column, text: lineText(state.retained, state.retainedStarts, line) };
  const decl = enclosing(state.decls, line, column);
  if (decl) out.identity = decl.identity;
  state.same ??= state.current === state.retained;
  if (state.same) {
    out.status = 'verified';
    out.current = { ...out.retained };
    return out;
  }
  out.status = 'changed';
  out.code = 'KILN_DEBUG_SOURCE_CHANGED';
  if (state.current === undefined) {
    out.reason = `${state.displayPath} is not in the working tree`;
    return out;
  }
  if (!decl) {
    out.reason = `${state.displayPath} changed and the frame is outside any declaration`;
    return out;
  }
  state.currentDecls ??= new Map(indexDeclarations(state.current, state.packageName, state.packagePath).map((d) => [d.identity, d]));
  const now = state.currentDecls.get(decl.identity);
  if (!now) {
    out.reason = `${decl.path} is no longer declared in ${state.displayPath}`;
    return out;
  }
  if (decl.semantic === null || now.semantic !== decl.semantic) {
    out.reason = `${decl.path} changed since the build`;
    return out;
  }
  state.currentStarts ??= lineStarts(state.current);
  state.aligned ??= new Map();
  let pair = state.aligned.get(decl.identity);
  if (!pair) {
    const from = { text: state.retained, range: spanOffsets(state.retainedStarts, state.retained.length, decl.span) };
    const to = { text: state.current, range: spanOffsets(state.currentStarts, state.current.length, now.span) };
    const kind = fileKind(state.packagePath);
    pair = alignDeclaration(from, to, kind?.variant === 'tsx' || kind?.variant === 'jsx');
    state.aligned.set(decl.identity, pair);
  }
  const aligned = alignOffset(pair, offsetAt(state.retainedStarts, state.retained.length, line, column));
  if ('reason' in aligned) {
    out.reason = `${decl.path}: ${aligned.reason}`;
    return out;
  }
  const p = positionAt(state.currentStarts, aligned.offset);
  out.status = 'relocated';
  out.code = 'KILN_DEBUG_RELOCATED';
  out.current = { file: state.displayPath, line: p.line, column: p.column, text: lineText(state.current, state.currentStarts, p.line) };
  out.reason = `${state.displayPath} changed; ${decl.path} did not (same semantic digest), so the frame follows its token`;
  return out;
}

/** The innermost declaration whose span contains the 1-based position. */
function enclosing(decls: readonly DebugDecl[], line: number, column: number): DebugDecl | undefined {
  let best: DebugDecl | undefined;
  for (const d of decls) {
    const s = d.span;
    const afterStart = line > s.startLine || (line === s.startLine && column >= s.startColumn);
    const beforeEnd = line < s.endLine || (line === s.endLine && column < s.endColumn);
    if (!afterStart || !beforeEnd) continue;
    if (!best || s.startLine > best.span.startLine || (s.startLine === best.span.startLine && s.startColumn >= best.span.startColumn)) best = d;
  }
  return best;
}

/** The local path a frame's file names, or undefined for a URL or internal frame. */
function localPath(file: string, cwd: string): string | undefined {
  if (file.startsWith('file:')) {
    try {
      return fileURLToPath(file);
    } catch {
      return undefined;
    }
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(file) && !/^[A-Za-z]:[\\/]/.test(file)) return undefined; // node:, http:, webpack:, …
  return isAbsolute(file) ? file : resolve(cwd, file);
}

/** The nearest package.json above a file: its `name` and directory. */
export function packageOf(file: string): { name: string; root: string } | undefined {
  let dir = dirname(file);
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        const m = JSON.parse(readFileSync(pj, 'utf8')) as { name?: unknown };
        if (typeof m.name === 'string' && m.name) return { name: m.name, root: dir };
      } catch {
        /* a package.json that does not parse: keep climbing */
      }
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
