export const KILN_ROOT: string;
export const FIXTURES_DIR: string;

export interface ExecResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they arrived. */
  output: string;
  durationMs: number;
  timedOut: boolean;
}

export function exec(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string },
): Promise<ExecResult>;

/** process.env minus every NX_* / GIT_* variable and colour forcing, plus `extra` (undefined removes). */
export function cleanEnv(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;

export function linkNodeModules(root: string, source?: string): Promise<void>;
export function workspacePackages(root: string): Promise<{ name: string; version?: string; dir: string }[]>;

/** 'local' = local cache hit, 'remote' = remote cache hit, 'executed' = cache miss, the task ran. */
export type CacheOutcome = 'local' | 'remote' | 'executed';

export interface NxTaskResult {
  id: string;
  project: string;
  target: string;
  /** The Nx task hash (the cache key). */
  hash: string;
  cache: CacheOutcome;
  /** The task's exit code (the cached one for a hit). */
  code: number;
  /** What the static terminal output said about the task, null when its line was not found. */
  terminalMarker: CacheOutcome | null;
}

export interface NxRunResult extends ExecResult {
  args: string[];
  /** The raw `<cacheDir>/run.json` Nx wrote for this run (null if it wrote none). */
  runJson: any;
  tasks: Record<string, NxTaskResult>;
  /** taskId → outcome, keys sorted. */
  statuses: Record<string, CacheOutcome>;
  /** taskId → hash, keys sorted. */
  hashes: Record<string, string>;
  executed: string[];
  localHits: string[];
  remoteHits: string[];
}

export interface HashOptions {
  targets?: string[];
  projects?: string[];
  configuration?: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

export function parseTaskLines(output: string): Record<string, CacheOutcome>;

export class Workspace {
  constructor(root: string, meta?: { fixture?: string; origin?: Workspace });
  readonly root: string;
  readonly fixture: string | null;
  /** The workspace this one was cloned from, if any. */
  readonly origin: Workspace | null;
  /** <root>/.nx/cache (NX_CACHE_DIRECTORY). */
  readonly cacheDir: string;
  /** <root>/.nx/workspace-data (NX_WORKSPACE_DATA_DIRECTORY). */
  readonly workspaceDataDir: string;

  path(rel?: string): string;
  exists(rel: string): boolean;
  read(rel: string): Promise<string>;
  readJson<T = any>(rel: string): Promise<T>;
  write(rel: string, content: string): Promise<void>;
  writeJson(rel: string, value: unknown): Promise<void>;
  /** A function of the content, or a [search, replace] pair that must match and must change something. */
  edit(rel: string, change: ((content: string) => string) | [string | RegExp, string]): Promise<string>;
  editJson<T = any>(rel: string, change: (value: T) => T | void): Promise<void>;
  remove(rel: string): Promise<void>;

  git(...args: (string | string[])[]): Promise<string>;
  /** `git add -A` + commit; returns the new HEAD sha. */
  commit(message?: string, options?: { allowEmpty?: boolean }): Promise<string>;
  head(): Promise<string>;
  /** `git pull --ff-only` from the origin of a clone, then re-links node_modules. */
  pull(): Promise<string>;

  packages(): Promise<{ name: string; version?: string; dir: string }[]>;
  linkNodeModules(): Promise<void>;
  /** Deletes the `nx` field (the fixture's plain build target) from every workspace package.json. */
  removePackageNxConfig(): Promise<void>;

  nxEnv(env?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  nxBin(): string;
  runNx(
    args: string[],
    options?: { env?: Record<string, string | undefined>; timeoutMs?: number; allowFailure?: boolean },
  ): Promise<NxRunResult>;
  /** taskId → hash as Nx computes it before running (null for tasks Nx hashes only at run time). */
  hashes(options?: HashOptions & { details?: false }): Promise<Record<string, string | null>>;
  hashes(options: HashOptions & { details: true }): Promise<{
    hashes: Record<string, string | null>;
    deferred: string[];
    details: Record<string, { command: string; nodes: Record<string, string>; implicitDeps: object; runtime: object } | null>;
  }>;
  hashOf(taskId: string, options?: HashOptions): Promise<string | null>;
  clearLocalCache(): Promise<void>;
  cleanOutputs(): Promise<void>;
  /** Runs an ESM snippet with cwd = the workspace; returns stdout. */
  node(source: string, options?: { timeoutMs?: number }): Promise<string>;
  dispose(): Promise<void>;
}

export function createWorkspace(
  fixture: string,
  options?: { git?: boolean; message?: string; prepare?: (ws: Workspace) => Promise<void> | void },
): Promise<Workspace>;
export function cloneWorkspace(ws: Workspace): Promise<Workspace>;
export function disposeAll(): Promise<void>;
export function isSymlink(path: string): Promise<boolean>;
