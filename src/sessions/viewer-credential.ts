// The session credential of an HTTP viewer (docs/callers.md#http-viewer-sessions): what one full
// decision grants, signed so that every later playlist and segment request is checked in memory.
//
// Format: base64url(JSON claims) "." base64url(HMAC-SHA256(key, that first part)), the MAC cut to
// 128 bits. Not a JWT on purpose: a credential is checked on every segment of every viewer, and
// one synchronous HMAC over ~200 bytes costs a few microseconds, where jose's async JWS
// verification costs an order more; nothing outside Streamgate reads these claims.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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
  /** The latest a refresh may reach, epoch seconds: a self-signed JWT's own `exp`. */
  m?: number;
}

const MAC_BYTES = 16;
const MAX_CREDENTIAL = 2048;

/**
 * A value's tag: the first 12 base64url characters of its SHA-256 (tells a value from another,
 * reveals nothing usable), made from the SHA-256 in hex that the decision path already remembers
 * (tokenHash, src/enforce/credential.ts hashOf): no second hash.
 */
export function valueTagFromHash(hexSha256: string): string {
  // 12 base64url characters are 9 bytes
  return Buffer.from(hexSha256.slice(0, 18), 'hex').toString('base64url');
}

/** The signing key: sessions.http.secret, else derived from hooks.secret, else a key kept in dataDir. */
export function credentialKey(opts: { secret: string; hookSecret: string; dataDir: string }): { key: Buffer; source: 'secret' | 'hook-secret' | 'data-dir' | 'memory' } {
  const derive = (s: string) => Buffer.from(hkdfSync('sha256', s, 'streamgate', 'viewer session credentials', 32));
  if (opts.secret !== '') return { key: derive(opts.secret), source: 'secret' };
  if (opts.hookSecret !== '') return { key: derive(opts.hookSecret), source: 'hook-secret' };
  const file = path.join(opts.dataDir, 'viewer-credential-key');
  try {
    const k = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (k.length === 32) return { key: k, source: 'data-dir' };
  } catch {
    // not there yet
  }
  const k = randomBytes(32);
  try {
    // created 0600 ('wx': never over another process's key); a umask can only narrow it
    writeFileSync(file, `${k.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    return { key: k, source: 'data-dir' };
  } catch {
    // another process wrote it first: read theirs; an unwritable dataDir keeps a key in memory
    try {
      const theirs = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
      if (theirs.length === 32) return { key: theirs, source: 'data-dir' };
    } catch {
      // fall through
    }
    return { key: k, source: 'memory' };
  }
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
      (c.m === undefined || Number.isSafeInteger(c.m));
    return ok ? c : undefined;
  } catch {
    return undefined;
  }
}
