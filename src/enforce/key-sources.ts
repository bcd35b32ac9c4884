// Keys a signed-URL issuer takes from outside the store (docs/api.md#keys-from-files-and-the-environment):
// a record naming `secretFrom` or `signingKeyFrom` ("env:NAME" or "file:name") holds no key; the
// key is read from an environment variable or a file the operator provides for the record's
// account, kept in memory, read again in the background every `reloadSeconds` (a rotated file is
// taken without a restart), and never logged, answered or stored.
import fs from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import { keyRefProblem, parseKeyRef, type IssuerRecord } from '../domain/issuers.js';

/** The most a key file may hold (bytes): a PEM private key is a few KiB. */
export const MAX_KEY_FILE_BYTES = 65_536;

export interface KeySourceOptions {
  /** The directory of key files, one subdirectory per account id; '' refuses file references. */
  keyDir: string;
  /** The prefix of key variables (then the account id, `_` and the name); '' refuses env references. */
  keyEnvPrefix: string;
  /** How old a key read may get before it is read again (in the background). */
  keyReloadSeconds: number;
  /** The environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
}

/** A key as read: its value, or why there is none (for the operator: it never holds the value). */
export type KeyRead = { value: string } | { problem: string };

interface Held {
  read: KeyRead;
  at: number;
  /** A background read under way. */
  refreshing?: Promise<void>;
}

/** Issuer records with their keys filled in, by id and rev and key generation. */
const MAX_RESOLVED = 5000;
/** Key references whose value is held. */
const MAX_HELD = 10_000;

export class KeySources {
  private readonly held: LRUCache<string, Held>;
  private readonly resolved: LRUCache<string, { gen: number; record: IssuerRecord }>;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;
  private readonly listeners: Array<() => void> = [];
  /** Moves whenever a key read again differs from the one held. */
  generation = 0;

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
    const syntax = keyRefProblem(ref);
    if (syntax !== null) return { problem: syntax };
    const r = parseKeyRef(ref)!;
    if (r.source === 'env') {
      if (this.opts.keyEnvPrefix === '') return { problem: 'environment key references are off (issuers.keyEnvPrefix is empty)' };
      if (!/^[A-Za-z0-9_]+$/.test(accountId)) return { problem: `account id ${accountId} holds characters a variable name cannot: use a file reference` };
      return { source: 'env', where: `${this.opts.keyEnvPrefix}${accountId}_${r.name}` };
    }
    if (this.opts.keyDir === '') return { problem: 'key files are off (issuers.keyDir is not set)' };
    if (!/^[A-Za-z0-9_-]+$/.test(accountId)) return { problem: `account id ${accountId} cannot name a directory` };
    return { source: 'file', where: path.join(this.opts.keyDir, accountId, r.name) };
  }

  /** Reads `ref` now (a write checks the key it names), keeping what it read. */
  async read(accountId: string, ref: string): Promise<KeyRead> {
    const k = `${accountId}\n${ref}`;
    const read = await this.load(accountId, ref);
    const before = this.held.get(k);
    this.held.set(k, { read, at: this.now() });
    if (before !== undefined && !sameRead(before.read, read)) this.changed();
    return read;
  }

  /**
   * The record with the keys its references name filled in (`secret`, `signingKey`; null where one
   * cannot be read, which verifies and signs nothing), from memory when held; a record naming no
   * reference as it is. A key held longer than keyReloadSeconds is read again in the background.
   */
  resolve(i: IssuerRecord): IssuerRecord | Promise<IssuerRecord> {
    if (i.secretFrom === null && i.signingKeyFrom === null) return i;
    const rk = `${i.accountId}:${i.id}:${i.rev}`;
    const hit = this.resolved.get(rk);
    const secret = i.secretFrom !== null ? this.peek(i.accountId, i.secretFrom) : null;
    const signing = i.signingKeyFrom !== null ? this.peek(i.accountId, i.signingKeyFrom) : null;
    if (hit !== undefined && hit.gen === this.generation) return hit.record;
    if (secret !== undefined && signing !== undefined) return this.fill(rk, i, secret, signing);
    return (async () => {
      const s = i.secretFrom !== null ? await this.read(i.accountId, i.secretFrom) : null;
      const p = i.signingKeyFrom !== null ? await this.read(i.accountId, i.signingKeyFrom) : null;
      return this.fill(rk, i, s, p);
    })();
  }

  /** The held read of `ref`, starting a background read when it is old; undefined when never read. */
  private peek(accountId: string, ref: string): KeyRead | undefined {
    const k = `${accountId}\n${ref}`;
    const h = this.held.get(k);
    if (h === undefined) return undefined;
    if (h.refreshing === undefined && this.now() - h.at >= this.opts.keyReloadSeconds * 1000) {
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
    this.resolved.set(rk, { gen: this.generation, record });
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
      fh = await fs.open(at.where, 'r');
      const st = await fh.stat();
      if (!st.isFile()) return { problem: `${at.where} is not a file` };
      if (st.size > MAX_KEY_FILE_BYTES) return { problem: `${at.where} holds more than ${MAX_KEY_FILE_BYTES} bytes` };
      const v = (await fh.readFile('utf8')).trim();
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
