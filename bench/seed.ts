// Seeds stores straight (not through the API): N subscribe/publish tokens of one account for the
// scale run, 1% of the publish tokens with subscribeRequiresAuth so the secured-stream index is real;
// and the issuer-JWT case's credential issuer, written before the Streamgate under test first starts.
import { mkdtempSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { RedisStore } from '../src/store/redis/redis-store.js';
import { newTokenRecord, type NewTokenRecord } from '../src/domain/tokens.js';
import { newSecret } from '../src/domain/secrets.js';
import { loadConfig } from '../src/config/load.js';
import { AccountService } from '../src/management/accounts.js';
import { createLogger } from '../src/observability/logger.js';
import { createStore } from '../src/services.js';
import { STREAMGATE_ENV } from './lib/config.js';

function record(accountId: string, i: number): NewTokenRecord {
  const kind = i % 2 === 0 ? 'subscribe' : 'publish';
  return newTokenRecord(
    kind,
    accountId,
    {
      label: `seed-${i}`,
      streams: [{ streamName: `seed-stream-${i}` }, { streamName: `seed-${i % 1000}-[0-9]+`, isRegex: true }],
      allowedOrigins: i % 3 === 0 ? ['*.example.com'] : [],
      subscribeRequiresAuth: kind === 'publish' && i % 200 === 1 ? true : undefined,
      tracking: kind === 'subscribe' && i % 5 === 0 ? { trackingId: `t-${i % 100}` } : undefined,
    },
    newSecret(),
    Date.now(),
  );
}

export async function seedSqlite(file: string, accountId: string, n: number): Promise<void> {
  const store = new SqliteStore({ file, synchronous: 'NORMAL' });
  const chunk = 50_000;
  for (let i = 0; i < n; i += chunk) {
    store.batch(() => {
      for (let j = i; j < Math.min(n, i + chunk); j++) void store.createToken(record(accountId, j));
    });
  }
  await store.close();
}

export async function seedRedis(url: string, keyPrefix: string, accountId: string, n: number): Promise<void> {
  const client = new Redis(url, { keyPrefix, enableAutoPipelining: true });
  const store = new RedisStore(client);
  await seedRedisStore(store, accountId, n);
  await store.close();
}

/** N seeded tokens of one account written through `store`, a RedisStore on any topology (standalone or Cluster), 2000 in flight. */
export async function seedRedisStore(store: RedisStore, accountId: string, n: number): Promise<void> {
  await seedShare(store, accountId, n, 0, 1, 2000);
}

/** Of the N seeded tokens, those k, k + step, k + 2 step, ... written through `store`, `inFlight` at a time. */
export async function seedShare(store: RedisStore, accountId: string, n: number, k: number, step: number, inFlight: number): Promise<void> {
  let next = k;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        const i = next;
        next += step;
        await store.createToken(record(accountId, i));
      }
    }),
  );
}

/** Where a seeding worker writes: one Redis (its URL) or a Cluster (its nodes, host:port). */
export type SeedTarget = { url: string } | { clusterNodes: string[] };

/** What a seeding worker (seed-worker.ts) is given. */
export interface SeedShare {
  target: SeedTarget;
  keyPrefix: string;
  accountId: string;
  n: number;
  k: number;
  step: number;
  inFlight: number;
}

/**
 * seedRedisStore's N tokens written by `workers` worker threads side by side, each through a
 * client and a store of its own (token i by worker i mod workers, 1000 in flight each). What bounds
 * a seed through the store is this process's work per command, not Redis: on a machine with a core
 * to spare, two workers seed in about half the time. The tokens are the same, their ids in another
 * order.
 */
export async function seedRedisInWorkers(target: SeedTarget, keyPrefix: string, accountId: string, n: number, workers = 2): Promise<void> {
  await Promise.all(
    Array.from(
      { length: workers },
      (_, k) =>
        new Promise<void>((resolve, reject) => {
          const share: SeedShare = { target, keyPrefix, accountId, n, k, step: workers, inFlight: 1000 };
          const w = new Worker(new URL('./seed-worker.mjs', import.meta.url), { workerData: share });
          w.once('error', reject);
          w.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seeding worker ${k} exited with code ${code}`))));
        }),
    ),
  );
}

/** The issuer-JWT case's credential: a JWT of the seeded issuer, and its policy token's id (the decision's tokenId). */
export interface IssuerCase {
  jwt: string;
  policyTokenId: number;
}

/**
 * The store `env` names (the settings its Streamgate will start with), seeded for the issuer-JWT
 * case: the first-start account (its API secret in <dataDir>/default-api-secret, as the server
 * writes it), a subscribe policy token for cam1, and an ES256 issuer with its key inline (so every
 * decision finds its keys cached), claims as Streamgate reads them by default (the stream in `sub`).
 * The JWT names cam1 and is valid for 12 hours, longer than any run.
 */
export async function seedIssuerCase(env: Record<string, string>): Promise<IssuerCase> {
  const config = loadConfig({ env });
  const store = await createStore(config, createLogger('silent'));
  try {
    const first = await new AccountService(store, Date.now).ensureDefaultAccount(config.dataDir);
    if (!first) throw new Error(`the issuer-JWT case needs a new store: ${config.dataDir} (or its Redis prefix) holds an account already`);
    const accountId = first.account.id;
    const policy = await store.createToken(newTokenRecord('subscribe', accountId, { label: 'issuer policy', streams: [{ streamName: 'cam1' }] }, newSecret(), Date.now()));
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const kid = 'bench-es256';
    const iss = 'https://idp.bench.example';
    await store.createIssuer(accountId, {
      label: 'bench idp',
      type: 'jwt',
      isActive: true,
      policyTokenId: policy.id,
      issuer: iss,
      keyIds: [kid],
      audience: [],
      algorithms: ['ES256'],
      jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] },
      jwksUrl: null,
      secret: null,
      clockSkewSeconds: 0,
      maxLifetimeSeconds: null,
      claims: { stream: 'sub' },
      cookieName: null,
      revoked: { jti: [], sub: [], kid: [] },
      settings: null,
      signingKey: null,
      secretFrom: null,
      signingKeyFrom: null,
    });
    const jwt = await new SignJWT({ sub: 'cam1' }).setProtectedHeader({ alg: 'ES256', kid }).setIssuer(iss).setIssuedAt().setExpirationTime('12h').sign(privateKey);
    return { jwt, policyTokenId: policy.id };
  } finally {
    await store.close();
  }
}

/**
 * A data directory of its own for a Streamgate about to start on `env`'s store (`env` with
 * STREAMGATE_DATA_DIR), and, when `issuerCase` (the issuer-JWT case is selected), that store
 * seeded for it: before the server starts, since the embedded store is the server's alone while it runs.
 */
export async function prepareStore(env: Record<string, string>, issuerCase: boolean): Promise<{ env: Record<string, string>; issuer?: IssuerCase }> {
  const withDir = { ...env, STREAMGATE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'sg-bench-')) };
  return { env: withDir, issuer: issuerCase ? await seedIssuerCase({ ...STREAMGATE_ENV, ...withDir }) : undefined };
}
