/**
 * Text projections of reports. JSON output is the report itself, its diagnostics as diagnostic
 * envelopes (`jsonReport`); these are for people. Digests are shortened to 12 hex digits in text (the
 * JSON keeps them whole). Every diagnostic printed, in either format, is a projection of its envelope
 * (@kiln/core diagnostics/envelope.ts): text by `formatEnvelopeText`, JSON by the envelope itself.
 */
import { formatEnvelopeJson, formatEnvelopeText, toEnvelope, type DiagnosticEnvelope } from '@kiln/core/affected';
import type { DiffResult, DigestReport, Diagnostic, WorkspaceKeys } from '@kiln/core';

const short = (d: string | null | undefined) => (d ? d.slice(0, 12) : d === null ? 'null' : '-');

export function formatDigestText(r: DigestReport): string {
  const lines: string[] = [];
  const s = r.stats;
  lines.push(
    `${r.package}: ${r.files.length} files, ${r.declarations.length} declarations, digest_schema ${r.digest_schema}` +
      ` (parsed ${s.parsed}, store hits ${s.storeHits}, ${s.workers} worker${s.workers === 1 ? '' : 's'}, ${s.ms} ms` +
      `${s.sync === 'git' ? `; synced from git, ${s.vouched ?? 0} file${s.vouched === 1 ? '' : 's'} unread` : ''})`,
  );
  const byFile = new Map<string, typeof r.declarations>();
  for (const d of r.declarations) {
    const list = byFile.get(d.span.file) ?? [];
    list.push(d);
    byFile.set(d.span.file, list);
  }
  for (const f of r.files) {
    lines.push('');
    lines.push(`${f.path}  [${f.language}]  module ${short(f.module.digest)}${f.module.degraded ? `  (degraded: ${f.module.degraded})` : ''}`);
    for (const d of byFile.get(f.path) ?? []) {
      const span = `${d.span.startLine}:${d.span.startColumn}-${d.span.endLine}:${d.span.endColumn}`;
      lines.push(`  ${d.identity}`);
      lines.push(
        `      kind ${d.kind}  language ${d.language}  semantic ${d.semantic_digest === null ? 'null (unparseable: counts as changed)' : short(d.semantic_digest)}  doc ${d.doc_digest ? short(d.doc_digest) : '-'}  schema ${d.digest_schema}  span ${d.span.file}:${span}` +
          (d.degraded ? `  degraded ${d.degraded}` : '') +
          (d.surface.length ? `  surface ${d.surface.join(', ')}` : ''),
      );
    }
  }
  return lines.join('\n');
}

const STATUS_ORDER = ['changed', 'added', 'removed', 'moved', 'redocumented', 'unchanged'] as const;

export function formatDiffText(d: DiffResult, showUnchanged: boolean): string {
  const lines: string[] = [];
  for (const status of STATUS_ORDER) {
    const items = d.declarations.filter((c) => c.status === status);
    if (!items.length) continue;
    if (status === 'unchanged' && !showUnchanged) continue;
    lines.push(`${status} (${items.length})`);
    for (const c of items) {
      lines.push(`  ${c.identity}`);
      lines.push(`      ${c.reason}${c.stale ? '  [stale: matched under the previous digest schema]' : ''}`);
    }
    lines.push('');
  }
  const moduleChanges = d.modules.filter((m) => m.status !== 'unchanged');
  if (moduleChanges.length) {
    lines.push(`modules (${moduleChanges.length} of ${d.modules.length} changed at module level)`);
    for (const m of moduleChanges) lines.push(`  ${m.status.padEnd(12)} ${m.module}: ${m.reason}`);
    lines.push('');
  }
  const c = d.counts;
  lines.push(
    `summary: ${c.changed} changed, ${c.added} added, ${c.removed} removed, ${c.moved} moved, ${c.redocumented} re-documented, ${c.unchanged} unchanged` +
      (showUnchanged ? '' : c.unchanged ? ' (use --all to list unchanged)' : ''),
  );
  return lines.join('\n');
}

/** A diagnostic or an envelope (one read back from a recorded report) as its envelope. */
export function envelopeOf(d: Diagnostic | DiagnosticEnvelope): DiagnosticEnvelope {
  return 'envelope' in d ? d : toEnvelope(d);
}

/**
 * Diagnostics for stderr: the text projection of each envelope, or with `--format json` the envelopes
 * themselves, one per line (JSON Lines).
 */
export function formatDiagnostics(ds: readonly (Diagnostic | DiagnosticEnvelope)[], format: string = 'text'): string {
  const envelopes = ds.map(envelopeOf);
  return format === 'json' ? envelopes.map(formatEnvelopeJson).join('\n') : envelopes.map(formatEnvelopeText).join('\n');
}

/**
 * A report for `--format json`: the report itself, its `diagnostics` (and each project's, in `kiln keys`)
 * as envelopes. No replacer function: a digest report can hold tens of thousands of declarations.
 */
export function jsonReport(report: object): string {
  return JSON.stringify(withEnvelopes(report), null, 2);
}

function withEnvelopes(o: object): object {
  const out: Record<string, unknown> = { ...o };
  if (Array.isArray(out['diagnostics'])) out['diagnostics'] = (out['diagnostics'] as (Diagnostic | DiagnosticEnvelope)[]).map(envelopeOf);
  if (Array.isArray(out['projects'])) out['projects'] = (out['projects'] as unknown[]).map((p) => (typeof p === 'object' && p !== null && 'diagnostics' in p ? withEnvelopes(p) : p));
  return out;
}

export function formatKeysText(k: WorkspaceKeys): string {
  const lines: string[] = [`${k.kind} workspace: ${k.projects.length} projects, ${k.stats.files} files (parsed ${k.stats.parsed}), ${k.stats.ms} ms`];
  for (const p of k.projects) {
    lines.push('');
    if (!p.key || !p.components) {
      lines.push(`${p.project}  (${p.root})  no build key: ${p.diagnostics.map((d) => d.code).join(', ') || 'not a TypeScript library'}`);
      continue;
    }
    const c = p.components;
    lines.push(`${p.project}  (${p.root})  build key ${short(p.key)}`);
    lines.push(`  own          ${Object.keys(c.declarations).length} declarations, ${Object.keys(c.modules).length} modules${Object.keys(c.files).length ? `, ${Object.keys(c.files).length} other files` : ''}`);
    for (const [name, s] of Object.entries(c.dependencies)) {
      lines.push(`  dependency   ${name}  surface ${short(s.digest)} (${s.mode}${s.mode === 'surface' ? `, ${Object.keys(s.exports).length} exports` : `: ${s.reason}`})`);
    }
    lines.push(`  manifest     ${short(c.manifest?.digest)}  fields ${Object.keys(c.manifest?.fields ?? {}).join(', ') || '-'}; dependencies ${c.manifest?.dependencies.join(', ') || '-'}`);
    lines.push(`  tsconfig     ${c.tsconfig?.file ?? '-'} ${short(c.tsconfig?.digest)}`);
    const ext = Object.entries(c.externals);
    // With the number of packages each one's lockfile closure holds (`react@18.3.1 (+1)`).
    const deps = (n: string) => (c.closures?.[n] ? ` (+${c.closures[n]!.packages.length}${c.closures[n]!.widened ? ', whole lockfile' : ''})` : '');
    lines.push(`  externals    ${ext.length ? ext.map(([n, v]) => `${n}@${v}${deps(n)}`).join(', ') : '-'}`);
    lines.push(`  toolchain    ${Object.entries(c.toolchain).map(([n, v]) => `${n} ${v}`).join(', ')}`);
    if (p.surface) lines.push(`  offers       surface ${short(p.surface.digest)} (${p.surface.mode})`);
  }
  for (const p of k.projects) {
    for (const [name, t] of Object.entries(p.targets ?? {})) {
      const c = t.components;
      lines.push('');
      lines.push(`${p.project}:${name}  (${p.root})  target key ${short(t.key)}  — ${c.command.split('\n')[0]}`);
      lines.push(`  own          ${Object.keys(c.declarations).length} declarations, ${Object.keys(c.modules).length} modules, ${Object.keys(c.files).length} other files (by content)`);
      lines.push(`  tools        ${Object.entries(c.tools).map(([n, v]) => `${n}@${v}`).join(', ') || '-'}; workspace dependencies ${c.bundles === 'never' ? 'by surface (never bundled)' : c.bundles === 'all' ? 'bundled (full closure)' : c.bundles === 'vite-config' ? `external where vite's config says so (${c.viteExternal?.join(', ') || 'none'}), else bundled` : 'external where runtime dependencies, else bundled'}`);
      for (const [dep, s] of Object.entries(c.dependencies)) lines.push(`  dependency   ${dep}  ${short(s.digest)} (${s.mode}${s.reason ? `: ${s.reason}` : ''})`);
    }
  }
  return lines.join('\n');
}
