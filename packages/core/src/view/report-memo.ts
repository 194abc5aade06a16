/**
 * The assembled report of a view, memoised beside its manifest (one entry per view, replaced when it
 * changes). A warm run whose files all match the view's manifest asks for it before reading a single
 * slice; on a hit it skips slice decoding and the assembly (resolution of references, surfaces).
 *
 * Invariant: a memoised report is used only for exactly the input it was assembled from. The input
 * digest (`reportInput`) covers everything `assemble` reads — the package manifest as parsed, the
 * build-output directories, every file's relative path, content hash and variant, the diagnostics
 * known before assembly, the digest schema, the size limit, the extractor and report versions — and
 * the code that assembles it: a fingerprint of every .js file of this package's build, so a kiln
 * upgrade (or any local rebuild that changes it) can never be answered by an older assembly. The bytes
 * are integrity-checked by cacache on read, and the entry must name this input and be a report of
 * this version; anything else is a miss (a damaged entry is removed), never a wrong report.
 *
 * What the entry means is decided here; the store only keeps its bytes (store/entry.ts, under
 * store/format.ts's `viewReportKey`).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Variant } from '../parse/language.js';
import { dropEntry, entryInfo, readEntry, writeEntry, type EntryInfo } from '../store/entry.js';
import { viewReportKey } from '../store/format.js';
import type { PackageInfo } from './package.js';
import type { DigestReport } from './report.js';
import { DIGEST_REPORT_VERSION, EXTRACTOR_VERSION, VIEW_REPORT_FORMAT } from '../version.js';

let fingerprint: string | undefined;
/**
 * sha256 over every .js file of this package's build (paths relative to it, and contents). Computed
 * once per process, on first use (never at import time).
 */
export function codeFingerprint(): string {
  if (fingerprint) return fingerprint;
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.js')).sort();
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.split('\\').join('/')}\u0000`).update(readFileSync(join(root, f))).update('\u0000');
  return (fingerprint = h.digest('hex'));
}

export interface ReportInput {
  pkg: PackageInfo;
  outDirs: string[];
  /** Relative path, content hash, variant of every file the report covers, in report order. */
  files: { rel: string; contentHash: string; variant: Variant }[];
  diagnostics: Diagnostic[];
  digestSchema: number;
  maxFileSize: number;
}

/** The digest of everything a report is assembled from (see the invariant above). */
export function reportInput(i: ReportInput): string {
  const h = createHash('sha256');
  h.update(JSON.stringify([VIEW_REPORT_FORMAT, codeFingerprint(), DIGEST_REPORT_VERSION, EXTRACTOR_VERSION, i.digestSchema, i.maxFileSize, i.pkg, i.outDirs, i.diagnostics]));
  for (const f of i.files) h.update(`\n${f.rel}\u0000${f.contentHash}\u0000${f.variant}`);
  return h.digest('hex');
}

export type ViewReportRead = { status: 'hit'; report: DigestReport; writes: number } | { status: 'miss'; writes: number };

/** The view's memoised report if it was assembled from exactly `input`; anything else is a miss. */
export async function readViewReport(storeDir: string, viewId: string, digestSchema: number, input: string): Promise<ViewReportRead> {
  const key = viewReportKey(viewId, digestSchema);
  let info: EntryInfo | null;
  try {
    info = await entryInfo(storeDir, key);
  } catch {
    return { status: 'miss', writes: 0 };
  }
  const meta = info?.metadata as { input?: unknown; writes?: unknown } | undefined;
  const writes = typeof meta?.writes === 'number' ? meta.writes : 0;
  // The index line names the input: a different input costs no content read.
  if (!info || meta?.input !== input) return { status: 'miss', writes };
  try {
    const j = JSON.parse((await readEntry(storeDir, key)).toString('utf8')) as { kind?: unknown; format?: unknown; input?: unknown; report?: DigestReport };
    const r = j?.report;
    if (j?.kind !== 'kiln-view-report' || j.format !== VIEW_REPORT_FORMAT || j.input !== input || !r || r.kind !== 'kiln-digest-report' || r.version !== DIGEST_REPORT_VERSION || !Array.isArray(r.declarations) || !Array.isArray(r.files)) {
      throw new Error('not a memoised report of this input');
    }
    return { status: 'hit', report: r, writes };
  } catch (e) {
    // Damaged or foreign: drop the entry (and bytes that failed their integrity check); reassemble.
    await dropEntry(storeDir, key, info.integrity, e);
    return { status: 'miss', writes };
  }
}

/** How many times the view's entry was written (0 when there is none). */
export async function viewReportWrites(storeDir: string, viewId: string, digestSchema: number): Promise<number> {
  const info = await entryInfo(storeDir, viewReportKey(viewId, digestSchema)).catch(() => null);
  const writes = (info?.metadata as { writes?: unknown } | undefined)?.writes;
  return typeof writes === 'number' ? writes : 0;
}

/** Replace the view's memoised report (best effort: a failed write costs the next run an assembly). */
export async function writeViewReport(storeDir: string, viewId: string, digestSchema: number, input: string, report: DigestReport, previousWrites: number): Promise<void> {
  const key = viewReportKey(viewId, digestSchema);
  const { stats: _stats, ...rest } = report;
  const writes = previousWrites + 1;
  const text = JSON.stringify({ kind: 'kiln-view-report', format: VIEW_REPORT_FORMAT, input, report: rest });
  await writeEntry(storeDir, key, Buffer.from(text, 'utf8'), { input, writes });
}
