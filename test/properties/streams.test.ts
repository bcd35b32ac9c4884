// Stream rules: validating a pattern never throws, and the one compiled matcher of a token
// (compileStreams: exact names in a Set, every pattern in one RE2 alternation) answers exactly as
// "the name equals an exact entry, or RE2 full-matches one of the patterns alone" (docs/api.md#rules-a-tokens-fields-follow).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import RE2 from 're2';
import { compileStreams } from '../../src/policy/rules.js';
import { MAX_PATTERN_COST, patternCost, streamPatternProblem } from '../../src/domain/matchers.js';
import { fcOptions } from '../helpers/property.js';

const chars = ['a', 'b', 'c', '1', '-', '_', '/', 'é', '😀'];
const lit = fc.constantFrom(...chars);
/** RE2 syntax, built from a grammar so most patterns are valid and match some names. */
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    lit,
    fc.constantFrom('.', '\\d', '\\w', '[a-c]', '[^a]', '\\pL', '[[:alpha:]]', '\\x{e9}', '\\Qa)|(.*\\E', '\\.'),
    tie('re').map((r) => `(?:${r})`),
    tie('re').map((r) => `(${r})`),
    fc.tuple(fc.constantFrom('n', 'm'), tie('re')).map(([n, r]) => `(?P<${n}>${r})`),
    fc.tuple(fc.constantFrom('n', 'm'), tie('re')).map(([n, r]) => `(?<${n}>${r})`),
    tie('re').map((r) => `(?i:${r})`),
  ),
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(tie('atom'), fc.constantFrom('', '', '*', '+', '?', '{2}', '{1,3}', '*?', '{0,}')).map(([a, q]) => a + q),
    fc.array(tie('atom'), { minLength: 1, maxLength: 4 }).map((xs) => xs.join('')),
    fc.tuple(tie('re'), tie('re')).map(([a, b]) => `${a}|${b}`),
    tie('re').map((r) => `(?i)${r}`),
    tie('re').map((r) => `^${r}$`),
  ),
})).re;

/** Strings made of regex syntax characters: mostly invalid patterns, and the odd valid one. */
const garbage = fc.string({
  unit: fc.constantFrom(...'ab(|)[]{}*+?\\.^$-<>=!:PpLdQEz0123,iu#'.split(''), '\uD800', '😀'),
  maxLength: 40,
});
const name = fc.string({ unit: lit, maxLength: 8 });

const fullMatch = (p: string, s: string): boolean => new RE2(`^(?:${p})$`, 'u').test(s);

describe('stream matcher agrees with RE2 full match', () => {
  it('validating a pattern never throws; a pattern it accepts compiles', () => {
    fc.assert(
      fc.property(fc.oneof(pattern, garbage, fc.string({ maxLength: 128 })), (p) => {
        const problem = streamPatternProblem(p);
        if (problem === null) assert.doesNotThrow(() => compileStreams([{ streamName: p, isRegex: true }]), p);
        else assert.match(problem, /^(not a valid regular expression for the RE2 engine|too large for the RE2 engine)/);
        // Refused as too large exactly when its estimated program is over the limit.
        assert.equal(problem?.startsWith('too large') ?? false, patternCost(p) > MAX_PATTERN_COST, p);
      }),
      fcOptions(3000, 30000),
    );
  });

  it('one matcher over many entries answers as the entries one by one', () => {
    const entry = fc.oneof(
      name.map((n) => ({ streamName: n, isRegex: false })),
      fc.oneof(pattern, pattern, garbage).map((p) => ({ streamName: p, isRegex: true })),
    );
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), fc.array(name, { minLength: 1, maxLength: 10 }), (raw, names) => {
        // Only what validation admits is ever stored on a token.
        const streams = raw.filter((s) => !s.isRegex || streamPatternProblem(s.streamName) === null);
        fc.pre(streams.length > 0);
        const matches = compileStreams(streams);
        for (const n of names) {
          const expected = streams.some((s) => (s.isRegex ? fullMatch(s.streamName, n) : s.streamName === n));
          assert.equal(matches(n), expected, `${JSON.stringify(n)} against ${JSON.stringify(streams)}`);
        }
      }),
      fcOptions(2000, 15000),
    );
  });

  it('regression (duplicate group names): two patterns naming the same group still make one matcher', () => {
    const streams = [
      { streamName: '(?<n>cam)[0-9]+', isRegex: true },
      { streamName: '(?<n>mic)[0-9]+', isRegex: true },
      { streamName: '(?P<n>x)', isRegex: true },
    ];
    for (const s of streams) assert.equal(streamPatternProblem(s.streamName), null);
    const matches = compileStreams(streams);
    assert.deepEqual(['cam1', 'mic22', 'x', 'cam', 'tv1'].map(matches), [true, true, true, false, false]);
  });
});
