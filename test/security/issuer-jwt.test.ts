// Attacks on issuer JWTs and their key source (docs/api.md#credential-issuers), against a real TLS
// JWKS server on 127.0.0.1: algorithm confusion (a public key as an HMAC secret), alg none, kid
// injection, JWKS URLs at loopback or private addresses (refused before any connection), an
// oversized JWKS, a redirect, an endpoint that hangs (on the mocked clock), and the refetch rate
// limit under many presentations of an unknown kid.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignJWT, exportSPKI, importJWK } from 'jose';
import { IssuerKeys, jwksUrlProblem, type IssuerKeysOptions } from '../../src/enforce/issuer-keys.js';
import { verifyIssuerJwt } from '../../src/policy/issuer-jwt.js';
import type { IssuerRecord } from '../../src/domain/issuers.js';
import { selfSignedCert } from '../helpers/receiver.js';
import { KEY_OPTIONS, fixedKeys, issuerRecord, keyPair, sign, type TestKey } from '../helpers/issuers.js';

const NOW = 1_800_000_000;
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

type Respond = (req: IncomingMessage, res: ServerResponse) => void;

let tls: { dir: string; cert: string; key: string };
let server: https.Server;
let port: number;
let respond: Respond;
const seen = { connections: 0, paths: [] as string[] };
let rsa: TestKey;
let ec: TestKey;
let ecNew: TestKey;

before(async () => {
  tls = selfSignedCert();
  server = https.createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (req, res) => {
    seen.paths.push(req.url ?? '');
    respond(req, res);
  });
  server.on('connection', () => seen.connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  [rsa, ec, ecNew] = await Promise.all([keyPair('RS256', 'rsa-1'), keyPair('ES256', 'ec-1'), keyPair('ES256', 'ec-2')]);
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(tls.dir, { recursive: true, force: true });
});

const json = (body: unknown, headers: Record<string, string> = {}): Respond => (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
};

function reset(r: Respond): void {
  respond = r;
  seen.connections = 0;
  seen.paths = [];
}


/** A key source for the test (closed after it): trusting the test CA, 127.0.0.1 allowed unless `over` says otherwise. */
function keySource(t: TestContext, over: Partial<IssuerKeysOptions> = {}): IssuerKeys {
  const keys = new IssuerKeys({ ...KEY_OPTIONS, allowPrivateJwksHosts: ['127.0.0.1'], jwksCaFile: tls.cert, ...over });
  t.after(() => keys.close());
  return keys;
}

const jwksAt = (url: string, over: Partial<IssuerRecord> = {}) => issuerRecord({ algorithms: ['ES256'], jwksUrl: url, ...over });
const local = (path = '/jwks') => `https://127.0.0.1:${port}${path}`;
const problemOf = (r: object) => ('problem' in r ? (r as { problem: string }).problem : 'verified');

describe('security: issuer JWT algorithm confusion', () => {
  const hs = (payload: Record<string, unknown>, secret: string) => new SignJWT(payload).setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).sign(new TextEncoder().encode(secret));
  const payload = { sub: 'cam1', exp: NOW + 60 };

  it('an RS256 key\'s public PEM or JWK used as an HS256 secret is refused, however the issuer is set', async () => {
    const pem = await exportSPKI((await importJWK(rsa.jwk, 'RS256')) as CryptoKey);
    const forged = [await hs(payload, pem), await hs(payload, JSON.stringify(rsa.jwk)), await hs(payload, rsa.jwk.n as string)];
    const keys = fixedKeys([rsa.jwk]);
    for (const jwt of forged) {
      assert.equal(problemOf(await verifyIssuerJwt(jwt, issuerRecord({ jwks: { keys: [rsa.jwk] } }), keys, NOW)), 'algorithm HS256 is not one the issuer allows (RS256)');
      // HS256 allowed too: the HMAC key is the issuer's secret, never one of its public keys.
      assert.equal(problemOf(await verifyIssuerJwt(jwt, issuerRecord({ algorithms: ['RS256', 'HS256'], jwks: { keys: [rsa.jwk] } }), keys, NOW)), "HS256 needs the issuer's secret and it has none");
      assert.equal(
        problemOf(await verifyIssuerJwt(jwt, issuerRecord({ algorithms: ['RS256', 'HS256'], secret: 'the-real-hmac-secret-of-32-bytes', jwks: { keys: [rsa.jwk] } }), keys, NOW)),
        'the signature does not verify',
      );
    }
    assert.equal(keys.calls, 0, 'no public key was ever asked for an HMAC check');
  });

  it('a JWKS carrying a symmetric key (the PEM as k) is refused whole', async (t) => {
    reset(json({ keys: [{ kty: 'oct', kid: 'rsa-1', k: Buffer.from('-----BEGIN PUBLIC KEY-----').toString('base64url') }, rsa.jwk] }));
    const keys = keySource(t);
    const jwt = await sign(rsa, payload, { kid: 'rsa-1' });
    assert.equal(
      problemOf(await verifyIssuerJwt(jwt, jwksAt(local(), { algorithms: ['RS256'] }), keys, NOW)),
      'no keys: the JWKS URL has no usable key set yet: the JWKS: keys[0] is a symmetric key: only public keys verify here',
    );
  });

  it('alg none in any spelling, and an empty signature, are refused before any key is asked for', async () => {
    const keys = fixedKeys([rsa.jwk]);
    const issuer = issuerRecord({ jwks: { keys: [rsa.jwk] } });
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      assert.equal(problemOf(await verifyIssuerJwt(`${b64({ alg })}.${b64(payload)}.AA`, issuer, keys, NOW)), `algorithm ${alg} is not one the issuer allows (RS256)`);
      assert.equal(problemOf(await verifyIssuerJwt(`${b64({ alg })}.${b64(payload)}.`, issuer, keys, NOW)), 'not a signed JWT of at most 8192 characters');
    }
    // Even a record that claims to allow it (none is never an issuer algorithm).
    const forced = issuerRecord({ algorithms: ['none'] as unknown as IssuerRecord['algorithms'] });
    assert.equal(problemOf(await verifyIssuerJwt(`${b64({ alg: 'none' })}.${b64(payload)}.AA`, forced, keys, NOW)), 'algorithm none is not one the issuer allows (none)');
    assert.equal(keys.calls, 0);
  });
});

describe('security: issuer JWT kid injection', () => {
  it('a kid is only ever compared: paths, JSON, URLs and control characters find no key and fetch nothing else', async (t) => {
    reset(json({ keys: [ec.jwk] }));
    const keys = keySource(t);
    const issuer = jwksAt(local());
    assert.equal(problemOf(await verifyIssuerJwt(await sign(ec, { sub: 'cam1', exp: NOW + 60 }, { kid: 'ec-1' }), issuer, keys, NOW)), 'verified');
    const kids = ['../../../../etc/passwd', '{"$ne":null}', '*', 'https://attacker.example/jwks', 'ec-1\u0000', 'ec-1\r\nX-Injected: 1', "ec-1' OR '1'='1", '__proto__', 'constructor'];
    for (const kid of kids) {
      const problem = problemOf(await verifyIssuerJwt(await sign(ec, { sub: 'cam1', exp: NOW + 60 }, { kid }), issuer, keys, NOW));
      assert.equal(problem, "no ES256 key with the JWT's kid among the issuer's keys", JSON.stringify(kid));
    }
    assert.deepEqual(seen.paths, ['/jwks'], 'one fetch, of the configured URL only');
  });

  it('a huge kid, a kid that is not a string, and kids that disagree are refused before any key is asked for', async () => {
    const keys = fixedKeys([ec.jwk]);
    const issuer = issuerRecord({ algorithms: ['ES256'], jwks: { keys: [ec.jwk] } });
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
      [{ kid: 'k'.repeat(257) }, {}, 'the header kid is longer than 256 characters'],
      [{}, { kid: 'k'.repeat(5000) }, 'the payload kid is longer than 256 characters'],
      [{ kid: { $ne: null } }, {}, 'the header kid is not a non-empty string'],
      [{ kid: ['ec-1'] }, {}, 'the header kid is not a non-empty string'],
      [{ kid: 'ec-1' }, { kid: 'other' }, 'the header kid and the payload kid differ'],
      [{ kid: 'k'.repeat(9000) }, {}, 'not a signed JWT of at most 8192 characters'],
    ];
    for (const [header, payload, problem] of cases) {
      assert.equal(problemOf(await verifyIssuerJwt(await sign(ec, { sub: 'cam1', exp: NOW + 60, ...payload }, header), issuer, keys, NOW)), problem);
    }
    assert.equal(keys.calls, 0);
  });
});

describe('security: JWKS URLs through the SSRF guard', () => {
  it('loopback, private and metadata addresses are refused without the allow-list, and no connection is made', async (t) => {
    reset(json({ keys: [ec.jwk] }));
    const keys = keySource(t, { allowPrivateJwksHosts: [] });
    const cases: Array<[string, RegExp]> = [
      [local(), /^refused: loopback address \(127\.0\.0\.1\)$/],
      [`https://localhost:${port}/jwks`, /^refused: localhost resolves to a loopback address \((127\.0\.0\.1|::1)\)$/],
      [`https://[::ffff:127.0.0.1]:${port}/jwks`, /^refused: loopback address \(::ffff:7f00:1, IPv4-mapped 127\.0\.0\.1\)$/],
      [`https://2130706433:${port}/jwks`, /^refused: loopback address \(127\.0\.0\.1\)$/],
      ['https://10.0.0.5/jwks', /^refused: private address \(10\.0\.0\.5\)$/],
      ['https://169.254.169.254/latest/meta-data', /^refused: cloud metadata address \(169\.254\.169\.254\)$/],
      ['http://idp.example/jwks', /^the JWKS URL must use https$/],
    ];
    for (const [url, reason] of cases) {
      const r = await keys.keysFor(jwksAt(url), 'ec-1');
      const problem = problemOf(r).replace('the JWKS URL has no usable key set yet: ', '');
      assert.match(problem, reason, url);
    }
    assert.deepEqual([seen.connections, seen.paths], [0, []]);
    assert.equal(jwksUrlProblem(local(), []), 'resolves to a loopback address (127.0.0.1)');
    assert.equal(jwksUrlProblem('https://[fd00::1]/jwks', []), 'resolves to a private address (fd00::1)');
    assert.equal(jwksUrlProblem(local(), ['127.0.0.0/8']), null);
    assert.equal(jwksUrlProblem('https://idp.example/jwks', []), null);
  });

  it('the allow-list lets a listed address or host name through, and only those', async (t) => {
    reset(json({ keys: [ec.jwk] }));
    const byAddress = keySource(t, { allowPrivateJwksHosts: ['127.0.0.0/8'] });
    assert.deepEqual(await byAddress.keysFor(jwksAt(local()), 'ec-1'), { keys: [ec.jwk] });
    const byName = keySource(t, { allowPrivateJwksHosts: ['localhost'] });
    assert.deepEqual(await byName.keysFor(jwksAt(`https://localhost:${port}/jwks`), 'ec-1'), { keys: [ec.jwk] });
    assert.match(problemOf(await byName.keysFor(jwksAt(local('/other')), 'ec-1')), /refused: loopback address \(127\.0\.0\.1\)$/);
    assert.deepEqual(seen.paths, ['/jwks', '/jwks']);
  });

  it('a JWKS over 64 KiB is refused, with or without a Content-Length', async (t) => {
    const big = JSON.stringify({ keys: [ec.jwk], pad: 'x'.repeat(70_000) });
    reset((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) }).end(big));
    assert.equal(problemOf(await keySource(t).keysFor(jwksAt(local()), 'ec-1')), 'the JWKS URL has no usable key set yet: the JWKS is larger than 65536 bytes');
    reset((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < big.length; i += 8192) res.write(big.slice(i, i + 8192));
      res.end();
    });
    assert.equal(problemOf(await keySource(t).keysFor(jwksAt(local()), 'ec-1')), 'the JWKS URL has no usable key set yet: the JWKS is larger than 65536 bytes');
    reset(json({ keys: Array.from({ length: 21 }, (_, i) => ({ ...ec.jwk, kid: `k${i}` })) }));
    assert.equal(problemOf(await keySource(t).keysFor(jwksAt(local()), 'ec-1')), 'the JWKS URL has no usable key set yet: the JWKS: more than 20 keys');
  });

  it('a redirect is not followed', async (t) => {
    reset((_req, res) => res.writeHead(302, { location: local('/elsewhere') }).end());
    assert.equal(problemOf(await keySource(t).keysFor(jwksAt(local()), 'ec-1')), 'the JWKS URL has no usable key set yet: the JWKS URL answered 302');
    assert.deepEqual(seen.paths, ['/jwks']);
  });
});

describe('security: a JWKS endpoint that hangs, and the refetch rate limit', () => {
  it('an endpoint that never answers holds only its own issuer\'s decisions, each refused at the timeout', async (t) => {
    let arrive!: () => void;
    const arrived = new Promise<void>((r) => {
      arrive = r;
    });
    reset(() => arrive());
    const keys = keySource(t);
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: NOW * 1000 });
    const jwt = await sign(ec, { sub: 'cam1', exp: NOW + 60 }, { kid: 'ec-1' });
    const hanging = Array.from({ length: 20 }, () => verifyIssuerJwt(jwt, jwksAt(local()), keys, NOW));
    await arrived;
    // Another issuer (inline keys) is decided meanwhile.
    assert.equal(problemOf(await verifyIssuerJwt(jwt, issuerRecord({ id: 9, algorithms: ['ES256'], jwks: { keys: [ec.jwk] } }), keys, NOW)), 'verified');
    t.mock.timers.tick(3000);
    for (const r of await Promise.all(hanging)) assert.equal(problemOf(r), 'no keys: the JWKS URL has no usable key set yet: no answer within 3000 ms');
    assert.deepEqual(seen.paths, ['/jwks'], 'one request for all 20');
  });

  it('an unknown kid refetches once per cooldown, however many present it; then it is refused', async (t) => {
    reset(json({ keys: [ec.jwk] }, { 'cache-control': 'max-age=3600' }));
    const keys = keySource(t);
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: NOW * 1000 });
    const issuer = jwksAt(local());
    assert.equal(problemOf(await verifyIssuerJwt(await sign(ec, { sub: 'cam1', exp: NOW + 600 }, { kid: 'ec-1' }), issuer, keys, NOW)), 'verified');
    const rotated = await sign(ecNew, { sub: 'cam1', exp: NOW + 600 }, { kid: 'ec-2' });
    t.mock.timers.tick(30_000);
    const burst = await Promise.all(Array.from({ length: 200 }, () => verifyIssuerJwt(rotated, issuer, keys, NOW + 30)));
    assert.deepEqual(new Set(burst.map(problemOf)), new Set(["no ES256 key with the JWT's kid among the issuer's keys"]));
    assert.equal(seen.paths.length, 2, 'the first fetch and one refetch');
    for (let i = 0; i < 200; i++) await verifyIssuerJwt(rotated, issuer, keys, NOW + 30);
    t.mock.timers.tick(29_999);
    for (let i = 0; i < 50; i++) await verifyIssuerJwt(rotated, issuer, keys, NOW + 59);
    assert.equal(seen.paths.length, 2, 'nothing more within the cooldown');
    // The key is published; after the cooldown the next presentation finds it.
    respond = json({ keys: [ec.jwk, ecNew.jwk] });
    t.mock.timers.tick(1);
    assert.equal(problemOf(await verifyIssuerJwt(rotated, issuer, keys, NOW + 60)), 'verified');
    assert.equal(seen.paths.length, 3);
  });
});
