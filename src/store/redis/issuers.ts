// Credential issuers on Redis: a string per issuer "<rev>:<json>" and the account's id index in
// its slot, and per `iss` a deployment-wide claims key in a slot of its own
// (docs/architecture.md#issuer-claims): every write of an issuer takes its (iss, key ids) there
// first, writes the record, then confirms, each step one script, so of overlapping writes on any
// instance at most one gets through, and a crash between steps leaves at worst an entry that a later
// write finds stale against its record and repairs.
import { randomUUID } from 'node:crypto';
import type { IssuerRecord } from '../../domain/issuers.js';
import { issuerIndexKey, issuerOverlap, issuerRecordKey, patchedIssuer } from '../../domain/store-rules.js';
import { copyWith } from '../../domain/objects.js';
import { IssuerChanged, IssuerConflict, StoreConflict } from '../../errors.js';
import type { IssuerPatch, IssuerStore, NewIssuer } from '../issuers.js';
import { compareAndSet } from '../failures.js';
import { keys } from './keys.js';
import { Reply, auditMoved, casReply, codeOf, unexpectedReply } from './codes.js';
import type { AuditSealer } from '../../domain/audit.js';
import { sealFor } from './audit.js';
import { MAX_CAS_ATTEMPTS, type RedisConnection } from './connection.js';

/**
 * How long a write may take from taking an (iss, key ids) to confirming it: meanwhile other writes
 * overlapping it are refused; past it, the record decides (docs/architecture.md#issuer-claims).
 */
export const ISSUER_TAKING_MS = 30_000;

/** An entry of an iss's claims as lua/includes/issuer-claims.lua keeps it. */
interface ClaimEntry {
  a: string;
  i: string;
  /** Lua's cjson writes an empty list as {}. */
  k: string[] | Record<string, never>;
  r?: number;
  w?: string;
  u?: number;
}

interface Claims {
  n?: string;
  e?: ClaimEntry[] | Record<string, never>;
}

const entriesOf = (raw: string | null): ClaimEntry[] => {
  if (raw === null) return [];
  const c = JSON.parse(raw) as Claims;
  return Array.isArray(c.e) ? c.e : [];
};
const kidsOf = (e: ClaimEntry): string[] => (Array.isArray(e.k) ? e.k : []);

/** The record as kept: "<rev>:<json>", the JSON without the rev. */
function encodeIssuer(r: IssuerRecord): string {
  const { rev: _rev, ...rest } = r;
  return JSON.stringify(rest);
}

function decodeIssuer(accountId: string, id: number, raw: string | null | undefined): IssuerRecord | null {
  if (raw === null || raw === undefined) return null;
  const cut = raw.indexOf(':');
  const r = JSON.parse(raw.slice(cut + 1)) as Omit<IssuerRecord, 'rev'>;
  if (r.accountId !== accountId || r.id !== id) return null;
  // fields a record written by an earlier build lacks: a JWT issuer's (no settings, no keys read from elsewhere)
  return Object.assign({ settings: null, signingKey: null, secretFrom: null, signingKeyFrom: null }, r, { rev: Number(raw.slice(0, cut)) });
}

type Mine = Pick<IssuerRecord, 'id' | 'accountId' | 'issuer' | 'keyIds' | 'type'>;

export class RedisIssuers implements IssuerStore {
  constructor(private readonly c: RedisConnection) {}

  async #read(accountId: string, id: number): Promise<IssuerRecord | null> {
    return decodeIssuer(accountId, id, await this.c.redis.get(keys.issuer(accountId, id)));
  }

  /**
   * Takes `mine`'s (iss, key ids) for the write named `writer`, or rejects with IssuerConflict. An
   * overlapping entry of another issuer refuses it when it is a taking within its deadline, or when
   * its record overlaps `mine`; an entry whose record does not (deleted, changed since, or a write
   * that never wrote it) is dropped by the next claim, if the claims are still the ones read.
   */
  async #claim(mine: Mine, writer: string): Promise<void> {
    const key = keys.issuerClaims(issuerRecordKey(mine));
    let seen = '';
    let stale: number[] = [];
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const now = this.c.now();
      const reply = await this.c.run(
        'issuerClaim',
        key,
        mine.accountId,
        String(mine.id),
        JSON.stringify(mine.keyIds),
        writer,
        randomUUID(),
        now,
        now + ISSUER_TAKING_MS,
        seen,
        JSON.stringify(stale),
      );
      if (codeOf(reply) === Reply.DONE) return;
      if (codeOf(reply) !== Reply.EXISTS) throw unexpectedReply('issuer-claim', reply);
      const raw = (reply as [number, string])[1];
      stale = [];
      const entries = entriesOf(raw);
      for (const [n, e] of entries.entries()) {
        const claimed = { id: Number(e.i), accountId: e.a, issuer: mine.issuer, keyIds: kidsOf(e), type: mine.type };
        const hit = issuerOverlap(mine, [claimed]);
        if (!hit) continue;
        if (e.w !== undefined && (e.u ?? 0) > now) throw new IssuerConflict(mine.issuer, hit.keyIds, e.a === mine.accountId);
        const record = await this.#read(e.a, Number(e.i));
        const held = record && issuerRecordKey(record) === issuerRecordKey(mine) ? issuerOverlap(mine, [record]) : undefined;
        if (held) throw new IssuerConflict(mine.issuer, held.keyIds, e.a === mine.accountId);
        stale.push(n + 1);
      }
      seen = (JSON.parse(raw) as Claims).n ?? '';
    }
    throw new StoreConflict(`issuer claim for ${mine.accountId}:${mine.id}`, MAX_CAS_ATTEMPTS);
  }

  /** The record of `writer` is written at `rev`: false when its taking was taken over meanwhile. */
  async #confirm(mine: Mine, writer: string, rev: number): Promise<boolean> {
    const reply = await this.c.run('issuerConfirm', keys.issuerClaims(issuerRecordKey(mine)), mine.accountId, String(mine.id), writer, rev, randomUUID(), this.c.now());
    if (codeOf(reply) === Reply.DONE) return true;
    if (codeOf(reply) === Reply.MOVED) return false;
    throw unexpectedReply('issuer-confirm', reply);
  }

  /** Lets go of an index key (issuerRecordKey) for the issuer: `writer`'s taking ('*': every one), and its holdings below `below`. */
  async #release(accountId: string, id: number, indexKey: string, writer: string, below: number): Promise<void> {
    await this.c.run('issuerRelease', keys.issuerClaims(indexKey), accountId, String(id), writer, below, randomUUID());
  }

  /** The issuer record removed if still at `rev`, with the removal's entry when sealed (a delete, or a create taken back). */
  async #delete(accountId: string, id: number, current: IssuerRecord, audit: AuditSealer<IssuerRecord> | undefined): Promise<unknown> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const sealed = await sealFor(this.c, accountId, audit, current, null);
      const reply = await this.c.run('issuerDelete', keys.issuer(accountId, id), keys.issuers(accountId), keys.version(accountId), ...sealed.keys, current.rev, id, ...sealed.argv);
      if (!auditMoved(reply)) return reply;
    }
    throw new StoreConflict(`issuer ${id}`, MAX_CAS_ATTEMPTS);
  }

  /** The record set to `next` if still at `from.rev`, with the change's entry when sealed. */
  async #write(accountId: string, id: number, from: IssuerRecord, next: IssuerRecord, audit: AuditSealer<IssuerRecord> | undefined): Promise<unknown> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const sealed = await sealFor(this.c, accountId, audit, from, next);
      const reply = await this.c.run('issuerUpdate', keys.issuer(accountId, id), keys.version(accountId), ...sealed.keys, from.rev, encodeIssuer(next), ...sealed.argv);
      if (!auditMoved(reply)) return reply;
    }
    throw new StoreConflict(`issuer ${id}`, MAX_CAS_ATTEMPTS);
  }

  async createIssuer(accountId: string, fields: NewIssuer, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord> {
    const id = await this.c.redis.incr(keys.issuerSeq);
    const at = new Date(this.c.now()).toISOString();
    const record: IssuerRecord = copyWith(fields, { id, accountId, addedOn: at, updatedOn: at, rev: 1 });
    const writer = randomUUID();
    await this.#claim(record, writer);
    try {
      const reply = await compareAndSet(`issuer ${id}`, MAX_CAS_ATTEMPTS, async () => {
        const sealed = await sealFor(this.c, accountId, audit, null, record);
        const r = await this.c.run('issuerCreate', keys.issuer(accountId, id), keys.issuers(accountId), keys.version(accountId), ...sealed.keys, encodeIssuer(record), id, ...sealed.argv);
        return auditMoved(r) ? 'retry' : { done: r };
      });
      if (codeOf(reply) !== Reply.DONE) throw new Error(`issuer id ${id} already taken (sequence reset?)`);
    } catch (e) {
      await this.#release(accountId, id, issuerRecordKey(record), writer, 0).catch(() => undefined);
      throw e;
    }
    if (!(await this.#confirm(record, writer, 1))) {
      // taken by another write after this one's deadline: the issuer is taken back (its own entry)
      await this.#delete(accountId, id, record, audit);
      throw new IssuerConflict(record.issuer, record.keyIds, false);
    }
    await this.c.replicated();
    return record;
  }

  async getIssuer(accountId: string, id: number): Promise<IssuerRecord | null> {
    return this.#read(accountId, id);
  }

  async listIssuers(accountId: string): Promise<IssuerRecord[]> {
    const ids = (await this.c.redis.zrange(keys.issuers(accountId), 0, -1)).map(Number);
    if (ids.length === 0) return [];
    // one command: the records share the account's slot
    const raws = await this.c.redis.mget(...ids.map((id) => keys.issuer(accountId, id)));
    return ids.map((id, n) => decodeIssuer(accountId, id, raws[n])).filter((r): r is IssuerRecord => r !== null);
  }

  /**
   * Each attempt takes the (iss, key ids) the patched record would have, then writes it if the
   * record is still at the rev read. The takings of attempts that wrote nothing are let go of; on
   * success, the holdings of earlier revisions too, on the iss it had when it moved to another.
   */
  async updateIssuer(accountId: string, id: number, patch: IssuerPatch, expectedRev?: number, audit?: AuditSealer<IssuerRecord>): Promise<IssuerRecord | null> {
    const writer = randomUUID();
    const taken = new Set<string>();
    let written: { current: IssuerRecord; next: IssuerRecord } | undefined;
    try {
      const out = await compareAndSet(`issuer ${id}`, MAX_CAS_ATTEMPTS, async () => {
        const current = await this.#read(accountId, id);
        if (!current) return { done: null };
        if (expectedRev !== undefined && current.rev !== expectedRev) throw new IssuerChanged(id, current.rev);
        const next = patchedIssuer(current, patch, new Date(this.c.now()).toISOString());
        taken.add(issuerRecordKey(next));
        await this.#claim(next, writer);
        const sealed = await sealFor(this.c, accountId, audit, current, next);
        const reply = await this.c.run('issuerUpdate', keys.issuer(accountId, id), keys.version(accountId), ...sealed.keys, current.rev, encodeIssuer(next), ...sealed.argv);
        if (auditMoved(reply)) return 'retry';
        const step = casReply<IssuerRecord | null>(reply, () => next, () => null);
        if (step !== 'retry' && step.done) written = { current, next };
        return step;
      });
      if (!written) return out;
      const { current, next } = written;
      if (!(await this.#confirm(next, writer, next.rev))) {
        // taken by another write after this one's deadline: the record is put back as it was (its own entry)
        await this.#write(accountId, id, next, copyWith(current, { rev: next.rev + 1 }), audit);
        throw new IssuerConflict(next.issuer, next.keyIds, false);
      }
      taken.delete(issuerRecordKey(next));
      if (issuerRecordKey(current) !== issuerRecordKey(next)) await this.#release(accountId, id, issuerRecordKey(current), '', next.rev);
      await this.c.replicated();
      return out;
    } finally {
      for (const key of taken) await this.#release(accountId, id, key, writer, 0).catch(() => undefined);
    }
  }

  async deleteIssuer(accountId: string, id: number, audit?: AuditSealer<IssuerRecord>): Promise<boolean> {
    const gone = await compareAndSet(`issuer ${id}`, MAX_CAS_ATTEMPTS, async () => {
      const current = await this.#read(accountId, id);
      if (!current) return { done: null };
      const sealed = await sealFor(this.c, accountId, audit, current, null);
      const reply = await this.c.run('issuerDelete', keys.issuer(accountId, id), keys.issuers(accountId), keys.version(accountId), ...sealed.keys, current.rev, id, ...sealed.argv);
      if (auditMoved(reply)) return 'retry';
      return casReply<IssuerRecord | null>(reply, () => current, () => null);
    });
    if (!gone) return false;
    // the record first, then its claims: a crash between leaves an entry whose record is gone
    await this.#release(accountId, id, issuerRecordKey(gone), '*', gone.rev + 1);
    await this.c.replicated();
    return true;
  }

  async issuersOf(iss: string | null): Promise<IssuerRecord[]> {
    const entries = entriesOf(await this.c.redis.get(keys.issuerClaims(issuerIndexKey(iss))));
    const refs = new Map<string, { a: string; id: number }>();
    for (const e of entries) refs.set(`${e.a}\n${e.i}`, { a: e.a, id: Number(e.i) });
    // the records decide: an entry may name a record that has another iss now, or none
    const records = await Promise.all([...refs.values()].map((r) => this.#read(r.a, r.id)));
    return records.filter((r): r is IssuerRecord => r !== null && r.type === 'jwt' && r.issuer === iss).sort((x, y) => x.id - y.id);
  }
}
