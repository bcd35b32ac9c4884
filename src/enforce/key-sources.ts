// Keys a signed-URL issuer takes from outside the store (docs/api.md#keys-from-files-and-the-environment):
// a record naming `secretFrom` or `signingKeyFrom` ("env:NAME" or "file:name") holds no key; the
// key is read from an environment variable or a file the operator provides for the record's
// account, kept in memory, read again in the background every `reloadSeconds` (a rotated file is
// taken without a restart), and never logged, answered or stored.
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { parseKeyRef, type IssuerRecord } from '../domain/issuers.js';
import type { Config } from '../config/schema.js';

/** The most a key file may hold (bytes): a PEM private key is a few KiB. */
export const MAX_KEY_FILE_BYTES = 65_536;

/**
 * Config `issuers` as loaded (keyDir: the directory of key files, one subdirectory per account id,
 * '' refuses file references; keyEnvPrefix: the prefix of key variables, then the account id, `_`
 * and the name, '' refuses env references; keyReloadSeconds: how old a key read may get before it
 * is read again in the background), with the environment (default process.env) and a clock
 * (default Date.now).
 */
export type KeySourceOptions = Pick<Config['issuers'], 'keyDir' | 'keyEnvPrefix' | 'keyReloadSeconds'> & {
  env?: NodeJS.ProcessEnv;
  now?: () => number;
};

/** A key as read: its value, or why there is none (for the operator: it never holds the value). */
export type KeyRead = { value: string } | { problem: string };

interface Held {
  read: KeyRead;
  /** When the read started (ms), and its place among reads. */
  at: number;
  seq: number;
  /** A background read under way. */
  refreshing?: Promise<void>;
}

/** Issuer records with their keys filled in, by account, id and rev, with the reads they were made from. */
const MAX_RESOLVED = 5000;
/** Key references whose value is held. */
const MAX_HELD = 10_000;

export class KeySources {
  private readonly held: LRUCache<string, Held>;
  private readonly resolved: LRUCache<string, { secret: KeyRead | null; signing: KeyRead | null; record: IssuerRecord }>;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;
  private readonly listeners: Array<() => void> = [];
  /** Moves whenever a key read again differs from the one held. */
  generation = 0;
  private seq = 0;

  constructor(private readonly opts: KeySourceOptions) {
    this.held = new LRUCache({ max: MAX_HELD });
    this.resolved = new LRUCache({ max: MAX_RESOLVED });
    this.env = opts.env ?? process.env;
    this.now = opts.now ?? Date.now;
  }

  /** Called when a key changed (a rotated file): whatever was verified with the old one is forgotten. */
  onChange(f: () => void): void {
    this.listeners.push(f);
  }

  /**
   * Where `ref` of account `accountId` is read from (the variable's name or the file's path), or
   * what makes it unusable here: its syntax, or a source the configuration does not enable.
   */
  locate(accountId: string, ref: string): { where: string; source: 'env' | 'file' } | { problem: string } {
    const r = parseKeyRef(ref);
    if ('problem' in r) return r;
    if (r.source === 'env') {
      if (this.opts.keyEnvPrefix === '') return { problem: 'environment key references are off (issuers.keyEnvPrefix is empty)' };
      // letters and digits only: the first _ after the prefix ends the account id, so no two accounts' names meet
      if (!/^[A-Za-z0-9]+$/.test(accountId)) return { problem: `account id ${accountId} holds characters other than letters and digits: use a file reference` };
      return { source: 'env', where: `${this.opts.keyEnvPrefix}${accountId}_${r.name}` };
    }
    if (this.opts.keyDir === '') return { problem: 'key files are off (issuers.keyDir is not set)' };
    if (!/^[A-Za-z0-9_-]+$/.test(accountId)) return { problem: `account id ${accountId} cannot name a directory` };
    return { source: 'file', where: path.join(this.opts.keyDir, accountId, r.name) };
  }

  /** Reads `ref` now without keeping it (a write checks the key it names; what it reads never replaces a held read). */
  check(accountId: string, ref: string): Promise<KeyRead> {
    return this.load(accountId, ref);
  }

  /**
   * Reads `ref` now and holds what it read, unless a read started later is held already (reads
   * that finish out of order never bring an older key back); a read that differs from the held one
   * is announced.
   */
  private async read(accountId: string, ref: string): Promise<KeyRead> {
    const k = `${accountId}\n${ref}`;
    const seq = ++this.seq;
    const at = this.now();
    const read = await this.load(accountId, ref);
    const before = this.held.get(k);
    if (before !== undefined && before.seq > seq) return before.read;
    this.held.set(k, { read, at, seq });
    if (before !== undefined && !sameRead(before.read, read)) this.changed();
    return read;
  }

  /**
   * The record with the keys its references name filled in (`secret`, `signingKey`; null where one
   * cannot be read, which verifies and signs nothing), from memory when held; a record naming no
   * reference as it is. A key held longer than keyReloadSeconds is read again in the background;
   * one held twice as long (an issuer nobody used meanwhile) is read again before it is used.
   */
  resolve(i: IssuerRecord): IssuerRecord | Promise<IssuerRecord> {
    if (i.secretFrom === null && i.signingKeyFrom === null) return i;
    const rk = `${i.accountId}:${i.id}:${i.rev}`;
    const secret = i.secretFrom !== null ? this.peek(i.accountId, i.secretFrom) : null;
    const signing = i.signingKeyFrom !== null ? this.peek(i.accountId, i.signingKeyFrom) : null;
    if (secret !== undefined && signing !== undefined) {
      // the record made from exactly these reads: any read held since (a rotation, a read after eviction) makes another
      const hit = this.resolved.get(rk);
      if (hit !== undefined && hit.secret === secret && hit.signing === signing) return hit.record;
      return this.fill(rk, i, secret, signing);
    }
    return (async () => {
      const s = i.secretFrom !== null ? await this.read(i.accountId, i.secretFrom) : null;
      const p = i.signingKeyFrom !== null ? await this.read(i.accountId, i.signingKeyFrom) : null;
      return this.fill(rk, i, s, p);
    })();
  }

  /** The held read of `ref`, starting a background read when it is old; undefined when never read, or too old to use. */
  private peek(accountId: string, ref: string): KeyRead | undefined {
    const k = `${accountId}\n${ref}`;
    const h = this.held.get(k);
    if (h === undefined) return undefined;
    const age = this.now() - h.at;
    const reload = this.opts.keyReloadSeconds * 1000;
    if (age >= 2 * reload) return undefined;
    if (h.refreshing === undefined && age >= reload) {
      h.refreshing = this.read(accountId, ref).then(
        () => undefined,
        () => undefined,
      );
    }
    return h.read;
  }

  private fill(rk: string, i: IssuerRecord, secret: KeyRead | null, signing: KeyRead | null): IssuerRecord {
    const value = (r: KeyRead | null, own: string | null) => (r === null ? own : 'value' in r ? r.value : null);
    const record: IssuerRecord = Object.assign({}, i, { secret: value(secret, i.secret), signingKey: value(signing, i.signingKey) });
    this.resolved.set(rk, { secret, signing, record });
    return record;
  }

  private async load(accountId: string, ref: string): Promise<KeyRead> {
    const at = this.locate(accountId, ref);
    if ('problem' in at) return at;
    if (at.source === 'env') {
      const v = this.env[at.where];
      if (v === undefined || v.trim() === '') return { problem: `environment variable ${at.where} is not set` };
      return { value: v.trim() };
    }
    let fh: fs.FileHandle | undefined;
    try {
      // stat first: a FIFO or device in the directory is never opened (a read of one could wait for ever)
      const st = await fs.stat(at.where);
      if (!st.isFile()) return { problem: `${at.where} is not a file` };
      if (st.size > MAX_KEY_FILE_BYTES) return { problem: `${at.where} holds more than ${MAX_KEY_FILE_BYTES} bytes` };
      fh = await fs.open(at.where, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      const buf = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      if (bytesRead > MAX_KEY_FILE_BYTES) return { problem: `${at.where} holds more than ${MAX_KEY_FILE_BYTES} bytes` };
      const v = buf.subarray(0, bytesRead).toString('utf8').trim();
      if (v === '') return { problem: `${at.where} is empty` };
      return { value: v };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return { problem: `${at.where} cannot be read (${code ?? 'error'})` };
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  private changed(): void {
    this.generation++;
    for (const f of this.listeners) f();
  }
}

const sameRead = (a: KeyRead, b: KeyRead): boolean => ('value' in a && 'value' in b ? a.value === b.value : 'problem' in a && 'problem' in b);
