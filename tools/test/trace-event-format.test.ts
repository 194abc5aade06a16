/**
 * The Trace Event Format validator the build-timeline tests trust (tools/testing/trace-event-format.mjs),
 * on hand-written traces: it accepts a well-formed one (closing bracket or not) and each of its checks
 * rejects the violation it is for — so a passing timeline test means something.
 */
import { describe, expect, it } from 'vitest';
import { checkTrace, parseTrace } from '../testing/trace-event-format.mjs';

const meta = (pid: number, tid: number, thread: string) => [
  { name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `p${pid}` } },
  { name: 'thread_name', ph: 'M', pid, tid, args: { name: thread } },
];
const x = (name: string, ts: number, dur: number, pid = 1, tid = 0) => ({ name, cat: 'kiln', ph: 'X', ts, dur, pid, tid });
const started = (pid: number) => ({ name: 'kiln_capture', ph: 'M', pid, tid: 0, ts: 0, args: { state: 'started' } });
const ended = (pid: number, state: string) => ({ name: 'kiln_capture', ph: 'M', pid, tid: 0, ts: 1, args: { state } });
/** As kiln writes it: `[`, one event a line with a comma, no closing bracket. */
const file = (events: object[]) => `[\n${events.map((e) => `${JSON.stringify(e)},\n`).join('')}`;

describe('the Trace Event Format validator', () => {
  const good = [started(1), ...meta(1, 0, 'main'), x('parse', 10, 5), x('digest', 16, 4), x('slice', 9, 12), ended(1, 'complete')];

  it('accepts a well-formed trace, with or without its closing bracket', () => {
    expect(checkTrace(file(good)).errors).toEqual([]);
    expect(checkTrace(JSON.stringify(good)).errors).toEqual([]);
    expect(parseTrace(file(good)).closed).toBe(false);
    const p = checkTrace(file(good)).processes;
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ pid: 1, name: 'p1', state: 'complete' });
    expect(p[0]!.tracks.map((t) => t.name)).toEqual(['main']);
  });

  it('rejects what is not a JSON Array Format trace', () => {
    expect(checkTrace('{"traceEvents": []}').errors[0]).toMatch(/does not start with \[/);
    expect(checkTrace('[\n{"ph":"X",').errors.length).toBe(1);
  });

  it('rejects event shapes the format does not define: a missing or negative dur, a string ts, an unknown phase, a nameless thread_name', () => {
    for (const bad of [
      { name: 'a', ph: 'X', ts: 1, pid: 1, tid: 0 },
      { ...x('a', 1, 1), dur: -1 },
      { ...x('a', 1, 1), ts: '1' },
      { ...x('a', 1, 1), ph: 'Q' },
      { name: 'thread_name', ph: 'M', pid: 1, tid: 0, args: {} },
      { name: 'thread_sort_index', ph: 'M', pid: 1, tid: 0, args: { sort_index: 'first' } },
    ]) {
      expect(checkTrace(file([...good, bad])).errors.length, JSON.stringify(bad)).toBeGreaterThan(0);
    }
  });

  it('rejects a track without a thread_name and a process without a process_name', () => {
    expect(checkTrace(file([...good, x('a', 30, 1, 1, 7)])).errors.join('\n')).toMatch(/track 1\/7 .* no thread_name/);
    expect(checkTrace(file([...good, { name: 'thread_name', ph: 'M', pid: 2, tid: 0, args: { name: 'main' } }, x('a', 30, 1, 2)])).errors.join('\n')).toMatch(/process 2 .* no process_name/);
  });

  it('rejects spans of one track that overlap without nesting', () => {
    const errors = checkTrace(file([...meta(1, 0, 'main'), x('a', 10, 10), x('b', 15, 10)])).errors;
    expect(errors.join('\n')).toMatch(/"b" \[15, 25\] overlaps "a" \[10, 20\] without nesting/);
    // On two tracks they may overlap; a shared boundary is not an overlap.
    expect(checkTrace(file([...meta(1, 0, 'main'), ...meta(1, 3, 'worker'), x('a', 10, 10), x('b', 15, 10, 1, 3), x('c', 20, 1)])).errors).toEqual([]);
  });

  it('rejects a track whose events, in file order, end earlier than one written before them (a clock that went back)', () => {
    const errors = checkTrace(file([...meta(1, 0, 'main'), x('a', 10, 10), x('b', 5, 2)])).errors;
    expect(errors.join('\n')).toMatch(/"b" ends at 7, before "a"/);
  });

  it('reports each capture: complete, incomplete as it says, cut when it has no closing record', () => {
    const p = checkTrace(file([started(1), ...meta(1, 0, 'main'), started(2), ...meta(2, 0, 'main'), ended(2, 'incomplete'), started(3)])).processes;
    expect(Object.fromEntries(p.map((q) => [q.pid, q.state]))).toEqual({ 1: 'cut', 2: 'incomplete', 3: 'cut' });
  });
});
