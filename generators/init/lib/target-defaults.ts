/**
 * Target defaults for the targets kiln keys where the workspace defines them. Nx applies
 * `targetDefaults.<target>.inputs` over what a plugin infers, so a workspace-wide `build` default
 * (`["production", "^production"]`) puts raw source bytes and every external dependency back into the
 * hash of a keyed target. Nx 24 takes an ordered array of filtered entries per target, last match
 * winning: kiln appends one for projects tagged `kiln-keyed` (the plugin tags every project whose
 * target it keyed) that keeps kiln's inputs, and the workspace's own entries for everything else.
 *
 * Environment and runtime inputs of the workspace's default are kept in kiln's entry: they are not
 * files kiln's key can cover. Idempotent. Pure: nx.json in, nx.json out.
 */
import { KILN_KEYED_TAG } from '../../../plugins/src/keyed-tag.js';

export const KILN_FILTER = { projects: [`tag:${KILN_KEYED_TAG}`] };

type Entry = Record<string, unknown>;

const isKilnEntry = (e: unknown) => !!e && typeof e === 'object' && JSON.stringify((e as Entry).filter) === JSON.stringify(KILN_FILTER);

/** Inputs of a default that no key can hold: environment variables and runtime commands. */
function nonFileInputs(entry: unknown): unknown[] {
  const inputs = entry && typeof entry === 'object' ? (entry as Entry).inputs : undefined;
  if (!Array.isArray(inputs)) return [];
  return inputs.filter((i) => !!i && typeof i === 'object' && ('env' in (i as Entry) || 'runtime' in (i as Entry)));
}

/**
 * The targetDefaults with kiln's filtered entry for each keyed target name. `arrays` is whether the
 * workspace's Nx understands the array form (Nx ≥ 24); where it does not, nothing changes and the
 * returned notes say what the user gives up.
 */
export function withKeyedTargetDefaults(targetDefaults: Record<string, unknown> | undefined, names: readonly string[], arrays: boolean): { targetDefaults: Record<string, unknown>; notes: string[] } {
  const out: Record<string, unknown> = { ...(targetDefaults ?? {}) };
  const notes: string[] = [];
  for (const name of names) {
    const existing = out[name];
    const entries: unknown[] = Array.isArray(existing) ? existing : existing === undefined ? [] : [existing];
    if (entries.some(isKilnEntry)) continue;
    const wsInputs = entries.filter((e) => !isKilnEntry(e)).flatMap(nonFileInputs);
    if (!arrays) {
      if (entries.some((e) => e && typeof e === 'object' && Array.isArray((e as Entry).inputs))) {
        notes.push(`targetDefaults.${name}.inputs apply over kiln's inputs on this Nx version (filtered target defaults need Nx 24): keyed ${name} targets still carry the key, but raw file bytes too — no semantic hits until the workspace moves to Nx 24 or drops those inputs.`);
      }
      continue;
    }
    out[name] = [...entries, { filter: KILN_FILTER, inputs: [{ externalDependencies: [] }, ...wsInputs] }];
  }
  return { targetDefaults: out, notes };
}

/**
 * Keyed targets whose own definition declares `inputs`: those win over target defaults and over what
 * kiln infers, so raw bytes stay in their hash. `files` maps a project.json or package.json path to
 * its parsed content. One line per target, naming the file.
 */
export function shadowedTargets(files: ReadonlyMap<string, unknown>, names: readonly string[]): { file: string; message: string }[] {
  const out: { file: string; message: string }[] = [];
  for (const [path, json] of files) {
    if (!json || typeof json !== 'object') continue;
    const j = json as Entry;
    const targets = path.endsWith('project.json') ? j.targets : j.nx && typeof j.nx === 'object' ? (j.nx as Entry).targets : undefined;
    if (!targets || typeof targets !== 'object') continue;
    for (const name of names) {
      const t = (targets as Entry)[name];
      if (t && typeof t === 'object' && Array.isArray((t as Entry).inputs)) {
        out.push({ file: path, message: `target "${name}" declares its own inputs ${JSON.stringify((t as Entry).inputs)}; they win over kiln's, so a comment edit will not be a cache hit there` });
      }
    }
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.message < b.message ? -1 : 1));
}
