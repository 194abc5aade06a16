/**
 * Which language and parser variant a file is, from its name alone. The variant is part of the slice
 * key (the same bytes parse differently as .ts and .tsx), the path itself is not.
 */

export type Language = 'typescript' | 'javascript';
/** Parser variant: decides the grammar (JSX or not, declaration file or not). */
export type Variant = 'ts' | 'tsx' | 'dts' | 'js' | 'jsx';

export interface FileKind {
  language: Language;
  variant: Variant;
}

const SOURCE_RE = /\.(d\.[mc]?ts|[mc]?ts|tsx|[mc]?js|jsx)$/;

export function fileKind(path: string): FileKind | undefined {
  const m = SOURCE_RE.exec(path);
  if (!m) return undefined;
  const ext = m[1]!;
  if (ext.startsWith('d.')) return { language: 'typescript', variant: 'dts' };
  if (ext === 'tsx') return { language: 'typescript', variant: 'tsx' };
  if (ext.endsWith('ts')) return { language: 'typescript', variant: 'ts' };
  if (ext === 'jsx') return { language: 'javascript', variant: 'jsx' };
  return { language: 'javascript', variant: 'js' };
}

export function isSourceFile(path: string): boolean {
  return SOURCE_RE.test(path);
}

/**
 * Logical module path: relative to the package root, POSIX separators, no extension. `.mts`/`.cts`/
 * `.mjs`/`.cjs` keep a format marker (`index.mjs` and `index.cjs` are two different modules of a dual
 * package), the plain and declaration forms do not (`index.ts` and `index.d.ts` describe one module).
 */
export function logicalModulePath(relPath: string): string {
  const posix = relPath.split('\\').join('/');
  const m = /\.(d\.)?([mc]?)(ts|tsx|js|jsx)$/.exec(posix);
  if (!m) return posix;
  const stem = posix.slice(0, m.index);
  const format = m[2];
  return format ? `${stem}.${format}js` : stem;
}
