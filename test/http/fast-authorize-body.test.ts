// The hand-written check of /hooks/authorize bodies (fastAuthorizeBody) against the zod schema it
// stands in for: over thousands of seeded random bodies (valid, invalid, lengths at the limits,
// unicode, control characters, lone surrogates, extra keys, wrong types), a body it accepts is
// accepted by zod with the same data, and (for bodies as JSON.parse makes them) it accepts every
// body zod accepts (but for strings near a limit holding surrogate pairs), so zod is left only
// the refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizeBodySchema, fastAuthorizeBody } from '../../src/callers/authorize.js';
import { seededRandom, type SeededRandom } from '../helpers/property.js';

const RUNS = 20_000;
const PAIR = /[\ud800-\udbff][\udc00-\udfff]/;

const CHARS = ['a', 'Z', '0', '-', '_', '.', '/', ' ', '\u0000', '\u001f', '\u007f', 'é', '日', '😀', '\ud800', '\udc00', '"', '\\', '\n'];

function str(r: SeededRandom, lengths: number[]): string {
  const n = r.next() < 0.6 ? lengths[r.int(0, lengths.length - 1)] : r.int(0, 40);
  const pool = r.next() < 0.5 ? ['a', 'b', 'c', '1'] : CHARS;
  let s = '';
  while (s.length < n) s += pool[r.int(0, pool.length - 1)];
  // a surrogate pair can overshoot by one: cut back to the length aimed at (may leave a lone half)
  return s.slice(0, n);
}

const IPS = ['203.0.113.7', '::1', '2001:db8::1', '::ffff:192.0.2.1', ' 10.0.0.1 ', '10.0.0', '1.2.3.4.5', 'localhost', '', '0x7f.1', '127.1', '[::1]', 'fe80::1%eth0'];
const COUNTRIES = ['FR', 'us', 'Gb', 'F', 'FRA', '12', 'é1', ''];
const ACTIONS = ['publish', 'subscribe', 'Publish', 'read', ''];

function wrong(r: SeededRandom): unknown {
  const choices: unknown[] = [null, 0, 1.5, true, false, [], {}, ['a'], { a: 1 }];
  return choices[r.int(0, choices.length - 1)];
}

/** A field: usually a plausible value (around its limits), sometimes a wrong type, sometimes absent. */
function field(r: SeededRandom, gen: () => unknown, presence = 0.5): unknown {
  const x = r.next();
  if (x > presence) return undefined;
  if (x < 0.05) return wrong(r);
  return gen();
}

function body(r: SeededRandom): unknown {
  const shape = r.next();
  if (shape < 0.02) return wrong(r);
  const b: Record<string, unknown> = {
    action: field(r, () => (r.next() < 0.9 ? ACTIONS[r.int(0, 1)] : ACTIONS[r.int(0, ACTIONS.length - 1)]), 0.97),
    token: field(r, () => (r.next() < 0.9 ? r.hex(64) : str(r, [0, 8191, 8192, 8193]))),
    streamName: field(r, () => str(r, [0, 1, 2, 127, 128, 129]), 0.97),
    accountId: field(r, () => str(r, [0, 1, 63, 64, 65]), 0.2),
    clientIp: field(r, () => (r.next() < 0.8 ? IPS[r.int(0, IPS.length - 1)] : str(r, [0, 63, 64, 65])), 0.5),
    origin: field(r, () => (r.next() < 0.8 ? 'https://player.example.com' : str(r, [0, 2047, 2048, 2049])), 0.3),
    country: field(r, () => COUNTRIES[r.int(0, COUNTRIES.length - 1)], 0.3),
    protocol: field(r, () => (r.next() < 0.7 ? ['hls', 'RTMP', 'webrtc'][r.int(0, 2)] : str(r, [0, 1, 32, 33])), 0.5),
    sessionId: field(r, () => str(r, [0, 255, 256, 257]), 0.2),
  };
  if (r.next() < 0.08) b[['extra', '__proto__', 'constructor', 'Token', 'toString'][r.int(0, 4)]] = r.next() < 0.5 ? 'x' : null;
  for (const k of Object.keys(b)) if (b[k] === undefined) delete b[k];
  // As the body arrives: through JSON text (own "__proto__" keys, no undefined values).
  return r.next() < 0.03 ? [b] : JSON.parse(JSON.stringify(b));
}

test('fast accept implies zod accept with the same data, and zod accept implies fast accept', () => {
  const r = seededRandom();
  console.log(`fastAuthorizeBody vs zod: ${RUNS} bodies, ${r.replay}`);
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < RUNS; i++) {
    const b = body(r);
    const fast = fastAuthorizeBody(b);
    const slow = authorizeBodySchema.safeParse(b);
    const seen = `body #${i} ${JSON.stringify(b)} (${r.replay})`;
    if (fast !== undefined) {
      assert.ok(slow.success, `fast accepted what zod refuses: ${seen}`);
      assert.deepEqual(fast, slow.data, seen);
      accepted++;
    } else {
      // zod counts a string's length in code points, the check in UTF-16 units (a surrogate pair
      // is two): a string near its limit with pairs in it is left to zod, which may accept it.
      if (!PAIR.test(JSON.stringify(b) ?? '')) assert.ok(!slow.success, `zod accepts what the fast check left to it: ${seen}`);
      refused++;
    }
  }
  // Both sides are well represented.
  assert.ok(accepted > RUNS / 10, `${accepted} accepted`);
  assert.ok(refused > RUNS / 10, `${refused} refused`);
});

test('a string over its limit in UTF-16 units but not in code points is left to zod', () => {
  const b = { action: 'subscribe', streamName: 'cam1', protocol: '😀'.repeat(20) };
  assert.equal(fastAuthorizeBody(b), undefined);
  assert.equal(authorizeBodySchema.safeParse(b).success, true);
});

test('bodies not made by JSON.parse are left to zod', () => {
  const proto = Object.create({ action: 'subscribe' });
  proto.streamName = 'cam1';
  assert.equal(fastAuthorizeBody(proto), undefined);
  assert.equal(fastAuthorizeBody({ action: 'subscribe', streamName: 'cam1', token: undefined }), undefined);
  assert.equal(fastAuthorizeBody(Object.assign(Object.create(null), { action: 'subscribe', streamName: 'cam1' })), undefined);
  assert.deepEqual(fastAuthorizeBody({ action: 'subscribe', streamName: 'cam1' }), { action: 'subscribe', streamName: 'cam1' });
});
