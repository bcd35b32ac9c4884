// IPv4 CIDR rules as enforcement applies them (parseCidrs + ipInRanges after normaliseIp, and the
// validator ipRuleProblem) agree with a reference computed on 32-bit integer ranges.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ipInRanges, parseCidrs } from '../../src/policy/rules.js';
import { normaliseIp } from '../../src/domain/addresses.js';
import { ipRuleProblem } from '../../src/domain/matchers.js';
import { fcOptions } from '../helpers/property.js';

const U32 = 2 ** 32;
const dotted = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
/** The range [first, first + size) a prefix covers, by arithmetic (no bit operators to share bugs with). */
const range = (net: number, bits: number) => {
  const size = 2 ** (32 - bits);
  const first = net - (net % size);
  return { first, size };
};
const inRange = (x: number, net: number, bits: number): boolean => {
  const r = range(net, bits);
  return x >= r.first && x < r.first + r.size;
};

const addr = fc.integer({ min: 0, max: U32 - 1 });
const prefix = fc.integer({ min: 0, max: 32 });
/** A canonical rule (host bits clear) and addresses at and around its edges, plus a random one. */
const ruleAndProbe = fc
  .tuple(addr, prefix, fc.constantFrom('first', 'last', 'below', 'above', 'random'), addr, fc.boolean())
  .map(([a, bits, where, rnd, bare]) => {
    const { first, size } = range(a, bits);
    const probe = { first, last: first + size - 1, below: first - 1, above: first + size, random: rnd }[where];
    const rule = bits === 32 && bare ? dotted(first) : `${dotted(first)}/${bits}`;
    return { rule, first, bits, probe: (probe + U32) % U32 };
  });

describe('CIDR matching agrees with integer ranges', () => {
  it('a canonical rule is valid and matches exactly the addresses of its range (edges included)', () => {
    fc.assert(
      fc.property(ruleAndProbe, ({ rule, first, bits, probe }) => {
        assert.equal(ipRuleProblem(rule), null, rule);
        const ip = dotted(probe);
        const expected = inRange(probe, first, bits);
        assert.equal(ipInRanges(normaliseIp(ip), parseCidrs([rule])), expected, `${ip} in ${rule}`);
        // The IPv4-mapped IPv6 spelling of the same client is the same address (docs/api.md#decision-table).
        assert.equal(ipInRanges(normaliseIp(`::ffff:${ip}`), parseCidrs([rule])), expected, `::ffff:${ip} in ${rule}`);
      }),
      fcOptions(3000, 100000),
    );
  });

  it('/0 matches every IPv4 address, /32 only itself', () => {
    fc.assert(
      fc.property(addr, addr, (a, b) => {
        assert.equal(ipInRanges(dotted(a), parseCidrs(['0.0.0.0/0'])), true);
        assert.equal(ipInRanges(dotted(b), parseCidrs([`${dotted(a)}/32`])), a === b);
        assert.equal(ipInRanges(dotted(b), parseCidrs([dotted(a)])), a === b);
      }),
      fcOptions(2000, 50000),
    );
  });

  it('a list matches when any of its rules does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(addr, prefix), { minLength: 1, maxLength: 8 }), addr, (rules, probe) => {
        const texts = rules.map(([a, bits]) => `${dotted(range(a, bits).first)}/${bits}`);
        const expected = rules.some(([a, bits]) => inRange(probe, a, bits));
        assert.equal(ipInRanges(dotted(probe), parseCidrs(texts)), expected, `${dotted(probe)} in ${texts.join(',')}`);
      }),
      fcOptions(2000, 50000),
    );
  });

  it('the validator refuses a rule exactly when host bits are set beyond the prefix', () => {
    fc.assert(
      fc.property(addr, prefix, (a, bits) => {
        const rule = `${dotted(a)}/${bits}`;
        const canonical = range(a, bits).first === a;
        const problem = ipRuleProblem(rule);
        if (canonical) assert.equal(problem, null, rule);
        else assert.equal(problem, `'${rule}': host bits set beyond the /${bits} prefix (did you mean ${dotted(range(a, bits).first)}/${bits}?)`);
      }),
      fcOptions(3000, 100000),
    );
  });

  it('an IPv6 client never matches an IPv4 rule, not even 0.0.0.0/0', () => {
    const v6 = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((p) => p.map((x) => x.toString(16)).join(':'));
    fc.assert(
      fc.property(v6, (ip) => {
        const n = normaliseIp(ip);
        // ::ffff:a.b.c.d is IPv4 by the contract; every other IPv6 address stays IPv6 and never matches.
        fc.pre(n?.includes(':') === true);
        assert.equal(ipInRanges(n, parseCidrs(['0.0.0.0/0'])), false, ip);
      }),
      fcOptions(1000, 20000),
    );
  });
});
