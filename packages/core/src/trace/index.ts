/**
 * The build timeline (`@kiln/core/trace`): spans of kiln's own work — parse, digest, store reads and
 * writes, compile phases, emit, the wait on the worker pool — written as a Chrome Trace Event Format
 * file (viewable in Perfetto, ui.perfetto.dev, or chrome://tracing). `record.ts` records spans on a
 * thread (lanes, workers), `capture.ts` appends one process's capture to a shared file, `session.ts`
 * starts and ends it, `clock.ts` is the clock.
 *
 * Invariant: loadable alone (the Nx plugin's memo hit loads this and nothing else of core): it imports
 * only node built-ins, version.ts and the diagnostics. Nothing happens at import time; with no capture
 * started, recording a span costs one check.
 */
export { TRACE_CLOCK } from './clock.js';
export { TRACE_CATEGORY } from './capture.js';
export { annotate, begin, collectSpans, drainSpans, end, endFailed, ingestSpans, span, spanSince, tracing, type FinishedSpan, type SpanToken } from './record.js';
export { flushTrace, startTrace, withTrace, type TraceOptions, type TraceSession } from './session.js';
export { formatDiagnostic } from '../diagnostics/diagnostic.js';
