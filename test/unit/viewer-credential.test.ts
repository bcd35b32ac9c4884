// The viewer session credential's format: what mints reads back; no altered character, other key,
// truncation or forged body passes (docs/callers.md#http-viewer-sessions). Its keys: made and kept
// in the store (never derived from hooks.secret), shared by every instance on it, rotated with the
// previous key accepted for a bounded time.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mintCredential, readCredential, valueTagFromHash, type ViewerClaims } from '../../src/sessions/viewer-credential.js';
import { CREDENTIAL_KEYS_META, CredentialKeys, keyFromSecret, parseCredentialKeys } from '../../src/sessions/credential-keys.js';
import { tokenHash } from '../../src/domain/tokens.js';
import { sqliteFactory } from '../helpers/stores.js';

/** A value's tag as the credential format defines it: the first 12 base64url characters of its SHA-256. */
const valueTag = (v: string) => createHash('sha256').update(v, 'utf8').digest('base64url').slice(0, 12);

const key = Buffer.alloc(32, 1);
const claims: ViewerClaims = { s: 'sid-0123456789', t: 42, a: 'ACCT22', p: valueTag('tok'), v: valueTag('tok'), r: 3, c: 'subscribe', n: 'cam1', i: '203.0.113.7', e: 2_000_000_000, b: 1_999_999_940 };

describe('viewer credential', () => {
  it('reads back what it minted', () => {
    assert.deepEqual(readCredential(key, mintCredential(key, claims)), claims);
  });

  it('refuses every single-character change, truncation and extension', () => {
    const c = mintCredential(key, claims);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';
    let tried = 0;
    for (let i = 0; i < c.length; i++) {
      for (const ch of [alphabet[(alphabet.indexOf(c[i]) + 1) % alphabet.length], alphabet[(alphabet.indexOf(c[i]) + 33) % alphabet.length]]) {
        const altered = c.slice(0, i) + ch + c.slice(i + 1);
        assert.equal(readCredential(key, altered), undefined, `position ${i}: ${c[i]} → ${ch}`);
        tried++;
      }
    }
    for (const bad of [c.slice(0, -1), `${c}A`, c.split('.')[0], `.${c.split('.')[1]}`, '', '.', 'a.b', 'x'.repeat(3000)]) assert.equal(readCredential(key, bad), undefined, bad);
    assert.equal(tried, c.length * 2);
  });

  it('refuses another key, and a correctly signed body that is not a credential', () => {
    assert.equal(readCredential(Buffer.alloc(32, 2), mintCredential(key, claims)), undefined);
    const sign = (json: string) => {
      const body = Buffer.from(json).toString('base64url');
      return `${body}.${createHmac('sha256', key).update(body).digest().subarray(0, 16).toString('base64url')}`;
    };
    assert.deepEqual(readCredential(key, sign(JSON.stringify(claims))), claims, 'the signing above is the real one');
    for (const json of ['null', '[]', '"x"', '{', JSON.stringify({ ...claims, t: '42' }), JSON.stringify({ ...claims, c: 'admin' }), JSON.stringify({ ...claims, e: 1.5 }), JSON.stringify({ ...claims, i: 7 }), JSON.stringify({ ...claims, b: undefined }), JSON.stringify({ ...claims, g: 3 })]) {
      assert.equal(readCredential(key, sign(json)), undefined, json);
    }
  });

});

describe('viewer credential keys', () => {
  const factory = sqliteFactory();
  before(() => factory.setup());
  after(() => factory.teardown());
  const T0 = Date.parse('2026-11-26T12:00:00.000Z');
  const WINDOW = 100_000;

  it('are made once and kept in the store: every instance on it signs with the same key, which no configured secret derives', async () => {
    const store = await factory.make();
    const [a, b] = await Promise.all([CredentialKeys.load(store, { secret: '', previousForMs: WINDOW }), CredentialKeys.load(store, { secret: '', previousForMs: WINDOW })]);
    assert.deepEqual([a.source, b.source, a.signing.id], ['store', 'store', b.signing.id]);
    assert.ok(a.signing.key.equals(b.signing.key), 'the first-start race yields one key');
    assert.equal(a.signing.key.length, 32);
    const stored = parseCredentialKeys((await store.getMeta(CREDENTIAL_KEYS_META))!);
    assert.ok(Buffer.from(stored.current.key, 'base64url').equals(a.signing.key));
    // nothing a caller holds makes it: a hook secret of any value derives another key
    assert.equal(a.signing.key.equals(keyFromSecret('h'.repeat(32))), false);
    const again = await CredentialKeys.load(store, { secret: '', previousForMs: WINDOW });
    assert.ok(again.signing.key.equals(a.signing.key), 'a restart keeps it');
  });

  it('sessions.http.secret, when set, is the key on every instance, and the store is not read', async () => {
    const store = await factory.make();
    const k = await CredentialKeys.load(store, { secret: 's'.repeat(32), previousForMs: WINDOW });
    assert.deepEqual([k.source, k.signing.key.equals(keyFromSecret('s'.repeat(32)))], ['secret', true]);
    assert.equal(await store.getMeta(CREDENTIAL_KEYS_META), null);
  });

  it('a rotation makes a new key; the previous one is accepted for previousForMs after it, then refused', async () => {
    const store = await factory.make();
    const k = await CredentialKeys.load(store, { secret: '', previousForMs: WINDOW }, () => T0);
    const old = k.signing;
    const r = await CredentialKeys.rotate(store, () => T0 + 5_000);
    assert.deepEqual([r.previousId, r.id === old.id], [old.id, false]);
    assert.equal(await k.reload(), true);
    assert.notEqual(k.signing.id, old.id);
    assert.deepEqual(k.verifying(T0 + 5_000 + WINDOW - 1).map((v) => v.id), [k.signing.id, old.id]);
    assert.deepEqual([k.accepts(old.id, T0 + 5_000 + WINDOW - 1), k.accepts(old.id, T0 + 5_000 + WINDOW)], [true, false]);
    assert.deepEqual(k.verifying(T0 + 5_000 + WINDOW).map((v) => v.id), [k.signing.id]);
    assert.equal(await k.reload(), false, 'nothing new');
    // a second rotation retires the first key for good
    await CredentialKeys.rotate(store, () => T0 + 6_000);
    await k.reload();
    assert.equal(k.verifying(T0 + 6_000).some((v) => v.id === old.id), false);
  });

  it('a corrupt stored value stops the start rather than being replaced', async () => {
    const store = await factory.make();
    for (const bad of ['{', '{}', JSON.stringify({ current: { id: 'x', key: 'short', createdOn: 'now' } }), JSON.stringify({ current: { id: 'x', key: Buffer.alloc(32).toString('base64url'), createdOn: 'n' }, previous: { id: 'y', key: Buffer.alloc(32).toString('base64url'), createdOn: 'n' } })]) {
      await store.setMeta(CREDENTIAL_KEYS_META, bad);
      await assert.rejects(CredentialKeys.load(store, { secret: '', previousForMs: WINDOW }), new RegExp(CREDENTIAL_KEYS_META.replace(/\./g, '\\.')), bad);
    }
  });
});

describe('valueTagFromHash', () => {
  it('is the tag the format defines, of the value whose SHA-256 (hex) it is given', () => {
    for (const v of ['tok', 'a'.repeat(64), 'é✓ token', '', 'eyJhbGciOiJIUzI1NiJ9.e30.sig']) assert.equal(valueTagFromHash(tokenHash(v)), valueTag(v), v);
  });
});
