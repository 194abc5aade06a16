/**
 * Key records, so a miss can be explained: the components of every key kiln computed (by key, so
 * recording is idempotent and path-free), and the key each target was last *built* with. They live in
 * the workspace's `node_modules/.cache/kiln/` (local, disposable, gitignored by convention). Records are
 * explanations, never inputs: deleting them costs an explanation, not a build.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyComponents } from './unit-key.js';
import type { ToolKeyComponents } from './tool-key.js';

export function recordsDir(workspaceRoot: string): string {
  return join(workspaceRoot, 'node_modules', '.cache', 'kiln');
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/** Write the components of a key, once (the key is a digest of them). */
export async function recordComponents(workspaceRoot: string, key: string, components: KeyComponents | ToolKeyComponents): Promise<void> {
  const dir = join(recordsDir(workspaceRoot), 'keys');
  const file = join(dir, `${key}.json`);
  if (existsSync(file)) return;
  await atomicWrite(dir, file, JSON.stringify(components));
}

export async function readComponents(workspaceRoot: string, key: string): Promise<KeyComponents | undefined> {
  try {
    return JSON.parse(await readFile(join(recordsDir(workspaceRoot), 'keys', `${safe(key)}.json`), 'utf8')) as KeyComponents;
  } catch {
    return undefined;
  }
}

export interface BuiltRecord {
  project: string;
  target: string;
  key: string;
  /** ISO time of the build, for people only. */
  at: string;
}

/** Remember the key a target was built with (called by the executor after a successful build). */
export async function recordBuilt(workspaceRoot: string, project: string, target: string, key: string): Promise<void> {
  const dir = join(recordsDir(workspaceRoot), 'built', safe(project));
  const record: BuiltRecord = { project, target, key, at: new Date().toISOString() };
  await atomicWrite(dir, join(dir, `${safe(target)}.json`), JSON.stringify(record));
}

export async function readBuilt(workspaceRoot: string, project: string, target: string): Promise<BuiltRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(recordsDir(workspaceRoot), 'built', safe(project), `${safe(target)}.json`), 'utf8')) as BuiltRecord;
  } catch {
    return undefined;
  }
}

async function atomicWrite(dir: string, file: string, text: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}
