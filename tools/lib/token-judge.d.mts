/** Types of tools/lib/token-judge.mjs (the independent equivalence judge); see its header for the rule. */
export interface JudgeResult {
  /** No difference (and at least one file compared). */
  equal: boolean;
  /** Files present in both outputs and judged (source maps and excluded files are not counted). */
  compared: number;
  /** One line each, starting with the file's relative path. */
  differences: string[];
}

export function judgeOutputs(dirA: string, dirB: string, options?: { exclude?: (file: string) => boolean }): Promise<JudgeResult>;

/** One file's content on both sides; `file` (relative path) decides how it is judged. */
export function judgeFile(file: string, a: Uint8Array | string, b: Uint8Array | string, options?: { reprint?: boolean }): Promise<string[]>;

export function judgeKind(file: string): 'js' | 'jsx' | 'dts' | 'map' | 'bytes';

/** The normalised value of a comment the judge keeps, or undefined for one it drops. */
export function meaningfulComment(raw: string, isLine: boolean, isDts: boolean): string | undefined;

export const REPRINT_OPTIONS: Readonly<Record<string, unknown>>;
