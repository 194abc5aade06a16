/**
 * Where each section and record of a format-2 kiln.rep lies, computed from format.ts's prose by this
 * file's own rules (its own LEB128 reader, its own width rule) and not by the reader's code: the tests
 * and the fuzzer that damage one field at a time locate it with this, so a reader that misplaced a field
 * would not also misplace the damage.
 */
/**
 * @typedef {object} RepLayout
 * @property {number} prefixLength
 * @property {Record<string, [number, number, number]>} fields  name → [offset of its varint, byte length, value]
 * @property {number} headerAt
 * @property {number} indexAt
 * @property {number} keysAt
 * @property {number} infoAt
 * @property {number} tableAt
 * @property {number} dictAt
 * @property {number} sealAt
 * @property {number} payloadsAt
 * @property {{ size: number, key: number, payload: number, info: number }} index  record size and field widths
 * @property {{ size: number, stored: number }} table  record size and the storedLength width
 */

const NAMES = ['headerLength', 'entryCount', 'keysLength', 'infoLength', 'infoRawLength', 'payloadCount', 'dictLength', 'dictRawLength', 'payloadsLength', 'infoCompression', 'dictCompression'];

/** @param {Uint8Array} bytes @returns {RepLayout} */
export function layoutOf(bytes) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const prefixLength = b.readUInt32LE(12);
  const fields = {};
  let at = 16;
  for (const name of NAMES) {
    let v = 0;
    let shift = 1;
    const start = at;
    for (;;) {
      const byte = b[at++];
      v += (byte & 0x7f) * shift;
      shift *= 128;
      if (byte < 0x80) break;
    }
    fields[name] = [start, at - start, v];
  }
  if (at !== prefixLength) throw new Error(`test layout: prefix ends at ${at}, declared ${prefixLength}`);
  const f = (n) => fields[n][2];
  const width = (max) => (max < 2 ** 8 ? 1 : max < 2 ** 16 ? 2 : max < 2 ** 24 ? 3 : 4);
  const index = { key: width(f('keysLength')), payload: width(f('payloadCount')), info: width(f('infoRawLength')), size: 0 };
  index.size = index.key + index.payload + index.info;
  const table = { stored: width(f('payloadsLength')), size: 0 };
  table.size = table.stored + 1 + 32;
  const headerAt = prefixLength;
  const indexAt = headerAt + f('headerLength');
  const keysAt = indexAt + f('entryCount') * index.size;
  const infoAt = keysAt + f('keysLength');
  const tableAt = infoAt + f('infoLength');
  const dictAt = tableAt + f('payloadCount') * table.size;
  const sealAt = dictAt + f('dictLength');
  return { prefixLength, fields, headerAt, indexAt, keysAt, infoAt, tableAt, dictAt, sealAt, payloadsAt: sealAt + 32, index, table };
}
