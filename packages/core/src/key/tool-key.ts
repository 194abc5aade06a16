/**
 * Keys of targets kiln does not run (issue 11 point 2): a package.json script, an `nx:run-commands`
 * command, another executor — tsdown, tsup, vite, rollup, tsc … run by the workspace as it always did.
 * kiln cannot know which files such a tool reads, so the key covers everything it can read:
 *
 *   - the project's sources (every TypeScript/JavaScript file under it, not only a tsconfig's list) by
 *     semantic digest — a comment or a reformat is still a hit;
 *   - every other file under the project by content (configs such as `tsdown.config.ts` are sources and
 *     count semantically; `.env` files, HTML, CSS, assets, JSON by bytes), except dependency folders,
 *     VCS folders and the target's output directories (a key is computed before the build it keys and
 *     must be the same after it);
 *   - tool configuration the workspace root holds (`babel.config.*`, `.browserslistrc`, `postcss.config.*`,
 *     root `*.config.*` files tools look up) by content, and the root manifest's `type`/`browserslist`;
 *   - the command or script text (with npm's `pre`/`post` scripts) and files it names by path;
 *   - the resolved versions of the tools the command runs, of TypeScript, of the externals the sources
 *     import and of ambient types, each with its transitive dependency closure in the lockfile (what
 *     runs is the tool and everything it installs; what a `.d.ts` shows reaches into externals' deps); the values of the environment variables the target declares, and of
 *     NODE_ENV;
 *   - the whole manifest but `version` and other scripts (a source or config that imports
 *     package.json keys it whole, through its content);
 *   - workspace dependencies by their **bundle** closure — bodies included, transitively — unless kiln
 *     can show the tool keeps them external: `tsc` never bundles; tsdown and tsup externalise the
 *     package's `dependencies`, `peerDependencies` and `optionalDependencies` by default (not when a
 *     config file of theirs mentions externals); then those count by their surface.
 *
 * Invariants: no absolute path enters a key; what cannot be read or resolved widens the key; nothing
 * here imports Nx — the target's description (command, outputs, env) comes from the caller.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { isBuiltin } from 'node:module';
import { digestParts, sha256Hex } from '../digest/hash.js';
import { isSourceFile } from '../parse/language.js';
import type { DigestReport } from '../view/report.js';
import { externalKeyPart, type ExternalClosure, type Lockfile } from '../workspace/lockfile.js';
import type { WorkspaceProject } from '../workspace/discover.js';
import type { DependencySurface } from './unit-key.js';
import { readTsconfig, type TsconfigView } from '../workspace/tsconfig.js';
import { plainViteBuild, viteExternals } from './vite-externals.js';
import { listFiles } from '../workspace/list-files.js';
import { randomUUID } from 'node:crypto';
import type { ReachResult } from '../view/reach.js';

/** What the caller knows of a target kiln does not run. */
export interface ToolTargetSpec {
  /** Target name (`build`, `build:types`, …). */
  name: string;
  /** What runs, as text: the script (run-script), the command(s) (run-commands), or the executor and its options. */
  command: string;
  /** The script name when the target runs a package.json script (its `pre`/`post` scripts count too). */
  script?: string;
  /** Output paths the target declares, relative to the project root (outside it: ignored). */
  outputs?: string[];
  /** Environment variables the target declares it reads. */
  env?: string[];
  /** Where the command runs, workspace-relative (`nx:run-commands` runs at the workspace root); default the project root. */
  cwd?: string;
  /** The executor, when the target is not a script or a command (`@nx/js:tsc`, `@nx/vite:build`, …). */
  executor?: string;
  /** Files the target's options name, relative to the workspace root (`tsConfig`, `main`, a config file). */
  paths?: string[];
}

/**
 * Executors whose tool kiln knows: the package that does the work (its version is keyed) — the
 * executor's own package is keyed too. Bundling follows the tool (tsc never bundles).
 */
const EXECUTOR_TOOLS: Record<string, string[]> = {
  '@nx/js:tsc': ['typescript'],
  '@nx/js:swc': ['@swc/core'],
  '@nx/vite:build': ['vite'],
  '@nx/rollup:rollup': ['rollup'],
  '@nx/esbuild:esbuild': ['esbuild'],
  '@nx/webpack:webpack': ['webpack'],
  '@nx/rspack:rspack': ['@rspack/core'],
  '@kiln/nx:build': ['typescript'],
};

/** How a target's tool treats workspace dependencies. */
/**
 * never: tsc; externalize-dependencies: tsdown/tsup (runtime dependencies external); vite-config: what
 * the project's vite config externalises, asked of vite (key/vite-externals.ts; `viteExternal` lists
 * it); all: anything may be bundled.
 */
export type BundlePolicy = 'never' | 'externalize-dependencies' | 'vite-config' | 'all';

export interface ToolKeyComponents {
  schema: number;
  project: string;
  root: string;
  target: string;
  runner: 'tool';
  command: string;
  /** Tool packages the command runs → resolved version (`unknown` when not installed). */
  tools: Record<string, string>;
  /** Every tsconfig under the project (a tool may be given any of them) → its resolved options' digest. */
  tsconfigs: Record<string, string>;
  bundles: BundlePolicy;
  /** With `vite-config`: the workspace and runtime dependencies vite keeps external. */
  viteExternal?: string[];
  env: Record<string, string>;
  declarations: Record<string, string>;
  modules: Record<string, string>;
  /** Files by content: project files that are not sources, root tool configs, files the command names. */
  files: Record<string, string>;
  manifest: string;
  tsconfig: { file: string; digest: string } | null;
  externals: Record<string, string>;
  /** Tool or external package → its resolved transitive dependency closure (as in unit keys). */
  closures: Record<string, ExternalClosure>;
  dependencies: Record<string, DependencySurface>;
}

/** Dependency closures the caller computes (unit-key.ts SurfaceCalculator). */
export interface DependencyKeys {
  surfaceOf(name: string): Promise<DependencySurface>;
  /** The package bundled: bodies, assets, and the packages it imports bundled too unless `external`. */
  bundleOf(name: string, external: ReadonlySet<string>): Promise<DependencySurface>;
}

const SKIPPED_DIRS = new Set(['node_modules', '.git', '.nx', '.turbo', '.cache', '.hg', '.svn', 'coverage']);
/** Folders build tools write by convention; a project's own declared outputs are added. */
const CONVENTIONAL_OUTPUTS = ['dist', 'build', 'out', '.next', '.nuxt', '.output', '.svelte-kit', 'storybook-static'];
/** Root files tools look up from a project (browserslist, Babel, PostCSS, SWC, shared bundler configs). */
const ROOT_CONFIG = /^(?:\.browserslistrc|browserslist|\.babelrc(?:\..+)?|babel\.config\..+|\.swcrc|\.postcssrc(?:\..+)?|postcss\.config\..+|tailwind\.config\..+|[^/]+\.config\.[cm]?[jt]s)$/;
/** Root `*.config.*` files of tools that never take part in a build. */
const ROOT_CONFIG_UNRELATED = /^(?:eslint|prettier|vitest|jest|playwright|cypress|commitlint|lint-staged|stylelint|renovate|knip|lefthook|release-it|typedoc|docusaurus)\.config\./;
/** Command words that run another command: skipped to find the tool. */
const LAUNCHERS = new Set(['npx', 'pnpx', 'bunx', 'exec', 'dlx', 'cross-env', 'env', 'dotenv', 'time', 'nice', 'sh', 'bash', '-c']);
const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);

/** The output directories of a target, project-relative, that the key must never read. */
export function toolOutputs(spec: ToolTargetSpec, manifest: Record<string, unknown>, tsconfig: TsconfigView | undefined): string[] {
  const out = new Set(CONVENTIONAL_OUTPUTS);
  for (const o of spec.outputs ?? []) {
    const rel = o.replace(/^\{projectRoot\}\/?/, '').replace(/^\.\//, '').replace(/\/\*\*.*$/, '').replace(/\/$/, '');
    if (rel && !rel.startsWith('{') && !rel.startsWith('../') && !rel.includes('*')) out.add(rel);
  }
  for (const k of ['outDir', 'declarationDir'] as const) {
    const v = tsconfig?.options[k];
    if (typeof v === 'string' && !v.startsWith('../') && v !== '.' && v !== '') out.add(v.replace(/^\.\//, '').replace(/\/$/, ''));
  }
  // Built files the manifest points at (`./lib/index.js`): their top folder is an output.
  const targets: string[] = [];
  const collect = (v: unknown) => {
    if (typeof v === 'string') targets.push(v);
    else if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  for (const f of ['exports', 'main', 'module', 'types', 'typings', 'bin']) collect(manifest[f]);
  for (const t of targets) {
    const rel = t.replace(/^\.\//, '');
    const slash = rel.indexOf('/');
    if (slash > 0 && /\.(?:[cm]?js|d\.[cm]?ts)$/.test(rel) && !rel.startsWith('src/')) out.add(rel.slice(0, slash));
  }
  return [...out].sort();
}

/** Every file under the project the tool could read, project-relative, sorted (no symlinked folders). */
export async function listToolInputs(projectDir: string, outputs: readonly string[]): Promise<{ files: string[]; unreadableDirs: string[] }> {
  return listFiles(projectDir, { skipDirNames: SKIPPED_DIRS, skipPaths: new Set(outputs), fileLinks: true });
}

/** Sources of the listing (digested semantically) and the rest (by content). */
export function splitToolInputs(files: readonly string[]): { sources: string[]; others: string[] } {
  const sources: string[] = [];
  const others: string[] = [];
  for (const f of files) (isSourceFile(f.slice(f.lastIndexOf('/') + 1)) ? sources : others).push(f);
  return { sources, others };
}

/**
 * Tools a command runs: the first word of each command of a `&&`/`;`/`|` chain, past launchers
 * (`npx`, `pnpm exec`, `cross-env X=1`) and package managers running a script (`pnpm run x`: a script
 * of the same package, whose text the caller includes). `node path.js` names a file, not a tool.
 */
export function commandWords(command: string): { bins: string[]; paths: string[] } {
  const bins = new Set<string>();
  const paths = new Set<string>();
  for (const part of command.split(/&&|\|\||;|\||\n/)) {
    const words = part.trim().split(/\s+/).filter(Boolean);
    let i = 0;
    while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || LAUNCHERS.has(words[i]!))) i++;
    if (i < words.length && PACKAGE_MANAGERS.has(words[i]!)) {
      const sub = words[i + 1];
      if (sub === 'exec' || sub === 'dlx' || sub === 'x') i += 2;
      else i = words.length; // `npm run x`, `pnpm x`: another script or a package-manager command
    }
    const bin = words[i];
    if (bin && bin !== 'node' && !bin.includes('/') && /^[@a-z0-9][\w.@/-]*$/i.test(bin)) bins.add(bin);
    for (const w of words.slice(i)) if (/^(?:\.{1,2}\/|[\w@-]+\/)[\w./@-]+\.(?:[cm]?[jt]s|json)$/.test(w)) paths.add(w);
  }
  return { bins: [...bins].sort(), paths: [...paths].sort() };
}

/** The package that provides a bin, from the nearest `node_modules/.bin` link up to the workspace root. */
export function packageOfBin(bin: string, projectDir: string, workspaceRoot: string): string | undefined {
  for (let dir = projectDir; ; dir = dirname(dir)) {
    const link = join(dir, 'node_modules', '.bin', bin);
    if (existsSync(link)) {
      try {
        let pkgDir = dirname(binTarget(link));
        for (; pkgDir !== dirname(pkgDir); pkgDir = dirname(pkgDir)) {
          const manifest = join(pkgDir, 'package.json');
          if (existsSync(manifest)) {
            // A package's own bin folder has no package.json; the first one above names the package.
            const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name;
            if (name) return name;
          }
        }
      } catch {
        return undefined;
      }
    }
    if (dir === workspaceRoot || dir === dirname(dir) || relative(workspaceRoot, dir).startsWith('..')) return undefined;
  }
}

/**
 * The file a `node_modules/.bin` entry runs. npm and yarn link it (a symbolic link); pnpm writes a
 * shell shim (cmd-shim) that execs `node "$basedir/../tsdown/dist/run.mjs"`: that path, relative to
 * the shim's own folder, names the package. Neither: the entry itself (its own package then names it).
 */
export function binTarget(link: string): string {
  const real = realpathSync(link);
  if (real !== link && !real.endsWith(`${sep}.bin${sep}${basename(link)}`)) return real;
  try {
    const head = readFileSync(real, 'utf8').slice(0, 8192);
    if (head.startsWith('#!/bin/sh')) {
      for (const m of head.matchAll(/"\$basedir\/([^"$]+)"/g)) {
        const target = m[1]!;
        if (target === 'node' || target === 'node.exe') continue;
        const abs = join(dirname(real), target);
        if (existsSync(abs)) return realpathSync(abs);
      }
    }
  } catch {
    // unreadable or not text: the entry itself
  }
  return real;
}

/** Which workspace dependencies a tool keeps external, as far as kiln can show. */
export function bundlePolicy(tools: readonly string[], configTexts: readonly string[]): BundlePolicy {
  if (!tools.length) return 'all';
  if (tools.every((t) => t === 'typescript')) return 'never';
  const externalizers = tools.filter((t) => t === 'tsdown' || t === 'tsup');
  const others = tools.filter((t) => t !== 'typescript' && t !== 'tsdown' && t !== 'tsup');
  if (!others.length && externalizers.length && !configTexts.some((t) => /external|noExternal|skipNodeModulesBundle|inlineOnly/.test(t))) return 'externalize-dependencies';
  return 'all';
}

export interface ToolKeyInput {
  workspaceRoot: string;
  project: WorkspaceProject;
  spec: ToolTargetSpec;
  report: DigestReport;
  /** Non-source files of the listing (project-relative). */
  others: readonly string[];
  /** Directories under the project that could not be listed (the key then never repeats). */
  unreadableDirs?: readonly string[];
  tsconfig: TsconfigView | undefined;
  lockfile: Lockfile;
  byName: ReadonlyMap<string, WorkspaceProject>;
  deps: DependencyKeys;
  /** The project's workspace dependencies by manifest (all kinds), and those its sources import. */
  workspaceDependencies: readonly string[];
  /** What the sources reach beyond named imports (view/reach.ts), when it could be computed. */
  reach?: ReachResult;
  keySchema: number;
  toolchain: string;
}

export async function computeToolKey(input: ToolKeyInput): Promise<{ key: string; components: ToolKeyComponents }> {
  const { workspaceRoot, project, spec, report, lockfile } = input;
  const projectDir = join(workspaceRoot, project.root);
  const manifest = project.manifest ?? {};

  // Sources by meaning.
  const declarations: Record<string, string> = {};
  const contentHash = new Map(report.files.map((f) => [f.path, f.content_hash]));
  for (const d of report.declarations) declarations[d.identity] = d.semantic_digest === null ? `degraded:${contentHash.get(d.span.file)}` : `${d.semantic_digest}|${d.doc_digest ?? ''}`;
  const modules: Record<string, string> = {};
  for (const f of report.files) {
    modules[f.module.identity] = f.module.degraded ? `degraded:${f.content_hash}` : f.module.digest;
    if (f.module.docs) modules[`${f.module.identity}#docs`] = f.module.docs;
    // Order the module digest leaves out but a bundle can show (same-named and all module-level declarations).
    const ids = report.declarations
      .filter((d) => d.module_level && d.span.file === f.path)
      .sort((x, y) => x.span.startLine - y.span.startLine || x.span.startColumn - y.span.startColumn)
      .map((d) => d.identity);
    if (ids.length > 1) modules[`${f.module.identity}#order`] = digestParts('kiln-order/1', ids);
  }

  // Everything else by content.
  const files: Record<string, string> = {};
  for (const f of input.others) files[f] = await contentHashOf(join(projectDir, f));
  for (const f of report.files) for (const a of f.asset_imports) files[a] ??= await contentHashOf(join(projectDir, a));
  for (const name of await rootConfigFiles(workspaceRoot)) files[`/${name}`] = await contentHashOf(join(workspaceRoot, name));
  // A directory that could not be listed: what it holds cannot be known, so the key can never be
  // vouched for — a fresh value each time (never a hit; the caller reports KILN_TOOL_INPUT_UNREADABLE).
  for (const d of input.unreadableDirs ?? []) files[`${d || '.'}/`] = `unreadable-dir:${randomUUID()}`;

  // What runs.
  const scripts = (manifest.scripts as Record<string, unknown> | undefined) ?? {};
  const lifecycle = spec.script ? [`pre${spec.script}`, spec.script, `post${spec.script}`].filter((s) => typeof scripts[s] === 'string') : [];
  const commandText = spec.script ? lifecycle.map((s) => `${s}: ${scripts[s]}`).join('\n') : spec.command;
  // The words come from the commands alone: a `name:` label would read as the first command's bin.
  const words = commandWords(spec.script ? lifecycle.map((s) => scripts[s] as string).join('\n') : spec.command);
  const cwd = spec.cwd !== undefined ? join(workspaceRoot, spec.cwd) : projectDir;
  for (const p of words.paths) {
    const abs = resolve(cwd, p);
    const rel = toPosix(relative(workspaceRoot, abs));
    if (!rel.startsWith(`${project.root}/`) || project.root === '.') files[`/${rel}`] ??= await contentHashOf(abs);
  }
  for (const p of spec.paths ?? []) {
    const rel = toPosix(p).replace(/^\.\//, '');
    if (rel.startsWith('../') || rel.startsWith('/')) continue;
    if (!rel.startsWith(`${project.root}/`) || project.root === '.') files[`/${rel}`] ??= await contentHashOf(join(workspaceRoot, rel));
  }
  const tools: Record<string, string> = {};
  // Tools decide bundling; an executor's own package is keyed but decides nothing.
  const closures: Record<string, ExternalClosure> = {};
  const toolNames: string[] = [];
  const keyedTools: string[] = [];
  for (const bin of words.bins) toolNames.push(packageOfBin(bin, cwd, resolve(workspaceRoot)) ?? (bin === 'tsc' ? 'typescript' : bin));
  if (spec.executor) {
    const known = EXECUTOR_TOOLS[spec.executor];
    // An executor kiln does not know may bundle anything: it counts as a tool of its own.
    toolNames.push(...(known ?? [spec.executor]));
    const pkg = executorPackage(spec.executor);
    if (pkg && !pkg.startsWith('nx') && !input.byName.has(pkg)) keyedTools.push(pkg);
  }
  for (const pkg of new Set([...toolNames, ...keyedTools])) {
    const part = await externalKeyPart(lockfile, pkg, project.root);
    tools[pkg] = part.version;
    if (part.closure) closures[pkg] = part.closure;
  }
  const tsconfigs: Record<string, string> = {};
  for (const f of input.others) {
    if (!/(^|\/)tsconfig[^/]*\.json$/.test(f)) continue;
    try {
      const view = readTsconfig(workspaceRoot, project.root, f, { files: false });
      tsconfigs[f] = view.errors.length ? `errors:${files[f] ?? ''}` : view.optionsDigest;
    } catch {
      tsconfigs[f] = `unreadable:${files[f] ?? ''}`;
    }
  }
  const env: Record<string, string> = {};
  for (const name of [...new Set(['NODE_ENV', ...(spec.env ?? [])])].sort()) {
    const v = process.env[name];
    env[name] = v === undefined ? 'unset' : sha256Hex(Buffer.from(v)).slice(0, 32);
  }

  // The manifest, but its version and other scripts (a file that imports package.json keys it whole).
  const rest = Object.fromEntries(Object.entries(manifest).filter(([k]) => k !== 'version' && k !== 'scripts'));
  const manifestDigest = digestParts('kiln-tool-manifest/1', [JSON.stringify(rest), manifest.version !== undefined && report.files.some((f) => f.asset_imports.includes('package.json')) ? String(manifest.version) : '']);

  // Externals and dependencies.
  const externals: Record<string, string> = {};
  const externalNames = new Set<string>(['typescript']);
  for (const f of report.files) for (const p of f.external_packages) if (!input.byName.has(p) && !isBuiltin(p)) externalNames.add(p);
  for (const t of lockfile.ambientTypes()) externalNames.add(t);
  // Reach: files outside every package by content, packages as dependencies (bundled when the build
  // compiles their sources), externals by version.
  const reached = new Map<string, string>();
  if (input.reach) {
    for (const [rel, hash] of input.reach.files) files[`/${rel}`] ??= hash;
    for (const name of input.reach.externals.keys()) if (!input.byName.has(name) && !isBuiltin(name)) externalNames.add(name);
    for (const [name, r] of input.reach.packages) if (name !== project.name) reached.set(name, r.mode);
  }
  for (const name of [...externalNames].sort()) {
    const part = await externalKeyPart(lockfile, name, project.root);
    externals[name] = part.version;
    if (part.closure) closures[name] = part.closure;
  }

  const configTexts: string[] = [];
  for (const f of report.files) if (/(^|\/)(tsdown|tsup)\.config\.[cm]?[jt]s$/.test(f.path)) configTexts.push(await readFile(join(projectDir, f.path), 'utf8').catch(() => 'external'));
  let bundles = bundlePolicy([...new Set(toolNames)], configTexts);
  const runtimeDeps = new Set(['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((k) => Object.keys((manifest[k] as Record<string, unknown> | undefined) ?? {})));
  const wsDeps = new Set(input.workspaceDependencies);
  for (const f of report.files) for (const p of f.external_packages) if (input.byName.has(p) && p !== project.name) wsDeps.add(p);
  for (const name of reached.keys()) wsDeps.add(name);
  // An executor from a workspace package (a local Nx plugin) runs that package's code: keyed whole.
  const executorPkg = spec.executor ? executorPackage(spec.executor) : undefined;
  if (executorPkg && input.byName.has(executorPkg) && executorPkg !== project.name) wsDeps.add(executorPkg);
  const external = new Set<string>(bundles === 'externalize-dependencies' ? [...runtimeDeps].filter((d) => d !== executorPkg) : []);
  // vite (alone, or with tsc) run as a plain `vite build` with a config in the project: ask vite.
  let viteExternal: string[] | undefined;
  const toolSet = new Set(toolNames);
  if (bundles === 'all' && toolSet.has('vite') && [...toolSet].every((t) => t === 'vite' || t === 'typescript') && !spec.executor && plainViteBuild(spec.script ? lifecycle.map((l) => String(scripts[l] ?? '')).join(' && ') : spec.command)) {
    const config = report.files.map((f) => f.path).concat(input.others).find((f) => /^vite\.config\.[cm]?[jt]s$/.test(f));
    if (config) {
      const state = digestParts('kiln-vite-state/1', [JSON.stringify(sortRecord(tools)), JSON.stringify(closures), JSON.stringify(manifest), JSON.stringify(env)]);
      const verdict = await viteExternals(workspaceRoot, project.root, [...new Set([...runtimeDeps, ...wsDeps])].filter((d) => d !== executorPkg), state);
      if (!verdict.none) {
        bundles = 'vite-config';
        viteExternal = verdict.external;
        for (const d of verdict.external) external.add(d);
      }
    }
  }
  const dependencies: Record<string, DependencySurface> = {};
  for (const name of [...wsDeps].sort()) {
    if (name === executorPkg) dependencies[name] = await input.deps.bundleOf(name, new Set());
    // Reached as sources a compiler would emit (a `paths` alias or an `exports` target into its .ts
    // files): its bodies count — unless the tool keeps it external (then only its types are read).
    else if (reached.get(name) === 'full' && !external.has(name)) dependencies[name] = await input.deps.bundleOf(name, external);
    else dependencies[name] = bundles === 'never' || external.has(name) ? await input.deps.surfaceOf(name) : await input.deps.bundleOf(name, external);
  }

  const components: ToolKeyComponents = {
    schema: input.keySchema,
    project: project.name,
    root: project.root,
    target: spec.name,
    runner: 'tool',
    command: commandText,
    tools: sortRecord(tools),
    tsconfigs: sortRecord(tsconfigs),
    bundles,
    ...(viteExternal ? { viteExternal } : {}),
    env,
    declarations: sortRecord(declarations),
    modules: sortRecord(modules),
    files: sortRecord(files),
    manifest: manifestDigest,
    tsconfig: input.tsconfig ? { file: input.tsconfig.configFile, digest: input.tsconfig.optionsDigest } : null,
    externals,
    closures: sortRecord(closures),
    dependencies,
  };
  const material = { ...components, toolchain: input.toolchain, closures: Object.fromEntries(Object.entries(components.closures).map(([k, v]) => [k, v.digest])), dependencies: Object.fromEntries(Object.entries(dependencies).map(([k, v]) => [k, v.digest])) };
  return { key: digestParts(`kiln-tool-key/${input.keySchema}`, [JSON.stringify(material)]), components };
}

/** `@nx/js:tsc` → `@nx/js`; `./tools/executors:x` or a local path → undefined. */
function executorPackage(executor: string): string | undefined {
  const pkg = executor.slice(0, executor.lastIndexOf(':') > 0 ? executor.lastIndexOf(':') : executor.length);
  return /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(pkg) ? pkg : undefined;
}

/** Root-level files tools look up from any project (by name; their content is keyed). */
async function rootConfigFiles(workspaceRoot: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(workspaceRoot, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && ROOT_CONFIG.test(e.name) && !ROOT_CONFIG_UNRELATED.test(e.name))
    .map((e) => e.name)
    .sort();
}

async function contentHashOf(path: string): Promise<string> {
  try {
    return sha256Hex(await readFile(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    // Unreadable: size and change time still move when it changes (never a constant).
    const s = await stat(path, { bigint: true }).catch(() => undefined);
    return `unreadable:${code ?? 'error'}:${s?.size ?? '-'}:${s?.mtimeNs ?? '-'}`;
  }
}

function sortRecord<T>(r: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(r).sort().map((k) => [k, r[k]!]));
}

const toPosix = (p: string) => p.split(sep).join('/');
