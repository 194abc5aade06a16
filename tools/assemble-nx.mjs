#!/usr/bin/env node
// Assemble the installable @kiln/nx package: tsc compiles plugins/, executors/ and generators/ into
// packages/nx/dist (mirroring their paths); this copies the JSON schemas beside the compiled code,
// so every path in executors.json and generators.json resolves from an installed tarball.
import { cpSync, mkdirSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'packages/nx/dist');
for (const folder of ['executors', 'generators']) {
  const base = join(root, folder);
  if (!existsSync(base)) continue;
  for (const unit of readdirSync(base, { withFileTypes: true })) {
    if (!unit.isDirectory() || unit.name === 'dist' || unit.name === 'node_modules') continue;
    const schema = join(base, unit.name, 'schema.json');
    if (!existsSync(schema)) continue;
    mkdirSync(join(dist, folder, unit.name), { recursive: true });
    cpSync(schema, join(dist, folder, unit.name, 'schema.json'));
  }
}
