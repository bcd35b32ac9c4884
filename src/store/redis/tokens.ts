// Tokens on Redis: one string per token (token-record.ts), the list indexes, value and id hints
// verified on read, the viewer-rule set, and the secured streams a deleted token leaves behind.
import type { TokenKind, TokenRecord, NewTokenRecord } from '../../domain/tokens.js';
import { securesViewing, tokenHash } from '../../domain/tokens.js';
import { setsViewerRules } from '../../domain/viewer-rules.js';
import { bySecuredName, keptRules, securedAfterDelete, type SecuredStream } from '../../domain/secured-streams.js';
import type { ListQuery, TokenChange, TokenStore } from '../tokens.js';
import { nameSortKey } from '../sort.js';
import { keys, idMember, nameMember, idFromMember, TOKEN_BUCKET } from './keys.js';
import { compareAndSet } from '../failures.js';
import { Reply, auditMoved, casReply, codeOf } from './codes.js';
import type { AuditSealer } from '../../domain/audit.js';
import { sealFor } from './audit.js';
import { copyWith } from '../../domain/objects.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';
import { decodeToken, encodeToken, readTokens } from './token-record.js';

/** The secured-stream entries of one name and kind, read back from their hash value (one JSON entry per line). */
function securedEntries(streamName: string, isRegex: boolean, raw: string | null | undefined): SecuredStream[] {
  if (raw === null || raw === undefined) return [];
  return raw.split('\n').map((line) => {
    const v = JSON.parse(line) as Omit<SecuredStream, 'streamName' | 'isRegex'>;
    return Object.assign({ streamName, isRegex }, v);
  });
}

export class RedisTokens implements TokenStore {
  constructor(private readonly c: RedisConnection) {}

  async createToken(t: NewTokenRecord, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord> {
    const id = await this.#nextId(t.accountId);
    await this.c.redis.hset(...keys.tokenValue(tokenHash(t.token)), `${t.accountId}:${id}`);
    await this.c.redis.hset(...keys.tokenId(id), t.accountId);
    const created = copyWith(t, { id, rev: 1 });
    const ok = await compareAndSet(`token ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const sealed = await sealFor(this.c, t.accountId, audit, null, created);
      const reply = await this.c.run(
        'tokenCreate',
        keys.tokenRecord(t.accountId, id)[0],
        keys.byName(t.accountId, t.kind),
        keys.byAdded(t.accountId, t.kind),
        keys.version(t.accountId),
        keys.securing(t.accountId),
        ...sealed.keys,
        encodeToken(t),
        nameMember(nameSortKey(t.label), id),
        Date.parse(t.addedOn),
        idMember(id),
        setsViewerRules(t) ? '1' : '0',
        id,
        ...sealed.argv,
      );
      return auditMoved(reply) ? 'retry' : { done: reply };
    });
    if (codeOf(ok) !== Reply.DONE) throw new Error(`token id ${id} already taken (sequence reset?)`);
    await this.c.replicated();
    return created;
  }

  async #readToken(accountId: string, id: number): Promise<TokenRecord | null> {
    return decodeToken(accountId, id, await this.c.redis.hgetBuffer(...keys.tokenRecord(accountId, id)));
  }

  /**
   * The next id of the account's run of TOKEN_BUCKET ids (lua/token-id-take.lua), a new run taken
   * from the sequence when it has none left: the account's records fill their buckets. Creators
   * that find the run used up at once each take a run, and all but the first one stored are
   * skipped (ids only: nothing is kept of them).
   */
  async #nextId(accountId: string): Promise<number> {
    const list = keys.tokenIdRun(accountId);
    let reply = await this.c.run('tokenIdTake', list, '', TOKEN_BUCKET);
    if (codeOf(reply) !== Reply.DONE) {
      const end = await this.c.redis.incrby(keys.tokenSeq, TOKEN_BUCKET);
      reply = await this.c.run('tokenIdTake', list, end - TOKEN_BUCKET + 1, TOKEN_BUCKET);
    }
    return Number((reply as [number, string])[1]);
  }

  async getToken(accountId: string, kind: TokenKind, id: number): Promise<TokenRecord | null> {
    const t = await this.#readToken(accountId, id);
    return t && t.kind === kind && t.accountId === accountId ? t : null;
  }

  async listTokens(accountId: string, kind: TokenKind, q: ListQuery): Promise<TokenRecord[]> {
    const start = (q.page - 1) * q.itemsOnPage;
    const stop = start + q.itemsOnPage - 1;
    const members =
      q.sortBy === 'Name'
        ? q.descending
          ? await this.c.redis.zrevrange(keys.byName(accountId, kind), start, stop)
          : await this.c.redis.zrange(keys.byName(accountId, kind), start, stop)
        : q.descending
          ? await this.c.redis.zrevrange(keys.byAdded(accountId, kind), start, stop)
          : await this.c.redis.zrange(keys.byAdded(accountId, kind), start, stop);
    return readTokens(this.c, accountId, members.map(idFromMember));
  }

  async updateToken(accountId: string, kind: TokenKind, id: number, change: TokenChange, audit?: AuditSealer<TokenRecord>): Promise<TokenRecord | null> {
    return compareAndSet(`token ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const current = await this.getToken(accountId, kind, id);
      if (!current) return { done: null };
      const { next, clearBound } = change(current);
      const newHash = tokenHash(next.token);
      const oldHash = tokenHash(current.token);
      if (newHash !== oldHash) await this.c.redis.hset(...keys.tokenValue(newHash), `${accountId}:${id}`);
      const sealed = await sealFor(this.c, accountId, audit, current, copyWith(next, { id, rev: current.rev + 1 }));
      const reply = await this.c.run(
        'tokenUpdate',
        keys.tokenRecord(accountId, id)[0],
        keys.byName(accountId, kind),
        keys.bound(accountId, id),
        keys.version(accountId),
        keys.securing(accountId),
        ...sealed.keys,
        current.rev,
        encodeToken(next),
        nameMember(nameSortKey(current.label), id),
        nameMember(nameSortKey(next.label), id),
        clearBound ? '1' : '0',
        setsViewerRules(next) ? '1' : '0',
        id,
        ...sealed.argv,
      );
      if (auditMoved(reply)) return 'retry';
      const step = casReply<TokenRecord | null>(reply, (rev) => copyWith(next, { id, rev }), () => null);
      if (step !== 'retry' && step.done) {
        if (newHash !== oldHash) await this.c.redis.hdel(...keys.tokenValue(oldHash));
        await this.c.replicated();
      }
      return step; // MOVED: somebody else wrote first; the change runs again on their version
    });
  }

  async deleteToken(accountId: string, kind: TokenKind, id: number, audit?: AuditSealer<TokenRecord>): Promise<boolean> {
    return compareAndSet(`token ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const current = await this.getToken(accountId, kind, id);
      if (!current) return { done: false };
      const sealed = await sealFor(this.c, accountId, audit, current, null);
      const reply = await this.c.run(
        'tokenDelete',
        keys.tokenRecord(accountId, id)[0],
        keys.byName(accountId, kind),
        keys.byAdded(accountId, kind),
        keys.bound(accountId, id),
        keys.version(accountId),
        keys.securing(accountId),
        keys.secured(accountId),
        ...sealed.keys,
        current.rev,
        nameMember(nameSortKey(current.label), id),
        idMember(id),
        id,
        ...sealed.argv,
        ...securedAfterDelete(current, new Date(this.c.now()).toISOString()).flatMap((e) => [
          keys.securedField(e.streamName, e.isRegex),
          JSON.stringify(Object.assign({ tokenId: e.tokenId, addedOn: e.addedOn }, keptRules(e))),
        ]),
      );
      // MOVED: changed since we read it, so the index members may differ: read again
      if (auditMoved(reply)) return 'retry';
      const step = casReply(reply, () => true, () => false);
      if (step !== 'retry' && step.done) {
        // the hints live in other Cluster slots: separate commands
        await this.c.redis.hdel(...keys.tokenValue(tokenHash(current.token)));
        await this.c.redis.hdel(...keys.tokenId(id));
        await this.c.replicated();
      }
      return step;
    });
  }

  async securedStreams(accountId: string): Promise<SecuredStream[]> {
    const all = await this.c.redis.hgetall(keys.secured(accountId));
    const out: SecuredStream[] = [];
    for (const [field, value] of Object.entries(all)) out.push(...securedEntries(field.slice(2), field.startsWith('r:'), value));
    return out.sort(bySecuredName);
  }

  async removeSecuredStream(accountId: string, streamName: string, audit?: AuditSealer<SecuredStream[]>): Promise<SecuredStream[]> {
    const fields = [keys.securedField(streamName, false), keys.securedField(streamName, true)] as const;
    const [, exact, regex] = (await compareAndSet(`secured streams of ${accountId}`, MAX_CAS_ATTEMPTS, async () => {
      // sealed on the entries read: the script removes them only if they are still those
      let sealed = await sealFor(this.c, accountId, undefined, null, null);
      let read = '';
      if (audit !== undefined) {
        const [e, r] = await this.c.redis.hmget(keys.secured(accountId), ...fields);
        const seen = [...securedEntries(streamName, false, e), ...securedEntries(streamName, true, r)].sort(bySecuredName);
        if (seen.length > 0) sealed = await sealFor(this.c, accountId, audit, seen, null);
        read = `${e ?? ''}\n${r ?? ''}`;
      }
      const reply = await this.c.run('securedRemove', keys.secured(accountId), keys.version(accountId), ...sealed.keys, ...fields, ...sealed.argv, read);
      return auditMoved(reply) ? 'retry' : { done: reply };
    })) as [number, string | null, string | null];
    const out = [...securedEntries(streamName, false, exact), ...securedEntries(streamName, true, regex)].sort(bySecuredName);
    if (out.length > 0) await this.c.replicated();
    return out;
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | null> {
    const ref = await this.c.redis.hget(...keys.tokenValue(hash));
    if (!ref) return null;
    const i = ref.lastIndexOf(':');
    const t = await this.#readToken(ref.slice(0, i), Number(ref.slice(i + 1)));
    return t && tokenHash(t.token) === hash ? t : null;
  }

  async findTokenById(id: number): Promise<TokenRecord | null> {
    const accountId = await this.c.redis.hget(...keys.tokenId(id));
    if (!accountId) return null;
    const t = await this.#readToken(accountId, id);
    return t && t.accountId === accountId ? t : null;
  }

  async securingTokens(accountId: string): Promise<TokenRecord[]> {
    // The set holds every viewer-rule token (securing, or restricting viewer countries).
    const ids = (await this.c.redis.smembers(keys.securing(accountId))).map(Number).sort((a, b) => a - b);
    // One pipeline, not a round trip per token: an account may have thousands (seen in the benchmark).
    return (await readTokens(this.c, accountId, ids)).filter(securesViewing);
  }

  async viewerRuleTokens(accountId: string): Promise<TokenRecord[]> {
    const ids = (await this.c.redis.smembers(keys.securing(accountId))).map(Number).sort((a, b) => a - b);
    return (await readTokens(this.c, accountId, ids)).filter(setsViewerRules);
  }
}
