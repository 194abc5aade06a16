/**
 * Why a key moved, in words a person reads: compare the components recorded for the last build
 * with the current ones, and name what changed — declarations (semantic vs documentation), module
 * evaluation order, files, tsconfig options, manifest fields, external versions, toolchain, and
 * dependency surfaces down to the exports whose closure moved. "What changed, not what was touched."
 */
import type { ToolKeyComponents } from './tool-key.js';
import type { DependencySurface, KeyComponents } from './unit-key.js';

export type ChangeCategory = 'declaration' | 'documentation' | 'module' | 'file' | 'tsconfig' | 'manifest' | 'external' | 'toolchain' | 'dependency' | 'reach' | 'command' | 'tool' | 'env';

export interface KeyChange {
  category: ChangeCategory;
  /** What it is about: an identity, a module, an option, a field, a package. */
  subject: string;
  change: 'added' | 'removed' | 'changed';
  /** In words. */
  detail: string;
}

export function explainKeyChange(before: KeyComponents, after: KeyComponents): KeyChange[] {
  const out: KeyChange[] = [];
  // Declarations: `semantic|doc` or `degraded:<hash>`.
  for (const [id, change, a, b] of diffRecords(before.declarations, after.declarations)) {
    if (change !== 'changed') {
      out.push({ category: 'declaration', subject: id, change, detail: change === 'added' ? 'new declaration' : 'declaration removed' });
      continue;
    }
    const [sa, da] = split(a!);
    const [sb, db] = split(b!);
    if (a!.startsWith('degraded:') || b!.startsWith('degraded:')) out.push({ category: 'declaration', subject: id, change, detail: 'could not be digested (syntax error or too deep): counts as changed' });
    else if (sa !== sb) out.push({ category: 'declaration', subject: id, change, detail: 'semantic digest moved (its meaning changed)' });
    else if (da !== db) out.push({ category: 'documentation', subject: id, change, detail: 'documentation changed (the .d.ts carries it)' });
  }
  for (const [m, change] of diffRecords(before.modules, after.modules)) {
    out.push({ category: 'module', subject: m, change, detail: change === 'changed' ? 'evaluation order, pragmas or top-level statements changed' : `module ${change}` });
  }
  for (const [f, change] of diffRecords(before.files, after.files)) out.push({ category: 'file', subject: f, change, detail: `imported non-source file ${change}` });
  if ((before.tsconfig?.digest ?? null) !== (after.tsconfig?.digest ?? null)) {
    const oa = before.tsconfig?.options ?? {};
    const ob = after.tsconfig?.options ?? {};
    const keys = [...new Set([...Object.keys(oa), ...Object.keys(ob)])].sort();
    const moved = keys.filter((k) => JSON.stringify(oa[k]) !== JSON.stringify(ob[k]));
    if (before.tsconfig?.file !== after.tsconfig?.file) out.push({ category: 'tsconfig', subject: 'file', change: 'changed', detail: `${before.tsconfig?.file} → ${after.tsconfig?.file}` });
    for (const k of moved) out.push({ category: 'tsconfig', subject: k, change: k in oa ? (k in ob ? 'changed' : 'removed') : 'added', detail: `${JSON.stringify(oa[k])} → ${JSON.stringify(ob[k])}` });
  }
  if ((before.manifest?.digest ?? null) !== (after.manifest?.digest ?? null)) {
    const fa = before.manifest?.fields ?? {};
    const fb = after.manifest?.fields ?? {};
    for (const k of [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort()) {
      if (JSON.stringify(fa[k]) !== JSON.stringify(fb[k])) out.push({ category: 'manifest', subject: k, change: k in fa ? (k in fb ? 'changed' : 'removed') : 'added', detail: `package.json "${k}" changed` });
    }
    for (const [kind, a, b] of [
      ['dependencies', before.manifest?.dependencies ?? [], after.manifest?.dependencies ?? []],
      ['devDependencies', before.manifest?.devDependencies ?? [], after.manifest?.devDependencies ?? []],
    ] as const) {
      for (const n of b.filter((x) => !a.includes(x))) out.push({ category: 'manifest', subject: `${kind}.${n}`, change: 'added', detail: `${n} added to ${kind}` });
      for (const n of a.filter((x) => !b.includes(x))) out.push({ category: 'manifest', subject: `${kind}.${n}`, change: 'removed', detail: `${n} removed from ${kind}` });
    }
  }
  for (const [p, change, a, b] of diffRecords(before.externals, after.externals)) {
    out.push({ category: 'external', subject: p, change, detail: change === 'changed' ? `${p} ${a} → ${b} (lockfile)` : `${p} ${change}` });
  }
  // Transitive dependencies of an external whose own version stayed (records before key schema 3 have none).
  if (before.closures && after.closures) {
    for (const [p, change, a, b] of diffRecords(before.closures, after.closures, (x) => x.digest)) {
      if (change !== 'changed' || before.externals[p] !== after.externals[p]) continue;
      out.push({ category: 'external', subject: p, change, detail: closureDetail(p, a!.packages, b!.packages, b!.widened) });
    }
  }
  for (const [t, change, a, b] of diffRecords(before.toolchain, after.toolchain)) {
    out.push({ category: 'toolchain', subject: t, change, detail: `${t}: ${a ?? '-'} → ${b ?? '-'}` });
  }
  for (const [dep, change, a, b] of diffRecords(before.dependencies, after.dependencies, (x) => x.digest)) {
    if (change !== 'changed') {
      out.push({ category: 'dependency', subject: dep, change, detail: `workspace dependency ${change}` });
      continue;
    }
    out.push({ category: 'dependency', subject: dep, change, detail: surfaceDetail(a!, b!) });
  }
  // What the build reaches without a named import (view/reach.ts): records made before it existed have none.
  for (const [request, change, a, b] of diffRecords(before.reach ?? {}, after.reach ?? {})) {
    out.push({ category: 'reach', subject: request, change, detail: change === 'changed' ? `now resolves to ${b} (was ${a})` : change === 'added' ? `new: resolves to ${b}` : `no longer made (resolved to ${a})` });
  }
  return out;
}

/** The same for the key of a target kiln does not run (key/tool-key.ts). */
export function explainToolKeyChange(before: ToolKeyComponents, after: ToolKeyComponents): KeyChange[] {
  const out: KeyChange[] = [];
  for (const [id, change, a, b] of diffRecords(before.declarations, after.declarations)) {
    if (change !== 'changed') out.push({ category: 'declaration', subject: id, change, detail: change === 'added' ? 'new declaration' : 'declaration removed' });
    else if (a!.startsWith('degraded:') || b!.startsWith('degraded:')) out.push({ category: 'declaration', subject: id, change, detail: 'could not be digested (syntax error or too deep): counts as changed' });
    else if (split(a!)[0] !== split(b!)[0]) out.push({ category: 'declaration', subject: id, change, detail: 'semantic digest moved (its meaning changed)' });
    else out.push({ category: 'documentation', subject: id, change, detail: 'documentation changed (the output may carry it)' });
  }
  for (const [m, change] of diffRecords(before.modules, after.modules)) out.push({ category: 'module', subject: m, change, detail: change === 'changed' ? 'evaluation order, pragmas or top-level statements changed' : `module ${change}` });
  for (const [f, change] of diffRecords(before.files, after.files)) out.push({ category: 'file', subject: f, change, detail: `file the tool can read ${change}` });
  if (before.command !== after.command) out.push({ category: 'command', subject: after.target, change: 'changed', detail: `${JSON.stringify(before.command)} → ${JSON.stringify(after.command)}` });
  if (before.bundles !== after.bundles) out.push({ category: 'command', subject: 'bundling', change: 'changed', detail: `workspace dependencies ${before.bundles} → ${after.bundles}` });
  else if (JSON.stringify(before.viteExternal ?? []) !== JSON.stringify(after.viteExternal ?? [])) out.push({ category: 'command', subject: 'bundling', change: 'changed', detail: `kept external by vite's config: ${(before.viteExternal ?? []).join(', ') || 'none'} → ${(after.viteExternal ?? []).join(', ') || 'none'}` });
  for (const [t, change, a, b] of diffRecords(before.tools, after.tools)) out.push({ category: 'tool', subject: t, change, detail: `${t}: ${a ?? '-'} → ${b ?? '-'}` });
  for (const [t, change] of diffRecords(before.tsconfigs ?? {}, after.tsconfigs ?? {})) out.push({ category: 'tsconfig', subject: t, change, detail: `resolved compiler options of ${t} ${change}` });
  for (const [n, change] of diffRecords(before.env, after.env)) out.push({ category: 'env', subject: n, change, detail: `environment variable ${n} ${change === 'changed' ? 'has another value' : change}` });
  if (before.manifest !== after.manifest) out.push({ category: 'manifest', subject: 'package.json', change: 'changed', detail: 'the manifest changed (beyond its version and other scripts)' });
  if ((before.tsconfig?.digest ?? null) !== (after.tsconfig?.digest ?? null)) out.push({ category: 'tsconfig', subject: after.tsconfig?.file ?? before.tsconfig?.file ?? 'tsconfig', change: 'changed', detail: 'resolved compiler options changed' });
  for (const [p, change, a, b] of diffRecords(before.externals, after.externals)) out.push({ category: 'external', subject: p, change, detail: change === 'changed' ? `${p} ${a} → ${b} (lockfile)` : `${p} ${change}` });
  for (const [p, change, a, b] of diffRecords(before.closures ?? {}, after.closures ?? {}, (x) => x.digest)) {
    if (change === 'changed') out.push({ category: 'external', subject: p, change, detail: closureDetail(p, a!.packages, b!.packages, b!.widened) });
  }
  for (const [dep, change, a, b] of diffRecords(before.dependencies, after.dependencies, (x) => x.digest)) {
    out.push({ category: 'dependency', subject: dep, change, detail: change === 'changed' ? surfaceDetail(a!, b!) : `workspace dependency ${change}` });
  }
  return out;
}

/** `name`'s dependency closure moved: which instances came and went (`csstype@3.1.2 → 3.1.3`). */
function closureDetail(name: string, a: string[], b: string[], widened: string | undefined): string {
  const gone = a.filter((x) => !b.includes(x));
  const came = b.filter((x) => !a.includes(x));
  const nameOf = (l: string) => l.slice(0, l.indexOf('@', l.startsWith('@') ? 1 : 0));
  const moves: string[] = [];
  for (const c of came) {
    const g = gone.find((x) => nameOf(x) === nameOf(c));
    moves.push(g ? `${g} → ${c.slice(nameOf(c).length + 1)}` : `+${c}`);
  }
  for (const g of gone) if (!came.some((c) => nameOf(c) === nameOf(g))) moves.push(`-${g}`);
  const what = moves.length ? `: ${moves.slice(0, 6).join(', ')}${moves.length > 6 ? ` and ${moves.length - 6} more` : ''}` : ' (an integrity, a resolution or an edge between them)';
  return `transitive dependencies of ${name} changed in the lockfile${what}${widened ? ` — the lockfile is not resolved exactly (${widened})` : ''}`;
}

function surfaceDetail(a: DependencySurface, b: DependencySurface): string {
  if (a.mode !== b.mode) return `surface now computed as ${b.mode}${b.reason ? ` (${b.reason})` : ''}`;
  if (b.mode === 'full') return `its whole content changed (surface could not be followed: ${b.reason ?? 'unknown'})`;
  const moved: string[] = [];
  for (const [name, change] of diffRecords(a.exports, b.exports)) moved.push(change === 'changed' ? name : `${name} (${change})`);
  if (!moved.length) return 'its surface moved outside its exports: a package it re-exports or mentions, its manifest or emit options, an augmentation or global declaration, an imported asset, or what its sources reach';
  return `public surface changed: ${moved.slice(0, 6).join(', ')}${moved.length > 6 ? ` and ${moved.length - 6} more` : ''}`;
}

function split(v: string): [string, string] {
  const i = v.indexOf('|');
  return i === -1 ? [v, ''] : [v.slice(0, i), v.slice(i + 1)];
}

function diffRecords<T>(
  a: Record<string, T> | undefined,
  b: Record<string, T> | undefined,
  id: (x: T) => unknown = (x) => JSON.stringify(x),
): [string, 'added' | 'removed' | 'changed', T | undefined, T | undefined][] {
  // A field a recorded record lacks (written by another kiln version, or for the other kind of key —
  // a target that moved from a build key to a tool key) reads as empty: everything in it is "added".
  a ??= {};
  b ??= {};
  const out: [string, 'added' | 'removed' | 'changed', T | undefined, T | undefined][] = [];
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!(k in a)) out.push([k, 'added', undefined, b[k]]);
    else if (!(k in b)) out.push([k, 'removed', a[k], undefined]);
    else if (id(a[k]!) !== id(b[k]!)) out.push([k, 'changed', a[k], b[k]]);
  }
  return out;
}
