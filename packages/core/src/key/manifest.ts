/**
 * Manifest relevance (SPEC §4): a build keys on the package.json fields that can reach its output —
 * `name`, `type`, `exports`/`main`/`module`/`types`/`typings`, `imports`, `sideEffects`, `bin` and
 * `publishConfig` (kiln's build writes every layout these name — publishConfig holds the entry points
 * pnpm and yarn publish in their place, see compile/package-layout.ts), and the *names* of dependencies — never on `version`, `scripts`, version ranges (the workspace graph and the
 * lockfile resolve those) or unrelated devDependencies. A target that publishes the manifest keys on
 * all of it.
 */
import { digestParts } from '../digest/hash.js';

const BUILD_FIELDS = ['name', 'type', 'exports', 'main', 'module', 'types', 'typings', 'imports', 'sideEffects', 'bin', 'publishConfig'] as const;

export interface ManifestView {
  fields: Record<string, unknown>;
  /** Names of runtime, peer and optional dependencies (ranges are not part of a build's meaning). */
  dependencies: string[];
  /** devDependencies that can reach the build: imported by sources, or ambient `@types/*`. */
  devDependencies: string[];
  digest: string;
}

export function manifestView(manifest: Record<string, unknown>, importedPackages: ReadonlySet<string>): ManifestView {
  const fields: Record<string, unknown> = {};
  // Key order is kept as written: in `exports`, condition order is meaning.
  for (const f of BUILD_FIELDS) if (manifest[f] !== undefined) fields[f] = manifest[f];
  const names = (field: string) => Object.keys((manifest[field] as Record<string, unknown> | undefined) ?? {});
  const dependencies = [...new Set([...names('dependencies'), ...names('peerDependencies'), ...names('optionalDependencies')])].sort();
  const devDependencies = names('devDependencies')
    .filter((n) => importedPackages.has(n) || n.startsWith('@types/'))
    .sort();
  const digest = digestParts('kiln-manifest/1', [JSON.stringify(fields), ...dependencies, '|', ...devDependencies]);
  return { fields, dependencies, devDependencies, digest };
}

/** The whole manifest, for targets that publish it. */
export function fullManifestDigest(manifest: Record<string, unknown>): string {
  return digestParts('kiln-manifest-full/1', [JSON.stringify(manifest)]);
}
