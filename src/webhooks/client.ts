// Sends one webhook POST and reports what happened as data, so the delivery queue can record it;
// the address guard runs when a socket is opened, which is the only check DNS rebinding cannot dodge.
import dns from 'node:dns';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector, request } from 'undici';
import { addressProblem, resolvesTo, urlProblem } from './guard.js';
import { copyWith } from '../domain/objects.js';
import { ConfigError, readFailure } from '../config/load.js';

export interface DeliveryOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  caFile?: string;
}

export interface DeliveryResult {
  statusCode?: number;
  error?: string;
  durationMs: number;
}

// Enough of a receiver's reply to let the connection go back to the pool; anything longer is cut
// off (the socket is closed) rather than buffered for nobody.
const RESPONSE_DRAIN_LIMIT = 64 * 1024;

const REFUSED = 'ERR_WEBHOOK_TARGET_REFUSED';

function refusedError(message: string): Error {
  return Object.assign(new Error(`refused: ${message}`), { code: REFUSED });
}

/**
 * net.connect calls this instead of dns.lookup (only for names, never for IP literals). All
 * addresses are judged, not just the one used, so a name with one private record is refused the
 * same way at create time and at delivery time.
 */
function guardedLookup(
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
): void {
  dns.lookup(hostname, copyWith(options, { all: true }), (err, addresses) => {
    if (err) return callback(err, '');
    for (const { address } of addresses) {
      const problem = addressProblem(address);
      if (problem !== null) return callback(refusedError(`${hostname} ${resolvesTo(problem)}`), '');
    }
    if (addresses.length === 0) {
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    return callback(null, first.address, first.family);
  });
}

function loadCa(caFile: string): string[] {
  let pem: string;
  try {
    pem = fs.readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new ConfigError(`webhooks.caFile: cannot read ${caFile}: ${readFailure(err)}`);
  }
  // Passing `ca` replaces Node's default trust store, so the public roots are added back.
  return [...tls.rootCertificates, pem];
}

/** The error text for the deliveries log: what failed, never what was sent. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  let message = err.message;
  // Happy Eyeballs (autoSelectFamily) reports a failure on every address as an AggregateError
  // with an empty message; the individual errors say what happened.
  if (message === '' && err instanceof AggregateError) {
    message = err.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ');
  }
  if (message === '') message = err.name;
  if (code && code !== REFUSED && !message.includes(code)) message = `${message} (${code})`;
  return message;
}

export class WebhookClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(opts: DeliveryOptions) {
    this.timeoutMs = opts.timeoutMs;
    const connectTls = buildConnector({
      timeout: opts.timeoutMs,
      ...(opts.caFile ? { ca: loadCa(opts.caFile) } : {}),
      ...(opts.allowPrivateTargets ? {} : { lookup: guardedLookup }),
    });
    const allowPrivate = opts.allowPrivateTargets;
    this.agent = new Agent({
      connect: (connectOpts, callback) => {
        // net.connect skips the lookup for an IP literal, so a literal is judged here, before
        // any socket exists.
        if (!allowPrivate && net.isIP(connectOpts.hostname) !== 0) {
          const problem = addressProblem(connectOpts.hostname);
          if (problem !== null) {
            callback(refusedError(problem), null);
            return;
          }
        }
        connectTls(connectOpts, callback);
      },
    });
  }

  /**
   * POSTs `body` as is. Never throws and never logs: every outcome is in the result. `signal`
   * cuts the attempt short (shutdown); the result then says `aborted`.
   */
  async post(url: string, body: Buffer, headers: Record<string, string>, signal?: AbortSignal): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // The shape rules are re-checked because a stored URL may predate them; addresses are
    // judged at connect time, where the resolved address is known.
    const shape = urlProblem(url, true);
    if (shape !== null) return { error: `invalid url: ${shape}`, durationMs: elapsed() };

    if (signal?.aborted) return { error: 'aborted', durationMs: elapsed() };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    const stop = () => abort.abort();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: 'POST',
        body,
        headers,
        signal: abort.signal,
      });
      try {
        await res.body.dump({ limit: RESPONSE_DRAIN_LIMIT });
      } catch {
        // The status is the receiver's answer; a reply body that breaks off does not change it.
      }
      return { statusCode: res.statusCode, durationMs: elapsed() };
    } catch (err) {
      if (signal?.aborted) return { error: 'aborted', durationMs: elapsed() };
      if (abort.signal.aborted) return { error: `timeout after ${this.timeoutMs} ms`, durationMs: elapsed() };
      return { error: describeError(err), durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
    }
  }

  /**
   * Closes every connection at once. Called once the dispatcher has stopped, so nothing in flight
   * is still wanted; a graceful close would wait on receivers that never finish their side.
   */
  async close(): Promise<void> {
    try {
      await this.agent.destroy();
    } catch {
      // Closing twice, or while a connection is failing, leaves nothing to clean up.
    }
  }
}
