// Self-signed subscribe tokens (docs/api.md#self-signed-subscribe-tokens): HS256/384/512 JWTs keyed with the UTF-8 bytes of
// a parent subscribe token's value. Parsing and signature checks here; the rules in evaluate.ts.
import { SignJWT, compactVerify, decodeJwt, decodeProtectedHeader } from 'jose';
import { ipRuleProblem, originRuleProblem } from '../domain/matchers.js';

export const SELF_SIGNED_ALGS = ['HS256', 'HS384', 'HS512'] as const;
export type SelfSignedAlg = (typeof SELF_SIGNED_ALGS)[number];
/** Longer values are not JWTs anyone issues for media access; the bound keeps the peek cheap. */
export const MAX_JWT_LENGTH = 8192;
const MAX_CUSTOM_VIEWER_DATA = 1024;

export interface SelfSignedClaims {
  tokenId: number;
  tokenType: string;
  streamName: string;
  allowedOrigins: string[];
  allowedIpAddresses: string[];
  trackingId?: string;
  customViewerData?: string;
  exp?: number;
  nbf?: number;
  iat?: number;
}

/** Token values are 64 hex characters; a JWT is three base64url segments starting with a JSON header. */
export const looksLikeJwt = (s: string): boolean =>
  s.length <= MAX_JWT_LENGTH && s.startsWith('eyJ') && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(s);

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.length <= 100 && v.every((x) => typeof x === 'string');

/**
 * Reads the claims without verifying (to find the parent). Returns a problem text for anything
 * that cannot be a valid self-signed subscribe token.
 */
export function peekSelfSigned(jwt: string): { claims: SelfSignedClaims; alg: string } | { problem: string } {
  let header: { alg?: unknown };
  let payload: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jwt);
    payload = decodeJwt(jwt);
  } catch {
    return { problem: 'not a decodable JWT' };
  }
  if (typeof header.alg !== 'string' || !(SELF_SIGNED_ALGS as readonly string[]).includes(header.alg)) {
    return { problem: `algorithm ${String(header.alg)} is not accepted (HS256, HS384, HS512)` };
  }
  const s = payload.streaming as Record<string, unknown> | undefined;
  if (typeof s !== 'object' || s === null) return { problem: 'no streaming claim' };
  if (typeof s.tokenId !== 'number' || !Number.isInteger(s.tokenId) || s.tokenId < 1) return { problem: 'streaming.tokenId is not a token id' };
  if (typeof s.tokenType !== 'string') return { problem: 'streaming.tokenType missing' };
  if (typeof s.streamName !== 'string' || s.streamName === '') return { problem: 'streaming.streamName missing' };
  const origins = s.allowedOrigins ?? [];
  const ips = s.allowedIpAddresses ?? [];
  if (!isStringList(origins) || origins.some((o) => originRuleProblem(o) !== null)) return { problem: 'streaming.allowedOrigins is not a list of host names' };
  if (!isStringList(ips) || ips.some((i) => ipRuleProblem(i) !== null)) return { problem: 'streaming.allowedIpAddresses is not a list of IPv4 addresses or CIDR blocks' };
  const tracking = s.tracking as { trackingId?: unknown } | null | undefined;
  if (tracking != null && (typeof tracking !== 'object' || (tracking.trackingId != null && typeof tracking.trackingId !== 'string'))) {
    return { problem: 'streaming.tracking.trackingId is not a string' };
  }
  if (s.customViewerData != null && (typeof s.customViewerData !== 'string' || s.customViewerData.length > MAX_CUSTOM_VIEWER_DATA)) {
    return { problem: `streaming.customViewerData must be a string of at most ${MAX_CUSTOM_VIEWER_DATA} characters` };
  }
  for (const k of ['exp', 'nbf', 'iat'] as const) {
    if (payload[k] !== undefined && typeof payload[k] !== 'number') return { problem: `${k} is not a number` };
  }
  return {
    alg: header.alg,
    claims: {
      tokenId: s.tokenId,
      tokenType: s.tokenType,
      streamName: s.streamName,
      allowedOrigins: origins.map((o) => o.toLowerCase()),
      allowedIpAddresses: ips,
      trackingId: typeof tracking?.trackingId === 'string' ? tracking.trackingId : undefined,
      customViewerData: typeof s.customViewerData === 'string' ? s.customViewerData : undefined,
      exp: payload.exp as number | undefined,
      nbf: payload.nbf as number | undefined,
      iat: payload.iat as number | undefined,
    },
  };
}

/** Checks the signature with the parent token's value as the HMAC key. */
export async function signatureValid(jwt: string, parentTokenValue: string): Promise<boolean> {
  try {
    await compactVerify(jwt, new TextEncoder().encode(parentTokenValue), { algorithms: [...SELF_SIGNED_ALGS] });
    return true;
  } catch {
    return false;
  }
}

export interface SignSubscribeOptions {
  /** The parent subscribe token's value (the HMAC key, used as UTF-8 bytes). */
  token: string;
  tokenId: number;
  streamName: string;
  expiresInSeconds: number;
  allowedOrigins?: string[];
  allowedIpAddresses?: string[];
  trackingId?: string;
  customViewerData?: string;
  alg?: SelfSignedAlg;
  /** Seconds since the epoch (default: now). */
  now?: number;
}

/** Signs a self-signed subscribe token the way the hosted platform documents it. */
export async function signSubscribeJwt(o: SignSubscribeOptions): Promise<string> {
  const now = o.now ?? Math.floor(Date.now() / 1000);
  const streaming: Record<string, unknown> = {
    tokenId: o.tokenId,
    tokenType: 'Subscribe',
    streamName: o.streamName,
    allowedOrigins: o.allowedOrigins ?? [],
    allowedIpAddresses: o.allowedIpAddresses ?? [],
  };
  if (o.trackingId !== undefined) streaming.tracking = { trackingId: o.trackingId };
  if (o.customViewerData !== undefined) streaming.customViewerData = o.customViewerData;
  return new SignJWT({ streaming })
    .setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + o.expiresInSeconds)
    .sign(new TextEncoder().encode(o.token));
}
