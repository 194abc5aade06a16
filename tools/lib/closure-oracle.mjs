/**
 * The test-closure oracle of tools/bench-affected.mjs (issue 13, point 4): which workspace projects'
 * *test closure* changed between two commits, decided from git objects with the TypeScript compiler
 * API only. It shares no code with kiln: it imports nothing from packages/*, only `typescript` and
 * three helpers of tools/lib/nx-emulation.mjs (tools code: the workspace globs, project roots from
 * them, the pnpm v9 lockfile line parser).
 *
 * THE RULE, per project P of the head commit (projects = directories with a tracked package.json
 * matched by the workspace globs: pnpm-workspace.yaml `packages`, else package.json `workspaces`; a
 * file belongs to the deepest project containing it):
 *
 *   closure(P, commit) = every tracked file of P (sources and non-sources; none under a
 *     `node_modules` or `dist` folder), plus, transitively, every file reached from a source file
 *     in the closure by a specifier that `ts.preProcessFile` finds (imports, re-exports, `import()`,
 *     `require()`, `import x = require()`, `/// <reference path|types>`):
 *       - relative (`./`, `../`): resolved against the importing file at that commit — `.js`→`.ts`
 *         (`.jsx`→`.tsx`, `.mjs`→`.mts`, `.cjs`→`.cts`) substitution first, then the path as written,
 *         then the path plus .ts .tsx .mts .cts .d.ts .js .jsx .mjs .cjs, then `/index` plus those;
 *         the first that is a tracked file is taken;
 *       - bare, naming a workspace package (`@x/a`, `@x/a/sub`): every file of that package (coarse,
 *         but needs no resolution logic), whose sources are followed in turn;
 *       - anything else (an external package, a path alias): ignored here — externals are covered
 *         by the lockfile rule below.
 *   P's closure changed when the two commits' closures differ as path sets, or a path in both
 *   differs in meaning: a source file (.ts .tsx .mts .cts .js .jsx .mjs .cjs, .d.ts) by its token
 *   stream — the TypeScript scanner's tokens as the parser scans them (`Node#getChildren` down to the
 *   leaves, so regular expressions, template parts and JSX text are tokens of their own), comments,
 *   whitespace and JSDoc being trivia, JSX text with its whitespace runs collapsed — and any other
 *   file by its bytes (blob id). A project absent at the base is changed ("new project").
 *
 *   Lockfile (pnpm v9, `importers`/`snapshots`): for every workspace package in P's closure at the
 *   head, its importer's entries (name → resolved version) and, for each, the transitive closure of
 *   snapshot keys it reaches; P changed when that text differs between the commits. Where either
 *   commit's lockfile is not a pnpm v9 lockfile (or another lockfile kind changed), any lockfile
 *   change counts for every project.
 *
 *   Files outside every project (at either commit): a change to any of them except documentation
 *   and repository metadata — `*.md`, `*.mdx`, LICENSE/LICENCE*, `.github/`, `.changeset/`,
 *   `.vscode/`, `.idea/`, images (png jpg jpeg gif svg ico webp avif) — and except the lockfiles
 *   (rule above) changes every project's closure. "Change" is in meaning as above (a root source
 *   file whose tokens are equal did not change).
 *
 * What the oracle does not see (it is a lower bound on what a test can observe, by design simple):
 * path aliases, `vi.mock`/glob imports, files read by path at run time outside the project, the
 * root importer's externals (e.g. the root's test runner) — reported apart by the benchmark.
 *
 * Invariants: reads git objects only (no checkout); deterministic; results keyed by blob id, so each
 * file version is parsed once per process.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePnpmLock, projectRoots, workspacePatterns } from './nx-emulation.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ts = createRequire(resolve(repoRoot, 'package.json'))('typescript');
const SK = ts.SyntaxKind;

const SOURCE_RE = /\.(?:[mc]?ts|tsx|[mc]?js|jsx)$/;
const RESOLVE_EXTS = ['.ts', '.tsx', '.mts', '.cts', '.d.ts', '.js', '.jsx', '.mjs', '.cjs'];
const JS_TO_TS = [
  [/\.js$/, ['.ts', '.tsx', '.d.ts']],
  [/\.jsx$/, ['.tsx']],
  [/\.mjs$/, ['.mts', '.d.mts']],
  [/\.cjs$/, ['.cts', '.d.cts']],
];
export const LOCKFILES = new Set(['pnpm-lock.yaml', 'package-lock.json', 'yarn.lock', 'npm-shrinkwrap.json']);
/** Files outside every project that no test reads: documentation and repository metadata. */
export const INERT = /(^|\/)(LICEN[CS]E)[^/]*$|\.(md|mdx|png|jpe?g|gif|svg|ico|webp|avif)$|^\.(github|changeset|vscode|idea)\//i;

export const isSource = (path) => SOURCE_RE.test(path);

const sha256 = (s) => createHash('sha256').update(s).digest('hex').slice(0, 24);

/**
 * The meaning of one source text: a digest of its token stream (see the header). Exported for tests
 * and for the benchmark's miss reports.
 */
export function tokenStream(text, path) {
  const kind = /\.tsx$/.test(path) ? ts.ScriptKind.TSX : /\.jsx$/.test(path) ? ts.ScriptKind.JSX : /\.[mc]?js$/.test(path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, kind);
  const out = [];
  const visit = (node) => {
    if (node.kind >= SK.FirstJSDocNode && node.kind <= SK.LastJSDocNode) return;
    const kids = node.getChildren(sf);
    if (!kids.length) {
      let t = node.getText(sf);
      if (node.kind === SK.JsxText) t = t.replace(/\s+/g, ' ').trim();
      if (node.kind === SK.JsxText && !t) return;
      out.push(`${node.kind}:${t}`);
      return;
    }
    for (const k of kids) visit(k);
  };
  visit(sf);
  return out;
}

/** What the oracle keeps of one source blob: its specifiers and the digest of its tokens. */
function analyse(text, path) {
  const pre = ts.preProcessFile(text, true, true);
  const specs = [
    ...pre.importedFiles.map((f) => f.fileName),
    ...pre.typeReferenceDirectives.map((f) => f.fileName),
  ];
  const refs = pre.referencedFiles.map((f) => f.fileName);
  return { specs, refs, digest: sha256(tokenStream(text, path).join('\u0001')) };
}

/** Package name of a bare specifier (`@s/a/b` → `@s/a`, `a/b` → `a`), or undefined. */
function packageName(spec) {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('#') || spec.includes(':')) return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? (parts.length >= 2 ? parts.slice(0, 2).join('/') : undefined) : parts[0];
}

export class ClosureOracle {
  /** @param {string} gitDir a git directory of the corpus (bare is fine) */
  constructor(gitDir) {
    this.gitDir = gitDir;
    /** `${oid}:${ext}` → { specs, refs, digest } */
    this.blobs = new Map();
    /** sha → state */
    this.states = new Map();
    this.lockMemo = new Map();
    this.stats = { parsed: 0, parseMs: 0 };
  }

  git(args, input) {
    return execFileSync('git', ['--git-dir', this.gitDir, ...args], { maxBuffer: 1 << 30, ...(input !== undefined ? { input } : {}) });
  }

  /** Contents of blobs by id (one `git cat-file --batch`). */
  readBlobs(oids) {
    const out = new Map();
    const want = [...new Set(oids)];
    if (!want.length) return out;
    const buf = this.git(['cat-file', '--batch'], `${want.join('\n')}\n`);
    let i = 0;
    while (i < buf.length) {
      const nl = buf.indexOf(10, i);
      const [oid, type, size] = buf.subarray(i, nl).toString('utf8').split(' ');
      if (type === 'missing') {
        i = nl + 1;
        continue;
      }
      const n = Number(size);
      out.set(oid, buf.subarray(nl + 1, nl + 1 + n));
      i = nl + 1 + n + 1;
    }
    return out;
  }

  /** Every tracked entry of a commit (files, links, submodules) → its object id. */
  lsTree(sha) {
    const files = new Map();
    for (const entry of this.git(['ls-tree', '-r', '-z', '--full-tree', sha]).toString('utf8').split('\0')) {
      if (!entry) continue;
      const tab = entry.indexOf('\t');
      const [mode, , oid] = entry.slice(0, tab).split(' ');
      files.set(entry.slice(tab + 1), { oid, mode });
    }
    return files;
  }

  /** One commit: files, projects (root → name), ownership, analysed sources. Keeps the last 3. */
  state(sha) {
    let s = this.states.get(sha);
    if (s) return s;
    const files = this.lsTree(sha);
    const text = (p) => {
      const e = files.get(p);
      return e ? this.readBlobs([e.oid]).get(e.oid)?.toString('utf8') : undefined;
    };
    const patterns = workspacePatterns(text);
    const fileKeys = new Map([...files.keys()].map((p) => [p, '']));
    const roots = projectRoots(fileKeys, patterns);
    const manifests = this.readBlobs(roots.map((r) => files.get(`${r}/package.json`).oid));
    const projects = new Map();
    const byName = new Map();
    for (const r of roots) {
      let name;
      try {
        name = JSON.parse(manifests.get(files.get(`${r}/package.json`).oid).toString('utf8')).name;
      } catch {
        name = undefined;
      }
      projects.set(r, name);
      if (typeof name === 'string' && !byName.has(name)) byName.set(name, r);
    }
    // Sources not analysed yet (by blob id and extension): read in one batch.
    const need = [];
    for (const [p, e] of files) if (isSource(p) && e.mode !== '120000' && e.mode !== '160000' && !this.blobs.has(`${e.oid}:${posix.extname(p)}`)) need.push([p, e.oid]);
    if (need.length) {
      const t0 = performance.now();
      const contents = this.readBlobs(need.map(([, o]) => o));
      for (const [p, oid] of need) {
        const key = `${oid}:${posix.extname(p)}`;
        if (this.blobs.has(key)) continue;
        const b = contents.get(oid);
        this.blobs.set(key, b ? analyse(b.toString('utf8'), p) : { specs: [], refs: [], digest: `unreadable:${oid}` });
        this.stats.parsed++;
      }
      this.stats.parseMs += performance.now() - t0;
    }
    s = { sha, files, projects, byName, rootsByDepth: [...roots].sort((a, b) => b.length - a.length), text };
    // Files per project (deepest owner), excluding node_modules/ and dist/ folders.
    s.filesOf = new Map(roots.map((r) => [r, []]));
    for (const p of files.keys()) {
      const r = s.rootsByDepth.find((x) => p.startsWith(`${x}/`));
      if (r === undefined) continue;
      if (p.slice(r.length + 1).split('/').some((seg) => seg === 'node_modules' || seg === 'dist')) continue;
      s.filesOf.get(r).push(p);
    }
    s.closures = new Map();
    this.states.set(sha, s);
    if (this.states.size > 3) this.states.delete(this.states.keys().next().value);
    return s;
  }

  info(s, path) {
    const e = s.files.get(path);
    if (!e || !isSource(path) || e.mode === '120000' || e.mode === '160000') return undefined;
    return this.blobs.get(`${e.oid}:${posix.extname(path)}`);
  }

  resolveRelative(s, from, spec) {
    const base = posix.normalize(posix.join(posix.dirname(from), spec));
    if (base.startsWith('../')) return undefined;
    const cands = [];
    for (const [re, exts] of JS_TO_TS) if (re.test(base)) for (const x of exts) cands.push(base.replace(re, x));
    cands.push(base);
    for (const x of RESOLVE_EXTS) cands.push(base + x);
    for (const x of RESOLVE_EXTS) cands.push(`${base}/index${x}`);
    return cands.find((c) => s.files.has(c));
  }

  /** P's closure at commit s: { files: Set<path>, packages: Set<root> }. */
  closure(s, root) {
    let c = s.closures.get(root);
    if (c) return c;
    const files = new Set();
    const packages = new Set();
    const queue = [];
    const add = (p) => {
      if (!files.has(p)) {
        files.add(p);
        queue.push(p);
      }
    };
    const addPackage = (r) => {
      if (packages.has(r)) return;
      packages.add(r);
      for (const p of s.filesOf.get(r) ?? []) add(p);
    };
    addPackage(root);
    while (queue.length) {
      const f = queue.pop();
      const inf = this.info(s, f);
      if (!inf) continue;
      for (const spec of inf.specs) {
        if (spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..') {
          const r = this.resolveRelative(s, f, spec);
          if (r) add(r);
          continue;
        }
        const name = packageName(spec);
        const r = name !== undefined ? s.byName.get(name) : undefined;
        if (r !== undefined) addPackage(r);
      }
      for (const ref of inf.refs) {
        const r = this.resolveRelative(s, f, ref.startsWith('.') ? ref : `./${ref}`);
        if (r) add(r);
      }
    }
    c = { files, packages };
    s.closures.set(root, c);
    return c;
  }

  /** Is path `p` the same in meaning at states a and b (both present)? */
  sameMeaning(a, b, p) {
    const ea = a.files.get(p);
    const eb = b.files.get(p);
    if (!ea || !eb) return false;
    if (ea.oid === eb.oid && ea.mode === eb.mode) return true;
    if (ea.mode !== eb.mode && (ea.mode === '120000' || eb.mode === '120000' || ea.mode === '160000' || eb.mode === '160000')) return false;
    const ia = this.info(a, p);
    const ib = this.info(b, p);
    return !!(ia && ib && ia.digest === ib.digest);
  }

  /** A lockfile's parsed form (pnpm v9), or null; memoised by blob id. */
  lock(s) {
    const e = s.files.get('pnpm-lock.yaml');
    if (!e) return null;
    if (this.lockMemo.has(e.oid)) return this.lockMemo.get(e.oid);
    const text = this.readBlobs([e.oid]).get(e.oid)?.toString('utf8') ?? '';
    // pnpm 11 may write two YAML documents (package-manager metadata, then the workspace's).
    const doc = text.startsWith('---\n') ? text.slice(text.indexOf('\n---\n', 4) + 5) : text;
    const lock = parsePnpmLock(doc);
    if (lock) lock.importerMemo = new Map();
    this.lockMemo.set(e.oid, lock);
    if (this.lockMemo.size > 4) this.lockMemo.delete(this.lockMemo.keys().next().value);
    return lock;
  }

  /** One importer's externals: `name=version` and every snapshot key each reaches, as text. */
  importerText(lock, root) {
    const key = root === '' ? '.' : root;
    if (lock.importerMemo.has(key)) return lock.importerMemo.get(key);
    const imp = lock.importers.get(key);
    const keyOf = (name, ver) => {
      if (/^(link|file|workspace):/.test(ver)) return undefined;
      const k = `${name}@${ver}`;
      if (lock.snapshots.has(k)) return k;
      if (lock.snapshots.has(ver)) return ver;
      return k;
    };
    const lines = [];
    for (const [name, ver] of [...(imp ?? new Map())].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
      const start = keyOf(name, ver);
      if (!start) {
        lines.push(`${name}=${ver}`);
        continue;
      }
      const seen = new Set();
      const stack = [start];
      while (stack.length) {
        const k = stack.pop();
        if (seen.has(k)) continue;
        seen.add(k);
        for (const [n, v] of lock.snapshots.get(k) ?? []) {
          const kk = keyOf(n, v);
          if (kk && !seen.has(kk)) stack.push(kk);
        }
      }
      lines.push(`${name}=${ver} [${[...seen].sort().join(' ')}]`);
    }
    const text = imp ? lines.join('\n') : '(no importer)';
    lock.importerMemo.set(key, text);
    return text;
  }

  /**
   * The oracle's verdict for one commit pair: per head project root, the reasons its test closure
   * changed (empty: unchanged), plus the pair-wide facts.
   * @returns {{ changed: Map<string, string[]>, projects: Map<string,string>, global: string[], lockfile: string, rootImporterMoved: boolean, changedPaths: string[] }}
   */
  compare(baseSha, headSha) {
    const a = this.state(baseSha);
    const b = this.state(headSha);
    const changedPaths = [];
    for (const [p, e] of b.files) {
      const x = a.files.get(p);
      if (!x || x.oid !== e.oid || x.mode !== e.mode) changedPaths.push(p);
    }
    for (const p of a.files.keys()) if (!b.files.has(p)) changedPaths.push(p);
    changedPaths.sort();
    // Files outside every project of either commit.
    const allRoots = [...new Set([...a.projects.keys(), ...b.projects.keys()])];
    const outside = (p) => !allRoots.some((r) => p.startsWith(`${r}/`));
    const global = [];
    let lockChanged = false;
    for (const p of changedPaths) {
      if (!outside(p)) continue;
      if (LOCKFILES.has(p)) {
        lockChanged = true;
        continue;
      }
      if (INERT.test(p)) continue;
      if (a.files.has(p) && b.files.has(p) && this.sameMeaning(a, b, p)) continue;
      global.push(`${p}: ${!a.files.has(p) ? 'added' : !b.files.has(p) ? 'removed' : 'changed'} (outside every project)`);
    }
    // Lockfile: per importer, or every project when it cannot be read per importer.
    let lockfile = lockChanged ? 'changed' : 'unchanged';
    let la;
    let lb;
    let rootImporterMoved = false;
    if (lockChanged) {
      la = this.lock(a);
      lb = this.lock(b);
      const otherLocks = changedPaths.some((p) => LOCKFILES.has(p) && p !== 'pnpm-lock.yaml');
      if (!la || !lb || otherLocks) {
        lockfile = 'changed, not read per importer (not pnpm v9): every project';
        global.push(`lockfile changed (${lockfile})`);
        la = lb = undefined;
      } else {
        lockfile = 'changed, compared per importer';
        rootImporterMoved = this.importerText(la, '.') !== this.importerText(lb, '.');
      }
    }
    const changed = new Map();
    for (const root of b.projects.keys()) {
      const reasons = [...global];
      if (!a.projects.has(root)) reasons.push(`${root}: new project`);
      else {
        const cb = this.closure(b, root);
        const ca = this.closure(a, root);
        const diff = [];
        for (const p of cb.files) {
          if (!ca.files.has(p)) diff.push(`${p}: ${a.files.has(p) ? 'enters the closure' : 'added'}`);
          else if (!this.sameMeaning(a, b, p)) diff.push(`${p}: ${isSource(p) ? 'tokens differ' : 'bytes differ'}`);
        }
        for (const p of ca.files) if (!cb.files.has(p)) diff.push(`${p}: ${b.files.has(p) ? 'leaves the closure' : 'removed'}`);
        reasons.push(...diff.sort());
        if (la && lb) {
          for (const r of [...cb.packages].sort()) {
            if (this.importerText(la, r) !== this.importerText(lb, r)) reasons.push(`lockfile: externals of ${r} moved`);
          }
        }
      }
      changed.set(root, reasons);
    }
    return { changed, projects: b.projects, global, lockfile, rootImporterMoved, changedPaths };
  }
}
