// Accounts on SQLite: the accounts table, and the account versions the connection keeps in memory (connection.ts).
import type { Account, AccountGeoCascade, AccountPatch, AccountStore, SharingSettings } from '../accounts.js';
import { AccountExists, AccountNameTaken } from '../../errors.js';
import { accountNameKey } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import { VERSIONS_KEPT } from './connection.js';
import type { SqliteConnection } from './connection.js';
import type { AuditSealer } from '../../domain/audit.js';
import { appendSealed } from './audit.js';

interface AccountRow {
  id: string;
  name: string;
  created_on: string;
  secure_viewer: number;
  secret_hash: string | null;
  /** Comma-separated country codes ('' = none); columns added by migrate(). */
  allowed_countries: string;
  denied_countries: string;
  /** '' = never set; columns added by migrate() (user_version 3). */
  default_cluster: string;
  /** JSON {isEnabled, clusters}, '' = never set. */
  geo_cascade: string;
  /** 1 (the default) or 0. */
  ip_rules_on_rtmp: number;
  /** accountNameKey(name); added by migrate() (user_version 4). */
  name_key: string;
  /** JSON of the sharing policy, '' = never set; added by migrate() (user_version 9). */
  sharing: string;
}
const accountFromRow = (r: AccountRow): Account => {
  const a: Account = { id: r.id, name: r.name, createdOn: r.created_on, secureViewer: r.secure_viewer === 1 };
  if (r.secret_hash) a.secretHash = r.secret_hash;
  if (r.allowed_countries) a.allowedCountries = r.allowed_countries.split(',');
  if (r.denied_countries) a.deniedCountries = r.denied_countries.split(',');
  if (r.default_cluster) a.defaultCluster = r.default_cluster;
  if (r.geo_cascade) a.geoCascade = JSON.parse(r.geo_cascade) as AccountGeoCascade;
  if (r.ip_rules_on_rtmp === 0) a.ipRulesOnRtmp = false;
  if (r.sharing) a.sharing = JSON.parse(r.sharing) as SharingSettings;
  return a;
};

export class SqliteAccounts implements AccountStore {
  constructor(private readonly c: SqliteConnection) {}

  async createAccount(a: Account, audit?: AuditSealer<Account>): Promise<Account> {
    try {
      this.c.tx(() => {
        // the id first: a create of an existing account is AccountExists, whatever its name
        if (this.c.stmt('SELECT 1 FROM accounts WHERE id = ?').get(a.id)) throw new AccountExists(a.id);
        this.#refuseTakenName(a.name, a.id);
        this.#insertAccount(a);
        appendSealed(this.c, a.id, audit, null, { ...a });
      });
    } catch (e) {
      if ((e as { code?: unknown })?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new AccountExists(a.id);
      throw e;
    }
    return { ...a };
  }

  /**
   * Inside the write's transaction (immediate: no other writer of the file in between), so of
   * writes racing for one name, on any connection, exactly one finds it free.
   */
  #refuseTakenName(name: string, id: string): void {
    const holder = this.c.stmt('SELECT id FROM accounts WHERE name_key = ? AND id != ? ORDER BY seq LIMIT 1').pluck().get(accountNameKey(name), id) as
      | string
      | undefined;
    if (holder !== undefined) throw new AccountNameTaken(name, holder);
  }

  #insertAccount(a: Account): void {
    this.c.stmt(
      `INSERT INTO accounts (id, name, name_key, created_on, secure_viewer, secret_hash, allowed_countries, denied_countries, default_cluster, geo_cascade, ip_rules_on_rtmp, sharing, seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM accounts))`,
    )
      .run(
        a.id,
        a.name,
        accountNameKey(a.name),
        a.createdOn,
        a.secureViewer ? 1 : 0,
        a.secretHash ?? null,
        (a.allowedCountries ?? []).join(','),
        (a.deniedCountries ?? []).join(','),
        a.defaultCluster ?? '',
        a.geoCascade ? JSON.stringify(a.geoCascade) : '',
        a.ipRulesOnRtmp === false ? 0 : 1,
        a.sharing ? JSON.stringify(a.sharing) : '',
      );
    this.c.bumpVersion(a.id); // a cached "no such account" must not outlive its creation
  }

  async createFirstAccount(a: Account, audit?: AuditSealer<Account>): Promise<boolean> {
    return this.c.tx(() => {
      const n = this.c.stmt('SELECT COUNT(*) AS n FROM accounts').get() as { n: number };
      if (n.n > 0) return false;
      this.#insertAccount(a);
      appendSealed(this.c, a.id, audit, null, { ...a });
      return true;
    });
  }

  async getAccount(id: string): Promise<Account | null> {
    const r = this.c.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return r ? accountFromRow(r) : null;
  }

  async listAccounts(): Promise<Account[]> {
    return (this.c.stmt('SELECT * FROM accounts ORDER BY seq').all() as AccountRow[]).map(accountFromRow);
  }

  async updateAccount(id: string, patch: AccountPatch, audit?: AuditSealer<Account>): Promise<Account | null> {
    return this.c.tx(() => {
      const r = this.c.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
      if (!r) return null;
      // a name of the key the account has already is its own (two accounts may share one from before names were unique)
      const nameKey = patch.name === undefined ? r.name_key : accountNameKey(patch.name);
      if (nameKey !== r.name_key) this.#refuseTakenName(patch.name!, id);
      const next: AccountRow = copyWith(r, {
        secure_viewer: patch.secureViewer === undefined ? r.secure_viewer : patch.secureViewer ? 1 : 0,
        name: patch.name ?? r.name,
        name_key: nameKey,
        allowed_countries: patch.allowedCountries?.join(',') ?? r.allowed_countries,
        denied_countries: patch.deniedCountries?.join(',') ?? r.denied_countries,
        default_cluster: patch.defaultCluster ?? r.default_cluster,
        geo_cascade: patch.geoCascade ? JSON.stringify(patch.geoCascade) : r.geo_cascade,
        ip_rules_on_rtmp: patch.ipRulesOnRtmp === undefined ? r.ip_rules_on_rtmp : patch.ipRulesOnRtmp ? 1 : 0,
        sharing: patch.sharing === undefined ? r.sharing : patch.sharing === null ? '' : JSON.stringify(patch.sharing),
      });
      this.c.stmt(
        'UPDATE accounts SET secure_viewer = ?, name = ?, name_key = ?, allowed_countries = ?, denied_countries = ?, default_cluster = ?, geo_cascade = ?, ip_rules_on_rtmp = ?, sharing = ? WHERE id = ?',
      ).run(
        next.secure_viewer,
        next.name,
        next.name_key,
        next.allowed_countries,
        next.denied_countries,
        next.default_cluster,
        next.geo_cascade,
        next.ip_rules_on_rtmp,
        next.sharing,
        id,
      );
      this.c.bumpVersion(id);
      const after = accountFromRow(next);
      appendSealed(this.c, id, audit, accountFromRow(r), after);
      return after;
    });
  }

  async setAccountSecret(id: string, secretHash: string | null, expected?: string, audit?: AuditSealer<Account>): Promise<boolean> {
    return this.c.tx(() => {
      const r = this.c.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
      if (!r || (expected !== undefined && r.secret_hash !== expected)) return false;
      this.c.stmt('UPDATE accounts SET secret_hash = ? WHERE id = ?').run(secretHash, id);
      appendSealed(this.c, id, audit, accountFromRow(r), accountFromRow(copyWith(r, { secret_hash: secretHash })));
      return true;
    });
  }

  async findAccountBySecretHash(secretHash: string): Promise<Account | null> {
    const r = this.c.stmt('SELECT * FROM accounts WHERE secret_hash = ?').get(secretHash) as AccountRow | undefined;
    return r ? accountFromRow(r) : null;
  }

  accountVersionKnown(accountId: string): number | undefined {
    return this.c.versions.get(accountId);
  }

  async accountVersion(accountId: string): Promise<number> {
    // on every decision: from memory, else one plucked column, cheaper than a row object
    // (docs/decision-path.md#what-the-decision-path-does-to-be-fast)
    const known = this.c.versions.get(accountId);
    if (known !== undefined) return known;
    const ver = (this.c.versionStmt.get(accountId) as number | undefined) ?? 0;
    if (this.c.versions.size >= VERSIONS_KEPT) this.c.versions.clear();
    this.c.versions.set(accountId, ver);
    return ver;
  }
}
