// The embedded store's tables, and the upgrade of a file written by an earlier build.
import type Database from 'better-sqlite3';
import { accountNameKey } from '../../domain/store-rules.js';

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_on TEXT NOT NULL,
  secure_viewer INTEGER NOT NULL DEFAULT 0,
  secret_hash TEXT UNIQUE,
  seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  sort_name TEXT NOT NULL,
  added_ms INTEGER NOT NULL,
  rev INTEGER NOT NULL,
  securing INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tokens_securing ON tokens (account_id, securing);
CREATE INDEX IF NOT EXISTS tokens_by_name ON tokens (account_id, kind, sort_name, id);
CREATE INDEX IF NOT EXISTS tokens_by_added ON tokens (account_id, kind, added_ms, id);
CREATE TABLE IF NOT EXISTS bound_addresses (
  token_id INTEGER NOT NULL,
  address TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (token_id, address)
);
CREATE TABLE IF NOT EXISTS account_versions (
  account_id TEXT PRIMARY KEY,
  ver INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  rev INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_by_account ON webhooks (account_id, id);
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_by_webhook ON deliveries (webhook_id, seq);
CREATE TABLE IF NOT EXISTS recordings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  path TEXT NOT NULL,
  status TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recordings_by_stream ON recordings (account_id, stream_name, id);
CREATE TABLE IF NOT EXISTS usage (
  account_id TEXT NOT NULL,
  tracking_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  stream_name TEXT NOT NULL,
  day TEXT NOT NULL,
  bytes_out INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL,
  PRIMARY KEY (account_id, tracking_id, day, stream_name, token_id)
);
CREATE INDEX IF NOT EXISTS usage_by_stream ON usage (account_id, stream_name, day);
CREATE INDEX IF NOT EXISTS usage_by_day ON usage (account_id, day);
-- Usage per UTC hour (YYYY-MM-DDTHH), tracking_id '' for the usage without one; a row is read and
-- kept until keep_until (epoch ms), then deleted by the usage writes (pruneHourlyUsage).
CREATE TABLE IF NOT EXISTS usage_hourly (
  account_id TEXT NOT NULL,
  tracking_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  hour TEXT NOT NULL,
  bytes_out INTEGER NOT NULL,
  bytes_in INTEGER NOT NULL,
  keep_until INTEGER NOT NULL,
  PRIMARY KEY (account_id, tracking_id, hour, stream_name)
);
CREATE INDEX IF NOT EXISTS usage_hourly_by_stream ON usage_hourly (account_id, stream_name, hour);
CREATE INDEX IF NOT EXISTS usage_hourly_by_hour ON usage_hourly (account_id, hour);
CREATE INDEX IF NOT EXISTS usage_hourly_expiry ON usage_hourly (keep_until);
CREATE TABLE IF NOT EXISTS usage_reports (
  account_id TEXT NOT NULL,
  report_id TEXT NOT NULL,
  PRIMARY KEY (account_id, report_id)
);
DROP TABLE IF EXISTS sessions;
-- The session registry: live rows (ended = 0) expire at expires_ms = lastSeen + ttl; ended rows are
-- kept until expires_ms = endedOn + keep (late reports, re-asks).
CREATE TABLE IF NOT EXISTS registry_sessions (
  id TEXT PRIMARY KEY,
  caller TEXT NOT NULL,
  caller_sid TEXT NOT NULL,
  account_id TEXT NOT NULL,
  token_id INTEGER,
  stream_name TEXT NOT NULL,
  action TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  ended INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS registry_sessions_caller ON registry_sessions (caller, caller_sid);
CREATE INDEX IF NOT EXISTS registry_sessions_token ON registry_sessions (account_id, token_id, ended);
CREATE INDEX IF NOT EXISTS registry_sessions_stream ON registry_sessions (account_id, stream_name, ended);
CREATE INDEX IF NOT EXISTS registry_sessions_started ON registry_sessions (account_id, ended, started_ms);
CREATE INDEX IF NOT EXISTS registry_sessions_expiry ON registry_sessions (expires_ms);
CREATE TABLE IF NOT EXISTS token_uses (
  account_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  uses INTEGER NOT NULL,
  PRIMARY KEY (account_id, token_id)
);
CREATE TABLE IF NOT EXISTS expiry_cuts (
  account_id TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, token_id)
);
CREATE TABLE IF NOT EXISTS secured_streams (
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  is_regex INTEGER NOT NULL,
  token_id INTEGER NOT NULL,
  added_on TEXT NOT NULL,
  rules TEXT NOT NULL,
  PRIMARY KEY (account_id, stream_name, is_regex, token_id)
);
CREATE TABLE IF NOT EXISTS live_streams (
  account_id TEXT NOT NULL,
  stream_name TEXT NOT NULL,
  token_id INTEGER NOT NULL,
  feed_id TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (account_id, stream_name)
);
CREATE TABLE IF NOT EXISTS marks (
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, name)
);
CREATE INDEX IF NOT EXISTS marks_expiry ON marks (expires_ms);
CREATE TABLE IF NOT EXISTS sharing_uses (
  account_id TEXT NOT NULL,
  credential TEXT NOT NULL,
  ip TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (account_id, credential, ip)
);
CREATE INDEX IF NOT EXISTS sharing_uses_by_time ON sharing_uses (account_id, credential, at_ms);
CREATE INDEX IF NOT EXISTS sharing_uses_expiry ON sharing_uses (at_ms);
`;

/**
 * Credential issuers: the record's lists and objects as JSON columns, `iss_key` the key of its
 * `iss` (null included), which no two overlapping issuers share with each other's key ids.
 */
const ISSUERS_TABLE = `
CREATE TABLE IF NOT EXISTS issuers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL,
  iss_key TEXT NOT NULL,
  issuer TEXT,
  label TEXT NOT NULL,
  type TEXT NOT NULL,
  is_active INTEGER NOT NULL,
  policy_token_id INTEGER NOT NULL,
  key_ids TEXT NOT NULL,
  audience TEXT NOT NULL,
  algorithms TEXT NOT NULL,
  jwks TEXT,
  jwks_url TEXT,
  secret TEXT,
  clock_skew_seconds INTEGER NOT NULL,
  max_lifetime_seconds INTEGER,
  claims TEXT NOT NULL,
  cookie_name TEXT,
  revoked TEXT NOT NULL,
  settings TEXT,
  signing_key TEXT,
  secret_from TEXT,
  signing_key_from TEXT,
  added_on TEXT NOT NULL,
  updated_on TEXT NOT NULL,
  rev INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS issuers_by_account ON issuers (account_id, id);
CREATE INDEX IF NOT EXISTS issuers_by_iss ON issuers (iss_key, id);
`;

/**
 * Brings a file written by an earlier build up to this schema. `user_version` 1: accounts carry
 * viewer country defaults, and `tokens.securing` holds viewer-rule flags (1 secures viewing, 2
 * restricts viewer countries; see domain/viewer-rules.ts) instead of a 0/1 flag.
 */
export function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version >= 9) {
    fillNameKeys(db);
    return;
  }
  if (version === 8) {
    addSharingColumn(db);
    fillNameKeys(db);
    return;
  }
  if (version === 7) {
    addAuditTables(db);
    addSharingColumn(db);
    fillNameKeys(db);
    return;
  }
  if (version === 5 || version === 6) {
    addIssuerColumns(db);
    addAuditTables(db);
    addSharingColumn(db);
    fillNameKeys(db);
    return;
  }
  db.transaction(() => {
    const columns = new Set((db.prepare('PRAGMA table_info(accounts)').all() as Array<{ name: string }>).map((c) => c.name));
    const add = (column: string, type: string) => {
      if (!columns.has(column)) db.exec(`ALTER TABLE accounts ADD COLUMN ${column} ${type}`);
    };
    if (version < 1) {
      add('allowed_countries', "TEXT NOT NULL DEFAULT ''");
      add('denied_countries', "TEXT NOT NULL DEFAULT ''");
    }
    if (version < 2) {
      // `user_version` 2: the flags no longer depend on isActive (a disabled publish token keeps
      // securing its streams and restricting their viewers' countries; domain/viewer-rules.ts).
      db.exec(`UPDATE tokens SET securing =
          (CASE WHEN json_extract(data, '$.subscribeRequiresAuth') THEN 1 ELSE 0 END)
        | (CASE WHEN json_array_length(data, '$.allowedCountries') > 0 OR json_array_length(data, '$.deniedCountries') > 0 THEN 2 ELSE 0 END)
        WHERE kind = 'publish'`);
    }
    // `user_version` 3: accounts carry their default cluster, geo cascade setting and whether
    // address rules apply on RTMP (docs/api.md#clusters, docs/api.md#rtmp); existing accounts
    // get none set and address rules on, as before.
    add('default_cluster', "TEXT NOT NULL DEFAULT ''");
    add('geo_cascade', "TEXT NOT NULL DEFAULT ''");
    add('ip_rules_on_rtmp', 'INTEGER NOT NULL DEFAULT 1');
    // `user_version` 4: accounts carry the key of their name (accountNameKey), which no two may
    // share from now on. Names accounts shared before stay as they are: the index is not unique,
    // the accounts' writes refuse a taken key (accounts.ts) and the start names them in a warning.
    add('name_key', "TEXT NOT NULL DEFAULT ''");
    db.exec('CREATE INDEX IF NOT EXISTS accounts_by_name_key ON accounts (name_key)');
    fillNameKeys(db);
    // `user_version` 5: credential issuers (src/store/sqlite/issuers.ts), indexed by account and by
    // the key of their `iss` (issuerIndexKey), which every JWT presented with that `iss` reads.
    db.exec(ISSUERS_TABLE);
    // `user_version` 8: the audit chains (below)
    db.exec(AUDIT_TABLES);
    // `user_version` 9: accounts carry their token-sharing policy (docs/api.md#token-sharing)
    add('sharing', "TEXT NOT NULL DEFAULT ''");
    db.pragma('user_version = 9');
  })();
}

/** `user_version` 9: accounts carry their token-sharing policy ('' = never set, as for every account of a file at 8 or earlier). */
function addSharingColumn(db: Database.Database): void {
  db.transaction(() => {
    const columns = new Set((db.prepare('PRAGMA table_info(accounts)').all() as Array<{ name: string }>).map((c) => c.name));
    if (!columns.has('sharing')) db.exec("ALTER TABLE accounts ADD COLUMN sharing TEXT NOT NULL DEFAULT ''");
    db.pragma('user_version = 9');
  })();
}

/**
 * The audit chains (docs/api.md#audit-log; src/store/sqlite/audit.ts): each account's entries by
 * seq, `data` the entry's JSON as sealed (the columns beside it index the list's filters), and per
 * account its head and the anchor retention left (the last removed entry whole, and the MAC before it). Written in the transaction of the change each
 * entry records.
 */
const AUDIT_TABLES = `
CREATE TABLE IF NOT EXISTS audit_entries (
  account_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  resource TEXT NOT NULL,
  actor TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (account_id, seq)
);
CREATE TABLE IF NOT EXISTS audit_heads (
  account_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  mac TEXT NOT NULL,
  anchor_seq INTEGER NOT NULL DEFAULT 0,
  anchor_mac TEXT NOT NULL DEFAULT '',
  anchor_text TEXT NOT NULL DEFAULT '',
  anchor_prev TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS audit_entries_by_time ON audit_entries (account_id, at_ms);
CREATE INDEX IF NOT EXISTS audit_entries_by_resource ON audit_entries (account_id, resource, seq);
CREATE INDEX IF NOT EXISTS audit_entries_by_actor ON audit_entries (account_id, actor, seq);
`;

/** `user_version` 8: the audit chains, empty (a file at 7 or earlier recorded no change). */
function addAuditTables(db: Database.Database): void {
  db.transaction(() => {
    db.exec(AUDIT_TABLES);
    db.pragma('user_version = 8');
  })();
}

/**
 * `user_version` 6: issuers carry a signed-URL issuer's settings and the private key /sign signs
 * with (docs/api.md#signed-url-issuers); the issuers of a file at 5 are JWT issuers and get neither.
 * `user_version` 7: and the key references a signed-URL issuer may read its keys from instead
 * (docs/api.md#keys-from-files-and-the-environment); null in a file at 6 or 5.
 */
function addIssuerColumns(db: Database.Database): void {
  db.transaction(() => {
    const columns = new Set((db.prepare('PRAGMA table_info(issuers)').all() as Array<{ name: string }>).map((c) => c.name));
    for (const c of ['settings', 'signing_key', 'secret_from', 'signing_key_from']) {
      if (!columns.has(c)) db.exec(`ALTER TABLE issuers ADD COLUMN ${c} TEXT`);
    }
    db.pragma('user_version = 7');
  })();
}

/**
 * Sets the name key of accounts that have none: those of the upgrade, and any an earlier build
 * wrote to a file this build had upgraded already.
 */
function fillNameKeys(db: Database.Database): void {
  const missing = db.prepare("SELECT id, name FROM accounts WHERE name_key = ''").all() as Array<{ id: string; name: string }>;
  if (missing.length === 0) return;
  const set = db.prepare('UPDATE accounts SET name_key = ? WHERE id = ?');
  db.transaction(() => {
    for (const a of missing) set.run(accountNameKey(a.name), a.id);
  })();
}
