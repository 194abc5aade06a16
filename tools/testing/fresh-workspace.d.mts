import type { ExecResult } from './workspace.mjs';

export const PNPM: string;
export const YARN: string;
export function packageManagers(dir: string): Promise<string>;
export function freshEnv(options?: { path?: string; yarnCache?: string }): NodeJS.ProcessEnv;
export interface FreshWorkspace {
  root: string;
  pm: 'npm' | 'pnpm' | 'yarn';
  env: NodeJS.ProcessEnv;
  run(command: string, args: string[], timeoutMs?: number): Promise<ExecResult>;
  nx(args: string[], timeoutMs?: number): Promise<ExecResult>;
  readJson(file: string): Promise<any>;
  readText(file: string): Promise<string>;
  writeJson(file: string, value: unknown): Promise<void>;
}
export function freshWorkspace(
  dir: string,
  options: { nx: string; pm: 'npm' | 'pnpm' | 'yarn'; devDependencies?: Record<string, string>; env?: NodeJS.ProcessEnv },
): Promise<FreshWorkspace>;
