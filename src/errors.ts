// The errors of the store (StoreUnavailable, StoreConflict, AccountExists, AccountNameTaken,
// IssuerConflict, IssuerChanged), beside the client-answer
// errors, which are defined with the domain rules that raise them (src/domain/errors.ts) and
// re-exported here. A backend outside the repository throws the store's from `streamgate/store`
// (the service tells them apart by class); the store suite matches them by `name`
// (docs/architecture.md#the-contract-suite).
export { ApiError, FieldErrorList, type FieldErrors } from './domain/errors.js';

/**
 * The store did not answer (Redis down, failing over, timing out, a write not confirmed by its
 * replicas; SQLite locked past its busy timeout): retryable, answered 503. The public message says
 * only that; the cause stays in the log.
 */
export class StoreUnavailable extends Error {
  constructor(
    cause: unknown,
    readonly publicMessage = 'Store unavailable; retry',
  ) {
    super(`store unavailable: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreUnavailable';
  }
}

/** createAccount: the id is taken (ids are random; the caller draws another). */
export class AccountExists extends Error {
  constructor(readonly accountId: string) {
    super(`account ${accountId} exists`);
    this.name = 'AccountExists';
  }
}

/**
 * createAccount or updateAccount: another account has a name of the same key (accountNameKey in
 * src/domain/store-rules.ts). Nothing was written; answered 409.
 */
export class AccountNameTaken extends Error {
  constructor(
    readonly accountName: string,
    /** The account holding the name, when the store knows it. */
    readonly heldBy?: string,
  ) {
    super(`account name ${JSON.stringify(accountName)} is taken${heldBy === undefined ? '' : ` by account ${heldBy}`}`);
    this.name = 'AccountNameTaken';
  }
}

/**
 * A store write lost its compare-and-set race more times than the store retries (many writers on
 * one record at once): retryable, answered 503.
 */
export class StoreConflict extends Error {
  constructor(what: string, attempts: number) {
    super(`${what}: too much write contention (${attempts} attempts)`);
    this.name = 'StoreConflict';
  }
}

/**
 * createIssuer or updateIssuer: the issuer would overlap one the deployment has already
 * (`overlapping` in src/domain/issuers.ts: the same `iss`, and one names no key ids or they share
 * one). It describes the other issuer without naming its account or id, which may be another
 * account's. Nothing was written; answered 409.
 */
export class IssuerConflict extends Error {
  constructor(
    /** The `iss` both answer for (null: JWTs without one). */
    readonly issuer: string | null,
    /** The other issuer's key ids that the write would share; empty: it answers for any key id. */
    readonly keyIds: readonly string[],
    /** Whether the other issuer is of the same account. */
    readonly sameAccount: boolean,
  ) {
    const iss = issuer === null ? 'JWTs without iss' : `iss ${JSON.stringify(issuer)}`;
    const which = keyIds.length === 0 ? 'for any key id' : `for key id${keyIds.length > 1 ? 's' : ''} ${keyIds.map((k) => JSON.stringify(k)).join(', ')}`;
    super(`an issuer of ${iss} is declared already ${which}${sameAccount ? ' in this account' : ''}`);
    this.name = 'IssuerConflict';
  }
}

/** updateIssuer with an expected rev: the issuer is at another one (changed since it was read). Nothing was written. */
export class IssuerChanged extends Error {
  constructor(
    readonly issuerId: number,
    readonly rev: number,
  ) {
    super(`issuer ${issuerId} is at rev ${rev}`);
    this.name = 'IssuerChanged';
  }
}
