// The two npm libraries key/opaque.ts uses ship no types; only what it calls is declared here.
declare module 'npm-packlist' {
  /** The part of an @npmcli/arborist Node that npm-packlist 10 reads for a root package. */
  interface PackTree {
    path: string;
    package: Record<string, unknown>;
    isProjectRoot: boolean;
    edgesOut: Map<string, unknown>;
    workspaces?: Map<string, string>;
  }
  /** The files `npm pack` would put in the tarball, relative to the package root. */
  function packlist(tree: PackTree, options?: { path?: string; prefix?: string; workspaces?: string[] }): Promise<string[]>;
  export default packlist;
}

declare module 'npm-normalize-package-bin' {
  /** Normalises `bin` in place (string or array → object; targets made relative); returns the manifest. */
  function normalize<T extends Record<string, unknown>>(pkg: T): T;
  export default normalize;
}
