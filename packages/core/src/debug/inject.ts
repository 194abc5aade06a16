/**
 * Inject debug IDs into emitted (JS, map) pairs — in memory, for kiln's own build (compile.ts calls it on
 * its outputs before writing), and on disk for a wrapped tool's output folder (`kiln debug-ids DIR`:
 * tsdown, vite, rollup, tsc write their files, then kiln post-processes them within the same task, so
 * what Nx caches already carries the IDs).
 *
 * On disk, a map without `sourcesContent` first gets the text of each source it names, read from the
 * files beside it (that is the text the tool just built from), so a map restored by an Nx cache hit still
 * carries the source it describes. A source that cannot be read stays null and is reported.
 *
 * Invariants: idempotent (running it twice changes nothing the second time); a file is rewritten only
 * when its text changes; a map that is not JSON is reported and left alone (its JS gets no ID).
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { injectDebugId } from './debug-id.js';
import { findMap, ingestArtifact, JS_ARTIFACT } from './ingest.js';
import { packageOf } from './symbolicate.js';
import { toPosix, type DebugRecord } from './record.js';

const PRODUCER = 'debug';
/**
 * For every JS output (by file name) whose `<file>.map` is also an output: the pair with its debug ID.
 * Returns the number of pairs injected; pairs whose map is not JSON are left as they are.
 */
export function injectDebugIds(outputs: Map<string, string>): number {
  let n = 0;
  for (const [file, text] of outputs) {
    if (!JS_ARTIFACT.test(file)) continue;
    const mapText = outputs.get(`${file}.map`);
    if (mapText === undefined) continue;
    let map: Record<string, unknown>;
    try {
      map = JSON.parse(mapText.replace(/^\uFEFF/, ''));
    } catch {
      continue;
    }
    const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
    const r = injectDebugId(bom ? text.slice(1) : text, map);
    outputs.set(file, bom + r.js);
    outputs.set(`${file}.map`, r.map);
    n++;
  }
  return n;
}

export interface PreparedArtifact {
  /** The JS file, relative to `relativeTo`. */
  file: string;
  debugId: string;
  /** Sources whose text was added to the map's `sourcesContent`. */
  filled: number;
  changed: boolean;
}

export interface PrepareOptions {
  /** Absolute folders to walk (node_modules and dot folders skipped). */
  dirs: string[];
  /** Where paths in results and diagnostics are relative to. */
  relativeTo: string;
  /** Ingest every prepared artifact into this store (skipped when undefined). */
  storeDir?: string;
}

async function walk(dir: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (e.isFile() && JS_ARTIFACT.test(e.name)) out.push(p);
  }
}

export async function prepareDebugArtifacts(options: PrepareOptions): Promise<{ artifacts: PreparedArtifact[]; records: DebugRecord[]; diagnostics: Diagnostic[] }> {
  const artifacts: PreparedArtifact[] = [];
  const records: DebugRecord[] = [];
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  for (const d of options.dirs) await walk(d, files);
  for (const jsPath of files) {
    const shown = toPosix(relative(options.relativeTo, jsPath));
    const jsText = await readFile(jsPath, 'utf8');
    const { mapPath, mapText } = await findMap(jsPath, jsText);
    if (mapText === undefined) continue; // no map: nothing to pair (a JS file a tool copied, a config)
    if (!mapPath) {
      diagnostics.push(diagnostic('KILN_DEBUG_MAP_INVALID', `${shown} has an inline source map; kiln gives debug IDs to separate .map files only`, { file: shown, producer: PRODUCER }));
      continue;
    }
    let map: Record<string, unknown> & { sources?: unknown; sourcesContent?: unknown; sourceRoot?: unknown };
    try {
      map = JSON.parse(mapText);
      if (!map || typeof map !== 'object' || !Array.isArray(map.sources)) throw new Error('no sources array');
    } catch (e) {
      diagnostics.push(diagnostic('KILN_DEBUG_MAP_INVALID', `the source map of ${shown} cannot be read (${(e as Error).message}); the file gets no debug ID`, { file: shown, producer: PRODUCER }));
      continue;
    }
    const sources = map.sources as unknown[];
    const contents = Array.isArray(map.sourcesContent) ? [...(map.sourcesContent as unknown[])] : [];
    let filled = 0;
    let unreadable = 0;
    const root = typeof map.sourceRoot === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(map.sourceRoot) ? map.sourceRoot : '';
    for (let i = 0; i < sources.length; i++) {
      if (typeof contents[i] === 'string') continue;
      const s = sources[i];
      let text: string | undefined;
      if (typeof s === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(s)) text = await readFile(join(dirname(mapPath), root, s), 'utf8').catch(() => undefined);
      contents[i] = text ?? null;
      if (text !== undefined) filled++;
      else unreadable++;
    }
    if (filled) map.sourcesContent = contents;
    if (unreadable) {
      diagnostics.push(
        diagnostic('KILN_DEBUG_SOURCES_MISSING', `${unreadable} source(s) of ${shown}'s map cannot be read next to it; their text is not retained`, { file: shown, producer: PRODUCER }),
      );
    }
    const r = injectDebugId(jsText, map);
    const changed = r.js !== jsText || r.map !== mapText;
    if (changed) {
      await writeFile(mapPath, r.map);
      await writeFile(jsPath, r.js);
    }
    artifacts.push({ file: shown, debugId: r.debugId, filled, changed });
    if (options.storeDir) {
      const pkg = packageOf(jsPath);
      const ing = await ingestArtifact(options.storeDir, {
        jsPath,
        jsText: r.js,
        mapPath,
        mapText: r.map,
        packageName: pkg?.name ?? '',
        packageRoot: pkg?.root ?? dirname(jsPath),
        relativeTo: options.relativeTo,
      });
      if (ing.record) records.push(ing.record);
      diagnostics.push(...ing.diagnostics.filter((d) => d.code !== 'KILN_DEBUG_SOURCES_MISSING'));
    }
  }
  return { artifacts, records, diagnostics };
}
