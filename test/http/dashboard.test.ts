// The static mount of the dashboard, without a browser: missing build, disabled, headers, and
// that it needs no API secret while /api still does.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { DASHBOARD_CSP, mountDashboard } from '../../src/http/dashboard.js';
import { testApp } from '../helpers/app.js';
import { sqliteFactory } from '../helpers/stores.js';

describe('dashboard static files', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sg-dash-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(path.join(dir, 'assets/index-abc123.js'), 'console.log(1)');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const app = (opts: { enabled: boolean; dir: string }) => {
    const a = express();
    mountDashboard(a, opts);
    a.use((_req, res) => res.status(404).send('not found'));
    return a;
  };

  it('answers 503 with the build command when the build output is missing', async () => {
    const r = await request(app({ enabled: true, dir: path.join(dir, 'nope') })).get('/dashboard/');
    assert.equal(r.status, 503);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.text, 'dashboard not built: run npm run build:dashboard');
    assert.equal(r.headers['content-security-policy'], DASHBOARD_CSP);
  });

  it('serves index.html with no-cache and hashed assets for a year, both under the CSP', async () => {
    const a = app({ enabled: true, dir });
    const index = await request(a).get('/dashboard/');
    assert.equal(index.status, 200);
    assert.equal(index.text, '<!doctype html><title>t</title>');
    assert.equal(index.headers['cache-control'], 'no-cache');
    assert.equal(index.headers['content-security-policy'], DASHBOARD_CSP);
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
    const js = await request(a).get('/dashboard/assets/index-abc123.js');
    assert.equal(js.status, 200);
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(js.headers['content-security-policy'], DASHBOARD_CSP);
    const redirect = await request(a).get('/dashboard?x=1');
    assert.deepEqual([redirect.status, redirect.headers.location], [301, '/dashboard/']);
    assert.equal((await request(a).get('/dashboard/missing.js')).status, 404);
  });

  it('is not mounted when dashboard.enabled is false', async () => {
    const r = await request(app({ enabled: false, dir })).get('/dashboard/');
    assert.deepEqual([r.status, r.text], [404, 'not found']);
  });

  it('is wired into the app without an API secret, while /api still asks for one', async () => {
    const store = sqliteFactory();
    await store.setup();
    try {
      const on = await testApp(await store.make());
      assert.equal((await request(on.app).get('/dashboard')).status, 301);
      assert.notEqual((await request(on.app).get('/dashboard/')).status, 401);
      assert.equal((await request(on.app).get('/api/publish_token/list')).status, 401);
      const off = await testApp(await store.make(), { dashboard: { enabled: false } });
      const r = await request(off.app).get('/dashboard/');
      assert.equal(r.status, 404);
      assert.equal(r.headers['content-security-policy'], undefined);
      await Promise.all([on.services.close(), off.services.close()]);
    } finally {
      await store.teardown();
    }
  });
});
