/**
 * The executor's shape (@nx/js style): schema.json describes every option and agrees with the
 * `BuildExecutorSchema` type in schema.d.ts; executors.json points at files that exist and declares
 * no custom hasher; option normalisation (workspace-relative paths, declared outputs) is correct.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
interface SchemaProperty {
  type: string;
  description?: string;
  default?: unknown;
  enum?: string[];
  items?: SchemaProperty;
}

/** The TypeScript type a JSON-schema property describes, spelled as schema.d.ts spells it. */
function tsTypeOf(p: SchemaProperty): string {
  if (p.enum) return p.enum.map((v) => `'${v}'`).join(' | ');
  if (p.type === 'array') {
    const item = tsTypeOf(p.items!);
    return item.includes('|') ? `(${item})[]` : `${item}[]`;
  }
  return p.type;
}

const schema = JSON.parse(readFileSync(join(REPO, 'executors/build/schema.json'), 'utf8')) as {
  version: number;
  properties: Record<string, SchemaProperty>;
  required?: string[];
  additionalProperties?: boolean;
};

describe('schema.json and schema.d.ts', () => {
  it('describes every option', () => {
    expect(Object.keys(schema.properties).sort()).toEqual(['deleteOutputPath', 'exclude', 'exports', 'formats', 'kilnKey', 'outputPath', 'representation', 'tsConfig']);
    for (const [name, p] of Object.entries(schema.properties)) {
      expect(p.description?.length ?? 0, name).toBeGreaterThan(40);
    }
    expect(schema.version).toBe(2);
    expect(schema.additionalProperties).toBe(false);
  });

  it('agrees with the BuildExecutorSchema type: names, types, optionality', () => {
    const file = join(REPO, 'executors/build/schema.d.ts');
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const iface = sf.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'BuildExecutorSchema');
    expect(iface).toBeDefined();
    const fromType = Object.fromEntries(
      iface!.members.filter(ts.isPropertySignature).map((m) => [(m.name as ts.Identifier).text, { type: m.type!.getText(sf), optional: !!m.questionToken }]),
    );
    const required = new Set(schema.required ?? []);
    const fromSchema = Object.fromEntries(
      Object.entries(schema.properties).map(([k, p]) => [k, { type: tsTypeOf(p), optional: !required.has(k) }]),
    );
    expect(fromType).toEqual(fromSchema);
  });
});

describe('executors.json', () => {
  const PKG = join(REPO, 'packages/nx');
  const manifest = JSON.parse(readFileSync(join(PKG, 'executors.json'), 'utf8')) as {
    executors: Record<string, Record<string, string>>;
  };
  it('maps build to the built implementation and the schema, with no custom hasher', () => {
    const build = manifest.executors.build!;
    expect(existsSync(join(PKG, build.implementation!)), build.implementation).toBe(true);
    expect(existsSync(join(PKG, build.schema!)), build.schema).toBe(true);
    for (const e of Object.values(manifest.executors)) expect(e).not.toHaveProperty('hasher');
    expect(readFileSync(join(REPO, 'executors/build/impl.ts'), 'utf8')).not.toMatch(/hasher\s*[:=]/i);
  });

  it('the implementation loads through require() (how Nx 24 loads executors) and exports the executor', async () => {
    const { createRequire } = await import('node:module');
    const mod = createRequire(import.meta.url)(join(PKG, manifest.executors.build!.implementation!)) as { default?: unknown };
    expect(typeof mod.default).toBe('function');
  });
});

describe('normalizeOptions', async () => {
  const { normalizeOptions, sharedOutputs } = (await import(join(REPO, 'packages/nx/dist/executors/build/lib/normalize-options.js'))) as typeof import('../lib/normalize-options.js');
  const { interpolateOutput, outputsCover } = (await import(join(REPO, 'packages/nx/dist/executors/lib/outputs.js'))) as typeof import('../../lib/outputs.js');
  const context = (outputs?: string[]) =>
    ({
      root: '/ws',
      cwd: '/ws',
      isVerbose: false,
      projectName: 'a',
      target: { executor: 'kiln:build', ...(outputs ? { outputs } : {}) },
      projectsConfigurations: { version: 2, projects: { a: { root: 'libs/a' } } },
      nxJsonConfiguration: {},
      projectGraph: { nodes: {}, dependencies: {} },
    }) as never;

  it('resolves workspace-relative paths and defaults', () => {
    expect(normalizeOptions({}, context())).toEqual({ workspaceRoot: '/ws', projectRoot: '/ws/libs/a', deleteOutputPath: true, exports: true, representation: true });
    expect(
      normalizeOptions(
        { tsConfig: 'libs/a/tsconfig.lib.json', outputPath: 'dist/libs/a', deleteOutputPath: false, kilnKey: 'k', formats: ['cjs', 'esm', 'cjs'], exports: false, representation: false, exclude: ['**/*.stories.ts'] },
        context(['{options.outputPath}']),
      ),
    ).toEqual({
      workspaceRoot: '/ws',
      projectRoot: '/ws/libs/a',
      tsConfig: 'tsconfig.lib.json',
      outDir: '/ws/dist/libs/a',
      deleteOutputPath: false,
      exports: false,
      representation: false,
      formats: ['cjs', 'esm'],
      exclude: ['**/*.stories.ts'],
      declaredOutputs: ['dist/libs/a'],
    });
  });

  it('interpolates declared outputs and decides coverage', () => {
    expect(interpolateOutput('{workspaceRoot}/dist/{projectRoot}', 'libs/a', 'a', {})).toBe('dist/libs/a');
    expect(interpolateOutput('{projectRoot}/dist/', 'libs/a', 'a', {})).toBe('libs/a/dist');
    expect(interpolateOutput('!{projectRoot}/dist/x', 'libs/a', 'a', {})).toBe('!libs/a/dist/x');
    expect(outputsCover(['libs/a/dist'], 'libs/a/dist')).toBe('yes');
    expect(outputsCover(['libs/a'], 'libs/a/dist')).toBe('yes');
    expect(outputsCover(['libs/a/dist'], 'libs/a/dist2')).toBe('no');
    expect(outputsCover(['libs/a/dist/**/*.js'], 'libs/a/dist')).toBe('unknown');
  });

  it("finds other targets' outputs in the build's directory (same, inside, containing; globs by their fixed part)", () => {
    const ctx = {
      root: '/ws',
      projectName: 'a',
      targetName: 'build',
      projectsConfigurations: {
        version: 2,
        projects: {
          a: {
            root: 'libs/a',
            targets: {
              build: { outputs: ['{projectRoot}/dist'] },
              typecheck: { outputs: ['{projectRoot}/dist/tsconfig.tsbuildinfo'] },
              bundle: { outputs: ['{options.outputPath}'], options: { outputPath: 'libs/a/dist' } },
              pack: { outputs: ['{projectRoot}'] },
              docs: { outputs: ['{projectRoot}/**/*.md', '{projectRoot}/docs'] },
              lint: { outputs: ['{options.outputFile}'] },
              types: { outputs: ['{projectRoot}/dist/**/*.d.ts'] },
            },
          },
          b: { root: 'libs/b', targets: { build: { outputs: ['{projectRoot}/dist', '{workspaceRoot}/libs/a/dist/b'] } } },
        },
      },
    } as never;
    expect(sharedOutputs(ctx, ['libs/a/dist']).map((s) => `${s.task} ${s.output}`)).toEqual([
      'a:typecheck libs/a/dist/tsconfig.tsbuildinfo',
      'a:bundle libs/a/dist',
      'a:pack libs/a',
      'a:types libs/a/dist/**/*.d.ts',
      'b:build libs/a/dist/b',
    ]);
    expect(sharedOutputs(ctx, ['libs/a/lib'])).toEqual([expect.objectContaining({ task: 'a:pack' })]);
  });

  it('refuses a context without the project', () => {
    expect(() => normalizeOptions({}, { ...(context() as object), projectName: 'nope' } as never)).toThrow(/no project configuration/);
  });
});
