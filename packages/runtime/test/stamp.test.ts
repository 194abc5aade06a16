/**
 * An unstamped representation (a build's own kiln.rep: the build is keyed without the manifest's
 * version, so it writes none) names the version the caller read from the package.json beside it, in
 * its header and in its refusals; `stampRepresentation` (the pack step) sets the version, and the result
 * is byte-for-byte what encoding with that version gives. A stamped version always wins.
 */
import { describe, expect, it } from 'vitest';
import { callExport, encodeRepresentation, openRepresentation, readRepresentation, stampRepresentation, type RepError, type Representation } from '@kiln/runtime';
import { makeRepresentation } from '../../../tools/lib/rep-corpus.mjs';

const stamped: Representation = makeRepresentation({ exports: 12, uncovered: 2 });
const unstamped: Representation = { ...stamped, header: { ...stamped.header, version: '' } };
const bytes = encodeRepresentation(unstamped);

function refusal(fn: () => unknown): RepError {
  try {
    fn();
  } catch (e) {
    return e as RepError;
  }
  throw new Error('expected a refusal');
}

describe('unstamped and stamped versions', () => {
  it('an unstamped header names the caller-given version, and only when it is unstamped', () => {
    expect(openRepresentation(bytes).header.version).toBe('');
    const r = openRepresentation(bytes, { version: '3.1.4' });
    expect(r.header.version).toBe('3.1.4');
    const e = refusal(() => callExport(r, `${stamped.header.package}#nope`));
    expect(e.code).toBe('KILN_REP_NO_SUCH_EXPORT');
    expect(e.message).toContain(`${stamped.header.package}@3.1.4`);
    expect(openRepresentation(encodeRepresentation(stamped), { version: '9.9.9' }).header.version).toBe(stamped.header.version);
  });

  it('an unsupported format of an unstamped file is refused naming the caller-given version', () => {
    const future = Buffer.from(bytes);
    future.writeUInt32LE(7, 8);
    const e = refusal(() => openRepresentation(future, { version: '3.1.4' }));
    expect(e.code).toBe('KILN_REP_UNSUPPORTED_VERSION');
    expect(e.message).toContain(`${stamped.header.package}@3.1.4`);
  });

  it('stampRepresentation sets the version: the same bytes as encoding with it, everything else kept', () => {
    const out = stampRepresentation(bytes, '2.0.0');
    expect(Buffer.from(out).equals(Buffer.from(encodeRepresentation({ ...unstamped, header: { ...unstamped.header, version: '2.0.0' } })))).toBe(true);
    const back = readRepresentation(out);
    expect(back.header.version).toBe('2.0.0');
    expect(back.entries).toEqual(readRepresentation(bytes).entries);
    expect(back.payloads).toEqual(readRepresentation(bytes).payloads);
  });
});
