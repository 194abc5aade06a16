import { describe, expect, it } from 'vitest';
import { extractSlice } from '../dist/facts/extract.js';

describe('extractSlice', () => {
  it('digests declarations and ignores comments', () => {
    const a = extractSlice(Buffer.from('export function f(x: number) { return x + 1; }\nexport const y = 2;\n'), 'ts');
    const b = extractSlice(Buffer.from('// hello\nexport function f(x: number) {\n  /* c */ return x + 1\n}\nexport const y = 2\n'), 'ts');
    expect(a.decls.map((d) => d.path)).toEqual(['f', 'y']);
    expect(b.decls.map((d) => d.semantic)).toEqual(a.decls.map((d) => d.semantic));
    const c = extractSlice(Buffer.from('export function f(x: number) { return x + 2; }\nexport const y = 2;\n'), 'ts');
    expect(c.decls[0]!.semantic).not.toBe(a.decls[0]!.semantic);
    expect(c.decls[1]!.semantic).toBe(a.decls[1]!.semantic);
  });
});
