// The director API: browsers and SDKs exchange a publish/subscribe token (or a self-signed JWT)
// for media-server URLs and a short-lived ES256 connection JWT; plus the JWKS. The answer and the
// JWT's `millicast` claim are what the hosted platform's Web SDK reads (docs/api.md#director-api-browser-sdks).
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Endpoint } from './surfaces.js';
import { z } from 'zod';
import { text } from './text.js';
import type { Services } from '../services.js';
import type { AccessRequest, Action } from '../policy/types.js';
import { MAX_NAME } from '../domain/matchers.js';
import { bearer, jsonBody } from './middleware.js';
import { clientAddress, requestOrigin, trustedCountry, type TrustedProxies } from './client.js';
import { issuesToFieldErrors } from './validation.js';
import { ignoredFieldsHeader, prepareBody } from './body-fields.js';
import type { Admission, DecisionResult } from '../contracts/admission.js';
import { LRUCache } from 'lru-cache';
import { sendJson } from './answer.js';
import { mediamtxPathProblem } from '../domain/paths.js';
import { peekSelfSigned } from '../policy/self-signed.js';
import { copyWith } from '../domain/objects.js';
import type { Cluster } from '../director/clusters.js';
import { StoreUnavailable } from '../enforce/lookup.js';

// The name ends the path of the JWT's MediaMTX permission: it must be one exact path MediaMTX accepts,
// never a pattern ('~…' is a regular expression there) whatever the token's stream rules match.
const grantableName = () =>
  text(1, MAX_NAME).superRefine((name, ctx) => {
    const problem = mediamtxPathProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const directorPublishSchema = z.strictObject({
  streamName: grantableName(),
  streamType: z.string().regex(/^(webrtc|rtmp)$/i, 'expected WebRtc or Rtmp').nullable().optional(),
  streamAccountId: text(0, 64).nullable().optional(),
});

export const directorSubscribeSchema = z.strictObject({
  streamName: grantableName(),
  streamAccountId: text(0, 64).nullable().optional(),
});

/** Browsers call the director from customers' pages: reflect the Origin (no credentials). */
export function directorCors(req: Request, res: Response, next: NextFunction): void {
  const origin = req.get('origin');
  if (origin) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('vary', 'Origin');
  }
  if (req.method === 'OPTIONS') {
    res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.setHeader('access-control-allow-headers', 'authorization, content-type');
    res.setHeader('access-control-max-age', '600');
    res.status(204).end();
    return;
  }
  next();
}

const fill = (template: string, accountId: string, streamName: string) =>
  template.replaceAll('{accountId}', encodeURIComponent(accountId)).replaceAll('{streamName}', encodeURIComponent(streamName));

/**
 * An RTMP ingest URL: the template filled, with the publish token where the template places {token}
 * (or the connection JWT at {jwt}), else appended as the `token` query parameter, which is where
 * the hosted platform's RTMP URLs carry it and where every hook reads it.
 */
export function rtmpUrl(template: string, accountId: string, streamName: string, publishToken: string, jwt: string): string {
  const url = fill(template, accountId, streamName);
  if (template.includes('{token}') || template.includes('{jwt}')) {
    return url.replaceAll('{token}', encodeURIComponent(publishToken)).replaceAll('{jwt}', encodeURIComponent(jwt));
  }
  return `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(publishToken)}`;
}

const RTMP_UNCONFIGURED = 'Rtmp publishing is not offered here (director.rtmpPublishUrls is empty): use WebRtc';
const RTMP_IN_NO_CLUSTER = 'Rtmp publishing is not offered here (no entry of director.clusters has rtmpPublishUrls): use WebRtc';
const rtmpNotInCluster = (id: string) => `Rtmp publishing is not offered by cluster '${id}' (its rtmpPublishUrls are empty): use WebRtc`;

/** The viewer data a self-signed subscribe JWT carries (its signature was verified by the decision). */
function customViewerData(token: string | undefined, d: DecisionResult): string | null {
  if (!d.selfSigned || !token) return null;
  const peek = peekSelfSigned(token);
  return 'claims' in peek ? (peek.claims.customViewerData ?? null) : null;
}

function deny(res: Response, d: DecisionResult): void {
  // the decisionId finds the decision in the account's history (docs/api.md#decision-history)
  sendJson(res, d.status, { status: 'fail', data: { message: d.message, reason: d.reason, decisionId: d.decisionId } });
}

const directorOut = z.object({
  urls: z.array(z.string()),
  jwt: z.string(),
  iceServers: z.array(z.object({ urls: z.array(z.string()), username: z.string().optional(), credential: z.string().optional() })),
  streamAccountId: z.string(),
  subscribeRequiresAuth: z.boolean().optional(),
});

/**
 * The director's entries of the route table (src/http/surfaces.ts): publish and subscribe, whose
 * token (Authorization: Bearer) the decision reads (`streamToken`), the JWKS, and the layer that
 * answers the CORS preflight.
 */
export function directorEndpoints(s: Services, trusted: TrustedProxies): Endpoint[] {
  const cfg = s.config.director;
  const { accountInPath } = s.config.hooks;
  // An ES256 signature per call dominated the director's cost: the same grant is answered with the
  // same JWT while it has at least 3/4 of its lifetime left (revocation is checked on every call
  // regardless; only the signature is reused).
  const jwts = new LRUCache<string, { jwt: string; until: number }>({ max: 10000 });
  const reuseMs = (cfg.jwtTtlSeconds * 1000) / 4;

  /**
   * The cluster whose URLs answer a grant: the token's originCluster while configured, else the
   * account's default cluster (from the account entry decisions read, current by its version), else
   * the first configured. No store read when the token's cluster decides (the caller skips it with
   * one cluster only, so the common case costs no await).
   */
  const clusterOf = async (originCluster: string | undefined, accountId: string): Promise<Cluster> => {
    const { clusters } = s;
    const own = clusters.find(originCluster);
    if (own) return own;
    let stored: string | undefined;
    try {
      stored = (await s.enforcer.lookup.account(accountId)).defaultCluster;
    } catch (e) {
      if (!(e instanceof StoreUnavailable)) throw e;
      // the grant was decided (from the caches, with enforcement.onStoreError: allow-cached): the last known default
      stored = s.enforcer.lookup.cachedAccount(accountId)?.defaultCluster;
    }
    return clusters.defaultOf(stored);
  };

  const dropUnknown = s.config.api.unknownFields === 'ignore';
  const handler = (action: Action) => async (req: Request, res: Response) => {
    const schema = action === 'publish' ? directorPublishSchema : directorSubscribeSchema;
    // As on the management API: fields the director does not know are ignored and named (the SDKs
    // send fields of newer versions), null is "not given" (docs/compatibility.md).
    const prepared = prepareBody(schema, req.body ?? {}, dropUnknown);
    if (prepared.ignored.length > 0) res.setHeader('x-streamgate-ignored-fields', ignoredFieldsHeader(prepared.ignored));
    const parsed = schema.safeParse(prepared.value);
    if (!parsed.success) {
      sendJson(res, 400, { status: 'fail', data: { message: 'Validation errors', errors: issuesToFieldErrors(parsed.error.issues, 'body') } });
      return;
    }
    const body = parsed.data as z.infer<typeof directorPublishSchema>;
    const rtmp = action === 'publish' && body.streamType?.toLowerCase() === 'rtmp';
    // Refused before deciding: a refusal must not spend a bind slot or count as a use.
    if (rtmp && !s.clusters.anyRtmp) {
      const why = s.clusters.implicit ? RTMP_UNCONFIGURED : RTMP_IN_NO_CLUSTER;
      sendJson(res, 400, { status: 'fail', data: { message: 'Validation errors', errors: { streamType: [why] } } });
      return;
    }
    const token = bearer(req);
    const access: AccessRequest = {
        action,
        token,
        streamName: body.streamName,
        // An empty streamAccountId names no account, as an absent one (SDKs send '' for "none").
        accountId: body.streamAccountId || undefined,
        clientIp: clientAddress(req, trusted),
        origin: requestOrigin(req),
        country: trustedCountry(req, trusted, s.config.geo.trustedHeader),
        // The director's answer (URLs, a connection JWT) works over any protocol, so no RTMP
        // exemption from IP rules applies here, whatever streamType says.
        protocol: 'webrtc',
    };
    // With director.admits (MediaMTX authMethod: jwt), the call is the admission: its session is
    // registered as any caller's (counted by a limited token's limits) and lasts the connection
    // JWT's life (docs/api.md#session-limits).
    const admission: Admission | undefined = cfg.admits
      ? { access: copyWith(access, { sessionId: randomUUID(), admission: 'session' }), starts: true, credentialsGiven: token !== undefined }
      : undefined;
    const d = await s.enforcer.admit(admission?.access ?? access, 'store', 'director', undefined, admission, undefined, cfg.jwtTtlSeconds);
    if (!d.allowed || d.accountId === undefined) return deny(res, d);
    const accountId = d.accountId;
    const cluster = s.clusters.all.length === 1 ? s.clusters.all[0] : await clusterOf(d.originCluster, accountId);
    // Only a cluster without RTMP among clusters with it gets here (docs/api.md#clusters).
    if (rtmp && cluster.rtmpPublishUrls.length === 0) {
      sendJson(res, 400, { status: 'fail', data: { message: 'Validation errors', errors: { streamType: [rtmpNotInCluster(cluster.id)] } } });
      return;
    }
    const streaming: Record<string, unknown> = {
      tokenId: d.tokenId,
      tokenType: action === 'publish' ? 'Publish' : 'Subscribe',
      accountId,
      streamName: d.streamName,
    };
    if (d.trackingId !== undefined) streaming.trackingId = d.trackingId;
    if (action === 'publish') streaming.record = d.record ?? false;
    // The MediaMTX path names the account when the hooks read it from paths, so one tenant's JWT
    // never opens another tenant's stream of the same name.
    const permissionPath = `${cfg.mediamtxPathPrefix}${accountInPath ? `${accountId}/` : ''}${d.streamName}`;
    const pathProblem = mediamtxPathProblem(permissionPath);
    // The name was checked before deciding; only a prefix or an account id outside MediaMTX's path
    // characters gets here, and a JWT must never carry a path MediaMTX could read as a pattern.
    if (pathProblem) throw new Error(`director: the MediaMTX permission path is not exact: ${pathProblem}`);
    // The hosted platform's own claim, which the Web SDK reads (streamName to publish or view under;
    // record: whether a publish may ask to record).
    const millicast = {
      type: action === 'publish' ? 'Publish' : 'Subscribe',
      streamAccountId: accountId,
      streamName: d.streamName,
      serverId: cfg.serverId,
      record: action === 'publish' ? (d.record ?? false) : false,
      customData: action === 'subscribe' ? customViewerData(token, d) : null,
    };
    // MediaMTX (authMethod: jwt) admits a connection carrying the permission without asking anyone.
    // Without director.admits, a token whose admission does more than this call checked (counts a
    // session or a use, binds the connecting address, refuses a held one) gets none: its connection
    // must come through a media server that asks (docs/api.md#director-api-browser-sdks).
    const permissions = cfg.admits || d.admissionRules !== true ? [{ action: action === 'publish' ? 'publish' : 'read', path: permissionPath }] : undefined;
    const grant = JSON.stringify([s.keys.kid, streaming, millicast, permissions]);
    const now = Date.now();
    const cached = jwts.get(grant);
    let jwt = cached && cached.until > now ? cached.jwt : undefined;
    if (!jwt) {
      const claims: Record<string, unknown> = { sub: `${accountId}/${d.streamName}`, streaming, millicast };
      if (permissions !== undefined) claims.mediamtx_permissions = permissions;
      jwt = await s.keys.sign(claims, cfg.jwtTtlSeconds);
      jwts.set(grant, { jwt, until: now + reuseMs });
    }
    const signed = jwt;
    const urls = rtmp
      ? cluster.rtmpPublishUrls.map((u) => rtmpUrl(u, accountId, d.streamName, token ?? '', signed))
      : (action === 'publish' ? cluster.publishUrls : cluster.subscribeUrls).map((u) => fill(u, accountId, d.streamName));
    const data: Record<string, unknown> = { urls, jwt, iceServers: cfg.iceServers, streamAccountId: accountId };
    if (action === 'publish') data.subscribeRequiresAuth = d.subscribeRequiresAuth ?? false;
    sendJson(res, 200, { status: 'success', data });
  };

  // CORS and the JSON body gate run here too: these routes are answered before the app's
  // express layers (the director layer below still serves the preflight and other methods).
  const body = jsonBody(s.config.server.bodyLimitBytes);
  const tag = 'Director';
  return [
    {
      surface: 'director', method: 'post', path: '/api/director/publish', auth: 'streamToken', served: 'decision',
      summary: 'Exchange a publish token for media URLs and a connection JWT',
      openapi: [{ method: 'post', path: '/api/director/publish', summary: 'Exchange a publish token for media URLs and a connection JWT', tag, auth: 'streamToken', body: directorPublishSchema, response: directorOut }],
      handlers: [directorCors, ...body, handler('publish')],
    },
    {
      surface: 'director', method: 'post', path: '/api/director/subscribe', auth: 'streamToken', served: 'decision',
      summary: 'Exchange a subscribe token, a self-signed JWT or nothing (open streams) for media URLs and a connection JWT',
      openapi: [{ method: 'post', path: '/api/director/subscribe', summary: 'Exchange a subscribe token, a self-signed JWT or nothing (open streams) for media URLs and a connection JWT', tag, auth: 'streamToken', body: directorSubscribeSchema, response: directorOut }],
      handlers: [directorCors, ...body, handler('subscribe')],
    },
    {
      surface: 'director', method: 'get', path: '/.well-known/jwks.json', auth: 'none', served: 'decision',
      summary: 'Public keys of the director connection JWTs (current and previous)',
      openapi: [{ method: 'get', path: '/.well-known/jwks.json', summary: 'Public keys of the director connection JWTs (current and previous)', tag, auth: 'none', answer: 'A JWK Set' }],
      handlers: [
        (_req, res) => {
          res.setHeader('cache-control', 'public, max-age=300');
          res.json(s.keys.jwks());
        },
      ],
    },
    {
      // The preflight (OPTIONS) and any other method on the director's paths: CORS, the JSON body
      // gate, then on (a method the director does not serve meets the /api namespace's guard).
      surface: 'director', method: 'all', path: '/api/director', below: true, auth: 'none', served: 'layer',
      summary: 'CORS preflight (OPTIONS) of the director; other methods go on to the /api namespace',
      openapi: [],
      handlers: [directorCors, ...body],
    },
  ];
}
