// SRT stream ids in the standard access-control syntax as tables: what each id asks for, and each
// refusal with the reason it gives (never echoing a value); then the request /hooks/authorize makes
// of an id against the body's own fields.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSrtStreamId, srtModeAction, srtTokenKeyProblem, isStandardSrtStreamId, type SrtStreamId } from '../../src/domain/srt-stream-id.js';
import { srtRequest } from '../../src/callers/authorize.js';

const TOKEN = 'a'.repeat(64);

/** A parsed id: the defaults, then what the case names. */
const id = (fields: Partial<SrtStreamId> & { resource: string }): SrtStreamId => ({
  mode: 'request',
  type: 'stream',
  user: undefined,
  host: undefined,
  session: undefined,
  token: undefined,
  custom: new Map(),
  ...fields,
});

describe('parseSrtStreamId: valid ids', () => {
  it('reads the standard keys, the credential and custom keys', () => {
    const cases: Array<[string, SrtStreamId]> = [
      ['#!::r=cam1', id({ resource: 'cam1' })],
      [`#!::r=cam1,m=publish,sg_token=${TOKEN}`, id({ resource: 'cam1', mode: 'publish', token: TOKEN })],
      [`#!::m=request,r=cam1,sg_token=${TOKEN}`, id({ resource: 'cam1', token: TOKEN })],
      ['#!::r=ACCT/cam1,t=stream,m=publish', id({ resource: 'ACCT/cam1', mode: 'publish' })],
      ['#!::u=alice,r=cam1,h=live.example.com,s=abc123', id({ resource: 'cam1', user: 'alice', host: 'live.example.com', session: 'abc123' })],
      ['#!::r=cam1,user_ref=42,acme-region=eu', id({ resource: 'cam1', custom: new Map([['user_ref', '42'], ['acme-region', 'eu']]) })],
      // a value may hold ':', '/', '.', '#' and non-ASCII text
      ['#!::r=live/café,user_note=a:b/c.d#e', id({ resource: 'live/café', custom: new Map([['user_note', 'a:b/c.d#e']]) })],
      // a custom key named like an object property is data, nothing else
      ['#!::r=cam1,__proto__=x', id({ resource: 'cam1', custom: new Map([['__proto__', 'x']]) })],
      // the credential's value may fill the id up to 512 characters
      [`#!::r=c,m=publish,sg_token=${'t'.repeat(512 - 27)}`, id({ resource: 'c', mode: 'publish', token: 't'.repeat(512 - 27) })],
    ];
    for (const [raw, want] of cases) assert.deepEqual(parseSrtStreamId(raw), { ok: true, id: want }, raw);
  });

  it('reads the credential from the configured key, leaving sg_token a custom key then', () => {
    assert.deepEqual(parseSrtStreamId(`#!::r=cam1,acme_key=${TOKEN},sg_token=x`, 'acme_key'), {
      ok: true,
      id: id({ resource: 'cam1', token: TOKEN, custom: new Map([['sg_token', 'x']]) }),
    });
  });

  it('maps a mode to the action it asks for', () => {
    assert.equal(srtModeAction('publish'), 'publish');
    assert.equal(srtModeAction('request'), 'subscribe');
  });
});

describe('parseSrtStreamId: refusals, each with its reason', () => {
  const cases: Array<[string, string, string]> = [
    ['nested form', `#!:{r=cam1,sg_token=${TOKEN}}`, 'the nested form #!:{…} is not supported; write #!::key=value,… pairs'],
    ['not the standard syntax (MediaMTX custom form)', `publish:cam1:user:${TOKEN}`, 'not the standard syntax: a stream id starts with #!::'],
    ['not the standard syntax (SRS path form)', 'live/cam1?token=x', 'not the standard syntax: a stream id starts with #!::'],
    ['nothing after the prefix', '#!::', 'no key=value pairs after #!::'],
    ['comma in a value', '#!::r=cam1,sg_token=abc,def', "pair 3 has no '=' (a value cannot hold a comma: the syntax has no escaping)"],
    ['pair without =', '#!::r=cam1,publish', "pair 2 has no '=' (a value cannot hold a comma: the syntax has no escaping)"],
    ['= in a value', '#!::r=cam1,sg_token=ab=c', "pair 2 has more than one '=' (a value cannot hold '=': the syntax has no escaping)"],
    ['trailing comma', '#!::r=cam1,', 'pair 2 is empty (two commas, or a comma at an end)'],
    ['two commas', '#!::r=cam1,,m=publish', 'pair 2 is empty (two commas, or a comma at an end)'],
    ['empty key', '#!::r=cam1,=x', 'pair 2 has an empty key'],
    ['key with a space', '#!::r=cam1,my key=x', 'pair 2 has a key that is not letters, digits, _ and -'],
    ['key too long', `#!::r=cam1,${'k'.repeat(65)}=x`, 'pair 2 has a key over 64 characters'],
    ['unknown single-letter key', '#!::r=cam1,x=1', 'unknown key x: single-letter keys are reserved by the SRT access-control syntax (u, r, h, s, t, m)'],
    ['upper-case single letter', '#!::R=cam1', 'unknown key R: single-letter keys are reserved by the SRT access-control syntax (u, r, h, s, t, m)'],
    ['duplicate standard key', '#!::r=cam1,r=cam2', 'key r is given twice'],
    ['duplicate credential', `#!::r=cam1,sg_token=${TOKEN},sg_token=${TOKEN}`, 'key sg_token is given twice'],
    ['duplicate mode', '#!::r=cam1,m=request,m=publish', 'key m is given twice'],
    ['empty value', '#!::r=cam1,sg_token=', 'key sg_token has an empty value'],
    ['empty resource', '#!::r=,m=publish', 'key r has an empty value'],
    ['value too long', `#!::r=cam1,u=${'x'.repeat(257)}`, 'the value of u is over 256 characters'],
    ['custom value too long', `#!::r=cam1,user_x=${'x'.repeat(257)}`, 'the value of user_x is over 256 characters'],
    ['id over 512 characters', `#!::r=cam1,sg_token=${'t'.repeat(512 - 19)}`, 'over 512 characters (513), the longest stream id SRT carries'],
    ['control character', '#!::r=cam1\n,m=publish', 'a control character'],
    ['lone surrogate', '#!::r=cam\ud8001', 'not valid Unicode text (lone surrogate)'],
    ['no resource', `#!::m=publish,sg_token=${TOKEN}`, 'r (the resource: the stream) is required'],
    ['type file', '#!::r=cam1,t=file', 't is not stream: only t=stream (the default) names a stream (file and auth are not admitted)'],
    ['type auth', '#!::r=cam1,t=auth', 't is not stream: only t=stream (the default) names a stream (file and auth are not admitted)'],
    ['bidirectional', '#!::r=cam1,m=bidirectional', 'm=bidirectional is not admitted: ask for m=request (receive) or m=publish (send)'],
    ['non-standard play', '#!::r=cam1,m=play', 'm=play is not standard: write m=request (receive)'],
    ['unknown mode', '#!::r=cam1,m=Publish', 'm is not a mode: m=request (receive, the default) or m=publish (send)'],
  ];
  for (const [name, raw, problem] of cases) {
    it(name, () => {
      const r = parseSrtStreamId(raw);
      assert.deepEqual(r, { ok: false, problem });
      // a reason never carries the credential
      assert.ok(!problem.includes(TOKEN));
    });
  }

  it('tells the standard syntax from the other forms', () => {
    assert.equal(isStandardSrtStreamId('#!::r=cam1'), true);
    assert.equal(isStandardSrtStreamId('#!:{"r":"cam1"}'), false);
    assert.equal(isStandardSrtStreamId('publish:cam1'), false);
  });

  it('takes only custom keys to carry the credential', () => {
    assert.equal(srtTokenKeyProblem('sg_token'), null);
    assert.equal(srtTokenKeyProblem('acme-key2'), null);
    assert.equal(srtTokenKeyProblem('s'), 'single-letter keys are reserved by the SRT access-control syntax; use a custom key such as sg_token');
    assert.equal(srtTokenKeyProblem(''), 'a key of letters, digits, _ and - (at most 64)');
    assert.equal(srtTokenKeyProblem('sg token'), 'a key of letters, digits, _ and - (at most 64)');
  });
});

describe('srtRequest: an id against the explicit fields of /hooks/authorize', () => {
  const ask = (body: Record<string, unknown>, accountInPath = false) => srtRequest({ srtStreamId: '', ...body } as Parameters<typeof srtRequest>[0], 'sg_token', accountInPath);
  const pub = `#!::r=cam1,m=publish,sg_token=${TOKEN}`;

  it('takes the stream, the action and the token from the id', () => {
    assert.deepEqual(ask({ srtStreamId: pub }), { action: 'publish', streamName: 'cam1', accountId: undefined, token: TOKEN });
    assert.deepEqual(ask({ srtStreamId: `#!::r=cam1,sg_token=${TOKEN}` }), { action: 'subscribe', streamName: 'cam1', accountId: undefined, token: TOKEN });
  });

  it('accepts explicit fields that agree, and takes what the id does not carry from the body', () => {
    assert.deepEqual(ask({ srtStreamId: pub, action: 'publish', streamName: 'cam1', token: TOKEN }), { action: 'publish', streamName: 'cam1', accountId: undefined, token: TOKEN });
    assert.deepEqual(ask({ srtStreamId: '#!::r=cam1,m=publish', token: TOKEN, accountId: 'ACCT' }), { action: 'publish', streamName: 'cam1', accountId: 'ACCT', token: TOKEN });
  });

  it('refuses a mode contradicting the action, and fields contradicting the id, naming the field', () => {
    assert.deepEqual(ask({ srtStreamId: pub, action: 'subscribe' }), { errors: { action: ['m=publish of srtStreamId asks to publish, not to subscribe'] } });
    assert.deepEqual(ask({ srtStreamId: `#!::r=cam1,sg_token=${TOKEN}`, action: 'publish' }), { errors: { action: ['m=request of srtStreamId asks to subscribe, not to publish'] } });
    assert.deepEqual(ask({ srtStreamId: pub, streamName: 'cam2' }), { errors: { streamName: ['differs from the stream r of srtStreamId names'] } });
    assert.deepEqual(ask({ srtStreamId: pub, token: 'b'.repeat(64) }), { errors: { token: ['differs from the sg_token of srtStreamId'] } });
    assert.deepEqual(ask({ srtStreamId: '#!::r=ACCT/cam1,m=publish', accountId: 'OTHER' }, true), { errors: { accountId: ['differs from the account r of srtStreamId names'] } });
  });

  it('reads r as <account>/<stream> with hooks.accountInPath, and refuses an r naming none', () => {
    assert.deepEqual(ask({ srtStreamId: `#!::r=ACCT/cam1,m=publish,sg_token=${TOKEN}` }, true), { action: 'publish', streamName: 'cam1', accountId: 'ACCT', token: TOKEN });
    assert.deepEqual(ask({ srtStreamId: pub }, true), { errors: { srtStreamId: ['r names no account: with hooks.accountInPath: true it is <account>/<stream>'] } });
    assert.deepEqual(ask({ srtStreamId: '#!::r=ACCT/' }, true), { errors: { srtStreamId: ['r names no stream: a stream name of 1 to 128 characters after an account of at most 64'] } });
    assert.deepEqual(ask({ srtStreamId: `#!::r=${'c'.repeat(129)}` }), { errors: { srtStreamId: ['r names no stream: a stream name of 1 to 128 characters'] } });
    // without accountInPath, r is the whole stream name
    assert.deepEqual(ask({ srtStreamId: '#!::r=live/cam1,m=publish' }), { action: 'publish', streamName: 'live/cam1', accountId: undefined, token: undefined });
  });

  it('passes a malformed id on as a 400 under srtStreamId', () => {
    assert.deepEqual(ask({ srtStreamId: '#!::r=cam1,r=cam2' }), { errors: { srtStreamId: ['key r is given twice'] } });
  });
});
