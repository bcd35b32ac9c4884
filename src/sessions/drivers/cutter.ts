// Cuts one running session on the media server that holds it (docs/callers.md#cutting-sessions):
// picks the configured server, calls its caller's driver with a bounded HTTP exchange, retries
// what may pass with backoff, and reports the outcome. It never throws and is never awaited on a
// decision path.
import type { Logger } from 'pino';
import pRetry from 'p-retry';
import { Agent, request } from 'undici';
import type { MediaServerConfig } from '../../config/schema.js';
import { TrustedProxies } from '../../domain/addresses.js';
import { DriverError, type CutOutcome, type CutTarget, type Driver, type DriverHttp } from './driver.js';
import { mediamtxDriver } from './mediamtx.js';
import { nginxRtmpDriver } from './nginx-rtmp.js';
import { omeDriver } from './ome.js';
import { srsDriver } from './srs.js';

type Caller = MediaServerConfig['caller'];

/** One driver per caller that has a media-server API. */
export const DRIVERS: { readonly [C in Caller]: Driver<Extract<MediaServerConfig, { caller: C }>> } = {
  mediamtx: mediamtxDriver,
  srs: srsDriver,
  ome: omeDriver,
  'nginx-rtmp': nginxRtmpDriver,
};

export interface CutterOptions {
  /** One HTTP exchange's bound (sessions.driverTimeoutMs): connect, headers and body together. */
  timeoutMs: number;
  /** Further attempts after a failure that may pass (sessions.driverRetries). */
  retries: number;
  /** The first backoff; each next one doubles. Default 200 ms. */
  backoffMs?: number;
}

export interface CutterHooks {
  /** Once per cut: what came of it (no_server: no configured server holds the session). */
  onOutcome(caller: string, outcome: CutResult): void;
  logger: Logger;
}

export type CutResult = CutOutcome | 'failed' | 'no_server';

/** Answers read beyond this are cut off: none of the answers used is near it. */
const MAX_BODY_BYTES = 1024 * 1024;

interface Candidate {
  server: MediaServerConfig;
  from: TrustedProxies | undefined;
  /** How the server is named in logs: its name, else its URL's host (never credentials). */
  label: string;
}

export class Cutter {
  private readonly candidates: Candidate[];
  private readonly closing = new AbortController();
  private readonly agent: Agent;
  private readonly http: DriverHttp;

  constructor(
    servers: MediaServerConfig[],
    private readonly opts: CutterOptions,
    private readonly hooks: CutterHooks,
  ) {
    this.candidates = servers.map((server) => ({
      server,
      from: server.from.length > 0 ? new TrustedProxies(server.from) : undefined,
      label: server.name ?? new URL(server.url).host,
    }));
    this.agent = new Agent({ connect: { timeout: opts.timeoutMs }, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });
    this.http = { request: (url, init) => this.exchange(url, init) };
  }

  /** The server holding the session, or undefined when none (or no single one) is configured for it. */
  serverFor(target: CutTarget): MediaServerConfig | undefined {
    return this.pick(target)?.server;
  }

  /** Cuts the session; resolves, never rejects. */
  async cut(target: CutTarget): Promise<CutResult> {
    const picked = this.pick(target);
    if (!picked) {
      this.hooks.logger.debug({ caller: target.caller, session: target.callerSessionId }, 'no media server configured for this session; not cut');
      this.report(target.caller, 'no_server');
      return 'no_server';
    }
    const driver = DRIVERS[picked.server.caller] as Driver;
    let attempts = 0;
    try {
      if (this.closing.signal.aborted) throw new DriverError('shutting down', false);
      const outcome = await pRetry(
        () => {
          attempts++;
          return driver(target, picked.server, this.http);
        },
        {
          retries: this.opts.retries,
          minTimeout: this.opts.backoffMs ?? 200,
          factor: 2,
          signal: this.closing.signal,
          unref: true,
          shouldRetry: ({ error }) => error instanceof DriverError && error.retryable,
        },
      );
      this.hooks.logger.info({ caller: target.caller, server: picked.label, session: target.callerSessionId, outcome }, 'media-server cut answered');
      this.report(target.caller, outcome);
      return outcome;
    } catch (err) {
      this.hooks.logger.warn(
        {
          caller: target.caller,
          server: picked.label,
          session: target.callerSessionId,
          status: err instanceof DriverError ? err.status : undefined,
          attempts,
          err: err instanceof Error ? err.message : String(err),
        },
        'media-server session not cut',
      );
      this.report(target.caller, 'failed');
      return 'failed';
    }
  }

  /** The outcome hook, kept from turning a counted cut into a rejection. */
  private report(caller: string, outcome: CutResult): void {
    try {
      this.hooks.onOutcome(caller, outcome);
    } catch (err) {
      this.hooks.logger.error({ caller, err: (err as Error).message }, 'cut outcome hook failed');
    }
  }

  /** Stops waiting retries and in-flight exchanges: pending cuts resolve 'failed' at once. */
  async close(): Promise<void> {
    this.closing.abort(new DriverError('shutting down', false));
    await this.agent.destroy();
  }

  /**
   * The servers of the target's caller that claim it — every criterion they set matches (`from`
   * holds the hook's address; an SRS `serverId` equals the hook's server_id) — and, when none
   * does, the one server of that caller that sets none.
   */
  private pick(target: CutTarget): Candidate | undefined {
    const mine = this.candidates.filter((c) => c.server.caller === target.caller);
    const serverId = target.native.server_id;
    const claims = (c: Candidate): boolean | undefined => {
      const wantedId = c.server.caller === 'srs' ? c.server.serverId : undefined;
      if (!c.from && wantedId === undefined) return undefined;
      if (c.from && !hasAddress(c.from, target.serverAddress)) return false;
      if (wantedId !== undefined && wantedId !== serverId) return false;
      return true;
    };
    const claimed = mine.filter((c) => claims(c) === true);
    if (claimed.length > 0) return claimed[0];
    const open = mine.filter((c) => claims(c) === undefined);
    return open.length === 1 ? open[0] : undefined;
  }

  /** One bounded HTTP exchange; a transport failure or timeout is a DriverError worth retrying. */
  private async exchange(url: string, init: Parameters<DriverHttp['request']>[1]): Promise<{ status: number; body: string }> {
    // The whole exchange, not only the gaps between bytes, is bounded: a server trickling its
    // answer cannot hold a cut.
    const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    try {
      const r = await request(url, { method: init.method, headers: init.headers, dispatcher: this.agent, signal });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of r.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_BODY_BYTES) {
          r.body.destroy();
          break;
        }
        chunks.push(chunk as Buffer);
      }
      return { status: r.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      if (this.closing.signal.aborted) throw new DriverError('shutting down', false);
      const e = err as NodeJS.ErrnoException;
      const what = e.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs} ms` : (e.code ?? e.name);
      throw new DriverError(`${init.method} ${new URL(url).host}: ${what}`, true);
    }
  }
}

function hasAddress(from: TrustedProxies, address: string | undefined): boolean {
  try {
    return from.has(address);
  } catch {
    return false; // not an address
  }
}
