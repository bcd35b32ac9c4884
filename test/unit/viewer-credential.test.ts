// The viewer session credential's format: what mints reads back; no altered character, other key,
// truncation or forged body passes (docs/callers.md#http-viewer-sessions).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { credentialKey, mintCredential, readCredential, valueTagFromHash, type ViewerClaims } from '../../src/sessions/viewer-credential.js';
import { tokenHash } from '../../src/domain/tokens.js';

/** A value's tag as the credential format defines it: the first 12 base64url characters of its SHA-256. */
const valueTag = (v: string) => createHash('sha256').update(v, 'utf8').digest('base64url').slice(0, 12);

const key = Buffer.alloc(32, 1);
const claims: ViewerClaims = { s: 'sid-0123456789', t: 42, a: 'ACCT22', p: valueTag('tok'), v: valueTag('tok'), r: 3, c: 'subscribe', n: 'cam1', i: '203.0.113.7', e: 2_000_000_000 };

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
    for (const json of ['null', '[]', '"x"', '{', JSON.stringify({ ...claims, t: '42' }), JSON.stringify({ ...claims, c: 'admin' }), JSON.stringify({ ...claims, e: 1.5 }), JSON.stringify({ ...claims, i: 7 })]) {
      assert.equal(readCredential(key, sign(json)), undefined, json);
    }
  });

  it('takes its key from sessions.http.secret, else hooks.secret, else one file in dataDir made once', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-cred-'));
    const a = credentialKey({ secret: 's'.repeat(32), hookSecret: 'h'.repeat(32), dataDir: dir });
    const b = credentialKey({ secret: '', hookSecret: 'h'.repeat(32), dataDir: dir });
    assert.deepEqual([a.source, b.source], ['secret', 'hook-secret']);
    assert.notDeepEqual(a.key, b.key);
    assert.deepEqual(credentialKey({ secret: 's'.repeat(32), hookSecret: '', dataDir: dir }).key, a.key, 'the same secret, the same key on every instance');
    const c = credentialKey({ secret: '', hookSecret: '', dataDir: dir });
    const d = credentialKey({ secret: '', hookSecret: '', dataDir: dir });
    assert.deepEqual([c.source, d.source, c.key.equals(d.key), c.key.length], ['data-dir', 'data-dir', true, 32]);
    const file = path.join(dir, 'viewer-credential-key');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url').length, 32);
  });
});

describe('valueTagFromHash', () => {
  it('is the tag the format defines, of the value whose SHA-256 (hex) it is given', () => {
    for (const v of ['tok', 'a'.repeat(64), 'é✓ token', '', 'eyJhbGciOiJIUzI1NiJ9.e30.sig']) assert.equal(valueTagFromHash(tokenHash(v)), valueTag(v), v);
  });
});
