// The authentication a management route declares is what guards it. Every route of the mounted
// route table is asked without credentials and with the other kind of credential, by its method,
// HEAD, OPTIONS and every spelling of its path a client could try (trailing slash, letter case,
// doubled and encoded separators), written byte for byte so no client library normalises it; each
// answer is exactly the declared refusal and nothing stored changes. A small table mounted on a
// bare app shows the declaration, not the path, decides.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import express, { type Express, type RequestHandler } from 'express';
import request from 'supertest';
import { z } from 'zod';
import { ADMIN_KEY, testApp, type TestApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { rawRequest } from '../helpers/raw-http.js';
import { sqliteFactory } from '../helpers/stores.js';
import type { Endpoint } from '../../src/http/surfaces.js';
import { mountRoutes, namespaceOf, route, unroutedRequests, type Guards, type RouteSpec } from '../../src/http/route.js';
import { ApiError } from '../../src/errors.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';

const UNAUTHORIZED = { status: 'fail', data: { message: 'Unauthorized' } };

/** Every spelling of a path to try: the first segment (`/api`, `/admin`) is where prefix guards used to look. */
function spellings(path: string): Array<{ name: string; target: string }> {
  const cut = path.indexOf('/', 1);
  const first = path.slice(0, cut);
  const rest = path.slice(cut + 1);
  const titled = path.replace(/(^|[/_])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
  return [
    { name: 'as declared', target: path },
    { name: 'trailing slash', target: `${path}/` },
    { name: 'title case', target: `${first.toUpperCase()}${titled.slice(first.length)}` },
    { name: 'upper case', target: path.toUpperCase() },
    { name: 'leading doubled slash', target: `/${path}` },
    { name: 'doubled slash after the first segment', target: `${first}//${rest}` },
    { name: 'trailing doubled slash', target: `${path}//` },
    { name: 'encoded slash', target: `${first}%2F${rest}` },
    { name: 'encoded slash, lower case', target: `${first}%2f${rest}` },
    { name: 'every slash encoded', target: `/${path.slice(1).replaceAll('/', '%2F')}` },
    { name: 'encoded backslash', target: `${first}%5C${rest}` },
  ];
}

/** The methods to try on a route: its own, HEAD for GET routes, and OPTIONS. */
const methodsOf = (r: RouteSpec) => [r.method.toUpperCase(), ...(r.method === 'get' ? ['HEAD'] : []), 'OPTIONS'];

const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

describe('security: the declared authentication guards every management route', () => {
  const factory = sqliteFactory();
  let keyed: TestApp; // admin key configured
  let keyless: TestApp; // no admin key: the admin API is off
  let keyedHttp: Listening;
  let keylessHttp: Listening;
  let routes: RouteSpec[];
  let acct: { id: string; secret: string };
  let keylessAccount: { id: string; secret: string };
  let params: Record<string, string>;
  /** What the disabled admin API adds after "Not found: METHOD PATH" (read from an /admin path that does not exist). */
  let offHint: string;
  /** What a disabled admin API answers on every route: the 404 of an /admin path that does not exist. */
  const adminOff = (method: string, path: string) => ({ status: 'fail', data: { message: `Not found: ${method} ${path}${offHint}` } });

  /** Everything the routes could change, read through the store. */
  const stored = async (t: TestApp, accountId: string) => {
    const q = { sortBy: 'AddedOn' as const, page: 1, itemsOnPage: 100, descending: false };
    return JSON.stringify({
      accounts: await t.services.store.listAccounts(),
      version: await t.services.store.accountVersion(accountId),
      publish: await t.services.store.listTokens(accountId, 'publish', q),
      subscribe: await t.services.store.listTokens(accountId, 'subscribe', q),
      webhooks: await t.services.store.listWebhooks(accountId, { itemCount: 100, descending: false }),
      recordings: await t.services.store.listRecordings(accountId),
    });
  };

  /** The declared path with its parameters filled with ids that exist, so a guard that let a call through would show. */
  const filled = (path: string) =>
    path.replace(/:(\w+)/g, (_m, name: string) => {
      const v = params[name];
      if (v === undefined) throw new Error(`no value for the path parameter :${name} of ${path}: add one to params`);
      return v;
    });

  before(async () => {
    await factory.setup();
    keyed = await testApp(await factory.make());
    keyless = await testApp(await factory.make(), { adminKey: '' });
    keyedHttp = await listen(keyed.app);
    keylessHttp = await listen(keyless.app);
    routes = keyed.app.locals.managementRoutes as RouteSpec[];
    acct = await keyed.account();
    const made = await keyless.services.accounts.create('acme', SYSTEM_ACTOR);
    keylessAccount = { id: made.account.id, secret: made.apiSecret };
    const pub = await request(keyed.app).post('/api/publish_token').set('authorization', `Bearer ${acct.secret}`).send({ label: 'l', streams: [{ streamName: 'cam1' }] });
    assert.equal(pub.status, 200);
    params = { id: String(pub.body.data.id), accountId: acct.id, kind: 'feeds', streamName: 'cam1' };
    // the hosted endpoints Streamgate does not provide (answered 501 once authenticated)
    Object.assign(params, { tokenId: params.id, transcoderId: 't1', instanceId: 'i1', recordFileId: '1', mediaAssetId: 'm1', type: 'clip', decisionId: '019ac6b2-3f41-7c2e-9b1d-5e0f7a6c2d18' });
    const nothing = await rawRequest(Number(new URL(keylessHttp.base).port), '/admin/zz-nothing');
    const message = (nothing.json as { data: { message: string } }).data.message;
    assert.equal(nothing.status, 404);
    assert.ok(message.startsWith('Not found: GET /admin/zz-nothing'), message);
    offHint = message.slice('Not found: GET /admin/zz-nothing'.length);
  });
  after(async () => {
    await keyedHttp?.close();
    await keylessHttp?.close();
    await factory.teardown();
  });

  it('mounts a table that declares every route express serves under /api and /admin', () => {
    assert.ok(routes.length >= 30, `the mounted table has ${routes.length} routes`);
    const declared = new Map<string, string>((keyed.app.locals.routeTable as Endpoint[]).map((r) => [key(r), r.auth]));
    // The OpenAPI document describes the public API and is served to anyone.
    declared.set('GET /api/openapi.json', 'none');
    const stack = (keyed.app as unknown as { router: { stack: Array<{ route?: { path: string; methods: Record<string, boolean> } }> } }).router.stack;
    const served = stack.flatMap((l) => (l.route ? Object.keys(l.route.methods).map((m) => ({ method: m, path: l.route!.path })) : []));
    const guardedSpace = served.filter((r) => namespaceOf(r.path, ['/api', '/admin']) !== undefined);
    assert.ok(guardedSpace.length >= routes.length);
    for (const r of guardedSpace) assert.ok(declared.has(key(r)), `${key(r)} is served but declared nowhere`);
    for (const r of routes) assert.ok(['apiSecret', 'admin'].includes(r.auth), `${key(r)}: ${r.auth}`);
  });

  it('without credentials: every route, method and spelling answers its declared refusal, and nothing changes', async () => {
    const before = [await stored(keyed, acct.id), await stored(keyless, keylessAccount.id)];
    let asked = 0;
    for (const r of routes) {
      const path = filled(r.path);
      for (const method of methodsOf(r)) {
        for (const { name, target } of spellings(path)) {
          for (const [which, http] of [['keyed', keyedHttp], ['keyless', keylessHttp]] as const) {
            const port = Number(new URL(http.base).port);
            const a = await rawRequest(port, target, {}, method);
            asked++;
            const what = `${which} ${method} ${target} (${key(r)}, ${name}, auth ${r.auth})`;
            const adminOffHere = r.auth === 'admin' && which === 'keyless';
            assert.equal(a.status, adminOffHere ? 404 : 401, `${what}: ${a.status} ${a.body.toString().slice(0, 200)}`);
            if (method === 'HEAD') assert.equal(a.body.length, 0, what);
            else assert.deepEqual(a.json, adminOffHere ? adminOff(method, target) : UNAUTHORIZED, what);
          }
        }
      }
    }
    assert.ok(asked > 1000, `${asked} requests`);
    assert.deepEqual([await stored(keyed, acct.id), await stored(keyless, keylessAccount.id)], before);
  });

  it('the other kind of credential is no credential: an API secret on admin routes, the admin key on API routes', async () => {
    const before = [await stored(keyed, acct.id), await stored(keyless, keylessAccount.id)];
    for (const r of routes) {
      const path = filled(r.path);
      for (const method of methodsOf(r)) {
        for (const { name, target } of spellings(path)) {
          const what = `${method} ${target} (${key(r)}, ${name})`;
          if (r.auth === 'admin') {
            const withSecret = await rawRequest(Number(new URL(keyedHttp.base).port), target, { authorization: `Bearer ${acct.secret}` }, method);
            assert.equal(withSecret.status, 401, `API secret: ${what}`);
            if (method !== 'HEAD') assert.deepEqual(withSecret.json, UNAUTHORIZED, `API secret: ${what}`);
            const off = await rawRequest(Number(new URL(keylessHttp.base).port), target, { authorization: `Bearer ${keylessAccount.secret}` }, method);
            assert.equal(off.status, 404, `API secret, admin API off: ${what}`);
            if (method !== 'HEAD') assert.deepEqual(off.json, adminOff(method, target), `API secret, admin API off: ${what}`);
          } else {
            const withKey = await rawRequest(Number(new URL(keyedHttp.base).port), target, { authorization: `Bearer ${ADMIN_KEY}` }, method);
            assert.equal(withKey.status, 401, `admin key: ${what}`);
            if (method !== 'HEAD') assert.deepEqual(withKey.json, UNAUTHORIZED, `admin key: ${what}`);
          }
        }
      }
    }
    assert.deepEqual([await stored(keyed, acct.id), await stored(keyless, keylessAccount.id)], before);
  });

  it('refuses a caller without credentials before reading its body: 401, not 400, 413 or 415', async () => {
    const before = await stored(keyed, acct.id);
    for (const r of routes.filter((x) => x.method !== 'get')) {
      const path = filled(r.path);
      for (const [body, type] of [
        ['{"label":', 'application/json'],
        ['label=x', 'text/plain'],
        ['{"label":"x"}', 'application/json; charset=utf-7'],
      ]) {
        const a = await request(keyed.app)[r.method](path).set('content-type', type).send(body);
        assert.deepEqual([a.status, a.body], [401, UNAUTHORIZED], `${key(r)} with ${type}: ${body}`);
      }
    }
    assert.equal(await stored(keyed, acct.id), before);
  });

  it('routing: letter case and a trailing slash reach the route (behind its guard); doubled or encoded separators reach none', async () => {
    const port = Number(new URL(keyedHttp.base).port);
    const api = { authorization: `Bearer ${acct.secret}` };
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    for (const target of ['/api/publish_token/list', '/API/Publish_Token/List', '/API/PUBLISH_TOKEN/LIST', '/api/publish_token/list/']) {
      const a = await rawRequest(port, target, api);
      assert.equal(a.status, 200, target);
      assert.equal((a.json as { data: Array<{ id: number }> }).data[0].id, Number(params.id), target);
    }
    for (const target of ['/admin/accounts', '/ADMIN/ACCOUNTS', '/Admin/Accounts/']) {
      const a = await rawRequest(port, target, admin);
      assert.equal(a.status, 200, target);
      assert.deepEqual((a.json as { data: Array<{ id: string }> }).data.map((x) => x.id), [acct.id], target);
    }
    for (const [target, auth] of [
      ['//api/publish_token/list', api],
      ['/api//publish_token/list', api],
      ['/api/publish_token//list', api],
      ['/api%2Fpublish_token/list', api],
      ['/api/publish_token%2Flist', api],
      ['/api%5Cpublish_token/list', api],
      ['//admin/accounts', admin],
      ['/admin%2Faccounts', admin],
      ['/api/nothing-here', api],
      ['/admin/nothing-here', admin],
    ] as const) {
      const a = await rawRequest(port, target, auth);
      assert.deepEqual([a.status, a.json], [404, { status: 'fail', data: { message: `Not found: GET ${target}` } }], target);
    }
  });

  it('a request no route serves gets its namespace\'s refusal, as before the routes carried their guards', async () => {
    for (const target of ['/api', '/api/', '/api/nothing-here', '/API/Nothing', '/admin', '/admin/nothing-here', '//admin/x']) {
      const keyedAnswer = await rawRequest(Number(new URL(keyedHttp.base).port), target);
      assert.deepEqual([keyedAnswer.status, keyedAnswer.json], [401, UNAUTHORIZED], target);
      const off = await rawRequest(Number(new URL(keylessHttp.base).port), target);
      if (namespaceOf(target, ['/admin'])) assert.deepEqual([off.status, off.json], [404, adminOff('GET', target)], target);
      else assert.deepEqual([off.status, off.json], [401, UNAUTHORIZED], target);
    }
    // Outside the guarded namespaces a miss is a plain 404, with or without credentials.
    for (const target of ['/apix/publish_token/list', '/administrator', '/nothing']) {
      const a = await rawRequest(Number(new URL(keyedHttp.base).port), target);
      assert.deepEqual([a.status, a.json], [404, { status: 'fail', data: { message: `Not found: GET ${target}` } }], target);
    }
    // The public endpoints under /api stay public.
    assert.equal((await rawRequest(Number(new URL(keyedHttp.base).port), '/api/openapi.json')).status, 200);
  });
});

describe('mountRoutes: the declaration decides, not the path', () => {
  const guard = (needed: string): RequestHandler => (req, _res, next) => next(req.get('x-key') === needed ? undefined : ApiError.unauthorized());
  const guards: Guards = { apiSecret: guard('secret'), admin: guard('admin') };
  const answer = (name: string) => route({ method: 'get', path: '', summary: name, tag: 't', auth: 'none', response: z.string(), handler: async () => name });

  function app(table: RouteSpec[]): Express {
    const a = express();
    mountRoutes(a, table, { unknownFields: 'ignore', guards, bodyParsers: [express.json()] });
    a.use(unroutedRequests({ '/api': guards.apiSecret, '/admin': guards.admin }, [express.json()]));
    a.use((_req, _res, next) => next(new ApiError(404, 'Not found')));
    a.use(((err: ApiError, _req, res, _next) => void res.status(err.status).json({ message: err.message })) as express.ErrorRequestHandler);
    return a;
  }

  // Declarations that disagree with their paths' namespaces: only the declaration can be right.
  const table: RouteSpec[] = [
    { ...answer('open'), path: '/api/open', auth: 'none' },
    { ...answer('ops'), path: '/api/ops', auth: 'admin' },
    { ...answer('self'), path: '/admin/self', auth: 'apiSecret' },
    { ...answer('elsewhere'), path: '/elsewhere', auth: 'apiSecret' },
  ];

  it('answers each route as declared, whatever namespace its path is in', async () => {
    const a = app(table);
    const cases: Array<[string, string | undefined, number, unknown]> = [
      ['/api/open', undefined, 200, { status: 'success', data: 'open' }],
      ['/API/Open/', undefined, 200, { status: 'success', data: 'open' }],
      ['/api/ops', undefined, 401, { message: 'Unauthorized' }],
      ['/api/ops', 'secret', 401, { message: 'Unauthorized' }],
      ['/API/OPS/', 'secret', 401, { message: 'Unauthorized' }],
      ['/api/ops', 'admin', 200, { status: 'success', data: 'ops' }],
      ['/admin/self', undefined, 401, { message: 'Unauthorized' }],
      ['/admin/self', 'admin', 401, { message: 'Unauthorized' }],
      ['/admin/self', 'secret', 200, { status: 'success', data: 'self' }],
      ['/elsewhere', undefined, 401, { message: 'Unauthorized' }],
      ['/Elsewhere/', 'admin', 401, { message: 'Unauthorized' }],
      ['/elsewhere', 'secret', 200, { status: 'success', data: 'elsewhere' }],
      // Not routed: the namespace's guard, then the 404.
      ['/api/nothing', undefined, 401, { message: 'Unauthorized' }],
      ['/api/nothing', 'secret', 404, { message: 'Not found' }],
      ['//admin/self', 'secret', 401, { message: 'Unauthorized' }],
      ['//admin/self', 'admin', 404, { message: 'Not found' }],
      ['/nothing', undefined, 404, { message: 'Not found' }],
    ];
    for (const [path, k, status, body] of cases) {
      const r = await request(a).get(path).set(k ? { 'x-key': k } : {});
      assert.deepEqual([r.status, r.body], [status, body], `${path} with ${k ?? 'nothing'}`);
    }
  });

  it('refuses to mount a route whose declaration names no guard', () => {
    for (const auth of ['hookSecret', 'toString', '__proto__', undefined]) {
      const bad = { ...answer('x'), path: '/api/x', auth } as unknown as RouteSpec;
      assert.throws(() => app([bad]), (e: unknown) => e instanceof TypeError && e.message === `GET /api/x: no guard for auth '${String(auth)}'`, String(auth));
    }
  });

  it('namespaceOf finds the namespace under every spelling of it', () => {
    const prefixes = ['/api', '/admin'];
    const table: Array<[string, string | undefined]> = [
      ['/api', '/api'],
      ['/api/', '/api'],
      ['/API/Publish_Token/list', '/api'],
      ['//api/publish_token', '/api'],
      ['/api//publish_token', '/api'],
      ['/api%2Fpublish_token/list', '/api'],
      ['/api%2fpublish_token/list', '/api'],
      ['/api%5Cpublish_token', '/api'],
      ['%2Fapi/publish_token', '/api'],
      ['/%61pi/publish_token', '/api'],
      ['/api%2F%E0%A4%A', '/api'],
      ['/admin/accounts', '/admin'],
      ['///ADMIN', '/admin'],
      ['/apix', undefined],
      ['/administrator', undefined],
      ['/ap%69x', undefined],
      ['/', undefined],
      ['/healthz', undefined],
      ['/api.json', undefined],
    ];
    for (const [path, ns] of table) assert.equal(namespaceOf(path, prefixes), ns, path);
  });
});
