/**
 * Words of identifiers and task text: camelCase / PascalCase / snake_case / kebab-case / dotted and
 * slashed paths split into lower-case tokens, a light symmetric stemmer, and stop words. Shared by
 * `find` (camel-case token matching) and context packs (seeding from a task).
 *
 * Invariants: pure and deterministic; ASCII-insensitive to case; the stemmer is applied the same way to
 * task words and to names, so it only has to conflate, never to be linguistically right.
 */

/** `getHTTPStatusCode` → [get, http, status, code]; `max_url_length` → [max, url, length]. */
export function splitIdentifier(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((t) => t.length > 0)
    .map((t) => t.toLowerCase());
}

/**
 * The humps of a camel-case query, lower-cased: `gUN` → [g, u, n], `getUN` → [get, u, n],
 * `user name` → [user, name]. Each hump must prefix-match a token of the name, in order.
 */
export function queryHumps(q: string): string[] {
  return q
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])(?=[A-Z])/g, '$1 ')
    .split(/[^A-Za-z0-9]+/)
    .filter((t) => t.length > 0)
    .map((t) => t.toLowerCase());
}

export interface HumpMatch {
  /** The humps matched tokens that follow each other, with no token skipped. */
  contiguous: boolean;
  /** The first hump matched the name's first token. */
  atStart: boolean;
}

/** Whether every hump prefix-matches a token, in order (tokens may be skipped). */
export function matchHumps(humps: readonly string[], tokens: readonly string[]): HumpMatch | undefined {
  if (humps.length === 0) return undefined;
  // Earliest-first greedy; a hump may also span two tokens ("statuscode" matching status+code).
  let t = 0;
  let first = -1;
  let skipped = false;
  for (const h of humps) {
    let found = -1;
    for (let j = t; j < tokens.length; j++) {
      if (tokens[j]!.startsWith(h) || (h.startsWith(tokens[j]!) && tokens.slice(j).join('').startsWith(h))) {
        found = j;
        break;
      }
    }
    if (found < 0) return undefined;
    if (first < 0) first = found;
    else if (found !== t) skipped = true;
    // a hump that spans several tokens consumes them
    let consumed = found + 1;
    if (!tokens[found]!.startsWith(h)) {
      let acc = '';
      for (let j = found; j < tokens.length && acc.length < h.length; j++) {
        acc += tokens[j]!;
        consumed = j + 1;
      }
    }
    t = consumed;
  }
  return { contiguous: !skipped, atStart: first === 0 };
}

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could do does for from get got had has have how i if in into is it its ' +
    'make makes me my need needs no not of on or our out should so some than that the their them then there these ' +
    'they this those to too under up us use used uses using was we were what when where which while who why will ' +
    'with would you your add fix change changes find code new when instead also only via per each every any all more ' +
    'lets let wrong right work works way ways thing things after before again broken bug issue when whenever'
  ).split(' '),
);

export function isStopWord(w: string): boolean {
  return STOP_WORDS.has(w);
}

/** Light stemmer: plural and verb suffixes, applied identically on both sides of a match. */
export function stem(w: string): string {
  let s = w.toLowerCase();
  if (s.length <= 3) return s;
  if (s.endsWith('ies') && s.length > 4) s = `${s.slice(0, -3)}y`;
  else if (s.endsWith('sses')) s = s.slice(0, -2);
  else if (s.endsWith('ing') && s.length > 5) s = s.slice(0, -3);
  else if (s.endsWith('ed') && s.length > 4) s = s.slice(0, -2);
  else if (s.endsWith('es') && s.length > 4 && /(ch|sh|x|z|ss)es$/.test(s)) s = s.slice(0, -2);
  else if (s.endsWith('s') && !s.endsWith('ss') && !s.endsWith('us') && !s.endsWith('is')) s = s.slice(0, -1);
  if (s.endsWith('e') && s.length > 4) s = s.slice(0, -1);
  return s;
}

/** Stemmed, de-duplicated keywords of free text (identifiers inside it are split too). */
export function keywordsOf(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const w of splitIdentifier(text)) {
    if (w.length < 2 || isStopWord(w) || /^[0-9]+$/.test(w)) continue;
    const s = stem(w);
    if (!seen.has(s)) {
      seen.add(s);
      out.push(s);
    }
  }
  return out;
}

/**
 * Words of a task that look like code identifiers or paths: written with inner capitals, underscores,
 * dots or slashes (`httpBatchLink`, `TRPCError.from`, `max_url_length`, `src/shapes.ts`), or in
 * backquotes. Order of first appearance, de-duplicated.
 */
export function identifiersOf(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (w: string) => {
    const t = w.replace(/^[^A-Za-z0-9_$#@./]+|[^A-Za-z0-9_$]+$/g, '');
    if (t.length > 1 && !seen.has(t)) {
      seen.add(t);
      out.push(t);
    }
  };
  for (const m of text.matchAll(/`([^`]+)`/g)) add(m[1]!);
  for (const raw of text.split(/[\s,;:()[\]{}"'`<>!?]+/)) {
    if (!raw) continue;
    if (/[a-z][A-Z]|[A-Z]{2,}[a-z]|_|\.|\/|^[A-Z][a-z]+[A-Z]/.test(raw) || /^[A-Z][A-Za-z0-9]*$/.test(raw)) add(raw);
  }
  return out;
}
