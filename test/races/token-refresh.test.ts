// Concurrent refresh and use of one token: once the refresh call has returned, the old value (and a
// self-signed JWT keyed with it) is never accepted again, on either store and on another instance
// sharing the Redis; the new value is accepted at once. Decisions race the refresh on purpose.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { signSubscribeJwt } from '../../src/policy/self-signed.js';
import { sqliteDeployment, redisDeployment, type Deployment } from '../helpers/instances.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';
import { seededRandom } from '../helpers/property.js';

const ROUNDS = soak(6, 25);
const DECIDERS = 4;

interface Sample {
  start: number;
  end: number;
  status: number;
  reason: string;
}

const cases: Array<[string, () => Promise<Deployment>]> = [
  ['sqlite', () => sqliteDeployment()],
  ['redis', () => redisDeployment(1)],
  ['redis, refreshed on one instance, used on another', () => redisDeployment(2)],
];

for (const [name, make] of cases) {
  describe(`race: refresh vs use of one token (${name})`, () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await make();
      secret = (await d.instances[0].t.account()).secret;
    });
    after(() => d.close());

    const variants: Array<[string, Record<string, unknown>, boolean]> = [
      ['a plain token', {}, false],
      ['a bind-on-usage token (decided from the cache, confirmed by the bind)', { bindIpsOnUsage: 3 }, false],
      ['a self-signed JWT keyed with the token', {}, true],
    ];
    for (const [what, extra, viaJwt] of variants) {
      it(`${what}: old value refused from the moment the refresh returns (${ROUNDS} rounds)`, async (t) => {
        const rnd = seededRandom(); // the head start of the racing calls before the refresh is sent
        t.diagnostic(rnd.replay);
        const manager = d.instances[0];
        const user = d.instances[d.instances.length - 1];
        let overlapping = 0;
        for (let round = 0; round < ROUNDS; round++) {
          const created = await call(manager.base, 'POST', '/api/subscribe_token', { secret, body: { label: 'r', streams: [{ streamName: 'cam1' }], ...extra } });
          assert.equal(created.status, 200);
          const { id, token } = created.body.data;
          const credential = async (value: string) =>
            viaJwt ? signSubscribeJwt({ token: value, tokenId: id, streamName: 'cam1', expiresInSeconds: 600 }) : value;
          const old = await credential(token);
          const decide = (cred: string) =>
            call(user.base, 'POST', '/hooks/authorize', { body: { action: 'subscribe', token: cred, streamName: 'cam1', clientIp: '192.0.2.10' } });
          assert.equal((await decide(old)).status, 200, 'warm: cached on the deciding instance');

          const samples: Sample[] = [];
          let returnedAt = Infinity;
          let after = 0;
          const decider = async () => {
            while (after < 12) {
              const start = performance.now();
              const r = await decide(old);
              samples.push({ start, end: performance.now(), status: r.status, reason: r.body.reason });
              if (start > returnedAt) after++;
            }
          };
          const deciders = Array.from({ length: DECIDERS }, decider);
          await new Promise((r) => setTimeout(r, rnd.next() * 15));
          const sentAt = performance.now();
          const refreshed = await call(manager.base, 'PUT', `/api/subscribe_token/${id}`, { secret, body: { refreshToken: true } });
          returnedAt = performance.now();
          assert.equal(refreshed.status, 200);
          const fresh = await credential(refreshed.body.data.token);
          const [withNew] = await Promise.all([decide(fresh), ...deciders]);
          assert.deepEqual([withNew.status, withNew.body.reason], [200, 'allowed'], `round ${round}: the new value is accepted`);

          for (const s of samples) {
            if (s.start > returnedAt) {
              assert.deepEqual([s.status, s.reason], [401, 'token_invalid'], `round ${round}: old value used ${(s.start - returnedAt).toFixed(1)} ms after the refresh returned`);
            } else {
              assert.ok(s.status === 200 || (s.status === 401 && s.reason === 'token_invalid'), `round ${round}: ${s.status} ${s.reason} during the refresh`);
            }
          }
          assert.ok(samples.filter((s) => s.start > returnedAt).length >= 12);
          overlapping += samples.filter((s) => s.start < returnedAt && s.end > sentAt).length;
        }
        assert.ok(overlapping >= ROUNDS, `${overlapping} decisions were in flight while a refresh was`);
      });
    }
  });
}
