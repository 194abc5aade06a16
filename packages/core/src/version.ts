/**
 * Version constants. Each on-disk or on-wire format has exactly one constant here; bumping one
 * invalidates exactly what depends on it and nothing else.
 *
 * Invariant: a slice is a pure function of (file content, language variant, EXTRACTOR_VERSION,
 * digest schema). Anything that can change a slice for the same content must bump EXTRACTOR_VERSION.
 */

/** Version of the fact extractor (parse + walk). Part of every slice key. */
export const EXTRACTOR_VERSION = 6;

/**
 * The TypeScript parser EXTRACTOR_VERSION was cut for (kiln pins it exactly). Slices are keyed by
 * EXTRACTOR_VERSION, not by the parser, so a process whose installed `typescript` is another version
 * must not share the store (parse/parser-version.ts turns the store off and says so): a newer parser
 * may see a file differently. Upgrading kiln's typescript means bumping EXTRACTOR_VERSION and this
 * together (test/parser-version.test.ts fails until both move).
 */
export const EXTRACTOR_PARSER_VERSION = '5.9.3';

/** Current semantic/doc digest projection. Every digest carries it as `digest_schema`. */
export const DIGEST_SCHEMA = 2;

/**
 * The previous projection, kept so that a key recorded under it can still be recognised: a match
 * only under this schema is a *stale* hit and is reported with a notice (SPEC §3).
 */
export const PREVIOUS_DIGEST_SCHEMA = 1;

/**
 * Layout version of the local store (cacache keys and entry encoding). 2: ADR 0012's two levels —
 * content-addressed packs of slices, per-view manifests, a registry of views (store/format.ts).
 */
export const STORE_FORMAT_VERSION = 2;

/**
 * Version of the JSON documents `kiln digest --format json` writes (and `kiln diff` can read back).
 * 2: their `diagnostics` are diagnostic envelopes (DIAGNOSTIC_ENVELOPE_VERSION), not the flat records of 1.
 */
export const DIGEST_REPORT_VERSION = 2;

/**
 * Version of the diagnostic envelope (diagnostics/envelope.ts, diagnostics/envelope.schema.json): the
 * one record of every diagnostic kiln prints or returns, in text and JSON. Any change to a field's
 * meaning, or a field removed, bumps it; an additive optional field does not. Readers refuse other
 * versions (KILN_ENVELOPE_UNSUPPORTED_VERSION) rather than read them as success.
 */
export const DIAGNOSTIC_ENVELOPE_VERSION = 1;

/**
 * Version of the codegraph JSONL format (`kiln graph export`, packages/core/src/graph/): the header's
 * `schema_version` and the `$id` of graph/schema/codegraph.schema.json. Any change to a record kind's
 * fields bumps it; readers refuse other versions rather than misread them.
 */
export const GRAPH_SCHEMA_VERSION = 1;

/**
 * Version of the key composition (key/unit-key.ts, key/tool-key.ts): what a build or tool key covers
 * and how its material is laid out. It is in every key's material and domain (`kiln-key/N`,
 * `kiln-tool-key/N`) and in the recorded components, so a bump changes every key: each target misses
 * the Nx cache once. Bump it whenever what a key covers changes — or what a keyed build writes for the
 * same inputs: 4 = kiln's build gives every JS file a debug ID and every map `sourcesContent` (SPEC §8),
 * so an output cached under 3 (without them) must not be restored as the product of 4. 5 = kiln's build
 * also writes the package's executable representation (`kiln.rep`, SPEC §7) into its outputs; a change
 * of what it holds for the same inputs (REPRESENTATION_FORMAT, the producer's payload bundling) is a
 * change of what the build writes, and bumps this too. 6 = the writer's deflate dictionary is the
 * payloads' own code (runtime/src/write.ts), so the same inputs give other kiln.rep bytes. 7 = the
 * payloads keep the names esbuild's reprint gave a nested binding shadowing a top-level one
 * (represent/bundle.ts restoreBindingNames: `class TRPCBuilder2` is `class TRPCBuilder` again), and
 * a function or class rollup renamed in a chunk (`isFormData$1`) gets its `name` back (keepNames), and
 * another package's type re-exported type-only is KILN_REP_UNCOVERED_TYPE_ONLY (was FOREIGN_DECLARATION).
 * 8 = representation format 2 (runtime/src/format.ts: varint prefix, per-file record widths, the
 * static dictionary): a kiln.rep cached under 7 is format 1, which this runtime refuses.
 */
export const KEY_SCHEMA = 8;

/**
 * Layout of a memoised report entry in the store (view/report-memo.ts): written in each entry and
 * hashed into its input digest. A bump makes every memoised report a miss (assembled again once and
 * replaced); slices, packs, manifests and keys are untouched.
 */
export const VIEW_REPORT_FORMAT = 1;

/**
 * Format of the context pack (`kiln context pack`, graph/context/pack.ts): the compact text's header
 * (`# kiln context pack v1`) and the JSON's `version`. Nothing is stored under it; a bump tells the
 * pack's readers (a model's prompt, tools parsing the JSON) that the layout changed. 2 = a diagnostic
 * item is the diagnostic envelope (JSON `envelope`; its line `!1 C file:line:col - error TS2322: …`).
 */
export const CONTEXT_PACK_VERSION = 2;

/**
 * Format of the vite-externals verdict cache (node_modules/.cache/kiln, key/vite-externals.ts): a cache
 * of another format is ignored. A bump costs each project one resolution of its vite config; keys are
 * unchanged.
 */
export const VITE_VERDICT_FORMAT = 1;

/**
 * Format of the Nx plugin's graph memo (node_modules/.cache/kiln/graph-memo.json, plugins/src/graph-memo.ts):
 * a memo of another format is ignored. A bump costs each workspace one computation of its project
 * graph (keys included); the keys themselves are unchanged. The plugin's graph memo uses this constant
 * (plugins/src/graph-memo.ts imports it as `@kiln/core/version`, which loads nothing else of core).
 */
export const GRAPH_MEMO_FORMAT = 4;

/**
 * Format of `kiln affected --format json` (affected/affected.ts): the records a CI script reads. A bump
 * means a field changed meaning or was removed; adding a field does not bump it.
 */
export const AFFECTED_FORMAT = 2; // 2: `diagnostics` are diagnostic envelopes

/**
 * Format of the memoised dependency graph of a head state (affected/closure-memo.ts, store key
 * `kiln/v2/closure/c<N>/…`): what an entry holds and what its input digest covers. An entry of another
 * format is never read; a bump costs one computation of the graph per head. (kiln's code is in the
 * input digest too, so a change to how edges are found needs no bump.)
 */
export const AFFECTED_CLOSURE_FORMAT = 1;

/**
 * Layout of the debug store's entries (debug/record.ts): the `kiln/debug/v<N>/` key prefix and the
 * `format` field of every record. A bump makes every record a miss: artifacts are ingested again from
 * their files on first use, and `kiln store gc` removes the old entries.
 */
export const DEBUG_STORE_FORMAT = 1;

/**
 * Format of the build timeline (`--trace FILE`, `KILN_TRACE`; trace/): Chrome Trace Event Format in
 * the JSON Array form, with kiln's own parts versioned here — the `kiln_capture` metadata records
 * (started / complete / incomplete), the span names and their `args` (`incomplete`, `reason`, `file`,
 * …). Written in each capture's `started` record. Nothing is keyed by it: a bump tells the readers of
 * trace files (viewers ignore what they do not know) that one of those parts changed.
 */
export const TRACE_FORMAT_VERSION = 1;

/**
 * Format of the executable representation (`kiln.rep`, SPEC §7): the `format` of its header, independent
 * of the manifest's. Its one definition is the codec's (@kiln/runtime format.ts, which consumers install
 * without core); listed here so every format version kiln writes is found in this file.
 */
export { REPRESENTATION_FORMAT } from '@kiln/runtime';
