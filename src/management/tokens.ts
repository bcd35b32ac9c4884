// Publish and subscribe token management: the operations behind /api/{publish,subscribe}_token.
// Each call is scoped to one account; a token of another account is "not found".
import { ApiError } from '../errors.js';
import {
  applyTokenUpdate,
  kindName,
  newTokenRecord,
  securesViewing,
  tokenView,
  type AccountDefaults,
  type CreateTokenInput,
  type TokenKind,
  type TokenRecord,
  type UpdateTokenInput,
} from '../domain/tokens.js';
import { newSecret } from '../domain/secrets.js';
import type { ListQuery, Store } from '../store/store.js';
import type { SecuredStream } from '../domain/secured-streams.js';
import { IMPLICIT_CLUSTER } from '../director/clusters.js';
import type { Actor } from '../audit/actor.js';
import { TOKEN, securedStreams, type AuditLog } from '../audit/log.js';
import type { AuditSealer } from '../domain/audit.js';

/** What one account may hold (config `limits`). */
export interface AccountLimits {
  /** Tokens of each kind. */
  tokensPerAccount: number;
  /** Regex stream rules across the account's securing publish tokens together. */
  regexStreamsPerAccount: number;
}

export const DEFAULT_LIMITS: AccountLimits = { tokensPerAccount: 100_000, regexStreamsPerAccount: 2000 };

const regexCount = (t: Pick<TokenRecord, 'streams'>): number => t.streams.filter((s) => s.isRegex).length;
/** The patterns a token adds to its account's token-less decisions: only a securing token's count. */
const securingRegexes = (t: Pick<TokenRecord, 'kind' | 'subscribeRequiresAuth' | 'streams'>): number =>
  securesViewing(t) ? regexCount(t) : 0;

/** A stored token change: `before` as the change found it (null when unknown), `after` null for a deletion. */
export type TokenChanged = (accountId: string, id: number, before: TokenRecord | null, after: TokenRecord | null) => unknown;

export class TokenService {
  /** Per account, the tail of its limit-checked writes: a count and the write it admits are one step. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
    private readonly limits: AccountLimits = DEFAULT_LIMITS,
    /** After a stored change (update, disable, delete): running sessions may end (docs/api.md#running-sessions). Not awaited. */
    private readonly changed: TokenChanged = () => undefined,
    /** An account's default cluster from the one it stored (docs/api.md#clusters): a configured cluster's id. */
    private readonly defaultCluster: (stored: string | undefined) => string = (stored) => stored || IMPLICIT_CLUSTER,
    /** Every write's entry (docs/api.md#audit-log); none without. */
    private readonly audit?: AuditLog,
  ) {}

  /** The sealer of a change of one of the account's tokens by `by`. */
  private sealer(by: Actor, accountId: string, kind: TokenKind): AuditSealer<TokenRecord> | undefined {
    return this.audit?.sealer(by, accountId, kind === 'publish' ? 'publishToken' : 'subscribeToken', TOKEN);
  }

  /** Runs limit-checked writes of one account one at a time (in this process). */
  private serial<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(accountId) ?? Promise.resolve()).then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(accountId, tail);
    void tail.then(() => {
      if (this.queues.get(accountId) === tail) this.queues.delete(accountId);
    });
    return run;
  }

  /**
   * Regex rules the account's securing tokens hold, the token `except` left out, and those its
   * secured streams keep after their tokens were deleted.
   */
  private async securingRegexesBut(accountId: string, except?: number): Promise<number> {
    const [securing, kept] = await Promise.all([this.store.securingTokens(accountId), this.store.securedStreams(accountId)]);
    const held = securing.reduce((n, t) => (t.id === except ? n : n + securingRegexes(t)), 0);
    return held + kept.filter((s) => s.isRegex && s.subscribeRequiresAuth).length;
  }

  private regexLimitProblem(others: number, adding: number): string {
    const max = this.limits.regexStreamsPerAccount;
    return `an account's securing publish tokens (subscribeRequiresAuth, active or not) and its secured streams hold at most ${max} regex stream rules together (limits.regexStreamsPerAccount); the others hold ${others}, this token would hold ${adding}: use exact stream names, fewer patterns, a pattern that covers several names, or remove secured streams you no longer need (DELETE /api/secured_streams/{name})`;
  }

  /** A page of the account's secured streams kept after their tokens (docs/api.md#secured-streams). */
  async securedStreams(accountId: string, page: number, itemsOnPage: number): Promise<SecuredStream[]> {
    const all = await this.store.securedStreams(accountId);
    return all.slice((page - 1) * itemsOnPage, page * itemsOnPage);
  }

  /**
   * Opens the streams an entry of that name kept secured (exact and regex alike): deliberate, like
   * `subscribeRequiresAuth: false` on a token. 404 when the account keeps no such entry.
   */
  async releaseSecuredStream(accountId: string, streamName: string, by: Actor): Promise<SecuredStream[]> {
    const removed = await this.store.removeSecuredStream(accountId, streamName, this.audit?.sealer(by, accountId, 'securedStream', securedStreams(streamName)));
    if (removed.length === 0) {
      const message = `No secured stream named: ${streamName}`;
      throw new ApiError(404, message, { streamName: message });
    }
    return removed;
  }

  private notFound(kind: TokenKind, id: number): ApiError {
    return ApiError.notFound(kindName(kind), id);
  }

  /** The account's settings records' effectiveSettings show: country defaults, default cluster, geo cascade. */
  private async accountGeo(accountId: string): Promise<AccountDefaults> {
    const a = await this.store.getAccount(accountId);
    const out: AccountDefaults = {
      allowedCountries: a?.allowedCountries ?? [],
      deniedCountries: a?.deniedCountries ?? [],
      originCluster: this.defaultCluster(a?.defaultCluster),
    };
    if (a?.geoCascade) out.geoCascade = a.geoCascade;
    return out;
  }

  /** The account's default cluster (list_by_cluster counts the tokens that name none in it). */
  async accountCluster(accountId: string): Promise<string> {
    return this.defaultCluster((await this.store.getAccount(accountId))?.defaultCluster);
  }

  private async view(t: TokenRecord, geo?: AccountDefaults): Promise<Record<string, unknown>> {
    const bound = t.bindIpsOnUsage ? await this.store.boundAddresses(t.accountId, t.id) : [];
    return tokenView(t, bound, geo ?? (await this.accountGeo(t.accountId)));
  }

  private async views(accountId: string, ts: TokenRecord[]): Promise<Array<Record<string, unknown>>> {
    if (ts.length === 0) return [];
    const geo = await this.accountGeo(accountId);
    return Promise.all(ts.map((t) => this.view(t, geo)));
  }

  async create(accountId: string, kind: TokenKind, input: CreateTokenInput, by: Actor): Promise<Record<string, unknown>> {
    const rec = newTokenRecord(kind, accountId, input, newSecret(), this.now());
    const created = await this.serial(accountId, async () => {
      const max = this.limits.tokensPerAccount;
      // The max-th token by age exists: the account is full (an index seek, not a count of all).
      const full = await this.store.listTokens(accountId, kind, { sortBy: 'AddedOn', page: max, itemsOnPage: 1, descending: false });
      if (full.length > 0) {
        const msg = `an account holds at most ${max} ${kindName(kind)}s (limits.tokensPerAccount): delete unused ones first`;
        throw new ApiError(400, msg, { limit: 'tokensPerAccount', max });
      }
      const adding = securingRegexes(rec);
      if (adding > 0) {
        const others = await this.securingRegexesBut(accountId);
        if (others + adding > this.limits.regexStreamsPerAccount) throw ApiError.field('streams', this.regexLimitProblem(others, adding));
      }
      return this.store.createToken(rec, this.sealer(by, accountId, kind));
    });
    return this.view(created);
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
    return this.views(accountId, await this.store.listTokens(accountId, kind, q));
  }

  /**
   * A page of the tokens that `matches` accepts, in the list order. The store pages by position, so
   * the account's tokens are read in chunks (in order) until the page is full: a filtered page costs
   * up to the account's token count in reads (docs/compatibility.md, list_by_name).
   */
  async listWhere(accountId: string, kind: TokenKind, q: ListQuery, matches: (t: TokenRecord) => boolean): Promise<Array<Record<string, unknown>>> {
    const chunk = 500;
    let skip = (q.page - 1) * q.itemsOnPage;
    const out: TokenRecord[] = [];
    for (let page = 1; out.length < q.itemsOnPage; page++) {
      const got = await this.store.listTokens(accountId, kind, { sortBy: q.sortBy, descending: q.descending, page, itemsOnPage: chunk });
      for (const t of got) {
        if (!matches(t)) continue;
        if (skip > 0) skip--;
        else if (out.length < q.itemsOnPage) out.push(t);
      }
      if (got.length < chunk) break;
    }
    return this.views(accountId, out);
  }

  async update(accountId: string, kind: TokenKind, id: number, input: UpdateTokenInput, by: Actor): Promise<Record<string, unknown>> {
    if (Object.keys(input).length === 0) {
      const msg = 'No properties specified to update.';
      throw new ApiError(400, msg, { token: msg });
    }
    // One token value per update, even if the store retries the change on a newer version.
    let fresh: string | undefined;
    const newValue = () => (fresh ??= newSecret());
    let before: TokenRecord | null = null;
    const change = (others?: number) => (cur: TokenRecord) => {
      before = cur;
      const out = applyTokenUpdate(cur, input, this.now(), newValue);
      const adding = securingRegexes(out.next);
      // Only a change that brings more patterns is refused: a label edit stays possible on an
      // account already over a limit lowered since.
      if (others !== undefined && adding > securingRegexes(cur) && others + adding > this.limits.regexStreamsPerAccount) {
        const field = input.addTokenStreams ? 'addTokenStreams' : 'subscribeRequiresAuth';
        throw ApiError.field(field, this.regexLimitProblem(others, adding));
      }
      return out;
    };
    const mayAddPatterns =
      kind === 'publish' && (input.addTokenStreams?.some((s) => s.isRegex) || input.subscribeRequiresAuth === true);
    const seal = this.sealer(by, accountId, kind);
    const t = mayAddPatterns
      ? await this.serial(accountId, async () => this.store.updateToken(accountId, kind, id, change(await this.securingRegexesBut(accountId, id)), seal))
      : await this.store.updateToken(accountId, kind, id, change(), seal);
    if (!t) throw this.notFound(kind, id);
    void this.changed(accountId, id, before, t);
    return this.view(t);
  }

  async remove(accountId: string, kind: TokenKind, id: number, by: Actor): Promise<true> {
    if (!(await this.store.deleteToken(accountId, kind, id, this.sealer(by, accountId, kind)))) throw this.notFound(kind, id);
    void this.changed(accountId, id, null, null);
    return true;
  }

  /** Bulk disable: every id is reported as successful or failed; one failure stops nothing. */
  async disable(
    accountId: string,
    kind: TokenKind,
    ids: number[],
    by: Actor,
  ): Promise<{ successfulTokens: number[]; failedTokens: Array<{ tokenId: number; errorMessage: string }> }> {
    const seal = this.sealer(by, accountId, kind);
    const successfulTokens: number[] = [];
    const failedTokens: Array<{ tokenId: number; errorMessage: string }> = [];
    for (const id of [...new Set(ids)]) {
      let before: TokenRecord | null = null;
      const t = await this.store.updateToken(accountId, kind, id, (cur) => {
        before = cur;
        return applyTokenUpdate(cur, { isActive: false }, this.now(), newSecret);
      }, seal);
      if (t) void this.changed(accountId, id, before, t);
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
