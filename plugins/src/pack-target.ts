/**
 * The inferred `pack` target: the npm tarball of a library kiln builds (executor `@kiln/nx:pack`),
 * written under `dist/packs/<projectRoot>/` at the workspace root, after the project's own build.
 *
 * Its hash must cover everything the tarball holds and nothing else, so that a comment-only edit (a
 * semantic hit of the build, whose outputs Nx restores unchanged) is a hit of the pack too, while a
 * `version` bump is not:
 *   - the whole manifest (`{projectRoot}/package.json`: name, version, files, dependencies all land in
 *     the tarball) and npm's ignore files: `.npmignore` and `.gitignore` in the package (any folder of
 *     it) and in the workspace root and every folder between (npm applies a workspace's ignore files
 *     from the root down: a root `dist` line leaves the build out of a package without `files`);
 *   - the files npm always adds from the package root (README, LICENSE/LICENCE, COPYING: the ones
 *     present when the graph was built, plus their usual spellings);
 *   - the build's outputs, by content (`dependentTasksOutputFiles` of the non-transitive dependency on
 *     the build task: the JS, .d.ts, maps and kiln.rep as the build wrote or restored them);
 *   - what else `files` publishes from the package root (e.g. `"files": ["dist", "assets"]` adds
 *     `assets`); with no `files`, npm publishes the whole directory, sources included, so every file of
 *     the project is an input (a comment edit then changes the tarball, and the pack reruns);
 *   - no external dependencies (`externalDependencies: []`: the lockfile is not in a tarball).
 *
 * Invariant: its outputs are its own (the plugin refuses to add it where another target declares an
 * overlapping output), and no per-state key in the options (Nx hashes every target's configuration into
 * every task of the project; see codegraph-target.ts).
 */
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { TargetConfiguration } from '@nx/devkit';

export const KILN_PACK_EXECUTOR = '@kiln/nx:pack';

/** Files npm packs from a package root whatever `files` says (npm-packlist's always-included names). */
const ALWAYS = /^(readme|license|licence|copying)(\..*)?$/i;

export function packOutput(): string {
  return '{workspaceRoot}/dist/packs/{projectRoot}';
}

/** The target's inputs, given the manifest and the build's output directory (project-relative, POSIX). */
export function packInputs(workspaceRoot: string, root: string, manifest: Record<string, unknown>, buildOutDir: string): TargetConfiguration['inputs'] {
  const inputs: NonNullable<TargetConfiguration['inputs']> = ['{projectRoot}/package.json', '{projectRoot}/.npmignore'];
  // npm's ignore files, wherever npm reads them for this package: its own folders, then the workspace root
  // and every folder down to it.
  inputs.push('{projectRoot}/**/.npmignore', '{projectRoot}/**/.gitignore');
  const parts = posix.normalize(root.split('\\').join('/')).split('/').filter((x) => x && x !== '.');
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    for (const f of ['.npmignore', '.gitignore']) inputs.push(dir ? `{workspaceRoot}/${dir}/${f}` : `{workspaceRoot}/${f}`);
  }
  const always = new Set(['{projectRoot}/README*', '{projectRoot}/LICENSE*', '{projectRoot}/LICENCE*']);
  try {
    for (const f of readdirSync(join(workspaceRoot, root))) if (ALWAYS.test(f)) always.add(`{projectRoot}/${f}`);
  } catch {
    // no directory listing: the usual spellings only
  }
  inputs.push(...[...always].sort());
  const files = manifest.files;
  if (!Array.isArray(files)) {
    // npm publishes the whole package directory (minus its ignore rules): all of it is an input.
    inputs.push('{projectRoot}/**/*');
  } else {
    const out = posix.normalize(buildOutDir).replace(/^\.\/|\/$/g, '');
    for (const f of files) {
      if (typeof f !== 'string' || f.startsWith('!')) continue; // a negation only narrows: over-approximating is safe
      const n = posix.normalize(f).replace(/^\.\/|^\/|\/$/g, '');
      if (n === '' || n === '.' || n.startsWith('../')) {
        inputs.push('{projectRoot}/**/*');
        continue;
      }
      // Inside the build's output directory: hashed through the build's outputs below.
      if (out && out !== '.' && (n === out || n.startsWith(`${out}/`))) continue;
      inputs.push(`{projectRoot}/${n}`, `{projectRoot}/${n}/**/*`);
    }
  }
  inputs.push({ dependentTasksOutputFiles: '**/*', transitive: false }, { externalDependencies: [] });
  return [...new Map(inputs.map((i) => [JSON.stringify(i), i])).values()];
}

export function packTarget(workspaceRoot: string, root: string, manifest: Record<string, unknown>, buildOutDir: string, buildTargetName: string): TargetConfiguration {
  return {
    executor: KILN_PACK_EXECUTOR,
    inputs: packInputs(workspaceRoot, root, manifest, buildOutDir),
    outputs: [packOutput()],
    dependsOn: [buildTargetName],
    cache: true,
    options: {
      outputPath: `dist/packs/${root}`,
    },
    metadata: {
      description: 'kiln: the npm tarball of the built library (npm pack), checked to carry the manifest, JS, .d.ts, kiln.rep and source maps',
      technologies: ['typescript'],
    },
  };
}
