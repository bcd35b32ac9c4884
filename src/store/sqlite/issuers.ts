// Credential issuers on SQLite: the issuers table (schema.ts, user_version 5), its lists and
// objects in JSON columns, indexed by account and by the key of the `iss`. A write checks the
// issuers of its `iss` inside its immediate transaction, so of overlapping writes racing on any
// connection to the file exactly one finds the `(iss, kid)` free.
import type { IssuerAlgorithm, IssuerClaimMap, IssuerRecord, IssuerType, RevokedIds, SignedSettings } from '../../domain/issuers.js';
import { issuerIndexKey, issuerOverlap, issuerRecordKey, patchedIssuer } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import { IssuerChanged, IssuerConflict } from '../../errors.js';
import type { IssuerPatch, IssuerStore, NewIssuer } from '../issuers.js';
import type { SqliteConnection } from './connection.js';
import type { AuditSealer } from '../../domain/audit.js';
import { appendSealed } from './audit.js';

interface IssuerRow {
  id: number;
  account_id: string;
  issuer: string | null;
  label: string;
  type: IssuerType;
  is_active: number;
  policy_token_id: number;
  key_ids: string;
  audience: string;
  algorithms: string;
  jwks: string | null;
  jwks_url: string | null;
  secret: string | null;
  clock_skew_seconds: number;
  max_lifetime_seconds: number | null;
  claims: string;
  cookie_name: string | null;
  revoked: string;
  settings: string | null;
  signing_key: string | null;
  secret_from: string | null;
  signing_key_from: string | null;
  added_on: string;
  updated_on: string;
  rev: number;
}

const COLUMNS =
  'id, account_id, issuer, label, type, is_active, policy_token_id, key_ids, audience, algorithms, jwks, jwks_url, secret, clock_skew_seconds, max_lifetime_seconds, claims, cookie_name, revoked, settings, signing_key, secret_from, signing_key_from, added_on, updated_on, rev';

const fromRow = (r: IssuerRow): IssuerRecord => ({
  id: r.id,
  accountId: r.account_id,
  label: r.label,
  type: r.type,
  isActive: r.is_active === 1,
  policyTokenId: r.policy_token_id,
  issuer: r.issuer,
  keyIds: JSON.parse(r.key_ids) as string[],
  audience: JSON.parse(r.audience) as string[],
  algorithms: JSON.parse(r.algorithms) as IssuerAlgorithm[],
  jwks: r.jwks === null ? null : (JSON.parse(r.jwks) as IssuerRecord['jwks']),
  jwksUrl: r.jwks_url,
  secret: r.secret,
  clockSkewSeconds: r.clock_skew_seconds,
  maxLifetimeSeconds: r.max_lifetime_seconds,
  claims: JSON.parse(r.claims) as IssuerClaimMap,
  cookieName: r.cookie_name,
  revoked: JSON.parse(r.revoked) as RevokedIds,
  settings: r.settings === null ? null : (JSON.parse(r.settings) as SignedSettings),
  signingKey: r.signing_key,
  secretFrom: r.secret_from,
  signingKeyFrom: r.signing_key_from,
  addedOn: r.added_on,
  updatedOn: r.updated_on,
  rev: r.rev,
});

/** The values of every column but id, in the order of WRITE_COLUMNS. */
const values = (i: Omit<IssuerRecord, 'id'>): unknown[] => [
  i.accountId,
  issuerRecordKey(i),
  i.issuer,
  i.label,
  i.type,
  i.isActive ? 1 : 0,
  i.policyTokenId,
  JSON.stringify(i.keyIds),
  JSON.stringify(i.audience),
  JSON.stringify(i.algorithms),
  i.jwks === null ? null : JSON.stringify(i.jwks),
  i.jwksUrl,
  i.secret,
  i.clockSkewSeconds,
  i.maxLifetimeSeconds,
  JSON.stringify(i.claims),
  i.cookieName,
  JSON.stringify(i.revoked),
  i.settings === null ? null : JSON.stringify(i.settings),
  i.signingKey,
  i.secretFrom,
  i.signingKeyFrom,
  i.addedOn,
  i.updatedOn,
  i.rev,
];
const WRITE_COLUMNS =
  'account_id, iss_key, issuer, label, type, is_active, policy_token_id, key_ids, audience, algorithms, jwks, jwks_url, secret, clock_skew_seconds, max_lifetime_seconds, claims, cookie_name, revoked, settings, signing_key, secret_from, signing_key_from, added_on, updated_on, rev';

export class SqliteIssuers implements IssuerStore {
  constructor(private readonly c: SqliteConnection) {}

  #of(issKey: string): IssuerRecord[] {
    return (this.c.stmt(`SELECT ${COLUMNS} FROM issuers WHERE iss_key = ? ORDER BY id`).all(issKey) as IssuerRow[]).map(fromRow);
  }

  /** Inside the write's immediate transaction: no other writer of the file between this read and the write. */
  #refuseOverlap(mine: Pick<IssuerRecord, 'id' | 'accountId' | 'issuer' | 'keyIds' | 'type'>): void {
    const hit = issuerOverlap(mine, this.#of(issuerRecordKey(mine)));
    if (hit) throw new IssuerConflict(mine.issuer, hit.keyIds, hit.other.accountId === mine.accountId);
  }

  #read(accountId: string, id: number): IssuerRecord | null {
    const r = this.c.stmt(`SELECT ${COLUMNS} FROM issuers WHERE id = ? AND account_id = ?`).get(id, accountId) as IssuerRow | undefined;
    return r ? fromRow(r) : null;
  }

  async createIssuer(accountId: string, fields: NewIssuer, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord> {
    return this.c.tx(() => {
      const at = new Date(this.c.now()).toISOString();
      // id 0 is no issuer's: nothing stored is skipped as the issuer itself
      this.#refuseOverlap({ id: 0, accountId, issuer: fields.issuer, keyIds: fields.keyIds, type: fields.type });
      const record = copyWith(fields, { accountId, addedOn: at, updatedOn: at, rev: 1 });
      const info = this.c.stmt(`INSERT INTO issuers (${WRITE_COLUMNS}) VALUES (${WRITE_COLUMNS.split(',').map(() => '?').join(', ')})`).run(...values(record));
      this.c.bumpVersion(accountId);
      const created = this.#read(accountId, Number(info.lastInsertRowid))!;
      appendSealed(this.c, accountId, audit, null, created);
      return created;
    });
  }

  async getIssuer(accountId: string, id: number): Promise<IssuerRecord | null> {
    return this.#read(accountId, id);
  }

  async listIssuers(accountId: string): Promise<IssuerRecord[]> {
    return (this.c.stmt(`SELECT ${COLUMNS} FROM issuers WHERE account_id = ? ORDER BY id`).all(accountId) as IssuerRow[]).map(fromRow);
  }

  async updateIssuer(accountId: string, id: number, patch: IssuerPatch, expectedRev?: number, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord | null> {
    return this.c.tx(() => {
      const current = this.#read(accountId, id);
      if (!current) return null;
      if (expectedRev !== undefined && current.rev !== expectedRev) throw new IssuerChanged(id, current.rev);
      const next = patchedIssuer(current, patch, new Date(this.c.now()).toISOString());
      this.#refuseOverlap(next);
      this.c.stmt(`UPDATE issuers SET (${WRITE_COLUMNS}) = (${WRITE_COLUMNS.split(',').map(() => '?').join(', ')}) WHERE id = ?`).run(...values(next), id);
      this.c.bumpVersion(accountId);
      appendSealed(this.c, accountId, audit, current, next);
      return next;
    });
  }

  async deleteIssuer(accountId: string, id: number, audit?: AuditSealer<IssuerRecord>): Promise<boolean> {
    return this.c.tx(() => {
      const current = this.#read(accountId, id);
      if (!current) return false;
      this.c.stmt('DELETE FROM issuers WHERE id = ? AND account_id = ?').run(id, accountId);
      this.c.bumpVersion(accountId);
      appendSealed(this.c, accountId, audit, current, null);
      return true;
    });
  }

  async issuersOf(iss: string | null): Promise<IssuerRecord[]> {
    return this.#of(issuerIndexKey(iss));
  }
}
