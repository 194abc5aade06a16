/**
 * `kiln inspect representation <pkg|tarball|dir>`: what a package's executable representation holds
 * (SPEC §7) — its format version, producer, package and version, requirements, the coverage of every
 * indexed entry (covered, or uncovered with its reason code and detail), and the manifest's public
 * identities the index does not mention. It reports rather than refuses: a package that publishes none
 * says "none published", a format version this kiln cannot read says "unreadable version" with the
 * version found; only a damaged file is a failure (exit 1).
 *
 * The manifest's public surface is computed by kiln's own facts over the package directory (its
 * sources, or its published `.d.ts`); when that is not possible the report says so instead of
 * claiming nothing is missing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { KilnError } from '@kiln/core/affected';
import { isRepError, openRepresentation, representationPath, type RepEntry, type RepHeader } from '@kiln/runtime';
import { EXIT_FAILURE, type Io, type SetExit } from '../common.js';
import { openPackageDir } from '../lib/package-dir.js';
import { repDiagnostic } from './call.js';

export interface RepresentationReport {
  kind: 'kiln-representation-report';
  package: string;
  file: string;
  status: 'ok' | 'none-published' | 'unreadable-version';
  header?: RepHeader;
  /** For an unreadable version: the version the file declares and the one this kiln reads. */
  found_format?: number;
  entries?: { surface: string; declaring: string; kind: string; covered: boolean; payload?: string; export?: string; reason?: string; detail?: string }[];
  counts?: { entries: number; covered: number; uncovered: Record<string, number>; payloads: number; bytes: number };
  /** Public identities of the manifest that the index does not mention; null when they could not be computed. */
  missing: string[] | null;
  missing_note?: string;
}

export function registerInspect(program: Command, io: Io, setExit: SetExit): void {
  const inspectCmd = program.command('inspect').description('inspect what kiln published or built');
  inspectCmd
    .command('representation')
    .description("a package's executable representation: format version, coverage of every entry with reasons, manifest identities missing from the index")
    .argument('<package>', 'an installed package name, a package directory, or an npm tarball (.tgz)')
    .option('--from <dir>', 'where an installed package is looked up (node_modules from there up)', '.')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (what: string, o: { from: string; format: 'text' | 'json' }) => {
      const pkg = openPackageDir(what, o.from === '.' ? process.cwd() : o.from);
      try {
        const report = await inspectRepresentation(pkg.dir, what);
        io.out(o.format === 'json' ? JSON.stringify(report, null, 2) : formatReport(report));
      } catch (e) {
        if (isRepError(e)) {
          setExit(EXIT_FAILURE);
          throw new KilnError(repDiagnostic(e));
        }
        throw e;
      } finally {
        pkg.dispose();
      }
    });
}

export async function inspectRepresentation(dir: string, named: string): Promise<RepresentationReport> {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const file = representationPath(dir, manifest);
  const label = typeof manifest.name === 'string' ? `${manifest.name}${typeof manifest.version === 'string' ? `@${manifest.version}` : ''}` : named;
  const rel = file.slice(dir.length + 1);
  const missingOf = async (entries: RepEntry[] | undefined) => {
    try {
      const { readPublicSurface } = await import('@kiln/core');
      const surface = await readPublicSurface(dir, { store: false, workers: 0 });
      const indexed = new Set((entries ?? []).map((e) => e.surface));
      if (surface.items.length === 0 && indexed.size > 0) {
        // Nothing here to read the surface from (no sources, no .d.ts): "none missing" would be a claim.
        return { missing: null, missing_note: 'the package directory holds no sources or declaration files to compute its public surface from' };
      }
      return { missing: surface.items.map((i) => i.surface).filter((s) => !indexed.has(s)).sort() };
    } catch (e) {
      return { missing: null, missing_note: `the manifest's public surface could not be computed: ${(e as Error).message}` };
    }
  };
  let reader;
  try {
    reader = openRepresentation(file, typeof manifest.version === 'string' ? { version: manifest.version } : {});
  } catch (e) {
    if (isRepError(e) && e.code === 'KILN_REP_NOT_FOUND') return { kind: 'kiln-representation-report', package: label, file: rel, status: 'none-published', ...(await missingOf(undefined)) };
    if (isRepError(e) && e.code === 'KILN_REP_UNSUPPORTED_VERSION') {
      const found = /format(?: version)? (\d+)/.exec(e.message);
      return { kind: 'kiln-representation-report', package: e.package ?? label, file: rel, status: 'unreadable-version', ...(found ? { found_format: Number(found[1]) } : {}), missing: null, missing_note: `${e.message}` };
    }
    throw e;
  }
  try {
    const entries = reader.entries();
    const payloadName = (i: number) => reader.payloadInfo(i).name;
    const uncovered: Record<string, number> = {};
    let covered = 0;
    const rows = entries.map((e) => {
      if (e.coverage.covered) {
        covered++;
        return { surface: e.surface, declaring: e.declaring, kind: e.kind, covered: true, payload: payloadName(e.coverage.payload), export: e.coverage.export };
      }
      uncovered[e.coverage.reason] = (uncovered[e.coverage.reason] ?? 0) + 1;
      return { surface: e.surface, declaring: e.declaring, kind: e.kind, covered: false, reason: e.coverage.reason, detail: e.coverage.detail };
    });
    return {
      kind: 'kiln-representation-report',
      package: reader.header.package,
      file: rel,
      status: 'ok',
      header: reader.header,
      entries: rows,
      counts: { entries: entries.length, covered, uncovered, payloads: reader.payloadCount, bytes: reader.sections.total },
      ...(await missingOf(entries)),
    };
  } finally {
    reader.close();
  }
}

export function formatReport(r: RepresentationReport): string {
  const lines: string[] = [];
  if (r.status === 'none-published') {
    lines.push(`${r.package}: none published (no ${r.file})`);
  } else if (r.status === 'unreadable-version') {
    lines.push(`${r.package}: ${r.file} has an unreadable version${r.found_format !== undefined ? ` (format ${r.found_format})` : ''}: ${r.missing_note ?? ''}`);
    return lines.join('\n');
  } else {
    const h = r.header!;
    const c = r.counts!;
    lines.push(`${h.package}@${h.version}: ${r.file}, format ${h.format}, by ${h.producer}`);
    lines.push(`requires node >= ${h.requirements.node}${h.requirements.features.length ? `, features ${h.requirements.features.join(', ')}` : ''}`);
    lines.push(`${c.entries} entries: ${c.covered} covered, ${c.entries - c.covered} uncovered; ${c.payloads} payloads, ${c.bytes} bytes`);
    lines.push('');
    for (const e of r.entries!) lines.push(e.covered ? `  covered    ${e.surface}  (${e.kind}) → ${e.payload}${e.export && e.export !== 'value' ? ` .${e.export}` : ''}` : `  uncovered  ${e.surface}  (${e.kind}) ${e.reason}: ${e.detail}`);
  }
  lines.push('');
  if (r.missing === null) lines.push(`manifest identities missing from the index: not checked (${r.missing_note})`);
  else if (r.missing.length === 0) lines.push('manifest identities missing from the index: none');
  else {
    lines.push(`manifest identities missing from the index (${r.missing.length}):`);
    for (const m of r.missing) lines.push(`  ${m}`);
  }
  return lines.join('\n');
}
