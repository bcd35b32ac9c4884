// The accounts aggregate: accounts, their API secrets and settings, and the account version every
// decision cache compares against (docs/architecture.md#the-store-contract).
import type { AuditSealer } from '../domain/audit.js';
import type { SharingSettings } from '../domain/sharing.js';

export interface Account {
  id: string;
  name: string;
  createdOn: string;
  /** Viewing any stream of the account needs a subscribe token. */
  secureViewer: boolean;
  /** SHA-256 hex of the current API secret; absent when the secret was deleted. */
  secretHash?: string;
  /**
   * Viewer country defaults (`/api/geo/account`): apply to viewers that no token's lists cover.
   * ISO alpha-2, upper-case, at most one of the two non-empty; absent when empty.
   */
  allowedCountries?: string[];
  deniedCountries?: string[];
  /**
   * The cluster whose director URLs serve the account's tokens that name none (`PUT /api/cluster`,
   * docs/api.md#clusters); absent when never set.
   */
  defaultCluster?: string;
  /** The account-wide geo cascade setting (`/api/account/geo_cascade`); absent when never set. */
  geoCascade?: AccountGeoCascade;
  /**
   * false: RTMP, RTSP and SRT skip the tokens' address rules (allowedIpAddresses, bindIpsOnUsage),
   * as the hosted platform does (docs/api.md#rtmp). Absent when on (the default).
   */
  ipRulesOnRtmp?: false;
  /** The account's token-sharing policy (`/api/sharing/policy`, docs/api.md#token-sharing); absent when never set. */
  sharing?: SharingSettings;
}

export type { SharingSettings } from '../domain/sharing.js';

/** An account's geo cascade setting, as the hosted API shapes it. */
export interface AccountGeoCascade {
  isEnabled: boolean;
  clusters: string[];
}

/** What updateAccount may change; a country list given replaces the stored one ([] clears it). */
export interface AccountPatch {
  secureViewer?: boolean;
  name?: string;
  allowedCountries?: string[];
  deniedCountries?: string[];
  defaultCluster?: string;
  geoCascade?: AccountGeoCascade;
  ipRulesOnRtmp?: boolean;
  /** Replaces the sharing policy; null removes it. */
  sharing?: SharingSettings | null;
}

export interface AccountStore {
  /**
   * Creates an account. Rejects with AccountExists when the id exists, and with AccountNameTaken
   * when another account has a name of the same key (accountNameKey, src/domain/store-rules.ts),
   * atomically across instances sharing the store: of creates racing for one name exactly one
   * succeeds. A rejected create writes nothing. `audit`: the change's entry, sealed (null, account)
   * and appended in the same atomic step (src/store/audit.ts), as for every write taking one.
   */
  createAccount(account: Account, audit?: AuditSealer<Account>): Promise<Account>;
  /**
   * Creates `account` only when the store holds no account at all, atomically across instances
   * sharing the store. Returns true when it was created.
   */
  createFirstAccount(account: Account, audit?: AuditSealer<Account>): Promise<boolean>;
  getAccount(id: string): Promise<Account | null>;
  /** All accounts, ordered by creation. */
  listAccounts(): Promise<Account[]>;
  /**
   * Sets account settings (moving the account version) and answers the account as this change left
   * it, atomically; null when the account does not exist. A `name` whose key another account has
   * rejects with AccountNameTaken and changes nothing, unless the account's own name has that key
   * already (names two accounts shared before names were unique stay as they are, and either may
   * be renamed; docs/api.md#account-names). Renames racing for one name: exactly one succeeds.
   */
  updateAccount(id: string, patch: AccountPatch, audit?: AuditSealer<Account>): Promise<Account | null>;
  /**
   * Replaces (hash) or deletes (null) the account's API secret. From the moment this resolves the
   * old secret resolves to no account. False when the account does not exist, or when `expected`
   * is given and the current secret's hash is no longer it (a concurrent rotation won). `audit` is
   * sealed with the account before and after.
   */
  setAccountSecret(id: string, secretHash: string | null, expected?: string, audit?: AuditSealer<Account>): Promise<boolean>;
  /** The account whose current secret has this SHA-256 hash, else null. */
  findAccountBySecretHash(secretHash: string): Promise<Account | null>;
  /**
   * A number that changes whenever anything of the account that a decision reads changes: any of
   * its tokens (create/update/delete) or its settings. Caches compare it to know they are current.
   * 0 for an account never written.
   */
  accountVersion(accountId: string): Promise<number>;
  /**
   * The account version when this process already holds it current without any I/O, else
   * undefined (then accountVersion() reads it). Lets a decision on a cached token finish without
   * an await (docs/performance.md): SQLite from the versions it keeps, Redis while its version
   * watch vouches for the account (docs/decision-path.md#watched-account-versions).
   */
  accountVersionKnown?(accountId: string): number | undefined;
}
