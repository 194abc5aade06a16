/**
 * "Who is affected if this declaration changes": the targets `kiln affected` would run for a change to
 * one declaration of the working tree, by the same rules and the same reverse closure (closure.ts) —
 * the MCP server's `affected_by` tool asks it.
 *
 *   key    kiln's build of the declaring package always (its key covers every declaration); a
 *          dependent's build only through a declaration on the package's surface, and then only
 *          when its shape changes (a body edit under a written signature moves no dependent's key);
 *   full   the declaring package and every project whose dependency closure reaches it;
 *   files  the same set (any edit is a changed file).
 *
 * Invariants: a declaration kiln cannot find is reported as not found (never an empty "nothing is
 * affected"); chains name packages, never paths of this machine.
 */
import { diagnostic, KilnError } from '../diagnostics/diagnostic.js';
import { WorkspaceView } from '../view/workspace-view.js';
import type { DeclarationRecord } from '../view/report.js';
import { AllSources, chainsTo, dependencyGraph } from './closure.js';
import { EXECUTING, type AffectedTarget, type TargetRule } from './affected.js';

export interface DeclarationImpact {
  kind: 'kiln-affected-by';
  identity: string;
  package: string;
  /** Surface identities (entry#name) it is reachable under; empty for a private declaration. */
  surface: string[];
  affected: (AffectedTarget & { when: string })[];
}

export async function affectedByDeclaration(
  workspaceRoot: string,
  identity: string,
  options: { targets?: string[]; keyedTarget?: string | null; store?: string | false; workers?: number } = {},
): Promise<DeclarationImpact> {
  const targets = options.targets ?? ['build', 'test'];
  const keyedTarget = options.keyedTarget === undefined ? 'build' : options.keyedTarget;
  const view = await WorkspaceView.open(workspaceRoot, { ...(options.store !== undefined ? { store: options.store } : {}), ...(options.workers !== undefined ? { workers: options.workers } : {}) });
  try {
    const projects = view.projects.filter((p) => p.manifest);
    await view.load(projects);
    const sources = new AllSources(workspaceRoot);
    // The declaring package: by the identity's package part, then its sources (tests included).
    const pkgName = /^[a-z]+:(.*?)\/\//.exec(identity)?.[1];
    const owner = projects.find((p) => p.name === pkgName);
    let decl: DeclarationRecord | undefined;
    if (owner) {
      decl = view.packageAt(owner.root)?.report?.declarations.find((d) => d.identity === identity);
      decl ??= (await sources.of(view, owner))?.declarations.find((d) => d.identity === identity);
    }
    if (!owner || !decl) {
      throw new KilnError(diagnostic('KILN_GRAPH_NODE_NOT_FOUND', `${identity}: no such declaration in the working tree of ${pkgName ?? 'any package'} (an identity reads language:package//module#path:kind)`, { producer: 'affected' }));
    }
    const deps = await dependencyGraph(view, projects, sources);
    const nameOf = (root: string) => projects.find((q) => q.root === root)?.name ?? root;
    const onSurface = decl.surface.length > 0;
    const affected: DeclarationImpact['affected'] = [];
    for (const target of targets) {
      const keyed = target === keyedTarget;
      for (const p of projects) {
        const rule: TargetRule = keyed ? 'key' : EXECUTING.test(target) ? 'full' : 'files';
        let chains: string[][];
        let when: string;
        if (keyed && p.root !== owner.root) {
          if (!onSurface) continue;
          chains = chainsTo(deps, nameOf, p.root, (root) => (root === owner.root ? [`${identity}: on the surface as ${decl!.surface.slice(0, 3).join(', ')}`] : undefined));
          when = 'if its shape (what a consumer can observe of it) changes';
        } else {
          chains = chainsTo(deps, nameOf, p.root, (root) => (root === owner.root ? [`${identity} changes`] : undefined));
          when = keyed ? 'on any change of its meaning or documentation' : rule === 'full' ? 'on any change of its meaning' : 'on any edit, comments included';
        }
        if (chains.length) affected.push({ project: p.name, root: p.root, target, rule, when, reasons: chains.map((c) => [`${p.name}:${target}`, ...c]) });
      }
    }
    return { kind: 'kiln-affected-by', identity, package: owner.name, surface: decl.surface, affected };
  } finally {
    await view.close();
  }
}

/** One line per target: `@x/web:test ← @x/app (dependency) ← … [full, on any change of its meaning]`. */
export function formatDeclarationImpact(r: DeclarationImpact): string {
  const lines = [`${r.identity} (${r.package}; ${r.surface.length ? `surface: ${r.surface.join(', ')}` : 'private'})`];
  if (!r.affected.length) lines.push('nothing is affected');
  for (const a of r.affected) lines.push(`${a.reasons[0]!.join(' ← ')}  [${a.rule}, ${a.when}]`);
  return lines.join('\n');
}
