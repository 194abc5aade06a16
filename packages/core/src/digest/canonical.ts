/**
 * Canonical values of leaf tokens: what a token *means*, not how it is spelled. Quote style, numeric
 * spelling (`0x10` vs `16`, `1_000` vs `1000`, `1.50` vs `1.5`) and JSX text layout are formatting; the
 * value is meaning. Pure functions.
 */

export function canonicalNumber(text: string): string {
  const t = text.replace(/_/g, '');
  if (/^0[0-7]+$/.test(t)) return String(parseInt(t, 8)); // legacy octal (sloppy-mode JS)
  const v = Number(t);
  return Number.isNaN(v) ? `raw:${t}` : String(v);
}

export function canonicalBigInt(text: string): string {
  const t = text.replace(/_/g, '').replace(/n$/, '');
  try {
    return BigInt(t).toString();
  } catch {
    return `raw:${t}`;
  }
}

/**
 * JSX text as the compiler emits it (a port of TypeScript's `fixupWhitespaceAndDecodeEntities`, minus
 * entity decoding): the first line keeps its leading whitespace and the last its trailing whitespace,
 * every other edge is trimmed, whitespace-only lines are dropped, the rest joined with one space.
 * Whitespace inside a line is kept exactly (`a\tb` and `a b` emit differently). Returns '' when the
 * text emits nothing.
 */
export function canonicalJsxText(text: string): string {
  let acc: string | undefined;
  let first = 0;
  let last = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isLineBreak(c)) {
      if (first !== -1 && last !== -1) acc = addLine(acc, text.slice(first, last + 1));
      first = -1;
    } else if (!isWhiteSpaceSingleLine(c)) {
      last = i;
      if (first === -1) first = i;
    }
  }
  return first !== -1 ? addLine(acc, text.slice(first)) : acc ?? '';
}

function addLine(acc: string | undefined, line: string): string {
  return acc === undefined ? line : `${acc} ${line}`;
}

function isLineBreak(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

function isWhiteSpaceSingleLine(c: number): boolean {
  return (
    c === 0x20 || c === 0x09 || c === 0x0b || c === 0x0c || c === 0xa0 || c === 0x85 || c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200b) || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

/** Template raw text: the language normalises CR LF and CR to LF in raw values too. */
export function canonicalTemplateRaw(raw: string): string {
  return raw.replace(/\r\n?/g, '\n');
}

const IDENT_RE = /^[A-Za-z_$][\w$]*$/;

/** A path segment for a name: plain when it is an identifier, quoted otherwise. */
export function nameSegment(name: string): string {
  return IDENT_RE.test(name) || name.startsWith('#') || name.startsWith('[') ? name : JSON.stringify(name);
}
