/**
 * Recording what a computation reads: while a recording runs, every path read, stat'ed or listed
 * through node:fs by this thread is noted — inside the workspace walk as a workspace-relative path,
 * outside it as a probe stamped just before its first read. The graph memo (graph-memo.ts) stats those
 * probes on every lookup, so a memo answers only while what the keys read outside the walk is unchanged.
 *
 * Invariants: recording never changes what a call does (the wrappers pass arguments and results
 * through, and swallow only their own errors); node:fs is patched only while some recording runs, and
 * restored when the last stops (unless someone patched over it); the recording's own stats go through
 * node:fs as loaded (snapshot.ts `fsSync`). Nothing is patched at import.
 */
import { type BigIntStats } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorText, fsSync, nowNs, SKIPPED_DIRS, stampOf, type Stamp } from './snapshot.js';

export interface Recording {
  /** Workspace-relative (POSIX) paths read inside the walk. */
  inside: Set<string>;
  /** Absolute paths read outside the walk → their stamp just before the first read. */
  probes: Map<string, Stamp>;
  stop(): void;
}

const req = createRequire(import.meta.url);
const fsModule = req('node:fs') as Record<string, unknown> & { promises: Record<string, unknown> };
const listeners = new Set<(path: string) => void>();
/** [object, name, original, wrapper] of each patched function while recordings run. */
let patches: [Record<string, unknown>, string, unknown, unknown][] | undefined;

/** Node's file-system functions that read, stat or list a path (first argument). */
const FS_READERS = [
  'readFileSync', 'statSync', 'lstatSync', 'existsSync', 'readdirSync', 'accessSync', 'openSync', 'opendirSync', 'realpathSync',
  'readFile', 'stat', 'lstat', 'readdir', 'access', 'open', 'opendir', 'exists', 'realpath', 'createReadStream',
];
const FS_PROMISE_READERS = ['readFile', 'stat', 'lstat', 'readdir', 'access', 'open', 'opendir', 'realpath'];

function pathOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg.startsWith('file:') ? fileURLToPath(arg) : arg;
  if (arg instanceof URL) return arg.protocol === 'file:' ? fileURLToPath(arg) : undefined;
  if (Buffer.isBuffer(arg)) return arg.toString();
  return undefined;
}

function wrapReader(original: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    if (listeners.size) {
      try {
        const path = pathOf(args[0]);
        if (path !== undefined) for (const l of listeners) l(resolve(path));
      } catch {
        // recording never changes what the call does
      }
    }
    return Reflect.apply(original, this, args);
  };
  for (const k of Reflect.ownKeys(original)) {
    if (k === 'length' || k === 'name' || k === 'prototype') continue;
    const v = (original as unknown as Record<PropertyKey, unknown>)[k];
    (wrapper as unknown as Record<PropertyKey, unknown>)[k] = k === 'native' && typeof v === 'function' ? wrapReader(v as (...args: unknown[]) => unknown) : v;
  }
  return wrapper;
}

/**
 * Records every path read, stat'ed or listed through node:fs (sync, callback and promise forms, which
 * ES module imports of node:fs see too: syncBuiltinESMExports) by this thread until stop(). A path
 * inside the walk is noted; one outside it (and outside `excluded`: kiln's store, records, compile
 * cache and code, none of which a key depends on) is stamped before its first read. Worker threads
 * are not seen: they read the modules the keys list, which `readsOutside` checks.
 */
export function startRecording(workspaceRoot: string, excluded: string[]): Recording {
  const inside = new Set<string>();
  const probes = new Map<string, Stamp>();
  const listener = (abs: string) => {
    if (excluded.some((e) => abs === e || abs.startsWith(`${e}${sep}`))) return;
    const rel = relative(workspaceRoot, abs);
    const parts = rel.split(sep);
    if (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel) && !parts.some((p) => SKIPPED_DIRS.has(p))) {
      inside.add(parts.join('/'));
    } else if (!probes.has(abs)) {
      const now = nowNs();
      let s: BigIntStats | undefined;
      let error: string | undefined;
      try {
        s = fsSync.statSync(abs, { bigint: true, throwIfNoEntry: false });
      } catch (e) {
        error = errorText(e);
      }
      probes.set(abs, stampOf(s, now, error));
    }
  };
  if (!patches) {
    patches = [];
    for (const [object, names] of [[fsModule, FS_READERS], [fsModule.promises, FS_PROMISE_READERS]] as const) {
      for (const name of names) {
        const original = object[name];
        if (typeof original !== 'function') continue;
        const wrapper = wrapReader(original as (...args: unknown[]) => unknown);
        object[name] = wrapper;
        patches.push([object, name, original, wrapper]);
      }
    }
    syncBuiltinESMExports();
  }
  listeners.add(listener);
  return {
    inside,
    probes,
    stop() {
      listeners.delete(listener);
      if (listeners.size || !patches) return;
      // A function someone patched over ours stays (ours passes through when nothing records).
      for (const [object, name, original, wrapper] of patches) if (object[name] === wrapper) object[name] = original;
      patches = undefined;
      syncBuiltinESMExports();
    },
  };
}
