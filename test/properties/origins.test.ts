// Origin rules as enforcement applies them (originHost of the Origin/Referer value, then
// originAllowed over the canonical rules) agree with a reference written from docs/api.md (token field rules, decision table):
// `example.com` is that host only, `*.example.com` any deeper sub-domain but not the bare domain,
// case-insensitive; scheme, port and path of the header value do not matter.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { originAllowed } from '../../src/policy/rules.js';
import { originHost } from '../../src/domain/addresses.js';
import { canonicalOrigin, originRuleProblem } from '../../src/domain/matchers.js';
import { fcOptions } from '../helpers/property.js';

// A small alphabet of labels, so hosts and rules collide often; 'example' + 'xexample' style
// near-misses come from concatenating labels without a dot. No all-digit label: a host ending in
// one is an IPv4 address to the URL parser (https://0 is 0.0.0.0), as it is to browsers.
const label = fc.constantFrom('a', 'b', 'ab', 'x-y', '0a', 'example', 'com', 'ex4mple');
const labels = (min: number, max: number) => fc.array(label, { minLength: min, maxLength: max });
const randomCase = (s: string) =>
  fc.array(fc.boolean(), { minLength: s.length, maxLength: s.length }).map((up) => [...s].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));

/** The reference: label lists compared from the right. */
function reference(rule: string, host: string): boolean {
  const r = rule.toLowerCase();
  const h = host.toLowerCase().split('.');
  if (r.startsWith('*.')) {
    const d = r.slice(2).split('.');
    return h.length > d.length && d.every((x, i) => h[h.length - d.length + i] === x);
  }
  const d = r.split('.');
  return h.length === d.length && d.every((x, i) => h[i] === x);
}

const ruleArb = fc.tuple(labels(1, 3), fc.boolean()).chain(([d, wild]) => randomCase(`${wild ? '*.' : ''}${d.join('.')}`));

const hostArb = fc
  .tuple(labels(1, 3), labels(0, 3), fc.constantFrom('sub', 'glued', 'random'), labels(1, 4))
  .chain(([d, extra, how, other]) => {
    const domain = d.join('.');
    const host = how === 'sub' ? [...extra, domain].join('.') : how === 'glued' ? `${extra.join('')}${domain}` : other.join('.');
    return randomCase(host);
  });

/** How the host reaches Streamgate: an Origin, a Referer with port, path and query, or bare. */
const headerValue = (host: string) =>
  fc.constantFrom(`https://${host}`, `http://${host}:8443`, `https://${host}/watch/1?x=${host}#f`, host);

describe('origin wildcard matching agrees with the contract reference', () => {
  it('single rule, any host, any way of sending it', () => {
    fc.assert(
      fc.property(ruleArb, hostArb.chain((h) => fc.tuple(fc.constant(h), headerValue(h))), (rule, [host, value]) => {
        assert.equal(originRuleProblem(rule), null, rule);
        const canonical = canonicalOrigin(rule);
        assert.equal(canonical, rule.toLowerCase());
        assert.equal(originHost(value), host.toLowerCase(), value);
        assert.equal(originAllowed(originHost(value), [canonical]), reference(rule, host), `${value} against ${rule}`);
      }),
      fcOptions(3000, 100000),
    );
  });

  it('a list allows a host when any rule does; no origin is never allowed', () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 6 }), hostArb, (rules, host) => {
        const canonical = rules.map(canonicalOrigin);
        assert.equal(originAllowed(originHost(`https://${host}`), canonical), rules.some((r) => reference(r, host)));
        assert.equal(originAllowed(undefined, canonical), false);
      }),
      fcOptions(2000, 50000),
    );
  });

  it('the bare domain never matches its own wildcard; every deeper sub-domain does', () => {
    fc.assert(
      fc.property(labels(1, 3), labels(1, 4), (d, sub) => {
        const domain = d.join('.');
        assert.equal(originAllowed(domain, [`*.${domain}`]), false);
        assert.equal(originAllowed(`${sub.join('.')}.${domain}`, [`*.${domain}`]), true);
      }),
      fcOptions(1000, 20000),
    );
  });
});
