/**
 * A generated but realistic executable representation (the data model of @kiln/runtime's model.ts) for
 * the format benchmark, the fuzzer and the runtime tests: N exports of rollup-`cjs`-style code —
 * functions using private helpers, classes, constant tables — in one entry payload per export plus
 * shared chunks they `require('./chunk-K.js')`. Deterministic for a seed (its own PRNG); no I/O.
 *
 * With `marker: true` every payload's module body first records its name in
 * `globalThis.__kilnRepEvaluated` (a Set the caller provides in the vm context): the fuzzer's proof that
 * a payload whose integrity failed was never evaluated.
 */

const WORDS = [
  'account', 'address', 'amount', 'batch', 'buffer', 'cache', 'channel', 'config', 'cursor', 'digest',
  'entry', 'event', 'field', 'filter', 'format', 'graph', 'handle', 'header', 'index', 'item', 'key',
  'label', 'ledger', 'limit', 'list', 'locale', 'margin', 'member', 'message', 'metric', 'node', 'offset',
  'order', 'owner', 'page', 'parser', 'path', 'payload', 'policy', 'price', 'queue', 'range', 'record',
  'region', 'report', 'request', 'result', 'route', 'rule', 'schema', 'scope', 'session', 'signal',
  'source', 'span', 'state', 'status', 'stream', 'table', 'tag', 'target', 'task', 'tenant', 'token',
  'total', 'trace', 'user', 'value', 'vendor', 'version', 'window', 'worker',
];
const VERBS = ['build', 'parse', 'format', 'resolve', 'merge', 'normalize', 'validate', 'compute', 'collect', 'render', 'encode', 'apply'];

function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const cap = (w) => w[0].toUpperCase() + w.slice(1);

function sharedChunk(k, rnd, marker) {
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const w = [pick(WORDS), pick(WORDS), pick(WORDS), pick(WORDS)];
  const cls = `${cap(w[0])}${cap(w[1])}`;
  const helper = `${pick(VERBS)}${cap(w[1])}`;
  const lines = [`'use strict';`, ``];
  if (marker) lines.push(`globalThis.__kilnRepEvaluated && globalThis.__kilnRepEvaluated.add('chunk-${k}.js');`, ``);
  lines.push(
    `const ${w[2].toUpperCase()}_DEFAULTS = Object.freeze({`,
    `  ${w[0]}Limit: ${Math.floor(rnd() * 1000)},`,
    `  ${w[1]}Timeout: ${Math.floor(rnd() * 60000)},`,
    `  ${w[3]}Prefix: '${w[3]}-${k}',`,
    `  strict: ${rnd() < 0.5},`,
    `});`,
    ``,
    `let ${w[0]}Counter = 0;`,
    ``,
    `function next${cap(w[0])}Id(prefix) {`,
    `  ${w[0]}Counter += 1;`,
    `  return (prefix || ${w[2].toUpperCase()}_DEFAULTS.${w[3]}Prefix) + ':' + ${w[0]}Counter.toString(36);`,
    `}`,
    ``,
    `function ${helper}(input, options) {`,
    `  const opts = Object.assign({}, ${w[2].toUpperCase()}_DEFAULTS, options);`,
    `  if (input == null) {`,
    `    if (opts.strict) throw new TypeError('${w[1]} is required');`,
    `    return [];`,
    `  }`,
    `  const items = Array.isArray(input) ? input : [input];`,
    `  return items`,
    `    .filter((item) => item !== undefined && item !== null)`,
    `    .slice(0, opts.${w[0]}Limit)`,
    `    .map((item, i) => (typeof item === 'object' ? { ...item, position: i } : { value: item, position: i }));`,
    `}`,
    ``,
    `class ${cls} {`,
    `  constructor(${w[2]}, ${w[3]}Options = {}) {`,
    `    this.${w[2]} = ${w[2]};`,
    `    this.${w[3]} = ${w[3]}Options;`,
    `    this.id = next${cap(w[0])}Id();`,
    `    this.entries = new Map();`,
    `  }`,
    `  add(key, value) {`,
    `    if (this.entries.has(key)) throw new Error('duplicate ${w[1]} ' + key);`,
    `    this.entries.set(key, value);`,
    `    return this;`,
    `  }`,
    `  get size() {`,
    `    return this.entries.size;`,
    `  }`,
    `  toJSON() {`,
    `    return { id: this.id, ${w[2]}: this.${w[2]}, entries: Array.from(this.entries) };`,
    `  }`,
    `}`,
    ``,
    `exports.${cls} = ${cls};`,
    `exports.${w[2].toUpperCase()}_DEFAULTS = ${w[2].toUpperCase()}_DEFAULTS;`,
    `exports.next${cap(w[0])}Id = next${cap(w[0])}Id;`,
    `exports.helper = ${helper};`,
  );
  return { name: `chunk-${k}.js`, code: lines.join('\n') + '\n', cls };
}

function entryPayload(i, name, chunks, rnd, marker) {
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const a = chunks[Math.floor(rnd() * chunks.length)];
  const b = chunks[Math.floor(rnd() * chunks.length)];
  const w = [pick(WORDS), pick(WORDS), pick(WORDS)];
  const lines = [`'use strict';`, ``];
  if (marker) lines.push(`globalThis.__kilnRepEvaluated && globalThis.__kilnRepEvaluated.add('${name}.js');`, ``);
  lines.push(`var ${a.name.replace(/[-.]/g, '_')} = require('./${a.name}');`);
  if (b !== a) lines.push(`var ${b.name.replace(/[-.]/g, '_')} = require('./${b.name}');`);
  const av = a.name.replace(/[-.]/g, '_');
  const bv = b.name.replace(/[-.]/g, '_');
  lines.push(
    ``,
    `const ${w[0]}Weights = [${Array.from({ length: 6 }, () => Math.floor(rnd() * 100)).join(', ')}];`,
    ``,
    `function ${w[1]}Score(${w[2]}Item, index) {`,
    `  const weight = ${w[0]}Weights[index % ${w[0]}Weights.length];`,
    `  const base = typeof ${w[2]}Item.value === 'number' ? ${w[2]}Item.value : String(${w[2]}Item.value ?? '').length;`,
    `  return Math.round((base * weight) / 10) + index;`,
    `}`,
    ``,
    `/**`,
    ` * ${cap(pick(VERBS))}s the ${w[0]} ${w[1]} of a ${w[2]} list (generated fixture ${i}).`,
    ` */`,
    `function ${name}(input, options = {}) {`,
    `  const items = ${av}.helper(input, options);`,
    `  const group = new ${bv}.${b.cls}('${name}', { source: '${w[2]}' });`,
    `  let total = 0;`,
    `  for (let index = 0; index < items.length; index++) {`,
    `    const item = items[index];`,
    `    const score = ${w[1]}Score(item, index);`,
    `    total += score;`,
    `    group.add('${name}:' + index, { ...item, score });`,
    `  }`,
    `  if (options.${w[0]} && total > options.${w[0]}) {`,
    `    throw new RangeError('${name}: total ' + total + ' over the ${w[0]} of ' + options.${w[0]});`,
    `  }`,
    `  return { id: group.id, total, count: group.size, ${w[1]}: total / Math.max(1, items.length) };`,
    `}`,
    ``,
    `exports.${name} = ${name};`,
  );
  return { name: `${name}.js`, code: lines.join('\n') + '\n' };
}

/**
 * @param {{ exports?: number, shared?: number, seed?: number, marker?: boolean, pkg?: string, uncovered?: number }} [o]
 * @returns {import('@kiln/runtime').Representation}
 */
export function makeRepresentation(o = {}) {
  const n = o.exports ?? 400;
  const nShared = o.shared ?? Math.max(1, Math.round(n / 10));
  const pkg = o.pkg ?? '@acme/ledger';
  const rnd = prng(o.seed ?? 42);
  const chunks = Array.from({ length: nShared }, (_, k) => sharedChunk(k, rnd, o.marker));
  const payloads = chunks.map(({ name, code }) => ({ name, code }));
  const entries = [];
  const names = new Set();
  for (let i = 0; i < n; i++) {
    let name;
    do name = `${VERBS[Math.floor(rnd() * VERBS.length)]}${cap(WORDS[Math.floor(rnd() * WORDS.length)])}${cap(WORDS[Math.floor(rnd() * WORDS.length)])}`;
    while (names.has(name));
    names.add(name);
    const sub = i % 4 === 0 ? '/utils' : '';
    const surface = `${pkg}${sub}#${name}`;
    const uncovered = o.uncovered !== undefined && i < o.uncovered;
    if (uncovered) {
      entries.push({ surface, declaring: `${pkg}:src/${name}.ts#${name}`, kind: 'function', coverage: { covered: false, reason: 'KILN_REP_UNCOVERED_DYNAMIC_IMPORT', detail: `${name} uses import() of a computed specifier` } });
      continue;
    }
    const p = entryPayload(i, name, chunks, rnd, o.marker);
    payloads.push(p);
    entries.push({ surface, declaring: `${pkg}:src/${name}.ts#${name}`, kind: 'function', coverage: { covered: true, payload: payloads.length - 1, export: name } });
  }
  const bytes = (s) => Buffer.from(s, 'utf8');
  entries.sort((x, y) => Buffer.compare(bytes(x.surface), bytes(y.surface)));
  return {
    header: { format: 2, producer: '@kiln/core 0.1.0', package: pkg, version: '1.4.2', requirements: { node: '20.19.0', features: ['cjs-payloads'] } },
    entries,
    payloads,
  };
}
