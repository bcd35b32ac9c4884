// Odd bodies sent to /hooks/authorize on a real server (the production request listener, with its
// decision fast path): each gets exactly the answer of the express body parsers (415, 413, 400, or
// a decision on the parsed body). Every expected answer here was recorded from the body-parser
// chain before the decision endpoints read JSON themselves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { testApp } from '../helpers/app.js';
import { listen, type Listening } from '../helpers/listen.js';
import { sqliteFactory } from '../helpers/stores.js';

const LIMIT = 4096;
const f = sqliteFactory();
let l: Listening;
let port = 0;

before(async () => {
  await f.setup();
  const t = await testApp(await f.make(), { server: { bodyLimitBytes: LIMIT } });
  l = await listen(t.app);
  port = Number(new URL(l.base).port);
});
after(async () => {
  await l.close();
  await f.teardown();
});

interface Sent {
  headers: Record<string, string>;
  body?: Buffer | string;
  /** Sent in several chunks without a content-length. */
  chunked?: boolean;
}

function send(s: Sent): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const body = s.body === undefined ? undefined : Buffer.from(s.body);
    const headers: Record<string, string> = { ...s.headers };
    if (body && !s.chunked) headers['content-length'] = String(body.length);
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/hooks/authorize', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (body && s.chunked) {
      for (let i = 0; i < body.length; i += 1000) req.write(body.subarray(i, i + 1000));
    } else if (body) req.write(body);
    req.end();
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const valid = JSON.stringify({ action: 'subscribe', streamName: 'cam1' });
const big = JSON.stringify({ action: 'subscribe', streamName: 'cam1', origin: 'x'.repeat(LIMIT) });
/** A valid body of exactly `bytes` bytes. */
function padded(bytes: number): string {
  const empty = JSON.stringify({ action: 'subscribe', streamName: 'cam1', origin: '' });
  return empty.replace('"origin":""', `"origin":"${'x'.repeat(bytes - empty.length)}"`);
}

/** What each case is answered (recorded from the express body parsers); `<id>` stands for the decision id. */
const EXPECTED: Record<string, [number, string]> = {
  "malformed JSON": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "top-level string": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "top-level number": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "top-level null": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "whitespace only": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "an array": [400, "{\"allowed\":false,\"reason\":\"bad_request\",\"message\":\"Validation errors\",\"errors\":{\"body\":[\"Invalid input: expected object, received array\"]}}"],
  "empty with content-length 0": [400, "{\"allowed\":false,\"reason\":\"bad_request\",\"message\":\"Validation errors\",\"errors\":{\"action\":[\"Invalid option: expected one of \\\"publish\\\"|\\\"subscribe\\\"\"],\"streamName\":[\"Invalid input: expected string, received undefined\"]}}"],
  "no body at all": [400, "{\"allowed\":false,\"reason\":\"bad_request\",\"message\":\"Validation errors\",\"errors\":{\"action\":[\"Invalid option: expected one of \\\"publish\\\"|\\\"subscribe\\\"\"],\"streamName\":[\"Invalid input: expected string, received undefined\"]}}"],
  "valid, no token": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "valid, leading whitespace": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "valid, BOM first": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "valid, upper case type and charset": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "valid, charset without space": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "valid, quoted charset": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "gzip": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "unknown content-encoding": [415, "{\"status\":\"fail\",\"data\":{\"message\":\"Unsupported Media Type\"}}"],
  "identity content-encoding": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "latin1 charset": [415, "{\"status\":\"fail\",\"data\":{\"message\":\"Unsupported Media Type\"}}"],
  "utf-16 charset": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "application/vnd+json": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "application/vnd.x+json malformed": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "text/plain": [415, "{\"status\":\"fail\",\"data\":{\"message\":\"Unsupported Media Type\"}}"],
  "form": [415, "{\"status\":\"fail\",\"data\":{\"message\":\"Unsupported Media Type\"}}"],
  "no content-type": [415, "{\"status\":\"fail\",\"data\":{\"message\":\"Unsupported Media Type\"}}"],
  "over the limit": [413, "{\"status\":\"fail\",\"data\":{\"message\":\"Request body larger than 4096 bytes\"}}"],
  "at the limit": [400, "{\"allowed\":false,\"reason\":\"bad_request\",\"message\":\"Validation errors\",\"errors\":{\"origin\":[\"Too big: expected string to have <=2048 characters\"]}}"],
  "one byte over the limit": [413, "{\"status\":\"fail\",\"data\":{\"message\":\"Request body larger than 4096 bytes\"}}"],
  "chunked": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "chunked over the limit": [413, "{\"status\":\"fail\",\"data\":{\"message\":\"Request body larger than 4096 bytes\"}}"],
  "chunked malformed": [400, "{\"status\":\"fail\",\"data\":{\"message\":\"Malformed JSON in request body\"}}"],
  "invalid UTF-8 in a string": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
  "unknown field": [400, "{\"allowed\":false,\"reason\":\"bad_request\",\"message\":\"Validation errors\",\"errors\":{\"extra\":[\"unknown field\"]}}"],
  "duplicate keys": [401, "{\"allowed\":false,\"reason\":\"token_required\",\"message\":\"Unauthorized: Token required\",\"decisionId\":\"<id>\"}"],
};

const CASES: Array<[string, Sent]> = [
  ['malformed JSON', { headers: JSON_TYPE, body: '{"action":' }],
  ['top-level string', { headers: JSON_TYPE, body: '"subscribe"' }],
  ['top-level number', { headers: JSON_TYPE, body: '42' }],
  ['top-level null', { headers: JSON_TYPE, body: 'null' }],
  ['whitespace only', { headers: JSON_TYPE, body: ' \n\t ' }],
  ['an array', { headers: JSON_TYPE, body: '[]' }],
  ['empty with content-length 0', { headers: JSON_TYPE, body: '' }],
  ['no body at all', { headers: JSON_TYPE }],
  ['valid, no token', { headers: JSON_TYPE, body: valid }],
  ['valid, leading whitespace', { headers: JSON_TYPE, body: `  \r\n${valid}` }],
  ['valid, BOM first', { headers: JSON_TYPE, body: `\uFEFF${valid}` }],
  ['valid, upper case type and charset', { headers: { 'content-type': 'Application/JSON; Charset=UTF-8' }, body: valid }],
  ['valid, charset without space', { headers: { 'content-type': 'application/json;charset=utf-8' }, body: valid }],
  ['valid, quoted charset', { headers: { 'content-type': 'application/json; charset="utf-8"' }, body: valid }],
  ['gzip', { headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, body: gzipSync(valid) }],
  ['unknown content-encoding', { headers: { ...JSON_TYPE, 'content-encoding': 'bogus' }, body: valid }],
  ['identity content-encoding', { headers: { ...JSON_TYPE, 'content-encoding': 'identity' }, body: valid }],
  ['latin1 charset', { headers: { 'content-type': 'application/json; charset=latin1' }, body: valid }],
  ['utf-16 charset', { headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from(valid, 'utf16le') }],
  ['application/vnd+json', { headers: { 'content-type': 'application/vnd+json' }, body: valid }],
  ['application/vnd.x+json malformed', { headers: { 'content-type': 'application/vnd.x+json' }, body: '{' }],
  ['text/plain', { headers: { 'content-type': 'text/plain' }, body: valid }],
  ['form', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'action=subscribe' }],
  ['no content-type', { headers: {}, body: valid }],
  ['over the limit', { headers: JSON_TYPE, body: big }],
  ['at the limit', { headers: JSON_TYPE, body: padded(LIMIT) }],
  ['one byte over the limit', { headers: JSON_TYPE, body: padded(LIMIT + 1) }],
  ['chunked', { headers: JSON_TYPE, body: valid, chunked: true }],
  ['chunked over the limit', { headers: JSON_TYPE, body: big, chunked: true }],
  ['chunked malformed', { headers: JSON_TYPE, body: '{"a":', chunked: true }],
  ['invalid UTF-8 in a string', { headers: JSON_TYPE, body: Buffer.concat([Buffer.from('{"action":"subscribe","streamName":"c'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]) }],
  ['unknown field', { headers: JSON_TYPE, body: JSON.stringify({ action: 'subscribe', streamName: 'cam1', extra: 1 }) }],
  ['duplicate keys', { headers: JSON_TYPE, body: '{"action":"publish","action":"subscribe","streamName":"cam1"}' }],
];

for (const [name, sent] of CASES) {
  test(`${name}: the answer of the body parsers`, async () => {
    const r = await send(sent);
    const [status, body] = EXPECTED[name];
    assert.equal(r.status, status, r.body);
    assert.equal(r.type, 'application/json; charset=utf-8');
    assert.equal(r.body.replace(/"decisionId":"[0-9a-f-]{36}"/, '"decisionId":"<id>"'), body);
  });
}

test('every case has its recorded answer', () => {
  assert.deepEqual(CASES.map(([n]) => n).sort(), Object.keys(EXPECTED).sort());
});
