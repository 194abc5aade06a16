/**
 * Compiler messages made machine-independent: absolute paths they quote are rewritten relative to a
 * directory. Used by the build (compile/compile.ts) and the graph export (graph/export.ts).
 */
import { dirname, relative, sep } from 'node:path';

/**
 * Compiler messages sometimes quote absolute paths ("File '/home/…/src/a.ts' is not under rootDir");
 * they are rewritten relative to `relativeTo`, so a diagnostic reads the same in every clone.
 */
export function messageSanitizer(relativeTo: string): (message: string) => string {
  const ancestors: string[] = [];
  for (let d = relativeTo; dirname(d) !== d; d = dirname(d)) ancestors.push(d);
  return (message) => {
    let m = message;
    for (const a of ancestors) {
      if (!m.includes(a)) continue;
      const r = relative(relativeTo, a).split(sep).join('/');
      m = m.split(`${a}${sep}`).join(r ? `${r}/` : '');
      if (sep !== '/') m = m.split(`${a}/`).join(r ? `${r}/` : '');
      m = m.split(a).join(r || '.');
    }
    return m;
  };
}
