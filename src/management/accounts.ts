// Accounts and their API secrets: create, list, rotate, delete, authenticate, and the first-start
// default account. Shared by the admin API, the self-rotation endpoint and the CLI.
import { writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import type { Account, AccountPatch, Store } from '../store/store.js';
import { ensurePrivateDir } from '../store/data-dir.js';
import { looksLikeSecret, newAccountId, newSecret, sha256Hex } from '../domain/secrets.js';
import { accountNameKey } from '../domain/store-rules.js';
import { copyWith } from '../domain/objects.js';
import { AccountExists, StoreConflict } from '../errors.js';
import { SYSTEM_ACTOR, type Actor } from '../audit/actor.js';
import { ACCOUNT, API_SECRET, type AuditLog } from '../audit/log.js';

/** Store metadata naming the account created on first start. */
export const DEFAULT_ACCOUNT_META = 'accounts.default';

export interface AccountView {
  id: string;
  name: string;
  createdOn: string;
  secureViewer: boolean;
  /** Whether tokens' address rules apply on RTMP, RTSP and SRT (docs/api.md#rtmp); default true. */
  ipRulesOnRtmp: boolean;
  hasApiSecret: boolean;
}

export const accountView = (a: Account): AccountView => ({
  id: a.id,
  name: a.name,
  createdOn: a.createdOn,
  secureViewer: a.secureViewer,
  ipRulesOnRtmp: a.ipRulesOnRtmp !== false,
  hasApiSecret: a.secretHash !== undefined,
});

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    /** Every write's entry (docs/api.md#audit-log); none without. */
    private readonly audit?: AuditLog,
  ) {}

  private async freshAccount(name: string): Promise<{ account: Account; apiSecret: string }> {
    const apiSecret = newSecret();
    const account: Account = {
      id: newAccountId(),
      name,
      createdOn: new Date(this.now()).toISOString(),
      secureViewer: false,
      secretHash: sha256Hex(apiSecret),
    };
    return { account, apiSecret };
  }

  /**
   * A new account named `name` (white space around it dropped). Rejects with AccountNameTaken when
   * another account's name is the same but for case and that white space (docs/api.md#account-names).
   */
  async create(name: string, by: Actor): Promise<{ account: Account; apiSecret: string }> {
    // Ids are random: one taken (checked here, or by a create racing this one) means draw another.
    for (let attempt = 0; attempt < 20; attempt++) {
      const fresh = await this.freshAccount(name.trim());
      if (await this.store.getAccount(fresh.account.id)) continue;
      try {
        await this.store.createAccount(fresh.account, this.audit?.sealer(by, fresh.account.id, 'account', ACCOUNT));
        return fresh;
      } catch (e) {
        if (!(e instanceof AccountExists)) throw e;
      }
    }
    throw new StoreConflict('account create: no free account id', 20);
  }

  list(): Promise<Account[]> {
    return this.store.listAccounts();
  }

  private several = false;

  /**
   * Whether the store holds more than one account. Accounts are never removed, so once true the
   * answer is kept; until then the list it reads holds at most one account.
   */
  async hasSeveral(): Promise<boolean> {
    if (!this.several) this.several = (await this.store.listAccounts()).length > 1;
    return this.several;
  }

  get(id: string): Promise<Account | null> {
    return this.store.getAccount(id);
  }

  /**
   * Changes settings (the admin's, the account's own country defaults, cluster and geo cascade); a
   * new name is stored as create stores one, and refused as create refuses one.
   */
  update(id: string, patch: AccountPatch, by: Actor): Promise<Account | null> {
    return this.store.updateAccount(id, patch.name === undefined ? patch : copyWith(patch, { name: patch.name.trim() }), this.audit?.sealer(by, id, 'account', ACCOUNT));
  }

  /**
   * The ids of accounts that share a name, one list per name, in creation order: names given before
   * names were unique, kept as they were (docs/operations.md#accounts).
   */
  async sharedNames(): Promise<string[][]> {
    const byKey = new Map<string, string[]>();
    for (const a of await this.store.listAccounts()) {
      const key = accountNameKey(a.name);
      byKey.set(key, [...(byKey.get(key) ?? []), a.id]);
    }
    return [...byKey.values()].filter((ids) => ids.length > 1);
  }

  /**
   * Creates or replaces the account's secret; the old one is rejected from now on. Null: no
   * account, or (with `replacing`, the hash of the secret the caller authenticated with) that
   * secret was replaced meanwhile: of two racing self-rotations only one hands out a live secret.
   */
  async refreshSecret(id: string, by: Actor, replacing?: string): Promise<string | null> {
    const apiSecret = newSecret();
    return (await this.store.setAccountSecret(id, sha256Hex(apiSecret), replacing, this.audit?.sealer(by, id, 'apiSecret', API_SECRET))) ? apiSecret : null;
  }

  deleteSecret(id: string, by: Actor): Promise<boolean> {
    return this.store.setAccountSecret(id, null, undefined, this.audit?.sealer(by, id, 'apiSecret', API_SECRET));
  }

  /** The account an API secret belongs to, else null. Malformed secrets never reach the store. */
  async authenticate(apiSecret: string): Promise<Account | null> {
    if (!looksLikeSecret(apiSecret)) return null;
    return this.store.findAccountBySecretHash(sha256Hex(apiSecret));
  }

  /**
   * First start: when the store holds no account, creates `default` and writes its secret to
   * <dataDir>/default-api-secret (0600). Returns the file path when it did.
   */
  async ensureDefaultAccount(dataDir: string): Promise<{ account: Account; secretFile: string } | null> {
    const { account, apiSecret } = await this.freshAccount('default');
    if (!(await this.store.createFirstAccount(account, this.audit?.sealer(SYSTEM_ACTOR, account.id, 'account', ACCOUNT)))) return null;
    // Token-less viewers of a fresh single-account install belong to this account.
    await this.store.setMeta(DEFAULT_ACCOUNT_META, account.id, true);
    ensurePrivateDir(dataDir); // 0700 when Streamgate makes it (src/store/data-dir.ts)
    const secretFile = path.resolve(dataDir, 'default-api-secret');
    writeFileSync(secretFile, `${apiSecret}\n`, { mode: 0o600 });
    chmodSync(secretFile, 0o600);
    return { account, secretFile };
  }
}
