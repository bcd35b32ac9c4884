// What the caller adapters share: turning a media-server path into a stream identity, finding a
// token in a query string, and reporting lifecycle signals after an admission. No policy here.
import type { Request, RequestHandler } from 'express';
import express from 'express';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services.js';
import type { AccessRequest } from '../../policy/types.js';
import type { DecisionResult } from '../../enforce/enforcer.js';

export interface StreamIdentity {
  streamName: string;
  accountId?: string;
}

/**
 * Maps a media-server path to (account, stream): strips `prefix` when the path starts with it;
 * with `accountInPath` the first remaining segment is the account id (ACCT/cam1).
 */
export function streamIdentity(path: string, prefix: string, accountInPath: boolean): StreamIdentity {
  let p = path.replace(/^\/+/, '');
  if (prefix !== '' && p.startsWith(prefix)) p = p.slice(prefix.length);
  if (accountInPath) {
    const i = p.indexOf('/');
    if (i > 0) return { accountId: p.slice(0, i), streamName: p.slice(i + 1) };
  }
  return { streamName: p };
}

/** The `token` parameter of a query string ("?token=x&y=z", "token=x", or a whole URL). */
export function tokenFromQuery(q: string | undefined): string | undefined {
  if (!q) return undefined;
  const i = q.indexOf('?');
  const query = i >= 0 ? q.slice(i + 1) : q.includes('://') ? '' : q;
  const v = new URLSearchParams(query).get('token');
  return v === null || v === '' ? undefined : v;
}

/** A string field of a parsed form or JSON body: the first value when a key was repeated. */
export function field(body: Record<string, unknown> | undefined, name: string): string | undefined {
  const v = body?.[name];
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : typeof v[0] === 'number' ? String(v[0]) : undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return undefined;
}

/** After an admission, the caller's session starts (registry, feeds): queued, never awaited. */
export function reportStart(s: Services, caller: string, access: AccessRequest, d: DecisionResult): void {
  if (!d.allowed || d.accountId === undefined) return;
  s.lifecycle.signal({
    kind: 'session_started',
    caller,
    sessionId: access.sessionId,
    action: access.action,
    accountId: d.accountId,
    streamName: d.streamName,
    tokenId: d.tokenId,
    trackingId: d.trackingId,
  });
}

/** Body parsers per hook: each caller speaks one encoding; anything else is 415. */
export function hookBody(kind: 'json' | 'form' | 'json-or-form', limit: number): RequestHandler[] {
  const types = kind === 'json' ? ['application/json', 'application/*+json'] : kind === 'form' ? ['application/x-www-form-urlencoded'] : ['application/json', 'application/*+json', 'application/x-www-form-urlencoded'];
  return [
    (req: Request, _res, next) => {
      const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
      if (hasBody && !req.is(types)) return next(new ApiError(415, 'Unsupported Media Type'));
      next();
    },
    express.json({ limit, type: ['application/json', 'application/*+json'] }),
    express.urlencoded({ limit, extended: false, parameterLimit: 200 }),
  ];
}
