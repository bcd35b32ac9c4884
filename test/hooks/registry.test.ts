// The caller registry drives what is mounted, documented, labelled and counted: the hook routes
// the app serves, the OpenAPI entries, the adapter label of the decision metrics and the callers
// a usage report can name all come from the one list.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DRIVERS } from '../../src/sessions/drivers/cutter.js';
import request from 'supertest';
import { hookFixture, type HookFixture } from './fixture.js';
import { CALLERS, SESSION_CALLERS } from '../../src/callers/registry.js';
import { CALLER_NAMES } from '../../src/callers/names.js';
import type { DecisionRoutes } from '../../src/http/decision-routes.js';

describe('the caller registry', () => {
  let f: HookFixture;
  before(async () => {
    f = await hookFixture();
  });
  after(() => f.t.services.close());

  it('names each caller once, as the configuration knows them (src/callers/names.ts)', () => {
    const names = CALLERS.map((c) => c.name);
    assert.deepEqual(names, [...new Set(names)]);
    assert.deepEqual(names, [...CALLER_NAMES]);
  });

  it('is what the app mounts under /hooks', () => {
    const mounted = (f.t.app.locals.decisionRoutes as DecisionRoutes).list().filter((r) => r.split(' ')[1].startsWith('/hooks'));
    const registered = CALLERS.flatMap((c) =>
      c.routes.flatMap((r) => {
        const m = r.method === 'ALL' ? 'all' : r.method.toLowerCase();
        return r.below ? [`${m} ${r.path}`, `all ${r.path}/*rest`] : [`${m} ${r.path}`];
      }),
    );
    assert.deepEqual(mounted.sort(), registered.sort());
  });

  it('documents every caller route in /api/openapi.json, the usage reports and the Envoy path_prefix form included', async () => {
    const doc = (await request(f.t.app).get('/api/openapi.json')).body as { paths: Record<string, Record<string, { tags: string[]; parameters: Array<{ name: string; in: string }> }>> };
    for (const c of CALLERS) {
      for (const r of c.routes) if (r.docs.length > 0) assert.ok(doc.paths[r.path], `${c.name}: ${r.path} is not documented`);
    }
    // Every documented hook path is a registered route (a path parameter stands for the paths below).
    const registered = new Set(CALLERS.flatMap((c) => c.routes.flatMap((r) => (r.below ? [r.path, `${r.path}/{originalPath}`] : [r.path]))));
    const hookPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/hooks/'));
    assert.deepEqual(hookPaths.filter((p) => !registered.has(p)), []);
    for (const p of ['/hooks/usage', '/hooks/auth-request/{originalPath}', '/hooks/mediamtx/event', '/hooks/thumbnail']) assert.ok(doc.paths[p], p);
    const envoy = doc.paths['/hooks/auth-request/{originalPath}'].get;
    assert.deepEqual([envoy.tags, envoy.parameters.map((p) => [p.name, p.in])], [['Hooks'], [['originalPath', 'path']]]);
    const usage = doc.paths['/hooks/usage'].post as unknown as { requestBody: { content: { 'application/json': { schema: { properties: { caller: { enum: string[] } }; required: string[] } } } } };
    const schema = usage.requestBody.content['application/json'].schema;
    assert.deepEqual([schema.properties.caller.enum, schema.required], [SESSION_CALLERS, ['bytesOut']]);
  });

  it('lists the callers that keep sessions, in the order a usage report without a caller is looked up', () => {
    assert.deepEqual(SESSION_CALLERS, ['mediamtx', 'srs', 'nginx-rtmp', 'ome', 'events']);
    assert.deepEqual(
      CALLERS.filter((c) => c.capabilities.sessionIdentity).map((c) => c.name),
      SESSION_CALLERS,
    );
  });

  it('declares every capability of every caller; those that can terminate a session have a driver', () => {
    for (const c of CALLERS) {
      assert.deepEqual(Object.keys(c.capabilities).sort(), ['reasks', 'sessionIdentity', 'terminate'], c.name);
      assert.equal(c.capabilities.terminate, Object.hasOwn(DRIVERS, c.name), c.name);
    }
    assert.deepEqual(CALLERS.filter((c) => c.capabilities.terminate).map((c) => c.name).sort(), ['mediamtx', 'nginx-rtmp', 'ome', 'srs']);
    assert.deepEqual(CALLERS.filter((c) => c.capabilities.reasks).map((c) => c.name), ['nginx-rtmp']);
  });

  it('labels decisions with the caller name', async () => {
    const pub = await f.token('publish');
    const r = await request(f.t.app).post('/hooks/srs').send({ action: 'on_publish', client_id: 'c1', ip: '203.0.113.7', app: 'live', stream: 'cam1', param: `?token=${pub.token}` });
    assert.deepEqual([r.status, r.text], [200, '{"code":0}']);
    const m = await f.t.services.metrics.registry.getSingleMetricAsString('streamgate_decisions_total');
    assert.match(m, /streamgate_decisions_total\{action="publish",adapter="srs",result="allow",reason="allowed",kind="full"\} 1/);
  });
});
