import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileStreamPattern,
  countryProblem,
  ipRuleProblem,
  originMatches,
  originRuleProblem,
  streamPatternProblem,
} from '../../src/domain/matchers.js';

describe('stream patterns (RE2, full match, case-sensitive)', () => {
  const cases: Array<[string, string, boolean]> = [
    ['cam.*', 'cam1', true],
    ['cam.*', 'xcam1', false],
    ['cam[0-9]+', 'cam12', true],
    ['cam[0-9]+', 'cam12x', false],
    ['cam[0-9]+', 'CAM12', false],
    ['a|b', 'a', true],
    ['a|b', 'ab', false],
    ['container1/.+', 'container1/x', true],
    ['.*', '', true],
  ];
  for (const [pattern, name, expected] of cases) {
    it(`${pattern} ${expected ? 'matches' : 'does not match'} '${name}'`, () => {
      assert.equal(compileStreamPattern(pattern).test(name), expected);
    });
  }

  it('refuses look-around, backreferences and unbalanced groups, naming the problem', () => {
    for (const p of ['(?<=a)b', '(?=a)', '(?!a)b', '(a)\\1', 'cam(', 'a)']) {
      const problem = streamPatternProblem(p);
      assert.ok(problem?.startsWith('not a valid regular expression for the RE2 engine'), `${p}: ${problem}`);
    }
    assert.equal(streamPatternProblem('(a+)+$'), null);
  });

  it('matches a catastrophic-backtracking pattern against a long adversarial name (linear time)', { timeout: 5000 }, () => {
    const re = compileStreamPattern('(x+x+)+y');
    assert.equal(re.test('x'.repeat(100_000)), false);
    assert.equal(re.test(`${'x'.repeat(100_000)}y`), true);
    assert.equal(compileStreamPattern('(a+)+$').test(`${'a'.repeat(100_000)}!`), false);
  });
});

describe('IPv4 rules', () => {
  for (const ok of ['203.0.113.7', '192.168.6.0/24', '0.0.0.0/0', '10.0.0.1/32']) {
    it(`accepts ${ok}`, () => assert.equal(ipRuleProblem(ok), null));
  }
  const bad: Array<[string, RegExp]> = [
    ['1.2.3.4-1.2.3.9', /ranges are not supported/],
    ['1.2.*.*', /wildcards are not supported/],
    ['10.0.0.1/33', /prefix length must be 0\.\.32/],
    ['10.0.0.1/8', /host bits set beyond the \/8 prefix \(did you mean 10\.0\.0\.0\/8\?\)/],
    ['2001:db8::1', /IPv6 is not supported/],
    ['256.1.1.1', /not a valid IPv4 address/],
    ['01.2.3.4', /not a valid IPv4 address/],
    ['example.com', /not an IPv4 address or CIDR block/],
  ];
  for (const [rule, why] of bad) {
    it(`refuses ${rule}`, () => assert.match(ipRuleProblem(rule) ?? '', why));
  }
});

describe('origin rules', () => {
  it('accepts host names and leading wildcards; refuses scheme, port, path and odd wildcards', () => {
    for (const ok of ['example.com', '*.example.com', 'localhost', 'Sub.Example.COM']) assert.equal(originRuleProblem(ok), null, ok);
    assert.match(originRuleProblem('https://x.com') ?? '', /without a scheme/);
    assert.match(originRuleProblem('x.com:8080') ?? '', /without a port/);
    assert.match(originRuleProblem('x.com/path') ?? '', /without a path/);
    assert.match(originRuleProblem('*x.com') ?? '', /wildcard is allowed only as a leading/);
    assert.match(originRuleProblem('a.*.com') ?? '', /wildcard is allowed only as a leading/);
    assert.match(originRuleProblem('-bad-.com') ?? '', /not a valid host name/);
  });

  const cases: Array<[string, string, boolean]> = [
    ['example.com', 'example.com', true],
    ['example.com', 'www.example.com', false],
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'badexample.com', false],
  ];
  for (const [rule, host, expected] of cases) {
    it(`${rule} ${expected ? 'allows' : 'refuses'} ${host}`, () => assert.equal(originMatches(rule, host), expected));
  }
});

describe('countries', () => {
  it('accepts ISO 3166-1 alpha-2 codes in any case and refuses the rest', () => {
    assert.equal(countryProblem('US'), null);
    assert.equal(countryProblem('fr'), null);
    assert.match(countryProblem('USA') ?? '', /not an ISO 3166-1 alpha-2 country code/);
    assert.match(countryProblem('XX') ?? '', /not an ISO 3166-1 alpha-2 country code/);
  });
});

describe('stream rule lists compiled as one matcher', () => {
  it('keeps each pattern a full match inside the combined alternation, and exact names exact', async () => {
    const { compileStreams } = await import('../../src/policy/rules.js');
    const m = compileStreams([
      { streamName: 'cam.*', isRegex: true },
      { streamName: 'x[0-9]+', isRegex: true },
      { streamName: '(?i)live', isRegex: true },
      { streamName: 'stage.1', isRegex: false },
    ]);
    const cases: Array<[string, boolean]> = [
      ['cam1', true],
      ['x12', true],
      ['x12y', false],
      ['xcam', false],
      ['LIVE', true],
      ['CAM1', false],
      ['stage.1', true],
      ['stageX1', false],
    ];
    for (const [name, expected] of cases) assert.equal(m(name), expected, name);
  });
});
