// The batched histograms and tallied counters print exactly what prom-client's own Histogram and
// Counter print for the same observations (series order, cumulative buckets, `le` formatting,
// sum, count, label escaping), across scrapes and after a reset. Observations are seeded-random;
// the seed is printed and FC_SEED=<n> replays a run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { Metrics } from '../../src/observability/metrics.js';
import { runSeed, seededRandom } from '../helpers/property.js';

const seed = runSeed();
console.log(`metrics-batched: seed ${seed} (replay with FC_SEED=${seed})`);
const rng = (s: number) => seededRandom(s).next;

const names = {
  decisions: 'streamgate_decisions_total',
  decisionSeconds: 'streamgate_decision_duration_seconds',
  cache: 'streamgate_token_cache_total',
  http: 'streamgate_http_requests_total',
  httpSeconds: 'streamgate_http_request_duration_seconds',
};

/** The same metrics as plain prom-client objects, each incremented and observed directly. */
function reference(m: Metrics) {
  const registry = new Registry();
  const counter = (c: Counter<string>) =>
    new Counter({ name: (c as unknown as { name: string }).name, help: (c as unknown as { help: string }).help, labelNames: (c as unknown as { labelNames: string[] }).labelNames, registers: [registry] });
  const histogram = (h: Metrics['decisionSeconds']) =>
    new Histogram({ name: h.name, help: h.help, labelNames: [...h.labelNames], buckets: [...h.buckets], registers: [registry] });
  return {
    registry,
    decisions: counter(m.decisions),
    decisionSeconds: histogram(m.decisionSeconds),
    cache: counter(m.cacheLookups),
    http: counter(m.httpRequests),
    httpSeconds: histogram(m.httpSeconds),
  };
}

/** A duration: mostly sub-millisecond, some exactly on a bound, some above every bound, some zero. */
function duration(r: () => number, bounds: readonly number[]): number {
  const x = r();
  if (x < 0.1) return bounds[Math.floor(r() * bounds.length)];
  if (x < 0.15) return bounds[bounds.length - 1] + r() * 10;
  if (x < 0.17) return 0;
  return 10 ** (-6 + r() * 6.5);
}

function drive(m: Metrics, ref: ReturnType<typeof reference>, r: () => number, n: number): void {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const actions = ['publish', 'play'];
  const adapters = ['generic', 'nginx-rtmp', 'mediamtx', 'srs'];
  const results = ['allow', 'deny'];
  const reasons = ['ok', 'token_expired', 'stream_not_allowed', 'store_unavailable'];
  // one route carries the characters prom-client escapes
  const routes = ['/hooks/authorize', '/api/publish_token/:id', 'unmatched', 'odd "route"\\\nname'];
  const methods = ['GET', 'POST'];
  const statuses = [200, 204, 401, 404, 500];
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.35) {
      const [action, adapter, result, reason] = [pick(actions), pick(adapters), pick(results), pick(reasons)];
      const s = duration(r, m.decisionSeconds.buckets);
      m.decided(action, adapter, result, reason, s);
      ref.decisions.labels(action, adapter, result, reason, 'full').inc();
      ref.decisionSeconds.labels(adapter, result).observe(s);
    } else if (k < 0.45) {
      const [action, adapter, result, reason] = [pick(actions), pick(adapters), pick(results), pick(reasons)];
      m.credentialChecked(action, adapter, result, reason);
      ref.decisions.labels(action, adapter, result, reason, 'credential').inc();
    } else if (k < 0.6) {
      const result = pick(['hit', 'miss'] as const);
      m.cacheLookup(result);
      ref.cache.labels(result).inc();
    } else {
      const [route, method, status] = [pick(routes), pick(methods), pick(statuses)];
      const s = duration(r, m.httpSeconds.buckets);
      m.httpRequest(route, method, status, s);
      ref.http.labels(route, method, String(status)).inc();
      ref.httpSeconds.labels(route).observe(s);
    }
  }
}

/**
 * `counterOrder: false` compares the counters' lines as sets: a Tally hands its label sets to the
 * counter in the order it first saw them, which after a registry reset is not the order of the
 * first increments since the reset (the values are the same).
 */
async function assertSame(m: Metrics, ref: ReturnType<typeof reference>, when: string, counterOrder = true): Promise<void> {
  const counters = [names.decisions, names.cache, names.http];
  for (const name of Object.values(names)) {
    let got = await m.registry.getSingleMetricAsString(name);
    let want = await ref.registry.getSingleMetricAsString(name);
    if (!counterOrder && counters.includes(name)) {
      got = got.split('\n').sort().join('\n');
      want = want.split('\n').sort().join('\n');
    }
    assert.equal(got, want, `${name} text differs ${when} (seed ${seed})`);
  }
  if (!counterOrder) return;
  const json = async (reg: Registry) => (await reg.getMetricsAsJSON()).filter((x) => Object.values(names).includes(x.name));
  assert.deepEqual(await json(m.registry), await json(ref.registry), `JSON differs ${when} (seed ${seed})`);
}

describe('batched metrics', () => {
  it('print what prom-client prints for the same observations, across scrapes', async () => {
    const r = rng(seed);
    const m = new Metrics({ defaultMetrics: false });
    const ref = reference(m);
    await assertSame(m, ref, 'before any observation');
    for (let round = 0; round < 4; round++) {
      drive(m, ref, r, 2000);
      await assertSame(m, ref, `after round ${round}`);
    }
    // the full scrape too: same series, same order, same HELP and TYPE lines
    const pick = (text: string) =>
      text
        .split('\n\n')
        .filter((block) => Object.values(names).some((n) => block.startsWith(`# HELP ${n} `)))
        .join('\n\n');
    assert.equal(pick(await m.registry.metrics()), pick(await ref.registry.metrics()));
  });

  it('reset() empties the histograms; series then print in their new first-observed order', async () => {
    const r = rng(seed + 1);
    const m = new Metrics({ defaultMetrics: false });
    const ref = reference(m);
    drive(m, ref, r, 500);
    await assertSame(m, ref, 'before reset');
    m.registry.resetMetrics();
    ref.registry.resetMetrics();
    for (const h of [m.decisionSeconds, m.httpSeconds]) {
      assert.deepEqual((await h.get()).values, [], `${h.name} not empty after reset`);
      assert.equal(await m.registry.getSingleMetricAsString(h.name), `# HELP ${h.name} ${h.help}\n# TYPE ${h.name} histogram`);
    }
    // observe in an order different from the first: the printed order follows the new one
    m.httpRequest('unmatched', 'GET', 404, 0.003);
    ref.http.labels('unmatched', 'GET', '404').inc();
    ref.httpSeconds.labels('unmatched').observe(0.003);
    drive(m, ref, r, 500);
    await assertSame(m, ref, 'after reset', false);
  });
});
