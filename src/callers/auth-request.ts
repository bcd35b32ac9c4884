// nginx auth_request, Traefik forwardAuth, Envoy ext_authz (HTTP): the original request arrives
// as headers (X-Original-URI / X-Forwarded-Uri) or as a path suffix (Envoy path_prefix). Allow is
// exactly 200 with x-streamgate-* headers for auth_request_set; deny is 401/403 only.
import type { Request, Response } from 'express';
import type { DecisionRoutes } from '../decision-routes.js';
import RE2 from 're2';
import type { Services } from '../../services.js';
import { bearer } from '../middleware.js';
import { clientAddress, requestOrigin, trustedCountry, type TrustedProxies } from '../client.js';
import { tokenFromQuery } from './common.js';
import { MAX_NAME } from '../../domain/matchers.js';
import { sendJson } from '../answer.js';
import { originalPath } from '../../domain/paths.js';

const PREFIX = '/hooks/auth-request';

/**
 * The original path and query, from the forwarding headers or the path suffix. Every source that
 * is present must say the same: a client can add an X-Original-URI that Traefik copies through
 * beside its own X-Forwarded-Uri, or one that an Envoy forwarding every header passes beside the
 * real path; deciding on the client's copy would judge a path the proxy does not serve.
 */
export function originalUri(req: Request): string | undefined | { conflict: true } {
  const url = req.originalUrl;
  const sources = [req.get('x-original-uri'), req.get('x-forwarded-uri'), url.startsWith(`${PREFIX}/`) ? url.slice(PREFIX.length) : undefined].filter(
    (v): v is string => v !== undefined && v !== '',
  );
  if (sources.some((v) => v !== sources[0])) return { conflict: true };
  return sources[0];
}

/** No stream can be named from the original URI: nothing can be allowed (a denial, never a 404 or 5xx). */
const noStream = (res: Response) =>
  sendJson(res, 403, { allowed: false, reason: 'stream_not_allowed', message: 'Unauthorized: Stream name not allowed' });

const PROTOCOL_BY_EXT: Array<[RegExp, string]> = [
  [/\.(m3u8|ts|m4s|aac)$/i, 'hls'],
  [/\.mpd$/i, 'dash'],
  [/\.flv$/i, 'http-flv'],
];

export function mountAuthRequest(app: DecisionRoutes, s: Services, trusted: TrustedProxies): void {
  const patterns = s.config.hooks.authRequest.streamPatterns.map((p) => new RE2(p, 'u'));
  const action = s.config.hooks.authRequest.action;

  const handler = async (req: Request, res: Response) => {
    const uri = originalUri(req) ?? '';
    // Refused, never resolved: a path a proxy or server could normalise into another stream's.
    const original = typeof uri === 'string' ? originalPath(uri) : { problem: 'the forwarding headers name different paths' };
    if ('problem' in original) {
      s.logger.debug({ problem: original.problem }, 'auth-request: original URI refused');
      noStream(res);
      return;
    }
    const { path, query } = original;
    let streamName: string | undefined;
    let accountId: string | undefined;
    for (const re of patterns) {
      const m = re.exec(path);
      if (m?.groups?.stream) {
        streamName = m.groups.stream;
        accountId = m.groups.account || undefined;
        break;
      }
    }
    if (!streamName || streamName.length > MAX_NAME) {
      // No stream can be named: nothing can be allowed (a denial, never a 404 or 5xx).
      noStream(res);
      return;
    }
    const d = await s.enforcer.decide(
      {
        action,
        token: tokenFromQuery(query || undefined) ?? bearer(req),
        streamName,
        accountId,
        clientIp: clientAddress(req, trusted),
        origin: requestOrigin(req),
        country: trustedCountry(req, trusted, s.config.geo.trustedHeader),
        protocol: PROTOCOL_BY_EXT.find(([re]) => re.test(path))?.[1] ?? 'http',
      },
      'auth-request',
    );
    res.setHeader('cache-control', 'no-store');
    if (d.allowed) {
      if (d.tokenId !== undefined) res.setHeader('x-streamgate-token-id', String(d.tokenId));
      if (d.trackingId !== undefined) res.setHeader('x-streamgate-tracking-id', encodeURIComponent(d.trackingId));
      if (d.accountId !== undefined) res.setHeader('x-streamgate-account-id', d.accountId);
      res.setHeader('x-streamgate-stream', encodeURIComponent(d.streamName));
      sendJson(res, 200, { allowed: true });
      return;
    }
    sendJson(res, d.status, { allowed: false, reason: d.reason, message: d.message });
  };
  // A suffixed path is taken raw: the handler checks and decodes it, and a path it refuses names
  // no stream (a 403 denial; proxies take anything but 200/401/403 as an error).
  app.all(PREFIX, handler);
  app.allUnder(PREFIX, handler);
}
