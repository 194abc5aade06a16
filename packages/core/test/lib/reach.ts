/**
 * Two-state workspace scenarios for "what reaches a build without a named import" (issue 10 point 2):
 * a small npm workspace (`@x/dep` ← `@x/app`, linked through node_modules like an install does) is
 * written twice — before and after one edit — and for each state kiln computes every key and the real
 * build (kiln's executor, the TypeScript compiler: dependencies first) emits every package. A case
 * asserts that the consumer's key moved exactly when its fresh output changed.
 *
 * The output comparison is bytes (maps excluded): independent of kiln's extractor, and strict — a
 * twin case that must keep its key also expects byte-identical output.
 */
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { compileProject, computeWorkspaceKeys, writeRepresentation } from '@kiln/core';
import { representationPath } from '@kiln/runtime';
import { tempDir, type Tree } from './build-fixtures.js';

export interface WorkspaceSpec {
  /** Files relative to the workspace root. */
  files: Tree;
  /** Package roots in build order (dependencies first), e.g. `packages/dep`. */
  build: string[];
  /** Symlinks to create, link path → target (both relative to the workspace root). */
  links?: Record<string, string>;
  /** Also write each package's executable representation (kiln.rep, as kiln's build does) and compare it. */
  represent?: boolean;
}

export interface Edit {
  /** Files to write (relative to the workspace root); `null` deletes. */
  [file: string]: string | null | ((before: string) => string);
}

export interface StateResult {
  keys: Map<string, string | null>;
  outputs: Map<string, Map<string, string>>;
  failed: string[];
}

export interface ScenarioResult {
  /** Projects whose key moved. */
  moved: string[];
  /** Package roots whose build output changed (or failed in one state only). */
  outputChanged: string[];
  /** First differing output file per package, for messages. */
  detail: Record<string, string>;
  before: StateResult;
  after: StateResult;
}

const roots: string[] = [];

export async function disposeScenarios(): Promise<void> {
  if (process.env.KILN_TEST_KEEP) return void console.log(`kept: ${roots.join(' ')}`);
  await Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
}

/** Every package.json `name` in the spec keyed by its root; linked under node_modules like an install. */
function packagesOf(files: Tree): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, text] of Object.entries(files)) {
    if (!path.endsWith('/package.json')) continue;
    const name = (JSON.parse(text) as { name?: string }).name;
    if (name) out.set(dirname(path), name);
  }
  return out;
}

async function writeState(root: string, spec: WorkspaceSpec, edit: Edit | undefined): Promise<void> {
  const files: Record<string, string> = { ...spec.files };
  for (const [path, change] of Object.entries(edit ?? {})) {
    if (change === null) delete files[path];
    else if (typeof change === 'function') {
      const before = files[path];
      if (before === undefined) throw new Error(`edit of ${path}: no such file`);
      const after = change(before);
      if (after === before) throw new Error(`edit of ${path} changed nothing`);
      files[path] = after;
    } else files[path] = change;
  }
  for (const [path, text] of Object.entries(files)) {
    const abs = join(root, path);
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, text);
  }
  for (const [pkgRoot, name] of packagesOf(files)) {
    const link = join(root, 'node_modules', name);
    await mkdir(dirname(link), { recursive: true });
    await symlink(relative(dirname(link), join(root, pkgRoot)), link, 'dir');
  }
  for (const [link, target] of Object.entries(spec.links ?? {})) {
    const abs = join(root, link);
    await mkdir(dirname(abs), { recursive: true });
    await symlink(relative(dirname(abs), join(root, target)), abs);
  }
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = join(d, e.name);
      if (e.isDirectory()) await walk(abs);
      else out.push(relative(dir, abs).split(sep).join('/'));
    }
  };
  await walk(dir);
  return out.sort();
}

async function state(name: string, spec: WorkspaceSpec, edit?: Edit): Promise<StateResult> {
  const root = join(tempDir(`reach-${name}`), 'ws');
  roots.push(dirname(root));
  await writeState(root, spec, edit);
  const keys = await computeWorkspaceKeys(root, { store: false, workers: 0 });
  const outputs = new Map<string, Map<string, string>>();
  const failed: string[] = [];
  for (const pkg of spec.build) {
    const r = await compileProject({ projectRoot: join(root, pkg), exports: false });
    if (!r.success) failed.push(`${pkg}: ${r.diagnostics.map((d) => d.message).join('; ')}`);
    const files = new Map<string, string>();
    for (const dir of r.outputDirs) {
      const absDir = join(root, pkg, dir);
      // Maps are not compared (SPEC §4), and neither is the debug ID naming the (JS, map) pair (SPEC §8):
      // a comment edit moves the map, so a fresh build's ID differs from the cached one's by design.
      for (const f of await listFiles(absDir)) if (!f.endsWith('.map')) files.set(`${dir}/${f}`, (await readFile(join(absDir, f), 'utf8')).replace(/^\/\/# debugId=[0-9a-f-]{36}\n/m, ''));
    }
    if (spec.represent && r.success) {
      // kiln.rep is binary: compared as base64 (a differing byte is a differing output).
      await writeRepresentation({ packageRoot: join(root, pkg), store: false, workers: 0 });
      files.set('kiln.rep', (await readFile(representationPath(join(root, pkg)))).toString('base64'));
    }
    outputs.set(pkg, files);
  }
  return { keys: new Map(keys.projects.map((p) => [p.project, p.key])), outputs, failed };
}

/** Build and key the workspace before and after `edit`. Builds must succeed in both states. */
const befores = new WeakMap<WorkspaceSpec, Promise<StateResult>>();

/**
 * Build and key the workspace before and after `edit`. Builds must succeed in both states. The state
 * before is computed once per spec object (twin cases share it).
 */
export async function scenario(name: string, spec: WorkspaceSpec, edit: Edit): Promise<ScenarioResult> {
  let pending = befores.get(spec);
  if (!pending) befores.set(spec, (pending = state(`${name}-a`, spec)));
  const before = await pending;
  const after = await state(`${name}-b`, spec, edit);
  if (before.failed.length || after.failed.length) {
    throw new Error(`${name}: a build failed — before: ${before.failed.join(' | ') || 'ok'}; after: ${after.failed.join(' | ') || 'ok'}`);
  }
  const moved = [...after.keys.keys()].filter((p) => after.keys.get(p) !== before.keys.get(p)).sort();
  const outputChanged: string[] = [];
  const detail: Record<string, string> = {};
  for (const pkg of spec.build) {
    const a = before.outputs.get(pkg)!;
    const b = after.outputs.get(pkg)!;
    const names = [...new Set([...a.keys(), ...b.keys()])].sort();
    const differing = names.find((f) => a.get(f) !== b.get(f));
    if (differing) {
      outputChanged.push(pkg);
      detail[pkg] = `${differing}: ${JSON.stringify(a.get(differing) ?? null)?.slice(0, 300)} → ${JSON.stringify(b.get(differing) ?? null)?.slice(0, 300)}`;
    }
  }
  return { moved, outputChanged, detail, before, after };
}
