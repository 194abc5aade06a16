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
 * JSX text as the compiler emits it: lines trimmed (except the outer edges of the first and last
 * line), blank lines dropped, the rest joined with one space. Returns '' when it emits nothing.
 */
export function canonicalJsxText(text: string): string {
  const lines = text.split(/\r\n|\n|\r/);
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.replace(/\t/g, ' ');
    if (i !== 0) line = line.replace(/^[ ]+/, '');
    if (i !== lines.length - 1) line = line.replace(/[ ]+$/, '');
    if (line === '') continue;
    out = out === '' ? line : `${out} ${line}`;
  }
  return out;
}

const IDENT_RE = /^[A-Za-z_$][\w$]*$/;

/** A path segment for a name: plain when it is an identifier, quoted otherwise. */
export function nameSegment(name: string): string {
  return IDENT_RE.test(name) || name.startsWith('#') || name.startsWith('[') ? name : JSON.stringify(name);
}
