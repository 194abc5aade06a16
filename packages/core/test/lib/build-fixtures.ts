/**
 * Fixture libraries for the build and equivalence tests: real TypeScript packages written into temp
 * directories, and a reference build through the plain TypeScript compiler API (what `tsc` does,
 * comments included) to compare kiln's output against.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

export type Tree = Record<string, string>;

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `kiln-${prefix}-`));
}

export function writeTree(root: string, tree: Tree): void {
  for (const [rel, text] of Object.entries(tree)) {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
  }
}

/** Every file under a directory, relative POSIX paths, sorted. */
export function listTree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) walk(abs);
      else out.push(relative(root, abs).split(sep).join('/'));
    }
  };
  try {
    walk(root);
  } catch {
    return [];
  }
  return out.sort();
}

export function read(root: string, rel: string): string {
  return readFileSync(join(root, rel), 'utf8');
}

export const TSCONFIG_LIB = JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022'],
      types: [],
      strict: true,
      rootDir: 'src',
      outDir: 'dist',
      declaration: true,
      sourceMap: true,
      jsx: 'react-jsx',
      skipLibCheck: true,
    },
    include: ['src/**/*.ts', 'src/**/*.tsx'],
  },
  null,
  2,
);

/** An ESM library: package.json (`type: module`), tsconfig.lib.json, and the given sources. */
export function libTree(sources: Tree, extra: Tree = {}): Tree {
  return {
    'package.json': JSON.stringify({ name: '@fx/lib', version: '1.0.0', type: 'module', main: './dist/index.js', types: './dist/index.d.ts' }, null, 2),
    'tsconfig.lib.json': TSCONFIG_LIB,
    ...Object.fromEntries(Object.entries(sources).map(([k, v]) => [k.startsWith('src/') ? k : `src/${k}`, v])),
    ...extra,
  };
}

export function makeLib(prefix: string, sources: Tree, extra: Tree = {}): string {
  const root = tempDir(prefix);
  writeTree(root, libTree(sources, extra));
  return root;
}

/** JSX runtime types so `react-jsx` fixtures type-check without installing React. */
export const JSX_SHIM = `declare module 'react/jsx-runtime' {
  export const jsx: any;
  export const jsxs: any;
  export const Fragment: any;
}
declare namespace JSX {
  interface IntrinsicElements { [name: string]: any }
  type Element = any;
}
`;

/**
 * The reference build: the project compiled by the TypeScript compiler API exactly as `tsc -p` would
 * (comments kept, `removeComments: false`), into `outDir` (absolute).
 */
export function referenceBuild(projectRoot: string, outDir: string, tsconfig = 'tsconfig.lib.json'): { errors: number } {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(projectRoot, tsconfig), { outDir }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => {},
  })!;
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
  const errors = ts.getPreEmitDiagnostics(program).filter((d) => d.category === ts.DiagnosticCategory.Error).length;
  program.emit();
  return { errors };
}

export function cleanup(...dirs: string[]): void {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
