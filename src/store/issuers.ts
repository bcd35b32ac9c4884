// The credential issuers aggregate: each account's declarations that JWTs signed elsewhere are
// credentials here (src/domain/issuers.ts has the record and its rules), and the deployment-wide
// lookup a presented JWT's `iss` makes. No two issuers of the deployment are `overlapping`: a write
// that would make two overlap is refused with IssuerConflict, whichever accounts they belong to.
import type { IssuerRecord } from '../domain/issuers.js';
import type { AuditSealer } from '../domain/audit.js';

/** What createIssuer takes: the record without what the store assigns (id, rev, dates). */
export type NewIssuer = Omit<IssuerRecord, 'id' | 'accountId' | 'rev' | 'addedOn' | 'updatedOn'>;

/** What updateIssuer sets: any of the fields createIssuer takes (absent: kept). */
export type IssuerPatch = Partial<NewIssuer>;

export interface IssuerStore {
  /**
   * Stores a new issuer of the account, its id a positive integer unique across accounts (as token
   * ids are), rev 1, addedOn and updatedOn the store's clock. Rejects with IssuerConflict, writing
   * nothing, when it would overlap an issuer of any account (of concurrent overlapping creates on
   * any instance, at most one succeeds). Moves the account version. `audit` (here and below): the
   * change's entry, appended in the same atomic step (src/store/audit.ts); a write taken back after
   * its claim was lost appends the entry of taking it back.
   */
  createIssuer(accountId: string, fields: NewIssuer, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord>;
  /** The account's issuer with this id, else null (another account's too). */
  getIssuer(accountId: string, id: number): Promise<IssuerRecord | null>;
  /** The account's issuers, in id order. */
  listIssuers(accountId: string): Promise<IssuerRecord[]>;
  /**
   * Sets the patch's fields in one atomic step: rev + 1, updatedOn the store's clock, the account
   * version moved. Null when the account has no such issuer. With `expectedRev`, rejects with
   * IssuerChanged when the stored rev is another; rejects with IssuerConflict when the result would
   * overlap another issuer. Either way nothing is written.
   */
  updateIssuer(accountId: string, id: number, patch: IssuerPatch, expectedRev?: number, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord | null>;
  /** Deletes the issuer, so its `(iss, kid)` may be declared again; moves the account version. False when not found. */
  deleteIssuer(accountId: string, id: number, audit?: AuditSealer<IssuerRecord>): Promise<boolean>;
  /**
   * Every issuer of the deployment, of any account and active or not, whose `issuer` is `iss`
   * (null: those for JWTs without one), in id order: the candidates `selectIssuer` picks a presented
   * JWT's issuer from. An indexed read.
   */
  issuersOf(iss: string | null): Promise<IssuerRecord[]>;
}
