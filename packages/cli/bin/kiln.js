#!/usr/bin/env node
import { main } from '../dist/main.js';

const argv = process.argv.slice(2);
const code = await main(argv);
if (argv[0] === 'call') {
  // `kiln call` ends when its answer is written: a timer the called package's code started (a devtools
  // client's reconnect loop, a throttle) would otherwise hold the process (5 s for new FormApi() of
  // @tanstack/form-core). Both streams are flushed first.
  await new Promise((r) => process.stdout.write('', r));
  await new Promise((r) => process.stderr.write('', r));
  process.exit(code);
}
process.exitCode = code;
