/**
 * The tag kiln gives every project with a keyed target. One constant for the two that must agree on
 * it: the plugin applies it (index.ts), `nx g @kiln/nx:init` filters its target defaults on it
 * (generators/init/lib/target-defaults.ts). Renaming it strands every nx.json written with the old one.
 */
export const KILN_KEYED_TAG = 'kiln-keyed';
