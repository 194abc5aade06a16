/**
 * The TypeScript compiler's own parser, for TS, TSX, declaration files and JavaScript (ESM and CJS).
 * Chosen by measurement over tree-sitter (see tools/bench-digest.mjs). The module is loaded lazily
 * so importing this file does no work: a piscina worker pays for `typescript` on its first parse,
 * once.
 */
import { createRequire } from 'node:module';
import type * as TS from 'typescript';
import type { Variant } from './language.js';

let tsModule: typeof TS | undefined;
let loads = 0;

export function typescript(): typeof TS {
  if (!tsModule) {
    tsModule = createRequire(import.meta.url)('typescript') as typeof TS;
    loads++;
  }
  return tsModule;
}

/** How many times this thread has loaded the compiler: 0 before its first parse, then 1 for good. */
export function parserLoads(): number {
  return loads;
}

export interface ParseResult {
  sourceFile: TS.SourceFile;
  /** Syntax errors the parser recovered from: [start, end) offsets and the compiler's message. */
  syntaxErrors: { start: number; end: number; message: string; tsCode: number }[];
}

const FILE_NAMES: Record<Variant, string> = {
  ts: 'm.ts',
  tsx: 'm.tsx',
  dts: 'm.d.ts',
  js: 'm.js',
  jsx: 'm.jsx',
};

/**
 * Parse text as the given variant. The file name handed to the compiler is a fixed placeholder per
 * variant, so nothing about the real path can reach the tree.
 */
export function parseTypeScript(text: string, variant: Variant): ParseResult {
  const ts = typescript();
  const isJs = variant === 'js' || variant === 'jsx';
  const scriptKind = {
    ts: ts.ScriptKind.TS,
    tsx: ts.ScriptKind.TSX,
    dts: ts.ScriptKind.TS,
    js: ts.ScriptKind.JS,
    jsx: ts.ScriptKind.JSX,
  }[variant];
  const sourceFile = ts.createSourceFile(
    FILE_NAMES[variant],
    text,
    {
      languageVersion: ts.ScriptTarget.Latest,
      // JSDoc carries types in JavaScript (checkJs); in TypeScript it is documentation only, which
      // kiln reads from comment ranges without paying for a JSDoc parse.
      jsDocParsingMode: isJs ? ts.JSDocParsingMode.ParseAll : ts.JSDocParsingMode.ParseNone,
    },
    /* setParentNodes */ false,
    scriptKind,
  );
  const raw = (sourceFile as unknown as { parseDiagnostics?: TS.DiagnosticWithLocation[] }).parseDiagnostics ?? [];
  const syntaxErrors = raw.map((d) => ({
    start: d.start,
    end: d.start + Math.max(d.length, 0),
    message: ts.flattenDiagnosticMessageText(d.messageText, ' '),
    tsCode: d.code,
  }));
  return { sourceFile, syntaxErrors };
}
