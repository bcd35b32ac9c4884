// OvenMediaEngine AdmissionWebhooks: POST JSON signed with X-OME-Signature (base64url HMAC-SHA1 of
// the raw body). OME admits only on HTTP 200 with {"allowed":true}; every answer here is a 200.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { normaliseIp } from '../domain/addresses.js';
import type { Caller, Outcome, SessionIdentity } from './caller.js';
import { nameable, streamIdentity, tokenFromQuery } from './shared.js';

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

const deny = (reason: string, status = 200): Outcome => ({ reply: { status, json: { allowed: false, reason } } });

export const ome: Caller = {
  name: CALLER,
  capabilities: { sessionIdentity: true, reasks: false, terminate: true },
  routes: [
    {
      method: 'POST',
      path: '/hooks/ome/admission',
      body: 'raw',
      read(req, ctx): Outcome {
        const secret = ctx.config.hooks.omeSecret;
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
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
        const { accountInPath } = ctx.config.hooks;
        const path = accountInPath ? segments.slice(1, 3).join('/') : segments[1] ?? '';
        const id = streamIdentity(path, '', accountInPath);
        const action = direction === 'incoming' ? 'publish' : 'subscribe';
        const address = typeof body.client?.address === 'string' ? body.client.address : undefined;
        const port = String(body.client?.port ?? '');
        const session: SessionIdentity | undefined = address
          ? { id: `${address}:${port}/${segments.slice(0, 2).join('/')}/${action}`, native: { address, port, app: segments[0] ?? '', stream: segments[1] ?? '' } }
          : undefined;
        const sessionId = session?.id;
        if (status === 'closing') {
          return { reply: { status: 200, json: {} }, signals: [{ kind: 'session_ended', caller: CALLER, sessionId, action, accountId: id.accountId, streamName: id.streamName }] };
        }
        if (id.streamName === '') return deny('no stream name in request.url');
        if (!nameable(id)) return deny('stream_not_allowed');
        const token = tokenFromQuery(parsed.search);
        return {
          admit: {
            access: {
              action,
              token,
              streamName: id.streamName,
              accountId: id.accountId,
              // client.address is the peer OME saw; real_ip comes from client headers OME does not vet.
              clientIp: normaliseIp(address),
              protocol: typeof r?.protocol === 'string' ? r.protocol.toLowerCase() : 'unknown',
              sessionId,
            },
            session,
            starts: true,
            credentialsGiven: token !== undefined,
          },
        };
      },
      docs: [{ summary: 'OvenMediaEngine AdmissionWebhooks (X-OME-Signature verified)', answer: '200 {"allowed":true|false,...}' }],
    },
  ],
  answer(d) {
    // OME reads only allowed; the reason code says why in its logs. A refusal is a 200 as well.
    // lifetime (ms): OME closes the session then (not HLS/LLHLS): a viewer cannot be kicked one by one (docs/callers.md#cutting-sessions).
    if (!d.allowed) return { status: 200, json: { allowed: false, reason: d.reason } };
    return { status: 200, json: d.lifetimeMs !== undefined ? { allowed: true, reason: 'authorized', lifetime: d.lifetimeMs } : { allowed: true, reason: 'authorized' } };
  },
};
