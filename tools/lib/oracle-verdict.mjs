/**
 * The false-hit oracle's verdicts (tools/bench-history.mjs, issue 10 point 4), kept apart so that the
 * rules that make the check able to fail have their own tests (tools/test/oracle-verdict.test.ts).
 *
 * A checked pair carries both judges' results — kiln's `compareOutputs` (`kiln`) and the token judge's
 * `judgeOutputs` (`token`), each `{ equal, compared, differences }` — and the builds' facts: files
 * emitted at each commit (`files: [a, b]`) and a `fatal` error where a build or its install failed.
 */

/** Share of calibration reruns in which each judge must see an output difference. */
export const CALIBRATION_MIN = 0.9;

/**
 * 'unbuilt' (a build is not in the cache: the run's --build-budget ran out; never judged, never equal),
 * 'failed' (a build failed or emitted nothing, or nothing was compared: never "equal"), 'equal'
 * (both judges), 'differ' (both judges: a false hit when the pair is a kiln hit), or 'disagree'.
 */
export function verdictOf(r) {
  if (r.notBuilt) return 'unbuilt';
  if (r.fatal || !r.files?.[0] || !r.files?.[1] || (!r.kiln?.compared && !r.token?.compared)) return 'failed';
  if (r.kiln.equal && r.token.equal) return 'equal';
  if (!r.kiln.equal && !r.token.equal) return 'differ';
  return 'disagree';
}

/**
 * Calibration on kiln reruns whose own sources changed meaningfully: per judge, the share of the pairs
 * that built in which it saw a difference. A judge passes with at least `min` of them, and never with
 * no pair to judge (a calibration that cannot fail is no calibration).
 * @param {Array<{ kiln: {equal: boolean}, token: {equal: boolean} }>} results
 */
export function calibrate(results, min = CALIBRATION_MIN) {
  const unbuilt = results.filter((r) => verdictOf(r) === 'unbuilt').length;
  const valid = results.filter((r) => verdictOf(r) !== 'failed' && verdictOf(r) !== 'unbuilt');
  const judges = {};
  for (const j of ['kiln', 'token']) {
    const differ = valid.filter((r) => !r[j].equal).length;
    const rate = valid.length ? differ / valid.length : 0;
    judges[j] = { valid: valid.length, differ, rate, pass: valid.length > 0 && rate >= min };
  }
  return { sampled: results.length, unbuilt, failed: results.length - valid.length - unbuilt, judges };
}

/** A judge forced blind (`--blind-judge`, the gate's self-test): it calls every pair equal. */
export function blinded(r, blind) {
  if (r.notBuilt) return r;
  const out = { ...r };
  for (const j of blind) out[j] = { ...r[j], equal: true, differences: [] };
  return out;
}
