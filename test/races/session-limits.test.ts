// Session limits and terminations under concurrency (docs/api.md#running-sessions): racing
// admissions of one limited token, through two instances on one Redis and one on the embedded
// store, admit exactly the limit; a termination started on one instance (a token delete, an
// expiry seen by both sweepers) ends each session exactly once, and the other instance sees it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sqliteDeployment, redisDeployment, type Deployment, type Instance } from '../helpers/instances.js';
import { call } from '../helpers/listen.js';
import { soak } from '../helpers/soak.js';
import type { PublicEvent } from '../../src/lifecycle/events.js';

const ROUNDS = soak(2, 10);
/** A hung request or lifecycle fails the test where it hangs instead of stalling the suite. */
const LONGEST = { timeout: soak(60_000, 300_000) };
const SRS_OK = { code: 0 };
const srsRefusal = (message: string) => ({ code: 403, message });

/** An SRS on_play of `stream` by client `clientId`, with the token in the play URL's query. */
const srsPlay = (inst: Instance, token: string, clientId: string, stream = 'cam1') =>
  call(inst.base, 'POST', '/hooks/srs', {
    body: { action: 'on_play', server_id: 'srs1', client_id: clientId, ip: '198.51.100.7', vhost: '__defaultVhost__', app: 'live', stream, param: `?token=${token}`, tcUrl: 'rtmp://edge/live' },
  });

/** An nginx-rtmp notify call (form-encoded, as the module sends it); answers status and text. */
async function rtmp(inst: Instance, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const r = await fetch(`${inst.base}/hooks/nginx-rtmp`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ app: 'live', tcurl: 'rtmp://edge:1935/live', addr: '203.0.113.9', ...fields }).toString(),
  });
  return { status: r.status, text: await r.text() };
}

/** streamgate_session_terminations_total summed over the instances' /metrics, by "trigger/result". */
async function terminations(d: Deployment): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const inst of d.instances) {
    const text = await (await fetch(`${inst.base}/metrics`)).text();
    for (const m of text.matchAll(/^streamgate_session_terminations_total\{([^}]*)\} (\d+)$/gm)) {
      const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
      const key = `${labels.trigger}/${labels.result}`;
      out[key] = (out[key] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

async function until<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 8000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${ms} ms (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const idle = (d: Deployment) => Promise.all(d.instances.map((i) => i.t.services.lifecycle.idle()));

const limitCases: Array<[string, () => Promise<Deployment>]> = [
  ['sqlite', () => sqliteDeployment()],
  ['redis, two instances', () => redisDeployment(2)],
];

for (const [name, make] of limitCases) {
  describe(`race: concurrent admissions of a limited token (${name})`, () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await make();
      secret = (await d.instances[0].t.account()).secret;
    });
    after(() => d.close());
    const at = (i: number) => d.instances[i % d.instances.length];

    it(`maxConcurrentSessions 3: of 100 racing SRS on_play admissions exactly 3 are allowed, 97 refused session_limit (${ROUNDS} rounds)`, LONGEST, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const created = await call(at(0).base, 'POST', '/api/subscribe_token', {
          secret,
          body: { label: 'limited', streams: [{ streamName: 'cam1' }], maxConcurrentSessions: 3 },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const { id, token } = created.body.data;
        assert.equal(created.body.data.maxConcurrentSessions, 3);
        const clients = Array.from({ length: 100 }, (_, i) => `r${round}c${i}`);
        const results = await Promise.all(clients.map((c, i) => srsPlay(at(i), token, c)));
        const allowed = clients.filter((_, i) => results[i].status === 200);
        assert.equal(allowed.length, 3, `round ${round}: ${allowed.length} allowed`);
        results.forEach((r, i) => {
          if (allowed.includes(clients[i])) assert.deepEqual(r.body, SRS_OK, `round ${round}, client ${clients[i]}`);
          else assert.deepEqual([r.status, r.body], [403, srsRefusal('Unauthorized: Too many sessions for this token')], `round ${round}, client ${clients[i]}`);
        });
        await idle(d);
        for (const inst of d.instances) {
          const listed = await call(inst.base, 'GET', `/api/sessions?tokenId=${id}`, { secret });
          assert.equal(listed.status, 200, JSON.stringify(listed.body));
          assert.deepEqual(listed.body.data.pagination, { totalItems: 3, totalPages: 1, itemsOnPage: 25 });
          assert.deepEqual(
            listed.body.data.data.map((s: Record<string, unknown>) => [s.caller, s.callerSessionId, s.tokenId, s.direction, s.streamName, s.endedReason]).sort(),
            allowed.map((c) => ['srs', `srs1#${c}`, id, 'subscribe', 'cam1', null]).sort(),
          );
        }
      }
    });

    it(`maxUses 1: of 50 racing first uses exactly one is admitted, the others refused uses_exhausted (${ROUNDS} rounds)`, LONGEST, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const created = await call(at(0).base, 'POST', '/api/subscribe_token', {
          secret,
          body: { label: 'once', streams: [{ streamName: 'cam1' }], maxUses: 1 },
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const { id, token } = created.body.data;
        assert.equal(created.body.data.maxUses, 1);
        const clients = Array.from({ length: 50 }, (_, i) => `u${round}c${i}`);
        const results = await Promise.all(clients.map((c, i) => srsPlay(at(i), token, c)));
        const allowed = clients.filter((_, i) => results[i].status === 200);
        assert.equal(allowed.length, 1, `round ${round}: ${allowed.length} allowed`);
        results.forEach((r, i) => {
          if (clients[i] === allowed[0]) assert.deepEqual(r.body, SRS_OK);
          else assert.deepEqual([r.status, r.body], [403, srsRefusal('Unauthorized: Token already used')], `round ${round}, client ${clients[i]}`);
        });
        // used up for good: a later use through every instance is refused as well
        for (const [i, inst] of d.instances.entries()) {
          const later = await srsPlay(inst, token, `u${round}later${i}`);
          assert.deepEqual([later.status, later.body], [403, srsRefusal('Unauthorized: Token already used')]);
        }
        await idle(d);
        const listed = await call(at(1).base, 'GET', `/api/sessions?tokenId=${id}`, { secret });
        assert.deepEqual(
          listed.body.data.data.map((s: Record<string, unknown>) => s.callerSessionId),
          [`srs1#${allowed[0]}`],
        );
      }
    });
  });
}

describe('race: a termination started on one instance is carried out once (redis, two instances)', () => {
  const SESSIONS = 8;

  /** N publishers of one regex publish token, admitted alternately through both instances' nginx-rtmp hook. */
  async function publishers(d: Deployment, secret: string, tag: string, body: Record<string, unknown> = {}) {
    const created = await call(d.instances[0].base, 'POST', '/api/publish_token', {
      secret,
      body: { label: tag, streams: [{ streamName: `${tag}[0-9]+`, isRegex: true }], ...body },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { id, token } = created.body.data;
    const sessions = Array.from({ length: SESSIONS }, (_, i) => ({ via: d.instances[i % 2], clientid: `${tag}${i}`, name: `${tag}${i}` }));
    const answers = await Promise.all(sessions.map((s) => rtmp(s.via, { call: 'publish', type: 'live', clientid: s.clientid, name: s.name, token })));
    assert.deepEqual(answers, sessions.map(() => ({ status: 200, text: 'OK' })));
    await idle(d);
    for (const inst of d.instances) {
      const listed = await call(inst.base, 'GET', `/api/sessions?tokenId=${id}&itemsOnPage=100`, { secret });
      assert.equal(listed.body.data.pagination.totalItems, SESSIONS, JSON.stringify(listed.body));
    }
    const listed = await call(d.instances[0].base, 'GET', `/api/sessions?tokenId=${id}&itemsOnPage=100`, { secret });
    return { id, token, sessions, ids: listed.body.data.data.map((s: { id: string }) => s.id) as string[] };
  }

  /** The lifecycle's session events `ended` of both instances, by reason. */
  function endedEvents(d: Deployment): Array<{ sessionId?: string; reason?: string }> {
    const out: Array<{ sessionId?: string; reason?: string }> = [];
    for (const inst of d.instances) {
      inst.t.services.lifecycle.subscribe((e: PublicEvent) => {
        if (e.type === 'session' && e.event === 'ended') out.push({ sessionId: e.sessionId, reason: e.reason });
      });
    }
    return out;
  }

  describe('a token delete through instance A (terminateOn [delete], the default)', () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await redisDeployment(2);
      secret = (await d.instances[0].t.account()).secret;
    });
    after(() => d.close());

    it(`ends each of ${SESSIONS} sessions once, on the counters of both instances; B lists none and refuses their re-asks`, LONGEST, async () => {
      const [a, b] = d.instances;
      const p = await publishers(d, secret, 'del');
      const events = endedEvents(d);
      assert.deepEqual(await terminations(d), {});
      const deleted = await call(a.base, 'DELETE', `/api/publish_token/${p.id}`, { secret });
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      await until('B lists no session of the token', () => call(b.base, 'GET', `/api/sessions?tokenId=${p.id}`, { secret }), (r) => r.body.data?.pagination?.totalItems === 0);
      await until('termination counters', () => terminations(d), (c) => (c['delete/ended'] ?? 0) >= SESSIONS);
      await idle(d);
      assert.deepEqual(await terminations(d), { 'delete/ended': SESSIONS });
      for (const sid of p.ids) {
        const one = await call(b.base, 'GET', `/api/sessions/${sid}`, { secret });
        assert.equal(one.status, 200, JSON.stringify(one.body));
        assert.equal(one.body.data.endedReason, 'token_revoked');
      }
      assert.deepEqual(
        events.map((e) => [e.sessionId, e.reason]).sort(),
        p.sessions.map((s) => [`127.0.0.1#${s.clientid}`, 'token_revoked']).sort(),
      );
      // B's re-ask of a session admitted through A, and of one admitted through B
      for (const s of p.sessions.slice(0, 2)) {
        const reask = await rtmp(b, { call: 'update_publish', time: '30', timestamp: '30000', clientid: s.clientid, name: s.name, token: p.token });
        assert.deepEqual(reask, { status: 403, text: 'Unauthorized: Invalid token' }, `re-ask of ${s.clientid}`);
      }
      await idle(d);
      assert.deepEqual(await terminations(d), { 'delete/ended': SESSIONS }, 'a re-ask of an ended session ends nothing again');
      assert.equal(events.length, SESSIONS);
    });
  });

  describe('a token delete through A racing admissions through both instances', () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await redisDeployment(2);
      secret = (await d.instances[0].t.account()).secret;
      await publishers(d, secret, 'warm');
    });
    after(() => d.close());

    const RACERS = 40;
    for (const [what, body] of [
      ['a token without limits (sessions registered after the answer)', {}],
      ['a token with maxConcurrentSessions (sessions registered in the decision)', { maxConcurrentSessions: 1000 }],
    ] as const) {
      it(`${what}: every admitted session ends, once; none stays live (${ROUNDS * 2} rounds)`, LONGEST, async (t) => {
        const [a, b] = d.instances;
        const events = endedEvents(d);
        let admittedTotal = (await terminations(d))['delete/ended'] ?? 0; // the counters are the deployment's: from the earlier cases
        for (let round = 0; round < ROUNDS * 2; round++) {
          const tag = `${Object.keys(body).length ? 'lim' : 'free'}${round}x`;
          const created = await call(a.base, 'POST', '/api/publish_token', { secret, body: { label: tag, streams: [{ streamName: `${tag}[0-9]+`, isRegex: true }], ...body } });
          assert.equal(created.status, 200, JSON.stringify(created.body));
          const { id, token } = created.body.data;
          const racers = Array.from({ length: RACERS }, (_, i) => rtmp(d.instances[i % 2], { call: 'publish', type: 'live', clientid: `${tag}${i}`, name: `${tag}${i}`, token }));
          await new Promise((r) => setTimeout(r, round * 3));
          const deleted = await call(a.base, 'DELETE', `/api/publish_token/${id}`, { secret });
          assert.equal(deleted.status, 200);
          const answers = await Promise.all(racers);
          for (const r of answers) assert.ok((r.status === 200 && r.text === 'OK') || (r.status === 403 && r.text === 'Unauthorized: Invalid token'), JSON.stringify(r));
          const admitted = answers.filter((r) => r.status === 200).length;
          admittedTotal += admitted;
          t.diagnostic(`round ${round}: ${admitted} of ${RACERS} admitted`);
          await idle(d);
          const at = `round ${round}: ${admitted} admitted`;
          await until(`${at}: B lists no live session of the deleted token`, () => call(b.base, 'GET', `/api/sessions?tokenId=${id}`, { secret }), (r) => r.body.data?.pagination?.totalItems === 0);
          await until(`${at}: termination counters`, () => terminations(d), (c) => (c['delete/ended'] ?? 0) >= admittedTotal);
          await idle(d);
          assert.equal((await terminations(d))['delete/ended'] ?? 0, admittedTotal, at);
          const mine = events.filter((e) => e.sessionId?.includes(`#${tag}`));
          assert.equal(mine.length, admitted, `${at}: ended events ${JSON.stringify(mine)}`);
          assert.equal(new Set(mine.map((e) => e.sessionId)).size, admitted, at);
          assert.deepEqual([...new Set(mine.map((e) => e.reason))], admitted ? ['token_revoked'] : [], at);
        }
      });
    }
  });

  describe('an expiry seen by the sweepers of both instances (terminateOn [expire])', () => {
    let d: Deployment;
    let secret: string;
    before(async () => {
      d = await redisDeployment(2, { enforcement: { storeTimeoutMs: 3000, terminateOn: ['expire'] } });
      secret = (await d.instances[0].t.account()).secret;
      await publishers(d, secret, 'warm'); // the first admissions of an instance are slow: not against a deadline
    });
    after(() => d.close());

    it(`ends each of ${SESSIONS} sessions once, the expiry given at creation or by an update through A (${ROUNDS} rounds)`, LONGEST, async () => {
      const [a, b] = d.instances;
      const events = endedEvents(d);
      for (let round = 0; round < ROUNDS; round++) {
        const soon = (ms: number) => new Date(Date.now() + ms).toISOString();
        const p = await publishers(d, secret, `exp${round}x`, { expiresOn: round % 2 ? soon(3_600_000) : soon(3000) });
        if (round % 2) {
          const updated = await call(a.base, 'PUT', `/api/publish_token/${p.id}`, { secret, body: { expiresOn: soon(1500) } });
          assert.equal(updated.status, 200, JSON.stringify(updated.body));
        }
        await until('B lists no session of the token', () => call(b.base, 'GET', `/api/sessions?tokenId=${p.id}`, { secret }), (r) => r.body.data?.pagination?.totalItems === 0);
        await until('termination counters', () => terminations(d), (c) => (c['expire/ended'] ?? 0) >= SESSIONS * (round + 1));
        await new Promise((r) => setTimeout(r, 600)); // two more sweeps on each instance
        await idle(d);
        assert.deepEqual(await terminations(d), { 'expire/ended': SESSIONS * (round + 1) }, `round ${round}`);
        for (const sid of p.ids) {
          const one = await call(b.base, 'GET', `/api/sessions/${sid}`, { secret });
          assert.equal(one.body.data.endedReason, 'token_expired', `round ${round}, session ${sid}`);
        }
        const mine = events.filter((e) => e.sessionId?.includes(`#exp${round}x`));
        assert.deepEqual(
          mine.map((e) => [e.sessionId, e.reason]).sort(),
          p.sessions.map((s) => [`127.0.0.1#${s.clientid}`, 'token_expired']).sort(),
          `round ${round}`,
        );
      }
    });
  });
});
