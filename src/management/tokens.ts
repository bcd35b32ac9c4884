// Publish and subscribe token management: the operations behind /api/{publish,subscribe}_token.
// Each call is scoped to one account; a token of another account is "not found".
import { ApiError } from '../errors.js';
import {
  applyTokenUpdate,
  kindName,
  newTokenRecord,
  tokenView,
  type CreateTokenInput,
  type TokenKind,
  type TokenRecord,
  type UpdateTokenInput,
} from '../domain/tokens.js';
import { newSecret } from '../domain/secrets.js';
import type { ListQuery, Store } from '../store/store.js';

export class TokenService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  private notFound(kind: TokenKind, id: number): ApiError {
    return ApiError.notFound(kindName(kind), id);
  }

  private async view(t: TokenRecord): Promise<Record<string, unknown>> {
    const bound = t.bindIpsOnUsage ? await this.store.boundAddresses(t.accountId, t.id) : [];
    return tokenView(t, bound);
  }

  async create(accountId: string, kind: TokenKind, input: CreateTokenInput): Promise<Record<string, unknown>> {
    const rec = newTokenRecord(kind, accountId, input, newSecret(), this.now());
    return this.view(await this.store.createToken(rec));
  }

  /** The stored record (for the check endpoint); 404 when not the account's. */
  async record(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord> {
    const t = await this.store.getToken(accountId, kind, id);
    if (!t) throw this.notFound(kind, id);
    return t;
  }

  async read(accountId: string, kind: TokenKind, id: number): Promise<Record<string, unknown>> {
    return this.view(await this.record(accountId, kind, id));
  }

  async list(accountId: string, kind: TokenKind, q: ListQuery): Promise<Array<Record<string, unknown>>> {
    const page = await this.store.listTokens(accountId, kind, q);
    return Promise.all(page.map((t) => this.view(t)));
  }

  async update(accountId: string, kind: TokenKind, id: number, input: UpdateTokenInput): Promise<Record<string, unknown>> {
    if (Object.keys(input).length === 0) {
      const msg = 'No properties specified to update.';
      throw new ApiError(400, msg, { token: msg });
    }
    // One token value per update, even if the store retries the change on a newer version.
    let fresh: string | undefined;
    const newValue = () => (fresh ??= newSecret());
    const t = await this.store.updateToken(accountId, kind, id, (cur) => applyTokenUpdate(cur, input, this.now(), newValue));
    if (!t) throw this.notFound(kind, id);
    return this.view(t);
  }

  async remove(accountId: string, kind: TokenKind, id: number): Promise<true> {
    if (!(await this.store.deleteToken(accountId, kind, id))) throw this.notFound(kind, id);
    return true;
  }

  /** Bulk disable: every id is reported as successful or failed; one failure stops nothing. */
  async disable(
    accountId: string,
    kind: TokenKind,
    ids: number[],
  ): Promise<{ successfulTokens: number[]; failedTokens: Array<{ tokenId: number; errorMessage: string }> }> {
    const successfulTokens: number[] = [];
    const failedTokens: Array<{ tokenId: number; errorMessage: string }> = [];
    for (const id of [...new Set(ids)]) {
      const t = await this.store.updateToken(accountId, kind, id, (cur) =>
        applyTokenUpdate(cur, { isActive: false }, this.now(), newSecret),
      );
      if (t) successfulTokens.push(id);
      else failedTokens.push({ tokenId: id, errorMessage: `No ${kindName(kind)} with id: ${id}` });
    }
    return { successfulTokens, failedTokens };
  }

  async active(accountId: string, streamName?: string): Promise<{ tokenIds: number[] }> {
    // A feed reported without a token (generic /hooks/events) is live but names no token.
    return { tokenIds: (await this.store.activePublishTokenIds(accountId, streamName)).filter((id) => id > 0) };
  }
}
