// nginx auth_request, Traefik forwardAuth, Envoy ext_authz (HTTP): the original request arrives
// as headers (X-Original-URI / X-Forwarded-Uri) or as a path suffix (Envoy path_prefix). Allow is
// exactly 200 with x-streamgate-* headers for auth_request_set; deny is 401/403 only.
import type { SignedFacts, SignedPresentation } from '../contracts/signed.js';
import type { Request } from 'express';
import RE2 from 're2';
import { z } from 'zod';
import { bearer } from '../http/client.js';
import { clientAddress, requestOrigin, trustedCountry } from '../http/client.js';
import { safeRequestPath } from '../domain/paths.js';
import { LRUCache } from 'lru-cache';
import { parse as parseCookie } from 'cookie';
import type { Reason } from '../contracts/decision.js';
import type { CredentialCheck, ViewerSessionRef } from '../contracts/viewer-credential.js';
import type { Caller, CallerContext, CallerRoute, Outcome, Reply, ViewerCredentials } from './caller.js';
import { andThen, nameable, perConfig, queryValue, refusalBody, refusalStatus, tokenFromQuery } from './shared.js';
import type { StreamPatternEntry } from '../config/schema.js';
import { copyWith } from '../domain/objects.js';

const PREFIX = '/hooks/auth-request';

/**
 * The original path and query, from the forwarding headers or the path suffix. Every source that
 * is present must say the same: a client can add an X-Original-URI that Traefik copies through
 * beside its own X-Forwarded-Uri, or one that an Envoy forwarding every header passes beside the
 * real path; deciding on the client's copy would judge a path the proxy does not serve.
 */
export function originalUri(req: Request): string | undefined | { conflict: true } {
  const url = req.originalUrl;
  let found: string | undefined;
  for (const v of [req.headers['x-original-uri'], req.headers['x-forwarded-uri'], url.startsWith(`${PREFIX}/`) ? url.slice(PREFIX.length) : undefined]) {
    if (v === undefined || v === '') continue;
    if (found === undefined) found = v as string; // a repeated header: node's one joined value
    else if (v !== found) return { conflict: true };
  }
  return found;
}

/** A CORS preflight of a method-aware pattern's path: allowed with nothing decided, counted or logged as a decision. */
const PREFLIGHT: Outcome = { reply: { status: 200, headers: [['cache-control', 'no-store']], json: { allowed: true, preflight: true } } };

/** No stream can be named from the original URI: nothing can be allowed (a denial, never a 404 or 5xx). */
const NO_STREAM: Outcome = { reply: { status: 403, json: refusalBody('stream_not_allowed') } };

const PROTOCOL_BY_EXT: Array<[RegExp, string]> = [
  [/\.(m3u8|ts|m4s|aac)$/i, 'hls'],
  [/\.mpd$/i, 'dash'],
  [/\.flv$/i, 'http-flv'],
];

/**
 * What an original request (its method, its path without the query) names: its stream, account,
 * protocol, the action its pattern asks for, and whether the path is a session resource; a CORS
 * preflight of a method-aware pattern's path; or why it names nothing.
 */
type PathReading =
  | { streamName: string; accountId: string | undefined; protocol: string; action: 'publish' | 'subscribe'; resource: boolean }
  | { preflight: true }
  | { problem: string | undefined };

interface CompiledPattern {
  re: RE2;
  action: 'publish' | 'subscribe';
  /** The methods it is for (undefined: any); an object pattern with methods answers its paths' preflights. */
  methods: ReadonlySet<string> | undefined;
  resource: boolean;
}

function compile(p: string | StreamPatternEntry, defaultAction: 'publish' | 'subscribe'): CompiledPattern {
  if (typeof p === 'string') return { re: new RE2(p, 'u'), action: defaultAction, methods: undefined, resource: false };
  return { re: new RE2(p.pattern, 'u'), action: p.action ?? defaultAction, methods: p.methods && new Set(p.methods), resource: p.resource === true };
}

/**
 * The reading of an original request, remembered by method and path: every viewer of a stream asks
 * for the same playlist and segment paths, and checking a path and trying the stream patterns on
 * it (RE2) was most of the cost of a credential check (docs/performance.md). A pure function of
 * the method, the path and the configuration; the memo holds paths only, never a query (where
 * tokens travel).
 */
const readingsOf = perConfig((c) => {
  const { accountInPath } = c.hooks;
  const patterns = streamPatternsOf(c.hooks.authRequest.streamPatterns, accountInPath).map((p) => compile(p, c.hooks.authRequest.action));
  const memo = new LRUCache<string, PathReading>({ max: PATH_MEMO_MAX });
  const readPath = (method: string | undefined, raw: string): PathReading => {
    // Refused, never resolved: a path a proxy or server could normalise into another stream's.
    const safe = safeRequestPath(raw);
    if ('problem' in safe) return { problem: safe.problem };
    const path = safe.path;
    for (const p of patterns) {
      const m = p.re.exec(path);
      if (!m?.groups?.stream) continue;
      if (p.methods !== undefined) {
        // A CORS preflight carries no credential (WHIP and WHEP send none on OPTIONS): nothing to decide.
        if (method === 'OPTIONS') return { preflight: true };
        if (method === undefined || !p.methods.has(method)) continue;
      }
      const id = { streamName: m.groups.stream, accountId: m.groups.account || undefined };
      // With accounts in paths, a path that names none is no stream of the default account.
      if (accountInPath && id.accountId === undefined) return { problem: undefined };
      if (!nameable(id)) return { problem: undefined };
      return copyWith(id, { protocol: PROTOCOL_BY_EXT.find(([ext]) => ext.test(path))?.[1] ?? 'http', action: p.action, resource: p.resource });
    }
    return { problem: undefined };
  };
  return (method: string | undefined, raw: string): PathReading => {
    const key = method === undefined ? raw : `${method} ${raw}`;
    let r = memo.get(key);
    if (r === undefined) {
      r = readPath(method, raw);
      memo.set(key, r);
    }
    return r;
  };
});

/**
 * The original request's method, from where hooks.authRequest.methodFrom says the proxy puts it
 * (nginx's auth_request subrequest is always a GET; Traefik sends X-Forwarded-Method; Envoy checks
 * with the original method). undefined: not read (methodFrom none). A header named but absent is
 * no method either: a pattern naming methods then matches nothing.
 */
export function originalMethod(req: Request, from: 'none' | 'x-original-method' | 'x-forwarded-method' | 'request'): string | undefined {
  if (from === 'none') return undefined;
  if (from === 'request') return req.method.toUpperCase();
  const v = req.headers[from];
  return typeof v === 'string' && v !== '' ? v.trim().toUpperCase() : undefined;
}

/**
 * The built-in patterns (hooks.authRequest.streamPatterns empty), first match wins: the stream's
 * folder (`/hls/<stream>/…`), nginx-rtmp's flat layout (`<stream>.m3u8` and `<stream>-<n>.ts`;
 * only a segment's -<n> is not the name's: a playlist cam-2.m3u8 is stream cam-2, never cam), and
 * a bare playlist (`/<stream>.m3u8`).
 */
export const BUILT_IN_STREAM_PATTERNS: readonly string[] = [
  '^/(?:hls|dash|live)/(?<stream>[^/]+)/',
  '^/(?:hls|dash|live)/(?<stream>[^/]+?)(?:-\\d+\\.(?:ts|m4s)|\\.(?:m3u8|mpd|ts|m4s))$',
  '^/(?<stream>[^/]+?)\\.(?:m3u8|mpd)$',
];

/**
 * The same with hooks.accountInPath: the account's segment comes first (`/hls/<account>/<stream>/…`),
 * as the media servers' paths carry it (docs/callers.md#accounts-in-paths).
 */
export const BUILT_IN_ACCOUNT_STREAM_PATTERNS: readonly string[] = [
  '^/(?:hls|dash|live)/(?<account>[^/]+)/(?<stream>[^/]+)/',
  '^/(?:hls|dash|live)/(?<account>[^/]+)/(?<stream>[^/]+?)(?:-\\d+\\.(?:ts|m4s)|\\.(?:m3u8|mpd|ts|m4s))$',
  '^/(?<account>[^/]+)/(?<stream>[^/]+?)\\.(?:m3u8|mpd)$',
];

/** The patterns in force: the configured ones, else the built-in set for the accountInPath setting. */
export function streamPatternsOf(configured: readonly StreamPatternEntry[], accountInPath: boolean): ReadonlyArray<string | StreamPatternEntry> {
  if (configured.length > 0) return configured;
  return accountInPath ? BUILT_IN_ACCOUNT_STREAM_PATTERNS : BUILT_IN_STREAM_PATTERNS;
}

/** How many distinct original paths are remembered (a few hundred bytes each). */
const PATH_MEMO_MAX = 10_000;

const read: CallerRoute['read'] = (req, ctx) => {
  const uri = originalUri(req) ?? '';
  if (typeof uri !== 'string') {
    ctx.logger.debug({ problem: 'the forwarding headers name different paths' }, 'auth-request: original URI refused');
    return NO_STREAM;
  }
  const q = uri.indexOf('?');
  const query = q >= 0 ? uri.slice(q) : '';
  const named = readingsOf(ctx.config)(originalMethod(req, ctx.config.hooks.authRequest.methodFrom), q >= 0 ? uri.slice(0, q) : uri);
  if ('preflight' in named) return PREFLIGHT;
  if ('problem' in named) {
    if (named.problem !== undefined) ctx.logger.debug({ problem: named.problem }, 'auth-request: original URI refused');
    // No stream can be named: nothing can be allowed (a denial, never a 404 or 5xx).
    return NO_STREAM;
  }
  // ?token=, then ?jwt= (players that name it so), then Authorization: Bearer (WHIP and WHEP clients),
  // then a cookie one of the account's credential issuers names
  const token = tokenFromQuery(query || undefined) ?? queryValue(query || undefined, 'jwt') ?? bearer(req);
  if (token !== undefined) return decideWith(req, ctx, query, named, token);
  // then a signed URL, signed cookies or a CAT one of the account's signed-URL issuers takes
  const clientIp = clientAddress(req, ctx.trusted);
  const cookie = req.headers.cookie ?? '';
  const catHeader = req.headers['cta-common-access-token'];
  // the original method when hooks.authRequest.methodFrom tells it, else '' (a CAT's catm then refuses)
  const facts: SignedFacts = { method: originalMethod(req, ctx.config.hooks.authRequest.methodFrom) ?? '', path: q >= 0 ? uri.slice(0, q) : uri, query: query.slice(1), cookie };
  if (typeof catHeader === 'string') facts.cat = catHeader;
  if (clientIp !== undefined) facts.clientIp = clientIp;
  const country = trustedCountry(req, ctx.trusted, ctx.config.geo.trustedHeader);
  if (country !== undefined) facts.country = country;
  const fromCookie = (): Outcome | Promise<Outcome> => {
    if (cookie === '') return decideWith(req, ctx, query, named, undefined);
    const found = ctx.issuerCookie(cookie, named.accountId);
    return found instanceof Promise ? found.then((c) => decideWith(req, ctx, query, named, c)) : decideWith(req, ctx, query, named, found);
  };
  if (query === '' && cookie === '' && facts.cat === undefined) return decideWith(req, ctx, query, named, undefined);
  const signed = ctx.signedCredential(facts, named.accountId);
  const then = (packed: SignedPresentation | undefined) => (packed !== undefined ? decideWith(req, ctx, query, named, undefined, packed) : fromCookie());
  return signed instanceof Promise ? signed.then(then) : then(signed);
};

/**
 * The decision of a request whose stream the path named, with the credential it presents: a token
 * value, or (`signed`) its signed URL, cookies or CAT as the context packed them.
 */
function decideWith(
  req: Request,
  ctx: CallerContext,
  query: string,
  named: Extract<PathReading, { streamName: string }>,
  token: string | undefined,
  signed?: SignedPresentation,
): Outcome | Promise<Outcome> {
  const { streamName, accountId, protocol, action } = named;
  const clientIp = clientAddress(req, ctx.trusted);
  const presented = token ?? signed?.presented;
  // Viewer sessions are for viewers: a publish stays a full decision at every request, and a session
  // resource (a WHIP/WHEP PATCH or DELETE) is checked with its credential without starting one.
  const viewers = action === 'subscribe' && !named.resource ? ctx.viewers : undefined;
  const decide = (credentialProblem?: Reason, previous?: ViewerSessionRef): Outcome => ({
    admit: {
      access: {
        action,
        token,
        ...(signed !== undefined ? { signed: signed.value } : {}),
        streamName,
        accountId,
        clientIp,
        origin: requestOrigin(req),
        country: trustedCountry(req, ctx.trusted, ctx.config.geo.trustedHeader),
        protocol,
      },
      starts: false,
      resource: named.resource ? true : undefined,
      credentialsGiven: presented !== undefined,
      viewer: viewers !== undefined && presented !== undefined ? { presented, previous } : undefined,
      credentialProblem,
    },
  });
  const credential = viewers && credentialOf(req, query, viewers);
  if (!viewers || credential === undefined) return decide();
  // A viewer session's credential: checked in memory (docs/callers.md#http-viewer-sessions).
  const answer = (c: CredentialCheck): Outcome => {
    if (c.ok) {
      viewers.answered(authRequest.name, action, 'allowed');
      const headers = allowHeaders(c.tokenId, c.trackingId, c.accountId, streamName);
      if (c.refresh !== undefined) headers.push(...viewerHeaders(viewers.setCookie(c.refresh), viewers.queryParam !== '' ? c.refresh : undefined));
      return { reply: { status: 200, headers, json: { allowed: true } } };
    }
    // Not this request's credential, or one that no longer holds beside a token: decided in full.
    if (c.reason === undefined || presented !== undefined) return decide(undefined, c.previous);
    return decide(c.reason);
  };
  // the country a trusted proxy reports, read only when the token's country rules are checked again
  const country = () => trustedCountry(req, ctx.trusted, ctx.config.geo.trustedHeader);
  const checked = viewers.check(credential, { action, streamName, accountId, clientIp, country, origin: () => requestOrigin(req), presented });
  return andThen(checked, answer);
};

/** The viewer credential a request presents: its cookie, or the configured query parameter. */
function credentialOf(req: Request, query: string, viewers: ViewerCredentials): string | undefined {
  const header = req.headers.cookie;
  if (header?.includes(viewers.cookieName)) {
    const v = parseCookie(header)[viewers.cookieName];
    if (v) return v;
  }
  if (viewers.queryParam !== '' && query) {
    const v = new URLSearchParams(query).get(viewers.queryParam);
    if (v) return v;
  }
  return undefined;
}

/** A credential granted or refreshed: its cookie, and with sessions.http.queryParam the bare value for a playlist rewrite. */
function viewerHeaders(setCookie: string, credential: string | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [['set-cookie', setCookie]];
  if (credential !== undefined) out.push(['x-streamgate-credential', credential]);
  return out;
}

/** The headers of an allow (auth_request_set reads them). */
function allowHeaders(tokenId: number | undefined, trackingId: string | undefined, accountId: string | undefined, streamName: string): Array<[string, string]> {
  const headers: Array<[string, string]> = [['cache-control', 'no-store']];
  if (tokenId !== undefined) headers.push(['x-streamgate-token-id', String(tokenId)]);
  if (trackingId !== undefined) headers.push(['x-streamgate-tracking-id', encodeURIComponent(trackingId)]);
  if (accountId !== undefined) headers.push(['x-streamgate-account-id', accountId]);
  headers.push(['x-streamgate-stream', encodeURIComponent(streamName)]);
  return headers;
}

export const authRequest: Caller = {
  name: 'auth-request',
  capabilities: { sessionIdentity: false, reasks: false, terminate: false },
  routes: [
    {
      // A suffixed path is taken raw: the handler checks and decodes it, and a path it refuses names
      // no stream (a 403 denial; proxies take anything but 200/401/403 as an error).
      method: 'ALL',
      path: PREFIX,
      below: true,
      body: 'none',
      read,
      docs: [
        {
          method: 'get',
          summary: 'nginx auth_request / Traefik forwardAuth / Envoy ext_authz (any method; the original URI in X-Original-URI or X-Forwarded-Uri)',
          answer: 'Exactly 200 to allow, 401/403 to deny',
        },
        {
          method: 'get',
          path: `${PREFIX}/:originalPath`,
          params: z.object({ originalPath: z.string().meta({ description: 'the original path and query, appended (Envoy path_prefix); may hold slashes' }) }),
          summary: 'Envoy ext_authz with path_prefix: the original request path appended (any method)',
          answer: 'Exactly 200 to allow, 401/403 to deny',
        },
      ],
    },
  ],
  answer(d): Reply {
    if (!d.allowed) {
      // The decision id reaches a viewer through the proxy's error page (auth_request_set
      // $sg_decision $upstream_http_x_streamgate_decision_id): docs/api.md#decision-history.
      const headers: Array<[string, string]> = [
        ['cache-control', 'no-store'],
        ['x-streamgate-decision-id', d.decisionId],
      ];
      // A credential that did not hold, on a stream that needs one, is decided as its problem
      // (never a 503; src/admission/context.ts): the answer is the decision, as counted and logged.
      return { status: refusalStatus(d, 'by-reason'), headers, json: { allowed: false, reason: d.reason, message: d.message, decisionId: d.decisionId } };
    }
    const headers = allowHeaders(d.tokenId, d.trackingId, d.accountId, d.streamName);
    if (d.viewer !== undefined) headers.push(...viewerHeaders(d.viewer.setCookie, d.viewer.credential));
    return { status: 200, headers, json: { allowed: true } };
  },
};
