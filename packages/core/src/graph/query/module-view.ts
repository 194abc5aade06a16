/**
 * `kiln graph module <path>`: one module — its file, its declarations (nested ones under their parent),
 * its imports (specifier, bindings, resolved target), its exports (name → declarations), the modules
 * that import it, and the diagnostics about it.
 *
 * Invariants: pure over a GraphIndex; deterministic (declarations in source order then path; imports by
 * specifier; exports by name; importers by module path; all ties by id in code-point order).
 */
import { graphDiagnosticOf, type GraphDiagnosticView } from './diagnostic.js';
import type { GraphIndex } from './graph-index.js';
import { resolveModule } from './lookup.js';
import { anchorOf, byCodePoint, declKindOf, declPathOf, fileOf, isPublic, nameOf, packageRefOf, type QueryRecord } from './model.js';

export interface ModuleView {
  kind: 'kiln-graph-module';
  id: string;
  path: string;
  file: string | null;
  package: string | null;
  provenance: string | null;
  degraded: boolean;
  internal: boolean | null;
  declarations: {
    id: string;
    path: string;
    decl_kind: string | null;
    exported: boolean;
    surface: string[];
    anchor: string | null;
    provenance: string | null;
    degraded: boolean;
  }[];
  imports: {
    id: string;
    specifier: string;
    bindings: string[];
    target: string | null;
    target_path: string | null;
    external: boolean;
    type_only: boolean;
    anchor: string | null;
  }[];
  exports: { id: string; name: string; targets: string[] }[];
  imported_by: { id: string; path: string; via: string[] }[];
  /** The diagnostics about the module or its declarations, as the diagnostic envelope (graph/query/diagnostic.ts). */
  diagnostics: GraphDiagnosticView[];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function bindingText(b: unknown): string | undefined {
  if (typeof b === 'string') return b;
  if (b && typeof b === 'object') {
    const { imported, local } = b as { imported?: unknown; local?: unknown };
    if (typeof imported === 'string') return typeof local === 'string' && local !== imported ? `${imported} as ${local}` : imported;
  }
  return undefined;
}

export function moduleView(index: GraphIndex, ref: string): ModuleView {
  const m = resolveModule(index, ref);
  const members = index.inModule(m.id).map((id) => index.node(id)!);

  const decls = members.filter((r) => r.kind === 'declaration');
  decls.sort((a, b) => (a.span?.startLine ?? 0) - (b.span?.startLine ?? 0) || byCodePoint(declPathOf(a) ?? '', declPathOf(b) ?? '') || byCodePoint(a.id, b.id));

  const imports = members
    .filter((r) => r.kind === 'import')
    .map((r) => {
      const target = typeof r.target === 'string' ? r.target : null;
      const t = target ? index.node(target) : undefined;
      const bindings = Array.isArray(r.bindings) ? r.bindings.map(bindingText).filter((x): x is string => !!x) : [];
      for (const re of Array.isArray(r.reexports) ? r.reexports : []) {
        const { imported, exported } = re as { imported?: unknown; exported?: unknown };
        if (typeof imported === 'string') bindings.push(`re-export ${imported}${typeof exported === 'string' && exported !== imported ? ` as ${exported}` : ''}`);
      }
      if (r.reexport_all === true) bindings.push('re-export *');
      return {
        id: r.id,
        specifier: typeof r.specifier === 'string' ? r.specifier : nameOf(r),
        bindings,
        target,
        target_path: t ? nameOf(t) : null,
        external: r.external === true,
        type_only: r.type_only === true,
        anchor: anchorOf(r) ?? null,
      };
    })
    .sort((a, b) => byCodePoint(a.specifier, b.specifier) || byCodePoint(a.id, b.id));

  const exports = members
    .filter((r) => r.kind === 'export')
    .map((r) => ({ id: r.id, name: nameOf(r), targets: strings(r.targets).sort(byCodePoint) }))
    .sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a.id, b.id));

  const importedBy = index
    .adjacent(m.id, { kinds: ['imports'], direction: 'in' })
    .map((a) => {
      const from = index.node(a.other);
      return { id: a.other, path: from ? nameOf(from) : a.other, via: strings(a.edge.record.via) };
    })
    .sort((a, b) => byCodePoint(a.path, b.path) || byCodePoint(a.id, b.id));

  const diagIds = new Set<string>(members.filter((r) => r.kind === 'diagnostic').map((r) => r.id));
  for (const id of [m.id, ...decls.map((d) => d.id)]) for (const a of index.adjacent(id, { kinds: ['diagnoses'], direction: 'in' })) diagIds.add(a.other);
  const diagnostics = [...diagIds]
    .map((id) => index.node(id))
    .filter((d): d is QueryRecord => !!d)
    .map(graphDiagnosticOf)
    .sort((a, b) => byCodePoint(a.anchor ?? '', b.anchor ?? '') || byCodePoint(a.id, b.id));

  return {
    kind: 'kiln-graph-module',
    id: m.id,
    path: nameOf(m),
    file: fileOf(m) ?? null,
    package: packageRefOf(m) ?? null,
    provenance: typeof m.provenance === 'string' ? m.provenance : null,
    degraded: m.degraded === true,
    internal: typeof m.internal === 'boolean' ? m.internal : null,
    declarations: decls.map((d) => ({
      id: d.id,
      path: declPathOf(d) ?? nameOf(d),
      decl_kind: declKindOf(d) ?? null,
      exported: isPublic(d),
      surface: strings(d.surface),
      anchor: anchorOf(d) ?? null,
      provenance: typeof d.provenance === 'string' ? d.provenance : null,
      degraded: d.degraded === true,
    })),
    imports,
    exports,
    imported_by: importedBy,
    diagnostics,
  };
}
