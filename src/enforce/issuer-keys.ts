// The public keys of credential issuers (docs/api.md#credential-issuers): inline JWKs from the
// record, and JWKS URLs fetched through the webhooks' SSRF guard (never jose's own remote set, which
// would connect anywhere), bounded in size, keys and time, cached per URL by Cache-Control, kept
// through a failed refresh, and refetched for an unknown key id at most once per cooldown.
import dns from 'node:dns';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { Agent, buildConnector, request } from 'undici';
import type { JWK } from 'jose';
import { addressProblem, resolvesTo, urlProblem } from '../webhooks/guard.js';
import { copyWith } from '../domain/objects.js';
import type { IssuerRecord } from '../domain/issuers.js';
import { publicJwks, type IssuerKeySource } from '../policy/issuer-jwt.js';
import { ConfigError, readFailure } from '../config/load.js';
import type { Config } from '../config/schema.js';

/**
 * The key source's settings: config `issuers` as loaded (its defaults and bounds in
 * src/config/schema.ts; jwksCaFile '' trusts no extra CA), and for tests a clock and a fetch.
 */
export type IssuerKeysOptions = Omit<Config['issuers'], 'memoEntries' | 'maxPerAccount' | 'jwksCaFile' | 'keyDir' | 'keyEnvPrefix' | 'keyReloadSeconds'> & {
  jwksCaFile?: string;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** How a JWKS URL is fetched (default: guardedJwksFetch with these options). */
  fetch?: JwksFetch;
};

/** A JWKS document as fetched: parsed JSON and the Cache-Control max-age, when it has one. */
export interface JwksResponse {
  body: unknown;
  maxAgeSeconds: number | null;
}

/** Fetches one JWKS URL, honouring `signal`; rejects with an Error whose message says what failed. */
export type JwksFetch = (url: string, signal: AbortSignal) => Promise<JwksResponse>;

/** JWKS URLs whose state is kept; beyond it the least recently used is forgotten (and fetched again when asked). */
const MAX_URLS = 1000;
/** Issuers whose inline keys are kept parsed (by id and rev). */
const MAX_INLINE = 5000;

// ---- the guarded fetch ----------------------------------------------------------------------

/** The allow-list as names and ranges; entries are validated by the configuration schema. */
export interface PrivateHosts {
  names: Set<string>;
  ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]>;
}

export function parsePrivateHosts(entries: readonly string[]): PrivateHosts {
  const names = new Set<string>();
  const ranges: PrivateHosts['ranges'] = [];
  for (const raw of entries) {
    const e = raw.trim().toLowerCase();
    if (ipaddr.isValidCIDR(e)) ranges.push(ipaddr.parseCIDR(e));
    else if (ipaddr.isValid(e)) {
      const a = ipaddr.parse(e);
      ranges.push([a, a.kind() === 'ipv4' ? 32 : 128]);
    } else names.add(e.replace(/^\[|\]$/g, ''));
  }
  return { names, ranges };
}

function inRanges(address: string, ranges: PrivateHosts['ranges']): boolean {
  if (!ipaddr.isValid(address)) return false;
  const a = ipaddr.process(address);
  return ranges.some(([net_, bits]) => a.kind() === net_.kind() && a.match([net_, bits] as never));
}

/** The guard's verdict on one address a JWKS URL connects to: public, or on the allow-list. */
function jwksAddressProblem(address: string, allowed: PrivateHosts): string | null {
  const problem = addressProblem(address);
  return problem === null || inRanges(address, allowed.ranges) ? null : problem;
}

/**
 * The `jwksUrl` rule at create/update and before every fetch, as a problem or null: the webhook
 * URL's shape (https, no credentials), and an IP literal judged at once; a name is judged on every
 * address it resolves to when the fetch connects.
 */
export function jwksUrlProblem(raw: string, allowPrivateJwksHosts: readonly string[]): string | null {
  const shape = urlProblem(raw, true);
  if (shape !== null) return shape;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host) === 0) return null;
  const problem = jwksAddressProblem(host, parsePrivateHosts(allowPrivateJwksHosts));
  return problem === null ? null : resolvesTo(problem);
}

const refused = (message: string): Error => Object.assign(new Error(`refused: ${message}`), { code: 'ERR_JWKS_TARGET_REFUSED' });

/** The Cache-Control max-age in seconds; null without one (or with no-store / no-cache, which cache nothing a refetch could not replace). */
export function maxAgeOf(cacheControl: string | string[] | undefined): number | null {
  const v = Array.isArray(cacheControl) ? cacheControl.join(',') : cacheControl;
  if (!v) return null;
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(v)) return null;
  const m = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(v);
  return m ? Number(m[1]) : null;
}

/**
 * A JWKS fetcher that reaches only public addresses, or those of the allow-list: https only, no
 * credentials in the URL, no redirect followed, every address of a name judged when the socket
 * is opened (the only check DNS rebinding cannot dodge), at most `maxBytes` read.
 */
export function guardedJwksFetch(o: { allowPrivateJwksHosts: readonly string[]; jwksMaxBytes: number; jwksTimeoutMs: number; jwksCaFile?: string }): { fetch: JwksFetch; close: () => Promise<void> } {
  const allowed = parsePrivateHosts(o.allowPrivateJwksHosts);
  const lookup = (hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void): void => {
    dns.lookup(hostname, copyWith(options, { all: true }), (err, addresses) => {
      if (err) return callback(err, '');
      if (!allowed.names.has(hostname.toLowerCase())) {
        for (const { address } of addresses) {
          const problem = jwksAddressProblem(address, allowed);
          if (problem !== null) return callback(refused(`${hostname} ${resolvesTo(problem)}`), '');
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
  let ca: string[] | undefined;
  if (o.jwksCaFile) {
    try {
      // Passing `ca` replaces Node's default trust store, so the public roots are added back.
      ca = [...tls.rootCertificates, fs.readFileSync(o.jwksCaFile, 'utf8')];
    } catch (err) {
      throw new ConfigError(`issuers.jwksCaFile: cannot read ${o.jwksCaFile}: ${readFailure(err)}`);
    }
  }
  const connect = buildConnector({ timeout: o.jwksTimeoutMs, lookup, ...(ca ? { ca } : {}) });
  const agent = new Agent({
    connect: (connectOpts, callback) => {
      // net.connect skips the lookup for an IP literal, so a literal is judged here, before any socket exists.
      const host = connectOpts.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(host) !== 0 && !allowed.names.has(host.toLowerCase())) {
        const problem = jwksAddressProblem(host, allowed);
        if (problem !== null) return callback(refused(problem), null);
      }
      connect(connectOpts, callback);
    },
  });

  const fetchJwks: JwksFetch = async (url, signal) => {
    const shape = urlProblem(url, true);
    if (shape !== null) throw new Error(`the JWKS URL ${shape}`);
    const res = await request(url, { dispatcher: agent, method: 'GET', headers: { accept: 'application/json' }, signal });
    if (res.statusCode !== 200) {
      await res.body.dump({ limit: 4096 }).catch(() => undefined);
      throw new Error(`the JWKS URL answered ${res.statusCode}`);
    }
    const declared = Number(res.headers['content-length']);
    const tooLarge = `the JWKS is larger than ${o.jwksMaxBytes} bytes`;
    if (Number.isFinite(declared) && declared > o.jwksMaxBytes) {
      res.body.destroy();
      throw new Error(tooLarge);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += (chunk as Buffer).length;
      if (size > o.jwksMaxBytes) {
        res.body.destroy();
        throw new Error(tooLarge);
      }
      chunks.push(chunk as Buffer);
    }
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new Error('the JWKS is not JSON');
    }
    return { body, maxAgeSeconds: maxAgeOf(res.headers['cache-control']) };
  };
  return {
    fetch: fetchJwks,
    close: async () => {
      await agent.destroy().catch(() => undefined);
    },
  };
}

// ---- the key source -------------------------------------------------------------------------

interface UrlState {
  /** The last good set (null: none yet). */
  keys: readonly JWK[] | null;
  /** Until when (ms) the set is fresh; past it, a refresh starts in the background. */
  freshUntil: number;
  /** When the last fetch started (ms): the refetch cooldown counts from it. */
  lastAttempt: number;
  /** Why the last fetch failed, while no later one succeeded. */
  lastError: string | null;
  inFlight: Promise<void> | null;
}

/**
 * An issuer's keys: its inline JWKs and its JWKS URL's, one state per URL. A fresh set is answered
 * at once; a URL with no set yet, a set past its max-age, or a kid no key has makes a caller wait,
 * on the one fetch in flight for that URL (shared by every caller, never for another URL), at most
 * the timeout. A fetch that fails keeps the last good set, used as it is until the cooldown allows
 * the next attempt.
 */
export class IssuerKeys implements IssuerKeySource {
  private readonly urls = new LRUCache<string, UrlState>({ max: MAX_URLS });
  private readonly inline = new LRUCache<string, { keys: readonly JWK[] } | { problem: string }>({ max: MAX_INLINE });
  private readonly now: () => number;
  private readonly fetchJwks: JwksFetch;
  private readonly closeFetch: () => Promise<void>;
  /** Fetches started, all URLs together (tests and metrics read it). */
  fetches = 0;

  constructor(private readonly o: IssuerKeysOptions) {
    this.now = o.now ?? (() => Date.now());
    if (o.fetch) {
      this.fetchJwks = o.fetch;
      this.closeFetch = async () => undefined;
    } else {
      const f = guardedJwksFetch(o);
      this.fetchJwks = f.fetch;
      this.closeFetch = f.close;
    }
  }

  async keysFor(issuer: IssuerRecord, kid: string | null): Promise<{ keys: readonly JWK[] } | { problem: string }> {
    const inline = this.inlineKeys(issuer);
    if ('problem' in inline) return { problem: `inline jwks: ${inline.problem}` };
    if (issuer.jwksUrl === null) return inline.keys.length > 0 ? inline : { problem: 'the issuer has no public keys' };
    const has = (keys: readonly JWK[]) => kid === null || keys.some((k) => k.kid === kid);
    if (inline.keys.length > 0 && kid !== null && has(inline.keys)) return inline;

    const url = issuer.jwksUrl;
    const state = this.stateOf(url);
    const now = this.now();
    if (state.keys === null) {
      if (!state.inFlight && this.mayFetch(state, now)) this.start(url, state);
      if (state.inFlight) await state.inFlight;
    } else if (now >= state.freshUntil) {
      // Past its max-age a set is not trusted without asking again (a key dropped from it must stop
      // verifying): the refresh is waited for, one per cooldown; a failed one keeps the last set.
      if (!state.inFlight && this.mayFetch(state, now)) this.start(url, state);
      if (state.inFlight) await state.inFlight;
    }
    if (state.keys !== null && !has([...inline.keys, ...state.keys])) {
      // An unknown kid (a key rotated in): one refetch per cooldown, shared by every caller.
      if (!state.inFlight && this.mayFetch(state, this.now())) this.start(url, state);
      if (state.inFlight) await state.inFlight;
    }
    if (state.keys === null) {
      return inline.keys.length > 0 ? inline : { problem: `the JWKS URL has no usable key set yet: ${state.lastError ?? 'not fetched'}` };
    }
    return { keys: inline.keys.length > 0 ? [...inline.keys, ...state.keys] : state.keys };
  }

  keysNow(issuer: IssuerRecord, kid: string | null): { keys: readonly JWK[] } | undefined {
    const inline = this.inlineKeys(issuer);
    if ('problem' in inline) return undefined;
    const has = (keys: readonly JWK[]) => kid === null || keys.some((k) => k.kid === kid);
    if (issuer.jwksUrl === null) return inline.keys.length > 0 && has(inline.keys) ? inline : undefined;
    if (inline.keys.length > 0 && kid !== null && has(inline.keys)) return inline;
    const state = this.urls.get(issuer.jwksUrl);
    if (state === undefined || state.keys === null || this.now() >= state.freshUntil) return undefined;
    if (!has(inline.keys.length > 0 ? [...inline.keys, ...state.keys] : state.keys)) return undefined;
    return { keys: inline.keys.length > 0 ? [...inline.keys, ...state.keys] : state.keys };
  }

  /** Closes the fetcher's connections. */
  async close(): Promise<void> {
    await this.closeFetch();
  }

  private inlineKeys(issuer: IssuerRecord): { keys: readonly JWK[] } | { problem: string } {
    if (issuer.jwks === null) return { keys: [] };
    const key = `${issuer.id}:${issuer.rev}`;
    let parsed = this.inline.get(key);
    if (!parsed) {
      parsed = publicJwks(issuer.jwks, this.o.jwksMaxKeys);
      this.inline.set(key, parsed);
    }
    return parsed;
  }

  private stateOf(url: string): UrlState {
    let s = this.urls.get(url);
    if (!s) {
      s = { keys: null, freshUntil: 0, lastAttempt: Number.NEGATIVE_INFINITY, lastError: null, inFlight: null };
      this.urls.set(url, s);
    }
    return s;
  }

  private mayFetch(s: UrlState, now: number): boolean {
    return now - s.lastAttempt >= this.o.jwksRefetchCooldownSeconds * 1000;
  }

  /** Starts the one fetch of `url`; its outcome lands in `state` (the last good set survives a failure). */
  private start(url: string, state: UrlState): Promise<void> {
    state.lastAttempt = this.now();
    this.fetches++;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.o.jwksTimeoutMs);
    state.inFlight = (async () => {
      try {
        const res = await this.fetchWithin(url, abort);
        const set = publicJwks(res.body, this.o.jwksMaxKeys);
        if ('problem' in set) throw new Error(`the JWKS: ${set.problem}`);
        state.keys = set.keys;
        state.lastError = null;
        const age = Math.min(Math.max(res.maxAgeSeconds ?? this.o.jwksMinCacheSeconds, this.o.jwksMinCacheSeconds), this.o.jwksMaxCacheSeconds);
        state.freshUntil = this.now() + age * 1000;
      } catch (e) {
        state.lastError = abort.signal.aborted ? `no answer within ${this.o.jwksTimeoutMs} ms` : (e as Error).message;
      } finally {
        clearTimeout(timer);
        state.inFlight = null;
      }
    })();
    return state.inFlight;
  }

  /** The fetch, settled by the timeout even if the fetcher ignores its signal. */
  private fetchWithin(url: string, abort: AbortController): Promise<JwksResponse> {
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error('aborted'));
      abort.signal.addEventListener('abort', onAbort, { once: true });
      this.fetchJwks(url, abort.signal).then(resolve, reject).finally(() => abort.signal.removeEventListener('abort', onAbort));
    });
  }
}
