/**
 * Context packs, source text: the lines of a declaration (and the JSDoc just above it) read from the
 * source tree the graph was exported from, so a pack can carry code, not only anchors.
 *
 * Invariants: files are read only by `loadSources` (never at import); a file the freshness check found
 * changed, added or deleted is never read — its spans may no longer point at the declaration, so the
 * pack shows the anchor alone rather than wrong lines; text is normalised to `\n` line ends.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GraphSpan } from '../query/model.js';

export class SourceTree {
  private readonly files: ReadonlyMap<string, string[]>;
  constructor(files: ReadonlyMap<string, string[]>) {
    this.files = files;
  }

  has(file: string): boolean {
    return this.files.has(file);
  }

  /** The span's whole lines, or undefined when the file is not available or the span is out of range. */
  text(span: GraphSpan): string | undefined {
    const lines = this.files.get(span.file);
    if (!lines || span.startLine < 1 || span.endLine > lines.length || span.endLine < span.startLine) return undefined;
    return lines.slice(span.startLine - 1, span.endLine).join('\n');
  }

  /** Characters of the span's whole lines (with line ends), without building the text. */
  size(span: GraphSpan): number | undefined {
    const lines = this.files.get(span.file);
    if (!lines || span.startLine < 1 || span.endLine > lines.length || span.endLine < span.startLine) return undefined;
    let n = 0;
    for (let i = span.startLine - 1; i < span.endLine; i++) n += lines[i]!.length + 1;
    return n;
  }

  /** The first line of the span (a signature, most of the time). */
  firstLine(span: GraphSpan): string | undefined {
    const lines = this.files.get(span.file);
    return lines && span.startLine >= 1 && span.startLine <= lines.length ? lines[span.startLine - 1] : undefined;
  }

  /** The `/** … *\/` block that ends on the line above the span (decorators and blank-free), raw. */
  leadingDocBlock(span: GraphSpan): string | undefined {
    const lines = this.files.get(span.file);
    if (!lines) return undefined;
    let end = span.startLine - 2;
    while (end >= 0 && /^\s*@\w/.test(lines[end]!)) end--; // decorators between doc and declaration
    if (end < 0 || !/\*\/\s*$/.test(lines[end]!)) return undefined;
    let start = end;
    while (start >= 0 && !/\/\*\*/.test(lines[start]!)) {
      if (end - start > 200) return undefined;
      start--;
    }
    if (start < 0) return undefined;
    return lines.slice(start, end + 1).join('\n');
  }

  /** The documentation text above a declaration, without comment markers. */
  docText(span: GraphSpan): string | undefined {
    const block = this.leadingDocBlock(span);
    if (!block) return undefined;
    return block
      .replace(/^\s*\/\*\*?/, '')
      .replace(/\*\/\s*$/, '')
      .split('\n')
      .map((l) => l.replace(/^\s*\*\s?/, ''))
      .join('\n')
      .trim();
  }
}

/** Read `files` (relative to `dir`), skipping those in `skip`; unreadable files are left out. */
export async function loadSources(dir: string, files: readonly string[], skip: ReadonlySet<string>): Promise<SourceTree> {
  const out = new Map<string, string[]>();
  await Promise.all(
    [...new Set(files)].map(async (f) => {
      if (skip.has(f)) return;
      try {
        const text = await readFile(join(dir, f), 'utf8');
        out.set(f, text.replace(/\r\n?/g, '\n').split('\n'));
      } catch {
        // not readable now: anchors only
      }
    }),
  );
  return new SourceTree(out);
}
