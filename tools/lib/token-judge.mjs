/**
 * The independent equivalence judge (issue 10, point 3): are two build outputs (a restored cache entry
 * and a fresh build) equivalent in the sense of SPEC §4? A second opinion next to kiln's own
 * `compareOutputs` (packages/core/src/compile/equivalence.ts), which reuses kiln's extractor — so whatever
 * the extractor ignores, kiln's key and kiln's judge both ignore. This judge shares no code with kiln:
 * it imports nothing from packages/*, only `typescript` (parser and scanner) and `prettier` (printer),
 * and every rule below is written here, from the specification, not from kiln's sources.
 *
 * API
 *   judgeOutputs(dirA, dirB, { exclude })  → { equal, compared, differences: string[] }
 *   judgeFile(file, a, b, { reprint })     → string[]   (one file's content on both sides;
 *                                                          `reprint: false` only for tests)
 * `exclude(relPath) → boolean` leaves files out (besides source maps). `compared` counts the files
 * present on both sides and judged. Every difference is one line that starts with the file's path
 * relative to the compared directories (never an absolute path) and, where there is one, names the
 * first differing token with its line:column in each side's emitted file.
 *
 * THE RULE
 *   - `*.map` is excluded (source maps differ by construction).
 *   - `.js .mjs .cjs .jsx` and `.d.ts .d.mts .d.cts`: the TypeScript scanner's token stream
 *     (`ts.createScanner`) of each file, after the normalisation below, split into top-level
 *     statements:
 *       JavaScript   — top-level `function` declarations are hoisted: compared as a multiset; every
 *                      other top-level statement runs at module evaluation: compared in sequence.
 *       declarations — every top-level statement is compared as a multiset (declaration order is not
 *                      observable in a `.d.ts`).
 *     In both, the relative order of hoisted statements that share a name is compared (overloads and
 *     merged declarations: overload resolution takes the first match; for two JS `function f` the
 *     last one wins). File-level directives before the first statement (shebang, `/// <reference>`,
 *     `/// <amd-…>`, `@ts-nocheck`/`@ts-check`, JSX pragmas, legal comments) are a header compared as
 *     such, so a reorder does not carry them from one statement to another.
 *   - Every other file: byte-equal.
 *   - A file on one side only is a difference. Nothing to compare (no file judged on either side) is
 *     reported as a difference too: an empty or failed build is never "equal".
 *   - Bad input is a difference with a reason, never a crash and never "equal": an unreadable file, a
 *     JS/declaration file that is not valid UTF-8 or contains NUL bytes (binary), one that does not
 *     parse. Byte-identical files are equal whatever they contain (nothing is judged then).
 *
 * COMMENTS (written for this judge; kiln's classifier is not used). Kept, as tokens:
 *   `/*#__PURE__*\/` `/*@__PURE__*\/`, `#__NO_SIDE_EFFECTS__`/`@__NO_SIDE_EFFECTS__` (minifiers drop or
 *   keep code by them); legal comments (`/*!…`, `//!…`, any comment with `@license` or `@preserve`:
 *   bundlers keep them); bundler magic (`webpackChunkName:` and every `webpackX:`, `turbopackX:`,
 *   `@vite-ignore`); triple-slash directives `/// <reference …>`, `/// <amd-module …>`,
 *   `/// <amd-dependency …>`; TypeScript directives `@ts-ignore`, `@ts-expect-error`, `@ts-nocheck`,
 *   `@ts-check`; JSX pragmas `@jsx`, `@jsxFrag`, `@jsxImportSource`, `@jsxRuntime`. Their text is
 *   compared with whitespace collapsed. In declaration files every JSDoc block (`/** … *\/`) is
 *   documentation that reaches the consumer's editor: compared, normalised line by line (indentation
 *   and the `*` gutter removed, blank first/last lines dropped — re-indenting a block is not an edit).
 *   Every other comment — including JSDoc in JavaScript and `//# sourceMappingURL` — is dropped.
 *
 * NORMALISATION, AND WHY PRETTIER. What the judge must accept is what a legitimate kiln cache hit
 * produces: tsc's emit of a source that was reformatted, commented or reordered. tsc preserves much of
 * the source's spelling in its output: quote style, numeric spelling, redundant parentheses (the
 * printer keeps ParenthesizedExpression/ParenthesizedType nodes), `new X` without arguments,
 * arrow-parameter parentheses, trailing commas, quoted property keys. Token-level rules can normalise
 * literals but not parentheses: dropping `(`/`)` tokens would equate `(a + b) * c` with `a + b * c`,
 * and deciding which parentheses are redundant needs an operator-precedence printer. So each file is
 * first reprinted by prettier with fixed options, which removes redundant parentheses, adds `()` to
 * `new X`, parenthesises arrow parameters, adds semicolons, drops trailing commas and empty
 * statements, and unquotes keys where it can — all decided from the syntax tree, so both sides come
 * out the same when they mean the same. (Tried on real tsc emits in tools/test/token-judge.test.ts:
 * without the reprint, the emit of the prettier-reformatted fixture differs from the original's in
 * trailing commas, parentheses, `new Map` and quoted keys; with it, it is equal. Also tried on the
 * 581 real `.js`/`.d.ts` files of the mutation corpus, each against its own prettier reformat under
 * two option sets and against a reformat with `/* … *\/` comments inserted between tokens: no false
 * difference.)
 * Non-meaningful comments are removed *before* the reprint (a comment replaced by a space, or by a
 * newline when it spanned lines, so automatic semicolon insertion is unchanged): prettier lays out
 * code around comments, and some layouts add tokens (`return (` … `)` around a commented
 * expression). The print width is huge, so layout never depends on line length, and
 * `objectWrap: 'collapse'` keeps it from depending on where the source broke an object.
 * Then, on the reprinted text, token-level rules that are exact by construction:
 *   - string literals compare by value (escapes and quote style are spelling); template literal
 *     parts compare raw (`String.raw` observes escapes); regular expressions raw;
 *   - numeric literals by value (`0x10` = `16` = `1_6`; `1.0` = `1`), bigints by value;
 *   - identifiers by their value (`\u0061` = `a`);
 *   - a non-computed property name (object literal, class member, interface/type member, enum member,
 *     destructuring) compares as the property key it denotes: `'a'` = `a`, `'1'` = `1` = `0x1` — for
 *     what prettier's `quoteProps` leaves quoted;
 *   - a leading `|`/`&` of a union/intersection type (prettier adds one when it breaks a type over
 *     lines), parentheses around a JSX element and an empty JSX expression `{}` (what is left of
 *     `{/* comment *\/}`) are dropped; JSX text compares by the text JSX produces (lines trimmed,
 *     blank lines dropped, lines joined by one space);
 *   - statement boundaries are tokens: where the grammar ends a statement, class field, type member
 *     or bodiless declaration with `;` and the text has none (automatic semicolon insertion), a
 *     virtual `;` follows it, and a `,` between type members reads as `;` — so `return\n1` (which
 *     returns nothing) and `return 1` differ although their tokens are the same; an empty statement
 *     in a statement list (`;;`) and a `;` between class members are nothing.
 * Two files whose token streams are already equal as emitted are equal without the reprint (the
 * reprint only ever equates more); only the others are reprinted (fast, and most hits are
 * byte- or token-identical). If prettier cannot reprint a file (on either side), both sides of that
 * file are compared without the reprint — stricter, never looser — and the difference says so. Any
 * unexpected failure inside the judge is a difference naming the file, never a throw.
 *
 * Tokens come from `ts.createScanner` over the whole text. The scanner alone cannot tell a regular
 * expression from a division, a template continuation from a `}`, or JSX text from code; the judge
 * parses the file with `ts.createSourceFile` and rescans exactly where the parse tree has such a token
 * (so nothing here guesses). The same parse gives the top-level statements, and its syntax errors make
 * a file "does not parse".
 *
 * Depends on the versions of typescript and prettier pinned in the workspace's package-lock.json.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import * as prettier from 'prettier';

const SK = ts.SyntaxKind;

/** The options every file is reprinted with: fixed, independent of any project's prettier config. */
export const REPRINT_OPTIONS = Object.freeze({
  printWidth: 1_000_000,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: false,
  jsxSingleQuote: false,
  quoteProps: 'as-needed',
  trailingComma: 'none',
  bracketSpacing: true,
  bracketSameLine: false,
  objectWrap: 'collapse',
  arrowParens: 'always',
  endOfLine: 'lf',
  embeddedLanguageFormatting: 'off',
  singleAttributePerLine: false,
});

/** How a file is judged: 'js' | 'jsx' | 'dts' (tokens), 'map' (excluded), 'bytes'. */
export function judgeKind(file) {
  if (file.endsWith('.map')) return 'map';
  if (/\.d\.[mc]?ts$/.test(file)) return 'dts';
  if (/\.[mc]?js$/.test(file)) return 'js';
  if (file.endsWith('.jsx')) return 'jsx';
  return 'bytes';
}

/**
 * Judge two output directories. Never throws: an unreadable directory or file is a difference.
 * @param {string} dirA
 * @param {string} dirB
 * @param {{ exclude?: (file: string) => boolean }} [options]
 * @returns {Promise<{ equal: boolean, compared: number, differences: string[] }>}
 */
export async function judgeOutputs(dirA, dirB, { exclude } = {}) {
  const differences = [];
  const [listA, listB] = await Promise.all([listTree(dirA, 'A', differences), listTree(dirB, 'B', differences)]);
  const all = [...new Set([...listA.keys(), ...listB.keys()])].sort();
  let compared = 0;
  for (const file of all) {
    if (judgeKind(file) === 'map' || exclude?.(file)) continue;
    const ea = listA.get(file);
    const eb = listB.get(file);
    if (!eb) {
      differences.push(`${file}: exists only in output A`);
      continue;
    }
    if (!ea) {
      differences.push(`${file}: exists only in output B`);
      continue;
    }
    compared++;
    const [a, b] = await Promise.all([readSide(join(dirA, file)), readSide(join(dirB, file))]);
    if (a.error || b.error) {
      differences.push(`${file}: cannot be read (${[a.error && `A: ${a.error}`, b.error && `B: ${b.error}`].filter(Boolean).join('; ')})`);
      continue;
    }
    differences.push(...(await judgeFile(file, a.bytes, b.bytes)));
  }
  if (compared === 0 && differences.length === 0) {
    differences.push('(no file): nothing to compare — both outputs are empty after exclusions (an empty or failed build is not "equal")');
  }
  return { equal: differences.length === 0, compared, differences };
}

/**
 * Judge one file's content on both sides (`file` is its relative path: it decides how).
 * @param {string} file
 * @param {Uint8Array | string} a
 * @param {Uint8Array | string} b
 * @param {{ reprint?: boolean }} [options] `reprint: false` compares the tokens as emitted (for tests
 *   that show what the reprint is for); the default is the rule
 * @returns {Promise<string[]>} differences (empty when equivalent)
 */
export async function judgeFile(file, a, b, options = {}) {
  try {
    return await judgeFileContent(file, a, b, options);
  } catch (e) {
    // Never a crash, never "equal": a judge that cannot decide reports it.
    return [`${file}: the judge could not compare this file (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`];
  }
}

async function judgeFileContent(file, a, b, { reprint: withReprint = true }) {
  const ba = toBytes(a);
  const bb = toBytes(b);
  const kind = judgeKind(file);
  if (kind === 'map') return [];
  if (Buffer.compare(ba, bb) === 0) return [];
  if (kind === 'bytes') return [`${file}: differs at byte ${firstDifferentByte(ba, bb)} (compared byte for byte)`];
  const sa = decode(ba);
  const sb = decode(bb);
  if (sa.error || sb.error) return [`${file}: ${[sa.error && `A ${sa.error}`, sb.error && `B ${sb.error}`].filter(Boolean).join('; ')}; the files differ and cannot be judged by tokens`];
  const pa = prepare(sa.text, kind);
  const pb = prepare(sb.text, kind);
  if (pa.error || pb.error) return [`${file}: ${[pa.error && `A ${pa.error}`, pb.error && `B ${pb.error}`].filter(Boolean).join('; ')}; the files differ and cannot be judged by tokens`];
  // Equal tokens as emitted: equivalent without the reprint (the reprint only ever equates more).
  if (compareUnits(pa.units, pb.units, kind).length === 0) return [];
  const [ra, rb] = withReprint ? await Promise.all([reprint(pa.stripped, kind), reprint(pb.stripped, kind)]) : [{}, {}];
  let note = '';
  let ua;
  let ub;
  if (!withReprint) {
    note = ' (compared without the reprint, as asked)';
    ua = pa.units;
    ub = pb.units;
  } else if (ra.error || rb.error) {
    note = ` (compared without prettier's reprint: ${[ra.error && `A: ${ra.error}`, rb.error && `B: ${rb.error}`].filter(Boolean).join('; ')})`;
    ua = pa.units;
    ub = pb.units;
  } else {
    ua = ra.units;
    ub = rb.units;
  }
  const found = compareUnits(ua, ub, kind);
  // Locate each reported token in the file as emitted (the reprint moved it): the n-th token with the
  // same normalised value. Reporting only; the verdict is `found`.
  return found.map((d) => `${file}: ${d.message}${d.a || d.b ? ` [A ${where(d.a, ua, pa.units)} | B ${where(d.b, ub, pb.units)}]` : ''}${note}`);
}

// ------------------------------------------------------------------------------------ reading

async function listTree(root, label, differences) {
  const out = new Map();
  try {
    const st = await stat(root);
    if (!st.isDirectory()) {
      differences.push(`(output ${label}): not a directory`);
      return out;
    }
  } catch (e) {
    differences.push(`(output ${label}): cannot be read (${errCode(e)})`);
    return out;
  }
  const walk = async (dir, prefix) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      differences.push(`${prefix || '.'}/: cannot be listed in output ${label} (${errCode(e)})`);
      return;
    }
    for (const e of entries) {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      // A symbolic link is judged by what it points at (read through it); a dangling one cannot be read.
      if (e.isDirectory()) await walk(join(dir, e.name), rel);
      else out.set(rel, true);
    }
  };
  await walk(root, '');
  return out;
}

async function readSide(path) {
  try {
    return { bytes: await readFile(path) };
  } catch (e) {
    return { error: errCode(e) };
  }
}

function errCode(e) {
  return (e && typeof e === 'object' && 'code' in e && e.code) || (e instanceof Error ? e.message.split('\n')[0] : String(e));
}

function toBytes(x) {
  if (typeof x === 'string') return Buffer.from(x, 'utf8');
  return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decode(bytes) {
  if (bytes.includes(0)) return { error: 'contains NUL bytes (binary)' };
  let text;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { error: 'is not valid UTF-8' };
  }
  // A byte order mark is not part of the program text.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { text };
}

function firstDifferentByte(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

// ------------------------------------------------------------------------------------ comments

/**
 * Is a comment meaningful (kept and compared)? Returns its normalised text, or undefined to drop it.
 * `raw` is the comment as written, `isDts` says whether JSDoc is documentation (declaration files).
 */
export function meaningfulComment(raw, isLine, isDts) {
  const body = isLine ? raw.slice(2) : raw.slice(2, -2);
  const flat = body.replace(/\s+/g, ' ').trim();
  if (!isLine) {
    if (/^[#@]__PURE__$/.test(flat)) return 'pure';
    if (/^[#@]__NO_SIDE_EFFECTS__$/.test(flat)) return 'no-side-effects';
  }
  if (isLine && /^\/\s*<(reference|amd-module|amd-dependency)\b/.test(body)) return `directive:${flat.slice(1).trim()}`;
  if (isLine && /^#\s*sourceMappingURL=/.test(flat)) return undefined;
  if (body.startsWith('!') || /@(license|preserve)\b/.test(flat)) return `legal:${flat}`;
  if (/(^|[\s*])@ts-(ignore|expect-error|nocheck|check)\b/.test(flat)) return `ts:${flat.replace(/^\*\s*/, '')}`;
  if (/(^|[\s*])@jsx(Frag|ImportSource|Runtime)?\s+\S/.test(flat)) return `jsx-pragma:${flat.replace(/^\*\s*/, '')}`;
  if (/\b(webpack|turbopack)[A-Z]\w*\s*:|@vite-ignore\b/.test(flat)) return `magic:${flat}`;
  if (isDts && !isLine && raw.startsWith('/**') && raw !== '/**/') return `doc:${normaliseDoc(raw)}`;
  return undefined;
}

/** File-level directives: compared in the file header, not with the statement they happen to lead. */
function isFileLevel(value) {
  return /^(directive:|legal:|jsx-pragma:|ts:@ts-(nocheck|check)\b)/.test(value);
}

function normaliseDoc(raw) {
  const lines = raw
    .slice(3, -2)
    .split(/\r\n?|\n|\u2028|\u2029/)
    .map((l) => l.replace(/^\s*\*?/, '').trim());
  while (lines.length && lines[0] === '') lines.shift();
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}

// ------------------------------------------------------------------------------------ parsing and tokens

const FILE_NAME = { js: 'm.js', jsx: 'm.jsx', dts: 'm.d.ts' };
const SCRIPT_KIND = { js: ts.ScriptKind.JS, jsx: ts.ScriptKind.JSX, dts: ts.ScriptKind.TS };

function parse(text, kind) {
  return ts.createSourceFile(FILE_NAME[kind], text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, true, SCRIPT_KIND[kind]);
}

function syntaxError(sf) {
  const d = sf.parseDiagnostics?.[0];
  if (!d) return undefined;
  const { line, character } = sf.getLineAndCharacterOfPosition(d.start ?? 0);
  return `does not parse (${ts.flattenDiagnosticMessageText(d.messageText, ' ')} at ${line + 1}:${character + 1})`;
}

/**
 * Where the parse tree says the scanner must rescan, what to drop, and the property keys:
 *   rescan: token start → 'regex' | 'template' | 'jsxattr'; JSX text: full start → 'jsxtext'.
 */
function guide(sf) {
  const rescan = new Map();
  const drop = new Set();
  const keys = new Map();
  const semis = new Map();
  const asSemi = new Set();
  const text = sf.text;
  // A construct the grammar ends with `;`: where the text has none (automatic semicolon insertion, a
  // newline-separated type member), a virtual `;` follows its last token; a `,` between type members
  // reads as `;`. So two texts with the same tokens but different statement boundaries differ.
  const terminated = (n) => {
    const last = text[n.end - 1];
    if (last === ';') return;
    if (last === ',' && isTypeMember(n)) asSemi.add(n.end - 1);
    else semis.set(n.end, (semis.get(n.end) ?? 0) + 1);
  };
  const keyOf = (name) => {
    if (!name) return;
    if (name.kind === SK.Identifier || name.kind === SK.StringLiteral || name.kind === SK.NoSubstitutionTemplateLiteral) keys.set(name.getStart(sf), name.text);
    else if (name.kind === SK.NumericLiteral) keys.set(name.getStart(sf), String(numericValue(name.getText(sf))));
  };
  const visit = (n) => {
    switch (n.kind) {
      case SK.RegularExpressionLiteral:
        rescan.set(n.getStart(sf), 'regex');
        break;
      case SK.TemplateMiddle:
      case SK.TemplateTail:
        rescan.set(n.getStart(sf), 'template');
        break;
      case SK.JsxText:
        rescan.set(n.pos, 'jsxtext');
        break;
      case SK.JsxAttribute:
        if (n.initializer && n.initializer.kind === SK.StringLiteral) rescan.set(n.initializer.getStart(sf), 'jsxattr');
        break;
      case SK.JsxExpression:
        if (!n.expression && !n.dotDotDotToken) {
          drop.add(n.getStart(sf));
          drop.add(n.end - 1);
        }
        break;
      case SK.ParenthesizedExpression: {
        const k = n.expression.kind;
        if (k === SK.JsxElement || k === SK.JsxSelfClosingElement || k === SK.JsxFragment) {
          drop.add(n.getStart(sf));
          drop.add(n.end - 1);
        }
        break;
      }
      case SK.UnionType:
      case SK.IntersectionType: {
        const s = n.getStart(sf);
        const c = sf.text[s];
        if (c === '|' || c === '&') drop.add(s);
        break;
      }
      case SK.PropertyAssignment:
      case SK.MethodDeclaration:
      case SK.PropertyDeclaration:
      case SK.GetAccessor:
      case SK.SetAccessor:
      case SK.PropertySignature:
      case SK.MethodSignature:
      case SK.EnumMember:
        keyOf(n.name);
        break;
      case SK.BindingElement:
        keyOf(n.propertyName);
        break;
      case SK.EmptyStatement:
        // `;;` in a statement list is nothing; as the body of `if`/`for`/`while` it is a statement.
        if (isStatementList(n.parent)) drop.add(n.getStart(sf));
        break;
      case SK.SemicolonClassElement:
        drop.add(n.getStart(sf));
        break;
      default:
        break;
    }
    if (needsTerminator(n)) terminated(n);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { rescan, drop, keys, semis, asSemi };
}

function isStatementList(p) {
  return p.kind === SK.SourceFile || p.kind === SK.Block || p.kind === SK.ModuleBlock || p.kind === SK.CaseClause || p.kind === SK.DefaultClause;
}

function isTypeMember(n) {
  return n.parent && (n.parent.kind === SK.TypeLiteral || n.parent.kind === SK.InterfaceDeclaration);
}

function needsTerminator(n) {
  switch (n.kind) {
    case SK.ExpressionStatement:
    case SK.ReturnStatement:
    case SK.ThrowStatement:
    case SK.BreakStatement:
    case SK.ContinueStatement:
    case SK.DebuggerStatement:
    case SK.DoStatement:
    case SK.ImportDeclaration:
    case SK.ImportEqualsDeclaration:
    case SK.ExportDeclaration:
    case SK.ExportAssignment:
    case SK.NamespaceExportDeclaration:
    case SK.TypeAliasDeclaration:
    case SK.PropertyDeclaration:
    case SK.PropertySignature:
    case SK.MethodSignature:
    case SK.CallSignature:
    case SK.ConstructSignature:
    case SK.IndexSignature:
      return true;
    case SK.VariableStatement:
      return true;
    case SK.FunctionDeclaration:
    case SK.MethodDeclaration:
    case SK.Constructor:
    case SK.GetAccessor:
    case SK.SetAccessor:
      return !n.body;
    case SK.ModuleDeclaration:
      return !n.body;
    default:
      return false;
  }
}

/**
 * Every token and comment of a parsed file, in order: { k: kind, v: normalised value (undefined =
 * not compared), pos, end, comment?: { line, value } }.
 */
function scanAll(sf, kind) {
  const text = sf.text;
  const { rescan, drop, keys, semis, asSemi } = guide(sf);
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, kind === 'jsx' ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, text);
  const out = [];
  const isDts = kind === 'dts';
  for (let lastEnd = -1; ; ) {
    let k = scanner.scan();
    if (k === SK.EndOfFileToken) break;
    const start = scanner.getTokenStart();
    const how = rescan.get(start);
    if (how === 'jsxtext') k = scanner.reScanJsxToken(true);
    else if (how === 'regex' && (k === SK.SlashToken || k === SK.SlashEqualsToken)) k = scanner.reScanSlashToken();
    else if (how === 'template' && k === SK.CloseBraceToken) k = scanner.reScanTemplateToken(false);
    else if (how === 'jsxattr' && k === SK.StringLiteral) k = scanner.reScanJsxAttributeValue();
    const end = scanner.getTokenEnd();
    if (end <= lastEnd) throw new Error(`the scanner made no progress at offset ${start}`);
    lastEnd = end;
    if (k === SK.WhitespaceTrivia || k === SK.NewLineTrivia) continue;
    const raw = text.slice(start, end);
    const tok = { k, pos: start, end, v: undefined };
    if (k === SK.SingleLineCommentTrivia || k === SK.MultiLineCommentTrivia) {
      const value = meaningfulComment(raw, k === SK.SingleLineCommentTrivia, isDts);
      tok.comment = { line: k === SK.SingleLineCommentTrivia, value };
      if (value !== undefined) tok.v = `c:${value}`;
    } else if (k === SK.ShebangTrivia) tok.v = `#!${raw.slice(2).trim()}`;
    else if (k === SK.ConflictMarkerTrivia) tok.v = `conflict:${raw}`;
    else if (drop.has(start)) tok.v = undefined;
    else if (keys.has(start)) tok.v = `key:${keys.get(start)}`;
    else if (k === SK.StringLiteral) tok.v = `str:${JSON.stringify(scanner.getTokenValue())}`;
    else if (k === SK.NumericLiteral) tok.v = `num:${numericValue(raw)}`;
    else if (k === SK.BigIntLiteral) tok.v = `big:${bigintValue(raw)}`;
    else if (k === SK.Identifier) tok.v = `id:${scanner.getTokenValue()}`;
    else if (k === SK.NoSubstitutionTemplateLiteral || k === SK.TemplateHead || k === SK.TemplateMiddle || k === SK.TemplateTail) tok.v = `tpl:${raw}`;
    else if (k === SK.RegularExpressionLiteral) tok.v = `re:${raw}`;
    else if (k === SK.JsxText || k === SK.JsxTextAllWhiteSpaces) {
      const t = jsxText(raw);
      tok.v = t === '' ? undefined : `jsx:${t}`;
    } else if (asSemi.has(start)) tok.v = ';';
    else tok.v = raw;
    out.push(tok);
    // Virtual semicolons after the construct's last token (comments never end a construct).
    if (!tok.comment) for (let n = semis.get(end) ?? 0; n > 0; n--) out.push({ k: SK.SemicolonToken, pos: end - 1, end, v: ';', virtual: true });
  }
  return out;
}

function numericValue(raw) {
  const t = raw.replace(/_/g, '');
  // A legacy octal literal (`010`): only in sloppy scripts; its value is octal.
  if (/^0[0-7]+$/.test(t)) return String(parseInt(t, 8));
  const n = Number(t);
  return Number.isNaN(n) ? t : String(n);
}

function bigintValue(raw) {
  try {
    return BigInt(raw.slice(0, -1).replace(/_/g, '')).toString();
  } catch {
    return raw;
  }
}

/** The text a JSX text child produces: lines trimmed (not at the outer edges), blank lines dropped. */
function jsxText(raw) {
  const lines = raw.split(/\r\n?|\n/);
  const parts = [];
  lines.forEach((line, i) => {
    let l = line;
    if (i > 0) l = l.replace(/^[ \t]+/, '');
    if (i < lines.length - 1) l = l.replace(/[ \t]+$/, '');
    if (l !== '') parts.push(l);
  });
  return parts.join(' ');
}

// ------------------------------------------------------------------------------------ units

/**
 * A file as compared: `header` (file-level directives), `ordered` (statements compared in sequence),
 * `hoisted` (compared as a multiset; `name` for same-name order), `tail` (comments after the last
 * statement). Each unit: { tokens: Tok[], key: string, name?: string, index }.
 */
function unitsOf(sf, kind) {
  const toks = scanAll(sf, kind);
  const stmts = sf.statements;
  const header = [];
  const ordered = [];
  const hoisted = [];
  const tail = [];
  const byStmt = stmts.map(() => []);
  let s = 0;
  for (const t of toks) {
    if (t.v === undefined) continue;
    while (s < stmts.length && t.pos >= stmts[s].end) s++;
    if (s >= stmts.length) {
      tail.push(t);
      continue;
    }
    if (s === 0 && t.comment && t.pos < stmts[0].getStart(sf) && isFileLevel(t.comment.value)) header.push(t);
    else byStmt[s].push(t);
  }
  stmts.forEach((st, index) => {
    // `;;` is nothing (its token is dropped); a meaningful comment before it still counts.
    if (st.kind === SK.EmptyStatement && byStmt[index].length === 0) return;
    const unit = { tokens: byStmt[index], key: keyOf(byStmt[index]), index, name: undefined, label: statementLabel(st) };
    if (kind === 'dts') {
      unit.name = statementName(st);
      hoisted.push(unit);
    } else if (st.kind === SK.FunctionDeclaration) {
      unit.name = st.name ? st.name.text : 'default';
      hoisted.push(unit);
    } else ordered.push(unit);
  });
  // Comments after the last statement; with no statements, the whole file is header + tail.
  return { header: unit(header), ordered, hoisted, tail: unit(tail), sf };
}

function unit(tokens) {
  return { tokens, key: keyOf(tokens) };
}

function keyOf(tokens) {
  return tokens.map((t) => t.v).join('\u0001');
}

/** For messages: `const a`, `class C`, `ExpressionStatement`. */
function statementLabel(st) {
  const name = statementName(st);
  if (name === undefined) return SK[st.kind];
  if (st.kind === SK.VariableStatement) return `${st.declarationList.flags & ts.NodeFlags.Const ? 'const' : st.declarationList.flags & ts.NodeFlags.Let ? 'let' : 'var'} ${name}`;
  return `${SK[st.kind].replace(/Declaration$/, '').toLowerCase()} ${name}`;
}

function statementName(st) {
  switch (st.kind) {
    case SK.FunctionDeclaration:
    case SK.ClassDeclaration:
      return st.name ? st.name.text : 'default';
    case SK.InterfaceDeclaration:
    case SK.TypeAliasDeclaration:
    case SK.EnumDeclaration:
    case SK.ImportEqualsDeclaration:
      return st.name.text;
    case SK.ModuleDeclaration:
      return st.name.kind === SK.StringLiteral ? JSON.stringify(st.name.text) : st.name.text;
    case SK.VariableStatement:
      return st.declarationList.declarations.map((d) => (d.name.kind === SK.Identifier ? d.name.text : '{…}')).join(',');
    default:
      return undefined;
  }
}

/** Strip non-meaningful comments, parse, split; or an error. */
function prepare(text, kind) {
  const sf = parse(text, kind);
  const err = syntaxError(sf);
  if (err) return { error: err };
  const toks = scanAll(sf, kind);
  let stripped = '';
  let at = 0;
  for (const t of toks) {
    if (!t.comment || t.comment.value !== undefined) continue;
    const c = text.slice(t.pos, t.end);
    stripped += text.slice(at, t.pos) + (t.comment.line ? '' : /[\r\n\u2028\u2029]/.test(c) ? '\n' : ' ');
    at = t.end;
  }
  stripped += text.slice(at);
  return { stripped, units: unitsOf(sf, kind), text };
}

async function reprint(text, kind) {
  let out;
  try {
    out = await prettier.format(text, { ...REPRINT_OPTIONS, parser: kind === 'dts' ? 'typescript' : 'babel' });
  } catch (e) {
    return { error: `prettier: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}` };
  }
  const sf = parse(out, kind);
  const err = syntaxError(sf);
  if (err) return { error: `the reprint ${err}` };
  return { units: unitsOf(sf, kind), text: out };
}

// ------------------------------------------------------------------------------------ comparison

function compareUnits(A, B, kind) {
  const out = [];
  const what = kind === 'dts' ? 'declaration' : 'function declaration';
  if (A.header.key !== B.header.key) {
    const [a, b] = firstDifferent(A.header.tokens, B.header.tokens);
    out.push({ message: 'file-level directives or legal comments before the first statement differ', a, b });
  }
  // Statements that run in sequence.
  const ka = A.ordered.map((u) => u.key);
  const kb = B.ordered.map((u) => u.key);
  if (!arrayEqual(ka, kb)) {
    const i = ka.findIndex((k, j) => k !== kb[j]);
    const at = i === -1 ? ka.length : i;
    if (multisetEqual(ka, kb)) {
      out.push({
        message: `the evaluation order of top-level statements differs at statement ${at + 1} of ${ka.length} (same statements, another order)`,
        a: A.ordered[at]?.tokens[0],
        b: B.ordered[at]?.tokens[0],
      });
    } else {
      const [a, b] = firstDifferent(A.ordered.slice(at).flatMap((u) => u.tokens), B.ordered.slice(at).flatMap((u) => u.tokens));
      const ua = A.ordered[at];
      const ub = B.ordered[at];
      out.push({
        message: ua && ub
          ? `top-level statement ${at + 1} (${ua.label}) differs (first at ${tokDesc(a)} vs ${tokDesc(b)})`
          : `top-level statement ${at + 1} (${(ua ?? ub).label}) exists only in output ${ua ? 'A' : 'B'}`,
        a,
        b,
      });
    }
  }
  // Hoisted statements: a multiset.
  const onlyA = multisetMinus(A.hoisted, B.hoisted);
  const onlyB = multisetMinus(B.hoisted, A.hoisted);
  const pairedB = new Set();
  for (const ua of onlyA) {
    const ub = onlyB.find((u) => !pairedB.has(u) && u.name === ua.name && ua.name !== undefined) ?? (ua.name === undefined ? onlyB.find((u) => !pairedB.has(u) && u.name === undefined) : undefined);
    if (ub) {
      pairedB.add(ub);
      const [a, b] = firstDifferent(ua.tokens, ub.tokens);
      out.push({ message: `${what} ${ua.name ?? `(statement ${ua.index + 1})`} differs (first at ${tokDesc(a)} vs ${tokDesc(b)})`, a, b });
    } else out.push({ message: `${what} ${ua.name ?? `(statement ${ua.index + 1})`} exists only in output A`, a: ua.tokens[0] });
  }
  for (const ub of onlyB) if (!pairedB.has(ub)) out.push({ message: `${what} ${ub.name ?? `(statement ${ub.index + 1})`} exists only in output B`, b: ub.tokens[0] });
  // Same-named hoisted statements: their relative order is observable.
  const named = (units) => {
    const m = new Map();
    for (const u of units) if (u.name !== undefined) (m.get(u.name) ?? m.set(u.name, []).get(u.name)).push(u);
    return m;
  };
  const na = named(A.hoisted);
  const nb = named(B.hoisted);
  for (const [name, la] of na) {
    const lb = nb.get(name);
    if (!lb || la.length < 2) continue;
    const sa = la.map((u) => u.key);
    const sb = lb.map((u) => u.key);
    if (arrayEqual(sa, sb) || !multisetEqual(sa, sb)) continue; // content differences are reported above
    const i = sa.findIndex((k, j) => k !== sb[j]);
    out.push({
      message: `the order of the ${la.length} ${what}s named ${name} differs (overloads or merged declarations: their order is observable)`,
      a: la[i].tokens[0],
      b: lb[i].tokens[0],
    });
  }
  if (A.tail.key !== B.tail.key) {
    const [a, b] = firstDifferent(A.tail.tokens, B.tail.tokens);
    out.push({ message: 'meaningful comments after the last statement differ', a, b });
  }
  return out;
}

function firstDifferent(ta, tb) {
  const n = Math.max(ta.length, tb.length);
  for (let i = 0; i < n; i++) if (ta[i]?.v !== tb[i]?.v) return [ta[i] ?? END, tb[i] ?? END];
  return [END, END];
}

const END = Object.freeze({ v: '<end>', end: true });

function tokDesc(t) {
  if (!t || t.end === true) return '<end>';
  return `\`${display(t.v)}\``;
}

function display(v) {
  const s = v
    .replace(/^c:doc:([^]*)$/, '/** $1 */')
    .replace(/^c:pure$/, '/*#__PURE__*/')
    .replace(/^c:no-side-effects$/, '/*#__NO_SIDE_EFFECTS__*/')
    .replace(/^c:(legal|magic|ts|directive|jsx-pragma):/, '')
    .replace(/^(id|key|num|big|str|tpl|re|jsx|c):/, '')
    .replace(/\s+/g, ' ');
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Where a token of the compared units is in the file as emitted: `line:col \`text\``. */
function where(t, compared, original) {
  if (!t) return '—';
  if (t.end === true) return '<end>';
  const all = (u) => [...u.header.tokens, ...u.ordered.flatMap((x) => x.tokens), ...u.hoisted.flatMap((x) => x.tokens), ...u.tail.tokens];
  const from = all(compared).sort((x, y) => x.pos - y.pos);
  const n = from.filter((x) => x.v === t.v && x.pos < t.pos).length;
  const to = all(original)
    .sort((x, y) => x.pos - y.pos)
    .filter((x) => x.v === t.v);
  const hit = to[n] ?? to[to.length - 1];
  if (!hit || !original.sf) return `\`${display(t.v)}\``;
  const { line, character } = original.sf.getLineAndCharacterOfPosition(hit.pos);
  return `${line + 1}:${character + 1} \`${display(t.v)}\``;
}

function arrayEqual(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function multisetEqual(a, b) {
  return a.length === b.length && arrayEqual([...a].sort(), [...b].sort());
}

/** Units of `a` whose key is not matched one-for-one in `b`. */
function multisetMinus(a, b) {
  const counts = new Map();
  for (const u of b) counts.set(u.key, (counts.get(u.key) ?? 0) + 1);
  const out = [];
  for (const u of a) {
    const c = counts.get(u.key) ?? 0;
    if (c > 0) counts.set(u.key, c - 1);
    else out.push(u);
  }
  return out;
}
