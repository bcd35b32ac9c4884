// What the caller adapters share: turning a media-server path into a stream identity, finding a
// token in a query string, and reporting lifecycle signals after an admission. No policy here.
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

/** Byte totals a caller repeats on a done/close call, counted for its session off the decision path. */
export function reportBytes(s: Services, caller: string, sessionId: string | undefined, bytesOut?: string, bytesIn?: string): void {
  const count = (v?: string) => {
    const n = Number(v ?? 0);
    return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  };
  const out = count(bytesOut);
  const inb = count(bytesIn);
  if (sessionId && (out > 0 || inb > 0)) s.lifecycle.signal({ kind: 'usage', caller, sessionId, bytesOut: out, bytesIn: inb });
}
