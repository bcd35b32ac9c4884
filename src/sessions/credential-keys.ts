// The keys that sign HTTP viewer credentials (docs/callers.md#http-viewer-sessions, "Keys"): made
// and kept by Streamgate in the store, so every instance on one store signs with one key and no
// caller ever holds it (it is never derived from hooks.secret, which media servers send and log).
// `sessions.http.secret` stays as an explicit setting: then the key is derived from it, the same on
// every instance that is given it. A rotation (`streamgate keys rotate viewer`) makes a new key and
// keeps the old one as `previous`, accepted for one credential life after every instance has
// picked the rotation up; the same pattern as the director's signing keys (src/director/keys.ts).
import { hkdfSync, randomBytes } from 'node:crypto';
import type { Store } from '../store/store.js';

export const CREDENTIAL_KEYS_META = 'sessions.http.credentialKeys';

export interface StoredKey {
  /** A short id (not secret): tells keys apart in logs and the CLI's output. */
  id: string;
  /** 32 random bytes, base64url. */
  key: string;
  createdOn: string;
}

export interface StoredKeys {
  current: StoredKey;
  /** The key before the last rotation, and when it was replaced. */
  previous?: StoredKey & { retiredOn: string };
}

/** One key a credential may be checked with. */
export interface VerifyKey {
  id: string;
  key: Buffer;
  /** Epoch ms after which it is no longer accepted (the previous key only). */
  until?: number;
}

const isKey = (k: unknown): k is StoredKey => {
  const o = k as Partial<StoredKey> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.id === 'string' &&
    typeof o.createdOn === 'string' &&
    typeof o.key === 'string' &&
    Buffer.from(o.key, 'base64url').length === 32
  );
};

/**
 * Parses the stored value, refusing anything that could not sign: a corrupt value stops start-up
 * rather than being replaced, which would refuse every credential already granted.
 */
export function parseCredentialKeys(json: string): StoredKeys {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new Error(`store meta ${CREDENTIAL_KEYS_META} is not valid JSON`);
  }
  const o = (v ?? {}) as { current?: unknown; previous?: unknown };
  if (!isKey(o.current)) throw new Error(`store meta ${CREDENTIAL_KEYS_META}: current is not a 32-byte key entry`);
  const out: StoredKeys = { current: o.current };
  if (o.previous !== undefined) {
    const p = o.previous as { retiredOn?: unknown } | null;
    if (!isKey(p) || typeof p.retiredOn !== 'string' || !Number.isFinite(Date.parse(p.retiredOn))) {
      throw new Error(`store meta ${CREDENTIAL_KEYS_META}: previous is not a retired 32-byte key entry`);
    }
    out.previous = p as StoredKeys['previous'];
  }
  return out;
}

function newKey(now: () => number): StoredKey {
  return { id: randomBytes(6).toString('base64url'), key: randomBytes(32).toString('base64url'), createdOn: new Date(now()).toISOString() };
}

async function readKeys(store: Store): Promise<StoredKeys | null> {
  const raw = await store.getMeta(CREDENTIAL_KEYS_META);
  return raw === null ? null : parseCredentialKeys(raw);
}

/** The stored keys, or `candidate` written only-if-absent; a lost race yields the winner's keys. */
async function readOrInit(store: Store, candidate: () => StoredKeys): Promise<StoredKeys> {
  const found = await readKeys(store);
  if (found) return found;
  const mine = candidate();
  if (await store.setMeta(CREDENTIAL_KEYS_META, JSON.stringify(mine), true)) return mine;
  const winner = await readKeys(store);
  if (!winner) throw new Error(`store meta ${CREDENTIAL_KEYS_META}: write refused but nothing stored`);
  return winner;
}

/** The key derived from sessions.http.secret (the same on every instance given the same secret). */
export function keyFromSecret(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'streamgate', 'viewer session credentials', 32));
}

export interface CredentialKeyOptions {
  /** sessions.http.secret; empty: the store's keys. */
  secret: string;
  /** How long the previous key is accepted after its rotation (ms): one credential life plus the time instances take to learn of it. */
  previousForMs: number;
}

export class CredentialKeys {
  // Replaced as a whole, so a check racing a reload never mixes one key set with another.
  private state: { signing: VerifyKey; verifying: VerifyKey[]; stored?: StoredKeys };

  private constructor(
    private readonly store: Store,
    private readonly opts: CredentialKeyOptions,
    stored: StoredKeys | undefined,
  ) {
    this.state = this.toState(stored);
  }

  /** With sessions.http.secret, no store read; else the store's keys, made on the first start. */
  static async load(store: Store, opts: CredentialKeyOptions, now: () => number = Date.now): Promise<CredentialKeys> {
    if (opts.secret !== '') return new CredentialKeys(store, opts, undefined);
    return new CredentialKeys(store, opts, await readOrInit(store, () => ({ current: newKey(now) })));
  }

  /**
   * A new current key; the old one becomes `previous` (accepted for one credential life after
   * every instance has picked it up). Last writer wins against a concurrent rotation, as for the
   * director's keys: rotation is an operator action.
   */
  static async rotate(store: Store, now: () => number = Date.now): Promise<{ id: string; previousId?: string }> {
    const old = await readKeys(store);
    const next: StoredKeys = { current: newKey(now) };
    if (old) next.previous = { id: old.current.id, key: old.current.key, createdOn: old.current.createdOn, retiredOn: new Date(now()).toISOString() };
    await store.setMeta(CREDENTIAL_KEYS_META, JSON.stringify(next));
    return old ? { id: next.current.id, previousId: old.current.id } : { id: next.current.id };
  }

  private toState(stored: StoredKeys | undefined): CredentialKeys['state'] {
    if (stored === undefined) {
      const k: VerifyKey = { id: 'secret', key: keyFromSecret(this.opts.secret) };
      return { signing: k, verifying: [k] };
    }
    const signing: VerifyKey = { id: stored.current.id, key: Buffer.from(stored.current.key, 'base64url') };
    const verifying = [signing];
    if (stored.previous) {
      verifying.push({
        id: stored.previous.id,
        key: Buffer.from(stored.previous.key, 'base64url'),
        until: Date.parse(stored.previous.retiredOn) + this.opts.previousForMs,
      });
    }
    return { signing, verifying, stored };
  }

  /** Where the key comes from. */
  get source(): 'secret' | 'store' {
    return this.state.stored === undefined ? 'secret' : 'store';
  }

  /** The key new credentials are signed with. */
  get signing(): VerifyKey {
    return this.state.signing;
  }

  /** The keys a credential may be checked with at `now`: the current one, and the previous within its time. */
  verifying(now: number): VerifyKey[] {
    const v = this.state.verifying;
    return v.length === 1 || v[1].until! > now ? v : [v[0]];
  }

  /** Whether a key (by id) is still accepted at `now`. */
  accepts(id: string, now: number): boolean {
    return this.verifying(now).some((k) => k.id === id);
  }

  /** Picks up a rotation made elsewhere. A store that lost the keys gets ours back, not new ones. */
  async reload(): Promise<boolean> {
    const held = this.state.stored;
    if (held === undefined) return false;
    const keys = await readOrInit(this.store, () => held);
    if (keys.current.id === held.current.id && keys.previous?.id === held.previous?.id) return false;
    this.state = this.toState(keys);
    return true;
  }
}
