// The webhook URL rule (docs/api.md#webhooks): which targets a 400 refuses and with what words, including
// the IP spellings that smuggle a private address past a naive check.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { addressProblem, resolveProblem, urlProblem } from '../../src/webhooks/guard.js';

describe('urlProblem', () => {
  const long = (n: number) => `https://example.com/${'a'.repeat(n - 'https://example.com/'.length)}`;
  const cases: Array<[string, string | null]> = [
    ['http://example.com', 'must use https'],
    ['ftp://example.com/x', 'must use https'],
    ['not a url', 'must be a valid URL'],
    ['', 'must be a URL'],
    ['https://127.0.0.1', 'resolves to a loopback address (127.0.0.1)'],
    ['https://10.0.0.5', 'resolves to a private address (10.0.0.5)'],
    ['https://169.254.169.254/latest/meta-data', 'resolves to a cloud metadata address (169.254.169.254)'],
    ['https://[::ffff:10.0.0.5]', 'resolves to a private address (::ffff:a00:5, IPv4-mapped 10.0.0.5)'],
    ['https://[::1]', 'resolves to a loopback address (::1)'],
    ['https://0x7f.1', 'resolves to a loopback address (127.0.0.1)'],
    ['https://2130706433', 'resolves to a loopback address (127.0.0.1)'],
    ['https://0177.0.0.1', 'resolves to a loopback address (127.0.0.1)'],
    ['https://100.64.0.1', 'resolves to a carrier-grade NAT address (100.64.0.1)'],
    ['https://[fe80::1]', 'resolves to a link-local address (fe80::1)'],
    ['https://[64:ff9b::a00:5]', 'resolves to a private address (64:ff9b::a00:5, NAT64 10.0.0.5)'],
    ['https://[2002:a00:5::1]/x', 'resolves to a private address (2002:a00:5::1, 6to4 10.0.0.5)'],
    ['https://[::]', 'resolves to an unspecified address (::)'],
    ['https://203.0.113.9', 'resolves to a reserved address (203.0.113.9)'],
    ['https://[2001:db8::1]', 'resolves to a reserved address (2001:db8::1)'],
    ['https://user:pw@example.com', 'must not contain a username or password'],
    ['https://user@example.com', 'must not contain a username or password'],
    [long(2049), 'must be at most 2048 characters'],
    [long(2048), null],
    ['https://example.com/hook', null],
    ['https://8.8.8.8/x', null],
    ['https://[2606:4700::1111]/x', null],
    ['https://localhost/x', null], // a name: judged by resolveProblem, not here
  ];
  for (const [url, expected] of cases) {
    it(`${url.length > 60 ? `${url.length}-char URL` : url || '(empty)'} → ${expected ?? 'accepted'}`, () => {
      assert.equal(urlProblem(url, false), expected);
    });
  }

  it('allowPrivate lets a private literal through but keeps the other rules', () => {
    assert.equal(urlProblem('https://127.0.0.1:8443', true), null);
    assert.equal(urlProblem('https://[::1]/x', true), null);
    assert.equal(urlProblem('http://127.0.0.1:8443', true), 'must use https');
    assert.equal(urlProblem('https://u:p@127.0.0.1', true), 'must not contain a username or password');
  });
});

describe('addressProblem', () => {
  const cases: Array<[string, string | null]> = [
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['127.0.0.1', 'loopback address (127.0.0.1)'],
    ['0177.0.0.1', 'loopback address (127.0.0.1)'],
    ['0x7f.1', 'loopback address (127.0.0.1)'],
    ['2130706433', 'loopback address (127.0.0.1)'],
    ['172.16.0.1', 'private address (172.16.0.1)'],
    ['192.168.1.1', 'private address (192.168.1.1)'],
    ['0.0.0.0', 'unspecified address (0.0.0.0)'],
    ['255.255.255.255', 'broadcast address (255.255.255.255)'],
    ['224.0.0.1', 'multicast address (224.0.0.1)'],
    ['169.254.1.1', 'link-local address (169.254.1.1)'],
    ['198.18.0.1', 'reserved address (198.18.0.1)'],
    ['240.0.0.1', 'reserved address (240.0.0.1)'],
    ['fc00::1', 'private address (fc00::1)'],
    ['ff02::1', 'multicast address (ff02::1)'],
    ['::ffff:7f00:1', 'loopback address (::ffff:7f00:1, IPv4-mapped 127.0.0.1)'],
    ['::ffff:8.8.8.8', null],
    ['64:ff9b::808:808', null],
    ['::a00:5', 'reserved address (::a00:5)'], // deprecated IPv4-compatible; ipaddr.js calls it unicast
    ['4000::1', 'reserved address (4000::1)'], // outside 2000::/3
    ['08.0.0.1', 'not an IP address'],
    ['example.com', 'not an IP address'],
  ];
  for (const [ip, expected] of cases) {
    it(`${ip} → ${expected ?? 'public'}`, () => assert.equal(addressProblem(ip), expected));
  }
});

describe('resolveProblem', () => {
  const answering =
    (addresses: LookupAddress[], seen: unknown[] = []) =>
    async (hostname: string, options: { all: true }) => {
      seen.push([hostname, options]);
      return addresses;
    };
  const failing = (code: string) => async () => {
    throw Object.assign(new Error(`getaddrinfo ${code} hook.example`), { code });
  };

  it('refuses a name with a private address and names it', async () => {
    const seen: unknown[] = [];
    const problem = await resolveProblem('hook.example', false, answering([{ address: '10.1.2.3', family: 4 }], seen));
    assert.equal(problem, 'resolves to a private address (10.1.2.3)');
    assert.deepEqual(seen, [['hook.example', { all: true }]]);
  });

  it('refuses when any one of several addresses is private', async () => {
    const lookup = answering([
      { address: '93.184.215.14', family: 4 },
      { address: '::1', family: 6 },
    ]);
    assert.equal(await resolveProblem('hook.example', false, lookup), 'resolves to a loopback address (::1)');
  });

  it('accepts a public name', async () => {
    const lookup = answering([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    assert.equal(await resolveProblem('hook.example', false, lookup), null);
  });

  it('accepts a name that does not resolve yet', async () => {
    assert.equal(await resolveProblem('hook.example', false, failing('ENOTFOUND')), null);
    assert.equal(await resolveProblem('hook.example', false, failing('EAI_AGAIN')), null);
  });

  it('does not look anything up when private targets are allowed', async () => {
    const seen: unknown[] = [];
    assert.equal(await resolveProblem('hook.example', true, answering([{ address: '10.1.2.3', family: 4 }], seen)), null);
    assert.deepEqual(seen, []);
  });
});
