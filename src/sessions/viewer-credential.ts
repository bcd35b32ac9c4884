// The session credential of an HTTP viewer (docs/callers.md#http-viewer-sessions): what one full
// decision grants, signed so that every later playlist and segment request is checked in memory.
//
// Format: base64url(JSON claims) "." base64url(HMAC-SHA256(key, that first part)), the MAC cut to
// 128 bits. Not a JWT on purpose: a credential is checked on every segment of every viewer, and
// one synchronous HMAC over a short text is far cheaper than jose's async JWS verification
// (docs/decision-path.md#http-viewer-sessions); nothing outside Streamgate reads these claims.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a credential says; short names keep the cookie small. */
export interface ViewerClaims {
  /** The viewer session's id (the registry's callerSessionId). */
  s: string;
  /** The token id (a self-signed JWT's parent) and its account. */
  t: number;
  a: string;
  /** Hash prefix of the value the viewer presented (the token or JWT in the URL). */
  p: string;
  /** Hash prefix of the token record's value when granted: a refresh gives it a new one. */
  v: string;
  /** The token record's revision when granted: a credential is refreshed only while it holds. */
  r: number;
  /** The action granted (the auth-request caller's hooks.authRequest.action). */
  c: 'publish' | 'subscribe';
  /** The stream granted (its renditions too, with sessions.http.renditionSeparators). */
  n: string;
  /** The client address it is bound to, when bound. */
  i?: string;
  /** Expiry, epoch seconds (never past the token's expiresOn). */
  e: number;
  /**
   * When this value was minted, epoch seconds: with `e`, what a check caps by
   * sessions.http.maxCredentialSeconds (a refresh is a new value with its own).
   */
  b: number;
  /**
   * When the token inherits country lists (a publish token's, the account's defaults): a
   * fingerprint of the account's country rules at the grant; refreshed only while they are unchanged.
   */
  g?: string;
  /**
   * The origin (host of Origin, else Referer) the grant was judged from, when an origin rule judged
   * it (the token's allowedOrigins or a self-signed JWT's): the credential holds only from it.
   */
  o?: string;
  /** The latest a refresh may reach, epoch seconds: a self-signed JWT's own `exp`. */
  m?: number;
}

const MAC_BYTES = 16;
const MAX_CREDENTIAL = 2048;

/**
 * A value's tag: the first 12 base64url characters of its SHA-256 (tells a value from another,
 * reveals nothing usable), made from the SHA-256 in hex that the decision path already remembers
 * (tokenHash, src/enforce/lookup.ts hashOf): no second hash.
 */
export function valueTagFromHash(hexSha256: string): string {
  // 12 base64url characters are 9 bytes
  return Buffer.from(hexSha256.slice(0, 18), 'hex').toString('base64url');
}

/** The MAC as text: compared as text, so that no other spelling of the same bytes passes (base64url's spare bits). */
const mac = (key: Buffer, body: string): string => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES).toString('base64url');
const MAC_CHARS = 22;

export function mintCredential(key: Buffer, claims: ViewerClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/** The claims of a credential whose signature holds, else undefined (expiry is the caller's check). */
export function readCredential(key: Buffer, value: string): ViewerClaims | undefined {
  if (value.length > MAX_CREDENTIAL) return undefined;
  const dot = value.indexOf('.');
  if (dot <= 0) return undefined;
  const body = value.slice(0, dot);
  const given = value.slice(dot + 1);
  if (given.length !== MAC_CHARS || !timingSafeEqual(Buffer.from(given), Buffer.from(mac(key, body)))) return undefined;
  try {
    const c = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as ViewerClaims;
    const ok =
      typeof c === 'object' &&
      c !== null &&
      typeof c.s === 'string' &&
      Number.isSafeInteger(c.t) &&
      typeof c.a === 'string' &&
      typeof c.p === 'string' &&
      typeof c.v === 'string' &&
      Number.isSafeInteger(c.r) &&
      (c.c === 'publish' || c.c === 'subscribe') &&
      typeof c.n === 'string' &&
      (c.i === undefined || typeof c.i === 'string') &&
      Number.isSafeInteger(c.e) &&
      Number.isSafeInteger(c.b) &&
      (c.g === undefined || typeof c.g === 'string') &&
      (c.o === undefined || typeof c.o === 'string') &&
      (c.m === undefined || Number.isSafeInteger(c.m));
    return ok ? c : undefined;
  } catch {
    return undefined;
  }
}
