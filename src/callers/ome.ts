// OvenMediaEngine AdmissionWebhooks: POST JSON signed with X-OME-Signature (base64url HMAC-SHA1 of
// the raw body). OME admits only on HTTP 200 with {"allowed":true}; every answer here is a 200.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DecisionRoutes } from '../decision-routes.js';
import express, { type Request, type Response } from 'express';
import type { Services } from '../../services.js';
import type { AccessRequest } from '../../policy/types.js';
import { normaliseIp } from '../../policy/rules.js';
import { reportStart, streamIdentity, tokenFromQuery } from './common.js';
import { sendJson } from '../answer.js';

const CALLER = 'ome';

export function omeSignature(rawBody: Buffer, secret: string): string {
  return createHmac('sha1', secret).update(rawBody).digest('base64url');
}

function signatureOk(raw: Buffer, presented: string | undefined, secret: string): boolean {
  if (!presented) return false;
  const expected = Buffer.from(omeSignature(raw, secret));
  const got = Buffer.from(presented);
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** What no decoded segment may hold: separators, and what a parser could cut a segment at (; ? #) or drop. */
const SEGMENT_META = /[/\\;?#\p{Cc}]/u;

/** The decoded path segments, or undefined when one is not valid percent-encoding or decodes to a separator, ; ? # or a control character, or is a dot segment. */
export function omeSegments(pathname: string): string[] | undefined {
  const out: string[] = [];
  for (const raw of pathname.split('/')) {
    if (raw === '') continue;
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (SEGMENT_META.test(seg) || seg === '.' || seg === '..') return undefined;
    out.push(seg);
  }
  return out;
}

interface OmeBody {
  client?: { address?: unknown; port?: unknown };
  request?: { direction?: unknown; protocol?: unknown; status?: unknown; url?: unknown };
}

export function mountOme(app: DecisionRoutes, s: Services): void {
  const secret = s.config.hooks.omeSecret;
  const { accountInPath } = s.config.hooks;
  app.post(
    '/hooks/ome/admission',
    express.raw({ type: () => true, limit: s.config.server.bodyLimitBytes }),
    async (req: Request, res: Response) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const deny = (reason: string, status = 200) => sendJson(res, status, { allowed: false, reason });
      if (secret !== '' && !signatureOk(raw, req.get('x-ome-signature'), secret)) return deny('invalid X-OME-Signature', 401);
      let body: OmeBody;
      try {
        body = JSON.parse(raw.toString('utf8')) as OmeBody;
      } catch {
        return deny('malformed JSON', 400);
      }
      const r = body?.request;
      const direction = r?.direction;
      const status = r?.status;
      const url = typeof r?.url === 'string' ? r.url : undefined;
      if ((direction !== 'incoming' && direction !== 'outgoing') || (status !== 'opening' && status !== 'closing') || !url) {
        return deny('request.direction, request.status and request.url are required', 400);
      }
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return deny('request.url is not a URL', 400);
      }
      // OME URLs are /<app>/<stream>[/<file>]: the stream is the second segment. Segments are
      // decoded one by one, so an encoded '/' cannot move the stream to another segment; a dot
      // segment, or one that cannot be decoded, names no stream. OME gets its 200 with allowed:false.
      // The raw path, not URL's pathname: the URL parser resolves dot segments that OME may not.
      const segments = omeSegments(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(url)?.[1] ?? parsed.pathname);
      if (segments === undefined) return deny('request.url path has a dot segment, a separator or ; ? # inside a segment, or bad percent-encoding');
      const path = accountInPath ? segments.slice(1, 3).join('/') : segments[1] ?? '';
      const id = streamIdentity(path, '', accountInPath);
      const action = direction === 'incoming' ? 'publish' : 'subscribe';
      const address = typeof body.client?.address === 'string' ? body.client.address : undefined;
      const sessionId = address ? `${address}:${String(body.client?.port ?? '')}/${segments.slice(0, 2).join('/')}/${action}` : undefined;
      if (status === 'closing') {
        s.lifecycle.signal({ kind: 'session_ended', caller: CALLER, sessionId, action, accountId: id.accountId, streamName: id.streamName });
        return sendJson(res, 200, {});
      }
      if (id.streamName === '') return deny('no stream name in request.url');
      const access: AccessRequest = {
        action,
        token: tokenFromQuery(parsed.search),
        streamName: id.streamName,
        accountId: id.accountId,
        // client.address is the peer OME saw; real_ip comes from client headers OME does not vet.
        clientIp: normaliseIp(address),
        protocol: typeof r?.protocol === 'string' ? r.protocol.toLowerCase() : 'unknown',
        sessionId,
      };
      const d = await s.enforcer.decide(access, CALLER);
      if (!d.allowed) return deny(d.reason);
      reportStart(s, CALLER, access, d);
      sendJson(res, 200, { allowed: true, reason: 'authorized' });
    },
  );
}
