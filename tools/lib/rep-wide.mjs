/**
 * The generated "wide" TypeScript package the representation benchmarks build (issue 15): MODULES
 * modules × 10 exports — functions with private helpers, module-level caches and counters, a shared
 * registry several modules write to, classes, constants, cross-module imports — plus the index
 * re-exporting them all. Shared by bench-representation-call.mjs (400 exports) and
 * bench-representation-size.mjs (several sizes), so both measure the same code.
 */
export const WIDE_PACKAGE = '@bench/wide';

/** MODULES modules × 10 exports: functions with private helpers and defaults, a class, constants, shared state. */
export function wideSources(MODULES = 40) {
  const files = {};
  files['src/shared/registry.ts'] = `
/** Module-level state shared by every module that registers (one registry for the package). */
const entries = new Map<string, number>();
export function record(key: string, n: number): number {
  const next = (entries.get(key) ?? 0) + n;
  entries.set(key, next);
  return next;
}
export function recorded(): number { return entries.size; }
`;
  files['src/shared/format.ts'] = `
export function pad(s: string, width = 8, fill = ' '): string { return s.length >= width ? s : fill.repeat(width - s.length) + s; }
export function clamp(n: number, lo: number, hi: number): number { return Math.min(hi, Math.max(lo, n)); }
`;
  const index = [];
  for (let m = 0; m < MODULES; m++) {
    const other = (m + 7) % MODULES;
    const uses = m % 3 === 0 ? `import { scale${other} } from './m${other}.js';\n` : '';
    files[`src/m${m}.ts`] = `${uses}import { record } from './shared/registry.js';
import { clamp, pad } from './shared/format.js';

let calls = 0;
const cache = new Map<number, number[]>();

/** A private helper: not exported, carried by the payloads that need it. */
function weights${m}(n: number): number[] {
  const hit = cache.get(n);
  if (hit) return hit;
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(((i * ${m + 3}) % 17) / 17);
  cache.set(n, out);
  return out;
}

export const NAME_${m} = 'module-${m}';
export const LIMITS_${m} = Object.freeze({ lo: -${m + 1}, hi: ${(m + 1) * 10}, tags: ['t${m}a', 't${m}b'] });

export function scale${m}(x: number, factor = ${m + 1}): number {
  calls++;
  return clamp(x * factor, LIMITS_${m}.lo * 100, LIMITS_${m}.hi * 100);
}

export function score${m}(xs: number[]): number {
  const w = weights${m}(xs.length);
  return xs.reduce((acc, x, i) => acc + x * w[i]!, 0)${m % 3 === 0 ? ` + scale${other}(1)` : ''};
}

export function label${m}(n: number, width = 6): string {
  record('label${m}', 1);
  return pad(String(n), width, '0') + '-' + NAME_${m};
}

export function parse${m}(s: string): number {
  const n = Number.parseFloat(s);
  if (Number.isNaN(n)) throw new RangeError(\`parse${m}: not a number: \${s}\`);
  return n;
}

export function stats${m}(): { calls: number; cached: number } { return { calls, cached: cache.size }; }

export class Acc${m} {
  private total = 0;
  constructor(readonly name: string = NAME_${m}) {}
  add(x: number): this { this.total += scale${m}(x, 1); return this; }
  get value(): number { return this.total; }
}

export function make${m}(name?: string): Acc${m} { return new Acc${m}(name); }

export function sum${m}(...xs: number[]): number { return xs.reduce((a, b) => a + b, 0) * ${m + 1}; }
`;
    index.push(`export * from './m${m}.js';`);
  }
  files['src/index.ts'] = index.join('\n') + '\n';
  return files;
}
