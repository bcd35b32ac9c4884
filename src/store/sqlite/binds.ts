// Bind on usage on SQLite: the bound_addresses table, decided by bindDecision (domain/store-rules.ts).
import type { TokenRecord } from '../../domain/tokens.js';
import type { BindResult, BindStore } from '../binds.js';
import { bindDecision } from '../../domain/store-rules.js';
import type { SqliteConnection } from './connection.js';

export class SqliteBinds implements BindStore {
  constructor(private readonly c: SqliteConnection) {}

  async boundAddresses(_accountId: string, tokenId: number): Promise<string[]> {
    return (
      this.c.stmt('SELECT address FROM bound_addresses WHERE token_id = ? ORDER BY seq').all(tokenId) as Array<{
        address: string;
      }>
    ).map((r) => r.address);
  }

  async bindAddress(token: TokenRecord, address: string): Promise<BindResult> {
    const tokenId = token.id;
    const limit = token.bindIpsOnUsage ?? 0;
    return this.c.tx((): BindResult => {
      const cur = this.c.stmt('SELECT rev FROM tokens WHERE id = ?').get(tokenId) as { rev: number } | undefined;
      if (!cur || cur.rev !== token.rev) return 'stale';
      let n = -1; // counted only when the address is not bound yet (as bindDecision asks)
      const count = () => {
        if (n < 0) n = (this.c.stmt('SELECT COUNT(*) AS n FROM bound_addresses WHERE token_id = ?').get(tokenId) as { n: number }).n;
        return n;
      };
      const bound = {
        has: (a: string) => this.c.stmt('SELECT 1 FROM bound_addresses WHERE token_id = ? AND address = ?').get(tokenId, a) !== undefined,
        get size() {
          return count();
        },
      };
      const step = bindDecision(bound, address, limit);
      if (step !== 'bound') return step;
      this.c.stmt('INSERT INTO bound_addresses (token_id, address, seq) VALUES (?, ?, ?)').run(tokenId, address, bound.size + 1);
      return 'bound';
    });
  }
}
