/**
 * Stack input for `kiln symbolicate`: a stack trace as text (V8/Node and Chrome `at f (file:line:col)`,
 * Firefox and Safari `f@file:line:col`) parsed line by line with `stacktrace-parser` (a maintained
 * parser: no hand-written frame regexes here), or JSON frames (`[{file, line, column, function?,
 * debugId?}]` or `{frames: [...]}`), the form a crash reporter that knows debug IDs sends.
 *
 * Invariants: linear in the input (lines longer than MAX_LINE are not handed to the parser's regexes);
 * every line after the first frame that is not a frame with a file and a line (a truncated line, a log
 * line, V8's `at async Promise.all (index 0)`) is reported (KILN_STACK_LINE_UNPARSED, with its
 * line number), never dropped silently; the message lines before the first frame are kept as `message`.
 */
import { parse as parseStackLine } from 'stacktrace-parser';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';

export interface FrameInput {
  /** The file or URL the frame names (as printed). */
  file?: string;
  /** 1-based line and column in the generated file. */
  line?: number;
  column?: number;
  function?: string;
  /** The artifact's debug ID, when the reporter knows it (JSON frames). */
  debugId?: string;
  /** 1-based line of the input this frame came from (text input). */
  inputLine?: number;
}

export interface StackInput {
  message: string[];
  frames: FrameInput[];
  diagnostics: Diagnostic[];
}

const MAX_LINE = 4096;
/** Unparsed lines beyond this many are counted in one diagnostic, not one each. */
const MAX_LINE_DIAGNOSTICS = 20;
const PRODUCER = 'symbolicate';

export function parseStackInput(text: string, source = 'input'): StackInput {
  const trimmed = text.trimStart();
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseJsonFrames(trimmed, source);
  const out: StackInput = { message: [], frames: [], diagnostics: [] };
  let unparsed = 0;
  let start = 0;
  let lineNo = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const raw = text.slice(start, end).replace(/\r$/, '');
    lineNo++;
    start = end + 1;
    if (raw.trim() === '') {
      if (end === text.length) break;
      continue;
    }
    const frame = raw.length <= MAX_LINE ? parseStackLine(raw)[0] : undefined;
    if (frame && frame.file && frame.lineNumber !== null) {
      const f: FrameInput = { inputLine: lineNo };
      if (frame.file) f.file = frame.file;
      if (frame.lineNumber !== null) f.line = frame.lineNumber;
      if (frame.column !== null) f.column = frame.column;
      if (frame.methodName && frame.methodName !== '<unknown>') f.function = frame.methodName;
      out.frames.push(f);
    } else if (out.frames.length === 0 && !/^\s*at\s/.test(raw)) {
      out.message.push(raw);
    } else {
      unparsed++;
      if (unparsed <= MAX_LINE_DIAGNOSTICS) {
        out.diagnostics.push(
          diagnostic('KILN_STACK_LINE_UNPARSED', `line ${lineNo} of ${source} is not a stack frame with a location: ${JSON.stringify(raw.length > 120 ? `${raw.slice(0, 120)}…` : raw)}`, {
            producer: PRODUCER,
          }),
        );
      }
    }
    if (end === text.length) break;
  }
  if (unparsed > MAX_LINE_DIAGNOSTICS) {
    out.diagnostics.push(diagnostic('KILN_STACK_LINE_UNPARSED', `${unparsed - MAX_LINE_DIAGNOSTICS} more lines of ${source} are not stack frames`, { producer: PRODUCER }));
  }
  return out;
}

function parseJsonFrames(text: string, source: string): StackInput {
  const out: StackInput = { message: [], frames: [], diagnostics: [] };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    out.diagnostics.push(diagnostic('KILN_STACK_LINE_UNPARSED', `${source} starts like JSON but is not JSON: ${(e as Error).message}`, { producer: PRODUCER }));
    return out;
  }
  const list = Array.isArray(v) ? v : Array.isArray((v as { frames?: unknown })?.frames) ? (v as { frames: unknown[] }).frames : undefined;
  if (!list) {
    out.diagnostics.push(diagnostic('KILN_STACK_LINE_UNPARSED', `${source} is JSON but neither an array of frames nor {"frames": [...]}`, { producer: PRODUCER }));
    return out;
  }
  list.forEach((x, i) => {
    const o = x as Record<string, unknown>;
    const num = (k: string[]) => k.map((n) => o?.[n]).find((n): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0);
    const str = (k: string[]) => k.map((n) => o?.[n]).find((n): n is string => typeof n === 'string' && n.length > 0);
    const f: FrameInput = {};
    const file = str(['file', 'fileName', 'url', 'abs_path', 'filename']);
    const line = num(['line', 'lineNumber', 'lineno']);
    const column = num(['column', 'columnNumber', 'colno']);
    const fn = str(['function', 'functionName', 'methodName']);
    const id = str(['debugId', 'debug_id']);
    if (file) f.file = file;
    if (line) f.line = line;
    if (column) f.column = column;
    if (fn) f.function = fn;
    if (id) f.debugId = id;
    if (!o || typeof o !== 'object' || (!file && !id) || !line) {
      out.diagnostics.push(diagnostic('KILN_STACK_LINE_UNPARSED', `frame ${i} of ${source} has no file or debugId, or no positive integer line`, { producer: PRODUCER }));
    }
    out.frames.push(f);
  });
  return out;
}
