/**
 * A generated Nx workspace of TypeScript libraries for the overhead benchmark (tools/bench-overhead.mjs).
 *
 * Deterministic (seeded PRNG): the same options give byte-identical trees. Realistic on purpose:
 *   - libraries in layers (depth = layers - 1 edges on the longest path); every library outside the
 *     bottom layer depends on one library of the layer just below (so the depth is real) and on 0-3
 *     more from any lower layer, skewed towards the bottom layers (fan-in: a few base libraries are
 *     imported by many);
 *   - 3 to 8 source files per library of varied size (a few lines to a few hundred), each with
 *     interfaces, type aliases, classes with private members, functions with explicit return types,
 *     private helpers, the odd `const enum` and inferred arrow constants, relative imports between the
 *     library's files and named imports from its workspace dependencies; `src/index.ts` re-exports;
 *   - npm workspaces, `package.json` with `exports`/`types` and `^` ranges on workspace dependencies,
 *     `tsconfig.lib.json` extending the library's `tsconfig.json`, which extends `tsconfig.base.json`;
 *   - a real-shaped `package-lock.json`: the fixture workspace's lock (nx 24.0.6, typescript 5.9.3, all
 *     of their dependencies, from `npm install --package-lock-only`) with this workspace's own packages.
 *
 * The tree is written with the *plain Nx* build target in every package.json (`nx.targets.build` with
 * the `@kiln/nx:build` executor; inputs/outputs come from nx.json `targetDefaults.build`). The kiln
 * variant removes that field and registers the plugin with its init generator.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SCOPE = '@bench';

/** mulberry32: small, fast, deterministic. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'strings', 'numbers', 'dates', 'money', 'ids', 'events', 'queue', 'cache', 'config', 'logging',
  'auth', 'users', 'orders', 'billing', 'catalog', 'search', 'pricing', 'inventory', 'shipping', 'tax',
  'reports', 'metrics', 'alerts', 'audit', 'mail', 'sms', 'push', 'files', 'images', 'video',
  'geo', 'routing', 'maps', 'calendar', 'booking', 'chat', 'feeds', 'comments', 'ratings', 'reviews',
  'cart', 'checkout', 'refunds', 'coupons', 'loyalty', 'ledger', 'payouts', 'fraud', 'kyc', 'risk',
  'forms', 'tables', 'charts', 'theme', 'icons', 'layout', 'router', 'store', 'effects', 'session',
  'i18n', 'format', 'parse', 'validate', 'schema', 'sync', 'import', 'export', 'admin', 'portal',
];

/** Layer sizes for `libs` libraries over `layers` layers: widening towards the top, like real graphs. */
function layerSizes(libs, layers) {
  const weights = Array.from({ length: layers }, (_, i) => 1 + i * 0.35);
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((w / total) * libs)));
  let rest = libs - sizes.reduce((a, b) => a + b, 0);
  for (let i = layers - 1; rest > 0; i = (i - 1 + layers) % layers, rest--) sizes[i]++;
  return sizes;
}

/**
 * The library graph: [{ index, name, dir, layer, deps: index[] }], dependencies always in lower layers.
 */
export function planLibraries({ libs = 60, layers = 7, seed = 42 } = {}) {
  const rnd = prng(seed);
  const sizes = layerSizes(libs, layers);
  const plan = [];
  const byLayer = [];
  let index = 0;
  for (let layer = 0; layer < layers; layer++) {
    byLayer[layer] = [];
    for (let j = 0; j < sizes[layer]; j++) {
      const word = WORDS[index % WORDS.length];
      const dir = `l${String(layer)}-${word}${index >= WORDS.length ? index : ''}`;
      const lib = { index, name: `${SCOPE}/${dir}`, dir, layer, deps: [] };
      if (layer > 0) {
        const below = byLayer[layer - 1];
        const deps = new Set([below[Math.floor(rnd() * below.length)]]);
        const extra = Math.floor(rnd() * 4); // 0-3 more
        for (let k = 0; k < extra; k++) {
          // Skewed towards low layers and, within a layer, towards its first libraries (fan-in).
          const l = Math.floor(Math.pow(rnd(), 1.8) * layer);
          const pool = byLayer[l];
          deps.add(pool[Math.floor(Math.pow(rnd(), 2) * pool.length)]);
        }
        lib.deps = [...deps].sort((a, b) => a - b);
      }
      byLayer[layer].push(index);
      plan.push(lib);
      index++;
    }
  }
  return plan;
}

/** Longest dependency path (in edges) and the largest fan-in. */
export function graphFacts(plan) {
  const depth = new Map();
  const depthOf = (i) => {
    if (depth.has(i)) return depth.get(i);
    const d = plan[i].deps.length ? 1 + Math.max(...plan[i].deps.map(depthOf)) : 0;
    depth.set(i, d);
    return d;
  };
  const fanIn = new Array(plan.length).fill(0);
  for (const l of plan) for (const d of l.deps) fanIn[d]++;
  return {
    libs: plan.length,
    edges: plan.reduce((a, l) => a + l.deps.length, 0),
    depth: Math.max(...plan.map((l) => depthOf(l.index))),
    maxFanIn: Math.max(...fanIn),
    layers: Math.max(...plan.map((l) => l.layer)) + 1,
  };
}

const id = (lib) => `L${lib.index}`;

/** The API every library's `src/core.ts` offers its dependents (uniform, so imports always type-check). */
function coreFile(lib, plan, rnd) {
  const L = id(lib);
  const deps = lib.deps.map((d) => plan[d]);
  const lines = [];
  for (const d of deps) {
    lines.push(`import { score${id(d)}, Registry${id(d)}, Mode${id(d)}, type Rec${id(d)} } from '${d.name}';`);
  }
  if (deps.length) lines.push('');
  lines.push(
    `/** A record of ${lib.dir}. */`,
    `export interface Rec${L} {`,
    `  id: number;`,
    `  label: string;`,
    `  tags: readonly string[];`,
    ...deps.slice(0, 2).map((d) => `  from${id(d)}?: Rec${id(d)};`),
    `}`,
    '',
    `export const enum Mode${L} {`,
    `  Off = 0,`,
    `  On = ${1 + Math.floor(rnd() * 5)},`,
    `}`,
    '',
    `function mix${L}(x: number, salt: number): number {`,
    `  let h = x ^ salt;`,
    `  for (let i = 0; i < ${2 + Math.floor(rnd() * 6)}; i++) h = (h * 31 + i) | 0;`,
    `  return h;`,
    `}`,
    '',
    `/** The score ${lib.dir} gives a value${deps.length ? ', combined with its dependencies\' scores' : ''}. */`,
    `export function score${L}(x: number): number {`,
    `  let s = mix${L}(x, ${Math.floor(rnd() * 1000)});`,
    ...deps.map((d) => `  s += score${id(d)}(x + ${Math.floor(rnd() * 9)}) % ${97 + Math.floor(rnd() * 50)};`),
    `  return s;`,
    `}`,
    '',
    `export class Registry${L} {`,
    `  private readonly entries = new Map<number, Rec${L}>();`,
    `  private hits = 0;`,
    ...(deps.length ? [`  protected readonly base = new Registry${id(deps[0])}();`] : []),
    '',
    `  add(rec: Rec${L}): this {`,
    `    this.entries.set(rec.id, rec);`,
    `    return this;`,
    `  }`,
    '',
    `  get(id: number): Rec${L} | undefined {`,
    `    this.hits++;`,
    `    return this.entries.get(id);`,
    `  }`,
    '',
    `  get size(): number {`,
    `    return this.entries.size${deps.length ? ' + this.base.size' : ''};`,
    `  }`,
    '',
    `  mode(): Mode${L} {`,
    `    return this.hits > ${Math.floor(rnd() * 10)} ? Mode${L}.On : Mode${L}.Off;`,
    `  }`,
    `}`,
    '',
    ...deps.map((d) => `export const uses${id(d)}On = (): boolean => Mode${id(d)}.On > 0;`),
  );
  return lines.join('\n') + '\n';
}

/** One of the library's other files: a mix of declarations, `size` of them. */
function bodyFile(lib, plan, fileIndex, size, rnd) {
  const L = id(lib);
  const F = `${L}_${fileIndex}`;
  const deps = lib.deps.map((d) => plan[d]);
  const useDep = deps.length && rnd() < 0.7 ? deps[Math.floor(rnd() * deps.length)] : undefined;
  const lines = [`import { score${L}, Registry${L}, type Rec${L} } from './core.js';`];
  if (useDep) lines.push(`import { score${id(useDep)} } from '${useDep.name}';`);
  lines.push('');
  const exported = [];
  for (let k = 0; k < size; k++) {
    const n = `${F}_${k}`;
    const kind = Math.floor(rnd() * 7);
    switch (kind) {
      case 0:
        lines.push(
          `/** Options of step ${k}. */`,
          `export interface Options${n} {`,
          `  limit: number;`,
          `  name?: string;`,
          `  flags: Record<string, boolean>;`,
          `}`,
          '',
        );
        break;
      case 1:
        lines.push(`export type Kind${n} = 'a${k}' | 'b${k}' | { custom: Rec${L}['label'] };`, '');
        break;
      case 2: {
        lines.push(
          `// a private helper: its body is not part of any surface`,
          `function helper${n}(values: readonly number[]): number {`,
          `  let total = 0;`,
          `  for (const v of values) {`,
          `    if (v % ${2 + Math.floor(rnd() * 5)} === 0) total += v;`,
          `    else total -= v >> 1;`,
          `  }`,
          `  return total;`,
          `}`,
          '',
          `export function compute${n}(input: number[]): number {`,
          `  const base = helper${n}(input);`,
          `  return base + score${L}(input.length)${useDep ? ` + score${id(useDep)}(base)` : ''};`,
          `}`,
          '',
        );
        exported.push(`compute${n}`);
        break;
      }
      case 3:
        lines.push(
          `export class Service${n} {`,
          `  #calls = 0;`,
          `  private readonly registry = new Registry${L}();`,
          '',
          `  constructor(private readonly prefix: string) {}`,
          '',
          `  describe(rec: Rec${L}): string {`,
          `    this.#calls++;`,
          `    this.registry.add(rec);`,
          `    return \`\${this.prefix}:\${rec.label}#\${rec.id} [\${rec.tags.join(',')}] (\${this.#calls})\`;`,
          `  }`,
          '',
          `  static create(): Service${n} {`,
          `    return new Service${n}('${lib.dir}/${k}');`,
          `  }`,
          `}`,
          '',
        );
        break;
      case 4:
        lines.push(
          `export const table${n} = [`,
          ...Array.from({ length: 2 + Math.floor(rnd() * 6) }, (_, i) => `  { key: 'k${i}', weight: ${Math.floor(rnd() * 100)} },`),
          `] as const;`,
          '',
          `export const pick${n} = (i: number) => table${n}[i % table${n}.length];`,
          '',
        );
        break;
      case 5:
        lines.push(
          `export async function load${n}(ids: number[], fetchOne: (id: number) => Promise<Rec${L} | null>): Promise<Rec${L}[]> {`,
          `  const out: Rec${L}[] = [];`,
          `  for (const id of ids) {`,
          `    const rec = await fetchOne(id);`,
          `    if (rec && rec.tags.length > ${Math.floor(rnd() * 3)}) out.push(rec);`,
          `  }`,
          `  return out.sort((a, b) => a.id - b.id);`,
          `}`,
          '',
        );
        break;
      default:
        lines.push(
          `export function format${n}(value: number, unit = '${['ms', 'kb', 'eur', 'px'][Math.floor(rnd() * 4)]}'): string {`,
          `  const rounded = Math.round(value * ${10 ** (1 + Math.floor(rnd() * 3))}) / ${10 ** (1 + Math.floor(rnd() * 3))};`,
          `  switch (true) {`,
          `    case rounded > 1e6:`,
          `      return \`\${(rounded / 1e6).toFixed(2)}M\${unit}\`;`,
          `    case rounded > 1e3:`,
          `      return \`\${(rounded / 1e3).toFixed(1)}k\${unit}\`;`,
          `    default:`,
          `      return \`\${rounded}\${unit}\`;`,
          `  }`,
          `}`,
          '',
        );
    }
  }
  return lines.join('\n');
}

/**
 * Writes the workspace into `dir` (which must exist and be empty). Returns facts about it.
 * @param {string} dir
 * @param {{ libs?: number, layers?: number, seed?: number, lockTemplate: string }} options
 */
export async function writeBenchWorkspace(dir, { libs = 60, layers = 7, seed = 42, lockTemplate }) {
  const plan = planLibraries({ libs, layers, seed });
  const rnd = prng(seed ^ 0x9e3779b9);
  let files = 0;
  let bytes = 0;
  const write = async (rel, text) => {
    await mkdir(join(dir, rel, '..'), { recursive: true });
    await writeFile(join(dir, rel), text);
    if (rel.endsWith('.ts')) {
      files++;
      bytes += Buffer.byteLength(text);
    }
  };
  const json = (v) => JSON.stringify(v, null, 2) + '\n';

  await write('package.json', json({
    name: 'bench-workspace',
    version: '0.0.0',
    private: true,
    type: 'module',
    workspaces: ['libs/*'],
    devDependencies: { nx: '24.0.6', typescript: '5.9.3' },
  }));
  await write('nx.json', json({
    $schema: './node_modules/nx/schemas/nx-schema.json',
    analytics: false,
    namedInputs: {
      default: ['{projectRoot}/**/*', 'sharedGlobals'],
      production: ['default', '!{projectRoot}/**/*.md', '!{projectRoot}/test/**/*', '!{projectRoot}/**/*.spec.ts'],
      sharedGlobals: ['{workspaceRoot}/tsconfig.base.json'],
    },
    targetDefaults: {
      build: { dependsOn: ['^build'], inputs: ['production', '^production'], outputs: ['{projectRoot}/dist'], cache: true },
    },
    defaultBase: 'main',
  }));
  await write('.gitignore', 'node_modules/\ndist/\n.nx/\n*.tsbuildinfo\n');
  await write('tsconfig.base.json', json({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022'], types: [],
      strict: true, declaration: true, sourceMap: true, skipLibCheck: true, forceConsistentCasingInFileNames: true,
    },
  }));

  for (const lib of plan) {
    const root = `libs/${lib.dir}`;
    const deps = lib.deps.map((d) => plan[d]);
    await write(`${root}/package.json`, json({
      name: lib.name,
      version: '0.1.0',
      type: 'module',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      ...(deps.length ? { dependencies: Object.fromEntries(deps.map((d) => [d.name, '^0.1.0'])) } : {}),
      nx: { targets: { build: { executor: '@kiln/nx:build', options: { tsConfig: `{projectRoot}/tsconfig.lib.json`, outputPath: '{projectRoot}/dist' } } } },
    }));
    await write(`${root}/tsconfig.json`, json({ extends: '../../tsconfig.base.json', include: ['src/**/*.ts'] }));
    await write(`${root}/tsconfig.lib.json`, json({
      extends: './tsconfig.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', declaration: true, sourceMap: true },
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.spec.ts'],
    }));
    await write(`${root}/README.md`, `# ${lib.name}\n\nGenerated for the kiln overhead benchmark.\n`);
    await write(`${root}/src/core.ts`, coreFile(lib, plan, rnd));
    const modules = ['core'];
    const extraFiles = 2 + Math.floor(rnd() * 6); // 3-8 files with core.ts (+ index.ts)
    for (let f = 0; f < extraFiles; f++) {
      const r = rnd();
      const size = r < 0.45 ? 1 + Math.floor(rnd() * 3) : r < 0.85 ? 4 + Math.floor(rnd() * 8) : 15 + Math.floor(rnd() * 25);
      const name = `part${f}`;
      await write(`${root}/src/${name}.ts`, bodyFile(lib, plan, f, size, rnd));
      modules.push(name);
    }
    await write(`${root}/src/index.ts`, modules.map((m) => `export * from './${m}.js';`).join('\n') + '\n');
  }

  // package-lock.json: the template's external packages, this workspace's own packages.
  const lock = JSON.parse(await readFile(lockTemplate, 'utf8'));
  const packages = {};
  packages[''] = { name: 'bench-workspace', version: '0.0.0', workspaces: ['libs/*'], devDependencies: { nx: '24.0.6', typescript: '5.9.3' } };
  for (const lib of plan) {
    const deps = lib.deps.map((d) => plan[d]);
    packages[`libs/${lib.dir}`] = { name: lib.name, version: '0.1.0', ...(deps.length ? { dependencies: Object.fromEntries(deps.map((d) => [d.name, '^0.1.0'])) } : {}) };
  }
  const external = Object.entries(lock.packages).filter(([k, v]) => k.startsWith('node_modules/') && !v.link);
  for (const lib of [...plan].sort((a, b) => a.name.localeCompare(b.name))) packages[`node_modules/${lib.name}`] = { resolved: `libs/${lib.dir}`, link: true };
  for (const [k, v] of external) packages[k] = v;
  const sorted = Object.fromEntries(Object.keys(packages).sort().map((k) => [k, packages[k]]));
  await write('package-lock.json', json({ name: 'bench-workspace', version: '0.0.0', lockfileVersion: 3, requires: true, packages: sorted }));

  return { plan, facts: { ...graphFacts(plan), files, bytes } };
}
