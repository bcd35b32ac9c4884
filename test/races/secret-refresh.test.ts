// Concurrent API-secret refresh and API calls: once the refresh has returned, the old secret is
// refused (401) on every instance, and the new one works; concurrent refreshes leave exactly one
// working secret. Calls race the refresh on purpose.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY } from '../helpers/app.js';
import { sqliteDeployment, redisDeployment, type Deployment } from '../helpers/instances.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';
import { seededRandom } from '../helpers/property.js';

const ROUNDS = soak(6, 40);
const CALLERS = 4;
const UNAUTHORIZED = { status: 'fail', data: { message: 'Unauthorized' } };

const cases: Array<[string, () => Promise<Deployment>]> = [
  ['sqlite', () => sqliteDeployment()],
  ['redis, refreshed on one instance, called on another', () => redisDeployment(2)],
];

for (const [name, make] of cases) {
  describe(`race: API secret refresh vs API calls (${name})`, () => {
    let d: Deployment;
    before(async () => {
      d = await make();
    });
    after(() => d.close());

    const refreshers: Array<[string, (base: string, id: string, secret: string) => ReturnType<typeof call>]> = [
      ['the account holder (POST /api/account/secret)', (base, _id, secret) => call(base, 'POST', '/api/account/secret', { secret })],
      ['the operator (POST /admin/accounts/{id}/secret)', (base, id) => call(base, 'POST', `/admin/accounts/${id}/secret`, { secret: ADMIN_KEY })],
    ];
    for (const [who, refresh] of refreshers) {
      it(`refreshed by ${who}: the old secret is refused from the moment the refresh returns (${ROUNDS} rounds)`, async (t) => {
        const rnd = seededRandom(); // the head start of the racing calls before the refresh is sent
        t.diagnostic(rnd.replay);
        const manager = d.instances[0];
        const user = d.instances[d.instances.length - 1];
        const acct = await manager.t.account(`race-${who.length}`);
        let current = acct.secret;
        let overlapping = 0;
        for (let round = 0; round < ROUNDS; round++) {
          const old = current;
          const samples: Array<{ start: number; end: number; status: number; body: unknown }> = [];
          let returnedAt = Infinity;
          let after = 0;
          const caller = async (i: number) => {
            while (after < 12) {
              const start = performance.now();
              const r = i % 2
                ? await call(user.base, 'GET', '/api/subscribe_token/list', { secret: old })
                : await call(user.base, 'POST', '/api/subscribe_token', { secret: old, body: { label: `r${round}`, streams: [{ streamName: 'cam1' }] } });
              samples.push({ start, end: performance.now(), status: r.status, body: r.body });
              if (start > returnedAt) after++;
            }
          };
          const callers = Array.from({ length: CALLERS }, (_, i) => caller(i));
          await new Promise((r) => setTimeout(r, rnd.next() * 15));
          const sentAt = performance.now();
          const r = await refresh(manager.base, acct.id, old);
          returnedAt = performance.now();
          assert.equal(r.status, 200, JSON.stringify(r.body));
          current = r.body.data.apiSecret;
          await Promise.all(callers);
          for (const s of samples) {
            if (s.start > returnedAt) assert.deepEqual([s.status, s.body], [401, UNAUTHORIZED], `round ${round}: old secret ${(s.start - returnedAt).toFixed(1)} ms after the refresh`);
            else assert.ok([200, 401].includes(s.status), `round ${round}: ${s.status} during the refresh`);
          }
          overlapping += samples.filter((s) => s.start < returnedAt && s.end > sentAt).length;
          assert.equal((await call(user.base, 'GET', '/api/subscribe_token/list', { secret: current })).status, 200, 'the new secret works');
        }
        assert.ok(overlapping >= ROUNDS, `${overlapping} calls were in flight while a refresh was`);
      });
    }

    it('concurrent refreshes on two instances leave exactly one working secret, and the old one refused', async () => {
      const a = d.instances[0];
      const b = d.instances[d.instances.length - 1];
      for (let round = 0; round < soak(5, 20); round++) {
        const acct = await a.t.account(`pair-${round}`);
        const [r1, r2] = await Promise.all([
          call(a.base, 'POST', `/admin/accounts/${acct.id}/secret`, { secret: ADMIN_KEY }),
          call(b.base, 'POST', `/admin/accounts/${acct.id}/secret`, { secret: ADMIN_KEY }),
        ]);
        assert.deepEqual([r1.status, r2.status], [200, 200]);
        const works = async (secret: string) => (await call(b.base, 'GET', '/api/publish_token/list', { secret })).status === 200;
        assert.equal(await works(acct.secret), false);
        assert.deepEqual([await works(r1.body.data.apiSecret), await works(r2.body.data.apiSecret)].filter(Boolean).length, 1);
      }
    });

    // Regression (found by the test above's self-rotation variant): two racing self-rotations both
    // answered 200, and one caller was handed a secret that was already dead. Now the rotation is a
    // compare-and-set on the secret the call authenticated with: exactly one wins, the other is 401.
    it('two racing self-rotations with the same secret: exactly one 200 with a working secret, the other 401', async () => {
      const a = d.instances[0];
      const b = d.instances[d.instances.length - 1];
      for (let round = 0; round < soak(5, 20); round++) {
        const acct = await a.t.account(`self-pair-${round}`);
        const rs = await Promise.all([
          call(a.base, 'POST', '/api/account/secret', { secret: acct.secret }),
          call(b.base, 'POST', '/api/account/secret', { secret: acct.secret }),
        ]);
        const statuses = rs.map((r) => r.status).sort();
        const works = async (secret: string) => (await call(b.base, 'GET', '/api/publish_token/list', { secret })).status === 200;
        assert.equal(await works(acct.secret), false);
        if (statuses[1] === 200 && statuses[0] === 200) assert.fail('both self-rotations answered 200');
        assert.deepEqual(statuses, [200, 401]);
        const winner = rs.find((r) => r.status === 200)!;
        assert.equal(await works(winner.body.data.apiSecret), true);
      }
    });
  });
}
