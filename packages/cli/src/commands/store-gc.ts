/**
 * `kiln store gc`: removes the store's packs no view manifest names, and entries of other store formats
 * or extractor versions (younger than `--grace` minutes: kept). Exit 1 when there is no store.
 */
import { stat } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { KilnError, collectGarbage, defaultStoreDir, diagnostic } from '@kiln/core';
import { intOption, type Io } from '../common.js';

export function registerStoreGc(program: Command, io: Io): void {
  const store = program.command('store').description('the local store of slices, manifests and reports');
  store
    .command('gc')
    .description('remove packs no view manifest names, and entries of other store formats or extractor versions')
    .option('--store <dir>', 'local store directory (default: $KILN_STORE or ~/.cache/kiln/store)')
    .option('--dry-run', 'list what would be removed; remove nothing')
    .option('--grace <minutes>', 'keep entries younger than this, whatever names them', '15')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (o: { store?: string; dryRun?: boolean; grace: string; format: 'text' | 'json' }) => {
      const dir = o.store ?? defaultStoreDir();
      const graceMs = intOption('--grace', o.grace, 0) * 60_000;
      try {
        await stat(dir);
      } catch {
        throw new KilnError(diagnostic('KILN_NOT_FOUND', `no store at ${dir}`, { producer: 'cli' }));
      }
      const r = await collectGarbage(dir, { dryRun: o.dryRun ?? false, graceMs });
      if (o.format === 'json') {
        io.out(JSON.stringify(r, null, 2));
        return;
      }
      const bytes = r.removed.reduce((s, x) => s + x.size, 0);
      io.out(`${r.dryRun ? 'would remove' : 'removed'} ${r.removed.length} of ${r.entries} entries (${(bytes / 1e6).toFixed(2)} MB indexed${r.dryRun ? '' : `, ${(r.reclaimedBytes / 1e6).toFixed(2)} MB reclaimed`}); kept ${r.livePacks} pack(s) named by ${r.manifests} view manifest(s), ${r.debug.records} debug record(s) and ${r.debug.blobs} map/source blob(s)`);
      const byReason = new Map<string, number>();
      for (const x of r.removed) byReason.set(x.reason, (byReason.get(x.reason) ?? 0) + 1);
      for (const [reason, n] of [...byReason].sort()) io.out(`  ${String(n).padStart(5)}  ${reason}`);
    });
}
