/**
 * The one registry of diagnostic codes. Alphabetical; a code, once published, never changes meaning.
 * Every diagnostic kiln emits names a code from here, and `kiln explain CODE` prints the entry.
 */

export type Severity = 'error' | 'warning' | 'info';

/**
 * What a diagnostic means for the result of the work that reported it (RFC 167's outcome category).
 * Data of the registry, one per code, never decided at print time. A reader that meets an outcome not
 * listed here does not read it as success (diagnostics/envelope.ts refuses the record).
 */
export const OUTCOMES = {
  refused: 'kiln did not do the work: the command line, a configuration or the environment does not allow it. Nothing was computed or written.',
  failed: 'The work ran and produced no result: nothing was written (a build, a graph), or the answer must not be used.',
  degraded: 'A result was produced, but less precise than normal: what it covers counts as changed, keys move more often, or facts are less resolved. It stays safe to use.',
  slower: 'The result is correct and as precise as normal; only time was lost (the local store was not used, or work was recomputed).',
  unaffected: 'The result is exactly what it would be without this diagnostic; it is worth knowing, nothing more.',
} as const;

export type Outcome = keyof typeof OUTCOMES;

export interface CodeEntry {
  readonly severity: Severity;
  /** What it means for the result (OUTCOMES). */
  readonly outcome: Outcome;
  /**
   * Set on the codes that carry another tool's own diagnostics (the compiler's TS2322): the text
   * projection shows that tool's code in its place and no hint (the tool's message is the explanation).
   */
  readonly wraps?: 'typescript';
  /** One line: what happened. */
  readonly title: string;
  /** What it means for the result (which digests are affected, whether work was lost). */
  readonly meaning: string;
  /** How to fix it. Always actionable. */
  readonly hint: string;
}

export const CODES = {
  KILN_BINARY_FILE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source file contains binary data',
    meaning:
      'The file has NUL bytes, so it is not TypeScript or JavaScript text. kiln does not parse it; the module is digested by its raw content hash and every declaration it had counts as changed whenever its bytes change.',
    hint: 'Rename the file so its extension does not claim it is source (e.g. .bin), or exclude it from the project.',
  },
  KILN_BUILD_ABSOLUTE_PATH: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An emitted file contains an absolute path of this machine',
    meaning:
      'The output is not the same in two clones at different paths, so they cannot share cache entries, and a restored artifact points at a directory that may not exist on the machine that restores it. The build itself succeeded.',
    hint: 'Remove absolute paths from the tsconfig (sourceRoot, mapRoot, paths that reach outside the workspace); kiln names sources relative to each map.',
  },
  KILN_BUILD_CJS_UNSUPPORTED: {
    severity: 'error',
    outcome: 'failed',
    title: 'Code that a CommonJS build cannot express',
    meaning:
      'The package asks for a CommonJS build (a require condition, a .cjs path, or formats: ["cjs"]), and a module uses top-level await or an import.meta property CommonJS has no equivalent for (import.meta.url, .dirname and .filename are translated; import.meta.resolve, import.meta.env and import.meta itself are not). Nothing was written.',
    hint: 'Move the top-level await into a function, or read the value some other way; or drop the CommonJS build (remove the require condition, or set formats to ["esm"]).',
  },
  KILN_BUILD_COMPILER_FAILED: {
    severity: 'error',
    outcome: 'failed',
    title: 'The TypeScript compiler failed unexpectedly',
    meaning:
      'The compiler threw instead of reporting diagnostics. Nothing was written and the build failed.',
    hint: 'Run `tsc -p <tsconfig>` in the project to see whether the compiler fails on its own; if it does not, report it to kiln with the project that triggered it.',
  },
  KILN_BUILD_EXCLUDED_IMPORTED: {
    severity: 'error',
    outcome: 'failed',
    title: 'A built module imports a file the build excludes',
    meaning:
      'Tests and tool config files (the exclude option) are not emitted, but a module the build emits imports one of them, so the built package would fail to load. Nothing was written.',
    hint: 'Move what the library needs out of the test or config file, or narrow the build option exclude so the file is built.',
  },
  KILN_BUILD_FORMAT_UNAVAILABLE: {
    severity: 'error',
    outcome: 'refused',
    title: 'The build tsconfig cannot produce the module format the package needs',
    meaning:
      'kiln compiles once to ECMAScript modules and derives CommonJS from that; this tsconfig makes the compiler emit CommonJS (module CommonJS, or Node16/NodeNext in a package without "type": "module"), so there is no ESM to publish where the package asks for it. Nothing was written.',
    hint: 'Set compilerOptions.module to "ESNext" or "Preserve" (moduleResolution "Bundler") in the build tsconfig, or make the package "type": "module"; or drop the ESM entries (import conditions, .mjs paths) from package.json.',
  },
  KILN_BUILD_NO_OUTDIR: {
    severity: 'error',
    outcome: 'refused',
    title: 'The build has no output directory',
    meaning:
      'The tsconfig declares no outDir (or uses outFile) and the target names no outputPath, so kiln cannot tell where the library is built. Nothing was compiled.',
    hint: 'Set compilerOptions.outDir in the tsconfig the build uses (e.g. "outDir": "dist"), or the target option outputPath.',
  },
  KILN_BUILD_OUTDIR_NOT_CLEANED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The output directory was not emptied before the build',
    meaning:
      'Removing it would have removed the project or its sources, so only the files this build writes were replaced. Files left there by earlier builds (of sources since renamed or deleted) can still reach the cache.',
    hint: 'Point outDir (or the target option outputPath) at a directory that holds only build output, such as dist.',
  },
  KILN_BUILD_OUTPUTS_SHARED: {
    severity: 'error',
    outcome: 'refused',
    title: "The build's output directory is another target's declared output",
    meaning:
      'Another Nx target declares outputs in the directory this build writes (the same directory, one inside it, or one that contains it). Nx restores a cached output by replacing it, so restoring one target deletes files the other wrote (a tsbuildinfo, a bundle), and emptying the directory before this build would too. Nothing was written.',
    hint: 'Give the kiln build its own directory (the tsconfig outDir, or the option outputPath, with package.json pointing there), or move the other target\'s outputs elsewhere.',
  },
  KILN_BUILD_WRITE_FAILED: {
    severity: 'error',
    outcome: 'failed',
    title: 'An output file could not be written',
    meaning:
      'The build compiled but its outputs could not be written; whatever it had written was removed, and the build failed.',
    hint: 'Check that the output directory is writable and that the disk is not full.',
  },
  KILN_CONTEXT_STALE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The code graph is stale for the working tree',
    meaning:
      'Files changed, were added or were deleted since the graph was exported, so the context pack (or query) describes the tree as it was then: anchors into changed files may point at the wrong lines, and their source text is left out of the pack.',
    hint: 'Re-export the graph (`kiln graph export`, or the MCP `reindex` tool), or pass the source directory instead of --graph to export it on the fly.',
  },
  KILN_DEBUG_ID_MISMATCH: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A JavaScript file and its source map name different debug IDs',
    meaning:
      'They are not a pair: the map may describe another build of the file, so kiln stores nothing for it and frames in that file are reported unavailable rather than mapped through the wrong map.',
    hint: 'Rebuild the package so the file and its map are written together, or run `kiln debug-ids DIR` on the output folder after the tool that wrote it.',
  },
  KILN_DEBUG_MAP_INVALID: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source map cannot be read',
    meaning: 'It is not JSON, or not a version 3 map with `sources` and `mappings`. Frames in its JavaScript file are reported unavailable.',
    hint: 'Check the tool that wrote the map; rebuild the package to write it again.',
  },
  KILN_DEBUG_RELOCATED: {
    severity: 'info',
    outcome: 'unaffected',
    title: 'A frame was mapped to the current source through its unchanged declaration',
    meaning:
      'The file changed since the artifact was built (a comment or formatting edit, a semantic cache hit), but the declaration around the frame has the same semantic digest and the same tokens, so the frame points at the same token of the current file. The line the artifact was built from is shown beside it.',
    hint: 'Nothing to fix. Rebuild without the cache to get a map of the current text.',
  },
  KILN_DEBUG_SOURCES_MISSING: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source map retains no text for some of its sources',
    meaning: 'Without `sourcesContent` kiln cannot show or verify the source a frame came from; those frames are reported unavailable.',
    hint: 'Run `kiln debug-ids DIR` after the tool that wrote the map (it fills `sourcesContent` from the sources on disk), or enable the tool\'s inline-sources option.',
  },
  KILN_DEBUG_SOURCE_CHANGED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A frame points into source that has changed since the artifact was built',
    meaning:
      'The declaration around the frame changed (or its file is gone), so no line of the current file can be presented as the artifact\'s. The retained line — the text the artifact was built from — is shown instead.',
    hint: 'Read the retained line; rebuild and reproduce to get a frame in the current source.',
  },
  KILN_DEBUG_STORE_FAILED: {
    severity: 'warning',
    outcome: 'slower',
    title: 'Debug data could not be written to the local store',
    meaning: 'The build itself is unaffected; the artifact is ingested again from its files the first time a frame needs it.',
    hint: 'Check that the store directory ($KILN_STORE or ~/.cache/kiln/store) is writable and the disk is not full.',
  },
  KILN_DEBUG_UNAVAILABLE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'No debug artifact for a frame',
    meaning:
      'Neither a debug ID the store knows nor a JavaScript file with a source map beside it, or no mapping at that position: the frame is reported unavailable, never guessed from a file name.',
    hint: 'Symbolicate on the machine that has the built files, pass JSON frames with `debugId`, or build the package with kiln (or run `kiln debug-ids DIR` after its tool) so its artifacts carry debug IDs.',
  },
  KILN_DIGEST_STALE_SCHEMA: {
    severity: 'info',
    outcome: 'degraded',
    title: 'A recorded digest matched only under the previous digest projection',
    meaning:
      'The recorded digest was computed with an older digest_schema. The declaration still matches under that projection, so it is treated as unchanged, but the match is stale: the current projection may see a difference the old one ignored.',
    hint: 'Re-record the digests with this version of kiln (`kiln digest --format json > file`) to compare under the current projection.',
  },
  KILN_DIGEST_UNSUPPORTED_SCHEMA: {
    severity: 'error',
    outcome: 'refused',
    title: 'A recorded digest uses a digest_schema this kiln cannot compute',
    meaning:
      'Only the current and the previous projection are kept. Declarations recorded under any other schema cannot be compared and are reported as changed.',
    hint: 'Re-record the digests with this version of kiln.',
  },
  KILN_EMPTY_FILE: {
    severity: 'info',
    outcome: 'unaffected',
    title: 'A source file is empty',
    meaning: 'The module has no declarations and no statements; its module digest is that of an empty module.',
    hint: 'Nothing to fix unless the file was truncated by accident.',
  },
  KILN_ENVELOPE_INVALID: {
    severity: 'error',
    outcome: 'refused',
    title: 'A diagnostic record is not a valid kiln diagnostic envelope',
    meaning:
      'A diagnostic read back (from a recorded report, or handed over by another process) is not JSON of the envelope schema: a required field is missing or has the wrong type, or its outcome or severity is not one this kiln knows. It is not read, and what carried it is not read as a success.',
    hint: 'Record it again with this version of kiln (e.g. `kiln digest <dir> --format json > file`); if another tool wrote it, validate it against @kiln/core/diagnostic-envelope.schema.json.',
  },
  KILN_ENVELOPE_UNSUPPORTED_VERSION: {
    severity: 'error',
    outcome: 'refused',
    title: 'A diagnostic record uses an envelope version this kiln does not read',
    meaning:
      'Its fields may mean something else under another version (a newer kiln wrote it, or an older one), so it is not read, and what carried it is not read as a success: an unknown version never reads as "no problem".',
    hint: 'Read it with the kiln version that wrote it, or record it again with this one (e.g. `kiln digest <dir> --format json > file`).',
  },
  KILN_EXPORTS_FORMAT_CONFLICT: {
    severity: 'error',
    outcome: 'refused',
    title: 'package.json asks for a module format the path cannot hold',
    meaning:
      'A condition and the file it points at disagree: a require condition on a file Node loads as ESM (.mjs, or .js in a "type": "module" scope), an import condition on a .cjs file, one path under both, or types in one format for JavaScript in the other (TypeScript would type the package wrongly for that consumer). The build does not guess which was meant; nothing was written.',
    hint: 'Give each condition a file of its format: .cjs / .d.cts for require and .js / .d.ts for import in a "type": "module" package (.js / .d.ts and .mjs / .d.mts otherwise), and put types inside each of the import and require branches.',
  },
  KILN_EXPORTS_TARGET_MISSING: {
    severity: 'error',
    outcome: 'refused',
    title: 'package.json points at a file the build does not produce',
    meaning:
      'An exports condition (or main, module, types, bin) names a JavaScript or declaration file that does not exist and that no source of the build compiles to, or one outside the build output directory, so a consumer resolving it would fail. Nothing was written.',
    hint: 'Point the entry at a path the build writes (the outDir, named after a source file), add the missing source, or set outputPath to a directory that holds every built path. Set the build option exports to false to build without reading package.json.',
  },
  KILN_FILE_TOO_LARGE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source file is larger than the parse limit',
    meaning:
      'kiln does not parse files above the limit (default 8 MiB). The module is digested by its raw content hash: any byte change counts as a change to every declaration in it.',
    hint: 'Raise the limit with --max-file-size <bytes> (or KILN_MAX_FILE_SIZE), or exclude generated files from the project.',
  },
  KILN_GIT_PATH_NOT_UTF8: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A path in a git tree is not valid UTF-8',
    meaning:
      'kiln names files by their text, so it cannot name this one: the file is left out of the view of that state. A source file left out of a base state reads as added at head, so affected sets only grow.',
    hint: 'Rename the file to a UTF-8 name (git mv), or keep non-UTF-8 names out of packages kiln reads.',
  },
  KILN_GIT_REF_UNKNOWN: {
    severity: 'error',
    outcome: 'refused',
    title: 'A git revision names no commit or tree',
    meaning: 'kiln cannot read the workspace at that state, so nothing was computed for it.',
    hint: 'Check the revision (git rev-parse REV); in a shallow clone fetch enough history (git fetch --deepen N, or fetch-depth: 0 in CI).',
  },
  KILN_GIT_SHALLOW: {
    severity: 'error',
    outcome: 'refused',
    title: 'The base revision is not in this shallow clone',
    meaning: 'A shallow clone holds only the last commits; the base (or the history up to the common ancestor of base and head) was not fetched, so the two states cannot be compared. Nothing was computed — an empty affected set would be a guess.',
    hint: 'Fetch the history the comparison needs: in GitHub Actions `actions/checkout` with `fetch-depth: 0` (or enough depth to reach the base), locally `git fetch --unshallow` or `git fetch --deepen=N origin`.',
  },
  KILN_GIT_UNAVAILABLE: {
    severity: 'error',
    outcome: 'refused',
    title: 'git is not available for this workspace',
    meaning: 'Reading a state from git needs git and a repository; nothing was computed.',
    hint: 'Install git, and run kiln inside a git repository (git init, or clone the workspace).',
  },
  KILN_GRAPH_AMBIGUOUS: {
    severity: 'error',
    outcome: 'refused',
    title: 'A name given to a graph query names several nodes',
    meaning: 'kiln does not guess which one was meant; nothing was printed.',
    hint: 'Pass one of the listed ids (as `kiln graph find` prints them), or a longer module path.',
  },
  KILN_GRAPH_CHECK_FAILED: {
    severity: 'error',
    outcome: 'failed',
    title: 'A checked codegraph was asked for a project that does not type-check',
    meaning:
      'Checked mode records only facts the TypeScript checker verified, so it refuses a project with compiler errors: no graph was written. The compiler errors are listed with it.',
    hint: 'Fix the listed compiler errors, or export a tolerant graph with --allow-errors (facts of the broken modules are then marked syntax_inferred and carry no resolved references or calls).',
  },
  KILN_GRAPH_INVALID: {
    severity: 'error',
    outcome: 'refused',
    title: 'A codegraph document could not be read',
    meaning:
      'A line is not JSON, the first record is not a header, or a record of a kind this kiln knows does not match the codegraph schema. Records of unknown kinds are kept as opaque records, never rejected.',
    hint: 'Re-export the graph with `kiln graph export <dir>`; if it was edited or produced by another tool, validate it against the codegraph schema (@kiln/core/codegraph.schema.json).',
  },
  KILN_GRAPH_NODE_NOT_FOUND: {
    severity: 'error',
    outcome: 'refused',
    title: 'A graph query names a node the graph does not have',
    meaning: 'No node has that id, module path, file or name; nothing was printed.',
    hint: 'Use `kiln graph find <name>` to list matching identifiers and their ids; check that the graph was exported from the tree you mean.',
  },
  KILN_GRAPH_UNCHECKED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The codegraph was exported without the type checker',
    meaning:
      'No program was built: either a tolerant export from syntax alone was asked for (`--allow-errors` without `--check`), or no usable tsconfig was found. Every source fact is syntax_inferred; references are per module-level declaration, resolved from kiln\'s own facts by name (a local shadowing a module-level name counts as a mention of it); there are no call or reference sites. Imports resolve with the compiler\'s module resolution when a tsconfig was read, else by kiln\'s own rules (relative paths, workspace packages).',
    hint: 'For references and calls resolved by the type checker: add --check to --allow-errors, or give the project a tsconfig (or name one with --tsconfig).',
  },
  KILN_GRAPH_UNSUPPORTED_SCHEMA: {
    severity: 'error',
    outcome: 'refused',
    title: 'A codegraph uses a schema version this kiln does not read',
    meaning: 'Its records may mean something else under another version, so none was read.',
    hint: 'Re-export the graph with this version of kiln (`kiln graph export <dir>`).',
  },
  KILN_INVALID_UTF8: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source file is not valid UTF-8',
    meaning:
      'kiln reads sources as UTF-8 and refuses to guess another encoding. The module is digested by its raw content hash: any byte change counts as a change to every declaration in it.',
    hint: 'Re-save the file as UTF-8 (most editors: "Save with encoding"), or exclude it from the project.',
  },
  KILN_LOCKFILE_DUPLICATE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The lockfile lists a package twice',
    meaning:
      'An install path (package-lock.json), a key (pnpm-lock.yaml) or a descriptor (yarn.lock) occurs in two entries, so which one the package manager installs is ambiguous. Each external\'s dependency closure is still computed, but its digest also covers the whole lockfile: every build key that reads an external moves whenever any line of the lockfile changes.',
    hint: 'Regenerate the lockfile with the package manager (`npm install`, `pnpm install`, `yarn install`); a hand-merged lockfile is the usual cause.',
  },
  KILN_LOCKFILE_INVALID: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The lockfile cannot be parsed',
    meaning:
      'package-lock.json is not valid JSON, pnpm-lock.yaml is not valid YAML, or yarn.lock is malformed or holds merge conflict markers. External versions come from the installed packages, and each external\'s key part stands for the whole lockfile: every build key that reads an external moves whenever the lockfile changes.',
    hint: 'Resolve the conflict or regenerate the lockfile with the package manager (`npm install`, `pnpm install`, `yarn install`).',
  },
  KILN_LOCKFILE_MISSING: {
    severity: 'info',
    outcome: 'degraded',
    title: 'The workspace has no lockfile',
    meaning:
      'There is no package-lock.json, pnpm-lock.yaml or yarn.lock at the workspace root. The version of each external package a build reads, and its dependency closure, come from the installed node_modules: the keys follow what this machine has installed, and two machines with different installs have different keys.',
    hint: 'Commit the lockfile the package manager writes (`npm install`, `pnpm install`, `yarn install`), so every machine installs, and keys, the same packages.',
  },
  KILN_LOCKFILE_UNSUPPORTED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The lockfile format version is not one kiln resolves',
    meaning:
      'kiln resolves dependency closures in npm lockfileVersion 2 and 3, pnpm lockfileVersion 6 and 9, and yarn.lock (classic and berry). For another version each external\'s key part stands for the whole lockfile: every build key that reads an external moves whenever the lockfile changes.',
    hint: 'Upgrade the package manager and regenerate the lockfile (npm 7 or later, pnpm 8 or later).',
  },
  KILN_MANIFEST_INVALID: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A package.json could not be read as JSON',
    meaning:
      'kiln cannot tell the package name or its entry points: declarations get the package name "(unnamed)" and no surface identities.',
    hint: 'Fix the JSON syntax of package.json (the message gives the position).',
  },
  KILN_NESTING_TOO_DEEP: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source file nests deeper than kiln walks',
    meaning:
      'Syntax nested deeper than kiln digests (128 levels of brackets, arrows and chained operators when parsing; 500 syntax-tree levels when digesting) is not digested structurally. The declarations that contain it are reported as changed (unparseable); the rest of the file is digested normally.',
    hint: 'Such nesting is almost always generated code: exclude it from the project, or split the expression.',
  },
  KILN_NODE_UNSUPPORTED: {
    severity: 'error',
    outcome: 'refused',
    title: 'kiln does not run on this Node.js version',
    meaning:
      'Nx loads executors and generators with require(), and kiln\'s are ES modules, which require() loads only from Node.js 20.19 (20.x) and 22.12 (22.x) on. The kiln plugin infers nothing and the init generator changes nothing; the message names the version found and the versions kiln runs on.',
    hint: 'Run Nx on Node.js 20.19 or later in the 20 line, or 22.12 or later (check .nvmrc, the engines field and the CI image).',
  },
  KILN_NOT_FOUND: {
    severity: 'error',
    outcome: 'refused',
    title: 'A path given to kiln does not exist',
    meaning: 'Nothing was digested.',
    hint: 'Check the path; it is resolved against the current directory.',
  },
  KILN_NO_SOURCES: {
    severity: 'warning',
    outcome: 'unaffected',
    title: 'No TypeScript or JavaScript sources were found',
    meaning: 'The directory contains no .ts, .tsx, .mts, .cts, .js, .jsx, .mjs or .cjs files outside node_modules and build outputs.',
    hint: 'Point kiln at a package directory or a source file.',
  },
  KILN_NX_UNSUPPORTED: {
    severity: 'error',
    outcome: 'refused',
    title: 'The workspace runs an Nx version kiln does not support',
    meaning:
      'kiln is tested on each Nx major it claims, on a real install; the message names the Nx version found and the majors kiln supports. On an older Nx the kiln plugin infers nothing and fails the project graph with this message (rather than with an error from inside Nx), and the init generator leaves nx.json unchanged.',
    hint: 'Upgrade Nx to a supported major (`npx nx migrate <version>`), or remove "@kiln/nx" from the plugins of nx.json to run Nx without kiln.',
  },
  KILN_NX_UNTESTED: {
    severity: 'warning',
    outcome: 'unaffected',
    title: 'The workspace runs an Nx major newer than kiln is tested with',
    meaning:
      'Nothing is known to be wrong: kiln runs, and `nx g @kiln/nx:init` registered it. It has not been tested on a real install of this major, whose plugin API may have changed.',
    hint: 'Check that `nx show projects` and a build work; if they do not, remove "@kiln/nx" from the plugins of nx.json and report the Nx version.',
  },
  KILN_OPAQUE_BINARY: {
    severity: 'info',
    outcome: 'degraded',
    title: 'A dependency kiln does not build ships a binary file',
    meaning:
      'A native addon (.node), WebAssembly module (.wasm) or other binary file shipped by a workspace package without a tsconfig is keyed by its bytes: every dependent\'s key moves whenever it is rebuilt with different bytes, even if its behaviour is the same.',
    hint: 'Nothing to fix. For fewer rebuilds, make its build reproducible; if it is a build product, build it before keys are computed (make it a dependency of the targets that read it).',
  },
  KILN_OPAQUE_BUILD_PRODUCT: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A dependency kiln does not build ships files git ignores',
    meaning:
      'A workspace package without a tsconfig ships files that git ignores and does not track, so they are built by some other step (cargo, wasm-pack, a bundler). Its dependents are keyed by those files as they are on disk when the key is computed: before that step runs, or after a stale run, the key describes other files than the ones a build will read.',
    hint: 'Run the step that produces them before kiln computes keys (an Nx dependsOn on that package\'s build), or commit them.',
  },
  KILN_OPAQUE_CYCLE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A dependency cycle passes through a package kiln does not build',
    meaning:
      'Workspace packages import each other in a cycle that includes a package without a tsconfig. Each package\'s surface includes the others up to where the cycle closes, where a stable token stands for the package being keyed (its own content is in the same digest); a surface that depends on where the cycle was entered is recomputed for each dependent rather than reused. Keys stay sound; they may move more often.',
    hint: 'Break the cycle: move what both sides share into a third package.',
  },
  KILN_OPAQUE_PACKLIST_FAILED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The files a dependency ships could not be listed by npm\'s rules',
    meaning:
      'A directory or an ignore file (.npmignore, .gitignore) of a workspace package without a tsconfig could not be read, so npm\'s file list for it could not be computed. Every file under the package (node_modules and VCS folders aside) now keys its dependents, so they rebuild more often; a directory that cannot be listed at all is keyed by its size and modification time.',
    hint: 'Check the permissions of the package\'s directories and ignore files (`npm pack --dry-run -w <package>` fails the same way).',
  },
  KILN_OPAQUE_UNREADABLE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A file a dependency ships could not be read',
    meaning:
      'A file (or directory) shipped by a workspace package without a tsconfig could not be read, so its content cannot key its dependents. A file is keyed by its size and modification time instead: any write to it moves their keys, and so does a fresh checkout. A directory that cannot be listed gives their keys a fresh value on every computation (a directory\'s stamp does not move when a file inside it is written): no cache hit until it can be read.',
    hint: 'Check the file\'s permissions (a build of a dependent that reads it would fail the same way), or stop shipping it.',
  },
  KILN_OPAQUE_UNSHIPPED_IMPORT: {
    severity: 'warning',
    outcome: 'unaffected',
    title: 'A file a dependency ships imports a file it does not ship',
    meaning:
      'A shipped file of a workspace package without a tsconfig names, by relative path, a file of the package that npm would leave out of its tarball (`files`, .npmignore). Published, the package is broken; in the workspace a dependent\'s build reads the file all the same, so it keys the dependents like a shipped file.',
    hint: 'Add the file to `files` in package.json (or stop ignoring it in .npmignore), or stop importing it.',
  },
  KILN_OUTPUTS_DIFFER: {
    severity: 'error',
    outcome: 'failed',
    title: 'Two build outputs are not equivalent',
    meaning:
      'A JavaScript or declaration file differs beyond non-meaningful comments, whitespace and the order of hoisted declarations, or another file differs byte for byte. If one output was restored from a cache entry kiln keyed as unchanged, that cache hit was wrong.',
    hint: 'Compare the two files at the reported declaration and token; if a cache hit was involved, report it to kiln with both outputs, and rebuild with the cache skipped.',
  },
  KILN_OUTPUTS_GLOB_UNCHECKED: {
    severity: 'warning',
    outcome: 'slower',
    title: 'A directory the task writes may not be among its declared outputs',
    meaning:
      'The directory is not among the target\'s outputs as written, but a glob output might match it, and kiln does not expand globs. The task ran as usual; if no output matches, Nx does not cache what it wrote, and the task runs again next time.',
    hint: 'Declare the directory itself among the target\'s outputs (e.g. "{projectRoot}/dist"), or set outputPath (outputFile) inside a declared output.',
  },
  KILN_OUTPUTS_UNDECLARED: {
    severity: 'error',
    outcome: 'refused',
    title: 'The task would write outside the target\'s declared outputs',
    meaning:
      'Nx caches and restores only the target\'s outputs, so what the task wrote elsewhere would be missing after a cache hit. kiln refuses the task instead of leaving it silently uncached; nothing was written.',
    hint: 'Set outputPath (the codegraph: outputFile), or the tsconfig\'s outDir, to a declared output, or add the directory to the target\'s outputs.',
  },
  KILN_PACK_FAILED: {
    severity: 'error',
    outcome: 'failed',
    title: 'npm could not pack the package',
    meaning:
      'The pack target runs `npm pack` (npm\'s own rules for what a tarball holds) and npm failed or answered something kiln could not read: a malformed manifest, a missing npm, an unwritable directory. No tarball was written into the target\'s outputs.',
    hint: 'Run `npm pack --dry-run` in the project directory to see npm\'s own error; check that npm is on the PATH of the Nx process.',
  },
  KILN_PACK_INCOMPLETE: {
    severity: 'error',
    outcome: 'refused',
    title: 'The tarball would leave out part of what the build produced',
    meaning:
      'The manifest\'s `files` (or, without `files`, npm\'s ignore files: the package\'s .npmignore, or where there is none the .gitignore files of the package and of the workspace above it — a `dist` line there excludes the build) excludes a file the published package needs: an entry the manifest names, the executable representation (kiln.rep), a declaration file or a source map beside the built JavaScript. Publishing it would ship a package that consumers cannot call through its representation or debug. The tarball was not written.',
    hint: 'Widen `files` to the build\'s output directory (e.g. "dist" instead of "dist/*.js"), or add `"files": ["dist"]` where the manifest has none (a .gitignore that ignores dist then no longer applies), or remove the .npmignore rule that excludes it; `npm pack --dry-run` lists what npm would publish.',
  },
  KILN_PACK_NOT_BUILT: {
    severity: 'error',
    outcome: 'refused',
    title: 'A file the package must publish does not exist',
    meaning:
      'An entry the manifest names (main, module, types, bin, exports) or the package\'s representation (kiln.rep beside the main entry) is not on disk, so the tarball would be broken. The pack target depends on the build; the build wrote no such file. The tarball was not written.',
    hint: 'Build the project first (the pack target depends on its build target); if the build warned KILN_REP_PRODUCE_FAILED and the package is to ship without a representation, set the pack option "representation": false.',
  },
  KILN_PARSER_MISMATCH: {
    severity: 'warning',
    outcome: 'slower',
    title: 'The installed TypeScript parser is not the one kiln extracts with',
    meaning:
      'kiln keys stored slices by its extractor version, which was cut for one exact TypeScript version. Another version may parse a file differently, so this run neither read nor wrote the local store: every file was parsed, and the results are correct, only slower.',
    hint: 'Install kiln with its own pinned typescript (`npm ls typescript` shows which copy @kiln/core resolves; remove an `overrides`/`resolutions` entry that forces another version).',
  },
  KILN_READ_FAILED: {
    severity: 'error',
    outcome: 'degraded',
    title: 'A source file could not be read',
    meaning: 'The file is reported with no declarations and its module counts as changed.',
    hint: 'Check permissions and that the file is not removed while kiln runs.',
  },
  KILN_RECORD_INVALID: {
    severity: 'error',
    outcome: 'refused',
    title: 'A recorded digest report could not be read',
    meaning: 'The JSON file given to `kiln diff` is not a kiln digest report of a supported version.',
    hint: 'Produce it with `kiln digest <dir> --format json > file` using this version of kiln.',
  },
  KILN_REP_CORRUPT: {
    severity: 'error',
    outcome: 'refused',
    title: 'A package representation is malformed',
    meaning:
      'The kiln.rep file is truncated, or a count, offset or length in it does not fit the bytes present, or its index is not sorted and unique. The consumer refused it before evaluating any payload; the package stays valid for routes that do not need a representation.',
    hint: 'Rebuild and republish the package; a representation is only ever written whole by its build, so a damaged copy is not repairable in place.',
  },
  KILN_REP_INTEGRITY: {
    severity: 'error',
    outcome: 'refused',
    title: 'A package representation failed its integrity check',
    meaning:
      'The SHA-256 of its header and index, or of a payload\'s stored bytes, does not match the one recorded when it was written. Nothing from the altered part was decompressed or evaluated.',
    hint: 'Reinstall the package (the copy on disk was altered after it was written); if a fresh install fails the same way, the package must be rebuilt and republished.',
  },
  KILN_REP_INVALID: {
    severity: 'error',
    outcome: 'failed',
    title: 'A representation to be written breaks the data model',
    meaning:
      'The producer handed the writer entries that are unsorted or duplicated, a payload index out of range, a payload name used twice, or a string or count over the format\'s limits. Nothing was written.',
    hint: 'This is a bug in the producer of the representation (kiln\'s build); report it with the package that triggered it.',
  },
  KILN_REP_NOT_A_REPRESENTATION: {
    severity: 'error',
    outcome: 'refused',
    title: 'The file is not a kiln representation',
    meaning:
      'Its first bytes are not the representation\'s magic, so nothing else in it was read or trusted.',
    hint: 'Point the consumer at the kiln.rep file beside the built JavaScript of the package\'s main entry (`representationPath`); a package built without kiln has none.',
  },
  KILN_REP_NOT_CALLABLE: {
    severity: 'error',
    outcome: 'refused',
    title: 'A call was asked of an export that is not a function',
    meaning:
      'The export is covered and its value was loaded, but it is an object or a primitive, so there is nothing to call with the arguments given. No call was made.',
    hint: 'Read the export\'s value instead of calling it (`load()`; `kiln call <pkg>#<export>` with no --args prints it), or call a function export; a class export is constructed (`construct()`; `kiln call` does it for you).',
  },
  KILN_REP_NOT_FOUND: {
    severity: 'error',
    outcome: 'refused',
    title: 'The package has no representation',
    meaning:
      'There is no kiln.rep where one was looked for, so a route that needs a representation cannot execute the package\'s exports. The package itself stays valid for routes that import it.',
    hint: 'Build the package with kiln (its build writes kiln.rep beside the built JavaScript of the main entry), or run `kiln represent <package dir>` after the package\'s own build tool; or install a version published with one. A route that does not need a representation can import the package instead.',
  },
  KILN_REP_NO_SUCH_EXPORT: {
    severity: 'error',
    outcome: 'refused',
    title: 'The representation has no entry for the requested export',
    meaning:
      'The surface identity is not in the representation\'s index, so nothing was loaded or evaluated.',
    hint: 'Check the surface identity (`pkg#name`, `pkg/subpath#name`) against the package\'s exports; `kiln inspect representation <pkg>` lists every indexed entry.',
  },
  KILN_REP_PAYLOAD_FAILED: {
    severity: 'error',
    outcome: 'failed',
    title: 'A payload of a representation failed to load',
    meaning:
      'The payload code did not compile, threw while its module body was evaluated, requires a payload the representation does not have, or does not export the entry\'s name. No result was produced for the call.',
    hint: 'The error the payload code threw is attached as the cause; importing the built package directly shows whether the package itself fails the same way.',
  },
  KILN_REP_PRODUCE_FAILED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'The build wrote no executable representation',
    meaning:
      "Producing the package's kiln.rep failed after a successful compile. The build's JavaScript and .d.ts are written and cached as usual; the package ships no representation (a valid package: routes that import it are unaffected), and consumers that need one refuse with KILN_REP_NOT_FOUND.",
    hint: 'Run `kiln represent <package dir>` to see the full error; set the build option "representation": false to stop producing one for this package.',
  },
  KILN_REP_REQUIREMENT_UNMET: {
    severity: 'error',
    outcome: 'refused',
    title: 'This consumer does not meet a representation\'s requirements',
    meaning:
      'The representation requires a newer Node.js or a feature this runtime does not know. It was refused before any payload was evaluated; the package stays valid for routes that do not need a representation.',
    hint: 'Upgrade Node.js or @kiln/runtime to one that meets the named requirement, or use a version of the package whose representation this consumer supports.',
  },
  KILN_REP_UNCOVERED: {
    severity: 'error',
    outcome: 'refused',
    title: 'The requested export is not covered by the representation',
    meaning:
      'The build indexed the export but could not represent it; the entry\'s reason code (KILN_REP_UNCOVERED_*) and detail say why. Nothing was evaluated.',
    hint: 'The entry\'s reason code says why the build could not cover it; import the package on a route that does not need a representation, or change the export so it can be covered.',
  },
  KILN_REP_UNCOVERED_BUNDLE_FAILED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An export could not be bundled into a representation payload',
    meaning:
      'Rollup refused to bundle the code this export reaches in the built JavaScript (the detail gives its message). The export is uncovered in the executable representation: a consumer needing it refuses the call. The package, its manifest and every other entry are unaffected.',
    hint: 'Build the package and import the entry with Node to see whether the built JavaScript loads; fix what the message names, then build again.',
  },
  KILN_REP_UNCOVERED_COMMONJS_BUILD: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A manifest entry has only a CommonJS build, which kiln does not bundle into payloads',
    meaning:
      'Payloads are bundled from the ESM build, and reading CommonJS needs @rollup/plugin-commonjs, which is not installed. Every export of the entry is uncovered in the executable representation; the package itself is unaffected.',
    hint: 'Add an ESM build of the entry (an import condition, or formats: ["esm", "cjs"]), or install @rollup/plugin-commonjs beside kiln.',
  },
  KILN_REP_UNCOVERED_DYNAMIC_IMPORT: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An export reaches a dynamic import() or a computed require()',
    meaning:
      'What such code loads is decided at run time, so no payload can carry it. The export is uncovered in the executable representation; the other exports are unaffected.',
    hint: 'Import the module statically (a top-level import), or keep the dynamic load out of the code the export reaches.',
  },
  KILN_REP_UNCOVERED_FOREIGN_DECLARATION: {
    severity: 'info',
    outcome: 'unaffected',
    title: 'An export is declared in another package',
    meaning:
      'The name is re-exported from another package, whose own representation covers it (the declaring package owns a declaration\'s executable meaning). It is listed as uncovered here by design.',
    hint: 'Nothing to do: a consumer resolves it through the declaring package. Declare it in this package if this package should own it.',
  },
  KILN_REP_UNCOVERED_IMPORT_META: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An export reaches code that uses import.meta',
    meaning:
      'Payloads are CommonJS modules run in node:vm, which has no import.meta (no module URL, no resolve). The export is uncovered in the executable representation; the other exports are unaffected.',
    hint: 'Pass the URL or path in from the caller, or keep import.meta in a module the exported code does not reach.',
  },
  KILN_REP_UNCOVERED_NATIVE_ADDON: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An export reaches a native addon (.node)',
    meaning:
      'A compiled addon is a platform binary, not JavaScript a payload can carry. The export is uncovered in the executable representation; the other exports are unaffected.',
    hint: 'Keep the addon behind a separate entry point, or move the export\'s logic out of the module that loads it.',
  },
  KILN_REP_UNCOVERED_NO_BUILD_OUTPUT: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A manifest entry has no built JavaScript',
    meaning:
      'The file package.json points the entry at does not exist (the package was not built, or the manifest names a path the build does not write), so its exports have no payload. They are uncovered in the executable representation.',
    hint: 'Build the package before producing its representation, and check that the manifest entry names a path the build writes.',
  },
  KILN_REP_UNCOVERED_TOP_LEVEL_AWAIT: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'An export reaches a module with top-level await',
    meaning:
      'Payloads are CommonJS modules, which are evaluated synchronously and cannot await at module level. The export is uncovered in the executable representation; the other exports are unaffected.',
    hint: 'Move the await into a function (an async initialiser the caller awaits), or keep the module out of the code the export reaches.',
  },
  KILN_REP_UNCOVERED_TYPE_ONLY: {
    severity: 'info',
    outcome: 'unaffected',
    title: 'An export has no runtime value',
    meaning:
      'It is an interface, a type alias or an ambient (declare) declaration — of this package, or another package\'s type re-exported type-only (`export type { X } from \'pkg\'`): the built JavaScript does not export it, so there is nothing to execute. It is listed as uncovered by design.',
    hint: 'Nothing to do: types are read from the declaration files, not from the representation.',
  },
  KILN_REP_UNREADABLE: {
    severity: 'error',
    outcome: 'refused',
    title: 'A representation file could not be read',
    meaning:
      'The path exists but could not be opened or read (permissions, a directory, an I/O error). Nothing was evaluated.',
    hint: 'Check that the path is a readable file (permissions, not a directory).',
  },
  KILN_REP_UNSUPPORTED_VERSION: {
    severity: 'error',
    outcome: 'refused',
    title: 'A representation is in a format version this runtime does not read',
    meaning:
      'It was refused having read only the version-independent prefix (and, when it reads cleanly, the package name and version), before anything version-specific was interpreted. The package and its manifest stay valid.',
    hint: 'Install a @kiln/runtime that reads this format version, or a version of the package built by a kiln whose format this runtime reads; the package itself stays usable on routes that do not need a representation.',
  },
  KILN_STACK_LINE_UNPARSED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A line of a stack trace is not a frame',
    meaning: 'The line is truncated, from a format kiln does not read, or not part of a trace. It is reported and skipped; every frame that was read is still symbolicated.',
    hint: 'Pass the whole trace as printed (V8/Node, Chrome, Firefox, Safari), or JSON frames `[{"file", "line", "column", "debugId"}]`.',
  },
  KILN_STORE_CORRUPT: {
    severity: 'warning',
    outcome: 'slower',
    title: 'A local store entry failed its integrity check',
    meaning:
      'The entry was discarded and the slice was recomputed from the source file, so the result is correct; only time was lost.',
    hint: 'If this repeats, check the disk; `rm -rf` of the store directory (see --store / KILN_STORE) is always safe.',
  },
  KILN_STORE_UNAVAILABLE: {
    severity: 'warning',
    outcome: 'slower',
    title: 'The local store could not be used',
    meaning: 'kiln continued without the store: every file was parsed, and nothing was cached for the next run.',
    hint: 'Check that the store directory (--store / KILN_STORE) is writable.',
  },
  KILN_SYNTAX_ERROR: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A source file has syntax errors',
    meaning:
      'Declarations outside the broken region still get digests. Declarations that overlap it are marked unparseable and always count as changed, because their meaning cannot be known.',
    hint: 'Fix the syntax error reported at the given line and column.',
  },
  KILN_TARGET_INPUTS_SHADOWED: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A keyed target declares inputs of its own',
    meaning:
      'A target\'s own inputs win over the ones kiln infers, so Nx hashes what they name (raw file bytes, every external dependency) beside kiln\'s key: the key still moves when the meaning does, but a comment edit or an unrelated lockfile change is no longer a cache hit.',
    hint: 'Remove the inputs from the target\'s definition (kiln\'s key covers its sources), or stop keying the target (the plugin option targets).',
  },
  KILN_TARGET_RAW_INPUTS: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'Nx hashes raw inputs of a keyed target besides kiln\'s key',
    meaning:
      'The task hash holds project source files or every external dependency (from the target\'s own inputs or a target default), so an edit kiln calls meaningless — a comment, an unrelated lockfile entry — still misses the cache. The key itself is right.',
    hint: 'Run `nx g @kiln/nx:init` (it writes target defaults for keyed projects), or remove the target\'s own "inputs".',
  },
  KILN_TOOL_INPUT_UNREADABLE: {
    severity: 'warning',
    outcome: 'degraded',
    title: 'A directory of a keyed target\'s project could not be listed',
    meaning:
      'The key of a target kiln does not run covers every file under its project. A directory that cannot be listed may hold anything the tool reads, so the key cannot vouch for it: it takes a fresh value on every computation, and the target is never a cache hit until the directory can be read.',
    hint: 'Check the directory\'s permissions (the tool would fail to read it the same way), or move it out of the project.',
  },
  KILN_TRACE_UNWRITABLE: {
    severity: 'warning',
    outcome: 'unaffected',
    title: 'The build timeline could not be written',
    meaning:
      'kiln went on without tracing (or stopped tracing where the write failed); its results are unaffected. The trace file lacks this process, or its capture has no completion record and reads as incomplete.',
    hint: 'Point --trace (or KILN_TRACE) at a writable path; a file that is not a kiln trace (a JSON array) is never appended to: delete it or choose another name.',
  },
  KILN_TSCONFIG_INVALID: {
    severity: 'error',
    outcome: 'refused',
    title: 'The tsconfig could not be used',
    meaning:
      'The TypeScript compiler rejected the configuration (syntax, unknown option, missing extends target, no input files). Nothing was compiled.',
    hint: 'Fix the tsconfig at the reported position; the TS code names the compiler check that failed (`npx tsc -p <tsconfig> --showConfig` shows what it resolves to).',
  },
  KILN_TSCONFIG_NOT_FOUND: {
    severity: 'error',
    outcome: 'refused',
    title: 'No tsconfig was found for the build',
    meaning:
      'The build compiles with a tsconfig of the project; none of the names tried exists, so nothing was compiled.',
    hint: 'Create tsconfig.lib.json (or tsconfig.build.json / tsconfig.json) in the project, or set the target option tsConfig to the file to use.',
  },
  KILN_TSCONFIG_UNKNOWN_OPTION: {
    severity: 'warning',
    outcome: 'unaffected',
    title: 'The tsconfig sets a compiler option kiln\'s TypeScript does not know',
    meaning:
      'The option is usually a newer compiler\'s (TypeScript 6\'s `stableTypeOrdering`, say). kiln reads tsconfigs with its own TypeScript, which drops the option from its parse; the key covers the option\'s raw value instead, from every config of the extends chain that sets it, so changing it still moves the key. A misspelt option is reported the same way.',
    hint: 'Nothing to do if your build\'s TypeScript knows the option; otherwise fix its spelling. A kiln built on a newer TypeScript reads it as the compiler does.',
  },
  KILN_TYPESCRIPT_ERROR: {
    severity: 'error',
    outcome: 'failed',
    wraps: 'typescript',
    title: 'The TypeScript compiler reported an error',
    meaning:
      'The build failed. kiln builds with noEmitOnError semantics: no file was written, and outputs of earlier builds were removed, so nothing looks like the result of this build.',
    hint: 'Fix the error at the reported file, line and column; the TS code (e.g. TS2322) is the compiler\'s own and can be looked up in its documentation.',
  },
  KILN_TYPESCRIPT_WARNING: {
    severity: 'warning',
    outcome: 'unaffected',
    wraps: 'typescript',
    title: 'The TypeScript compiler reported a warning',
    meaning:
      'The build continues; the warning does not change the output.',
    hint: 'Fix it at the reported location, or change the tsconfig option that enables it.',
  },
  KILN_UNKNOWN_CODE: {
    severity: 'error',
    outcome: 'refused',
    title: '`kiln explain` was given a code that is not in the registry',
    meaning: 'Nothing to explain.',
    hint: 'Run `kiln explain --list` to see every code.',
  },
  KILN_USAGE: {
    severity: 'error',
    outcome: 'refused',
    title: 'The command line is not valid',
    meaning: 'Nothing was run.',
    hint: 'Run the command with --help to see its usage.',
  },
  KILN_WORKER_FAILED: {
    severity: 'error',
    outcome: 'degraded',
    title: 'A digest worker failed unexpectedly',
    meaning: 'The file it was digesting is reported as unparseable: its declarations count as changed.',
    hint: 'This is a bug in kiln; please report it with the file that triggered it.',
  },
} as const satisfies Record<string, CodeEntry>;

export type DiagnosticCode = keyof typeof CODES;

export function isDiagnosticCode(code: string): code is DiagnosticCode {
  return Object.prototype.hasOwnProperty.call(CODES, code);
}
