// Built-in HTTPS (server.tls.certFile / keyFile): the real process with a throw-away self-signed
// certificate, reached with that certificate as the only trusted CA; start-up errors name the
// setting and the file, never a key's content; SIGHUP takes up a renewed certificate.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, runNode, type RunningServer } from '../helpers/process.js';
import { selfSignedCert } from '../helpers/receiver.js';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'sg-tls-proc-'));

interface Answer {
  status: number;
  body: unknown;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

/** One request on a fresh connection, trusting only `ca`. */
function httpsCall(port: number, ca: Buffer, p: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: p, ca, servername: 'localhost', agent: false, headers }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), fingerprint }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const fingerprintOf = (certFile: string) => new X509Certificate(readFileSync(certFile)).fingerprint256;

async function waitForLog(s: RunningServer, msg: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 250; i++) {
    for (const line of s.logs.flatMap((l) => l.split('\n'))) {
      try {
        const j = JSON.parse(line) as Record<string, unknown>;
        if (j.msg === msg) return j;
      } catch {
        /* not JSON */
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no "${msg}" log line:\n${s.logs.join('\n')}`);
}

const listeningLine = (s: RunningServer) => waitForLog(s, 'listening');

async function stop(s: RunningServer) {
  s.proc.kill('SIGTERM');
  return s.exited;
}

async function failsToStart(env: Record<string, string>) {
  const r = await runNode(['--import', 'tsx', 'src/main.ts'], { STREAMGATE_DATA_DIR: tmp(), ...env });
  return [r.code, r.stderr.trim()];
}

describe('built-in TLS (server.tls)', () => {
  before(() => {
    const r = spawnSync('openssl', ['version']);
    if (r.error) throw new Error('openssl is needed to make the test certificates: install the Debian package openssl');
  });

  it('serves HTTPS with the configured certificate: /healthz, an authenticated /api call, tls: true in the listening line', async () => {
    const dir = tmp();
    const cert = selfSignedCert();
    const s = await startServer({ STREAMGATE_DATA_DIR: dir, STREAMGATE_SERVER_TLS_CERTFILE: cert.cert, STREAMGATE_SERVER_TLS_KEYFILE: cert.key });
    try {
      const ca = readFileSync(cert.cert);
      const listening = await listeningLine(s);
      assert.deepEqual([listening.tls, listening.port, listening.host, listening.store], [true, s.port, '127.0.0.1', 'sqlite']);
      assert.deepEqual(await httpsCall(s.port, ca, '/healthz'), { status: 200, body: { status: 'success', data: { alive: true } }, fingerprint: fingerprintOf(cert.cert) });
      const secret = readFileSync(path.join(dir, 'default-api-secret'), 'utf8').trim();
      assert.deepEqual(await httpsCall(s.port, ca, '/api/publish_token/list', { authorization: `Bearer ${secret}` }), {
        status: 200,
        body: { status: 'success', data: [] },
        fingerprint: fingerprintOf(cert.cert),
      });
      assert.deepEqual(await httpsCall(s.port, ca, '/api/publish_token/list', { authorization: 'Bearer wrong' }), {
        status: 401,
        body: { status: 'fail', data: { message: 'Unauthorized' } },
        fingerprint: fingerprintOf(cert.cert),
      });
      // Without the certificate trusted, the client refuses the connection.
      await assert.rejects(httpsCall(s.port, readFileSync(selfSignedCert().cert), '/healthz'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      // Plain HTTP to the TLS port gets no HTTP answer: the server closes the connection.
      await assert.rejects(fetch(`http://127.0.0.1:${s.port}/healthz`), (e: Error) => {
        const cause = e.cause as { code?: string; message?: string };
        assert.deepEqual([e.message, cause.code, cause.message], ['fetch failed', 'UND_ERR_SOCKET', 'other side closed']);
        return true;
      });
      assert.ok(!s.logs.join('\n').includes(readFileSync(cert.key, 'utf8').split('\n')[1]!), 'no part of the key is logged');
    } finally {
      assert.equal(await stop(s), 0, 'SIGTERM still exits 0 over TLS');
    }
  });

  it('takes up a renewed certificate on SIGHUP and keeps the one in use when the new files are bad', async () => {
    const files = selfSignedCert();
    const first = fingerprintOf(files.cert);
    const s = await startServer({ STREAMGATE_DATA_DIR: tmp(), STREAMGATE_SERVER_TLS_CERTFILE: files.cert, STREAMGATE_SERVER_TLS_KEYFILE: files.key });
    try {
      const renewed = selfSignedCert();
      copyFileSync(renewed.cert, files.cert);
      copyFileSync(renewed.key, files.key);
      s.proc.kill('SIGHUP');
      await waitForLog(s, 'TLS certificate reloaded');
      const after = await httpsCall(s.port, readFileSync(renewed.cert), '/healthz');
      assert.deepEqual([after.status, after.fingerprint], [200, fingerprintOf(renewed.cert)]);
      assert.notEqual(after.fingerprint, first);

      writeFileSync(files.key, 'not a key\n');
      s.proc.kill('SIGHUP');
      const refused = await waitForLog(s, 'TLS certificate not reloaded; the previous one stays in use');
      assert.deepEqual([refused.level, refused.reason], [50, `server.tls.keyFile: ${files.key} holds no valid unencrypted PEM private key`]);
      const still = await httpsCall(s.port, readFileSync(renewed.cert), '/healthz');
      assert.deepEqual([still.status, still.fingerprint], [200, fingerprintOf(renewed.cert)]);
    } finally {
      assert.equal(await stop(s), 0);
    }
  });

  it('without server.tls the listening line says tls: false (plain HTTP, as before)', async () => {
    const s = await startServer({ STREAMGATE_DATA_DIR: tmp() });
    try {
      assert.equal((await listeningLine(s)).tls, false);
      assert.equal((await fetch(`${s.base}/healthz`)).status, 200);
    } finally {
      assert.equal(await stop(s), 0);
    }
  });

  it('refuses to start with one of certFile/keyFile without the other (exit 2, naming the missing setting)', async () => {
    const cert = selfSignedCert();
    assert.deepEqual(await failsToStart({ STREAMGATE_SERVER_TLS_CERTFILE: cert.cert }), [
      2,
      'streamgate: invalid configuration: server.tls.keyFile: required when server.tls.certFile is set (both, or neither for plain HTTP)',
    ]);
    assert.deepEqual(await failsToStart({ STREAMGATE_SERVER_TLS_KEYFILE: cert.key }), [
      2,
      'streamgate: invalid configuration: server.tls.certFile: required when server.tls.keyFile is set (both, or neither for plain HTTP)',
    ]);
  });

  it('refuses to start on an unreadable file, a bad PEM or a key of another certificate (exit 2, the path, never the content)', async () => {
    const cert = selfSignedCert();
    const other = selfSignedCert();
    const dir = tmp();
    const missing = path.join(dir, 'missing.pem');
    assert.deepEqual(await failsToStart({ STREAMGATE_SERVER_TLS_CERTFILE: missing, STREAMGATE_SERVER_TLS_KEYFILE: cert.key }), [
      2,
      `streamgate: server.tls.certFile: cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'`,
    ]);

    const badCert = path.join(dir, 'bad-cert.pem');
    writeFileSync(badCert, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    assert.deepEqual(await failsToStart({ STREAMGATE_SERVER_TLS_CERTFILE: badCert, STREAMGATE_SERVER_TLS_KEYFILE: cert.key }), [
      2,
      `streamgate: server.tls.certFile: ${badCert} holds no valid PEM certificate`,
    ]);

    // A damaged key: its content must not reach the output.
    const badKey = path.join(dir, 'bad-key.pem');
    const keyText = readFileSync(cert.key, 'utf8');
    const damaged = keyText.replace(/\n([A-Za-z0-9+/]{20})/, '\n!!$1');
    writeFileSync(badKey, damaged);
    const r = await runNode(['--import', 'tsx', 'src/main.ts'], { STREAMGATE_DATA_DIR: tmp(), STREAMGATE_SERVER_TLS_CERTFILE: cert.cert, STREAMGATE_SERVER_TLS_KEYFILE: badKey });
    assert.deepEqual([r.code, r.stderr.trim(), r.stdout], [2, `streamgate: server.tls.keyFile: ${badKey} holds no valid unencrypted PEM private key`, '']);
    for (const line of keyText.split('\n').filter((l) => l.length > 8 && !l.startsWith('-----'))) assert.ok(!r.stderr.includes(line.slice(0, 16)));

    assert.deepEqual(await failsToStart({ STREAMGATE_SERVER_TLS_CERTFILE: cert.cert, STREAMGATE_SERVER_TLS_KEYFILE: other.key }), [
      2,
      `streamgate: server.tls.keyFile: the key in ${other.key} does not belong to the certificate in ${cert.cert}`,
    ]);
  });
});
