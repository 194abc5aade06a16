/**
 * The run-time side of symbolication: `node --import @kiln/core/register app.js` installs a V8
 * `Error.prepareStackTrace` that prints every frame of a kiln-built file at its authored location with
 * the same match status `kiln symbolicate` gives (judgeFrame, symbolicate.ts): verified, source
 * changed, relocated, source changed (the retained line shown), unavailable.
 *
 * V8 calls the hook synchronously, so this path reads no store: the map comes from beside the JS file
 * (its `sourceMappingURL`, else `<file>.map`), the retained text from the map's `sourcesContent` (kiln
 * maps always carry it), the working tree's text from the source path the map names. A map whose debug
 * ID differs from its file's is not used (the frame is unavailable). Frames of files without a map
 * (Node internals, dependencies) are printed as V8 prints them. Everything is memoised per file; any
 * failure inside the hook falls back to V8's own line for that frame, never to a thrown error.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceMap, traceSegment } from '@jridgewell/trace-mapping';
import { isDebugId, readDebugIdComment } from './debug-id.js';
import { indexDeclarations, mapLocation } from './ingest.js';
import { packageRelativeSource, toPosix } from './record.js';
import { lineStarts } from './relocate.js';
import { judgeFrame, MATCH_STATUS_TEXT, packageOf, type SourceState, type SymbolicatedFrame } from './symbolicate.js';

interface RuntimeArtifact {
  map: TraceMap;
  mapDir: string;
  debugId?: string;
  pkg?: { name: string; root: string };
  sources: Map<number, SourceState | null>;
}

export class RuntimeSymbolicator {
  private readonly files = new Map<string, RuntimeArtifact | { unavailable: string } | null>();
  constructor(private readonly cwd: string = process.cwd()) {}

  private artifact(file: string): RuntimeArtifact | { unavailable: string } | null {
    let a = this.files.get(file);
    if (a !== undefined) return a;
    a = null;
    try {
      const path = file.startsWith('file:') ? fileURLToPath(file) : file;
      if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) {
        const js = readFileSync(path, 'utf8');
        const loc = mapLocation(path, js);
        let mapText = loc.inline;
        let mapPath: string | undefined;
        for (const c of loc.candidates) {
          if (mapText !== undefined) break;
          try {
            mapText = readFileSync(c, 'utf8');
            mapPath = c;
          } catch {
            /* next */
          }
        }
        if (mapText !== undefined) {
          const raw = JSON.parse(mapText) as { debugId?: unknown };
          const jsId = readDebugIdComment(js);
          const mapId = isDebugId(raw.debugId) ? raw.debugId.toLowerCase() : undefined;
          if (jsId !== mapId) a = { unavailable: `${file} and its map name different debug IDs` };
          else {
            const pkg = packageOf(path);
            a = { map: new TraceMap(mapText), mapDir: mapPath ? dirname(mapPath) : dirname(path), ...(jsId ? { debugId: jsId } : {}), ...(pkg ? { pkg } : {}), sources: new Map() };
          }
        }
      }
    } catch {
      a = null;
    }
    this.files.set(file, a);
    return a;
  }

  private source(a: RuntimeArtifact, index: number): SourceState | null {
    let s = a.sources.get(index);
    if (s !== undefined) return s;
    s = null;
    const retained = a.map.sourcesContent?.[index];
    const name = a.map.sources[index];
    if (typeof retained === 'string' && typeof name === 'string') {
      const abs = a.map.resolvedSources[index] && !/^[a-z][a-z0-9+.-]*:/i.test(name) ? join(a.mapDir, a.map.sourceRoot ?? '', name) : undefined;
      const packagePath = a.pkg && abs ? toPosix(relative(a.pkg.root, abs)) : (packageRelativeSource('.', undefined, name) ?? name);
      let current: string | undefined;
      if (abs) {
        try {
          current = readFileSync(abs, 'utf8');
        } catch {
          current = undefined;
        }
      }
      s = {
        retained,
        retainedStarts: lineStarts(retained),
        decls: indexDeclarations(retained, a.pkg?.name ?? '', packagePath),
        displayPath: abs ? toPosix(relative(this.cwd, abs)) : name,
        current,
        packageName: a.pkg?.name ?? '',
        packagePath,
      };
    }
    a.sources.set(index, s);
    return s;
  }

  /** The symbolicated frame of a generated position, or undefined when the file has no map. */
  frame(file: string, line: number, column: number, index = 0): SymbolicatedFrame | undefined {
    const a = this.artifact(file);
    if (!a) return undefined;
    const out: SymbolicatedFrame = { index, input: { file, line, column }, status: 'unavailable' };
    if ('unavailable' in a) return Object.assign(out, { reason: a.unavailable, code: 'KILN_DEBUG_ID_MISMATCH' as const });
    if (a.debugId) out.debugId = a.debugId;
    if (a.pkg) out.package = a.pkg.name;
    const seg = traceSegment(a.map, line - 1, Math.max(0, column - 1));
    if (!seg || seg.length < 4) return Object.assign(out, { reason: `no mapping at ${line}:${column}`, code: 'KILN_DEBUG_UNAVAILABLE' as const });
    const [, sourceIndex, srcLine, srcCol, nameIndex] = seg as unknown as [number, number, number, number, number | undefined];
    if (nameIndex !== undefined) out.name = a.map.names[nameIndex];
    const state = this.source(a, sourceIndex);
    if (!state) return Object.assign(out, { reason: 'the map retains no text for this source', code: 'KILN_DEBUG_SOURCES_MISSING' as const });
    return judgeFrame(out, state, srcLine + 1, srcCol + 1);
  }
}

/** One V8 call site, printed with its authored location and match status when it has a map. */
export function formatCallSite(sym: RuntimeSymbolicator, site: NodeJS.CallSite, index: number): string {
  const original = String(site);
  const file = site.getFileName() ?? site.getScriptNameOrSourceURL?.();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!file || !line || !column) return original;
  const f = sym.frame(file, line, column, index);
  if (!f) return original;
  const fn = site.getFunctionName() ?? site.getMethodName() ?? f.name;
  const label = MATCH_STATUS_TEXT[f.status];
  const head = fn ? `${site.isAsync() ? 'async ' : ''}${fn} (` : '';
  const tail = fn ? ')' : '';
  switch (f.status) {
    case 'verified':
      return `${head}${f.retained!.file}:${f.retained!.line}:${f.retained!.column}${tail} [${label}]`;
    case 'relocated':
      return `${head}${f.current!.file}:${f.current!.line}:${f.current!.column}${tail} [${label}; built from line ${f.retained!.line}: ${f.retained!.text.trim()}]`;
    case 'changed':
      return `${head}${f.retained!.file}:${f.retained!.line}:${f.retained!.column} in the build's source${tail} [${label}: ${f.retained!.text.trim()}]`;
    default:
      return `${original} [${label}: ${f.reason ?? 'no debug artifact'}]`;
  }
}

let installed: RuntimeSymbolicator | undefined;

/** Install the hook (once per realm); returns whether this call installed it. */
export function installStackTraceHook(): boolean {
  if (installed) return false;
  const sym = (installed = new RuntimeSymbolicator());
  Error.prepareStackTrace = (error: Error, sites: NodeJS.CallSite[]) => {
    let head: string;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = 'Error';
    }
    const lines = sites.map((site, i) => {
      try {
        return `    at ${formatCallSite(sym, site, i)}`;
      } catch {
        return `    at ${String(site)}`;
      }
    });
    return [head, ...lines].join('\n');
  };
  return true;
}
