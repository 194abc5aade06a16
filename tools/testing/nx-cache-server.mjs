// A minimal Nx self-hosted remote cache server, for tests.
//
// Implements the HTTP API that Nx (>= 20.8) speaks when NX_SELF_HOSTED_REMOTE_CACHE_SERVER is set
// (the OpenAPI document "Nx custom remote cache specification", nx.dev, "self-hosted caching"):
//
//   PUT /v1/cache/{hash}   body: the task's tar.gz (application/octet-stream), Content-Length required
//                          200 stored · 400 missing/invalid Content-Length or body length mismatch
//                          401 missing/invalid token · 403 token may not write · 409 record exists
//   GET /v1/cache/{hash}   200 the stored bytes · 401 · 403 · 404 no such record
//   Authorization: Bearer <token>   (NX_SELF_HOSTED_REMOTE_CACHE_ACCESS_TOKEN on the Nx side)
//
// Nx's client (Rust, `HttpRemoteCache` in nx/src/native/cache/http_remote_cache.rs) treats PUT 200 as
// stored, 409 and 403 as "silently not stored", anything else as an error; GET 200 as a hit, 404 as
// a miss, anything else as an error. Records are immutable: a hash is written once.
//
// Blobs live in a directory (a fresh temp dir unless `dir` is given), one file per hash, written to
// a temp name and hard-linked into place, so a concurrent GET never sees a partial record and two
// racing PUTs of one hash give exactly one 200 and one 409. The server binds to 127.0.0.1 only, on
// an ephemeral port unless `port` is given.
//
// Use from tests:   const server = await startCacheServer({ token: 'secret' });
//                   runNx(..., { env: server.env }); ...; await server.close();
// Use by hand:      node tools/testing/nx-cache-server.mjs [--port N] [--dir D] [--token T] [--read-only-token R]
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { link, mkdir, mkdtemp, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A hash is a path segment we store as a file name: keep it to a safe alphabet, never `.`/`..`. */
const HASH_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const ROUTE_RE = /^\/v1\/cache\/([^/?#]+)\/?$/;
/** Upper bound for one record, so a broken client cannot fill the disk: 512 MiB. */
const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/**
 * @typedef {object} CacheServerOptions
 * @property {string} [dir] where blobs are stored; default: a new temp dir, removed by close()
 * @property {string | null} [token] read-write bearer token; null/undefined and no readOnlyToken = no auth
 * @property {string | null} [readOnlyToken] a token that may GET but not PUT (PUT → 403)
 * @property {number} [port] default 0 (ephemeral)
 * @property {number} [maxBytes] largest accepted record
 * @property {boolean} [log] log each request to stderr
 */

/**
 * @typedef {object} CacheRequestRecord
 * @property {'GET'|'PUT'|string} method
 * @property {string | null} hash
 * @property {number} status
 * @property {number} bytes body bytes sent (GET) or received (PUT)
 */

/**
 * Starts the server. Resolves once it is listening.
 * @param {CacheServerOptions} [options]
 */
export async function startCacheServer(options = {}) {
  const ownsDir = !options.dir;
  const dir = options.dir ? resolve(options.dir) : await mkdtemp(join(tmpdir(), 'kiln-nx-cache-'));
  await mkdir(dir, { recursive: true });
  const tmpDir = join(dir, '.incoming');
  await mkdir(tmpDir, { recursive: true });
  const token = options.token ?? null;
  const readOnlyToken = options.readOnlyToken ?? null;
  const authRequired = token !== null || readOnlyToken !== null;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  /** @type {CacheRequestRecord[]} */
  const requests = [];

  /** @returns {'rw' | 'ro' | null} what the request may do, null when it is not authenticated. */
  function access(req) {
    if (!authRequired) return 'rw';
    const header = req.headers.authorization ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m) return null;
    const given = m[1].trim();
    if (token !== null && given === token) return 'rw';
    if (readOnlyToken !== null && given === readOnlyToken) return 'ro';
    return null;
  }

  function send(res, record, status, body = '', headers = {}) {
    record.status = status;
    const buf = Buffer.from(body);
    res.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(buf.length),
      ...headers,
    });
    res.end(buf);
  }

  async function handleGet(req, res, record, file) {
    let info;
    try {
      info = await stat(file);
    } catch {
      return send(res, record, 404, 'The record was not found');
    }
    record.status = 200;
    record.bytes = info.size;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(info.size) });
    if (req.method === 'HEAD') return res.end();
    await new Promise((done) => {
      const stream = createReadStream(file);
      stream.on('error', () => {
        res.destroy();
        done();
      });
      res.on('close', done);
      stream.pipe(res);
    });
  }

  async function handlePut(req, res, record, file) {
    const declared = req.headers['content-length'];
    if (declared === undefined || !/^\d+$/.test(declared)) {
      req.resume();
      return send(res, record, 400, 'Missing or invalid Content-Length header');
    }
    const length = Number(declared);
    if (length > maxBytes) {
      req.resume();
      return send(res, record, 413, `Record larger than ${maxBytes} bytes`);
    }
    try {
      await stat(file);
      req.resume();
      return send(res, record, 409, 'Cannot override an existing record');
    } catch {
      /* not there yet: store it */
    }
    const tmp = join(tmpDir, `${record.hash}.${process.pid}.${randomBytes(6).toString('hex')}`);
    const handle = await open(tmp, 'wx');
    let received = 0;
    try {
      for await (const chunk of req) {
        received += chunk.length;
        if (received > length) break;
        await handle.write(chunk);
      }
    } catch (e) {
      // The client went away mid-upload: keep nothing.
      await handle.close();
      await unlink(tmp).catch(() => {});
      record.status = 499;
      res.destroy();
      return;
    }
    await handle.close();
    record.bytes = received;
    if (received !== length) {
      await unlink(tmp).catch(() => {});
      return send(res, record, 400, `Body length ${received} does not match Content-Length ${length}`);
    }
    try {
      await link(tmp, file); // fails with EEXIST if a racing PUT won: records are immutable
    } catch (e) {
      await unlink(tmp).catch(() => {});
      if (e && e.code === 'EEXIST') return send(res, record, 409, 'Cannot override an existing record');
      throw e;
    }
    await unlink(tmp).catch(() => {});
    return send(res, record, 200);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTE_RE.exec(url.pathname);
    /** @type {CacheRequestRecord} */
    const record = { method: req.method ?? '', hash: route ? decodeURIComponent(route[1]) : null, status: 0, bytes: 0 };
    requests.push(record);
    const done = () => {
      if (options.log) process.stderr.write(`[nx-cache-server] ${record.method} ${url.pathname} -> ${record.status}\n`);
    };
    const fail = (e) => {
      if (!res.headersSent) send(res, record, 500, `Internal error: ${e?.message ?? e}`);
      else res.destroy();
    };
    (async () => {
      if (!route) {
        req.resume();
        return send(res, record, 404, 'Not found');
      }
      if (!['GET', 'HEAD', 'PUT'].includes(req.method ?? '')) {
        req.resume();
        return send(res, record, 405, 'Method not allowed', { allow: 'GET, HEAD, PUT' });
      }
      const who = access(req);
      if (who === null) {
        req.resume();
        return send(res, record, 401, 'Missing or invalid authentication token.');
      }
      if (!HASH_RE.test(record.hash ?? '')) {
        req.resume();
        return send(res, record, 400, 'Invalid hash');
      }
      const file = join(dir, /** @type {string} */ (record.hash));
      if (req.method === 'PUT') {
        if (who !== 'rw') {
          req.resume();
          return send(res, record, 403, 'Access forbidden: this token is read-only.');
        }
        return handlePut(req, res, record, file);
      }
      return handleGet(req, res, record, file);
    })()
      .catch(fail)
      .finally(done);
  });
  // No idle keep-alive sockets outliving the test; bounded request time.
  server.keepAliveTimeout = 1000;
  server.requestTimeout = 60_000;

  await new Promise((ok, ko) => {
    server.once('error', ko);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', ko);
      ok(undefined);
    });
  });
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const url = `http://127.0.0.1:${address.port}`;
  let closed = false;

  return {
    url,
    port: address.port,
    dir,
    token,
    readOnlyToken,
    /** Every request served so far, in arrival order. */
    requests,
    /** The environment Nx needs to use this server (token omitted when auth is off). */
    env: {
      NX_SELF_HOSTED_REMOTE_CACHE_SERVER: url,
      ...(token !== null ? { NX_SELF_HOSTED_REMOTE_CACHE_ACCESS_TOKEN: token } : {}),
    },
    /** Hashes currently stored. */
    async hashes() {
      return (await readdir(dir)).filter((n) => HASH_RE.test(n)).sort();
    },
    /** Forget the request log (records stay). */
    resetRequests() {
      requests.length = 0;
    },
    /** Stops listening, drops open connections, removes the blob dir if this server created it. */
    async close() {
      if (closed) return;
      closed = true;
      await new Promise((ok) => {
        server.close(() => ok(undefined));
        server.closeAllConnections();
      });
      if (ownsDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--port') out.port = Number(next());
    else if (a === '--dir') out.dir = next();
    else if (a === '--token') out.token = next();
    else if (a === '--read-only-token') out.readOnlyToken = next();
    else if (a === '--quiet') out.log = false;
    else throw new Error(`unknown argument ${a}`);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const server = await startCacheServer({ log: true, ...parseArgs(process.argv.slice(2)) });
  process.stdout.write(`NX_SELF_HOSTED_REMOTE_CACHE_SERVER=${server.url}\n`);
  if (server.token) process.stdout.write(`NX_SELF_HOSTED_REMOTE_CACHE_ACCESS_TOKEN=${server.token}\n`);
  process.stderr.write(`[nx-cache-server] storing in ${server.dir}; Ctrl-C to stop\n`);
  const stop = () => server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
