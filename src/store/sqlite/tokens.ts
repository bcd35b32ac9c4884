// Tokens on SQLite: the tokens table (a JSON column and the columns the lookups use), bound
// addresses cleared with them, and the secured streams a deleted token leaves behind.
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { tokenHash } from '../../domain/tokens.js';
import { viewerRuleFlags } from '../../domain/viewer-rules.js';
import { bySecuredName, keptRules, securedAfterDelete, type KeptRules, type SecuredStream } from '../../domain/secured-streams.js';
import type { ListQuery, TokenChange, TokenStore } from '../tokens.js';
import { nameSortKey } from '../sort.js';
import { copyWith } from '../../domain/objects.js';
import type { SqliteConnection } from './connection.js';
import type { AuditSealer } from '../../domain/audit.js';
import { appendSealed } from './audit.js';

interface SecuredRow {
  stream_name: string;
  is_regex: number;
  token_id: number;
  added_on: string;
  rules: string;
}

const securedOf = (r: SecuredRow): SecuredStream =>
  Object.assign({ streamName: r.stream_name, isRegex: r.is_regex === 1, tokenId: r.token_id, addedOn: r.added_on }, JSON.parse(r.rules) as KeptRules);

interface TokenRow {
  id: number;
  rev: number;
  data: string;
}

const fromRow = (r: TokenRow): TokenRecord => copyWith(JSON.parse(r.data) as TokenRecord, { id: r.id, rev: r.rev });
/** The JSON column holds everything but the columns of its own. */
const toData = (t: NewTokenRecord | TokenRecord): string => {
  const { id: _id, rev: _rev, ...rest } = t as TokenRecord;
  return JSON.stringify(rest);
};

export class SqliteTokens implements TokenStore {
  constructor(private readonly c: SqliteConnection) {}

  async createToken(t: NewTokenRecord, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord> {
    return this.c.tx(() => {
      const info = this.c.stmt(
        `INSERT INTO tokens (account_id, kind, token_hash, sort_name, added_ms, rev, securing, data)
         VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
      )
        .run(t.accountId, t.kind, tokenHash(t.token), nameSortKey(t.label), Date.parse(t.addedOn), viewerRuleFlags(t), toData(t));
      this.c.bumpVersion(t.accountId);
      const created = copyWith(t, { id: Number(info.lastInsertRowid), rev: 1 });
      appendSealed(this.c, t.accountId, audit, null, created);
      return created;
    });
  }

  #readToken(accountId: string, kind: TokenKind, id: number): TokenRecord | null {
    const r = this.c.stmt('SELECT id, rev, data FROM tokens WHERE id = ? AND account_id = ? AND kind = ?')
      .get(id, accountId, kind) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null> {
    return this.#readToken(accountId, kind, id);
  }

  async listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]> {
    const dir = q.descending ? 'DESC' : 'ASC';
    const order = q.sortBy === 'Name' ? `sort_name ${dir}, id ${dir}` : `added_ms ${dir}, id ${dir}`;
    const rows = this.c.stmt(`SELECT id, rev, data FROM tokens WHERE account_id = ? AND kind = ? ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(accountId, kind, q.itemsOnPage, (q.page - 1) * q.itemsOnPage) as TokenRow[];
    return rows.map(fromRow);
  }

  async updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord | null> {
    return this.c.tx(() => {
      const current = this.#readToken(accountId, kind, id);
      if (!current) return null;
      const { next, clearBound } = change(current);
      const rev = current.rev + 1;
      this.c.stmt('UPDATE tokens SET token_hash = ?, sort_name = ?, rev = ?, securing = ?, data = ? WHERE id = ?')
        .run(tokenHash(next.token), nameSortKey(next.label), rev, viewerRuleFlags(next), toData(next), id);
      this.c.bumpVersion(accountId);
      if (clearBound) this.c.stmt('DELETE FROM bound_addresses WHERE token_id = ?').run(id);
      const updated = copyWith(next, { id, rev });
      appendSealed(this.c, accountId, audit, current, updated);
      return updated;
    });
  }

  async deleteToken(accountId: string, kind: TokenKind, id: number, audit?: AuditSealer<TokenRecord>): Promise<boolean> {
    return this.c.tx(() => {
      const current = this.#readToken(accountId, kind, id);
      if (!current) return false;
      this.c.stmt('DELETE FROM tokens WHERE id = ?').run(id);
      this.c.stmt('DELETE FROM bound_addresses WHERE token_id = ?').run(id);
      const keep = this.c.stmt('INSERT OR IGNORE INTO secured_streams (account_id, stream_name, is_regex, token_id, added_on, rules) VALUES (?, ?, ?, ?, ?, ?)');
      for (const s of securedAfterDelete(current, new Date(this.c.now()).toISOString())) {
        keep.run(accountId, s.streamName, s.isRegex ? 1 : 0, s.tokenId, s.addedOn, JSON.stringify(keptRules(s)));
      }
      this.c.bumpVersion(accountId);
      appendSealed(this.c, accountId, audit, current, null);
      return true;
    });
  }

  async securedStreams(accountId: string): Promise<SecuredStream[]> {
    const rows = this.c.stmt('SELECT stream_name, is_regex, token_id, added_on, rules FROM secured_streams WHERE account_id = ?').all(accountId) as SecuredRow[];
    return rows.map(securedOf).sort(bySecuredName);
  }

  async removeSecuredStream(accountId: string, streamName: string, audit?: AuditSealer<SecuredStream[]>): Promise<SecuredStream[]> {
    return this.c.tx(() => {
      const rows = this.c.stmt('SELECT stream_name, is_regex, token_id, added_on, rules FROM secured_streams WHERE account_id = ? AND stream_name = ?')
        .all(accountId, streamName) as SecuredRow[];
      if (rows.length === 0) return [];
      this.c.stmt('DELETE FROM secured_streams WHERE account_id = ? AND stream_name = ?').run(accountId, streamName);
      this.c.bumpVersion(accountId);
      const removed = rows.map(securedOf).sort(bySecuredName);
      appendSealed(this.c, accountId, audit, removed, null);
      return removed;
    });
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const r = this.c.stmt('SELECT id, rev, data FROM tokens WHERE token_hash = ?').get(hash) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async findTokenById(id: number): Promise<TokenRecord | null> {
    const r = this.c.stmt('SELECT id, rev, data FROM tokens WHERE id = ?').get(id) as TokenRow | undefined;
    return r ? fromRow(r) : null;
  }

  async securingTokens(accountId: string): Promise<TokenRecord[]> {
    // `securing` holds viewer-rule flags (migrate()): bit 1 is "secures viewing"
    const rows = this.c.stmt('SELECT id, rev, data FROM tokens WHERE account_id = ? AND securing IN (1, 3) ORDER BY id')
      .all(accountId) as TokenRow[];
    return rows.map(fromRow);
  }

  async viewerRuleTokens(accountId: string): Promise<TokenRecord[]> {
    const rows = this.c.stmt('SELECT id, rev, data FROM tokens WHERE account_id = ? AND securing > 0 ORDER BY id').all(accountId) as TokenRow[];
    return rows.map(fromRow);
  }
}
