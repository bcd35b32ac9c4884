// Amazon CloudFront signed URLs and signed cookies, verified as CloudFront checks them
// (docs/callers.md#amazon-cloudfront): a canned policy rebuilt from the URL and `Expires`, or a
// custom policy sent base64'd in `Policy`; the signature (RSA PKCS#1 v1.5 or ECDSA P-256, SHA-1 or,
// with `Hash-Algorithm=SHA256`, SHA-256) over the policy's bytes as received; CloudFront's base64
// (`+` → `-`, `=` → `_`, `/` → `~`). The URL a policy's Resource is compared with is the
// distribution's address (the issuer's `urls`) with the request's path and its own query parameters.
import { createPrivateKey, createPublicKey, type KeyObject, sign as signBytes, verify as verifyBytes } from 'node:crypto';
import { type ExplainedField, MAX_CREDENTIAL, type SignedRequest, type SignedResult, addressMatches, decodeLoose, outside, rawParams, refuse, seconds, single, timeProblem, wildcardMatch } from './signed-common.js';

export interface CloudFrontSettings {
  /** Public keys by the id CloudFront's key group gives them (`K2JCJMDEHXQW5F`), PEM or base64 SPKI. */
  publicKeys: Array<{ id: string; key: string }>;
  /** The addresses viewers request through (`https://d111111abcdef8.cloudfront.net`, an alternate domain), without a trailing `/`. */
  urls: string[];
  clockSkewSeconds: number;
}

/** CloudFront's query parameters and cookies. */
const PARAMS = ['Expires', 'Policy', 'Signature', 'Key-Pair-Id', 'Hash-Algorithm'] as const;
const COOKIE = (p: string) => `CloudFront-${p}`;

/** CloudFront's base64 back to bytes: `-` `_` `~` are `+` `=` `/`. Undefined when it is not that alphabet. */
export function cloudFrontBase64Decode(s: string): Buffer | undefined {
  if (!/^[A-Za-z0-9\-_~]*$/.test(s)) return undefined;
  return Buffer.from(s.replace(/-/g, '+').replace(/_/g, '=').replace(/~/g, '/'), 'base64');
}

export const cloudFrontBase64 = (b: Buffer): string => b.toString('base64').replace(/\+/g, '-').replace(/=/g, '_').replace(/\//g, '~');

interface Presented {
  from: 'query' | 'cookies';
  expires?: string;
  policy?: string;
  signature: string;
  keyPairId: string;
  hashAlgorithm?: string;
  /** The request's own query (CloudFront's parameters taken out), as sent. */
  ownQuery: string;
}

/** The credential in the request's query or cookies, or undefined when it carries none. */
export function findCloudFront(req: SignedRequest): Presented | { problem: string } | undefined {
  const params = rawParams(req.query);
  const own = req.query === '' ? [] : req.query.split('&').filter((part) => !PARAMS.includes(decodeLoose(part.split('=')[0] ?? '') as never));
  const got: Record<string, string | undefined> = {};
  const inQuery = params.some(([n]) => n === 'Signature' || n === 'Key-Pair-Id');
  for (const p of PARAMS) {
    if (inQuery) {
      const v = single(params, p);
      if (typeof v === 'object') return v;
      got[p] = v;
    } else got[p] = req.cookies.get(COOKIE(p));
  }
  if (got.Signature === undefined && got['Key-Pair-Id'] === undefined) return undefined;
  const where = inQuery ? 'parameter' : 'cookie';
  const name = (p: string) => (inQuery ? p : COOKIE(p));
  if (got.Signature === undefined) return { problem: `${where} ${name('Signature')} is missing` };
  if (got['Key-Pair-Id'] === undefined) return { problem: `${where} ${name('Key-Pair-Id')} is missing` };
  if ((got.Expires === undefined) === (got.Policy === undefined)) return { problem: `exactly one of ${name('Expires')} (a canned policy) and ${name('Policy')} (a custom one) is required` };
  return {
    from: inQuery ? 'query' : 'cookies',
    expires: got.Expires,
    policy: got.Policy,
    signature: got.Signature,
    keyPairId: got['Key-Pair-Id'],
    hashAlgorithm: got['Hash-Algorithm'],
    ownQuery: inQuery ? own.join('&') : req.query,
  };
}

/** A key by id, imported once per settings object. */
const imported = new WeakMap<CloudFrontSettings, Map<string, KeyObject | null>>();
function keyOf(s: CloudFrontSettings, id: string): KeyObject | null | undefined {
  let m = imported.get(s);
  if (!m) {
    m = new Map();
    imported.set(s, m);
  }
  if (m.has(id)) return m.get(id);
  const entry = s.publicKeys.find((k) => k.id === id);
  if (!entry) return undefined;
  let k: KeyObject | null;
  try {
    k = importPublicKey(entry.key);
  } catch {
    k = null;
  }
  m.set(id, k);
  return k;
}

/** A PEM public key, or base64 SPKI DER (the form CloudFront's console shows without the PEM lines). */
export function importPublicKey(text: string): KeyObject {
  const t = text.trim();
  return t.startsWith('-----') ? createPublicKey(t) : createPublicKey({ key: Buffer.from(t, 'base64'), format: 'der', type: 'spki' });
}

/** The whitespace-free canned policy CloudFront rebuilds from the URL and `Expires`. */
export const cannedPolicy = (resource: string, expires: number): string =>
  JSON.stringify({ Statement: [{ Resource: resource, Condition: { DateLessThan: { 'AWS:EpochTime': expires } } }] });

interface Custom {
  resource?: string;
  lessThan: number;
  greaterThan?: number;
  sourceIp?: string;
}

function readPolicy(text: string): Custom | { problem: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { problem: 'the policy is not JSON' };
  }
  const st = (doc as { Statement?: unknown })?.Statement;
  if (!Array.isArray(st) || st.length !== 1 || typeof st[0] !== 'object' || st[0] === null) return { problem: 'the policy must hold exactly one Statement' };
  const { Resource, Condition } = st[0] as { Resource?: unknown; Condition?: Record<string, unknown> };
  if (Resource !== undefined && typeof Resource !== 'string') return { problem: 'the policy Resource is not a string' };
  if (typeof Condition !== 'object' || Condition === null) return { problem: 'the policy has no Condition' };
  for (const k of Object.keys(Condition)) if (!['DateLessThan', 'DateGreaterThan', 'IpAddress'].includes(k)) return { problem: `the policy condition ${k.slice(0, 40)} is not one CloudFront defines` };
  const epoch = (c: unknown): number | undefined => {
    const v = (c as Record<string, unknown> | undefined)?.['AWS:EpochTime'];
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
  };
  const lessThan = epoch(Condition.DateLessThan);
  if (lessThan === undefined) return { problem: 'the policy has no DateLessThan AWS:EpochTime (CloudFront requires one)' };
  const greaterThan = Condition.DateGreaterThan === undefined ? undefined : epoch(Condition.DateGreaterThan);
  if (Condition.DateGreaterThan !== undefined && greaterThan === undefined) return { problem: 'DateGreaterThan is not an AWS:EpochTime' };
  const ip = (Condition.IpAddress as Record<string, unknown> | undefined)?.['AWS:SourceIp'];
  if (Condition.IpAddress !== undefined && typeof ip !== 'string') return { problem: 'IpAddress has no AWS:SourceIp' };
  return { resource: Resource, lessThan, ...(greaterThan !== undefined ? { greaterThan } : {}), ...(typeof ip === 'string' ? { sourceIp: ip } : {}) };
}

/** Verifies the presented signed URL or cookies for `req` at `now`. */
export function verifyCloudFront(p: Presented, req: SignedRequest, s: CloudFrontSettings, now: number): SignedResult {
  const fields: ExplainedField[] = [{ name: p.from === 'query' ? 'Key-Pair-Id' : 'CloudFront-Key-Pair-Id', value: p.keyPairId }];
  if ((p.policy?.length ?? 0) + p.signature.length > MAX_CREDENTIAL) return refuse(`the policy and signature are longer than ${MAX_CREDENTIAL} characters`, fields);
  const key = keyOf(s, p.keyPairId);
  if (key === undefined) return refuse(`key pair id ${p.keyPairId.slice(0, 64)} is not one of the issuer's public keys`, fields);
  if (key === null) return refuse(`the issuer's public key ${p.keyPairId} cannot be read`, fields);
  const hash = p.hashAlgorithm === undefined || p.hashAlgorithm === 'SHA1' ? 'sha1' : p.hashAlgorithm === 'SHA256' ? 'sha256' : undefined;
  if (hash === undefined) return refuse(`Hash-Algorithm ${p.hashAlgorithm!.slice(0, 16)} is not SHA1 or SHA256`, fields);
  const sig = cloudFrontBase64Decode(p.signature);
  if (sig === undefined || sig.length === 0) return refuse("the signature is not CloudFront's base64 (A-Z a-z 0-9 - _ ~)", fields);

  const path = req.path;
  const resources = s.urls.map((u) => `${u}${path}${p.ownQuery !== '' ? `?${p.ownQuery}` : ''}`);
  let policyText: string;
  let custom: Custom;
  if (p.expires !== undefined) {
    const exp = seconds(p.expires);
    if (exp === undefined || exp > 2147483647) return refuse('Expires is not Unix seconds', fields);
    fields.push({ name: 'Expires', value: p.expires });
    // canned: the policy is rebuilt for each address the distribution answers on; one must verify
    const verified = resources.find((r) => verifyBytes(hash, Buffer.from(cannedPolicy(r, exp)), key, sig));
    policyText = cannedPolicy(verified ?? resources[0] ?? path, exp);
    fields.push({ name: 'signature', value: `${hash === 'sha1' ? 'SHA-1' : 'SHA-256'} over the canned policy`, check: verified ? `matches for ${verified}` : `matches for none of ${resources.join(', ')}`, ok: verified !== undefined });
    if (!verified) return refuse('the signature does not match the canned policy for this URL: the key, the URL (path or query) or Expires differs', fields, policyText);
    custom = { resource: verified, lessThan: exp };
  } else {
    const bytes = cloudFrontBase64Decode(p.policy!);
    if (bytes === undefined) return refuse("Policy is not CloudFront's base64 (A-Z a-z 0-9 - _ ~)", fields);
    policyText = bytes.toString('utf8');
    fields.push({ name: 'Policy', value: policyText });
    const ok = verifyBytes(hash, bytes, key, sig);
    fields.push({ name: 'signature', value: `${hash === 'sha1' ? 'SHA-1' : 'SHA-256'} over the policy as sent`, check: ok ? 'matches' : 'does not match', ok });
    if (!ok) return refuse('the signature does not match the policy: the key or the policy differs', fields, policyText);
    const read = readPolicy(policyText);
    if ('problem' in read) return refuse(read.problem, fields, policyText);
    custom = read;
  }

  const time = timeProblem(now, s.clockSkewSeconds, custom.lessThan, custom.greaterThan, fields);
  if (time) return refuse(time.problem, fields, policyText, time.expired);
  if (custom.resource !== undefined && p.expires === undefined) {
    const hit = resources.find((r) => wildcardMatch(custom.resource!, r));
    fields.push({ name: 'Resource', value: custom.resource, check: hit ? `matches ${hit}` : `matches none of ${resources.join(', ')}`, ok: hit !== undefined });
    if (!hit) return outside('path', `the URL is outside the policy's Resource ${custom.resource}`, fields, policyText);
  }
  if (custom.sourceIp !== undefined) {
    const ok = req.clientIp !== undefined && addressMatches(req.clientIp, custom.sourceIp);
    fields.push({ name: 'AWS:SourceIp', value: custom.sourceIp, check: `address ${req.clientIp ?? 'unknown'} ${ok ? 'is' : 'is not'} in it`, ok });
    if (!ok) return outside('address', req.clientIp === undefined ? `the policy is bound to ${custom.sourceIp} and the client address is unknown` : `address ${req.clientIp} is not in the policy's AWS:SourceIp ${custom.sourceIp}`, fields, policyText);
  }
  return {
    ok: true,
    grant: {
      format: 'cloudfront',
      exp: custom.lessThan,
      ...(custom.greaterThan !== undefined ? { nbf: custom.greaterThan } : {}),
      keyId: p.keyPairId,
      scope: `resource ${custom.resource ?? '(every object)'}`,
      // a canned policy, or a resource without a wildcard, grants one object
      ...(custom.resource !== undefined && !/[*?]/.test(custom.resource) ? { narrow: true } : {}),
    },
    fields,
    signed: policyText,
  };
}

export interface CloudFrontGrantInput {
  /** The resource: a URL, `*` and `?` allowed in a custom policy. */
  resource: string;
  exp: number;
  start?: number;
  /** IPv4 address or CIDR. */
  ip?: string;
}

/**
 * Signs `g` with a private key (PEM): a canned policy when it has only an expiry and no wildcard,
 * else a custom one. Answers the values of CloudFront's parameters (the cookies carry the same).
 */
export function signCloudFront(g: CloudFrontGrantInput, keyPairId: string, privateKeyPem: string, hash: 'SHA1' | 'SHA256'): Record<string, string> {
  const key = createPrivateKey(privateKeyPem);
  const canned = g.start === undefined && g.ip === undefined && !/[*?]/.test(g.resource);
  const condition: Record<string, unknown> = { DateLessThan: { 'AWS:EpochTime': g.exp } };
  if (g.start !== undefined) condition.DateGreaterThan = { 'AWS:EpochTime': g.start };
  if (g.ip !== undefined) condition.IpAddress = { 'AWS:SourceIp': g.ip.includes('/') ? g.ip : `${g.ip}/32` };
  const policy = canned ? cannedPolicy(g.resource, g.exp) : JSON.stringify({ Statement: [{ Resource: g.resource, Condition: condition }] });
  const signature = cloudFrontBase64(signBytes(hash === 'SHA256' ? 'sha256' : 'sha1', Buffer.from(policy), key));
  const out: Record<string, string> = canned ? { Expires: String(g.exp) } : { Policy: cloudFrontBase64(Buffer.from(policy)) };
  out['Key-Pair-Id'] = keyPairId;
  out.Signature = signature;
  if (hash === 'SHA256') out['Hash-Algorithm'] = 'SHA256';
  return out;
}
