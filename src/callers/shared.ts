// What every caller shares: the stream-name limit, the status of a refusal, refusal texts from the
// reasons table, and the small readers of caller requests (paths, query tokens, form fields).
import { MAX_NAME } from '../domain/matchers.js';
import { REASONS, type Decision, type Reason } from '../contracts/decision.js';
import type { LifecycleSignal } from '../lifecycle/events.js';
import type { Config } from '../config/schema.js';
import type { Reply } from './caller.js';

/** The longest stream name a caller can ask about (the same limit as token stream names). */
export const STREAM_NAME_MAX = MAX_NAME;
/** The longest account id a caller's path can name. */
export const ACCOUNT_ID_MAX = 64;

export interface StreamIdentity {
  streamName: string;
  accountId?: string;
  /**
   * With hooks.accountInPath, the path had no account segment: it names no stream, never the
   * default account's (docs/callers.md#accounts-in-paths).
   */
  accountMissing?: true;
}

/**
 * A stream a request can be decided on: a name of 1 to STREAM_NAME_MAX characters, an account id
 * within ACCOUNT_ID_MAX, and an account whenever paths must name one.
 */
export function nameable(id: StreamIdentity): boolean {
  return (
    id.accountMissing === undefined &&
    id.streamName.length > 0 &&
    id.streamName.length <= STREAM_NAME_MAX &&
    (id.accountId === undefined || id.accountId.length <= ACCOUNT_ID_MAX)
  );
}

/**
 * Maps a media-server path to (account, stream): strips `prefix` when the path starts with it;
 * with `accountInPath` the first remaining segment is the account id (ACCT/cam1), and a path
 * without one names no stream (`accountMissing`): falling back to the default account would
 * decide another tenant's path on the default account's rules.
 */
export function streamIdentity(path: string, prefix: string, accountInPath: boolean): StreamIdentity {
  let p = path.replace(/^\/+/, '');
  if (prefix !== '' && p.startsWith(prefix)) p = p.slice(prefix.length);
  if (accountInPath) {
    const i = p.indexOf('/');
    if (i > 0) return { accountId: p.slice(0, i), streamName: p.slice(i + 1) };
    return { streamName: p, accountMissing: true };
  }
  return { streamName: p };
}

/**
 * How a caller turns a 401 of the reasons table into its status:
 * - 'by-reason': as the table says (401 for token problems, 403 for the rest);
 * - 'never': always 403 (callers that treat every refusal alike);
 * - 'without-credentials': 401 only when the request carried no credential at all, so that a
 *   client that can answer a challenge (RTSP) retries with its own; 403 otherwise.
 */
export type UnauthorizedStyle = 'by-reason' | 'never' | 'without-credentials';

/** The HTTP status refusing `d`: 503 when the store could not be read, else 401 or 403 by `style`. */
export function refusalStatus(d: Pick<Decision, 'status'>, style: UnauthorizedStyle, credentialsGiven = true): 401 | 403 | 503 {
  if (d.status === 503) return 503;
  switch (style) {
    case 'by-reason':
      return d.status === 401 ? 401 : 403;
    case 'never':
      return 403;
    case 'without-credentials':
      return credentialsGiven ? 403 : 401;
  }
}

/** A refusal decided before the Enforcer (no nameable stream): the reason's message from the table. */
export function refusalMessage(reason: Reason): string {
  return REASONS[reason].message;
}

/** The JSON refusal body of the callers that answer {allowed:false, reason, message}. */
export function refusalBody(reason: Reason): { allowed: false; reason: Reason; message: string } {
  return { allowed: false, reason, message: REASONS[reason].message };
}

/** A hook answer for a bad request: 400, the problems named, nothing decided. */
export function badRequest(errors: Record<string, string[]>): Reply {
  return { status: 400, json: { allowed: false, reason: 'bad_request', message: 'Validation errors', errors } };
}

/** The `token` parameter of a query string ("?token=x&y=z", "token=x", or a whole URL). */
export function tokenFromQuery(q: string | undefined): string | undefined {
  return queryValue(q, 'token');
}

/** A parameter of a query string ("?k=x&y=z", "k=x", or a whole URL); an empty value is none. */
export function queryValue(q: string | undefined, name: string): string | undefined {
  if (!q) return undefined;
  const i = q.indexOf('?');
  const query = i >= 0 ? q.slice(i + 1) : q.includes('://') ? '' : q;
  const v = new URLSearchParams(query).get(name);
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

/** The usage signal for byte totals a caller repeats on a done/close call (none when nothing was counted). */
export function bytesSignal(caller: string, sessionId: string | undefined, bytesOut?: string, bytesIn?: string): LifecycleSignal[] {
  const count = (v?: string) => {
    const n = Number(v ?? 0);
    return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  };
  const out = count(bytesOut);
  const inb = count(bytesIn);
  return sessionId && (out > 0 || inb > 0) ? [{ kind: 'usage', caller, sessionId, bytesOut: out, bytesIn: inb }] : [];
}

/** A value a caller makes once per configuration (compiled patterns, address lists), not per request. */
export function perConfig<T>(make: (config: Config) => T): (config: Config) => T {
  const made = new WeakMap<Config, T>();
  return (config) => {
    let v = made.get(config);
    if (v === undefined) {
      v = make(config);
      made.set(config, v);
    }
    return v;
  };
}

/** `f` of a value that may still be a promise: at once when it is not (no microtask), else when it settles. */
export function andThen<T, U>(v: T | Promise<T>, f: (v: T) => U): U | Promise<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}
