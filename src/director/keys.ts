// Signing keys for the director's connection JWTs, kept in the store so that every instance behind
// a load balancer signs with one key and serves one JWKS, across restarts and rotations.
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Store } from '../store/store.js';

export const SIGNING_KEYS_META = 'director.signingKeys';

export interface KeyEntry {
  kid: string;
  createdOn: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

export interface SigningKeys {
  current: KeyEntry;
  previous?: KeyEntry;
}

/**
 * Parses the stored value, refusing anything that could not sign or verify: a corrupt value must
 * stop start-up rather than be silently replaced, which would orphan every JWT already issued.
 */
export function parseSigningKeys(json: string): SigningKeys {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new Error(`store meta ${SIGNING_KEYS_META} is not valid JSON`);
  }
  const entry = (e: unknown, name: string): KeyEntry => {
    const o = e as Partial<KeyEntry> | null;
    const ec = (j: JWK | undefined) => j?.kty === 'EC' && j.crv === 'P-256' && typeof j.x === 'string' && typeof j.y === 'string';
    if (!o || typeof o.kid !== 'string' || typeof o.createdOn !== 'string' || !ec(o.privateJwk) || !ec(o.publicJwk) || typeof o.privateJwk?.d !== 'string') {
      throw new Error(`store meta ${SIGNING_KEYS_META}: ${name} is not an ES256 key entry`);
    }
    return o as KeyEntry;
  };
  const o = (v ?? {}) as { current?: unknown; previous?: unknown };
  const out: SigningKeys = { current: entry(o.current, 'current') };
  if (o.previous !== undefined) out.previous = entry(o.previous, 'previous');
  return out;
}

/** The JWKS form of a key: only the public members, picked by name so `d` can never leak. */
export function publicJwkOf(e: KeyEntry): JWK {
  const { kty, crv, x, y } = e.publicJwk;
  return { kty, crv, x, y, kid: e.kid, alg: 'ES256', use: 'sig' };
}

async function newEntry(now: () => number): Promise<KeyEntry> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return {
    kid: await calculateJwkThumbprint(publicJwk),
    createdOn: new Date(now()).toISOString(),
    privateJwk: await exportJWK(privateKey),
    publicJwk,
  };
}

async function readKeys(store: Store): Promise<SigningKeys | null> {
  const raw = await store.getMeta(SIGNING_KEYS_META);
  return raw === null ? null : parseSigningKeys(raw);
}

/** The stored keys, or `candidate` written only-if-absent; a lost race yields the winner's keys. */
async function readOrInit(store: Store, candidate: () => Promise<SigningKeys>): Promise<SigningKeys> {
  const found = await readKeys(store);
  if (found) return found;
  const mine = await candidate();
  if (await store.setMeta(SIGNING_KEYS_META, JSON.stringify(mine), true)) return mine;
  const winner = await readKeys(store);
  if (!winner) throw new Error(`store meta ${SIGNING_KEYS_META}: write refused but nothing stored`);
  return winner;
}

interface State {
  keys: SigningKeys;
  // Imported once per key change: importing on every sign would cost more than the signature.
  privateKey: CryptoKey;
  jwks: { keys: JWK[] };
}

async function toState(keys: SigningKeys): Promise<State> {
  const privateKey = (await importJWK(keys.current.privateJwk, 'ES256')) as CryptoKey;
  const jwks = { keys: [keys.current, ...(keys.previous ? [keys.previous] : [])].map(publicJwkOf) };
  return { keys, privateKey, jwks };
}

export class KeyRing {
  // Replaced as a whole, so a sign() racing a reload() never mixes one key's kid with another's key.
  private state: State;

  private constructor(
    private readonly store: Store,
    private readonly now: () => number,
    state: State,
  ) {
    this.state = state;
  }

  static async load(store: Store, now: () => number = Date.now): Promise<KeyRing> {
    const keys = await readOrInit(store, async () => ({ current: await newEntry(now) }));
    return new KeyRing(store, now, await toState(keys));
  }

  /**
   * Not atomic against a concurrent rotate (the store offers no compare-and-set for meta): the
   * last writer wins, which is harmless as long as rotation is an operator action.
   */
  static async rotate(store: Store, now: () => number = Date.now): Promise<{ kid: string; previousKid?: string }> {
    const old = await readKeys(store);
    const next: SigningKeys = { current: await newEntry(now) };
    if (old) next.previous = old.current;
    await store.setMeta(SIGNING_KEYS_META, JSON.stringify(next));
    return old ? { kid: next.current.kid, previousKid: old.current.kid } : { kid: next.current.kid };
  }

  get kid(): string {
    return this.state.keys.current.kid;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.state.jwks.keys.map((k) => ({ ...k })) };
  }

  async sign(claims: Record<string, unknown>, ttlSeconds: number): Promise<string> {
    const { keys, privateKey } = this.state;
    const iat = Math.floor(this.now() / 1000);
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: keys.current.kid, typ: 'JWT' })
      .setIssuer('streamgate')
      .setIssuedAt(iat)
      .setExpirationTime(iat + ttlSeconds)
      .sign(privateKey);
  }

  /** Picks up a rotation done elsewhere. A store that lost the keys gets ours back, not new ones. */
  async reload(): Promise<void> {
    const held = this.state.keys;
    const keys = await readOrInit(this.store, async () => held);
    if (keys.current.kid === held.current.kid && keys.previous?.kid === held.previous?.kid) return;
    this.state = await toState(keys);
  }
}
