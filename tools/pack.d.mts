/** Packs `name` (`@kiln/nx`, `@kiln/cli`, …) with its @kiln/* dependencies vendored into `dest`; returns the tarball's path. */
export function packSelfContained(name: string, dest: string): string;
