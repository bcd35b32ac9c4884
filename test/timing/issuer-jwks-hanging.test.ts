// A credential issuer's JWKS endpoint that hangs, on the real clock: a server that accepts the
// connection and never starts TLS, one that never answers the request, and one that drips its
// body. Each costs its issuer's decisions the fetch timeout and no more, and decisions for an
// issuer with inline keys made meanwhile do not wait for it. (That the refusal comes at exactly the
// timeout, shared by every caller, is on the mocked clock in test/security/issuer-jwt.test.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import net from 'node:net';
import { readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { IssuerKeys } from '../../src/enforce/issuer-keys.js';
import { verifyIssuerJwt } from '../../src/policy/issuer-jwt.js';
import { selfSignedCert } from '../helpers/receiver.js';
import { KEY_OPTIONS, issuerRecord, keyPair, sign, type TestKey } from '../helpers/issuers.js';

const TIMEOUT_MS = 400;
const NOW = Math.floor(Date.now() / 1000);

let tls: { dir: string; cert: string; key: string };
let key: TestKey;
const closers: Array<() => void> = [];

before(async () => {
  tls = selfSignedCert();
  key = await keyPair('ES256', 'k1');
});

after(() => {
  for (const close of closers) close();
  rmSync(tls.dir, { recursive: true, force: true });
});

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => server.close());
  return (server.address() as AddressInfo).port;
}

/** Accepts TCP connections and never speaks. */
async function silentTcp(): Promise<number> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => sockets.push(s));
  closers.push(() => {
    for (const s of sockets) s.destroy();
  });
  return listen(server);
}

/** Completes TLS, reads the request, never answers (or drips one byte every 100 ms when `drip`). */
async function stalledHttps(drip: boolean): Promise<number> {
  const timers: NodeJS.Timeout[] = [];
  const server = https.createServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, (_req, res) => {
    if (!drip) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"keys":[');
    timers.push(setInterval(() => res.write(' '), 100));
  });
  closers.push(() => {
    for (const t of timers) clearInterval(t);
    server.closeAllConnections();
  });
  return listen(server);
}

describe('timing: a JWKS endpoint that hangs', () => {
  const cases: Array<[string, () => Promise<number>]> = [
    ['a TCP server that never starts TLS', silentTcp],
    ['a server that never answers', () => stalledHttps(false)],
    ['a server that drips its body', () => stalledHttps(true)],
  ];
  for (const [name, start] of cases) {
    it(`${name}: its decisions are refused after the timeout, others do not wait`, async () => {
      const port = await start();
      const keys = new IssuerKeys({ ...KEY_OPTIONS, allowPrivateJwksHosts: ['127.0.0.1'], jwksCaFile: tls.cert, jwksTimeoutMs: TIMEOUT_MS });
      try {
        const jwt = await sign(key, { sub: 'cam1', exp: NOW + 600 }, { kid: 'k1' });
        const t0 = performance.now();
        const hanging = verifyIssuerJwt(jwt, issuerRecord({ algorithms: ['ES256'], jwksUrl: `https://127.0.0.1:${port}/jwks` }), keys, NOW).then((r) => ({ r, ms: performance.now() - t0 }));
        const inline = issuerRecord({ id: 4, algorithms: ['ES256'], jwks: { keys: [key.jwk] } });
        const others: number[] = [];
        for (let i = 0; i < 20; i++) {
          const t1 = performance.now();
          const r = await verifyIssuerJwt(jwt, inline, keys, NOW);
          others.push(performance.now() - t1);
          assert.equal('problem' in r, false);
        }
        const { r, ms } = await hanging;
        assert.deepEqual(r, { problem: `no keys: the JWKS URL has no usable key set yet: no answer within ${TIMEOUT_MS} ms` });
        assert.ok(ms >= TIMEOUT_MS - 20 && ms < TIMEOUT_MS + 1500, `refused after ${ms.toFixed(0)} ms`);
        // Twenty inline decisions together took less than the timeout: none waited on the fetch.
        const total = others.reduce((a, b) => a + b, 0);
        assert.ok(total < TIMEOUT_MS, `20 other decisions took ${total.toFixed(0)} ms`);
      } finally {
        await keys.close();
      }
    });
  }
});
