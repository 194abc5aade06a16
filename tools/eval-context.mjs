#!/usr/bin/env node
/**
 * Context-pack evaluation (issue 4, point 8) on a real repository: hand-written tasks with the
 * declarations a developer needs (tools/eval/trpc-tasks.json — written by reading the trpc sources,
 * never derived from a graph), run through `contextPack` at two budgets. Prints per task and overall:
 * recall and precision of the ground truth at 4 000 and 8 000 tokens, tokens used versus reading the
 * files that hold the ground truth, determinism across two runs, pack latency; and that an edit makes
 * the pack say it is stale.
 *
 * The graph: the task file's packages are exported (--mode, default allow-errors: the corpus is a bare
 * checkout without node_modules) and merged into one workspace graph by `loadGraph` (ids are
 * package-qualified already), so one pack can span server and client.
 *
 * Usage: node tools/eval-context.mjs [--repo DIR] [--ref REV] [--tasks FILE] [--mode allow-errors|checked] [--budgets 4000,8000] [--json]
 * --repo: a git repository of trpc (default /work/.mirror/trpc+trpc/repo, as `fetch github:trpc/trpc` leaves
 * it); the task file's packages are checked out from --ref (default HEAD) into a temporary directory.
 * Requires a build (`npm run build`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');
const { values: args } = parseArgs({
  options: {
    repo: { type: 'string', default: '/work/.mirror/trpc+trpc/repo' },
    ref: { type: 'string', default: 'HEAD' },
    tasks: { type: 'string', default: join(here, 'eval/trpc-tasks.json') },
    mode: { type: 'string', default: 'allow-errors' },
    budgets: { type: 'string', default: '4000,8000' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help) {
  process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0].replace(/^#!.*\n\/\*\*?/, '').replace(/^ \* ?/gm, ''));
  process.exit(0);
}
const corePath = join(repoRoot, 'packages/core/dist/index.js');
if (!existsSync(corePath)) {
  process.stderr.write('packages/core/dist is missing: run `npm run build` first\n');
  process.exit(1);
}
const core = await import(pathToFileURL(corePath).href);
const spec = JSON.parse(readFileSync(args.tasks, 'utf8'));
const budgets = args.budgets.split(',').map(Number);
if (!existsSync(args.repo)) {
  process.stderr.write(`no repository at ${args.repo}: fetch github:trpc/trpc first (or pass --repo)\n`);
  process.exit(1);
}

const say = (s = '') => process.stdout.write(`${s}\n`);
const log = (s) => process.stderr.write(`${s}\n`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};
const tokensOf = (text) => Math.ceil(text.length / 4);

const tmp = await mkdtemp(join(os.tmpdir(), 'kiln-eval-'));
try {
  // ---- the corpus: the task file's packages at --ref
  const sha = execFileSync('git', ['-C', args.repo, 'rev-parse', args.ref], { encoding: 'utf8' }).trim();
  const tree = join(tmp, 'tree');
  execFileSync('bash', ['-c', `mkdir -p "${tree}" && git -C "${args.repo}" archive ${sha} ${spec.packages.join(' ')} | tar -x -C "${tree}"`]);
  log(`corpus: ${args.repo} at ${sha.slice(0, 9)}, packages ${spec.packages.join(', ')}`);

  // ---- export each package and merge them into one workspace graph (loadGraph with several directories)
  const t0 = performance.now();
  const loaded = await core.loadGraph({ dir: spec.packages.map((p) => join(tree, p)), mode: args.mode, store: join(tmp, 'store') });
  const exportMs = performance.now() - t0;
  const { index, sourceDir } = loaded;
  const records = index.records;
  // Graph paths are relative to the packages' common root; the task file names them from the repository root.
  const graphPath = (repoPath) => relative(sourceDir, join(tree, repoPath)).split(sep).join('/');
  log(`exported and merged ${spec.packages.join(', ')}: ${records.length} records in ${(exportMs / 1000).toFixed(1)} s`);

  // ---- the tasks
  const rows = [];
  const latencies = [];
  let deterministic = true;
  for (const task of spec.tasks) {
    const truth = new Set(task.truth.map(([pkg, file, name]) => `${graphPath(`${pkg}/${file}`)}#${name}`));
    const truthFiles = [...new Set(task.truth.map(([pkg, file]) => `${pkg}/${file}`))];
    let fileTokens = 0;
    for (const f of truthFiles) fileTokens += tokensOf(await readFile(join(tree, f), 'utf8'));
    const row = { id: task.id, truth: truth.size, fileTokens, budgets: {} };
    for (const budget of budgets) {
      const req = { task: task.task, budget, format: 'compact' };
      const t0 = performance.now();
      const a = await core.contextPack(index, req, { sourceDir });
      latencies.push(performance.now() - t0);
      const b = await core.contextPack(index, req, { sourceDir });
      if (a.text !== b.text) deterministic = false;
      const decls = a.pack.items.filter((i) => i.kind === 'declaration');
      const keyOf = (i) => `${i.span?.file}#${i.path}`;
      const hits = new Set(decls.map(keyOf).filter((k) => truth.has(k)));
      row.budgets[budget] = {
        recall: hits.size / truth.size,
        precision: decls.length ? hits.size / decls.length : 0,
        items: decls.length,
        tokens: a.pack.tokens_used,
        missed: [...truth].filter((k) => !hits.has(k)),
        fresh: a.pack.freshness.status,
      };
    }
    rows.push(row);
  }

  // ---- staleness after an edit
  const edited = `${spec.tasks[0].truth[0][0]}/${spec.tasks[0].truth[0][1]}`;
  await writeFile(join(tree, edited), `${await readFile(join(tree, edited), 'utf8')}\nexport const editedAfterExport = 1;\n`);
  const stale = await core.contextPack(index, { task: spec.tasks[0].task, budget: budgets[0], format: 'compact' }, { sourceDir });

  // ---- report
  if (args.json) {
    say(JSON.stringify({ sha, mode: args.mode, budgets, rows, latencies, deterministic, stale: stale.pack.freshness }, null, 2));
  } else {
    say(`kiln context-pack evaluation — ${new Date().toISOString()} — ${args.repo} at ${sha.slice(0, 9)} — export mode ${args.mode}`);
    say(`tasks: ${rows.length} (${args.tasks}); ground truth hand-written by reading the sources; token estimate ceil(chars/4)`);
    say(`graph: ${records.length} records from ${spec.packages.join(', ')} (exported and merged in ${(exportMs / 1000).toFixed(1)} s)`);
    say();
    const head = ['task', 'truth', 'files tok', ...budgets.flatMap((b) => [`R@${b}`, `P@${b}`, `tok@${b}`])];
    const table = rows.map((r) => [r.id, r.truth, r.fileTokens, ...budgets.flatMap((b) => [r.budgets[b].recall.toFixed(2), r.budgets[b].precision.toFixed(2), r.budgets[b].tokens])]);
    const widths = head.map((h, i) => Math.max(String(h).length, ...table.map((t) => String(t[i]).length)));
    const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
    say(line(head));
    say(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const t of table) say(line(t));
    say();
    for (const b of budgets) {
      const recall = rows.reduce((s, r) => s + r.budgets[b].recall, 0) / rows.length;
      const precision = rows.reduce((s, r) => s + r.budgets[b].precision, 0) / rows.length;
      const used = rows.reduce((s, r) => s + r.budgets[b].tokens, 0);
      const files = rows.reduce((s, r) => s + r.fileTokens, 0);
      say(`budget ${b}: mean recall ${recall.toFixed(3)}, mean precision ${precision.toFixed(3)}, tokens used ${used} vs ${files} reading the ground-truth files (${(used / files).toFixed(2)}×)${b === 8000 ? ` — target recall@8000 ≥ 0.8: ${recall >= 0.8 ? 'PASS' : 'MISS'}` : ''}`);
    }
    const p50 = median(latencies);
    const max = Math.max(...latencies);
    say(`pack latency (graph loaded, source tree read per pack): median ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms — target ≤ 200 ms: ${max <= 200 ? 'PASS' : p50 <= 200 ? 'PASS (median; max over)' : 'MISS'}`);
    say(`determinism: two runs of every pack ${deterministic ? 'byte-identical: PASS' : 'DIFFER: FAIL'}`);
    say(`freshness: before the edit every pack said ${[...new Set(rows.flatMap((r) => budgets.map((b) => r.budgets[b].fresh)))].join('/')}; after editing ${edited}: ${stale.pack.freshness.status} (${stale.pack.freshness.changed.join(', ')})`);
    const missed = rows.flatMap((r) => r.budgets[8000]?.missed.map((m) => `${r.id}: ${m}`) ?? []);
    if (missed.length) {
      say('missed at 8000:');
      for (const m of missed) say(`  ${m}`);
    }
    say(`load average at end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.availableParallelism()} cpus)`);
  }
} finally {
  await rm(tmp, { recursive: true, force: true });
}
