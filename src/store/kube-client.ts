/**
 * KubeClient: HTTP(S) requests to one upstream Kubernetes API server (a
 * kube-apiserver or another `watchcache serve`), over node:http/https with
 * one keep-alive agent. It knows how to reach and authenticate to the
 * server (bearer token, client certificate, CA, or no verification), not
 * what the requests mean.
 *
 * Failures are mapped once, here:
 * - no answer (refused, reset, timed out, TLS failure) -> StoreUnavailableError (503, Retry-After 1);
 * - an answer with a non-2xx status -> UpstreamStatusError carrying the upstream's own Status
 *   object and code (a body that is not a Status becomes one with the upstream's code and text).
 */
import http from 'node:http';
import https from 'node:https';
import { makeStatus, type Status } from '../core/errors.js';
import { StoreUnavailableError, UpstreamStatusError } from './store-errors.js';

export interface KubeClientOptions {
  /** The server's base URL, e.g. https://127.0.0.1:6443 (a path prefix is kept). */
  server: string;
  /** Bearer token sent on every request. */
  token?: string;
  /** PEM CA bundle that signs the server's certificate (https). */
  ca?: string | Buffer;
  /** PEM client certificate and key (mutual TLS). */
  clientCert?: string | Buffer;
  clientKey?: string | Buffer;
  /** Skip verifying the server's certificate (https). */
  insecureSkipTLSVerify?: boolean;
  /** Deadline of one non-watch request, in ms (default 10000). */
  requestTimeoutMs?: number;
  /**
   * A watch connection that receives nothing for this long is taken as dead (a hung path: NAT
   * timeout, a peer gone without a reset) and dropped, so the watch reconnects (default 300000).
   */
  watchIdleTimeoutMs?: number;
}

export interface KubeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export interface KubeRequest {
  method?: string;
  /** Path below the server URL, e.g. /api/v1/namespaces/default/pods. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: string;
  contentType?: string;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 300_000;

export class KubeClient {
  readonly server: URL;
  private readonly options: KubeClientOptions;
  private readonly agent: http.Agent;
  private readonly requestTimeoutMs: number;
  private readonly watchIdleTimeoutMs: number;

  constructor(options: KubeClientOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new Error(`invalid upstream server URL "${options.server}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`the upstream server URL must be http:// or https://, got "${options.server}"`);
    this.server = url;
    this.options = options;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.watchIdleTimeoutMs = options.watchIdleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    const agentOptions = { keepAlive: true, maxSockets: 64 };
    this.agent =
      url.protocol === 'https:'
        ? new https.Agent({
            ...agentOptions,
            ca: options.ca,
            cert: options.clientCert,
            key: options.clientKey,
            rejectUnauthorized: options.insecureSkipTLSVerify !== true,
          })
        : new http.Agent(agentOptions);
  }

  /** One request with a deadline; resolves with any 2xx answer, else rejects (see the file comment). */
  async request(req: KubeRequest): Promise<KubeResponse> {
    const res = await this.send(req, this.requestTimeoutMs);
    const text = await readAll(res, req);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw upstreamError(status, res.headers, text);
    return { status, headers: res.headers, text };
  }

  /** A JSON request: the parsed 2xx body. */
  async json<T>(req: KubeRequest): Promise<{ status: number; body: T }> {
    const res = await this.request(req);
    try {
      return { status: res.status, body: JSON.parse(res.text) as T };
    } catch {
      throw new StoreUnavailableError(
        `${this.describe(req)}: the upstream answered ${res.status} with a body that is not JSON`,
      );
    }
  }

  /**
   * Open a streaming GET (a watch): resolves with the response once its headers arrived (any
   * status; the caller reads the body). `signal` aborts it. Once the headers are in, the only
   * deadline is watchIdleTimeoutMs without any data.
   */
  stream(req: KubeRequest, signal: AbortSignal): Promise<http.IncomingMessage> {
    return this.send(req, this.requestTimeoutMs, signal, true);
  }

  /** Close idle keep-alive connections (the store is done). */
  close(): void {
    this.agent.destroy();
  }

  describe(req: KubeRequest): string {
    return `${req.method ?? 'GET'} ${this.server.origin}${req.path}`;
  }

  private send(
    req: KubeRequest,
    timeoutMs: number,
    signal?: AbortSignal,
    streaming = false,
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.server.href.replace(/\/$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: http.OutgoingHttpHeaders = { accept: 'application/json' };
    if (this.options.token !== undefined) headers.authorization = `Bearer ${this.options.token}`;
    let body: Buffer | undefined;
    if (req.body !== undefined) {
      body = Buffer.from(req.body);
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const r = mod.request(url, { method: req.method ?? 'GET', headers, agent: this.agent, signal }, (res) => {
        clearTimeout(timer);
        const idleMs = streaming ? this.watchIdleTimeoutMs : timeoutMs;
        res.setTimeout(idleMs, () => res.destroy(new Error(`no data for ${idleMs} ms`)));
        resolve(res);
      });
      // Deadline until the response headers (the whole request for non-streaming ones, see readAll).
      const timer = setTimeout(() => r.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      r.on('error', (err) => {
        clearTimeout(timer);
        reject(
          new StoreUnavailableError(`${this.describe(req)}: the upstream is unreachable: ${err.message}`, {
            cause: err,
          }),
        );
      });
      r.end(body);
    });
  }
}

function readAll(res: http.IncomingMessage, req: KubeRequest): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', (err) =>
      reject(
        new StoreUnavailableError(`${req.method ?? 'GET'} ${req.path}: the upstream answer broke off: ${err.message}`, {
          cause: err,
        }),
      ),
    );
  });
}

/** The error of a non-2xx answer: the upstream's Status as it is, or one made from the status line. */
export function upstreamError(code: number, headers: http.IncomingHttpHeaders, text: string): UpstreamStatusError {
  const retryHeader = headers['retry-after'];
  const retryAfter = retryHeader !== undefined && /^\d+$/.test(String(retryHeader)) ? Number(retryHeader) : undefined;
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(text) as Partial<Status>;
    if (parsed !== null && typeof parsed === 'object' && parsed.kind === 'Status') status = parsed as Status;
  } catch {
    // not JSON: made up below
  }
  status ??= makeStatus(
    code,
    http.STATUS_CODES[code]?.replace(/\s+/g, '') ?? 'Unknown',
    text.trim() === '' ? `the upstream answered ${code}` : text.trim().slice(0, 1000),
  );
  return new UpstreamStatusError(code, status, retryAfter);
}
