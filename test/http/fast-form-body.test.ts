// Form bodies read by the decision endpoints' own reader (src/http/fast-body.ts) get exactly what
// body-parser's urlencoded chain gives them: the same parsed fields, or the same error status and
// message. Recorded bodies of the odd shapes, then seeded random bodies (the seed is printed;
// FC_SEED=<n> replays a run).
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { fastFormBody } from '../../src/http/fast-body.js';
import { bodyParsers, FORM_PARAMETER_LIMIT } from '../../src/http/middleware.js';
import { seededRandom } from '../helpers/property.js';

const LIMIT = 2048;

function app() {
  const a = express();
  const echo: express.RequestHandler = (req, res) => {
    res.set('x-read-by', res.locals.fallback ? 'body-parser' : 'fast');
    res.json({ body: req.body ?? null });
  };
  // the fallback chain marks the requests handed to it
  const marked: express.RequestHandler = (_req, res, next) => {
    res.locals.fallback = true;
    next();
  };
  a.post('/fast', fastFormBody(LIMIT, FORM_PARAMETER_LIMIT, [marked, ...bodyParsers('form', LIMIT)]), echo);
  a.post('/slow', ...bodyParsers('form', LIMIT), echo);
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    res.status(err.status ?? 500).json({ status: err.status, type: err.type ?? null, message: err.message });
  };
  a.use(onError);
  return a;
}

describe('form bodies read by the fast reader', () => {
  let a: express.Express;
  before(() => {
    a = app();
  });

  const both = async (body: string, type = 'application/x-www-form-urlencoded') => {
    const fast = await request(a).post('/fast').set('content-type', type).send(body);
    const slow = await request(a).post('/slow').set('content-type', type).send(body);
    assert.deepEqual({ status: fast.status, body: fast.body }, { status: slow.status, body: slow.body }, `${type}: ${JSON.stringify(body)}`);
    return fast;
  };

  it('parses the odd shapes as body-parser does, errors included', async () => {
    const nginx = 'app=live&flashver=FMLE%2F3.0&swfurl=&tcurl=rtmp%3A%2F%2Fh%2Flive&pageurl=&addr=203.0.113.7&clientid=12&call=play&name=cam1&start=0&duration=0&reset=0&token=abc';
    const bodies = [
      nginx,
      '',
      'a=1&a=2&a=3',
      'a',
      'a=',
      '=b',
      '&&&',
      'a+b=c+d',
      'a%20b=%E2%9C%93',
      'bad=%E0%A4%A',
      'pct=%',
      'a[b]=c',
      'a[]=1&a[]=2',
      'a.b=c',
      '__proto__=x&constructor=y&toString=z&hasOwnProperty=1',
      'name=caf%C3%A9&x=ü',
      Array.from({ length: FORM_PARAMETER_LIMIT }, (_, i) => `k${i}=v`).join('&'),
      Array.from({ length: FORM_PARAMETER_LIMIT + 1 }, (_, i) => `k${i}=v`).join('&'),
      'x'.repeat(LIMIT + 1),
    ];
    for (const b of bodies) await both(b);
    const tooMany = await both(Array.from({ length: FORM_PARAMETER_LIMIT + 1 }, (_, i) => `k${i}=v`).join('&'));
    assert.deepEqual([tooMany.status, tooMany.body.message], [413, 'too many parameters']);
    const parsed = await both(nginx);
    assert.deepEqual([parsed.status, parsed.body.body.name, parsed.body.body.tcurl], [200, 'cam1', 'rtmp://h/live']);
    assert.equal(parsed.headers['x-read-by'], 'fast', 'the common shape is read by the fast reader');
    const other = await request(a).post('/fast').set('content-type', 'application/x-www-form-urlencoded; charset=iso-8859-1').send('a=1');
    assert.equal(other.headers['x-read-by'], 'body-parser', 'another charset is left to body-parser');
    // the content types the fast reader takes, and ones it leaves to body-parser
    for (const type of ['application/x-www-form-urlencoded; charset=utf-8', 'APPLICATION/X-WWW-FORM-URLENCODED', 'application/x-www-form-urlencoded; charset=iso-8859-1', 'application/x-www-form-urlencoded; charset=koi8-r', 'text/plain']) {
      await both('a=%E9&b=2', type);
    }
  });

  it('random bodies (seeded): the same fields or the same error', async () => {
    const random = seededRandom();
    console.log(`fast-form-body: ${random.replay}`);
    const next = random.next;
    const alphabet = ['a', 'b', 'k', '1', '=', '&', '+', '%', '%2', '%20', '%E2%9C%93', '[', ']', '.', 'é', '_', '__proto__', ' '];
    for (let n = 0; n < 300; n++) {
      const len = Math.floor(next() * 40);
      let body = '';
      for (let i = 0; i < len; i++) body += alphabet[Math.floor(next() * alphabet.length)];
      await both(body);
    }
  });
});
