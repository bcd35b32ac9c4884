// A Streamgate app on a fresh embedded store for adapter fixture tests, with the lifecycle
// events it emits captured.
import request from 'supertest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { testApp, type TestApp } from '../helpers/app.js';
import type { PublicEvent } from '../../src/lifecycle/events.js';
import { fixedGeo } from '../../src/enforce/geo.js';

export interface HookFixture {
  t: TestApp;
  acct: { id: string; secret: string };
  events: PublicEvent[];
  token(kind: 'publish' | 'subscribe', body?: Record<string, unknown>): Promise<{ id: number; token: string }>;
  api(method: 'get' | 'put' | 'post' | 'delete', p: string, body?: object): Promise<request.Response>;
  /** Waits for queued lifecycle signals to be applied. */
  settle(): Promise<void>;
  /** Stops the app's background work and closes its store. */
  close(): Promise<void>;
}

export async function hookFixture(overrides: Record<string, unknown> = {}): Promise<HookFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-hooks-'));
  const t = await testApp(new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL' }), overrides, {
    geo: fixedGeo({ '8.8.8.8': 'US' }),
  });
  const acct = await t.account();
  const events: PublicEvent[] = [];
  t.services.lifecycle.subscribe((e) => {
    events.push(e);
  });
  const api = (method: 'get' | 'put' | 'post' | 'delete', p: string, body?: object) => {
    const r = request(t.app)[method](p).set('authorization', `Bearer ${acct.secret}`);
    return body ? r.send(body) : r;
  };
  return {
    t,
    acct,
    events,
    api: (m, p, b) => api(m, p, b).then((r) => r),
    async token(kind, body = {}) {
      const r = await api('post', `/api/${kind}_token`, { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
      if (r.status !== 200) throw new Error(JSON.stringify(r.body));
      return r.body.data;
    },
    settle: () => t.services.lifecycle.idle(),
    close: () => t.services.close(),
  };
}
