// @yarnpkg/lockfile (the classic yarn.lock parser) ships no types; only what workspace/lockfile.ts calls.
declare module '@yarnpkg/lockfile' {
  /** `success`; `merge` when conflict markers could be merged; `conflict` when they could not. */
  interface ParseResult {
    type: 'success' | 'merge' | 'conflict';
    /** Descriptor (`name@range`) → entry; the descriptors of one entry share the object. */
    object: Record<string, unknown>;
  }
  /** Throws a SyntaxError on malformed input. */
  function parse(text: string, fileLoc?: string): ParseResult;
  const lockfile: { parse: typeof parse };
  export default lockfile;
  export { parse };
}
