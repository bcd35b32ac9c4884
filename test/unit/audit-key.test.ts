// The audit log's key (docs/operations.md#audit-log): configured, from a file, made once in the
// embedded store's data dir (0600), never made for Redis (the log is off and /readyz warns), off
// when audit.enabled is false; refused when too short or given twice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config/load.js';
import { auditKey } from '../../src/audit/key.js';
import { AUDIT_OFF_WARNING, configWarnings } from '../../src/observability/warnings.js';

const KEY = 'configured-audit-key-0123456789abcdef';
const config = (overrides: Record<string, unknown>, env: Record<string, string> = {}) => loadConfig({ env, overrides });
const noAccounts = { hasSeveral: async () => false };

describe('audit key', () => {
  it('audit.key, also from STREAMGATE_AUDIT_KEY; audit.keyFile; never both; 32 characters or more', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-audit-key-'));
    assert.deepEqual(auditKey(config({ dataDir: dir, audit: { key: KEY } }), { embedded: true, create: true }), { key: KEY, source: 'audit.key' });
    assert.deepEqual(auditKey(config({ dataDir: dir }, { STREAMGATE_AUDIT_KEY: KEY }), { embedded: false, create: false }), { key: KEY, source: 'audit.key' });
    const file = path.join(dir, 'k');
    writeFileSync(file, `${KEY}\n`);
    assert.deepEqual(auditKey(config({ dataDir: dir, audit: { keyFile: file } }), { embedded: false, create: false }), { key: KEY, source: 'audit.keyFile' });
    writeFileSync(file, 'short\n');
    assert.throws(() => auditKey(config({ dataDir: dir, audit: { keyFile: file } }), { embedded: false, create: false }), ConfigError);
    assert.throws(() => config({ audit: { key: 'short' } }), /audit\.key: must be empty \(off\) or at least 32 characters/);
    assert.throws(() => config({ audit: { key: KEY, keyFile: file } }), /audit\.keyFile: give audit\.key or audit\.keyFile, not both/);
  });

  it('the embedded store without one: made once in the data dir (0600) when asked to create, read after; Redis: none; off: none', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-audit-key-'));
    const c = config({ dataDir: path.join(dir, 'data') });
    assert.deepEqual(auditKey(c, { embedded: true, create: false }), { key: null, source: 'none' }, 'not made without create');
    const made = auditKey(c, { embedded: true, create: true });
    assert.equal(made.source, 'generated');
    const file = path.join(dir, 'data', 'audit-key');
    assert.equal(readFileSync(file, 'utf8').trim(), made.key);
    assert.ok(made.key!.length >= 32);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(auditKey(c, { embedded: true, create: true }), { key: made.key, source: 'dataDir' }, 'the same key at the next start');
    assert.deepEqual(auditKey(c, { embedded: false, create: true }), { key: null, source: 'none' }, 'Redis: no key is made');
    assert.deepEqual(auditKey(config({ dataDir: path.join(dir, 'data'), audit: { enabled: false, key: KEY } }), { embedded: true, create: true }), { key: null, source: 'off' });
  });

  it('/readyz and the start-up log warn on Redis without a key, and only then', async () => {
    const redis = { redis: { url: 'redis://127.0.0.1:1' } };
    assert.ok((await configWarnings(config(redis), noAccounts)).includes(AUDIT_OFF_WARNING));
    assert.ok(!(await configWarnings(config(Object.assign({ audit: { key: KEY } }, redis)), noAccounts)).includes(AUDIT_OFF_WARNING));
    assert.ok(!(await configWarnings(config(Object.assign({ audit: { enabled: false } }, redis)), noAccounts)).includes(AUDIT_OFF_WARNING));
    assert.ok(!(await configWarnings(config({}), noAccounts)).includes(AUDIT_OFF_WARNING), 'the embedded store makes its own');
  });
});
