/**
 * Ingest: put an emitted JavaScript artifact's debug data — its source map, the source texts the map
 * retains, and a declaration index of each — into the debug store (record.ts). Called by the build
 * executor for what it just wrote, by `kiln debug-ids` for a wrapped tool's outputs, and lazily by
 * symbolication for a JS file whose debug ID the store does not know yet (a task restored by an Nx cache
 * hit, local or remote, never ran the executor on this machine).
 *
 * Invariants: only what the artifact itself carries is stored — the retained text comes from the map's
 * `sourcesContent`, never from the working tree (which may already hold newer text). A JS file and a map
 * that name different debug IDs are not a pair: nothing is stored (KILN_DEBUG_ID_MISMATCH). Writing is
 * idempotent (content-addressed), and a failure to write is a diagnostic, never an exception.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative } from 'node:path';
import cacache from 'cacache';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { sha256Hex } from '../digest/hash.js';
import { extractSlice } from '../facts/extract.js';
import { declarationIdentity } from '../identity/identity.js';
import { fileKind, logicalModulePath } from '../parse/language.js';
import { DEBUG_STORE_FORMAT, DIGEST_SCHEMA } from '../version.js';
import type { Slice } from '../facts/slice.js';
import { parserMismatch } from '../parse/parser-version.js';
import { contentKey, loadContentMap, SliceResolver } from '../store/lookup.js';
import type { PackRef } from '../store/pack.js';
import { readDebugIdComment, isDebugId } from './debug-id.js';
import { debugBlobKey, debugIdKey, debugJsKey, packageRelativeSource, toPosix, type DebugDecl, type DebugRecord, type DebugSource } from './record.js';

const PRODUCER = 'debug';
export const JS_ARTIFACT = /\.(?:m|c)?js$/;

export interface IngestInput {
  /** Absolute path of the JS file. */
  jsPath: string;
  /** Its text, when the caller already has it. */
  jsText?: string;
  /** Its map's text and path, when the caller already has them (else found through sourceMappingURL). */
  mapText?: string;
  mapPath?: string;
  /** The package that contains the JS file: its name and absolute root. */
  packageName: string;
  packageRoot: string;
  /** Path prefix for diagnostics' file names (default: the package root). */
  relativeTo?: string;
}

export interface IngestResult {
  record?: DebugRecord;
  diagnostics: Diagnostic[];
}

/**
 * Where a JS file's map is: the text of an inline `data:` URL, or the files to try — its
 * `sourceMappingURL` (relative), then `<file>.map`.
 */
export function mapLocation(jsPath: string, jsText: string): { inline?: string; candidates: string[] } {
  const tail = jsText.length > 4096 ? jsText.slice(-4096) : jsText;
  const m = [...tail.matchAll(/^\/\/[#@] sourceMappingURL=(\S+)\s*$/gm)].pop();
  const url = m?.[1];
  if (url?.startsWith('data:')) {
    const comma = url.indexOf(',');
    const meta = url.slice(5, comma);
    const body = url.slice(comma + 1);
    try {
      return { inline: meta.endsWith(';base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body), candidates: [] };
    } catch {
      return { candidates: [] };
    }
  }
  const candidates: string[] = [];
  if (url && !/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    try {
      candidates.push(join(dirname(jsPath), decodeURI(url)));
    } catch {
      /* a malformed URL: only the conventional name is tried */
    }
  }
  candidates.push(`${jsPath}.map`);
  return { candidates };
}

/** The map a JS file names (mapLocation), read. */
export async function findMap(jsPath: string, jsText: string): Promise<{ mapPath?: string; mapText?: string }> {
  const loc = mapLocation(jsPath, jsText);
  if (loc.inline !== undefined) return { mapText: loc.inline };
  for (const p of loc.candidates) {
    try {
      return { mapPath: p, mapText: await readFile(p, 'utf8') };
    } catch {
      /* next */
    }
  }
  return {};
}

/** The declaration index of one retained source text (extracted here). */
export function indexDeclarations(text: string, packageName: string, packagePath: string): DebugDecl[] {
  const kind = fileKind(packagePath);
  if (!kind) return [];
  let slice: Slice;
  try {
    slice = extractSlice(Buffer.from(text, 'utf8'), kind.variant);
  } catch {
    return [];
  }
  return declsOf(slice, packageName, packagePath);
}

function declsOf(slice: Slice, packageName: string, packagePath: string): DebugDecl[] {
  const place = { language: slice.language, package: packageName, module: logicalModulePath(packagePath) };
  return slice.decls.map((d) => ({ identity: declarationIdentity(place, d), path: d.path, kind: d.kind, semantic: d.semantic, span: d.span }));
}

/**
 * Declaration indexes for one ingestion batch. The slice of a source's exact bytes is usually already in
 * the store — kiln extracted it to compute the very key this build ran under — so it is read from there
 * (the registered views' manifests, one pack read each, every slice re-verified: store/lookup.ts) and
 * extracted only when absent. Either way it is the same extractor's facts of the same bytes.
 */
class DeclarationIndexer {
  private contentMap?: Promise<Map<string, PackRef> | undefined>;
  private readonly resolver: SliceResolver;
  constructor(private readonly storeDir: string) {
    this.resolver = new SliceResolver(storeDir, DIGEST_SCHEMA);
  }

  async index(text: string, packageName: string, packagePath: string): Promise<DebugDecl[]> {
    const kind = fileKind(packagePath);
    if (!kind) return [];
    if (!parserMismatch()) {
      this.contentMap ??= loadContentMap(this.storeDir, DIGEST_SCHEMA).catch(() => undefined);
      const hash = sha256Hex(text);
      const ref = (await this.contentMap)?.get(contentKey(hash, kind.variant));
      if (ref) {
        const r = await this.resolver.resolve(ref, hash, kind.variant).catch(() => undefined);
        if (r?.status === 'hit') return declsOf(r.slice, packageName, packagePath);
      }
    }
    return indexDeclarations(text, packageName, packagePath);
  }
}

async function putIfAbsent(storeDir: string, key: string, data: string | Buffer, metadata?: unknown): Promise<void> {
  if (await cacache.get.info(storeDir, key).catch(() => null)) return;
  await cacache.put(storeDir, key, data, metadata === undefined ? {} : { metadata });
}

export async function ingestArtifact(storeDir: string, input: IngestInput, indexer = new DeclarationIndexer(storeDir)): Promise<IngestResult> {
  const diagnostics: Diagnostic[] = [];
  const base = input.relativeTo ?? input.packageRoot;
  const shown = toPosix(relative(base, input.jsPath)) || input.jsPath;
  const fail = (code: Parameters<typeof diagnostic>[0], message: string): IngestResult => {
    diagnostics.push(diagnostic(code, message, { file: shown, producer: PRODUCER }));
    return { diagnostics };
  };
  let jsText = input.jsText;
  if (jsText === undefined) {
    try {
      jsText = await readFile(input.jsPath, 'utf8');
    } catch (e) {
      return fail('KILN_DEBUG_UNAVAILABLE', `cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  let mapText = input.mapText;
  let mapPath = input.mapPath;
  if (mapText === undefined) ({ mapText, mapPath } = await findMap(input.jsPath, jsText));
  if (mapText === undefined) return fail('KILN_DEBUG_UNAVAILABLE', `${shown} has no source map (no sourceMappingURL, no ${shown}.map)`);
  let map: { version?: unknown; sources?: unknown; sourcesContent?: unknown; sourceRoot?: unknown; mappings?: unknown; debugId?: unknown; debug_id?: unknown };
  try {
    map = JSON.parse(mapText);
  } catch (e) {
    return fail('KILN_DEBUG_MAP_INVALID', `the source map of ${shown} is not JSON (${(e as Error).message})`);
  }
  if (!map || typeof map !== 'object' || map.version !== 3 || !Array.isArray(map.sources) || typeof map.mappings !== 'string') {
    return fail('KILN_DEBUG_MAP_INVALID', `the source map of ${shown} is not a version 3 map with sources and mappings`);
  }
  const jsId = readDebugIdComment(jsText);
  const rawMapId = map.debugId ?? map.debug_id;
  const mapId = isDebugId(rawMapId) ? rawMapId.toLowerCase() : undefined;
  if (jsId !== mapId) {
    return fail(
      'KILN_DEBUG_ID_MISMATCH',
      `${shown} names debug ID ${jsId ?? '(none)'} and its map ${mapPath ? toPosix(relative(base, mapPath)) : '(inline)'} names ${mapId ?? (rawMapId !== undefined ? `an invalid ID ${JSON.stringify(rawMapId)}` : '(none)')}`,
    );
  }
  const mapDir = toPosix(relative(input.packageRoot, mapPath ? dirname(mapPath) : dirname(input.jsPath))) || '.';
  const sourceRoot = typeof map.sourceRoot === 'string' ? map.sourceRoot : undefined;
  const contents = Array.isArray(map.sourcesContent) ? (map.sourcesContent as unknown[]) : [];
  const sources: (DebugSource | null)[] = [];
  let missing = 0;
  try {
    for (let i = 0; i < map.sources.length; i++) {
      const src = (map.sources as unknown[])[i];
      const text = contents[i];
      const path = typeof src === 'string' ? packageRelativeSource(mapDir, sourceRoot, src) : undefined;
      if (typeof text !== 'string' || path === undefined) {
        if (typeof text !== 'string') missing++;
        sources.push(null);
        continue;
      }
      const sha256 = sha256Hex(text);
      await putIfAbsent(storeDir, debugBlobKey(sha256), text);
      sources.push({ path, sha256, decls: await indexer.index(text, input.packageName, path) });
    }
    const mapSha = sha256Hex(mapText);
    await putIfAbsent(storeDir, debugBlobKey(mapSha), mapText);
    const record: DebugRecord = {
      format: DEBUG_STORE_FORMAT,
      debugId: jsId ?? null,
      js: sha256Hex(jsText),
      package: input.packageName,
      artifact: toPosix(relative(input.packageRoot, input.jsPath)),
      map: mapSha,
      sources,
    };
    const bytes = JSON.stringify(record);
    const meta = { blobs: [debugBlobKey(mapSha), ...sources.flatMap((x) => (x ? [debugBlobKey(x.sha256)] : []))] };
    await putIfAbsent(storeDir, debugJsKey(record.js), bytes, meta);
    if (record.debugId) await putIfAbsent(storeDir, debugIdKey(record.debugId), bytes, meta);
    if (missing) {
      diagnostics.push(
        diagnostic('KILN_DEBUG_SOURCES_MISSING', `the source map of ${shown} carries no text for ${missing} of its ${map.sources.length} source(s)`, {
          file: shown,
          producer: PRODUCER,
        }),
      );
    }
    return { record, diagnostics };
  } catch (e) {
    return fail('KILN_DEBUG_STORE_FAILED', `storing the debug data of ${shown} failed: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Ingest every JS file among `files` (absolute paths) that has a map, for one package. What the build
 * executor calls after writing its outputs; returns the records and every diagnostic.
 */
export async function ingestOutputs(
  storeDir: string,
  pkg: { name: string; root: string },
  files: readonly string[],
  relativeTo?: string,
): Promise<{ records: DebugRecord[]; diagnostics: Diagnostic[] }> {
  const records: DebugRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  const set = new Set(files);
  const indexer = new DeclarationIndexer(storeDir);
  for (const f of files) {
    if (!JS_ARTIFACT.test(f) || !set.has(`${f}.map`)) continue;
    const r = await ingestArtifact(storeDir, { jsPath: isAbsolute(f) ? f : join(pkg.root, f), packageName: pkg.name, packageRoot: pkg.root, relativeTo }, indexer);
    if (r.record) records.push(r.record);
    diagnostics.push(...r.diagnostics);
  }
  return { records, diagnostics };
}

/**
 * What a build executor calls after writing its outputs: ingest every (JS, map) pair among `files`
 * (paths relative to `workspaceRoot`, as compileProject reports them) for the package at `projectRoot`.
 */
export async function ingestProjectOutputs(options: {
  storeDir: string;
  workspaceRoot: string;
  projectRoot: string;
  files: readonly string[];
}): Promise<{ records: DebugRecord[]; diagnostics: Diagnostic[] }> {
  let name = '';
  try {
    const m = JSON.parse(await readFile(join(options.projectRoot, 'package.json'), 'utf8')) as { name?: unknown };
    if (typeof m.name === 'string') name = m.name;
  } catch {
    /* a project without a package.json: records name no package, frames resolve through the files */
  }
  const abs = options.files.map((f) => (isAbsolute(f) ? f : join(options.workspaceRoot, f)));
  return ingestOutputs(options.storeDir, { name, root: options.projectRoot }, abs, options.workspaceRoot);
}
