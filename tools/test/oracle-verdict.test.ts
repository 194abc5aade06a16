/**
 * The history oracle's verdict rules (tools/lib/oracle-verdict.mjs, issue 10 point 4): a failed or empty
 * build is never "equal", a judge disagreement is its own verdict, and the calibration gate fails a
 * blind judge — including one forced blind with --blind-judge — and a calibration with nothing to judge.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error — plain ESM tool module, no type declarations
import { blinded, calibrate, verdictOf } from '../lib/oracle-verdict.mjs';

const judged = (equal: boolean, compared = 3) => ({ equal, compared, differences: equal ? [] : ['x.d.ts: differs'] });
const pair = (k: boolean, t: boolean, extra: object = {}) => ({ files: [3, 3], kiln: judged(k), token: judged(t), ...extra });

describe('verdictOf', () => {
  it('equal only when both judges say so', () => {
    expect(verdictOf(pair(true, true))).toBe('equal');
    expect(verdictOf(pair(false, false))).toBe('differ');
    expect(verdictOf(pair(true, false))).toBe('disagree');
    expect(verdictOf(pair(false, true))).toBe('disagree');
  });
  it('a failed, empty or uncompared build is failed, never equal', () => {
    expect(verdictOf(pair(true, true, { fatal: 'install failed' }))).toBe('failed');
    expect(verdictOf(pair(true, true, { files: [3, 0] }))).toBe('failed');
    expect(verdictOf(pair(true, true, { files: [0, 0] }))).toBe('failed');
    expect(verdictOf({ files: [1, 1], kiln: judged(true, 0), token: judged(true, 0) })).toBe('failed');
  });
  it('a pair not built within --build-budget is unbuilt: neither equal nor failed, and no blind judge makes it equal', () => {
    expect(verdictOf({ mode: 'bare', notBuilt: true })).toBe('unbuilt');
    expect(verdictOf(blinded({ mode: 'bare', notBuilt: true }, ['kiln', 'token']))).toBe('unbuilt');
  });
});

describe('calibrate', () => {
  const reruns = [...Array.from({ length: 19 }, () => pair(false, false)), pair(true, true)];
  it('passes judges that see >= 90% of real changes', () => {
    const c = calibrate(reruns);
    expect(c.judges.kiln).toMatchObject({ valid: 20, differ: 19, pass: true });
    expect(c.judges.token.pass).toBe(true);
  });
  it('fails a judge below 90%', () => {
    const c = calibrate([...reruns.slice(0, 17), pair(true, false), pair(true, false), pair(true, true)]);
    expect(c.judges.kiln).toMatchObject({ differ: 17, pass: false });
    expect(c.judges.token.pass).toBe(true);
  });
  it('fails a judge forced blind, and both when both are', () => {
    const one = calibrate(reruns.map((r) => blinded(r, ['token'])));
    expect(one.judges.token).toMatchObject({ differ: 0, pass: false });
    expect(one.judges.kiln.pass).toBe(true);
    const both = calibrate(reruns.map((r) => blinded(r, ['kiln', 'token'])));
    expect([both.judges.kiln.pass, both.judges.token.pass]).toEqual([false, false]);
  });
  it('sets failed builds apart and fails when nothing built', () => {
    const c = calibrate([pair(false, false, { fatal: 'x' }), ...reruns]);
    expect(c).toMatchObject({ sampled: 21, failed: 1 });
    expect(calibrate([pair(false, false, { fatal: 'x' })]).judges.kiln.pass).toBe(false);
    expect(calibrate([]).judges.token.pass).toBe(false);
  });
  it('sets pairs not built apart from the judged and from the failed; nothing built is no pass', () => {
    const c = calibrate([{ notBuilt: true }, { notBuilt: true }, pair(false, false, { fatal: 'x' }), ...reruns]);
    expect(c).toMatchObject({ sampled: 23, unbuilt: 2, failed: 1 });
    expect(c.judges.kiln).toMatchObject({ valid: 20, differ: 19, pass: true });
    expect(calibrate([{ notBuilt: true }]).judges.kiln.pass).toBe(false);
  });
});
