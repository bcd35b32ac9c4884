// Fuzzing the management API (tokens, accounts and admin, webhooks, recordings, issuers, analytics): every
// route of the route table, with mutated fixtures, hostile queries, headers, content types and
// raw bodies. The harness checks each answer (no 5xx, a refusal changes nothing and names the
// problem) and the run (alive, no prototype pollution, bounded event loop delay, all routes hit).
import { describe, it, before, after } from 'node:test';
import fc from 'fast-check';
import { managementRoutes } from '../../src/app.js';
import { NOT_PROVIDED } from '../../src/http/management/not-provided.routes.js';
import { checkOne, finishRun, fuzzOptions, fuzzTarget, startRun, type Target } from './harness.js';
import { caseOf, toRequest, type EntryPoint } from './cases.js';
import { SYSTEM_ACTOR } from '../../src/audit/actor.js';

const createToken = (kind: 'publish' | 'subscribe') => () => ({
  label: 'fuzz',
  streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }],
  expires: 3600,
  allowedOrigins: ['*.example.com'],
  allowedIpAddresses: ['203.0.113.0/24'],
  allowedCountries: ['us'],
  ...(kind === 'publish' ? { subscribeRequiresAuth: false, record: true, enableThumbnails: true } : { tracking: { trackingId: 'viewers' } }),
});
const updateToken = (kind: 'publish' | 'subscribe') => () => ({
  label: 'renamed',
  refreshToken: true,
  addTokenStreams: [{ streamName: 'backup' }],
  removeTokenStreams: ['cam9', { streamName: 'x', isRegex: false }],
  updateAllowedOrigins: ['example.com'],
  bindIpsOnUsage: 0,
  updateAllowedIpAddresses: [],
  updateDeniedCountries: ['FR'],
  expires: null,
  ...(kind === 'publish' ? { record: false } : { tracking: null }),
});
/** A new key id per body, so that valid creates and updates do not all meet the seeded issuer's (iss, kid). */
let issuerKeys = 0;
const issuer = (policyTokenId: number) => ({
  label: 'fuzz',
  policyTokenId,
  issuer: 'https://idp.example.com/',
  keyIds: [`k-${++issuerKeys}`],
  audience: ['streamgate'],
  algorithms: ['HS256', 'ES256'],
  secret: 'fuzz-issuer-secret-0123456789',
  jwksUrl: 'https://93.184.215.14/jwks',
  clockSkewSeconds: 10,
  maxLifetimeSeconds: 600,
  cookieName: 'idp_jwt',
  claims: { stream: 'video.room', canPublish: 'video.canPublish' },
  revoked: { sub: ['banned'] },
});
const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const check = () => ({ streamName: 'cam1', clientIp: '203.0.113.7', origin: 'https://a.example.com', country: 'us', protocol: 'rtmp' });

/** The valid request of each route of the management route table. */
const FIXTURES: Record<string, Omit<EntryPoint, 'method' | 'path' | 'auth'>> = {
  'POST /admin/accounts': { body: () => ({ name: 'acme' }) },
  'GET /admin/accounts': {},
  'PUT /admin/accounts/:accountId': { body: () => ({ secureViewer: false, name: 'renamed', ipRulesOnRtmp: true }) },
  'POST /admin/accounts/:accountId/secret': {},
  'DELETE /admin/accounts/:accountId/secret': {},
  'POST /api/account/secret': {},
  'GET /api/geo/account': {},
  'POST /api/geo/account': { body: () => ({ updateAllowedCountries: null, updateDeniedCountries: ['fr', 'DE'] }) },
  'GET /api/cluster': {},
  // the fuzz target configures no clusters: `auto` is the one there is
  'PUT /api/cluster': { body: () => ({ defaultCluster: 'auto' }) },
  'GET /api/account/geo_cascade': {},
  'PUT /api/account/geo_cascade': { body: () => ({ isEnabled: true, clusters: ['auto'] }) },
  'GET /api/publish_token/list': { query: () => 'sortBy=AddedOn&page=1&itemsOnPage=30&isDescending=true' },
  'GET /api/subscribe_token/list': { query: () => 'sortBy=Name&page=2&itemsOnPage=1' },
  'PATCH /api/publish_token/disable': { body: (t) => ({ tokenIds: [t.seeded.pub.id, 999999] }) },
  'GET /api/publish_token/active': { query: (t) => `streamId=${t.seeded.accountId}/cam1` },
  'GET /api/publish_token/active/all': {},
  'POST /api/webhooks': { body: () => ({ url: 'https://93.184.215.14/hook', isFeedHooks: true, isRecordingHooks: true, isThumbnailHooks: false, filter: 'cam.*' }) },
  'GET /api/webhooks/list': { query: () => 'startingId=1&itemCount=10&isDescending=false' },
  'POST /api/webhooks/test/:kind': { body: () => ({ streamName: 'cam1' }) },
  'GET /api/webhooks/:id/deliveries': {},
  'GET /api/webhooks/:id': {},
  'PUT /api/webhooks/:id': { body: () => ({ url: 'https://93.184.215.15/h', isFeedHooks: false, filter: null, refreshSecret: true }) },
  'DELETE /api/webhooks/:id': {},
  'GET /api/issuers': {},
  'POST /api/issuers': { body: (t) => issuer(t.seeded.sub.id) },
  'GET /api/issuers/:id': {},
  'PUT /api/issuers/:id': { body: () => ({ label: 'renamed', isActive: false, keyIds: [`k-${++issuerKeys}`], revoked: { jti: ['j1'] }, claims: { viewerId: null } }) },
  // an HS256 JWT of the issuers' iss whose kid no issuer names: a 400 naming the JWT, or an explanation
  'POST /api/issuers/:id/check': {
    body: () => ({ ...check(), jwt: `${b64url({ alg: 'HS256', kid: 'k-unknown' })}.${b64url({ iss: 'https://idp.example.com/', sub: 'cam1', exp: 4102444800 })}.c2ln` }),
  },
  // the fixture issuer is a JWT issuer: a 400 saying it cannot sign
  'POST /api/issuers/:id/sign': { body: () => ({ path: '/hls/cam1/*', lifetimeSeconds: 60 }) },
  'DELETE /api/issuers/:id': {},
  'GET /api/recordings': { query: () => 'streamName=cam1' },
  'DELETE /api/recordings/:id': {},
  'GET /api/analytics/tracking/total': { query: () => 'trackingIds=viewers&trackingIds=x,y&startDate=2026-01-01&stopDate=2026-02-01T12:00:00Z' },
  'GET /api/analytics/tracking/series': { query: () => 'resolution=Day&trackingIds=viewers&trackingIds=x,y&startDate=2026-01-01&stopDate=2026-02-01T12:00:00Z' },
  'GET /api/analytics/streams/total': { query: () => 'streamNames=cam1&streamNames=x,y&startDate=2026-01-01&stopDate=2026-02-01T12:00:00Z' },
  'GET /api/analytics/streams/series': { query: () => 'resolution=Month&streamNames=cam1&streamNames=x,y&startDate=2026-01-01&stopDate=2026-03-01' },
  'GET /api/analytics/account/total': { query: () => 'startDate=2026-01-01&stopDate=2026-02-01T12:00:00Z' },
  'GET /api/analytics/account/series': { query: () => 'resolution=Day&startDate=2026-01-01&stopDate=2026-02-01' },
  'GET /api/analytics/tracking/streams/total': { query: () => 'streamNames=cam1&streamNames=x,y&startDate=2026-01-01&stopDate=2026-02-01' },
  // within the hourly retention: today's hours
  'GET /api/analytics/tracking/streams/series': { query: () => `resolution=Hour&streamNames=cam1&startDate=${new Date().toISOString().slice(0, 10)}T00:00:00Z&stopDate=${new Date().toISOString().slice(0, 13)}:00:01Z` },
  'GET /api/sessions': { query: (t) => `streamId=${t.seeded.accountId}/cam1&direction=subscribe&tokenId=1&page=1&itemsOnPage=10` },
  'GET /api/sessions/:id': {},
  'DELETE /api/sessions/:id': {},
  'POST /api/stream/stop': { body: (t) => ({ streamId: `${t.seeded.accountId}/cam1` }) },
  'POST /api/stream/stop/all': {},
  'GET /api/monitoring/streams': { query: () => 'page=1&itemsOnPage=10&sortBy=ViewerCount&isDescending=False&isActive=true' },
  'GET /api/monitoring/streams/:streamName': {},
  'GET /api/decisions': { query: () => 'streamName=cam1&reason=token_invalid&clientIp=203.0.113.7&allowed=false&from=2026-01-01T00:00:00Z&limit=10' },
  'GET /api/decisions/:decisionId': {},
  'GET /api/audit': { query: () => 'resource=publishToken&actor=admin&from=2026-01-01T00:00:00Z&to=2030-01-01T00:00:00Z&limit=10' },
  'GET /api/audit/export': { query: () => 'resource=account' },
  'GET /api/audit/verify': {},
  'GET /api/sharing/policy': {},
  'PUT /api/sharing/policy': { body: () => ({ enabled: true, windowSeconds: 600, maxCountries: 3, action: 'limit' }) },
  'GET /api/sharing/publish_token/:id': {},
  'GET /api/sharing/subscribe_token/:id': {},
  'GET /api/sharing/issuer/:id': { query: () => 'subject=alice&claim=sub' },
  'DELETE /admin/accounts/:accountId/decisions': {},
  'GET /api/secured_streams': { query: () => 'page=1&itemsOnPage=10' },
  'DELETE /api/secured_streams/:streamName': {},
};
// The hosted endpoints Streamgate does not provide (501 whatever is sent): what the hosted API takes.
for (const op of Object.values(NOT_PROVIDED).flat()) {
  FIXTURES[`${op.method.toUpperCase()} ${op.path}`] = ['post', 'put', 'patch'].includes(op.method) ? { body: () => ({ name: 'fuzz', streamName: 'cam1', tokenId: 1 }) } : {};
}
for (const kind of ['publish', 'subscribe'] as const) {
  FIXTURES[`POST /api/${kind}_token`] = { body: createToken(kind) };
  FIXTURES[`GET /api/${kind}_token/:id`] = {};
  FIXTURES[`POST /api/${kind}_token/:id/check`] = { body: check };
  FIXTURES[`PUT /api/${kind}_token/:id`] = { body: updateToken(kind) };
  FIXTURES[`PUT /api/v2/${kind}_token/:id`] = { body: updateToken(kind) };
  FIXTURES[`DELETE /api/${kind}_token/:id`] = {};
  FIXTURES[`GET /api/${kind}_token/list_by_name`] = { query: () => 'name=cam&filterBy=TokenOrStreamName&page=1&itemsOnPage=10&isDescending=False' };
}
FIXTURES['GET /api/publish_token/list_by_cluster'] = { query: () => 'cluster=auto&sortBy=AddedOn&page=1&itemsOnPage=10&isDescending=1' };

describe('fuzzing the management API', () => {
  let t: Target;
  before(async () => {
    t = await fuzzTarget();
  });
  after(() => t.close());

  it('every route: no 5xx, refusals change nothing and say why, the process stays healthy', { timeout: 600_000 }, async () => {
    const eps: EntryPoint[] = managementRoutes(t.services).map((r) => {
      const key = `${r.method.toUpperCase()} ${r.path}`;
      const fixture = FIXTURES[key];
      if (!fixture) throw new Error(`no fuzz fixture for ${key}: add one`);
      return { method: r.method.toUpperCase(), path: r.path, auth: r.auth === 'admin' ? 'admin' : 'apiSecret', ...fixture };
    });
    const run = startRun();
    await fc.assert(
      fc.asyncProperty(caseOf(eps, t), async (c) => {
        const req = await toRequest(c, t);
        const a = await checkOne(t, req, run.stats);
        await keepSecretsCurrent(t, req.route, req.path, req.headers?.authorization, a.status, a.text);
      }),
      // about ten cases a route, so that every route is hit (finishRun checks it) whatever the seed
      fuzzOptions(Math.max(400, eps.length * 10), Math.max(2500, eps.length * 40)),
    );
    await finishRun(t, run, eps.map((e) => `${e.method} ${e.path}`));
  });
});

/**
 * A fuzz case that rotates or deletes an API secret is a success, but later cases still need the
 * account: the harness takes the new secret (or makes one) so the run goes on authenticated.
 */
async function keepSecretsCurrent(t: Target, route: string, path: string, auth: string | undefined, status: number, text: string): Promise<void> {
  if (status >= 300 || !/secret/.test(route)) return;
  const s = t.seeded;
  const which =
    route === 'POST /api/account/secret'
      ? auth === `Bearer ${s.secret}` ? 'own' : auth === `Bearer ${s.otherSecret}` ? 'other' : undefined
      : path.includes(s.otherAccountId) ? 'other' : path.includes(s.accountId) ? 'own' : undefined;
  if (!which) return;
  const id = which === 'own' ? s.accountId : s.otherAccountId;
  const given = route.startsWith('DELETE') ? await t.services.accounts.refreshSecret(id, SYSTEM_ACTOR) : (JSON.parse(text).data.apiSecret as string);
  if (!given) return;
  if (which === 'own') s.secret = given;
  else s.otherSecret = given;
}
