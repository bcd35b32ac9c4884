// Builds a Streamgate app over a given store for supertest, with a silent logger and an admin key.
import type { PlaceLookup } from '../../src/enforce/places.js';
import request from 'supertest';
import type { Express } from 'express';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import type { Store } from '../../src/store/store.js';
import type { GeoLookup } from '../../src/enforce/geo.js';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdefghij';

export interface TestApp {
  app: Express;
  services: Services;
  /**
   * Creates an account through the admin API; returns its id and API secret. Account names are
   * unique: a name this process gave before gets a number (`other 2`), so tests sharing a store
   * need not choose names apart.
   */
  account(name?: string): Promise<{ id: string; secret: string }>;
}

/** How often each name was given by account() in this process. */
const namesGiven = new Map<string, number>();
const uniqueName = (name: string): string => {
  const n = (namesGiven.get(name) ?? 0) + 1;
  namesGiven.set(name, n);
  return n === 1 ? name : `${name} ${n}`;
};

export async function testApp(
  store: Store,
  overrides: Record<string, unknown> = {},
  opts: { now?: () => number; geo?: GeoLookup; places?: PlaceLookup } = {},
): Promise<TestApp> {
  const config = loadConfig({ env: {}, overrides: { adminKey: ADMIN_KEY, log: { level: 'silent' }, ...overrides } });
  const services = await createServices(config, { store, ...opts });
  const app = createApp(services);
  return {
    app,
    services,
    async account(name = 'acme') {
      const r = await request(app).post('/admin/accounts').set('authorization', `Bearer ${ADMIN_KEY}`).send({ name: uniqueName(name) });
      if (r.status !== 201) throw new Error(`account create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return { id: r.body.data.id as string, secret: r.body.data.apiSecret as string };
    },
  };
}
