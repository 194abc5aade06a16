/**
 * Which Nx and Node.js versions kiln runs on, checked where kiln meets a workspace: the plugin entry
 * (entry.cts, before any of kiln's ES modules is loaded) and the init generator (before nx.json is
 * touched). A workspace kiln cannot serve gets one message naming kiln, the version found and what is
 * supported — never an error from inside Nx.
 *
 * CommonJS, like the entry that loads it: it must load wherever Nx can load a plugin. No I/O at load
 * time; every check reads what it needs when called.
 *
 * What each bound rests on:
 *   - Nx 21 to 24: the majors tested on real installs (packages/nx/test/nx-versions.test.ts; Nx 20 is refused there too). Older majors
 *     are refused. A newer major is not refused (a plugin that stops a workspace after an Nx upgrade
 *     breaks every `nx` command): the plugin runs, init warns that it is untested.
 *   - Node.js ^20.19 || >=22.12: every Nx major loads executors and generators with require(); kiln's
 *     are ES modules, which require() loads from Node.js 20.19 / 22.12 on (and 23.0).
 */
import fs = require('node:fs');
import path = require('node:path');
import nodeModule = require('node:module');

/** The Nx majors kiln is tested on (inclusive). */
const NX_MAJORS = { min: 21, max: 24 } as const;
/** The Node.js versions whose require() loads ES modules: [major, minor] lower bounds per line. */
const NODE_RANGE = '^20.19.0 || >=22.12.0';

type Code = 'KILN_NODE_UNSUPPORTED' | 'KILN_NX_UNSUPPORTED';

interface Problem {
  code: Code;
  message: string;
}

interface Support {
  /** The version of the `nx` package the workspace resolves, when it could be read. */
  nx: string | undefined;
  node: string;
  /** Why kiln cannot run here; absent when it can. */
  problem?: Problem;
  /** A version kiln runs on but was not tested with (a newer Nx major). */
  untested?: string;
}

function parse(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** `@kiln/nx 0.1.0`: the package and version this code was installed as. */
function kilnName(): string {
  try {
    // dist/plugins/src/compat.cjs → the package's manifest.
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { name?: string; version?: string };
    return `${pkg.name ?? '@kiln/nx'} ${pkg.version ?? ''}`.trim();
  } catch {
    return '@kiln/nx';
  }
}

/** Whether kiln can run on this Node.js version (`process.versions.node` form). */
function nodeProblem(version: string): Problem | undefined {
  const v = parse(version);
  const ok = !!v && ((v[0] === 20 && v[1] >= 19) || (v[0] === 22 && v[1] >= 12) || v[0] >= 23);
  if (ok) return undefined;
  return { code: 'KILN_NODE_UNSUPPORTED', message: `${kilnName()} needs Node.js ${NODE_RANGE}; this is Node.js ${version}.` };
}

/** Whether kiln can run on this Nx version; a newer major than tested is `untested`, not a problem. */
function nxCheck(version: string): { problem?: Problem; untested?: string } {
  const v = parse(version);
  const supported = `Nx ${NX_MAJORS.min} to ${NX_MAJORS.max}`;
  if (!v || v[0] < NX_MAJORS.min) {
    return { problem: { code: 'KILN_NX_UNSUPPORTED', message: `${kilnName()} supports ${supported}; this workspace runs Nx ${version}.` } };
  }
  if (v[0] > NX_MAJORS.max) return { untested: `${kilnName()} is tested with ${supported}; this workspace runs Nx ${version}.` };
  return {};
}

/**
 * The version of `nx` a workspace runs: the one its root resolves (what `nx` on the command line
 * delegates to), else the one this package resolves (its peer). Undefined when neither can be read.
 */
function nxVersionOf(workspaceRoot: string): string | undefined {
  const from = [path.join(workspaceRoot, 'package.json'), __filename];
  for (const base of from) {
    try {
      const file = nodeModule.createRequire(base).resolve('nx/package.json');
      const version = (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown }).version;
      if (typeof version === 'string') return version;
    } catch {
      // not resolvable from there
    }
  }
  return undefined;
}

/**
 * Whether kiln can run in this workspace, on this Node.js. An Nx that cannot be found is no
 * problem here (whoever calls kiln is running one; its own errors are clearer than a guess).
 */
function checkSupport(workspaceRoot: string, nodeVersion: string = process.versions.node, nxVersion: string | undefined = nxVersionOf(workspaceRoot)): Support {
  const support: Support = { nx: nxVersion, node: nodeVersion };
  const node = nodeProblem(nodeVersion);
  if (node) return { ...support, problem: node };
  if (nxVersion === undefined) return support;
  const nx = nxCheck(nxVersion);
  return { ...support, ...nx };
}

/**
 * The problem as kiln's diagnostic: an error whose message is the formatted diagnostic (code, message,
 * hint from the registry), with no stack trace to distract from it. Falls back to code and message
 * when @kiln/core cannot be loaded (a Node.js too old for it).
 */
async function supportError(problem: Problem): Promise<Error> {
  try {
    const core = await import('@kiln/core');
    const d = core.diagnostic(problem.code, problem.message, { producer: 'nx' });
    const error = new core.KilnError(d);
    error.message = core.formatDiagnostic(d);
    error.stack = `KilnError: ${error.message}`;
    return error;
  } catch {
    const error = new Error(`${problem.code}: ${problem.message}`);
    error.stack = `Error: ${error.message}`;
    return error;
  }
}

const checked = new Map<string, Promise<Support>>();
/**
 * Resolves to the workspace's support (once per workspace root and process), or rejects with the one
 * error that says why kiln cannot run there.
 */
function assertSupported(workspaceRoot: string): Promise<Support> {
  let done = checked.get(workspaceRoot);
  if (!done) {
    done = (async () => {
      const support = checkSupport(workspaceRoot);
      if (support.problem) throw await supportError(support.problem);
      return support;
    })();
    checked.set(workspaceRoot, done);
  }
  return done;
}

export = { NX_MAJORS, NODE_RANGE, assertSupported, checkSupport, nodeProblem, nxCheck, nxVersionOf, supportError };
