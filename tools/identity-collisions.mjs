#!/usr/bin/env node
/**
 * Identity collisions over a real corpus (SPEC §2, issue 2 point 8): the TypeScript lib `.d.ts`
 * files plus the mutation-test corpus (this repo's sources and files shipped in installed packages).
 * Prints the collision classes as a table, with examples, and the cross-file module collisions of
 * each package. Exit code 1 when there is any REAL collision (equal identity, different digest).
 *
 *   npm run collisions            # builds first
 *   node tools/identity-collisions.mjs [--json] [--examples N] [--wide] [--dir PATH]…
 *
 * --wide digests every eligible file of the corpus packages, not the mutation test's sample;
 * --dir digests every source file under PATH instead (e.g. a fetched repository), by package.
 */
import { analyzeCollisions, classCounts, collisionCorpus, corpusPackages, directoryCorpus, formatReport } from './lib/collisions.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const ei = args.indexOf('--examples');
const examples = ei >= 0 ? Number(args[ei + 1]) : 3;
if (args.includes('--help') || args.includes('-h')) {
  console.log('usage: node tools/identity-collisions.mjs [--json] [--examples N] [--wide] [--dir PATH]...');
  process.exit(0);
}

const dirs = args.flatMap((a, i) => (a === '--dir' ? [args[i + 1]] : []));
// --dir replaces the default corpus: measure one fetched repository on its own.
const corpus = dirs.length ? dirs.flatMap((d) => directoryCorpus(d)) : collisionCorpus({ wide: args.includes('--wide') });
const result = analyzeCollisions(corpus, {
  onFile: (i, n) => {
    if (!json && process.stderr.isTTY && i % 25 === 0) process.stderr.write(`\rdigesting ${i}/${n}`);
  },
});
if (!json && process.stderr.isTTY) process.stderr.write('\r\x1b[K');
if (json) {
  console.log(JSON.stringify({ files: result.files, declarations: result.declarations, identities: result.identities, counts: classCounts(result), real: result.classes.real }, null, 2));
} else {
  console.log(formatReport(result, { examples, packages: corpusPackages(corpus) }));
}
process.exit(result.classes.real.length ? 1 : 0);
