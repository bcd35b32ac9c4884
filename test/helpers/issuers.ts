// Issuer records and signing keys for the issuer JWT tests: `issuerRecord` is an active RS256
// issuer of ACCT01 with no iss, no keys and the default claim map; `over` replaces any field.
// `keyPair` makes a key pair for an algorithm, its public JWK carrying `kid`.
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { IssuerRecord } from '../../src/domain/issuers.js';
import type { NewIssuer } from '../../src/store/store.js';
import type { IssuerKeySource } from '../../src/policy/issuer-jwt.js';
import { loadConfig } from '../../src/config/load.js';

/** The key source's settings as Streamgate starts with them (config/default.yaml `issuers`). */
export const KEY_OPTIONS = loadConfig({ env: {} }).issuers;

export function issuerRecord(over: Partial<IssuerRecord> = {}): IssuerRecord {
  return {
    id: 3,
    accountId: 'ACCT01',
    label: 'idp',
    type: 'jwt',
    isActive: true,
    policyTokenId: 7,
    issuer: null,
    keyIds: [],
    audience: [],
    algorithms: ['RS256'],
    jwks: null,
    jwksUrl: null,
    secret: null,
    clockSkewSeconds: 0,
    maxLifetimeSeconds: null,
    claims: { stream: 'sub' },
    cookieName: null,
    revoked: { jti: [], sub: [], kid: [] },
    settings: null,
    signingKey: null,
    secretFrom: null,
    signingKeyFrom: null,
    addedOn: '2026-01-01T00:00:00.000Z',
    updatedOn: '2026-01-01T00:00:00.000Z',
    rev: 1,
    ...over,
  };
}

/** issuerRecord's fields as createIssuer takes them (no id, account, rev or dates), `over` replacing any. */
export function newIssuer(over: Partial<NewIssuer> & Pick<NewIssuer, 'policyTokenId'>): NewIssuer {
  const { id: _id, accountId: _account, rev: _rev, addedOn: _added, updatedOn: _updated, ...fields } = issuerRecord();
  return { ...fields, ...over };
}

export interface TestKey {
  alg: string;
  privateKey: CryptoKey;
  /** The public JWK with `kid` (and `alg`, `use: sig`). */
  jwk: JWK;
}

export async function keyPair(alg: string, kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Signs `payload` with `key` (header: its alg, plus `header`). */
export function sign(key: TestKey, payload: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, ...header }).sign(key.privateKey);
}

/** A key source answering fixed keys and counting its calls. */
export function fixedKeys(keys: JWK[]): IssuerKeySource & { calls: number } {
  const frozen = keys.map((k) => Object.freeze({ ...k }));
  const source = {
    calls: 0,
    async keysFor() {
      source.calls++;
      return { keys: frozen };
    },
  };
  return source;
}
