// The measurement workspace of tools/nx-mechanisms.mjs: one small library per target origin, all
// independent (no edges), each building a deterministic `dist/` with the tool its origin names.
//
//   origin        where the build target comes from                       what it runs
//   script        package.json scripts.build → nx:run-script              tsc -p tsconfig.lib.json
//   rc-pkg        package.json nx.targets.build, nx:run-commands          tsc -p tsconfig.lib.json (cwd projectRoot)
//   rc-proj       project.json, nx:run-commands with its own `env`        tsc … && a line writing $TOOL_FLAG to dist/env.txt
//   js-tsc        project.json, @nx/js:tsc                                the executor
//   vite-exec     project.json, @nx/vite:build (vite.config.ts, lib mode) the executor
//   rollup-exec   project.json, @nx/rollup:rollup (compiler tsc)          the executor
//   esbuild-exec  project.json, @nx/esbuild:esbuild                       the executor
//   vite-infer    inferred by @nx/vite/plugin from vite.config.ts        vite build
//   ts-infer      inferred by @nx/js/typescript from tsconfig.lib.json   tsc --build tsconfig.lib.json
//   rollup-infer  inferred by @nx/rollup/plugin from rollup.config.mjs    rollup -c rollup.config.mjs
//   none          no build target at all
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export const ORIGINS = ['script', 'rc-pkg', 'rc-proj', 'js-tsc', 'vite-exec', 'rollup-exec', 'esbuild-exec', 'vite-infer', 'ts-infer', 'rollup-infer', 'none'];
export const projectName = (origin) => `@m/${origin}`;
export const INFERRED = { 'vite-infer': '@nx/vite/plugin', 'ts-infer': '@nx/js/typescript', 'rollup-infer': '@nx/rollup/plugin' };

const json = (v) => JSON.stringify(v, null, 2) + '\n';

const SOURCE = `// a comment: the "comment edit" of the measurement changes this line
export function greet(name: string): string {
  return \`hello, \${name}\`;
}
export const answer = 42;
`;
const SOURCE_JS = SOURCE.replace('(name: string): string', '(name)');

const tsconfigLib = {
  extends: '../../tsconfig.base.json',
  compilerOptions: { rootDir: 'src', outDir: 'dist', declaration: true, types: [] },
  include: ['src/**/*.ts'],
};

function manifest(origin, extra = {}) {
  return {
    name: projectName(origin),
    version: '0.1.0',
    private: true,
    type: 'module',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
    ...extra,
  };
}

const viteConfig = `import { defineConfig } from 'vite';
export default defineConfig({
  root: import.meta.dirname,
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    minify: false,
    reportCompressedSize: false,
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'index' },
  },
});
`;

/** Files of the workspace, relative path → content. `nxVersion` goes into the root manifest. */
export function fixtureFiles({ devDependencies, origins = ORIGINS }) {
  const files = {};
  files['package.json'] = json({ name: 'mech-ws', version: '0.0.0', private: true, workspaces: ['libs/*'], devDependencies });
  files['tsconfig.base.json'] = json({
    compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, skipLibCheck: true, sourceMap: false },
  });
  files['.gitignore'] = 'node_modules\ndist\n.nx\n';
  for (const origin of origins) {
    const root = `libs/${origin}`;
    const p = (f) => `${root}/${f}`;
    files[p('src/index.ts')] = SOURCE;
    files[p('tsconfig.lib.json')] = json(tsconfigLib);
    switch (origin) {
      case 'script':
        files[p('package.json')] = json(manifest(origin, { scripts: { build: 'tsc -p tsconfig.lib.json' } }));
        break;
      case 'rc-pkg':
        files[p('package.json')] = json(manifest(origin, {
          nx: { targets: { build: { executor: 'nx:run-commands', options: { command: 'tsc -p tsconfig.lib.json', cwd: '{projectRoot}' }, outputs: ['{projectRoot}/dist'] } } },
        }));
        break;
      case 'rc-proj':
        files[p('package.json')] = json(manifest(origin));
        files[p('project.json')] = json({
          name: projectName(origin),
          targets: {
            build: {
              executor: 'nx:run-commands',
              outputs: ['{projectRoot}/dist'],
              options: {
                cwd: '{projectRoot}',
                command: `tsc -p tsconfig.lib.json && node -e "require('fs').writeFileSync('dist/env.txt', String(process.env.TOOL_FLAG))"`,
                env: { TOOL_FLAG: 'from-the-target' },
              },
            },
          },
        });
        break;
      case 'js-tsc':
        files[p('package.json')] = json(manifest(origin));
        files[p('project.json')] = json({
          name: projectName(origin),
          targets: {
            build: {
              executor: '@nx/js:tsc',
              outputs: ['{options.outputPath}'],
              options: { outputPath: `${root}/dist`, main: `${root}/src/index.ts`, tsConfig: `${root}/tsconfig.lib.json` },
            },
          },
        });
        break;
      case 'vite-exec':
        files[p('package.json')] = json(manifest(origin));
        files[p('vite.config.ts')] = viteConfig;
        files[p('project.json')] = json({
          name: projectName(origin),
          targets: { build: { executor: '@nx/vite:build', outputs: ['{options.outputPath}'], options: { outputPath: `${root}/dist`, configFile: `${root}/vite.config.ts` } } },
        });
        break;
      case 'rollup-exec':
        files[p('package.json')] = json(manifest(origin));
        files[p('project.json')] = json({
          name: projectName(origin),
          targets: {
            build: {
              executor: '@nx/rollup:rollup',
              outputs: ['{options.outputPath}'],
              options: { outputPath: `${root}/dist`, main: `${root}/src/index.ts`, tsConfig: `${root}/tsconfig.lib.json`, compiler: 'tsc', format: ['esm'], project: `${root}/package.json` },
            },
          },
        });
        break;
      case 'esbuild-exec':
        files[p('package.json')] = json(manifest(origin));
        files[p('project.json')] = json({
          name: projectName(origin),
          targets: {
            build: {
              executor: '@nx/esbuild:esbuild',
              outputs: ['{options.outputPath}'],
              options: { outputPath: `${root}/dist`, main: `${root}/src/index.ts`, tsConfig: `${root}/tsconfig.lib.json`, format: ['esm'], platform: 'node', bundle: true, skipTypeCheck: true },
            },
          },
        });
        break;
      case 'vite-infer':
        files[p('package.json')] = json(manifest(origin));
        files[p('vite.config.ts')] = viteConfig;
        break;
      case 'ts-infer':
        files[p('package.json')] = json(manifest(origin));
        // @nx/js/typescript makes a project of a tsconfig only next to a tsconfig.json.
        files[p('tsconfig.json')] = json({ extends: '../../tsconfig.base.json', files: [], references: [{ path: './tsconfig.lib.json' }] });
        break;
      case 'rollup-infer':
        delete files[p('src/index.ts')];
        delete files[p('tsconfig.lib.json')];
        files[p('src/index.js')] = SOURCE_JS;
        files[p('package.json')] = json(manifest(origin, { types: undefined, exports: { '.': './dist/index.js' } }));
        files[p('rollup.config.mjs')] = `export default { input: 'src/index.js', output: { dir: 'dist', format: 'es' } };\n`;
        break;
      case 'none':
        files[p('package.json')] = json(manifest(origin));
        break;
    }
  }
  return files;
}

/** The tool plugins' nx.json entries (scoped with `include` so each infers for its own library only). */
export function toolPlugins(origins = ORIGINS) {
  const wanted = new Set(origins.filter((o) => o in INFERRED).map((o) => INFERRED[o]));
  return [
    { plugin: '@nx/vite/plugin', include: ['libs/vite-infer/**/*'], options: { buildTargetName: 'build', testTargetName: 'vite:test', serveTargetName: 'serve', previewTargetName: 'preview', serveStaticTargetName: 'serve-static', typecheckTargetName: 'vite:typecheck' } },
    { plugin: '@nx/js/typescript', include: ['libs/ts-infer/**/*'], options: { typecheck: false, build: { targetName: 'build', configName: 'tsconfig.lib.json' } } },
    { plugin: '@nx/rollup/plugin', include: ['libs/rollup-infer/**/*'], options: { buildTargetName: 'build' } },
  ].filter((p) => wanted.has(p.plugin));
}

export async function writeFiles(root, files) {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), content);
  }
}
