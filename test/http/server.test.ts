// The production HTTP server (src/http/server.ts): requests and responses are born with the app's
// prototypes, so express does not swap prototypes per request, and express's API is unchanged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/http/server.js';

describe('createHttpServer', () => {
  it("constructs requests and responses with the app's prototypes; express's req/res API works as before", async () => {
    const app = express();
    (app.request as unknown as { custom: string }).custom = 'added by a user'; // own properties of the app prototypes carry over
    const seen: Array<Record<string, unknown>> = [];
    app.post('/x/:id', express.json(), (req, res) => {
      seen.push({
        reqClass: req.constructor.name,
        resClass: res.constructor.name,
        reqProtoIsApp: Object.getPrototypeOf(req) === app.request,
        resProtoIsApp: Object.getPrototypeOf(res) === app.response,
        sameApp: req.app === app && res.app === app,
        custom: (req as unknown as { custom: string }).custom,
        header: req.get('X-Thing'),
        id: req.params.id,
        body: req.body,
      });
      res.status(201).set('x-done', 'yes').json({ ok: true });
    });
    const server = createHttpServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      for (let i = 0; i < 2; i++) {
        const r = await fetch(`http://127.0.0.1:${port}/x/7`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-thing': 't' }, body: '{"a":1}' });
        assert.deepEqual([r.status, r.headers.get('x-done'), r.headers.get('content-type'), await r.json()], [201, 'yes', 'application/json; charset=utf-8', { ok: true }]);
      }
      const expected = { reqClass: 'AppRequest', resClass: 'AppResponse', reqProtoIsApp: true, resProtoIsApp: true, sameApp: true, custom: 'added by a user', header: 't', id: '7', body: { a: 1 } };
      assert.deepEqual(seen, [expected, expected]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
