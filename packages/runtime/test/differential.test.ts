/**
 * Differential check of the consumer (SPEC §7 "same observable behaviour as importing the built JS"):
 * the generated corpus's payloads written out as CommonJS files and required by Node, against the same
 * exports called through kiln.rep in node:vm — same calls in the same order, same results and the
 * same thrown errors (module-level counters included).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createConsumer, encodeRepresentation, openRepresentation } from '@kiln/runtime';
import { makeRepresentation } from '../../../tools/lib/rep-corpus.mjs';

const dir = mkdtempSync(join(tmpdir(), 'kiln-rep-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('calls through the representation behave as requiring the same CommonJS files', () => {
  const rep = makeRepresentation({ exports: 40, seed: 5 });
  writeFileSync(join(dir, 'package.json'), '{"type":"commonjs"}');
  for (const p of rep.payloads) writeFileSync(join(dir, p.name), p.code);
  const req = createRequire(join(dir, 'index.js'));
  const consumer = createConsumer(openRepresentation(encodeRepresentation(rep)));
  const inputs: unknown[][] = [[[{ value: 3 }, { value: 'ab' }, 5, null]], [7], [[1, 2, 3], { margin: 1 }], [undefined, { strict: true }]];
  const outcome = (f: () => unknown) => {
    try {
      return { ok: JSON.parse(JSON.stringify(f() ?? null)) };
    } catch (e) {
      return { threw: `${(e as Error).name}: ${(e as Error).message}` };
    }
  };
  let compared = 0;
  for (const e of rep.entries) {
    if (!e.coverage.covered) continue;
    const { payload, export: name } = e.coverage;
    const native = req(`./${rep.payloads[payload]!.name}`)[name] as (...a: unknown[]) => unknown;
    for (const args of inputs) {
      expect(outcome(() => consumer.call(e.surface, args)), `${e.surface}(${JSON.stringify(args)})`).toEqual(outcome(() => native(...args)));
      compared++;
    }
  }
  expect(compared).toBe(160);
});
