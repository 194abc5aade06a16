/**
 * Fixture trees for the codegraph tests, written as real files into temp directories: a single package
 * (`geo`) with cross-module calls, references through imports, overloads, JSDoc links, a file outside
 * the tsconfig and a JavaScript file; a monorepo whose packages see each other only through a tsconfig
 * `paths` alias; and an npm workspace whose packages import each other by name (package `exports`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export type Tree = Record<string, string>;

export async function writeTree(dir: string, tree: Tree): Promise<string> {
  for (const [rel, text] of Object.entries(tree)) {
    const file = join(dir, rel);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  return dir;
}

const TSCONFIG = JSON.stringify(
  {
    compilerOptions: { target: 'ES2022', lib: ['ES2022'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: [] },
    include: ['src'],
  },
  null,
  2,
);

export const GEO: Tree = {
  'package.json': JSON.stringify({ name: '@fx/geo', version: '1.0.0', type: 'module', exports: { '.': './src/index.ts', './math': './src/math.ts' }, dependencies: { 'left-pad': '^1.3.0' } }, null, 2),
  'tsconfig.json': TSCONFIG,
  'src/math.ts': `/** Twice {@link PI2}'s half; see {@link triple}. */
export function double(n: number): number {
  return n * 2;
}

export function triple(n: number): number {
  return n * 3;
}

export const PI2 = Math.PI * 2;

export function fmt(x: number): string;
export function fmt(x: string): string;
export function fmt(x: number | string): string {
  return String(x);
}
`,
  'src/shapes.ts': `import { double, fmt, PI2 } from './math.js';
import type { Named } from './types.js';

export interface Shape {
  area(): number;
}

export class Circle implements Shape, Named {
  name = 'circle';
  constructor(readonly r: number) {}
  area(): number {
    return PI2 * double(this.r);
  }
  label(): string {
    return fmt(this.area());
  }
}

export function unit(): Shape {
  return new Circle(1);
}
`,
  'src/types.ts': `export interface Named {
  name: string;
}
`,
  'src/index.ts': `export * from './shapes.js';
export { triple } from './math.js';
import { unit } from './shapes.js';

export const registry = new Map<string, number>();
registry.set('unit', unit().area());
`,
  'src/legacy.js': `export function old(a) {
  return a + 1;
}
`,
  'test/geo.test.ts': `import { unit } from '../src/index.js';
export const checked = unit().area() > 3;
`,
};

/** Two packages that see each other only through a tsconfig `paths` alias: no dependency, no link. */
export const ALIAS_MONOREPO: Tree = {
  'package.json': JSON.stringify({ name: 'alias-mono', private: true }, null, 2),
  'packages/a/package.json': JSON.stringify({ name: '@mono/a', version: '0.0.0', type: 'module' }, null, 2),
  'packages/a/tsconfig.json': TSCONFIG,
  'packages/a/src/index.ts': `export function greet(name: string): string {
  return 'hello ' + name;
}

export const GREETING = 'hello';
`,
  'packages/b/package.json': JSON.stringify({ name: '@mono/b', version: '0.0.0', type: 'module' }, null, 2),
  'packages/b/tsconfig.json': JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        types: [],
        paths: { '@alias/a': ['../a/src/index.ts'] },
      },
      include: ['src'],
    },
    null,
    2,
  ),
  'packages/b/src/main.ts': `import { greet, GREETING } from '@alias/a';

export const hello = greet('b');
export const loud = GREETING.toUpperCase();
`,
};

/** An npm workspace: b imports a by package name; a's package.json `exports` names its source for types. */
export const NPM_WORKSPACE: Tree = {
  'package.json': JSON.stringify({ name: 'ws-root', private: true, workspaces: ['packages/*'] }, null, 2),
  'packages/a/package.json': JSON.stringify(
    { name: '@ws/a', version: '0.0.0', type: 'module', exports: { '.': { types: './src/index.ts', default: './dist/index.js' } } },
    null,
    2,
  ),
  'packages/a/tsconfig.json': TSCONFIG,
  'packages/a/src/index.ts': `export function greet(name: string): string {
  return 'hello ' + name;
}
`,
  'packages/b/package.json': JSON.stringify({ name: '@ws/b', version: '0.0.0', type: 'module', dependencies: { '@ws/a': '*' } }, null, 2),
  'packages/b/tsconfig.json': TSCONFIG,
  'packages/b/src/main.ts': `import { greet } from '@ws/a';

export const hello = greet('b');
`,
};
