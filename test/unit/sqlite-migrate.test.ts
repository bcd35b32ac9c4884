// A SQLite file written before accounts had viewer country defaults and before the securing index
// held country-list tokens (and disabled ones): opening it brings both up to date, once, and keeps
// its data.
import { newIssuer } from '../helpers/issuers.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { newTokenRecord } from '../../src/domain/tokens.js';
import { sealEntry, type AuditHead } from '../../src/domain/audit.js';

describe('SQLite: opening a file of the previous layout', () => {
  it('adds the account country columns and indexes publish tokens with country lists, active or not', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const now = Date.now();
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC001', name: 'a', createdOn: new Date(now).toISOString(), secureViewer: false, secretHash: 'h' });
    const geo = await first.createToken(newTokenRecord('publish', 'ACC001', { label: 'g', streams: [{ streamName: 'cam1' }], deniedCountries: ['FR'] }, 'a'.repeat(64), now));
    const secures = await first.createToken(newTokenRecord('publish', 'ACC001', { label: 's', streams: [{ streamName: 'cam2' }], subscribeRequiresAuth: true }, 'b'.repeat(64), now));
    const off = await first.createToken(newTokenRecord('publish', 'ACC001', { label: 'o', streams: [{ streamName: 'cam3' }], allowedCountries: ['US'] }, 'c'.repeat(64), now));
    await first.updateToken('ACC001', 'publish', off.id, (cur) => ({ next: { ...cur, isActive: false }, clearBound: false }));
    await first.createToken(newTokenRecord('subscribe', 'ACC001', { label: 'v', streams: [{ streamName: 'cam1' }], allowedCountries: ['US'] }, 'd'.repeat(64), now));
    await first.close();

    // back to the previous layout: no country columns, a 0/1 securing flag, user_version 0
    const raw = new Database(file);
    raw.exec('ALTER TABLE accounts DROP COLUMN allowed_countries; ALTER TABLE accounts DROP COLUMN denied_countries');
    raw.exec('ALTER TABLE accounts DROP COLUMN default_cluster; ALTER TABLE accounts DROP COLUMN geo_cascade; ALTER TABLE accounts DROP COLUMN ip_rules_on_rtmp');
    raw.exec('UPDATE tokens SET securing = securing & 1');
    raw.pragma('user_version = 0');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual(await s.getAccount('ACC001'), { id: 'ACC001', name: 'a', createdOn: new Date(now).toISOString(), secureViewer: false, secretHash: 'h' });
    // a disabled token keeps restricting its viewers' countries (docs/api.md#country)
    assert.deepEqual((await s.viewerRuleTokens('ACC001')).map((t) => t.id), [geo.id, secures.id, off.id]);
    assert.deepEqual((await s.securingTokens('ACC001')).map((t) => t.id), [secures.id]);
    assert.deepEqual((await s.updateAccount('ACC001', { deniedCountries: ['DE'] }))?.deniedCountries, ['DE']);
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    again.close();
  });

  it('a file of user_version 2 gets the account distribution columns: none set, address rules on RTMP on, every other column kept', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const createdOn = new Date().toISOString();
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC002', name: 'b', createdOn, secureViewer: true, secretHash: 'h2', allowedCountries: ['FR'] });
    await first.close();

    // back to version 2: the accounts table without the three columns
    const raw = new Database(file);
    raw.exec('ALTER TABLE accounts DROP COLUMN default_cluster; ALTER TABLE accounts DROP COLUMN geo_cascade; ALTER TABLE accounts DROP COLUMN ip_rules_on_rtmp');
    raw.pragma('user_version = 2');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    const before = { id: 'ACC002', name: 'b', createdOn, secureViewer: true, secretHash: 'h2', allowedCountries: ['FR'] };
    assert.deepEqual(await s.getAccount('ACC002'), before);
    assert.deepEqual(await s.updateAccount('ACC002', { defaultCluster: 'eu-1', geoCascade: { isEnabled: true, clusters: ['all'] }, ipRulesOnRtmp: false }), {
      ...before,
      defaultCluster: 'eu-1',
      geoCascade: { isEnabled: true, clusters: ['all'] },
      ipRulesOnRtmp: false,
    });
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    assert.deepEqual(
      (again.prepare('PRAGMA table_info(accounts)').all() as Array<{ name: string }>).map((c) => c.name).filter((n) => ['default_cluster', 'geo_cascade', 'ip_rules_on_rtmp'].includes(n)),
      ['default_cluster', 'geo_cascade', 'ip_rules_on_rtmp'],
    );
    again.close();
  });

  it('a file of user_version 4 gets the issuers table, empty, and keeps its accounts and tokens', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const now = Date.now();
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC003', name: 'c', createdOn: new Date(now).toISOString(), secureViewer: false });
    const t = await first.createToken(newTokenRecord('publish', 'ACC003', { label: 'p', streams: [{ streamName: 'cam1' }] }, 'e'.repeat(64), now));
    await first.close();

    // back to version 4: no issuers table
    const raw = new Database(file);
    raw.exec('DROP TABLE issuers');
    raw.pragma('user_version = 4');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual(await s.getToken('ACC003', 'publish', t.id), t);
    assert.deepEqual(await s.listIssuers('ACC003'), []);
    const made = await s.createIssuer('ACC003', {
      label: 'idp',
      type: 'jwt',
      isActive: true,
      policyTokenId: t.id,
      issuer: 'https://idp.example.com/',
      keyIds: [],
      audience: [],
      algorithms: ['ES256'],
      jwks: null,
      jwksUrl: 'https://idp.example.com/jwks.json',
      secret: null,
      clockSkewSeconds: 0,
      maxLifetimeSeconds: null,
      claims: { stream: 'sub' },
      cookieName: null,
      revoked: { jti: [], sub: [], kid: [] },
      settings: null,
      signingKey: null,
      secretFrom: null,
      signingKeyFrom: null,
    });
    assert.deepEqual(await s.issuersOf('https://idp.example.com/'), [made]);
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    again.close();
  });

  it('a file of user_version 5 gets the signed-URL issuer columns: its JWT issuers kept whole, with no settings and no signing key', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC005', name: 'e', createdOn: new Date().toISOString(), secureViewer: false });
    const fields = newIssuer({ policyTokenId: 1, issuer: 'https://idp.example.com/', keyIds: ['k1'], algorithms: ['ES256'], jwksUrl: 'https://idp.example.com/jwks.json' });
    const made = await first.createIssuer('ACC005', fields);
    await first.close();

    // back to version 5: the issuers table without its last two columns
    const raw = new Database(file);
    raw.exec('ALTER TABLE issuers DROP COLUMN settings');
    raw.exec('ALTER TABLE issuers DROP COLUMN signing_key');
    raw.exec('ALTER TABLE issuers DROP COLUMN secret_from');
    raw.exec('ALTER TABLE issuers DROP COLUMN signing_key_from');
    raw.pragma('user_version = 5');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual(await s.getIssuer('ACC005', made.id), made);
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    // the columns added at the end of the table
    assert.deepEqual((again.prepare('PRAGMA table_info(issuers)').all() as Array<{ name: string }>).map((c) => c.name).slice(-5), ['rev', 'settings', 'signing_key', 'secret_from', 'signing_key_from']);
    again.close();
  });

  it('a file of user_version 6 gets the key reference columns: its signed-URL issuers kept whole, reading no key from elsewhere', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC006', name: 'f', createdOn: new Date().toISOString(), secureViewer: false });
    const settings = { format: 'akamai-edgeauth' as const, algorithm: 'sha256' as const, fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts'], salt: null };
    const made = await first.createIssuer('ACC006', newIssuer({ type: 'akamai-edgeauth', policyTokenId: 1, issuer: null, secret: 'ab'.repeat(16), settings }));
    await first.close();

    const raw = new Database(file);
    raw.exec('ALTER TABLE issuers DROP COLUMN secret_from');
    raw.exec('ALTER TABLE issuers DROP COLUMN signing_key_from');
    raw.pragma('user_version = 6');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    const read = await s.getIssuer('ACC006', made.id);
    assert.deepEqual(read, made);
    assert.deepEqual([read?.secret, read?.secretFrom, read?.signingKeyFrom], ['ab'.repeat(16), null, null]);
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    again.close();
  });

  it('a file of user_version 7 gets the audit chains, empty: its accounts kept, and the next sealed write starts the chain at 1', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const createdOn = new Date().toISOString();
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC007', name: 'g', createdOn, secureViewer: false, secretHash: 'h7' });
    await first.close();

    // back to version 7: no audit tables
    const raw = new Database(file);
    raw.exec('DROP TABLE audit_entries; DROP TABLE audit_heads');
    raw.pragma('user_version = 7');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual(await s.getAccount('ACC007'), { id: 'ACC007', name: 'g', createdOn, secureViewer: false, secretHash: 'h7' });
    assert.deepEqual(await s.auditEnds('ACC007'), { head: null, anchor: null });
    const seal = (_b: unknown, _a: unknown, head: AuditHead | null) =>
      sealEntry('k'.repeat(32), head, { accountId: 'ACC007', at: createdOn, actor: 'cli', address: null, requestId: null, action: 'update', resource: 'account', resourceId: 'ACC007', changes: { secureViewer: { from: false, to: true } } });
    await s.updateAccount('ACC007', { secureViewer: true }, seal);
    assert.deepEqual((await s.listAudit('ACC007', { limit: 10 })).map((e) => [e.seq, e.resource, e.changes]), [[1, 'account', { secureViewer: { from: false, to: true } }]]);
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    assert.deepEqual(
      (again.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'audit_%' ORDER BY name").all() as Array<{ name: string }>).map((t) => t.name),
      ['audit_entries', 'audit_heads'],
    );
    again.close();
  });

  it('a file of user_version 8 gets the accounts’ sharing policy column: none set, every other column kept', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'sg-migrate-')), 'db');
    const createdOn = new Date().toISOString();
    const first = new SqliteStore({ file, synchronous: 'NORMAL' });
    await first.createAccount({ id: 'ACC008', name: 'h', createdOn, secureViewer: true, secretHash: 'h8', defaultCluster: 'eu-1' });
    await first.close();

    const raw = new Database(file);
    raw.exec('ALTER TABLE accounts DROP COLUMN sharing');
    raw.pragma('user_version = 8');
    raw.close();

    const s = new SqliteStore({ file, synchronous: 'NORMAL' });
    assert.deepEqual(await s.getAccount('ACC008'), { id: 'ACC008', name: 'h', createdOn, secureViewer: true, secretHash: 'h8', defaultCluster: 'eu-1' });
    const updated = await s.updateAccount('ACC008', { sharing: { enabled: true, action: 'notify' } });
    assert.deepEqual(updated?.sharing, { enabled: true, action: 'notify' });
    await s.close();
    const again = new Database(file);
    assert.equal(again.pragma('user_version', { simple: true }), 9);
    again.close();
  });
});
