export interface CacheServerOptions {
  /** Where blobs are stored; default: a new temp dir, removed by close(). */
  dir?: string;
  /** Read-write bearer token. With neither token nor readOnlyToken, no auth is required. */
  token?: string | null;
  /** A token that may GET but not PUT (PUT → 403). */
  readOnlyToken?: string | null;
  /** Default 0: an ephemeral port. The server always binds 127.0.0.1. */
  port?: number;
  /** Largest accepted record in bytes (default 512 MiB). */
  maxBytes?: number;
  /** Log each request to stderr. */
  log?: boolean;
}

export interface CacheRequestRecord {
  method: string;
  hash: string | null;
  status: number;
  /** Body bytes sent (GET) or received (PUT). */
  bytes: number;
}

export interface CacheServer {
  url: string;
  port: number;
  dir: string;
  token: string | null;
  readOnlyToken: string | null;
  /** Every request served so far, in arrival order. */
  requests: CacheRequestRecord[];
  /** NX_SELF_HOSTED_REMOTE_CACHE_SERVER (+ NX_SELF_HOSTED_REMOTE_CACHE_ACCESS_TOKEN when a token is set). */
  env: Record<string, string>;
  /** Hashes currently stored, sorted. */
  hashes(): Promise<string[]>;
  resetRequests(): void;
  /** Stops listening, drops open connections, removes the blob dir if the server created it. */
  close(): Promise<void>;
}

export function startCacheServer(options?: CacheServerOptions): Promise<CacheServer>;
