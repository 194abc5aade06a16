/**
 * An independent reader and validator of Chrome Trace Event Format files (JSON Array Format), for tests
 * of kiln's build timeline. Written from the format's definition ("Trace Event Format", the catapult
 * document) — it imports nothing from kiln and does not know how kiln writes; it knows only the format
 * and the two promises kiln documents about its captures (a `kiln_capture` metadata record opens and
 * closes each one; spans are written when they end).
 *
 * What it checks:
 * - the file: `[` then event objects; the closing `]` is optional (the format allows a trace cut short)
 *   and so is a trailing comma before the end;
 * - each event against a JSON schema (ajv) of the shapes the format defines: common fields (`name`,
 *   `ph`, `ts` in µs, `pid`, `tid`, `cat`, `args`); complete events `X` with a numeric `dur` ≥ 0;
 *   metadata events `M` (`process_name` / `thread_name` with `args.name`, `*_sort_index` with an integer
 *   `args.sort_index`); any other phase the format defines with its required fields;
 * - every track (pid, tid) that has `X` events is named by a `thread_name` event, every process by a
 *   `process_name` event;
 * - on one track, `X` events nest properly: any two are disjoint or one contains the other;
 * - on one track, in file order, `X` events end in non-decreasing order (written as they end, on a
 *   monotonic clock: a clock that went back, or events of two threads on one track, break it);
 * - per process, its captures: `started`, then `complete` / `incomplete`; a process whose last capture
 *   has no closing record was cut short and is reported `cut`.
 */
import Ajv from 'ajv';

const PHASES = ['B', 'E', 'X', 'i', 'I', 'C', 'b', 'n', 'e', 'S', 'T', 'p', 'F', 's', 't', 'f', 'P', 'N', 'O', 'D', 'M', 'V', 'v', 'R', 'c', '(', ')'];

const number = { type: 'number' };
const id = { type: 'integer' };

/** The event shapes, from the format's definition. */
export const traceEventSchema = {
  $id: 'https://example.invalid/trace-event.schema.json',
  type: 'object',
  required: ['ph'],
  properties: {
    name: { type: 'string' },
    cat: { type: 'string' },
    ph: { enum: PHASES },
    ts: number,
    tts: number,
    pid: id,
    tid: id,
    args: { type: 'object' },
    dur: number,
    tdur: number,
    id: { type: ['string', 'integer'] },
    s: { enum: ['g', 'p', 't'] },
  },
  allOf: [
    {
      if: { properties: { ph: { const: 'X' } } },
      then: {
        required: ['name', 'ts', 'dur', 'pid', 'tid'],
        properties: { ts: { type: 'number', minimum: 0 }, dur: { type: 'number', minimum: 0 } },
      },
    },
    { if: { properties: { ph: { enum: ['B', 'E', 'i', 'I', 'C', 'b', 'n', 'e', 'P', 'N', 'O', 'D'] } } }, then: { required: ['ts', 'pid'] } },
    {
      if: { properties: { ph: { const: 'M' } } },
      then: {
        required: ['name', 'pid'],
        allOf: [
          {
            if: { properties: { name: { enum: ['process_name', 'thread_name', 'process_labels'] } } },
            then: { required: ['args'], properties: { args: { type: 'object', required: [], properties: { name: { type: 'string' }, labels: { type: 'string' } } } } },
          },
          {
            if: { properties: { name: { enum: ['process_name', 'thread_name'] } } },
            then: { properties: { args: { required: ['name'] } } },
          },
          {
            if: { properties: { name: { const: 'thread_name' } } },
            then: { required: ['tid'] },
          },
          {
            if: { properties: { name: { enum: ['process_sort_index', 'thread_sort_index'] } } },
            then: { required: ['args'], properties: { args: { type: 'object', required: ['sort_index'], properties: { sort_index: { type: 'integer' } } } } },
          },
        ],
      },
    },
  ],
};

const ajv = new Ajv({ allErrors: true, strict: false });
const validateEvent = ajv.compile(traceEventSchema);

/**
 * The events of a JSON Array Format trace. Throws when the text is not one: no `[`, or what follows is
 * not objects separated by commas.
 * @param {string} text
 * @returns {{ events: any[], closed: boolean }}
 */
export function parseTrace(text) {
  let t = text.trim();
  if (!t.startsWith('[')) throw new Error('not a JSON Array Format trace: it does not start with [');
  const closed = t.endsWith(']');
  if (!closed) {
    if (t.endsWith(',')) t = t.slice(0, -1);
    t += ']';
  }
  const events = JSON.parse(t);
  if (!Array.isArray(events)) throw new Error('not a JSON array');
  return { events, closed };
}

const trackKey = (pid, tid) => `${pid}/${tid}`;

/**
 * Validate a trace file's text. `errors` lists every violation (empty: valid); the rest is the trace
 * read back for assertions.
 * @param {string} text
 */
export function checkTrace(text) {
  const errors = [];
  let events;
  try {
    events = parseTrace(text).events;
  } catch (e) {
    return { errors: [e.message], events: [], processes: [] };
  }
  const processNames = new Map();
  const threadNames = new Map();
  const captures = new Map();
  const spans = new Map();
  events.forEach((e, i) => {
    if (!validateEvent(e)) {
      errors.push(`event ${i} ${JSON.stringify(e).slice(0, 160)}: ${ajv.errorsText(validateEvent.errors)}`);
      return;
    }
    if (e.ph === 'M') {
      if (e.name === 'process_name') processNames.set(e.pid, e.args.name);
      else if (e.name === 'thread_name') threadNames.set(trackKey(e.pid, e.tid), e.args.name);
      else if (e.name === 'kiln_capture') {
        const list = captures.get(e.pid) ?? [];
        captures.set(e.pid, list);
        if (e.args?.state === 'started') list.push({ started: e.args, end: undefined });
        else if (list.length && !list.at(-1).end) list.at(-1).end = e.args;
        else errors.push(`event ${i}: a kiln_capture ${e.args?.state} record for pid ${e.pid} without a capture started before it`);
      }
    } else if (e.ph === 'X') {
      const k = trackKey(e.pid, e.tid);
      const list = spans.get(k) ?? [];
      spans.set(k, list);
      list.push(e);
    }
  });

  for (const [k, list] of spans) {
    const [pid] = k.split('/').map(Number);
    if (!threadNames.has(k)) errors.push(`track ${k} has ${list.length} X events and no thread_name`);
    if (!processNames.has(pid)) errors.push(`process ${pid} has X events and no process_name`);
    // Written as they end: ends never go back in file order.
    for (let i = 1; i < list.length; i++) {
      if (list[i].ts + list[i].dur < list[i - 1].ts + list[i - 1].dur) {
        errors.push(`track ${k}: "${list[i].name}" ends at ${list[i].ts + list[i].dur}, before "${list[i - 1].name}" written before it (${list[i - 1].ts + list[i - 1].dur})`);
        break;
      }
    }
    // Proper nesting: sorted by begin (longer first on ties), each event lies inside or after the open ones.
    const sorted = [...list].sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const stack = [];
    for (const e of sorted) {
      while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
      const top = stack.at(-1);
      if (top && e.ts + e.dur > top.ts + top.dur) {
        errors.push(`track ${k}: "${e.name}" [${e.ts}, ${e.ts + e.dur}] overlaps "${top.name}" [${top.ts}, ${top.ts + top.dur}] without nesting`);
        break;
      }
      stack.push(e);
    }
  }

  const processes = [...new Set([...processNames.keys(), ...captures.keys(), ...[...spans.keys()].map((k) => Number(k.split('/')[0]))])].map((pid) => {
    const caps = captures.get(pid) ?? [];
    const last = caps.at(-1);
    const tracks = [...spans.entries()]
      .filter(([k]) => Number(k.split('/')[0]) === pid)
      .map(([k, list]) => ({ tid: Number(k.split('/')[1]), name: threadNames.get(k), spans: list }));
    return {
      pid,
      name: processNames.get(pid),
      captures: caps,
      /** complete / incomplete as the capture's last record says; `cut`: it has none; `unknown`: no capture record at all. */
      state: !last ? 'unknown' : !last.end ? 'cut' : last.end.state,
      tracks,
      spans: tracks.flatMap((t) => t.spans),
    };
  });
  return { errors, events, processes };
}
