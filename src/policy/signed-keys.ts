// The keys of a signed-URL issuer (docs/api.md#signed-url-issuers): what each format needs, checked
// when an issuer is written, and the keys in the forms the verifiers take, imported once per record.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import type { IssuerRecord, NamedPublicKey, SignedSettings } from '../domain/issuers.js';
import { importPublicKey } from './signed-cloudfront.js';

/** An HMAC key given as hex: an even number of hex digits, at least `bytes` bytes. */
const hexKey = (v: string | null, bytes: number) => v !== null && v.length >= bytes * 2 && v.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(v);

/**
 * Whether `secret` is a key the format verifies with: hex of 16 bytes or more (EdgeAuth), hex of 32
 * or more (a CAT's HS256 key), any non-empty text (SecureToken, WMSAuth). Checked when written, and
 * again where a key source is read later (a file that changed may hold anything): an empty or
 * unreadable key is never one anybody could sign with.
 */
export function secretUsable(s: SignedSettings, secret: string | null): boolean {
  if (secret === null || secret === '') return false;
  if (s.format === 'akamai-edgeauth') return hexKey(secret, 16);
  if (s.format === 'cat') return hexKey(secret, 32);
  return true;
}

/** A public key's problem, for the formats' key types (RSA of 2048 bits or more, EC P-256), or null. */
function publicKeyProblem(k: NamedPublicKey, allowRsa: boolean): string | null {
  let key: KeyObject;
  try {
    key = importPublicKey(k.key);
  } catch {
    return `key ${k.id} is not a public key (PEM, or base64 DER SubjectPublicKeyInfo)`;
  }
  const d = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec' && d?.namedCurve === 'prime256v1') return null;
  if (allowRsa && key.asymmetricKeyType === 'rsa' && (d?.modulusLength ?? 0) >= 2048) return null;
  return `key ${k.id} is ${key.asymmetricKeyType ?? 'unknown'}${d?.modulusLength ? ` ${d.modulusLength}` : ''}${d?.namedCurve ? ` ${d.namedCurve}` : ''}: expected ${allowRsa ? 'RSA of 2048 bits or more, or ' : ''}EC P-256`;
}

/** Whether the private key (PEM) is the private half of the public key `pub`. */
function pairs(privatePem: string, pub: NamedPublicKey): boolean | 'unreadable' {
  try {
    const derived = createPublicKey(createPrivateKey(privatePem)).export({ type: 'spki', format: 'der' });
    return derived.equals(importPublicKey(pub.key).export({ type: 'spki', format: 'der' }));
  } catch {
    return 'unreadable';
  }
}

const urlProblem = (u: string): string | null => {
  let p: URL;
  try {
    p = new URL(u);
  } catch {
    return `${u.slice(0, 80)} is not a URL`;
  }
  if (p.protocol !== 'https:' && p.protocol !== 'http:') return `${u.slice(0, 80)} is not http(s)`;
  if (`${p.protocol}//${p.host}` !== u) return `${u.slice(0, 80)}: give the scheme and host only (no path, query or trailing /), e.g. https://d111111abcdef8.cloudfront.net`;
  return null;
};

/**
 * The problems of a signed-URL issuer's keys, as [field, problem]: the secret each format needs,
 * the public keys, the viewer-facing addresses, and the private key /sign signs with (checked
 * against its public key when `signingKeyGiven`).
 */
export function signedKeysProblem(s: SignedSettings, secret: string | null, signingKey: string | null, signingKeyGiven: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const hasSecret = secret !== null && secret !== '';
  const noSigningKey = () => {
    if (signingKey !== null) out.push(['signingKey', `a ${s.format} issuer signs with its secret; it has no private key`]);
  };
  switch (s.format) {
    case 'akamai-edgeauth':
      if (!hexKey(secret, 16)) out.push(['secret', "required: the EdgeAuth key as Akamai's property holds it, hex (an even number of digits, 16 bytes or more)"]);
      if (s.fieldDelimiter.length !== 1 || s.aclDelimiter.length !== 1 || s.fieldDelimiter === s.aclDelimiter) out.push(['settings.fieldDelimiter', 'the field and ACL delimiters are one character each, and differ']);
      noSigningKey();
      break;
    case 'wowza-securetoken':
    case 'nimble-wmsauth':
      if (!hasSecret) out.push(['secret', s.format === 'wowza-securetoken' ? 'required: the SecureToken shared secret' : "required: the WMSAuth rule's password"]);
      noSigningKey();
      break;
    case 'cloudfront': {
      if (hasSecret) out.push(['secret', 'a cloudfront issuer verifies with public keys (settings.publicKeys); it has no secret']);
      if (s.publicKeys.length === 0) out.push(['settings.publicKeys', "required: the public keys of the distribution's trusted key group, by their ids"]);
      s.publicKeys.forEach((k, i) => {
        const p = publicKeyProblem(k, true);
        if (p) out.push([`settings.publicKeys.${i}`, p]);
      });
      if (s.urls.length === 0) out.push(['settings.urls', 'required: the addresses viewers request through (the distribution domain, alternate domains), which policies name']);
      s.urls.forEach((u, i) => {
        const p = urlProblem(u);
        if (p) out.push([`settings.urls.${i}`, p]);
      });
      signingProblem(s.signingKeyId, s.publicKeys, signingKey, signingKeyGiven, out);
      break;
    }
    case 'cat': {
      if ((s.secretKeyId !== null) !== hasSecret) out.push(['secret', s.secretKeyId !== null ? `required with secretKeyId: the HS256 key of kid ${s.secretKeyId}, hex` : 'a secret is the HS256 key of settings.secretKeyId: name its kid there, or remove the secret (null)']);
      else if (hasSecret && !hexKey(secret, 32)) out.push(['secret', 'the HS256 key as hex, 32 bytes or more']);
      if (s.publicKeys.length === 0 && s.secretKeyId === null) out.push(['settings.publicKeys', 'a cat issuer needs a key: ES256 public keys by kid, or an HS256 secret (secretKeyId and secret)']);
      s.publicKeys.forEach((k, i) => {
        const p = publicKeyProblem(k, false);
        if (p) out.push([`settings.publicKeys.${i}`, p]);
        if (k.id === s.secretKeyId) out.push([`settings.publicKeys.${i}`, `kid ${k.id} is also secretKeyId: a kid names one key`]);
      });
      s.urls.forEach((u, i) => {
        const p = urlProblem(u);
        if (p) out.push([`settings.urls.${i}`, p]);
      });
      if (s.signingKeyId !== null && s.signingKeyId === s.secretKeyId) {
        if (signingKey !== null) out.push(['signingKey', 'the HS256 key signs (signingKeyId is secretKeyId): no private key is needed']);
      } else signingProblem(s.signingKeyId, s.publicKeys, signingKey, signingKeyGiven, out);
      break;
    }
  }
  const ids = new Set<string>();
  for (const k of 'publicKeys' in s ? s.publicKeys : []) {
    if (ids.has(k.id)) out.push(['settings.publicKeys', `key id ${k.id} is given twice`]);
    ids.add(k.id);
  }
  return out;
}

function signingProblem(id: string | null, keys: NamedPublicKey[], signingKey: string | null, given: boolean, out: Array<[string, string]>): void {
  if (id === null) {
    if (signingKey !== null) out.push(['signingKey', 'settings.signingKeyId must name the public key it is the private half of']);
    return;
  }
  const pub = keys.find((k) => k.id === id);
  if (!pub) {
    out.push(['settings.signingKeyId', `${id} is not the id of one of settings.publicKeys`]);
    return;
  }
  if (signingKey === null) {
    out.push(['signingKey', `required with signingKeyId: the private key (PEM) of ${id}`]);
    return;
  }
  if (!given) return;
  const p = pairs(signingKey, pub);
  if (p === 'unreadable') out.push(['signingKey', 'not a private key in PEM (PKCS#8, PKCS#1 or SEC1)']);
  else if (!p) out.push(['signingKey', `not the private half of public key ${id}`]);
}

/** The keys of a record, imported once per issuer and rev. */
const imported = new WeakMap<IssuerRecord, { publicKeys: Map<string, KeyObject>; signing: KeyObject | null }>();
export function issuerKeys(i: IssuerRecord): { publicKeys: Map<string, KeyObject>; signing: KeyObject | null } {
  let k = imported.get(i);
  if (!k) {
    const publicKeys = new Map<string, KeyObject>();
    const s = i.settings;
    for (const pk of s && 'publicKeys' in s ? s.publicKeys : []) {
      try {
        publicKeys.set(pk.id, importPublicKey(pk.key));
      } catch {
        // checked when written; a record that says otherwise verifies nothing with it
      }
    }
    let signing: KeyObject | null = null;
    try {
      signing = i.signingKey !== null ? createPrivateKey(i.signingKey) : null;
    } catch {
      signing = null;
    }
    k = { publicKeys, signing };
    imported.set(i, k);
  }
  return k;
}
