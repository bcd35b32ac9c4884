// Accounts on Redis: a hash per account in its slot, the account list, secret hints verified on
// read, and the account version (held current by the version watch, or read and shared).
import { randomUUID } from 'node:crypto';
import type { Account, AccountGeoCascade, AccountPatch, AccountStore, SharingSettings } from '../accounts.js';
import { keys } from './keys.js';
import { AccountExists, AccountNameTaken, StoreConflict } from '../../errors.js';
import { accountNameKey } from '../../domain/store-rules.js';
import { Reply, auditMoved, codeOf, unexpectedReply } from './codes.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';
import { upgradeAccountNames } from './upgrade.js';
import type { AuditSealer } from '../../domain/audit.js';
import { compareAndSet } from '../failures.js';
import { readHead, sealFor } from './audit.js';

/**
 * How long a create or rename may take from claiming the name to confirming it: meanwhile other
 * accounts are refused the name; past it, the name's other accounts are judged by their records
 * (docs/architecture.md#account-names).
 */
export const NAME_TAKING_MS = 30_000;

/** A name's claim as lua/includes/account-name.lua keeps it. */
interface NameClaim {
  n: string;
  h?: string[];
  p?: string;
  u?: number;
}

function accountFrom(h: Record<string, string>): Account | null {
  if (!h.id) return null;
  const a: Account = { id: h.id, name: h.name, createdOn: h.createdOn, secureViewer: h.secureViewer === '1' };
  if (h.secretHash) a.secretHash = h.secretHash;
  // viewer country defaults: comma-separated codes, absent or '' when none
  if (h.allowedCountries) a.allowedCountries = h.allowedCountries.split(',');
  if (h.deniedCountries) a.deniedCountries = h.deniedCountries.split(',');
  // the distribution settings (docs/api.md#clusters): absent or '' when never set
  if (h.defaultCluster) a.defaultCluster = h.defaultCluster;
  if (h.geoCascade) a.geoCascade = JSON.parse(h.geoCascade) as AccountGeoCascade;
  // absent (accounts written before the setting existed) or '1': on
  if (h.ipRulesOnRtmp === '0') a.ipRulesOnRtmp = false;
  // the sharing policy's JSON: absent or '' when never set, or removed
  if (h.sharing) a.sharing = JSON.parse(h.sharing) as SharingSettings;
  return a;
}

export class RedisAccounts implements AccountStore {
  constructor(private readonly c: RedisConnection) {}

  /** The name claims of accounts of earlier builds, made once per process before the first name write. */
  #namesClaimed: Promise<void> | undefined;

  #claimsReady(): Promise<void> {
    this.#namesClaimed ??= upgradeAccountNames(this.c).catch((e: unknown) => {
      this.#namesClaimed = undefined;
      throw e;
    });
    return this.#namesClaimed;
  }

  /**
   * Marks `id` as taking `name` (docs/architecture.md#account-names), or rejects with
   * AccountNameTaken naming the account that has it. `keeping`: the account's record has a name of
   * this key already (it may keep it even where another account shares it). A claim whose other
   * accounts no longer have the name (renamed since, or a taking that never wrote its record) is
   * taken over, if no one changed it since it was read.
   */
  async #claimName(id: string, name: string, keeping: boolean): Promise<void> {
    await this.#claimsReady();
    const nameKey = accountNameKey(name);
    let stale = '';
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const now = this.c.now();
      const reply = await this.c.run('accountNameClaim', keys.accountName(nameKey), id, randomUUID(), now, now + NAME_TAKING_MS, stale, keeping ? '1' : '0');
      if (codeOf(reply) === Reply.DONE) return;
      if (codeOf(reply) !== Reply.EXISTS) throw unexpectedReply('account-name-claim', reply);
      const claim = JSON.parse((reply as [number, string])[1]) as NameClaim;
      // another account taking the name within its deadline has it
      if (claim.p !== undefined && (claim.u ?? 0) > now) throw new AccountNameTaken(name, claim.p);
      const others = [...(Array.isArray(claim.h) ? claim.h : []), ...(claim.p !== undefined ? [claim.p] : [])].filter((other) => other !== id);
      for (const other of others) {
        const otherName = await this.c.redis.hget(keys.account(other), 'name');
        if (otherName !== null && accountNameKey(otherName) === nameKey) throw new AccountNameTaken(name, other);
      }
      stale = claim.n;
    }
    throw new StoreConflict(`account name claim for ${id}`, MAX_CAS_ATTEMPTS);
  }

  /** The record of `id` is written with `name`: false when another account took the name meanwhile. */
  async #confirmName(id: string, name: string): Promise<boolean> {
    const reply = await this.c.run('accountNameConfirm', keys.accountName(accountNameKey(name)), id, randomUUID());
    if (codeOf(reply) === Reply.DONE) return true;
    if (codeOf(reply) === Reply.MOVED) return false;
    throw unexpectedReply('account-name-confirm', reply);
  }

  /** `id` wrote no record with `name` after all. */
  async #releaseName(id: string, name: string): Promise<void> {
    await this.c.run('accountNameRelease', keys.accountName(accountNameKey(name)), id, randomUUID());
  }

  /**
   * The name is claimed first (docs/architecture.md#account-names), then the account's record and
   * version in one script, then the claim confirmed. The other keys outside its slot come before the
   * record: the list entry and the secret hint are verified against the record on read, so a crash
   * between them and the record leaves nothing a reader believes.
   */
  async createAccount(a: Account, audit?: AuditSealer<Account>): Promise<Account> {
    await this.#claimName(a.id, a.name, false);
    try {
      await this.#writeAccount(a, audit);
    } catch (e) {
      await this.#releaseName(a.id, a.name).catch(() => undefined);
      throw e;
    }
    if (!(await this.#confirmName(a.id, a.name))) {
      // taken by another account after this one's deadline: the account is taken back, and the
      // chain its create began goes with it (the account never was)
      await this.c.redis.del(keys.account(a.id), keys.auditLog(a.id), keys.auditHead(a.id));
      await this.c.redis.zrem(keys.accountList, a.id);
      if (a.secretHash) await this.c.redis.del(keys.secret(a.secretHash));
      throw new AccountNameTaken(a.name);
    }
    await this.c.replicated();
    return { ...a };
  }

  async #writeAccount(a: Account, audit: AuditSealer<Account> | undefined): Promise<void> {
    if (a.secretHash) await this.c.redis.set(keys.secret(a.secretHash), a.id);
    await this.c.redis.zadd(keys.accountList, 'NX', Date.parse(a.createdOn), a.id);
    await this.c.redis.set(keys.bootstrap, a.id, 'NX');
    const fields = [
      ['id', a.id],
      ['name', a.name],
      ['createdOn', a.createdOn],
      ['secureViewer', a.secureViewer ? '1' : '0'],
      ['allowedCountries', (a.allowedCountries ?? []).join(',')],
      ['deniedCountries', (a.deniedCountries ?? []).join(',')],
      ...(a.defaultCluster ? [['defaultCluster', a.defaultCluster]] : []),
      ...(a.geoCascade ? [['geoCascade', JSON.stringify(a.geoCascade)]] : []),
      ...(a.ipRulesOnRtmp === false ? [['ipRulesOnRtmp', '0']] : []),
      ...(a.sharing ? [['sharing', JSON.stringify(a.sharing)]] : []),
      ...(a.secretHash ? [['secretHash', a.secretHash]] : []),
    ].flat();
    const r = await compareAndSet(`account ${a.id}`, MAX_CAS_ATTEMPTS, async () => {
      const sealed = await sealFor(this.c, a.id, audit, null, { ...a });
      const reply = await this.c.run('accountCreate', keys.account(a.id), keys.version(a.id), ...sealed.keys, ...sealed.argv, ...fields);
      return auditMoved(reply) ? 'retry' : { done: codeOf(reply) };
    });
    if (r === Reply.EXISTS) {
      if (a.secretHash) await this.c.redis.del(keys.secret(a.secretHash));
      throw new AccountExists(a.id);
    }
  }

  async createFirstAccount(a: Account, audit?: AuditSealer<Account>): Promise<boolean> {
    // The bootstrap marker is set by every account creation: NX wins only on an empty store.
    const won = await this.c.redis.set(keys.bootstrap, a.id, 'NX');
    if (won !== 'OK') return false;
    await this.createAccount(a, audit);
    return true;
  }

  async getAccount(id: string): Promise<Account | null> {
    return accountFrom(await this.c.redis.hgetall(keys.account(id)));
  }

  async listAccounts(): Promise<Account[]> {
    const ids = await this.c.redis.zrange(keys.accountList, 0, -1);
    const all = await Promise.all(ids.map((id) => this.getAccount(id)));
    return all.filter((a): a is Account => a !== null);
  }

  /**
   * One script: the fields set, the version moved and the record read back, with the change's
   * entry when sealed. The head is read before the record (the `before` of the entry): a sealed
   * write of the account in between moves the head, the script refuses, and the attempt reads both
   * again, so the entry's diff is always taken from the record the change replaced.
   */
  async #update(id: string, fields: string[], audit: AuditSealer<Account> | undefined): Promise<unknown> {
    return compareAndSet(`account ${id}`, MAX_CAS_ATTEMPTS, async () => {
      let sealed = await sealFor(this.c, id, undefined, null, null);
      if (audit !== undefined) {
        const head = await readHead(this.c, id);
        const h = await this.c.redis.hgetall(keys.account(id));
        const before = accountFrom(h);
        const next: Record<string, string> = Object.assign({}, h);
        for (let i = 0; i < fields.length; i += 2) next[fields[i]] = fields[i + 1];
        if (before !== null) sealed = await sealFor(this.c, id, audit, before, accountFrom(next), head);
      }
      const reply = await this.c.run('accountUpdate', keys.account(id), keys.version(id), ...sealed.keys, ...sealed.argv, ...fields);
      return auditMoved(reply) ? 'retry' : { done: reply };
    });
  }

  async updateAccount(id: string, patch: AccountPatch, audit?: AuditSealer<Account>): Promise<Account | null> {
    const fields: string[] = [];
    if (patch.secureViewer !== undefined) fields.push('secureViewer', patch.secureViewer ? '1' : '0');
    if (patch.name !== undefined) fields.push('name', patch.name);
    if (patch.allowedCountries !== undefined) fields.push('allowedCountries', patch.allowedCountries.join(','));
    if (patch.deniedCountries !== undefined) fields.push('deniedCountries', patch.deniedCountries.join(','));
    if (patch.defaultCluster !== undefined) fields.push('defaultCluster', patch.defaultCluster);
    if (patch.geoCascade !== undefined) fields.push('geoCascade', JSON.stringify(patch.geoCascade));
    if (patch.ipRulesOnRtmp !== undefined) fields.push('ipRulesOnRtmp', patch.ipRulesOnRtmp ? '1' : '0');
    if (patch.sharing !== undefined) fields.push('sharing', patch.sharing === null ? '' : JSON.stringify(patch.sharing));
    // a rename claims the name first, as a create does (its own name's claim holds it already)
    const renamedFrom = patch.name === undefined ? null : await this.c.redis.hget(keys.account(id), 'name');
    if (patch.name !== undefined) {
      if (renamedFrom === null) return null;
      await this.#claimName(id, patch.name, accountNameKey(renamedFrom) === accountNameKey(patch.name));
    }
    // one script: the change, the version and the record read back (no other writer in between)
    let reply: unknown;
    try {
      reply = await this.#update(id, fields, audit);
    } catch (e) {
      if (patch.name !== undefined) await this.#releaseName(id, patch.name).catch(() => undefined);
      throw e;
    }
    if (codeOf(reply) === Reply.GONE) {
      if (patch.name !== undefined) await this.#releaseName(id, patch.name);
      return null;
    }
    if (patch.name !== undefined && renamedFrom !== null && !(await this.#confirmName(id, patch.name))) {
      // taken by another account after this one's deadline: the name the account had is put back
      await this.#update(id, ['name', renamedFrom], audit);
      throw new AccountNameTaken(patch.name);
    }
    if (fields.length > 0) await this.c.replicated();
    // {DONE, field, value, ...}
    const flat = reply as string[];
    const h: Record<string, string> = {};
    for (let i = 1; i < flat.length; i += 2) h[flat[i]] = flat[i + 1];
    return accountFrom(h);
  }

  async setAccountSecret(id: string, secretHash: string | null, expected?: string, audit?: AuditSealer<Account>): Promise<boolean> {
    // the hint first (it is verified against the account on read), then the account itself in one
    // script that answers the hash it replaced, whose hint goes; of two racing rotations with the
    // same expected hash exactly one wins, and an unconditional one never needs another attempt
    if (secretHash) await this.c.redis.set(keys.secret(secretHash), id);
    const reply = await compareAndSet(`account ${id}`, MAX_CAS_ATTEMPTS, async () => {
      // the head before the record, as in #update
      const head = audit === undefined ? null : await readHead(this.c, id);
      const before = audit === undefined ? null : await this.getAccount(id);
      const after = before === null ? null : Object.assign({}, before, { secretHash: secretHash ?? undefined });
      if (after !== null && secretHash === null) delete after.secretHash;
      const sealed = await sealFor(this.c, id, before === null ? undefined : audit, before, after, head);
      const r = await this.c.run('secretSet', keys.account(id), ...sealed.keys, expected !== undefined ? '1' : '0', expected ?? '', secretHash ?? '', ...sealed.argv);
      return auditMoved(r) ? 'retry' : { done: r };
    });
    if (codeOf(reply) !== Reply.DONE) {
      if (secretHash) await this.c.redis.del(keys.secret(secretHash));
      return false;
    }
    const previous = (reply as [number, string])[1];
    if (previous && previous !== secretHash) await this.c.redis.del(keys.secret(previous));
    await this.c.replicated();
    return true;
  }

  async findAccountBySecretHash(secretHash: string): Promise<Account | null> {
    const id = await this.c.redis.get(keys.secret(secretHash));
    if (!id) return null;
    const a = await this.getAccount(id);
    return a && a.secretHash === secretHash ? a : null;
  }

  /** From the watch, while it vouches for the version (docs/decision-path.md#watched-account-versions). */
  accountVersionKnown(accountId: string): number | undefined {
    return this.c.watch?.current(accountId);
  }

  /**
   * From the watch when it vouches for the version, else read: concurrent decisions of one account
   * share the read in flight (one round trip for all of them instead of one each;
   * docs/performance.md). A decision joins only a read sent while no write of this instance was
   * acknowledged since (writes forget the shared reads); a write made on another instance is seen
   * by the next read sent after it, at most one round trip later than with a read of its own.
   */
  accountVersion(accountId: string): Promise<number> {
    const known = this.c.watch?.current(accountId);
    if (known !== undefined) return Promise.resolve(known);
    const running = this.c.versionReads.get(accountId);
    if (running !== undefined) return running;
    const epoch = this.c.watch?.begin() ?? -1;
    const read = this.c.redis.get(keys.version(accountId)).then((v) => {
      const ver = Number(v ?? 0);
      this.c.watch?.remember(accountId, ver, epoch);
      return ver;
    });
    this.c.versionReads.set(accountId, read);
    const done = () => {
      if (this.c.versionReads.get(accountId) === read) this.c.versionReads.delete(accountId);
    };
    read.then(done, done);
    return read;
  }
}
