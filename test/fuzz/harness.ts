// The fuzzing harness: a Streamgate app on a real socket with seeded state, a raw HTTP client (so
// bodies can be any bytes, headers anything Node lets through), a snapshot of everything stored,
// and one check that every fuzz file applies to every answer (docs/api.md#errors, docs/api.md#hooks):
//   - never a 5xx (the documented 503 needs an unreachable store, which these tests never have),
//     except the 501 of the hosted endpoints Streamgate does not provide;
//   - a refused request (4xx) changes nothing stored: the snapshot before equals the one after;
//   - a refused request says what is wrong (a JSON envelope with a message on /api and /admin);
// and, around the whole run: the process still answers /healthz, Object.prototype is untouched,
// and the event loop was never blocked for long.
import { request as httpRequest, type Server } from 'node:http';
import { createHttpServer } from '../../src/http/server.js';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadConfig } from '../../src/config/load.js';
import { createServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { fixedGeo } from '../../src/enforce/geo.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_KEY } from '../helpers/app.js';
import { NOT_PROVIDED } from '../../src/http/management/not-provided.routes.js';
import { fcOptions } from '../helpers/property.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface Req {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** The route this request exercises (for the coverage check), e.g. "PUT /api/publish_token/:id". */
  route: string;
}

export interface Seeded {
  accountId: string;
  secret: string;
  otherAccountId: string;
  otherSecret: string;
  pub: { id: number; token: string };
  sub: { id: number; token: string };
  otherPub: { id: number; token: string };
  webhookId: number;
  recordingId: number;
  issuerId: number;
  /** A viewer-session credential for `sub` on cam1, granted to 127.0.0.1 (docs/callers.md#http-viewer-sessions). */
  viewerCookie: string;
}

export interface Target {
  services: Services;
  store: Store;
  base: string;
  seeded: Seeded;
  send(r: Omit<Req, 'route'>): Promise<Answer>;
  /** Everything stored, as plain data, after queued lifecycle work and deliveries settled. */
  snapshot(): Promise<unknown>;
  /** Ids now stored (tokens, webhooks, recordings, issuers of the seeded account). */
  ids(): Promise<{ tokens: number[]; webhooks: number[]; recordings: number[]; issuers: number[] }>;
  close(): Promise<void>;
}

/** The session ids the fixtures use, so the snapshot can read them back (sessions have no list). */
export const SESSION_KEYS: Array<[string, string]> = [
  ['mediamtx', 'mtx-1'],
  ['srs', 'srv1#c1'],
  ['nginx-rtmp', '127.0.0.1#7'],
  ['ome', '203.0.113.7:5000/app/cam1/publish'],
];

export async function fuzzTarget(overrides: Record<string, unknown> = {}): Promise<Target> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sg-fuzz-'));
  const store = new SqliteStore({ file: path.join(dir, 'db'), synchronous: 'NORMAL' });
  const config = loadConfig({
    env: {},
    overrides: {
      adminKey: ADMIN_KEY,
      log: { level: 'silent' },
      // A generous store deadline: on this shared 2-core box a slow tick must not turn into the
      // (documented, but here wrong) 503 "store unreachable".
      enforcement: { storeTimeoutMs: 10000 },
      // every management write appends an audit entry: a refused one must append none (the snapshot's `audit`)
      audit: { key: 'fuzz-audit-key-0123456789abcdefghijklmnop' },
      hooks: { secret: '', omeSecret: '', trustedProxies: ['127.0.0.1'], accountInPath: false, mediamtx: { allowApiFrom: ['127.0.0.1'], pathPrefix: 'live/' } },
      ...overrides,
    },
  });
  // Deliveries go nowhere: a fake poster answers at once (the network is not under test here).
  const poster = { post: async () => ({ statusCode: 204, durationMs: 1 }) };
  const services = await createServices(config, { store, geo: fixedGeo({ '8.8.8.8': 'US' }), poster });
  // The production server (src/http/server.ts), so hostile input meets what users run.
  const server: Server = createHttpServer(createApp(services));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const send = (r: Omit<Req, 'route'>): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
      const headers: Record<string, string | number> = { ...r.headers };
      if (body && !Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding')) headers['content-length'] = body.length;
      const req = httpRequest(`${base}${r.path}`, { method: r.method, headers, agent: false });
      let answered: Answer | undefined;
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answered = { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
          resolve(answered);
        });
        res.on('error', reject);
      });
      // A server may answer (413, 431) and close before the whole body was written: that answer counts.
      req.on('error', (e) => (answered ? resolve(answered) : reject(e)));
      if (body) req.write(body);
      req.end();
    });

  const api = (method: string, p: string, secret: string, body?: object) =>
    send({ method, path: p, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  const admin = await send({ method: 'POST', path: '/admin/accounts', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: '{"name":"fuzz"}' });
  const other = await send({ method: 'POST', path: '/admin/accounts', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: '{"name":"other"}' });
  const acct = JSON.parse(admin.text).data as { id: string; apiSecret: string };
  const otherAcct = JSON.parse(other.text).data as { id: string; apiSecret: string };
  const mk = async (secret: string, kind: string, body: object) => {
    const r = await api('POST', `/api/${kind}_token`, secret, body);
    assert.equal(r.status, 200, r.text);
    return JSON.parse(r.text).data as { id: number; token: string };
  };
  const pub = await mk(acct.apiSecret, 'publish', { label: 'pub', streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }], record: true, enableThumbnails: true });
  const sub = await mk(acct.apiSecret, 'subscribe', { label: 'sub', streams: [{ streamName: '.*', isRegex: true }], tracking: { trackingId: 'viewers' }, bindIpsOnUsage: 3 });
  await mk(acct.apiSecret, 'subscribe', { label: 'ip', streams: [{ streamName: 'cam1' }], allowedIpAddresses: ['203.0.113.0/24'], allowedOrigins: ['*.example.com'] });
  const otherPub = await mk(otherAcct.apiSecret, 'publish', { label: 'theirs', streams: [{ streamName: 'cam1' }] });
  const wh = await api('POST', '/api/webhooks', acct.apiSecret, { url: 'https://93.184.215.14/hook', isFeedHooks: true, isRecordingHooks: true, isThumbnailHooks: true });
  assert.equal(wh.status, 200, wh.text);
  const issuer = await api('POST', '/api/issuers', acct.apiSecret, { label: 'idp', policyTokenId: sub.id, issuer: 'https://idp.example.com/', keyIds: ['k1'], algorithms: ['HS256'], secret: 'fuzz-issuer-secret-0123456789' });
  assert.equal(issuer.status, 201, issuer.text);
  const rec = await store.startRecording({ accountId: acct.id, streamName: 'cam1', tokenId: pub.id, path: '/rec/cam1.flv', recordedOn: new Date().toISOString() });
  const granted = await send({ method: 'GET', path: '/hooks/auth-request', headers: { 'x-original-uri': `/hls/cam1/index.m3u8?token=${sub.token}` } });
  assert.equal(granted.status, 200, granted.text);
  const viewerCookie = /streamgate_session=([^;]+)/.exec(String(granted.headers['set-cookie']))?.[1];
  assert.ok(viewerCookie, 'the allow carries a viewer credential');

  const settle = async () => {
    await services.lifecycle.idle();
    await services.dispatcher.idle(5000);
    await services.lifecycle.idle();
  };

  const snapshot = async (): Promise<unknown> => {
    await settle();
    const accounts = await store.listAccounts();
    const perAccount = [];
    for (const a of accounts) {
      const tokens = [];
      for (const kind of ['publish', 'subscribe'] as const) {
        for (let page = 1; ; page++) {
          const batch = await store.listTokens(a.id, kind, { sortBy: 'AddedOn', page, itemsOnPage: 100, descending: false });
          for (const t of batch) tokens.push({ ...t, bound: await store.boundAddresses(a.id, t.id) });
          if (batch.length < 100) break;
        }
      }
      const webhooks = [];
      for (const w of await store.listWebhooks(a.id, { itemCount: 100, descending: false })) webhooks.push({ ...w, deliveries: await store.listDeliveries(a.id, w.id) });
      const today = new Date().toISOString().slice(0, 10);
      perAccount.push({
        account: a,
        version: await store.accountVersion(a.id),
        tokens,
        webhooks,
        recordings: await store.listRecordings(a.id),
        issuers: await store.listIssuers(a.id),
        live: await store.activePublishTokenIds(a.id),
        usage: await store.usageByTracking(a.id, ['viewers', 'x', 'group-a'], '2000-01-01', today.replace(/^\d{4}/, (y) => String(Number(y) + 1))),
        audit: await store.auditEnds(a.id),
      });
    }
    const sessions = [];
    for (const [caller, id] of SESSION_KEYS) sessions.push(await store.getSession(caller, id));
    return { perAccount, sessions, keys: await store.getMeta('director.keys').catch(() => null) };
  };

  const ids = async () => ({
    tokens: [
      ...(await store.listTokens(acct.id, 'publish', { sortBy: 'AddedOn', page: 1, itemsOnPage: 100, descending: true })),
      ...(await store.listTokens(acct.id, 'subscribe', { sortBy: 'AddedOn', page: 1, itemsOnPage: 100, descending: true })),
    ].map((t) => t.id),
    webhooks: (await store.listWebhooks(acct.id, { itemCount: 100, descending: true })).map((w) => w.id),
    recordings: (await store.listRecordings(acct.id)).map((r) => r.id),
    issuers: (await store.listIssuers(acct.id)).map((i) => i.id),
  });

  return {
    services,
    store,
    base,
    seeded: {
      accountId: acct.id,
      secret: acct.apiSecret,
      otherAccountId: otherAcct.id,
      otherSecret: otherAcct.apiSecret,
      pub,
      sub,
      otherPub,
      webhookId: JSON.parse(wh.text).data.id,
      recordingId: rec.id,
      issuerId: JSON.parse(issuer.text).data.id,
      viewerCookie,
    },
    send,
    snapshot,
    ids,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await services.close();
    },
  };
}

// ---- hostile values -------------------------------------------------------------------------

/**
 * A value given as JSON text, spliced into a body as is: 10,000 levels of nesting are too deep
 * for JSON.stringify inside fast-check's own stack, but not for the server to receive.
 */
export class RawJson {
  private readonly index: number;
  constructor(readonly text: string) {
    this.index = rawTexts.push(text) - 1;
  }
  toJSON(): string {
    return `\u0000raw:${this.index}\u0000`;
  }
}
const rawTexts: string[] = [];
const deep = (n: number): RawJson => new RawJson(`${'{"a":['.repeat(n / 2)}1${']}'.repeat(n / 2)}`);

/** JSON.stringify that splices RawJson texts in place. */
export function toJson(value: unknown): string {
  return (JSON.stringify(value) ?? 'null').replace(/"\\u0000raw:(\d+)\\u0000"/g, (_, i: string) => rawTexts[Number(i)]);
}

/** Values that have broken JSON services before: wrong types, edges of numbers, huge and deep. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null, true, false, 0, -1, 1.5, -0, 2 ** 31, 2 ** 53 + 1, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 1e-300,
    '', ' ', '0', '-1', 'true', 'null', 'NaN', 'Infinity', '1e400', '\u0000', '\ud800', '\udfff\ud800', '😀', '%00', '../..', '<script>',
    '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty',
    [], {}, [null], [[]], { __proto__: null },
    'x'.repeat(129), 'x'.repeat(5000),
    // expensive regular expressions (valid RE2, or on its size limits), for every field that takes one
    '(a+)+$', '(x+x+)+y', '\\pL{400}', '[^\\pL]{300}', '(\\pL{1000}|\\pN{1000}|.{1000})', '.{1000}', '(?<n>a)', '\\Qa)|(.*\\E',
    '203.0.113.0/24', '10.0.0.1/8', '::ffff:127.0.0.1', '0x7f.1', '2130706433', '*.example.com', '*', 'https://a.example.com:8443/x',
  ),
  fc.constant(deep(10_000)),
  fc.constant(deep(100)),
  fc.constant(JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}')),
  fc.constant(Array.from({ length: 101 }, (_, i) => `203.0.113.${i % 256}`)),
  fc.constant(Array.from({ length: 100 }, () => ({ streamName: '\\pL{400}', isRegex: true }))),
  fc.constant(Array.from({ length: 100 }, () => ({ streamName: '[^\\pL]{300}', isRegex: true }))),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
);

/** A valid body with one field changed, removed, or added; or something else entirely. */
export function mutate(valid: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys(valid);
  const key = keys.length ? fc.constantFrom(...keys) : fc.constant('x');
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid) },
    { weight: 6, arbitrary: fc.tuple(key, hostileValue).map(([k, v]) => ({ ...valid, [k]: v })) },
    { weight: 2, arbitrary: fc.tuple(key, key, hostileValue, hostileValue).map(([a, b, x, y]) => ({ ...valid, [a]: x, [b]: y })) },
    { weight: 2, arbitrary: key.map((k) => Object.fromEntries(Object.entries(valid).filter(([kk]) => kk !== k))) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('__proto__', 'constructor', 'prototype', 'unknownField', ''), hostileValue).map(([k, v]) => JSON.parse(JSON.stringify({ ...valid }).replace(/^\{/, () => `{${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'},`).replace(/,}$/, '}'))) }, // a function, not a string: '$&' or "$'" in a generated value would be a replacement pattern (a soak run hit it)
    { weight: 1, arbitrary: fc.tuple(key, hostileValue).map(([k, v]) => deepSet(valid, k, v)) },
    { weight: 1, arbitrary: hostileValue },
  );
}

/** Replaces a value one level down (inside the first object or array element of a field). */
function deepSet(valid: Record<string, unknown>, k: string, v: unknown): unknown {
  const inner = valid[k];
  if (Array.isArray(inner) && inner.length > 0 && typeof inner[0] === 'object' && inner[0] !== null) {
    const first = inner[0] as Record<string, unknown>;
    const fk = Object.keys(first)[0] ?? 'x';
    return { ...valid, [k]: [{ ...first, [fk]: v }, ...inner.slice(1)] };
  }
  if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
    const fk = Object.keys(inner)[0] ?? 'x';
    return { ...valid, [k]: { ...(inner as object), [fk]: v } };
  }
  return { ...valid, [k]: [v] };
}

/** Bodies as bytes: the JSON of a value, or raw bytes no serializer would produce. */
export function encodeBody(value: unknown): fc.Arbitrary<Buffer | string | undefined> {
  const json = toJson(value);
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(json) },
    {
      weight: 4,
      arbitrary: fc.constantFrom<Buffer | string | undefined>(
        undefined,
        '',
        json.slice(0, Math.max(0, json.length - 1)), // truncated
        json.replace(/^\{/, '{"label":"a","label":"b",'), // duplicate keys
        Buffer.concat([Buffer.from(json.slice(0, -1)), Buffer.from([0x2c, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])]), // invalid UTF-8 in a key
        Buffer.from(json.replace(/"([a-z]+)"/, '"$1\u00e9"'), 'latin1'), // latin-1 bytes declared as UTF-8
        `\ufeff${json}`, // BOM
        '['.repeat(10_000) + ']'.repeat(10_000),
        `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
        `{"x":"${'a'.repeat(1024 * 1024)}"}`, // 1 MB string
        'a'.repeat(65_537),
        '{"n":1e999999,"m":-1e999999,"k":123456789012345678901234567890}',
        '{"a":"\\ud800","b":"\\u0000"}',
        'null',
        '"just a string"',
        '12',
        'token=abc&name=cam1&call=publish&name=cam2&__proto__[x]=1',
        Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]),
      ),
    },
  );
}

export const contentType = fc.constantFrom<string | undefined>(
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/merge-patch+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'multipart/form-data; boundary=x',
  'image/jpeg',
  'a/b/c',
  '',
  undefined,
);

/** A query string built from hostile keys and values (repeated keys, bracket syntax, bad escapes). */
export const hostileQuery: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.constantFrom('page', 'itemsOnPage', 'sortBy', 'isDescending', 'streamId', 'streamName', 'trackingIds', 'startDate', 'stopDate', 'startingId', 'itemCount', 'token', 'secret', '__proto__[x]', 'constructor[prototype][polluted]', 'a[b][c]', ''),
      fc.constantFrom('1', '0', '-1', '1e400', '999999999999999999999', 'true', 'Name', 'ADDEDON', '%E0%A4%A', '%00', '%ff', 'a,b', '2026-01-01', '2026-02-30', 'x'.repeat(3000), '', '%2F..%2F'),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

export const hostileHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'x-request-id': fc.constantFrom('ok-1', 'x'.repeat(200), 'a b', '\u00e9'),
    origin: fc.constantFrom('https://www.example.com', 'null', 'http://[::1', 'https://a.example.com:99999', 'x'.repeat(3000)),
    referer: fc.constantFrom('https://a.example.com/x', '%%%', 'javascript:alert(1)'),
    'x-forwarded-for': fc.constantFrom('203.0.113.9', '1.2.3.4, 5.6.7.8', 'garbage', '::ffff:10.0.0.1', ', , ,'),
    'x-real-ip': fc.constantFrom('203.0.113.9', '999.1.1.1', ''),
    'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'),
    'cf-ipcountry': fc.constantFrom('US', 'XX', '??'),
    'x-ome-signature': fc.constantFrom('AAAA', ''),
    'x-streamgate-hook-secret': fc.constantFrom('wrong', ''),
  },
  { requiredKeys: [] },
);

// ---- the run --------------------------------------------------------------------------------

/**
 * The event loop may be late by this much at most during a run. A decision or a management call
 * takes milliseconds; GC pauses and this 2-core box shared with other test processes can delay a
 * timer by a few hundred ms. What the bound must catch is a request that holds the loop for
 * seconds: a backtracking regex on a long name, or compiling hundreds of large RE2 programs
 * (a 100-entry stream list of `\pL{400}` held it for tens of seconds before it was refused).
 */
export const MAX_LOOP_DELAY_MS = 1500;

/** `METHOD path` of the routes that answer 501 (src/http/management/not-provided.routes.ts). */
const NOT_PROVIDED_ROUTES = new Set(
  Object.values(NOT_PROVIDED)
    .flat()
    .map((op) => `${op.method.toUpperCase()} ${op.path}`),
);

export interface RunStats {
  byStatus: Map<number, number>;
  routes: Set<string>;
}

/** Checks one answer against the harness rules; snapshots around it when it is a refusal. */
export async function checkOne(target: Target, r: Req, stats: RunStats): Promise<Answer> {
  const before = await target.snapshot();
  let a: Answer;
  try {
    a = await target.send(r);
  } catch (e) {
    throw new Error(`${r.method} ${r.path}: no answer (${(e as Error).message})`);
  }
  stats.byStatus.set(a.status, (stats.byStatus.get(a.status) ?? 0) + 1);
  stats.routes.add(r.route);
  const what = `${r.method} ${r.path.slice(0, 200)} -> ${a.status} ${a.text.slice(0, 300)}`;
  // the one 5xx a route declares: 501 from the hosted endpoints Streamgate does not provide
  assert.ok(a.status < 500 || (a.status === 501 && NOT_PROVIDED_ROUTES.has(r.route)), `a 5xx: ${what}`);
  if (a.status >= 400) {
    assert.deepEqual(await target.snapshot(), before, `a refused request changed stored state: ${what}`);
    // 431: Node's own parser refuses oversized headers before Streamgate runs; its status line
    // ("Request Header Fields Too Large") is the whole answer.
    if (a.status !== 431) assert.ok(a.text.length > 0, `a refusal without a body: ${what}`);
    if (/^\/(api|admin)\//.test(r.path) && a.status !== 431) {
      const body = JSON.parse(a.text) as { status?: string; data?: { message?: unknown } };
      assert.equal(body.status, 'fail', what);
      assert.equal(typeof body.data?.message, 'string', what);
    }
  }
  return a;
}

export interface FuzzRun {
  stats: RunStats;
  loop: IntervalHistogram;
  protoBefore: string[];
}

export function startRun(): FuzzRun {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  return { stats: { byStatus: new Map(), routes: new Set() }, loop, protoBefore: Object.getOwnPropertyNames(Object.prototype).sort() };
}

/** The checks on the whole run: alive, no prototype pollution, loop delay bounded, routes covered. */
export async function finishRun(target: Target, run: FuzzRun, routes: string[]): Promise<void> {
  run.loop.disable();
  const health = await target.send({ method: 'GET', path: '/healthz' });
  assert.equal(health.status, 200, 'the server still answers /healthz');
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), run.protoBefore, 'Object.prototype gained properties');
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is polluted');
  const maxMs = run.loop.max / 1e6;
  assert.ok(maxMs < MAX_LOOP_DELAY_MS, `event loop blocked for ${maxMs.toFixed(0)} ms (bound ${MAX_LOOP_DELAY_MS} ms)`);
  console.log(`fuzz run: ${[...run.stats.byStatus].sort().map(([s, n]) => `${s}×${n}`).join(' ')}; event loop delay max ${maxMs.toFixed(0)} ms, p99 ${(run.loop.percentile(99) / 1e6).toFixed(0)} ms`);
  const missing = routes.filter((r) => !run.stats.routes.has(r));
  assert.deepEqual(missing, [], 'every entry point was fuzzed');
}

export const fuzzOptions = (fast: number, long: number) => ({ ...fcOptions<[unknown]>(fast, long), endOnFailure: true, includeErrorInReport: true });
