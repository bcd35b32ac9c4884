// A signed-URL issuer's keys read from the environment or a key file of its own account
// (docs/api.md#keys-from-files-and-the-environment): never stored or answered, used on the decision
// path and by /sign exactly as a stored key; a reference that cannot be read, or that would read
// another account's key, is refused with the field named and nothing stored.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import EdgeAuth from 'akamai-edgeauth';
import { hookFixture, type HookFixture } from './fixture.js';

const VIEWER = '203.0.113.7';

describe('signed-URL issuer keys from the environment and key files', () => {
  let f: HookFixture;
  let acct: string;
  let other: { id: string; secret: string };
  let policy: number;
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-keys-'));
  const envKey = randomBytes(16).toString('hex');
  const fileKey = randomBytes(16).toString('hex');
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const PUBLIC_PEM = rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const PRIVATE_PEM = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const envNames: string[] = [];

  before(async () => {
    f = await hookFixture({
      hooks: { secret: '', trustedProxies: ['127.0.0.1'], accountInPath: true },
      sessions: { http: { enabled: false } },
      issuers: { keyDir: dir },
    });
    acct = f.acct.id;
    other = await f.t.account('other');
    policy = (await f.token('subscribe', { streams: [{ streamName: 'cam1' }] })).id;
    const name = `SGKEY_${acct}_EDGE`;
    envNames.push(name);
    process.env[name] = envKey;
    mkdirSync(path.join(dir, acct));
    // a key file as an operator writes one: a trailing newline is not part of the key
    writeFileSync(path.join(dir, acct, 'edge.hex'), `${fileKey}\n`);
    writeFileSync(path.join(dir, acct, 'cf.pem'), PRIVATE_PEM);
  });
  after(async () => {
    for (const n of envNames) delete process.env[n];
    await f.close();
  });

  const nginx = async (uri: string) => {
    const r = await request(f.t.app).get('/hooks/auth-request').set({ 'x-original-uri': uri, 'x-forwarded-for': VIEWER });
    return [r.status, r.status === 200 ? r.headers['x-streamgate-token-id'] : r.body.reason];
  };
  const issuers = async (who: { secret: string }) => (await request(f.t.app).get('/api/issuers').set('authorization', `Bearer ${who.secret}`)).text;

  it('an EdgeAuth key from the environment: never stored or answered; tokens of that key allowed, of any other refused', async () => {
    const r = await f.api('post', '/api/issuers', { label: 'edge env', type: 'akamai-edgeauth', policyTokenId: policy, secretFrom: 'env:EDGE' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual([r.body.data.hasSecret, r.body.data.secretFrom, r.body.data.signingKeyFrom], [false, 'env:EDGE', null]);
    const stored = await f.t.services.store.getIssuer(acct, r.body.data.id);
    assert.equal(stored?.secretFrom, 'env:EDGE', 'the store holds the reference');
    // and in secret a random key no one holds: a build that does not read references verifies nothing with it
    assert.match(stored?.secret ?? '', /^[0-9a-f]{64}$/);
    assert.notEqual(stored?.secret, envKey);
    assert.ok(!(await issuers(f.acct)).includes(envKey));

    const good = new EdgeAuth({ key: envKey, windowSeconds: 300 }).generateACLToken(`/hls/${acct}/cam1/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${good}`), [200, String(policy)]);
    const forged = new EdgeAuth({ key: fileKey, windowSeconds: 300 }).generateACLToken(`/hls/${acct}/cam1/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${forged}`), [403, 'signature_invalid']);
    assert.equal((await f.api('delete', `/api/issuers/${r.body.data.id}`)).status, 200);
  });

  it('an EdgeAuth key from a file; giving the key itself replaces the reference, and a reference the stored key', async () => {
    const r = await f.api('post', '/api/issuers', { label: 'edge file', type: 'akamai-edgeauth', policyTokenId: policy, secretFrom: 'file:edge.hex' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const id = r.body.data.id as number;
    const byFile = new EdgeAuth({ key: fileKey, windowSeconds: 300 }).generateACLToken(`/hls/${acct}/cam1/*`);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${byFile}`), [200, String(policy)]);
    // /sign signs with the file's key: the SDK's own token and /sign's verify alike
    const signed = await f.api('post', `/api/issuers/${id}/sign`, { path: `/hls/${acct}/cam1/*`, lifetimeSeconds: 60 });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?${signed.body.data.queryString}`), [200, String(policy)]);

    const stored = await f.api('put', `/api/issuers/${id}`, { secret: envKey });
    assert.deepEqual([stored.status, stored.body.data.hasSecret, stored.body.data.secretFrom], [200, true, null]);
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${byFile}`), [403, 'signature_invalid'], 'the file no longer verifies');
    const back = await f.api('put', `/api/issuers/${id}`, { secretFrom: 'file:edge.hex' });
    assert.deepEqual([back.status, back.body.data.hasSecret, back.body.data.secretFrom], [200, false, 'file:edge.hex']);
    const placeholder = (await f.t.services.store.getIssuer(acct, id))?.secret;
    assert.ok(placeholder !== envKey && /^[0-9a-f]{64}$/.test(placeholder ?? ''), 'the stored key is replaced by a placeholder');
    // the reference removed without a secret: one is required again, nothing changes
    const bare = await f.api('put', `/api/issuers/${id}`, { secretFrom: null });
    assert.deepEqual([bare.status, bare.body.data.errors], [400, { secret: ["required: the EdgeAuth key as Akamai's property holds it, hex (an even number of digits, 16 bytes or more)"] }]);
    assert.equal((await f.t.services.store.getIssuer(acct, id))?.secretFrom, 'file:edge.hex');
    assert.deepEqual(await nginx(`/hls/${acct}/cam1/index.m3u8?hdnts=${byFile}`), [200, String(policy)]);
    assert.equal((await f.api('delete', `/api/issuers/${id}`)).status, 200);
  });

  it("a CloudFront private key from a file: /sign's signed URL checks against the public key", async () => {
    const r = await f.api('post', '/api/issuers', {
      label: 'cf file',
      type: 'cloudfront',
      policyTokenId: policy,
      settings: { publicKeys: [{ id: 'KFILE', key: PUBLIC_PEM }], urls: ['https://cdn.example.com'], signingKeyId: 'KFILE' },
      signingKeyFrom: 'file:cf.pem',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual([r.body.data.hasSigningKey, r.body.data.signingKeyFrom], [false, 'file:cf.pem']);
    const signed = await f.api('post', `/api/issuers/${r.body.data.id}/sign`, { path: `/hls/${acct}/cam1/index.m3u8`, lifetimeSeconds: 60 });
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    const url = new URL(signed.body.data.url as string);
    const policyJson = JSON.stringify({ Statement: [{ Resource: `https://cdn.example.com/hls/${acct}/cam1/index.m3u8`, Condition: { DateLessThan: { 'AWS:EpochTime': Number(url.searchParams.get('Expires')) } } }] });
    const sig = Buffer.from(url.searchParams.get('Signature')!.replace(/-/g, '+').replace(/_/g, '=').replace(/~/g, '/'), 'base64');
    assert.ok(verify('sha256', Buffer.from(policyJson), rsa.publicKey, sig), 'the canned policy is signed by the private key in the file');
    assert.deepEqual(await nginx(`${url.pathname}${url.search}`), [200, String(policy)]);
    assert.equal((await f.api('delete', `/api/issuers/${r.body.data.id}`)).status, 200);
  });

  it("a reference that cannot be read, to a JWT issuer, beside the key itself, or to another account's key is refused with its field named, and nothing is stored", async () => {
    const fails = async (who: { secret: string }, body: Record<string, unknown>, errors: Record<string, string[]>) => {
      const before = await issuers(who);
      const r = await request(f.t.app).post('/api/issuers').set('authorization', `Bearer ${who.secret}`).send(body);
      assert.deepEqual([r.status, r.body], [400, { status: 'fail', data: { message: 'Validation errors', errors } }], JSON.stringify(body));
      assert.ok(!r.text.includes(envKey) && !r.text.includes(fileKey) && !r.text.includes('PRIVATE KEY'), 'no key in a refusal');
      assert.equal(await issuers(who), before, 'nothing stored');
    };
    const edge = (over: Record<string, unknown>) => ({ label: 'edge', type: 'akamai-edgeauth', policyTokenId: policy, ...over });
    await fails(f.acct, edge({ secretFrom: 'env:NOPE' }), { secretFrom: [`environment variable SGKEY_${acct}_NOPE is not set`] });
    await fails(f.acct, edge({ secretFrom: 'file:nope.hex' }), { secretFrom: [`${path.join(dir, acct, 'nope.hex')} cannot be read (ENOENT)`] });
    await fails(f.acct, edge({ secretFrom: 'file:../x' }), { secretFrom: ['a key reference is env:NAME (letters, digits, _) or file:name (a file name, no directory)'] });
    await fails(f.acct, edge({ secretFrom: 'http:x' }), { secretFrom: ['a key reference is env:NAME (letters, digits, _) or file:name (a file name, no directory)'] });
    await fails(f.acct, edge({ secretFrom: 'file:cf.pem' }), { secretFrom: ["required: the EdgeAuth key as Akamai's property holds it, hex (an even number of digits, 16 bytes or more)"] });
    await fails(f.acct, edge({ secretFrom: 'env:EDGE', secret: envKey }), { secret: ['give the secret or secretFrom, not both'] });
    await fails(f.acct, { label: 'jwt', policyTokenId: policy, issuer: 'x', algorithms: ['HS256'], secret: 'a-secret-of-enough-length', secretFrom: 'env:EDGE' }, { secretFrom: ['only a signed-URL issuer reads its keys from a reference; a jwt issuer keeps its secret'] });
    // the other account's references read its own variable and directory, never this account's
    const otherPolicy = (await request(f.t.app).post('/api/subscribe_token').set('authorization', `Bearer ${other.secret}`).send({ label: 'p', streams: [{ streamName: 'cam1' }] })).body.data.id as number;
    await fails(other, edge({ policyTokenId: otherPolicy, secretFrom: 'env:EDGE' }), { secretFrom: [`environment variable SGKEY_${other.id}_EDGE is not set`] });
    await fails(other, edge({ policyTokenId: otherPolicy, secretFrom: 'file:edge.hex' }), { secretFrom: [`${path.join(dir, other.id, 'edge.hex')} cannot be read (ENOENT)`] });
  });
});
