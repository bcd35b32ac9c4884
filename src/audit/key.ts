// The audit chain's HMAC key (docs/operations.md#audit-log): from audit.key (STREAMGATE_AUDIT_KEY),
// else from audit.keyFile, else, for the embedded store only, <dataDir>/audit-key, made (0600) on
// the first start as the default account's secret is. Never stored in the store, never logged. On
// Redis without a configured key the log is off: instances sharing a store must share one key, and
// one made by a single instance would not be (/readyz warns; src/observability/warnings.ts).
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import { MIN_SECRET_LENGTH } from '../config/schema.js';
import { ConfigError, readFailure } from '../config/load.js';
import { ensurePrivateDir } from '../store/data-dir.js';

/** The key file the embedded store's deployment keeps beside its data. */
export const AUDIT_KEY_FILE = 'audit-key';

export type AuditKeySource = 'audit.key' | 'audit.keyFile' | 'dataDir' | 'generated' | 'off' | 'none';

/** Reads a key file: its first line, which must hold 32 characters or more. */
function readKeyFile(file: string, setting: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${setting}: cannot read ${file}: ${readFailure(e)}`);
  }
  const key = text.split(/\r?\n/)[0].trim();
  if (key.length < MIN_SECRET_LENGTH) throw new ConfigError(`${setting}: the key in ${file} must be at least ${MIN_SECRET_LENGTH} characters`);
  return key;
}

/**
 * The key and where it came from; null when the log is off (audit.enabled false, or a Redis store
 * without a configured key). `embedded`: the store is the embedded one (its dataDir may keep a
 * key); `create`: make <dataDir>/audit-key when there is none (the server's start, the CLI).
 */
export function auditKey(config: Config, opts: { embedded: boolean; create: boolean }): { key: string | null; source: AuditKeySource } {
  const a = config.audit;
  if (!a.enabled) return { key: null, source: 'off' };
  if (a.key !== '') return { key: a.key, source: 'audit.key' };
  if (a.keyFile !== '') return { key: readKeyFile(path.resolve(a.keyFile), 'audit.keyFile'), source: 'audit.keyFile' };
  if (!opts.embedded) return { key: null, source: 'none' };
  const file = path.resolve(config.dataDir, AUDIT_KEY_FILE);
  if (existsSync(file)) return { key: readKeyFile(file, `the audit key ${file}`), source: 'dataDir' };
  if (!opts.create) return { key: null, source: 'none' };
  ensurePrivateDir(config.dataDir);
  const key = randomBytes(32).toString('base64url');
  // wx: two processes starting together never both write one (the loser reads the winner's)
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { key: readKeyFile(file, `the audit key ${file}`), source: 'dataDir' };
    throw e;
  }
  chmodSync(file, 0o600);
  return { key, source: 'generated' };
}
