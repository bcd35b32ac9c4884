// The route table of every surface (src/http/surfaces.ts) is what the app serves and what guards
// it: every route mounted on express or on the decision table is an entry of the table with the
// auth it declares, every entry is mounted, and every route whose declaration is not 'none' refuses
// a caller without credentials with its auth's exact refusal, through the production server (the
// decision table before express) and through the express app alone (supertest). The namespace
// guards of unknown paths come from the same table, and so does docs/api.md's route list.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import express from 'express';
import request from 'supertest';
import { testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { sqliteFactory } from '../helpers/stores.js';
import type { DecisionRoutes } from '../../src/http/decision-routes.js';
import { mountSurfaces, namespaceAuths, type Endpoint } from '../../src/http/surfaces.js';
import { withRouteList } from '../../src/http/route-list.js';

const HOOK_SECRET = 'hook-secret-route-table-0123456789abcdef';
const UNAUTHORIZED = { status: 'fail', data: { message: 'Unauthorized' } };
const HOOK_REFUSED = { allowed: false, reason: 'hook_secret_required', message: 'Unauthorized: hook secret required' };
const TOKEN_REQUIRED = { status: 'fail', data: { message: 'Unauthorized: Token required', reason: 'token_required' } };

/** The mounted name of a route, as express's route stack and DecisionRoutes.list() spell it. */
const mounted = (method: string, path: string) => `${method.toLowerCase()} ${path}`;

describe('security: one route table declares and guards every surface', () => {
  const factory = sqliteFactory();
  let t: TestApp;
  let http: Listening;
  let table: Endpoint[];
  let acct: { id: string; secret: string };

  before(async () => {
    await factory.setup();
    t = await testApp(await factory.make(), { hooks: { secret: HOOK_SECRET } });
    http = await listen(t.app);
    table = t.app.locals.routeTable as Endpoint[];
    acct = await t.account();
    // A stream whose viewers need a token: the director's subscribe refuses a caller without one.
    const r = await request(t.app)
      .post('/api/publish_token')
      .set('authorization', `Bearer ${acct.secret}`)
      .send({ label: 'secured', streams: [{ streamName: 'secured1' }], subscribeRequiresAuth: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });
  after(async () => {
    await http.close();
    await factory.teardown();
  });

  it('holds every surface, each entry once', () => {
    const surfaces = new Set(table.map((e) => e.surface));
    assert.deepEqual([...surfaces].sort(), ['admin', 'director', 'hooks', 'management', 'operations']);
    const names = table.map((e) => `${e.served} ${mounted(e.method, e.path)}`);
    assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), []);
    for (const [path, auth] of [
      ['/api/publish_token', 'apiSecret'],
      ['/admin/accounts', 'admin'],
      ['/hooks/authorize', 'hookSecret'],
      ['/api/director/publish', 'streamToken'],
      ['/.well-known/jwks.json', 'none'],
      ['/healthz', 'none'],
      ['/readyz', 'none'],
      ['/metrics', 'none'],
      ['/api/openapi.json', 'none'],
      ['/dashboard', 'none'],
    ]) {
      assert.deepEqual([...new Set(table.filter((e) => e.path === path).map((e) => e.auth))], [auth], path);
    }
  });

  it('every route express and the decision table serve is an entry of the table, and every entry is served', () => {
    const stack = (t.app as unknown as { router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> } }).router.stack;
    const express = stack.flatMap((l) => (l.route ? Object.keys(l.route.methods).map((m) => mounted(m, l.route!.path)) : []));
    const decision = (t.app.locals.decisionRoutes as DecisionRoutes).list();
    const declaredExpress = table.filter((e) => e.served === 'route').map((e) => mounted(e.method, e.path));
    const declaredDecision = table
      .filter((e) => e.served === 'decision')
      .flatMap((e) => (e.below ? [mounted(e.method, e.path), `all ${e.path}/*rest`] : [mounted(e.method, e.path)]));
    assert.deepEqual(express.sort(), declaredExpress.sort());
    assert.deepEqual(decision.sort(), declaredDecision.sort());
    assert.ok(express.length >= 90 && decision.length >= 15, `${express.length} express routes, ${decision.length} decision routes`);
  });

  /** A request for each route of an entry, with nothing that could be a credential. */
  function asks(e: Endpoint): Array<{ method: string; path: string; body?: unknown }> {
    const path = e.path.replace(/:(\w+)/g, 'x1');
    const method = e.method === 'all' ? 'GET' : e.method.toUpperCase();
    const body = e.auth === 'streamToken' ? { streamName: 'secured1', streamAccountId: acct.id } : method === 'GET' ? undefined : {};
    const out = [{ method, path, body }];
    if (e.below) out.push({ method, path: `${path}/below/x`, body });
    return out;
  }

  /** The exact refusal of each auth to a caller without credentials. */
  const refusal = (e: Endpoint): [number, unknown] => {
    switch (e.auth) {
      case 'apiSecret':
      case 'admin':
        return [401, UNAUTHORIZED];
      case 'hookSecret':
        return [401, HOOK_REFUSED];
      case 'streamToken':
        return [401, TOKEN_REQUIRED];
      case 'none':
        throw new Error(`${e.path} needs nothing`);
    }
  };

  /** A director refusal carries its decision's id (docs/api.md#decision-history): a version 7 UUID, set aside before the body is compared. */
  const idSetAside = (body: unknown): unknown => {
    const data = (body as { data?: Record<string, unknown> }).data;
    if (data === undefined || !('decisionId' in data)) return body;
    const { decisionId, ...rest } = data;
    assert.match(String(decisionId), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    return { ...(body as object), data: rest };
  };

  it('every guarded route refuses a caller without credentials with its auth\'s refusal, through the server and through express alone', async () => {
    const guarded = table.filter((e) => e.auth !== 'none');
    assert.ok(guarded.length >= 100, `${guarded.length} guarded entries`);
    let asked = 0;
    for (const e of guarded) {
      const [status, body] = refusal(e);
      for (const a of asks(e)) {
        const what = `${a.method} ${a.path} (${e.surface}, auth ${e.auth})`;
        const served = await fetch(http.base + a.path, {
          method: a.method,
          headers: a.body === undefined ? {} : { 'content-type': 'application/json' },
          body: a.body === undefined ? undefined : JSON.stringify(a.body),
        });
        assert.deepEqual([served.status, e.auth === 'streamToken' ? idSetAside(await served.json()) : await served.json()], [status, body], `server: ${what}`);
        const direct = a.body === undefined ? await request(t.app)[a.method.toLowerCase() as 'get'](a.path) : await request(t.app)[a.method.toLowerCase() as 'post'](a.path).send(a.body as object);
        assert.deepEqual([direct.status, e.auth === 'streamToken' ? idSetAside(direct.body) : direct.body], [status, body], `express: ${what}`);
        asked += 2;
      }
    }
    assert.ok(asked >= 200, `${asked} requests`);
  });

  it("the routes declared 'none' answer without credentials", async () => {
    const answers: Record<string, number> = {};
    for (const e of table.filter((x) => x.auth === 'none')) {
      for (const a of asks(e)) {
        const method = e.served === 'layer' && e.surface === 'director' ? 'OPTIONS' : a.method;
        const r = await fetch(http.base + a.path, { method, redirect: 'manual' });
        answers[`${method} ${a.path}`] = r.status;
        await r.arrayBuffer();
      }
    }
    for (const [route, status] of Object.entries(answers)) assert.ok(![401, 403].includes(status), `${route}: ${status}`);
    assert.equal(answers['GET /healthz'], 200);
    assert.equal(answers['GET /api/openapi.json'], 200);
    assert.equal(answers['GET /.well-known/jwks.json'], 200);
    assert.equal(answers['OPTIONS /api/director'], 204);
  });

  it("a request no route serves meets the guard its namespace's surface declares", async () => {
    assert.deepEqual(namespaceAuths(table), [
      { surface: 'management', prefix: '/api', auth: 'apiSecret', served: 'route' },
      { surface: 'admin', prefix: '/admin', auth: 'admin', served: 'route' },
      { surface: 'hooks', prefix: '/hooks', auth: 'hookSecret', served: 'decision' },
    ]);
    const cases: Array<[string, string, Record<string, string>, number, unknown]> = [
      ['GET', '/api/nothing-here', {}, 401, UNAUTHORIZED],
      ['GET', '/api/nothing-here', { authorization: `Bearer ${acct.secret}` }, 404, { status: 'fail', data: { message: 'Not found: GET /api/nothing-here' } }],
      ['DELETE', '/admin/nothing-here', {}, 401, UNAUTHORIZED],
      ['POST', '/hooks/nothing-here', {}, 401, HOOK_REFUSED],
      ['PUT', '/hooks/authorize', {}, 401, HOOK_REFUSED],
      ['PUT', '/hooks/authorize', { 'x-streamgate-hook-secret': HOOK_SECRET }, 404, { status: 'fail', data: { message: 'Not found: PUT /hooks/authorize' } }],
      ['GET', '/api/director/publish', {}, 401, UNAUTHORIZED],
      ['GET', '/nothing-here', {}, 404, { status: 'fail', data: { message: 'Not found: GET /nothing-here' } }],
    ];
    for (const [method, path, headers, status, body] of cases) {
      const r = await fetch(http.base + path, { method, headers });
      assert.deepEqual([r.status, await r.json()], [status, body], `${method} ${path} ${JSON.stringify(headers)}`);
    }
  });

  it('docs/api.md lists the table (npm run docs:routes writes it)', () => {
    const page = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    assert.equal(page, withRouteList(page, table), 'docs/api.md: the route list is out of date: run npm run docs:routes');
  });
});

describe('mountSurfaces: the one mount', () => {
  const ok: express.RequestHandler = (_req, res) => void res.json({ ok: true });
  const entry = (over: Partial<Endpoint>): Endpoint => ({ surface: 'management', method: 'get', path: '/api/x', auth: 'apiSecret', served: 'route', summary: 's', openapi: [], handlers: [ok], ...over });

  it('refuses a declaration naming a guard it was not given', () => {
    assert.throws(
      () => mountSurfaces({ app: express() }, [entry({ auth: 'hookSecret' })], { apiSecret: ok }, []),
      (e: unknown) => e instanceof TypeError && e.message === "GET /api/x: no guard for auth 'hookSecret'",
    );
  });

  it('refuses a surface whose entries declare several auths: its namespace would have no one refusal', () => {
    assert.throws(
      () => mountSurfaces({ app: express() }, [entry({}), entry({ path: '/api/y', auth: 'none' })], { apiSecret: ok }, []),
      (e: unknown) => e instanceof TypeError && /^surface management: .*namespace \/api needs one$/.test(e.message),
    );
  });

  it("a guard given as null is the endpoint's own (the decision reads the credential): nothing runs before it", async () => {
    const app = express();
    mountSurfaces({ app }, [entry({ surface: 'director', path: '/d', auth: 'streamToken' })], { streamToken: null }, []);
    const r = await request(app).get('/d');
    assert.deepEqual([r.status, r.body], [200, { ok: true }]);
  });
});
