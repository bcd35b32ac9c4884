// Fuzzing the director (publish, subscribe, CORS preflight), the JWKS and the operational
// endpoints with mutated fixtures, tokens in the Authorization header, hostile headers, queries,
// content types and raw bytes. The harness checks each answer and the run.
import { describe, it, before, after } from 'node:test';
import fc from 'fast-check';
import { checkOne, finishRun, fuzzOptions, fuzzTarget, startRun, type Target } from './harness.js';
import { caseOf, toRequest, type EntryPoint } from './cases.js';

const ENTRY_POINTS: EntryPoint[] = [
  { method: 'POST', path: '/api/director/publish', auth: 'streamToken', body: () => ({ streamName: 'cam1', streamType: 'WebRtc' }) },
  { method: 'POST', path: '/api/director/subscribe', auth: 'streamToken', body: (t) => ({ streamName: 'cam1', streamAccountId: t.seeded.accountId }) },
  { method: 'OPTIONS', path: '/api/director/subscribe', auth: 'none', headers: () => ({ origin: 'https://www.example.com', 'access-control-request-method': 'POST' }) },
  { method: 'GET', path: '/.well-known/jwks.json', auth: 'none' },
  { method: 'GET', path: '/healthz', auth: 'none' },
  { method: 'GET', path: '/readyz', auth: 'none' },
  { method: 'GET', path: '/metrics', auth: 'none' },
  { method: 'GET', path: '/api/openapi.json', auth: 'none' },
];

describe('fuzzing the director, JWKS and operational endpoints', () => {
  let t: Target;
  before(async () => {
    t = await fuzzTarget();
  });
  after(() => t.close());

  it('every entry point: no 5xx, refusals change nothing and say why, the process stays healthy', { timeout: 600_000 }, async () => {
    const run = startRun();
    await fc.assert(
      fc.asyncProperty(caseOf(ENTRY_POINTS, t), async (c) => {
        await checkOne(t, await toRequest(c, t), run.stats);
      }),
      fuzzOptions(250, 1500),
    );
    await finishRun(t, run, ENTRY_POINTS.map((e) => `${e.method} ${e.path}`));
  });
});
