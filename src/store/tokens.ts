// The tokens aggregate: publish and subscribe tokens, the lookups a decision makes by value and id,
// and the secured streams a deleted token leaves behind (docs/api.md#secured-streams).
import type { TokenKind, TokenRecord, NewTokenRecord } from '../domain/tokens.js';
import type { SecuredStream } from '../domain/secured-streams.js';
import type { AuditSealer } from '../domain/audit.js';

export type SortBy = 'Name' | 'AddedOn';

export interface ListQuery {
  sortBy: SortBy;
  /** 1-based */
  page: number;
  itemsOnPage: number;
  descending: boolean;
}

/**
 * The change applied by updateToken. It receives the current record and returns the next one,
 * or throws (an ApiError) to abort with nothing stored. It must be pure: a backend with
 * optimistic concurrency may call it again with a newer record.
 */
export type TokenChange = (current: TokenRecord) => { next: TokenRecord; clearBound: boolean };

export interface TokenStore {
  /**
   * Stores a new token and assigns its id (a positive integer unique across kinds and accounts).
   * `audit` (here and below): the change's entry, appended in the same atomic step (src/store/audit.ts).
   */
  createToken(token: NewTokenRecord, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord>;
  /** The token of this account and kind with this id, else null. */
  getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null>;
  /** A page of the account's tokens of one kind. Name order is case-insensitive, ties by id. */
  listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]>;
  /**
   * Atomic read-modify-write of one token: no concurrent update is lost. When the change asks for
   * it, the bound addresses are cleared in the same atomic step. Null when the token is not found.
   */
  updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord | null>;
  /**
   * Deletes the token and its bound addresses. A publish token that secures viewing leaves its
   * stream rules on the account's secured streams (`securedAfterDelete` in domain/secured-streams.ts),
   * in the same atomic step. False when not found.
   */
  deleteToken(accountId: string, kind: TokenKind, id: number, audit?: AuditSealer<TokenRecord>): Promise<boolean>;
  /**
   * The account's secured streams kept after their tokens were deleted (docs/api.md#secured-streams),
   * in `bySecuredName` order. A decision reads them with the securing tokens.
   */
  securedStreams(accountId: string): Promise<SecuredStream[]>;
  /**
   * Removes the account's secured-stream entries named `streamName` (exact and regex alike) and
   * moves the account version when any was removed, in one atomic step. Answers the removed entries;
   * `audit` is sealed (removed entries, null) only when some were.
   */
  removeSecuredStream(accountId: string, streamName: string, audit?: AuditSealer<SecuredStream[]>): Promise<SecuredStream[]>;
  /** The token whose current value has this SHA-256 hash (any account, any kind), else null. */
  findTokenByHash(tokenHash: string): Promise<TokenRecord | null>;
  /** The token with this id in any account (enforcement of self-signed JWTs), else null. */
  findTokenById(id: number): Promise<TokenRecord | null>;
  /**
   * The account's publish tokens that make viewing need a subscribe token: with
   * subscribeRequiresAuth, active or not (domain rule `securesViewing`). Ordered by id.
   */
  securingTokens(accountId: string): Promise<TokenRecord[]>;
  /**
   * In one read, the account's publish tokens that set rules for its viewers: the securing ones and
   * those with country lists, active or not (`setsViewerRules` in domain/viewer-rules.ts). Ordered by id.
   */
  viewerRuleTokens(accountId: string): Promise<TokenRecord[]>;
}
