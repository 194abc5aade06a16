#!/usr/bin/env node
/**
 * Real-monorepo trial (issue 11, point 8): plain Nx vs kiln, side by side, on a checkout of a real Nx
 * monorepo. One run:
 *   1. clones the checkout twice (plain, kiln) into a work directory, optionally narrows its pnpm
 *      workspace to some packages (--workspace) and pins an Nx version in both (--nx);
 *   2. installs both (pnpm or npm, from the checkout's lockfile); packs kiln (npm pack of @kiln/core and
 *      @kiln/nx) and installs the tarballs at the kiln clone's root, then `nx g @kiln/nx:init`;
 *   3. for each step runs `nx run-many -t build` in both and records wall time, executed and cached
 *      tasks:  cold (nx reset first) · fully cached · comment edit in the base package · private body
 *      edit (a non-exported function's body) · signature edit (an exported function gains an optional
 *      parameter). The edits are cumulative and identical in both clones;
 *   4. checks every kiln cache hit of an edit step with the independent judge
 *      (tools/lib/token-judge.mjs): the restored outputs against a fresh build of the same sources —
 *      plain's build of that task in the same step when plain executed it, otherwise (or when that
 *      comparison differs) a `--skip-nx-cache` build of the task in the kiln clone;
 *   5. times `nx show projects` (the project graph, daemon off) right after a one-file edit in the base
 *      package, plain vs kiln, --reps runs each (median), as a ratio — beside two floors run in the plain
 *      clone with one more plugin: a no-op plugin, and one that loads TypeScript and parses the edited
 *      file (what any semantic plugin must do in the fresh process a daemon-off graph build gets) —
 *      and again with the daemon on;
 *   6. prints a markdown table (and --json FILE writes everything).
 *
 * Usage: node tools/trial-monorepo.mjs --repo CHECKOUT --base packages/form-core
 *          [--workspace packages/a,packages/b] [--nx 24.0.6] [--path-prepend DIR] [--parallel 2]
 *          [--exclude 'examples/**'] [--reps 3] [--work DIR] [--json FILE] [--keep] [--install-only]
 *          [--pnpm-setting key=value ...] [--steps cold,cached,comment,private,signature,graph] [--resume]
 * --repo is a git repository (a work tree or a bare mirror, e.g. the one the `fetch` tool makes);
 * --path-prepend puts a directory first on PATH for the trial workspace's commands only (a Node and
 * a pnpm of the versions the checkout asks for: .nvmrc, packageManager). Nothing of the checkout is
 * written into this repository. Requires `npm run build`.
 *
 * kiln goes in as the README says: the self-contained @kiln/nx tarball (tools/pack.mjs vendors
 * @kiln/core), one `pnpm add -w -D` / `npm install -D`, no overrides.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import ts from "typescript";
import { judgeOutputs } from "./lib/token-judge.mjs";
import {
  cleanEnv,
  exec,
  KILN_ROOT,
  parseTaskLines,
} from "./testing/workspace.mjs";

const { values: args } = parseArgs({
  options: {
    repo: { type: "string" },
    base: { type: "string" },
    workspace: { type: "string" },
    nx: { type: "string" },
    "path-prepend": { type: "string" },
    parallel: { type: "string", default: "2" },
    exclude: { type: "string" },
    reps: { type: "string", default: "3" },
    work: { type: "string" },
    json: { type: "string" },
    keep: { type: "boolean", default: false },
    "timeout-min": { type: "string", default: "30" },
    "install-only": { type: "boolean", default: false },
    "pnpm-setting": { type: "string", multiple: true, default: [] },
    steps: { type: "string" },
    resume: { type: "boolean", default: false },
  },
});
if (!args.repo || !args.base) {
  console.error(
    "usage: node tools/trial-monorepo.mjs --repo CHECKOUT --base PACKAGE_DIR [options] (see the header)",
  );
  process.exit(2);
}
const TIMEOUT = Number(args["timeout-min"]) * 60_000;
const REPS = Number(args.reps);
const started = Date.now();
const t0 = () =>
  `${new Date().toISOString().slice(11, 19)} +${((Date.now() - started) / 60000).toFixed(1)}m`;
const say = (msg) => console.error(`[${t0()}] ${msg}`);

const work = args.work
  ? resolve(args.work)
  : await mkdtemp(join(os.tmpdir(), "kiln-trial-"));
await mkdir(work, { recursive: true });
const logDir = join(work, "logs");
await mkdir(logDir, { recursive: true });
say(`work directory ${work}`);

const env = cleanEnv({
  PATH: args["path-prepend"]
    ? `${resolve(args["path-prepend"])}:${process.env.PATH}`
    : process.env.PATH,
  NX_DAEMON: "false",
  NX_NO_CLOUD: "true",
  NX_TUI: "false",
  NX_DEFAULT_OUTPUT_STYLE: "static",
  NX_SKIP_LOG_GROUPING: "true",
  CI: "true",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
});

let logN = 0;
async function run(cwd, cmd, argv, { allowFailure = false, label, extraEnv } = {}) {
  const r = await exec(cmd, argv, { cwd, env: extraEnv ? { ...env, ...extraEnv } : env, timeoutMs: TIMEOUT });
  const file = join(
    logDir,
    `${String(++logN).padStart(3, "0")}-${(label ?? cmd).replace(/[^\w.-]+/g, "_")}.log`,
  );
  await writeFile(
    file,
    `$ (${cwd}) ${cmd} ${argv.join(" ")}\nexit ${r.code} in ${r.durationMs} ms${r.timedOut ? " (TIMED OUT)" : ""}\n\n${r.output}`,
  );
  if ((r.code !== 0 || r.timedOut) && !allowFailure) {
    throw new Error(
      `${cmd} ${argv.join(" ")} in ${cwd} failed (exit ${r.code}${r.timedOut ? ", timed out" : ""}); log ${file}\n${r.output.slice(-3000)}`,
    );
  }
  return { ...r, log: file };
}

// ---------------------------------------------------------------------------------------------
// 1. Two clones

const clones = { plain: join(work, "plain"), kiln: join(work, "kiln") };
const pkgManagerOf = (root) => {
  const pm =
    JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
      .packageManager ?? "";
  if (pm.startsWith("pnpm") || existsSync(join(root, "pnpm-lock.yaml")))
    return "pnpm";
  return "npm";
};

for (const [side, dir] of Object.entries(clones)) {
  if (existsSync(join(dir, "package.json"))) {
    say(`${side}: reusing clone ${dir}`);
    continue;
  }
  say(`${side}: cloning ${args.repo}`);
  await run(work, "git", ["clone", "--quiet", resolve(args.repo), dir], {
    label: `clone-${side}`,
  });
  if (args.workspace && existsSync(join(dir, "pnpm-workspace.yaml"))) {
    const keep = args.workspace
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const y = readFileSync(join(dir, "pnpm-workspace.yaml"), "utf8");
    const lines = y.split("\n");
    const i = lines.findIndex((l) => /^packages:\s*$/.test(l));
    if (i < 0) throw new Error("pnpm-workspace.yaml has no packages: list");
    let j = i + 1;
    while (j < lines.length && /^\s+-|^\s*$/.test(lines[j])) j++;
    lines.splice(i + 1, j - i - 1, ...keep.map((k) => `  - ${k}`), "");
    await writeFile(join(dir, "pnpm-workspace.yaml"), lines.join("\n"));
  }
  if (args.nx) {
    const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const field of ["dependencies", "devDependencies"]) {
      for (const name of Object.keys(pj[field] ?? {}))
        if (name === "nx" || name.startsWith("@nx/")) pj[field][name] = args.nx;
    }
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify(pj, null, 2) + "\n",
    );
  }
}
// --pnpm-setting key=value: a top-level pnpm-workspace.yaml setting, the same in both clones (e.g.
// trustPolicy=off where the registry's metadata lacks the "time" field the policy checks).
for (const dir of Object.values(clones)) {
  const file = join(dir, "pnpm-workspace.yaml");
  if (!args["pnpm-setting"].length || !existsSync(file)) continue;
  let y = readFileSync(file, "utf8");
  for (const kv of args["pnpm-setting"]) {
    const [key, ...rest] = kv.split("=");
    const line = `${key}: ${rest.join("=")}`;
    const re = new RegExp(`^${key}:.*$`, "m");
    y = re.test(y)
      ? y.replace(re, line)
      : `${y.replace(/\n*$/, "\n")}${line}\n`;
  }
  await writeFile(file, y);
}
const pm = pkgManagerOf(clones.plain);
const commit = (
  await run(clones.plain, "git", ["rev-parse", "HEAD"])
).stdout.trim();
const nodeVersion = (await run(clones.plain, "node", ["-v"])).stdout.trim();
const pmVersion = (await run(clones.plain, pm, ["-v"])).stdout.trim();
say(`checkout ${commit.slice(0, 9)}, node ${nodeVersion}, ${pm} ${pmVersion}`);

// ---------------------------------------------------------------------------------------------
// 2. Install; kiln from its packed tarballs, then init

const installArgs =
  pm === "pnpm"
    ? ["install", "--no-frozen-lockfile", "--config.confirmModulesPurge=false"]
    : ["install", "--no-audit", "--no-fund"];
for (const [side, dir] of Object.entries(clones)) {
  if (existsSync(join(dir, "node_modules", "nx", "package.json"))) continue;
  say(`${side}: ${pm} install (this is the long part on a cold store)`);
  const r = await run(dir, pm, installArgs, { label: `install-${side}` });
  say(`${side}: installed in ${(r.durationMs / 1000).toFixed(0)} s`);
}
if (args["install-only"]) {
  say("--install-only: stopping after the installs");
  process.exit(0);
}
const nxPkg = JSON.parse(
  readFileSync(join(clones.plain, "node_modules/nx/package.json"), "utf8"),
);
const nxVersion = nxPkg.version;
const NX = join(
  "node_modules/nx",
  typeof nxPkg.bin === "string" ? nxPkg.bin : nxPkg.bin.nx,
); // bin/nx.js before Nx 24, dist/bin/nx.js after

let initOutput = "";
if (!existsSync(join(clones.kiln, "node_modules/@kiln/nx/package.json"))) {
  const tgzDir = join(work, "tgz");
  await mkdir(tgzDir, { recursive: true });
  say("packing @kiln/nx (self-contained: tools/pack.mjs)");
  const packed = await exec("node", [join(KILN_ROOT, "tools/pack.mjs"), tgzDir], {
    cwd: KILN_ROOT,
    timeoutMs: 300_000,
  });
  if (packed.code !== 0)
    throw new Error(`tools/pack.mjs failed:\n${packed.output.slice(-3000)}`);
  const tgz = Object.fromEntries(
    packed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map((p) => [p.name, p.file]),
  );
  const adds = [tgz["@kiln/nx"]]; // its only peer is nx, which the workspace has
  // The README's one command per package manager (no overrides).
  const addArgs =
    pm === "pnpm"
      ? ["add", "-w", "-D", ...adds]
      : ["install", "-D", "--no-audit", "--no-fund", ...adds];
  say(`kiln: ${pm} ${addArgs.map((a) => a.split("/").pop()).join(" ")}`);
  await run(clones.kiln, pm, addArgs, { label: "install-kiln-tarballs" });
  say("kiln: nx g @kiln/nx:init");
  const init = await run(
    clones.kiln,
    "node",
    [NX, "g", "@kiln/nx:init", "--no-interactive"],
    { label: "init" },
  );
  initOutput = init.output;
  await writeFile(join(work, "init-output.txt"), initOutput);
} else if (existsSync(join(work, "init-output.txt"))) {
  initOutput = readFileSync(join(work, "init-output.txt"), "utf8");
}
const initWarnings = initOutput
  .split("\n")
  .filter((l) => /kiln:/.test(l) && /warn|apply over|need/i.test(l))
  .map((l) => l.trim());

// ---------------------------------------------------------------------------------------------
// 3. The edits (found with the TypeScript parser in the base package's sources)

const baseDir = args.base.replace(/\/+$/, "");
function findEditTargets(root) {
  const srcRoot = join(root, baseDir, "src");
  const files = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (
        /\.(ts|tsx)$/.test(e.name) &&
        !/\.d\.ts$|\.test\.|\.spec\./.test(e.name)
      )
        files.push(p);
    }
  };
  walk(srcRoot);
  files.sort();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const sf = ts.createSourceFile(
      file,
      text,
      ts.ScriptTarget.Latest,
      true,
      file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    const fns = sf.statements.filter(
      (s) => ts.isFunctionDeclaration(s) && s.body && s.name,
    );
    const exported = (s) =>
      (ts.getCombinedModifierFlags(s) & ts.ModifierFlags.Export) !== 0;
    const count = (name) => text.split(name).length - 1;
    const overloaded = (name) =>
      sf.statements.filter(
        (s) => ts.isFunctionDeclaration(s) && s.name?.text === name,
      ).length > 1;
    const priv = fns.find(
      (s) => !exported(s) && count(s.name.text) > 1 && !overloaded(s.name.text),
    );
    const pub = fns.find(
      (s) =>
        exported(s) &&
        !overloaded(s.name.text) &&
        s.parameters.length > 0 &&
        !s.parameters.some((p) => p.dotDotDotToken),
    );
    if (priv && pub) {
      return {
        file: relative(root, file),
        privateName: priv.name.text,
        exportedName: pub.name.text,
      };
    }
  }
  throw new Error(
    `no file in ${srcRoot} has both a non-exported function (used) and an exported function with parameters`,
  );
}
function locate(text, file, name) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const fn = sf.statements.find(
    (s) => ts.isFunctionDeclaration(s) && s.body && s.name?.text === name,
  );
  if (!fn) throw new Error(`${name} not found in ${file}`);
  return fn;
}
const EDITS = {
  comment: (text) =>
    `${text.replace(/\n*$/, "\n")}// kiln trial: a comment edit\n`,
  private: (text, t) => {
    const fn = locate(text, t.file, t.privateName);
    const at = fn.body.getStart() + 1;
    return `${text.slice(0, at)}\n  if ((globalThis as any).__kilnTrial) console.log('kiln trial: private body edit')${text.slice(at)}`;
  },
  signature: (text, t) => {
    const fn = locate(text, t.file, t.exportedName);
    const last = fn.parameters[fn.parameters.length - 1];
    return `${text.slice(0, last.end)}, _kilnTrial?: unknown${text.slice(last.end)}`;
  },
};
const targets = findEditTargets(clones.plain);
say(
  `edits in ${targets.file}: private body of ${targets.privateName}(), signature of ${targets.exportedName}()`,
);
async function applyEdit(kind) {
  for (const dir of Object.values(clones)) {
    const f = join(dir, targets.file);
    await writeFile(f, EDITS[kind](readFileSync(f, "utf8"), targets));
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Builds

const buildArgs = [
  NX,
  "run-many",
  "-t",
  "build",
  `--parallel=${args.parallel}`,
];
if (args.exclude) buildArgs.push(`--exclude=${args.exclude}`);

async function build(side, label) {
  say(`${side}: ${label}: nx run-many -t build …`);
  const r = await run(clones[side], "node", buildArgs, {
    label: `${label}-${side}`,
  });
  const statuses = parseTaskLines(r.stdout);
  const ids = Object.keys(statuses).sort();
  const executed = ids.filter((id) => statuses[id] === "executed");
  const cached = ids.filter((id) => statuses[id] !== "executed");
  say(
    `${side}: ${label}: ${(r.durationMs / 1000).toFixed(1)} s, ${executed.length} executed, ${cached.length} cached of ${ids.length}`,
  );
  return {
    ms: r.durationMs,
    statuses,
    executed,
    cached,
    total: ids.length,
    log: r.log,
  };
}

// Output directories of each build task (from plain's resolved project configuration).
const outputsCache = new Map();
async function outputsOf(project) {
  if (outputsCache.has(project)) return outputsCache.get(project);
  const r = await run(
    clones.plain,
    "node",
    [NX, "show", "project", project, "--json"],
    { label: `show-${project}` },
  );
  const cfg = JSON.parse(r.stdout.slice(r.stdout.indexOf("{")));
  const outs = (cfg.targets?.build?.outputs ?? [])
    .filter((o) => !/[*?]/.test(o))
    .map((o) =>
      o
        .replace("{projectRoot}", cfg.root)
        .replace("{workspaceRoot}/", "")
        .replace(/^\.\//, ""),
    );
  outputsCache.set(project, outs);
  return outs;
}
async function judgeDirs(rootA, rootB, outs) {
  const result = { equal: true, compared: 0, differences: [] };
  let any = false;
  for (const o of outs) {
    const a = join(rootA, o);
    const b = join(rootB, o);
    if (!existsSync(a) && !existsSync(b)) continue;
    any = true;
    if (!existsSync(a) || !existsSync(b) || !statSync(a).isDirectory()) {
      result.equal = false;
      result.differences.push(
        `${o}: present on one side only (or not a directory)`,
      );
      continue;
    }
    const j = await judgeOutputs(a, b);
    result.compared += j.compared;
    if (!j.equal) result.equal = false;
    result.differences.push(...j.differences.map((d) => `${o}/${d}`));
  }
  if (!any)
    return {
      equal: false,
      compared: 0,
      differences: ["no output directory on either side"],
    };
  return result;
}
/** Every kiln hit of an edit step against a fresh build of the same sources. */
async function judgeHits(step, plainRun, kilnRun) {
  const verdicts = [];
  for (const id of kilnRun.cached) {
    const project = id.slice(0, id.lastIndexOf(":"));
    const outs = await outputsOf(project);
    let via = "plain";
    let j = null;
    if (plainRun.statuses[id] === "executed")
      j = await judgeDirs(clones.plain, clones.kiln, outs);
    if (!j || !j.equal) {
      // A fresh build in the kiln clone itself (rules out differences between the two checkouts).
      via = "fresh";
      const keep = join(
        work,
        "restored",
        step,
        project.replace(/[^\w.-]+/g, "_"),
      );
      await rm(keep, { recursive: true, force: true });
      for (const o of outs)
        if (existsSync(join(clones.kiln, o)))
          await cp(join(clones.kiln, o), join(keep, o), { recursive: true });
      say(`kiln: ${step}: fresh build of ${project} to judge its hit`);
      await run(
        clones.kiln,
        "node",
        [NX, "run", id, "--skip-nx-cache", "--excludeTaskDependencies"],
        { label: `fresh-${step}-${project}` },
      );
      j = await judgeDirs(keep, clones.kiln, outs);
    }
    verdicts.push({
      task: id,
      via,
      equal: j.equal,
      compared: j.compared,
      differences: j.differences.slice(0, 5),
    });
    say(
      `judge: ${step}: ${id} ${j.equal ? "EQUIVALENT" : "DIFFERENT"} (${j.compared} files, reference: ${via})`,
    );
  }
  return verdicts;
}

// Completed steps are saved to <work>/state.json after each one; --resume skips them (the clones keep
// their edits and Nx caches), --steps picks which steps run (default: all, in this order).
const STEP_NAMES = [
  "cold",
  "cached",
  "comment",
  "private",
  "signature",
  "graph",
];
const wanted = args.steps
  ? args.steps.split(",").map((x) => x.trim())
  : STEP_NAMES;
for (const w of wanted)
  if (!STEP_NAMES.includes(w))
    throw new Error(`--steps: unknown step ${w} (${STEP_NAMES.join(", ")})`);
const stateFile = join(work, "state.json");
const state =
  args.resume && existsSync(stateFile)
    ? JSON.parse(readFileSync(stateFile, "utf8"))
    : { steps: [], graph: { plain: [], kiln: [] } };
const steps = state.steps;
const graph = state.graph;
const saveState = () => writeFile(stateFile, JSON.stringify(state, null, 2));
const done = (name) =>
  steps.some((x) => x.name === name) ||
  (name === "graph" && graph.plain.length > 0);
async function step(name, label, prepare) {
  if (!wanted.includes(name)) return;
  if (done(name)) {
    say(`${name}: done in an earlier run (--resume), skipped`);
    return;
  }
  if (prepare) await prepare();
  let plainRun = await build("plain", name);
  let kilnRun = await build("kiln", name);
  if (name === "cached") {
    // One run is noise on a shared machine, and the first fully cached run after a build may still be
    // settling kiln's graph memo: --reps more runs, interleaved, and the median of each side.
    const more = { plain: [plainRun], kiln: [kilnRun] };
    for (let i = 0; i < REPS; i++) for (const side of ["plain", "kiln"]) more[side].push(await build(side, `${name}-${i + 2}`));
    const mid = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[runs.length >> 1];
    plainRun = { ...mid(more.plain), runs: more.plain.map((r) => r.ms) };
    kilnRun = { ...mid(more.kiln), runs: more.kiln.map((r) => r.ms) };
  }
  const verdicts =
    name === "cold" || name === "cached"
      ? []
      : await judgeHits(name, plainRun, kilnRun);
  steps.push({ name, label, plain: plainRun, kiln: kilnRun, verdicts });
  await saveState();
}

const ERRORS = [];
try {
  await step("cold", "cold build (cache cleared)", async () => {
    for (const dir of Object.values(clones))
      await run(dir, "node", [NX, "reset"], { label: "reset" });
  });
  await step("cached", "fully cached run");
  await step("comment", `comment edit in ${baseDir}`, () =>
    applyEdit("comment"),
  );
  await step("private", `private body edit (${targets.privateName})`, () =>
    applyEdit("private"),
  );
  await step("signature", `signature edit (${targets.exportedName})`, () =>
    applyEdit("signature"),
  );
} catch (e) {
  ERRORS.push(String(e.message ?? e));
  say(`STOPPED: ${String(e.message ?? e).split("\n")[0]}`);
}

// ---------------------------------------------------------------------------------------------
// 5. Project graph after a one-file edit (a new comment line each time, so nothing is memoised)

// Two floors, run in the plain clone with one more plugin registered for the run (nx.json restored
// after each): `noop` answers `{}` for every package.json (what any installed plugin costs: Nx 24 starts
// a plugin worker process for it), `ts` also loads the workspace's TypeScript (with the compile cache
// Nx enables in plugin workers) and parses the edited file — the least any plugin that reads what code
// means must do after an edit, in the fresh process a graph build without the daemon gets.
const FLOOR_PLUGIN = "kiln-trial-floor-plugin";
const FLOOR_SOURCE = `// kiln trial: the floor of a plugin (tools/trial-monorepo.mjs)
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
exports.createNodesV2 = ["**/package.json", async (files, _options, context) => {
  if (process.env.KILN_TRIAL_FLOOR === "ts") {
    const ts = require(require.resolve("typescript", { paths: [context.workspaceRoot] }));
    const f = join(context.workspaceRoot, ${JSON.stringify(targets.file)});
    ts.createSourceFile(f, readFileSync(f, "utf8"), ts.ScriptTarget.Latest, true);
  }
  return files.map((f) => [f, {}]);
}];
`;
async function withFloorPlugin(fn) {
  const dir = clones.plain;
  await mkdir(join(dir, "node_modules", FLOOR_PLUGIN), { recursive: true });
  await writeFile(join(dir, "node_modules", FLOOR_PLUGIN, "package.json"), JSON.stringify({ name: FLOOR_PLUGIN, version: "0.0.0", main: "index.cjs" }));
  await writeFile(join(dir, "node_modules", FLOOR_PLUGIN, "index.cjs"), FLOOR_SOURCE);
  const nxJsonPath = join(dir, "nx.json");
  const original = readFileSync(nxJsonPath, "utf8");
  const nxJson = JSON.parse(original);
  await writeFile(nxJsonPath, JSON.stringify({ ...nxJson, plugins: [...(nxJson.plugins ?? []), FLOOR_PLUGIN] }, null, 2));
  try {
    return await fn();
  } finally {
    await writeFile(nxJsonPath, original);
  }
}

if (ERRORS.length === 0 && wanted.includes("graph") && !done("graph")) {
  try {
    graph.floor = { noop: [], ts: [] };
    for (let i = 0; i < REPS; i++) {
      for (const side of ["plain", "noop", "ts", "kiln"]) {
        const dir = side === "kiln" ? clones.kiln : clones.plain;
        const f = join(dir, targets.file);
        await writeFile(
          f,
          `${readFileSync(f, "utf8")}// kiln trial: graph edit ${Date.now()}\n`,
        );
        const once = () => run(dir, "node", [NX, "show", "projects"], {
          label: `graph-${side}-${i}`,
          ...(side === "ts" ? { extraEnv: { KILN_TRIAL_FLOOR: "ts" } } : {}),
        });
        const r = side === "noop" || side === "ts" ? await withFloorPlugin(once) : await once();
        (side === "plain" || side === "kiln" ? graph[side] : graph.floor[side]).push(r.durationMs);
        say(`${side}: nx show projects after an edit: ${r.durationMs} ms`);
      }
    }
    // The same with the Nx daemon on (a developer's machine; CI and containers run without it): the
    // daemon recomputes the graph after the edit, with the plugin worker and kiln's store already warm.
    graph.daemon = { plain: [], kiln: [] };
    const daemonEnv = { NX_DAEMON: "true" };
    for (const side of ["plain", "kiln"])
      await run(clones[side], "node", [NX, "show", "projects"], { label: `graph-daemon-start-${side}`, extraEnv: daemonEnv });
    for (let i = 0; i < REPS; i++) {
      for (const side of ["plain", "kiln"]) {
        const f = join(clones[side], targets.file);
        await writeFile(f, `${readFileSync(f, "utf8")}// kiln trial: graph edit (daemon) ${Date.now()}\n`);
        await new Promise((r) => setTimeout(r, 1500)); // let the daemon's watcher see the edit
        const r = await run(clones[side], "node", [NX, "show", "projects"], { label: `graph-daemon-${side}-${i}`, extraEnv: daemonEnv });
        graph.daemon[side].push(r.durationMs);
        say(`${side}: nx show projects after an edit, daemon on: ${r.durationMs} ms`);
      }
    }
    for (const side of ["plain", "kiln"])
      await run(clones[side], "node", [NX, "daemon", "--stop"], { label: `graph-daemon-stop-${side}`, extraEnv: daemonEnv, allowFailure: true });
    await saveState();
  } catch (e) {
    ERRORS.push(String(e.message ?? e));
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

// ---------------------------------------------------------------------------------------------
// 6. Report

const sec = (ms) => `${(ms / 1000).toFixed(1)} s`;
const cell = (r) =>
  `${sec(r.ms)} · ${r.executed.length} run / ${r.cached.length} cached`;
const short = (ids) =>
  ids
    .map((id) => id.replace(/:build$/, "").replace(/^@[^/]+\//, ""))
    .join(", ");
const lines = [];
lines.push(
  `| step | plain Nx | kiln | kiln / plain | kiln rebuilt | judge (kiln hits vs fresh build) |`,
);
lines.push(`|---|---|---|---|---|---|`);
for (const s of steps) {
  const judged = s.verdicts.length
    ? `${s.verdicts.filter((v) => v.equal).length}/${s.verdicts.length} equivalent`
    : s.name === "cached"
      ? `n/a (unchanged sources); median of ${s.plain.runs?.length ?? 1} interleaved runs`
      : s.name === "cold"
        ? "n/a"
        : "no hits";
  lines.push(
    `| ${s.label} | ${cell(s.plain)} | ${cell(s.kiln)} | ${(s.kiln.ms / s.plain.ms).toFixed(2)}× | ${s.kiln.executed.length ? short(s.kiln.executed) : "—"} | ${judged} |`,
  );
}
if (graph.plain.length) {
  const p = median(graph.plain);
  const k = median(graph.kiln);
  lines.push(
    `| \`nx show projects\` after a one-file edit, daemon off (median of ${graph.plain.length}) | ${sec(p)} | ${sec(k)} | ${(k / p).toFixed(2)}× | | |`,
  );
  if (graph.floor?.noop.length) {
    const n = median(graph.floor.noop);
    const t = median(graph.floor.ts);
    lines.push(
      `| the same, floors: a no-op plugin / one that loads TypeScript and parses the edited file | ${sec(p)} | ${sec(n)} / ${sec(t)} | ${(n / p).toFixed(2)}× / ${(t / p).toFixed(2)}× | | kiln / TypeScript floor: ${(k / t).toFixed(2)}× |`,
    );
  }
  if (graph.daemon?.plain.length) {
    const dp = median(graph.daemon.plain);
    const dk = median(graph.daemon.kiln);
    lines.push(
      `| \`nx show projects\` after a one-file edit, daemon on (median of ${graph.daemon.plain.length}) | ${sec(dp)} | ${sec(dk)} | ${(dk / dp).toFixed(2)}× | | |`,
    );
  }
}
const header = [
  `repo ${args.repo} @ ${commit.slice(0, 9)}, base ${baseDir}, Nx ${nxVersion}${args.nx ? " (pinned with --nx in both clones)" : ""}, node ${nodeVersion}, ${pm} ${pmVersion}`,
  `workspace: ${args.workspace ?? "(as checked out)"}; --parallel=${args.parallel}; daemon off; ${os.cpus().length} cpus, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the end; ${((Date.now() - started) / 60000).toFixed(1)} min`,
  `edits in ${targets.file}`,
];
if (initWarnings.length)
  header.push(`init warned: ${initWarnings.join(" | ")}`);
console.log(["", ...header, "", ...lines, ""].join("\n"));
for (const s of steps) {
  for (const v of s.verdicts.filter((x) => !x.equal))
    console.log(
      `DIFFERENT ${s.name} ${v.task}:\n  ${v.differences.join("\n  ")}`,
    );
}
if (ERRORS.length) console.log(`\nERRORS:\n${ERRORS.join("\n\n")}`);
if (args.json) {
  await writeFile(
    resolve(args.json),
    JSON.stringify(
      {
        repo: args.repo,
        commit,
        base: baseDir,
        nxVersion,
        nodeVersion,
        pm: `${pm} ${pmVersion}`,
        targets,
        initWarnings,
        steps,
        graph,
        errors: ERRORS,
        work,
      },
      null,
      2,
    ),
  );
}
if (!args.keep && !args.work) await rm(work, { recursive: true, force: true });
process.exit(ERRORS.length ? 1 : 0);
