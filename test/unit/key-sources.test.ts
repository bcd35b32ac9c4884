// Key references (docs/api.md#keys-from-files-and-the-environment): where each reads, that an
// account reads only its own, what a source the configuration leaves off answers, and a rotated
// key taken by the background read once it is older than keyReloadSeconds (a clock the test moves);
// and what a request presents to signed-URL issuers, which the decision path remembers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeySources, MAX_KEY_FILE_BYTES } from '../../src/enforce/key-sources.js';
import { keyRefProblem } from '../../src/domain/issuers.js';
import { issuerRecord } from '../helpers/issuers.js';

const settings = { format: 'akamai-edgeauth' as const, algorithm: 'sha256' as const, fieldDelimiter: '~', aclDelimiter: '!', escapeEarly: false, names: ['hdnts'], salt: null };

/** The next change `ks` announces (a key read again that differs). */
const nextChange = (ks: KeySources) => new Promise<void>((resolve) => ks.onChange(resolve));

describe('key references', () => {
  it('syntax: env:NAME and file:name, nothing that names a directory', () => {
    assert.equal(keyRefProblem('env:EDGE_1'), null);
    assert.equal(keyRefProblem('file:edge.hex'), null);
    for (const bad of ['env:', 'env:A-B', 'file:', 'file:../x', 'file:a/b', 'file:.hidden', 'file:a\\b', 'EDGE', 'http://x', `env:${'A'.repeat(101)}`]) {
      assert.notEqual(keyRefProblem(bad), null, bad);
    }
  });

  it('reads the variable and the file of the record’s own account, trimmed; a source left off or an account id that cannot name one is refused', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-keysrc-'));
    mkdirSync(path.join(dir, 'ACC001'));
    writeFileSync(path.join(dir, 'ACC001', 'k'), '  abcd \r\n');
    writeFileSync(path.join(dir, 'ACC001', 'big'), 'x'.repeat(MAX_KEY_FILE_BYTES + 1));
    mkdirSync(path.join(dir, 'ACC001', 'sub'));
    const env = { SGKEY_ACC001_K: 'from-env', SGKEY_ACC002_K: 'other' };
    const ks = new KeySources({ keyDir: dir, keyEnvPrefix: 'SGKEY_', keyReloadSeconds: 60, env });
    assert.deepEqual(await ks.check('ACC001', 'env:K'), { value: 'from-env' });
    assert.deepEqual(await ks.check('ACC001', 'file:k'), { value: 'abcd' });
    assert.deepEqual(await ks.check('ACC003', 'env:K'), { problem: 'environment variable SGKEY_ACC003_K is not set' });
    assert.deepEqual(await ks.check('ACC002', 'file:k'), { problem: `${path.join(dir, 'ACC002', 'k')} cannot be read (ENOENT)` });
    assert.deepEqual(await ks.check('ACC001', 'file:big'), { problem: `${path.join(dir, 'ACC001', 'big')} holds more than ${MAX_KEY_FILE_BYTES} bytes` });
    assert.deepEqual(await ks.check('ACC001', 'file:sub'), { problem: `${path.join(dir, 'ACC001', 'sub')} is not a file` });
    assert.deepEqual(await ks.check('AC/01', 'file:k'), { problem: 'account id AC/01 cannot name a directory' });
    assert.deepEqual(await ks.check('AC-01', 'env:K'), { problem: 'account id AC-01 holds characters other than letters and digits: use a file reference' });
    // account A_B's K and account A's B_K would be one variable: an id with _ reads none
    assert.deepEqual(await ks.check('ACC_1', 'env:K'), { problem: 'account id ACC_1 holds characters other than letters and digits: use a file reference' });
    const off = new KeySources({ keyDir: '', keyEnvPrefix: '', keyReloadSeconds: 60, env });
    assert.deepEqual(await off.check('ACC001', 'env:K'), { problem: 'environment key references are off (issuers.keyEnvPrefix is empty)' });
    assert.deepEqual(await off.check('ACC001', 'file:k'), { problem: 'key files are off (issuers.keyDir is not set)' });
  });

  it('resolve: a record naming no reference as it is; one naming references with its keys filled (null where unreadable), the same object while nothing changed', async () => {
    const env: NodeJS.ProcessEnv = { SGKEY_ACC001_EDGE: 'aa'.repeat(16) };
    const ks = new KeySources({ keyDir: '', keyEnvPrefix: 'SGKEY_', keyReloadSeconds: 60, env });
    const plain = issuerRecord({ accountId: 'ACC001', type: 'akamai-edgeauth', settings, secret: 'bb'.repeat(16) });
    assert.equal(ks.resolve(plain), plain);
    const ref = issuerRecord({ id: 2, accountId: 'ACC001', type: 'akamai-edgeauth', settings, secret: null, secretFrom: 'env:EDGE', signingKeyFrom: 'file:x' });
    const first = ks.resolve(ref);
    assert.ok(first instanceof Promise, 'read once, before its first use');
    const keyed = await first;
    assert.deepEqual([keyed.secret, keyed.signingKey, keyed.secretFrom, ref.secret], ['aa'.repeat(16), null, 'env:EDGE', null]);
    assert.equal(ks.resolve(ref), keyed, 'from memory afterwards');
  });

  it('a rotated key is read again once older than keyReloadSeconds, in the background; the change is announced and the new key used', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sg-keysrc-'));
    mkdirSync(path.join(dir, 'ACC001'));
    const file = path.join(dir, 'ACC001', 'edge.hex');
    writeFileSync(file, 'aa'.repeat(16));
    let now = Date.parse('2026-11-27T12:00:00Z');
    const ks = new KeySources({ keyDir: dir, keyEnvPrefix: '', keyReloadSeconds: 60, now: () => now });
    let changes = 0;
    ks.onChange(() => changes++);
    const ref = issuerRecord({ id: 3, accountId: 'ACC001', type: 'akamai-edgeauth', settings, secret: null, secretFrom: 'file:edge.hex' });
    const keyed = await ks.resolve(ref);
    assert.equal(keyed.secret, 'aa'.repeat(16));

    writeFileSync(file, 'cc'.repeat(16));
    now += 59_000;
    assert.equal(ks.resolve(ref), keyed, 'younger than keyReloadSeconds: not read again');
    await new Promise((r) => setImmediate(r));
    assert.equal(changes, 0);
    now += 1_000;
    const rotated = nextChange(ks);
    assert.equal((ks.resolve(ref) as typeof keyed).secret, 'aa'.repeat(16), 'the held key answers while it is read again');
    await rotated;
    assert.equal(changes, 1, 'the rotation is announced once');
    assert.equal((ks.resolve(ref) as typeof keyed).secret, 'cc'.repeat(16));
    const gen = ks.generation;

    // a file that goes away: nothing to verify with (never an empty key)
    writeFileSync(file, '');
    now += 60_000;
    const emptied = nextChange(ks);
    ks.resolve(ref);
    await emptied;
    assert.equal(ks.generation, gen + 1);
    assert.equal((ks.resolve(ref) as typeof keyed).secret, null);

    // an issuer nobody used for twice keyReloadSeconds: its key is read again before it is used, not after
    writeFileSync(file, 'dd'.repeat(16));
    now += 120_000;
    const idle = ks.resolve(ref);
    assert.ok(idle instanceof Promise, 'waits for the read');
    assert.equal((await idle).secret, 'dd'.repeat(16));
  });
});

describe('an issuer whose key cannot be read', () => {
  it('verifies and signs nothing: a token made with an empty key is refused, never checked against one', async () => {
    const { verifySigned, signedRequest, signFor, SignProblem } = await import('../../src/policy/signed.js');
    const { signEdgeAuth } = await import('../../src/policy/signed-akamai.js');
    const now = 1_800_000_000;
    const token = signEdgeAuth({ acl: ['/hls/cam1/*'], start: now, exp: now + 60 }, { key: '', algorithm: 'sha256', fieldDelimiter: '~', aclDelimiter: '!', salt: null, escapeEarly: false });
    const req = signedRequest({ method: 'GET', path: '/hls/cam1/index.m3u8', query: `hdnts=${token}`, cookie: '' }, undefined, undefined);
    for (const secret of [null, '', 'not-hex']) {
      const i = issuerRecord({ id: 9, type: 'akamai-edgeauth', settings, secret, secretFrom: 'env:EDGE' });
      const r = verifySigned(i, req, now);
      assert.deepEqual([r.ok, r.ok ? '' : r.problem], [false, 'issuer 9 has no usable secret: its key source (secretFrom) could not be read or holds no key of the format'], String(secret));
      assert.throws(() => signFor(i, { path: '/hls/cam1/*', lifetimeSeconds: 60, now }), SignProblem);
    }
  });
});

describe('what a request presents to signed-URL issuers', () => {
  it('the same presentation for the same credential whatever else the request carries; none without issuers or a credential of theirs; an empty CAT header is not an absent one', async () => {
    const { presentSigned } = await import('../../src/policy/signed.js');
    const cat = issuerRecord({ id: 11, accountId: 'ACC001', type: 'cat', settings: { format: 'cat', publicKeys: [], secretKeyId: 'k', urls: [], queryParam: 'cat', signingKeyId: null } });
    const set = [cat];
    const facts = (over: Partial<{ query: string; cookie: string; cat: string }> = {}) => ({ method: 'GET', path: '/hls/cam1/index.m3u8', query: '', cookie: '', ...over });
    assert.equal(presentSigned('ACC001', [], facts({ cat: 'x' })), undefined, 'an account without signed-URL issuers');
    assert.equal(presentSigned('ACC001', set, facts({ query: 'token=abc' })), undefined, 'no credential of their formats');
    const a = presentSigned('ACC001', set, facts({ query: 'cat=T1' }));
    const b = presentSigned('ACC001', set, facts({ query: 'cat=T1&_HLS_msn=4', cookie: 'streamgate_session=s1; other=1' }));
    assert.ok(a !== undefined && b !== undefined);
    assert.equal(a.presented, b.presented, 'a session cookie, other cookies and parameters are not part of the credential');
    assert.notEqual(presentSigned('ACC001', set, facts({ query: 'cat=T2' }))?.presented, a.presented);
    assert.notEqual(presentSigned('ACC002', set, facts({ query: 'cat=T1' }))?.presented, a.presented, 'another account');
    // an empty header is carried (and refused when decided); the same request without it carries nothing
    assert.notEqual(presentSigned('ACC001', set, facts({ query: '_HLS_msn=4', cat: '' })), undefined);
    assert.equal(presentSigned('ACC001', set, facts({ query: '_HLS_msn=4' })), undefined);
    // the packed request is made when read, with this request's path
    assert.match(b.value, /index\.m3u8/);
  });
});
