// The production server over HTTPS (server.tls): requests and responses are still born with the
// app's prototypes, as over plain HTTP.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/http/server.js';
import { loadTls } from '../../src/http/tls.js';
import { selfSignedCert } from '../helpers/receiver.js';

describe('createHttpServer with TLS', () => {
  it("constructs requests and responses with the app's prototypes over HTTPS", async () => {
    const files = selfSignedCert();
    const app = express();
    const seen: Array<Record<string, unknown>> = [];
    app.get('/x/:id', (req, res) => {
      seen.push({
        reqClass: req.constructor.name,
        resClass: res.constructor.name,
        reqProtoIsApp: Object.getPrototypeOf(req) === app.request,
        resProtoIsApp: Object.getPrototypeOf(res) === app.response,
        secure: req.secure,
        protocol: req.protocol,
        id: req.params.id,
      });
      res.status(201).json({ ok: true });
    });
    const server = createHttpServer(app, loadTls({ certFile: files.cert, keyFile: files.key }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await new Promise<[number, string]>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/x/7', ca: readFileSync(files.cert), servername: 'localhost' }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve([res.statusCode!, body]));
        });
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(answer, [201, '{"ok":true}']);
      assert.deepEqual(seen, [{ reqClass: 'AppRequest', resClass: 'AppResponse', reqProtoIsApp: true, resProtoIsApp: true, secure: true, protocol: 'https', id: '7' }]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
