/**
 * Every file under a directory, for keys that cover "everything a tool or a package can read": a
 * directory that cannot be listed is reported (`unreadableDirs`), never passed over in silence — its
 * files cannot key anything, so the caller must widen the key (key/unreadable.ts). Paths are relative
 * to `dir`, POSIX, sorted.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface ListFilesOptions {
  /** Directory names never entered, wherever they are (`node_modules`, `.git`). */
  skipDirNames: ReadonlySet<string>;
  /** Relative directory paths never entered (a target's outputs). */
  skipPaths?: ReadonlySet<string>;
  /** List symbolic links to files (a dangling link too: its content reads as missing); default: no. */
  fileLinks?: boolean;
}

export async function listFiles(dir: string, options: ListFilesOptions): Promise<{ files: string[]; unreadableDirs: string[] }> {
  const files: string[] = [];
  const unreadableDirs: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(rel ? join(dir, rel) : dir, { withFileTypes: true });
    } catch {
      unreadableDirs.push(rel);
      return;
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!options.skipDirNames.has(e.name) && !options.skipPaths?.has(path)) await walk(path);
      } else if (e.isFile()) files.push(path);
      else if (e.isSymbolicLink() && options.fileLinks) {
        try {
          if (!(await stat(join(dir, path))).isFile()) continue;
        } catch {
          // dangling: listed, its content reads as missing
        }
        files.push(path);
      }
    }
  };
  await walk('');
  return { files: files.sort(), unreadableDirs: unreadableDirs.sort() };
}
