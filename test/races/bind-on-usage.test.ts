// Bind on usage under concurrent first uses: for random limits N, many addresses racing through
// two instances on one Redis (and one instance on SQLite), by token value and by self-signed JWTs of
// the same token, bind exactly N addresses; exactly the requests from bound addresses are admitted.
// (test/timing/enforcement.redis-instances.test.ts has one fixed case; this one varies it.) The limits
// come from a seeded generator: the test prints its seed, and FC_SEED=<seed> replays the same limits.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';
import { sqliteDeployment, redisDeployment, type Deployment } from '../helpers/instances.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';
import { seededRandom } from '../helpers/property.js';

const ROUNDS = soak(4, 25);
const ADDRESSES = 24;
const REQUESTS = 96;

const cases: Array<[string, () => Promise<Deployment>]> = [
  ['sqlite', () => sqliteDeployment()],
  ['redis, two instances', () => redisDeployment(2)],
];

for (const [name, make] of cases) {
  describe(`race: concurrent first uses of a bind-on-usage token (${name})`, () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await make();
      secret = (await d.instances[0].t.account()).secret;
    });
    after(() => d.close());

    it(`binds exactly N of ${ADDRESSES} addresses for ${REQUESTS} racing requests (${ROUNDS} rounds, N random)`, async (t) => {
      const rnd = seededRandom();
      t.diagnostic(rnd.replay);
      for (let round = 0; round < ROUNDS; round++) {
        const n = rnd.int(1, 6);
        const at = `${rnd.replay}, round ${round}`;
        const created = await call(d.instances[0].base, 'POST', '/api/subscribe_token', {
          secret,
          body: { label: 'b', streams: [{ streamName: 'cam1' }], bindIpsOnUsage: n },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const { id, token } = created.body.data;
        const jwt = await signSubscribeJwt({ token, tokenId: id, streamName: 'cam1', expiresInSeconds: 600 });
        // Odd rounds: every instance holds the token cached first (the optimistic path, confirmed by
        // the bind's revision check), through a refusal that binds nothing (check 5 fails first).
        if (round % 2) {
          for (const inst of d.instances) {
            const r = await call(inst.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token, streamName: 'other', clientIp: '192.0.2.1' } });
            assert.equal(r.body.reason, 'stream_not_allowed');
          }
        }
        const ips = Array.from({ length: ADDRESSES }, (_, i) => `198.51.${round}.${i + 1}`);
        const results = await Promise.all(
          Array.from({ length: REQUESTS }, (_, i) =>
            call(d.instances[i % d.instances.length].base, 'POST', '/hooks/authorize', {
              body: { action: 'subscribe', token: i % 3 === 0 ? jwt : token, streamName: 'cam1', clientIp: ips[(i * 7) % ADDRESSES] },
            }),
          ),
        );
        const rec = await call(d.instances[d.instances.length - 1].base, 'GET', `/api/subscribe_token/${id}`, { secret });
        const bound: string[] = rec.body.data.boundIpAddresses;
        assert.equal(bound.length, n, `${at}: ${bound.length} bound for bindIpsOnUsage ${n}`);
        assert.equal(new Set(bound).size, n, `${at}: bound addresses ${bound.join(', ')}`);
        results.forEach((r, i) => {
          const ip = ips[(i * 7) % ADDRESSES];
          if (bound.includes(ip)) assert.deepEqual([r.status, r.body.reason], [200, 'allowed'], `${at}, request ${i} from bound ${ip}`);
          else assert.deepEqual([r.status, r.body.reason, r.body.message], [403, 'ip_not_allowed', 'Unauthorized: IP Address not allowed'], `${at}, request ${i} from ${ip}`);
        });
      }
    });
  });
}
