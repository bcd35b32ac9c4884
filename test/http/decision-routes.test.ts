// The decision endpoints' own route table answers exactly as express's router did: the same
// path matching rules, the same fall-through for what it does not know, errors to the app's
// error handler, and the route label on the request metrics.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { DecisionRoutes } from '../../src/http/decision-routes.js';
import { sqliteFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';

/** A small app: the table first, then express routes and a 404/error tail like Streamgate's. */
function miniApp(routes: DecisionRoutes) {
  const app = express();
  app.use(routes.middleware());
  app.get('/after', (_req, res) => void res.send('express'));
  app.use((req, res) => void res.status(404).send(`404 ${req.method} ${req.path}`));
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).send(`error: ${err.message}`));
  return app;
}

describe('DecisionRoutes (matching as express does)', () => {
  const routes = new DecisionRoutes()
    .guard('/g', (req, res, next) => (req.headers['x-key'] === 'k' ? next() : void res.status(401).send('guard')))
    .post('/hooks/a', (_req, res) => void res.send('post a'))
    .get('/hooks/a', (req, res) => void res.send(`get a ${(req.route as { path: string }).path}`))
    .all('/any', (req, res) => void res.send(`any ${req.method}`))
    .allUnder('/any', (req, res) => void res.send(`under ${req.originalUrl} ${(req.route as { path: string }).path}`))
    .post(
      '/chain',
      (_req, res, next) => {
        res.locals.n = 1;
        next();
      },
      (_req, res) => void res.send(`chain ${res.locals.n}`),
    )
    .post('/next-route', (_req, _res, next) => next('route'), (_req, res) => void res.send('never'))
    .post('/throws', () => {
      throw new Error('sync boom');
    })
    .post('/rejects', async () => {
      throw new Error('async boom');
    })
    .post('/next-error', (_req, _res, next) => next(new Error('passed on')))
    .get('/g/x', (_req, res) => void res.send('guarded'));
  const app = miniApp(routes);

  it('matches case-insensitively and with one trailing slash, on the raw path, ignoring the query', async () => {
    for (const p of ['/hooks/a', '/HOOKS/A', '/hooks/a/', '/hooks/a?x=1', '/hooks/a/?x=/y']) {
      const r = await request(app).post(p);
      assert.deepEqual([p, r.status, r.text], [p, 200, 'post a']);
    }
    const encoded = await request(app).post('/hooks/%61');
    assert.deepEqual([encoded.status, encoded.text], [404, '404 POST /hooks/%61']);
    // An absolute-form request line (as a forward proxy would send it) names the same path.
    const absolute = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const server = app.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        const r = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: `http://127.0.0.1:${port}/hooks/a?x=1` }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => {
            server.close();
            resolve({ status: res.statusCode ?? 0, text });
          });
        });
        r.on('error', reject).end();
      });
    });
    assert.deepEqual(absolute, { status: 200, text: 'post a' });
    const doubled = await request(app).post('/hooks/a//');
    assert.deepEqual([doubled.status, doubled.text], [404, '404 POST /hooks/a//']);
  });

  it('picks the chain of the method; GET also answers HEAD; another method falls through to the app', async () => {
    assert.equal((await request(app).get('/hooks/a')).text, 'get a /hooks/a');
    const head = await request(app).head('/hooks/a');
    assert.deepEqual([head.status, head.headers['content-length']], [200, String('get a /hooks/a'.length)]);
    const put = await request(app).put('/hooks/a');
    assert.deepEqual([put.status, put.text], [404, '404 PUT /hooks/a']);
    assert.equal((await request(app).delete('/any')).text, 'any DELETE');
    assert.equal((await request(app).get('/after')).text, 'express');
  });

  it('serves every path below a prefix, raw, labelled <prefix>/*rest', async () => {
    const r = await request(app).get('/any/hls/%E0%A4%A/x.m3u8?token=t');
    assert.deepEqual([r.status, r.text], [200, 'under /any/hls/%E0%A4%A/x.m3u8?token=t /any/*rest']);
    const other = await request(app).get('/anything');
    assert.deepEqual([other.status, other.text], [404, '404 GET /anything']);
  });

  it("runs a chain through next(); next('route') leaves it for the app", async () => {
    assert.equal((await request(app).post('/chain')).text, 'chain 1');
    const r = await request(app).post('/next-route');
    assert.deepEqual([r.status, r.text], [404, '404 POST /next-route']);
  });

  it('sends thrown errors, rejected promises and next(err) to the error handler', async () => {
    assert.deepEqual([(await request(app).post('/throws')).text], ['error: sync boom']);
    assert.deepEqual([(await request(app).post('/rejects')).text], ['error: async boom']);
    assert.deepEqual([(await request(app).post('/next-error')).text], ['error: passed on']);
  });

  it('runs a guard before the lookup, for known and unknown paths below its prefix only', async () => {
    assert.deepEqual([(await request(app).get('/g/x')).status, (await request(app).get('/g/x')).text], [401, 'guard']);
    assert.equal((await request(app).get('/g/x').set('x-key', 'k')).text, 'guarded');
    const unknown = await request(app).get('/G/unknown');
    assert.deepEqual([unknown.status, unknown.text], [401, 'guard']);
    const unknownWithKey = await request(app).get('/g/unknown').set('x-key', 'k');
    assert.deepEqual([unknownWithKey.status, unknownWithKey.text], [404, '404 GET /g/unknown']);
    const sibling = await request(app).get('/gx');
    assert.deepEqual([sibling.status, sibling.text], [404, '404 GET /gx']);
  });

  it('refuses a route declared twice', () => {
    assert.throws(() => new DecisionRoutes().post('/x', () => {}).post('/X/', () => {}), /POST \/X\/ is declared twice/);
  });

  it('lists its routes', () => {
    assert.deepEqual(new DecisionRoutes().post('/a', () => {}).get('/a', () => {}).allUnder('/b', () => {}).list(), ['post /a', 'get /a', 'all /b/*rest']);
  });
});

describe('DecisionRoutes in Streamgate', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make(), { hooks: { secret: 'hook-secret-0123456789abcdefghijkl' } });
  });
  after(() => factory.teardown());

  it('answers the hooks as before: wrong method 404, unknown hook 401 without the secret and 404 with it', async () => {
    const get = await request(t.app).get('/hooks/authorize').set('x-streamgate-hook-secret', 'hook-secret-0123456789abcdefghijkl');
    assert.deepEqual([get.status, get.body], [404, { status: 'fail', data: { message: 'Not found: GET /hooks/authorize' } }]);
    const unknown = await request(t.app).post('/hooks/nope');
    assert.deepEqual([unknown.status, unknown.body], [401, { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' }]);
    const known = await request(t.app).post('/hooks/nope').set('x-streamgate-hook-secret', 'hook-secret-0123456789abcdefghijkl');
    assert.deepEqual([known.status, known.body], [404, { status: 'fail', data: { message: 'Not found: POST /hooks/nope' } }]);
  });

  it('keeps the body gate and the error answers of the app', async () => {
    const h = { 'x-streamgate-hook-secret': 'hook-secret-0123456789abcdefghijkl' };
    const form = await request(t.app).post('/hooks/authorize').set(h).type('form').send('action=publish');
    assert.deepEqual([form.status, form.body], [415, { status: 'fail', data: { message: 'Unsupported Media Type' } }]);
    const bad = await request(t.app).post('/hooks/authorize').set(h).type('json').send('{"action":');
    assert.deepEqual([bad.status, bad.body], [400, { status: 'fail', data: { message: 'Malformed JSON in request body' } }]);
  });

  it('labels the request metrics with the route pattern', async () => {
    await request(t.app).get('/hooks/auth-request/hls/cam1/index.m3u8').set('x-streamgate-hook-secret', 'hook-secret-0123456789abcdefghijkl');
    await request(t.app).options('/api/director/subscribe');
    const text = (await request(t.app).get('/metrics')).text;
    assert.match(text, /streamgate_http_requests_total\{[^}]*route="\/hooks\/auth-request\/\*rest"[^}]*\} 1/);
    assert.match(text, /streamgate_http_requests_total\{[^}]*route="unmatched"[^}]*status="204"[^}]*\} 1|streamgate_http_requests_total\{[^}]*status="204"[^}]*route="unmatched"[^}]*\} 1/);
  });
});
