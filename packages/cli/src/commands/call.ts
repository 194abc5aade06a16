/**
 * `kiln call <pkg>#<export> [--args JSON]`: call a covered export of an installed package through its
 * executable representation (SPEC §7) — the package's JS is never imported; its payloads run in one
 * node:vm context (not a security sandbox). Refusals (no representation, an unsupported format version,
 * an unmet requirement, an uncovered or unknown export, a failed integrity check) come before any
 * result, as coded diagnostics naming the package, its version and the requirement.
 *
 * What is called: a function export with --args; a class export is constructed (`new`, as the only way
 * to run it; the instance is the result); any other value given no --args is the result itself (a
 * constant read through the representation), and given --args is refused (KILN_REP_NOT_CALLABLE).
 * `--format json` carries the result as JSON when JSON can carry it faithfully; otherwise (a function,
 * undefined, a class instance, a Map, a cycle, a non-finite number, a bigint…) the line also says why
 * (`notJson`, the first path that JSON would lose or change) and holds the `inspect` text, so a
 * consumer never reads a silently altered value.
 *
 * Loads @kiln/runtime alone (main.ts registers this command by itself): a call's cold start is the
 * runtime's, not the build machinery's.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Option, type Command } from 'commander';
import { KilnError, diagnostic, type Diagnostic } from '@kiln/core/affected';
import { createConsumer, isRepError, openRepresentation, packageNameOf, representationPath, type RepError } from '@kiln/runtime';
import { EXIT_FAILURE, type Io, type SetExit } from '../common.js';
import { openPackageDir } from '../lib/package-dir.js';

/** A runtime refusal as kiln's diagnostic (same registry code and hint). */
export function repDiagnostic(e: RepError): Diagnostic {
  const where = e.package ? `${e.package}${e.version ? `@${e.version}` : ''}` : undefined;
  const requirement = e.requirement && !e.message.includes(e.requirement) ? ` (requirement: ${e.requirement})` : '';
  const message = e.message.replace(/^KILN_REP_[A-Z_]+: /, '');
  return diagnostic(e.code, `${where && !message.includes(where) ? `${where}: ` : ''}${message}${requirement}`, { producer: 'runtime', noLocation: 'about a package representation, not a source position' });
}

/** A class constructor (`class X {}`, however it is exported): only `new` runs it. */
function isClass(v: unknown): boolean {
  return typeof v === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(v));
}

/**
 * Why JSON would not carry `v` as it is (the first path it loses or changes), or undefined when it
 * would: only null, booleans, strings, finite numbers, arrays and plain objects of those, no cycles.
 */
export function notJson(v: unknown, path = '$', seen: Set<object> = new Set()): string | undefined {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : `${path} is ${v}`;
  if (typeof v !== 'object') return `${path} is ${v === undefined ? 'undefined' : `a ${typeof v}`}`;
  if (seen.has(v)) return `${path} is a cycle`;
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null;
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return `${path} is a ${proto?.constructor?.name || 'non-plain object'}`;
  seen.add(v);
  try {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const why = notJson(v[i], `${path}[${i}]`, seen);
        if (why !== undefined) return why;
      }
      return undefined;
    }
    if (Object.getOwnPropertySymbols(v).length > 0) return `${path} has symbol keys`;
    for (const [k, x] of Object.entries(v)) {
      const why = notJson(x, `${path}.${k}`, seen);
      if (why !== undefined) return why;
    }
    return undefined;
  } finally {
    seen.delete(v);
  }
}

export function registerCall(program: Command, io: Io, setExit: SetExit): void {
  program
    .command('call')
    .description("call a package's export through its executable representation (kiln.rep), without importing its JS")
    .argument('<target>', 'surface identity: <package>[/<subpath>]#<export>, e.g. @acme/math#add or @acme/math/sub#div')
    .option('--args <json>', 'the arguments, a JSON array (a single non-array value is one argument); a class export is constructed with them, a non-function export given none is printed as it is', '[]')
    .option('--from <dir>', 'where the package is installed (node_modules from there up) and its dependencies resolve', '.')
    .option('--package <dir|tgz>', 'the package directory or tarball instead of an installed package')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (target: string, o: { args: string; from: string; package?: string; format: 'text' | 'json' }) => {
      const hash = target.lastIndexOf('#');
      if (hash <= 0 || hash === target.length - 1) throw new KilnError(diagnostic('KILN_USAGE', `${target} is not <package>#<export>`, { producer: 'cli', noLocation: 'a command-line argument' }));
      let args: unknown[];
      try {
        const parsed: unknown = JSON.parse(o.args);
        args = Array.isArray(parsed) ? parsed : [parsed];
      } catch (e) {
        throw new KilnError(diagnostic('KILN_USAGE', `--args is not JSON: ${(e as Error).message}`, { producer: 'cli', noLocation: 'a command-line argument' }));
      }
      const from = process.cwd();
      const pkg = openPackageDir(o.package ?? packageNameOf(target.slice(0, hash)), o.from === '.' ? from : o.from);
      try {
        let file: string;
        let version: string | undefined;
        try {
          const manifest = JSON.parse(readFileSync(join(pkg.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
          file = representationPath(pkg.dir, manifest);
          if (typeof manifest.version === 'string') version = manifest.version;
        } catch (e) {
          throw new KilnError(diagnostic('KILN_READ_FAILED', `package.json of ${pkg.named}: ${(e as Error).message}`, { producer: 'cli', noLocation: 'the package manifest' }));
        }
        let result: unknown;
        try {
          const reader = openRepresentation(file, version !== undefined ? { version } : {});
          try {
            const consumer = createConsumer(reader, { requireFrom: pkg.dir });
            const value = consumer.load(target);
            if (reader.lookup(target)?.kind === 'class' || isClass(value)) result = await consumer.construct(target, args);
            else if (typeof value !== 'function' && args.length === 0) result = value;
            else result = await consumer.call(target, args); // a value given --args: KILN_REP_NOT_CALLABLE
          } finally {
            reader.close();
          }
        } catch (e) {
          if (isRepError(e)) throw new KilnError(repDiagnostic(e));
          // The export itself threw: its error is the answer, printed as the export's, not kiln's.
          const err = e as { name?: unknown; message?: unknown };
          const thrown = { name: String(err?.name ?? 'Error'), message: String(err?.message ?? e) };
          io.out(o.format === 'json' ? JSON.stringify({ surface: target, threw: thrown }) : `${target} threw ${thrown.name}: ${thrown.message}`);
          setExit(EXIT_FAILURE);
          return;
        }
        if (o.format === 'json') {
          const lost = notJson(result);
          let carried: unknown = null;
          try {
            carried = result === undefined ? null : (JSON.parse(JSON.stringify(result) ?? 'null') as unknown);
          } catch {
            carried = null; // a cycle or a bigint: the inspect text is the answer
          }
          io.out(JSON.stringify(lost === undefined ? { surface: target, result: carried } : { surface: target, result: carried, notJson: lost, inspect: inspect(result, { depth: 6, colors: false }) }));
        }
        else io.out(typeof result === 'string' ? result : inspect(result, { depth: 6, colors: false }));
      } finally {
        pkg.dispose();
      }
    });
}
