// POST /hooks/authorize: the generic JSON decision endpoint. The body is an access request;
// 200 {"allowed":true,...} admits, 401/403 {"allowed":false,reason,message} refuses, 503 store down.
import { z } from 'zod';
import { text } from '../http/text.js';
import { wellFormed } from '../domain/matchers.js';
import { normaliseIp, originHost } from '../domain/addresses.js';
import { issuesToFieldErrors } from '../http/validation.js';
import type { Caller, Outcome } from './caller.js';
import type { Config } from '../config/schema.js';
import { parseSrtStreamId, srtModeAction } from '../domain/srt-stream-id.js';
import { ACCOUNT_ID_MAX, STREAM_NAME_MAX, badRequest, nameable, refusalStatus, streamIdentity } from './shared.js';
import { copyWith } from '../domain/objects.js';

export const authorizeBodySchema = z.strictObject({
  action: z.enum(['publish', 'subscribe']),
  token: z.string().max(8192).optional(),
  streamName: text(1, STREAM_NAME_MAX),
  accountId: text(1, ACCOUNT_ID_MAX).optional(),
  clientIp: z.string().max(64).refine((s) => normaliseIp(s) !== undefined, 'not an IP address').optional(),
  origin: z.string().max(2048).optional().meta({ description: 'Origin or Referer value, or a bare host' }),
  country: z.string().regex(/^[A-Za-z]{2}$/, 'expected an ISO 3166-1 alpha-2 code').optional(),
  protocol: z.string().min(1).max(32).optional().meta({ description: 'rtmp, rtsp, srt, webrtc, hls, ... (default generic)' }),
  sessionId: z.string().max(256).optional(),
});

type AuthorizeBody = z.infer<typeof authorizeBodySchema>;

/**
 * A body carrying an SRT stream id (docs/api.md#srt-stream-ids): the stream, the action and the
 * token come from the id, so `action` and `streamName` may be left out; given, they must agree.
 */
export const srtAuthorizeBodySchema = authorizeBodySchema.extend({
  srtStreamId: z.string().max(8192).meta({ description: 'An SRT stream id in the standard syntax: #!::r=<stream>,m=publish|request,sg_token=<token>' }),
  action: authorizeBodySchema.shape.action.optional(),
  streamName: authorizeBodySchema.shape.streamName.optional(),
});

type SrtAuthorizeBody = z.infer<typeof srtAuthorizeBodySchema>;

/** What an SRT stream id asks for once its explicit fields agree with it, or the 400 naming the conflict. */
type SrtRequest = { action: 'publish' | 'subscribe'; streamName: string; accountId?: string; token?: string } | { errors: Record<string, string[]> };

/**
 * The request an SRT stream id makes, against the body's explicit fields: each one given must say
 * what the id says (a body contradicting itself names nothing to decide), and one the id does not
 * carry (the token, the account without hooks.accountInPath) is taken from the body.
 */
export function srtRequest(b: SrtAuthorizeBody, tokenKey: string, accountInPath: boolean): SrtRequest {
  const parsed = parseSrtStreamId(b.srtStreamId, tokenKey);
  if (!parsed.ok) return { errors: { srtStreamId: [parsed.problem] } };
  const id = parsed.id;
  const action = srtModeAction(id.mode);
  if (b.action !== undefined && b.action !== action) {
    return { errors: { action: [`m=${id.mode} of srtStreamId asks to ${action}, not to ${b.action}`] } };
  }
  const stream = streamIdentity(id.resource, '', accountInPath);
  if (stream.accountMissing) return { errors: { srtStreamId: ['r names no account: with hooks.accountInPath: true it is <account>/<stream>'] } };
  if (!nameable(stream) || !wellFormed(stream.streamName)) {
    return { errors: { srtStreamId: [`r names no stream: a stream name of 1 to ${STREAM_NAME_MAX} characters${accountInPath ? ` after an account of at most ${ACCOUNT_ID_MAX}` : ''}`] } };
  }
  if (b.streamName !== undefined && b.streamName !== stream.streamName) return { errors: { streamName: ['differs from the stream r of srtStreamId names'] } };
  if (stream.accountId !== undefined && b.accountId !== undefined && b.accountId !== stream.accountId) {
    return { errors: { accountId: ['differs from the account r of srtStreamId names'] } };
  }
  if (id.token !== undefined && b.token !== undefined && b.token !== id.token) return { errors: { token: [`differs from the ${tokenKey} of srtStreamId`] } };
  return { action, streamName: stream.streamName, accountId: stream.accountId ?? b.accountId, token: id.token ?? b.token };
}

const COUNTRY = /^[A-Za-z]{2}$/;
const isText = (v: unknown, min: number, max: number): v is string =>
  typeof v === 'string' && v.length >= min && v.length <= max && wellFormed(v);
const isString = (v: unknown, min: number, max: number): v is string => typeof v === 'string' && v.length >= min && v.length <= max;

/**
 * The schema's check written out for the decision path, where zod's safeParse is a large share of a
 * decision's cost (docs/decision-path.md#what-the-decision-path-does-to-be-fast): a
 * body it accepts is one authorizeBodySchema accepts, with the same data (the fields as given).
 * It answers undefined for anything it is not sure of, and that body goes to zod, so every
 * refusal and its messages are zod's (test/http/fast-authorize-body.test.ts compares the two).
 */
export function fastAuthorizeBody(body: unknown): AuthorizeBody | undefined {
  if (typeof body !== 'object' || body === null || Object.getPrototypeOf(body) !== Object.prototype) return undefined;
  const b = body as Record<string, unknown>;
  let known = 0;
  if (b.action !== 'publish' && b.action !== 'subscribe') return undefined;
  known++;
  if (!isText(b.streamName, 1, STREAM_NAME_MAX)) return undefined;
  known++;
  if (b.token !== undefined) {
    if (!isString(b.token, 0, 8192)) return undefined;
    known++;
  }
  if (b.accountId !== undefined) {
    if (!isText(b.accountId, 1, ACCOUNT_ID_MAX)) return undefined;
    known++;
  }
  if (b.clientIp !== undefined) {
    if (!isString(b.clientIp, 1, 64) || normaliseIp(b.clientIp) === undefined) return undefined;
    known++;
  }
  if (b.origin !== undefined) {
    if (!isString(b.origin, 0, 2048)) return undefined;
    known++;
  }
  if (b.country !== undefined) {
    if (typeof b.country !== 'string' || !COUNTRY.test(b.country)) return undefined;
    known++;
  }
  if (b.protocol !== undefined) {
    if (!isString(b.protocol, 1, 32)) return undefined;
    known++;
  }
  if (b.sessionId !== undefined) {
    if (!isString(b.sessionId, 0, 256)) return undefined;
    known++;
  }
  // Every own key is one of those checked (no unknown field, no key holding undefined).
  const keys = Object.keys(b);
  if (keys.length !== known) return undefined;
  for (const k of keys) if (!KNOWN.has(k)) return undefined;
  return b as AuthorizeBody;
}
const KNOWN = new Set(Object.keys(authorizeBodySchema.shape));

const hasSrtStreamId = (body: unknown): boolean => typeof body === 'object' && body !== null && Object.hasOwn(body, 'srtStreamId');

/** A body with an SRT stream id: its schema, then the id against the explicit fields (400 on any conflict). */
function readSrt(body: unknown, config: Config): Outcome {
  const parsed = srtAuthorizeBodySchema.safeParse(body);
  if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
  const b = parsed.data;
  const r = srtRequest(b, config.hooks.srt.tokenKey, config.hooks.accountInPath);
  if ('errors' in r) return { reply: badRequest(r.errors) };
  // An SRT connection carries no origin: origin rules are skipped as for every SRT request.
  return admitBody(b, r, 'srt');
}

/** The admission of an authorize body: what it asks for (from its fields, or from an SRT stream id) and what it tells of the client. */
function admitBody(
  b: Pick<AuthorizeBody, 'clientIp' | 'origin' | 'country' | 'protocol' | 'sessionId'>,
  ask: { action: 'publish' | 'subscribe'; token?: string; streamName: string; accountId?: string },
  protocol: string,
): Outcome {
  return {
    admit: {
      access: {
        action: ask.action,
        token: ask.token,
        streamName: ask.streamName,
        accountId: ask.accountId,
        clientIp: normaliseIp(b.clientIp),
        origin: originHost(b.origin),
        country: b.country?.toUpperCase(),
        protocol: (b.protocol ?? protocol).toLowerCase(),
        sessionId: b.sessionId,
      },
      starts: false,
      credentialsGiven: ask.token !== undefined,
    },
  };
}

export const authorize: Caller = {
  name: 'authorize',
  // The sessionId it is given is passed to the decision; it keeps no sessions of its own.
  capabilities: { sessionIdentity: false, reasks: false, terminate: false },
  routes: [
    {
      method: 'POST',
      path: '/hooks/authorize',
      body: 'json',
      read(req, ctx) {
        if (hasSrtStreamId(req.body)) return readSrt(req.body, ctx.config);
        let b = fastAuthorizeBody(req.body);
        if (b === undefined) {
          const parsed = authorizeBodySchema.safeParse(req.body ?? {});
          if (!parsed.success) return { reply: badRequest(issuesToFieldErrors(parsed.error.issues, 'body')) };
          b = parsed.data;
        }
        // Several tenants (hooks.accountInPath): a request must say whose stream it names.
        if (b.accountId === undefined && ctx.config.hooks.accountInPath) {
          return { reply: badRequest({ accountId: ['required with hooks.accountInPath: true (the account whose stream this is)'] }) };
        }
        return admitBody(b, b, 'generic');
      },
      docs: [
        {
          summary: 'Generic decision: 200 {"allowed":true,...}, 401/403 {"allowed":false,reason,message}, 503 store down',
          body: z.union([authorizeBodySchema, srtAuthorizeBodySchema]),
          answer: 'The decision',
        },
      ],
    },
  ],
  answer(d) {
    if (d.allowed) {
      // the session-control fields stay inside (docs/api.md#asking-for-a-decision shows the answer)
      const { limits: _l, expiresOn: _e, lifetimeMs: _t, tokenRev: _v, admissionRules: _a, originCluster: _c, ...answer } = d;
      return { status: 200, json: copyWith(answer, { allowed: true }) };
    }
    return { status: refusalStatus(d, 'by-reason'), json: { allowed: false, reason: d.reason, message: d.message, decisionId: d.decisionId } };
  },
};
