// fast-check generators of valid token inputs (what the request schemas admit), shared by the
// property tests of the token store and of lookups.
import fc from 'fast-check';
import type { CreateTokenInput, TokenKind, UpdateTokenInput } from '../../src/domain/tokens.js';

/** Text fields: unicode, quotes, braces and colons (key syntax of some stores), 1..128 chars. */
export const text = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20, unit: fc.constantFrom('a', 'B', ' ', '"', "'", '{', '}', ':', '/', '\\', 'é', '😀', '%', '*', '\n') }),
  fc.string({ minLength: 1, maxLength: 128, unit: 'grapheme' }),
);
const streamEntry = fc.oneof(
  fc.record({ streamName: text, isRegex: fc.constant(false) }),
  fc.record({ streamName: text }),
  fc.record({ streamName: fc.constantFrom('cam[0-9]+', '.*', '(?<n>a)|b', 'x(y|z)?', '[[:alpha:]]{2}'), isRegex: fc.constant(true) }),
);
const streams = fc.array(streamEntry, { minLength: 1, maxLength: 5 });
const origins = fc.array(fc.constantFrom('example.com', '*.Example.com', 'a.b.c', 'x-y.org', '*.sub.example.net'), { maxLength: 4 });
const ips = fc.array(fc.constantFrom('203.0.113.7', '192.168.6.0/24', '0.0.0.0/0', '10.0.0.0/8', '198.51.100.1/32'), { maxLength: 4 });
const countries = fc.array(fc.constantFrom('US', 'de', 'Fr', 'JP', 'BR'), { maxLength: 3 });
const expires = fc.integer({ min: 1, max: 2147483647 });
const bind = fc.integer({ min: 0, max: 2147483647 });
const tracking = fc.record({ trackingId: text });

export function createInput(kind: TokenKind): fc.Arbitrary<CreateTokenInput> {
  const common = {
    label: text,
    streams,
    expires,
    allowedOrigins: origins,
    allowedIpAddresses: ips,
    bindIpsOnUsage: bind,
    allowedCountries: countries,
    deniedCountries: countries,
  };
  const record =
    kind === 'publish'
      ? fc.record({ ...common, subscribeRequiresAuth: fc.boolean(), record: fc.boolean(), enableThumbnails: fc.boolean() }, { requiredKeys: ['label', 'streams'] })
      : fc.record({ ...common, tracking }, { requiredKeys: ['label', 'streams'] });
  // Mostly inputs the whole-token rules accept (bind XOR addresses, allowed XOR denied
  // countries), so most runs exercise the write; the rest are refusals.
  return fc.tuple(record, fc.nat(9)).map(([r, n]) => (n === 0 ? r : exclusive(r as Record<string, unknown>, n, 'bindIpsOnUsage', 'allowedIpAddresses', 'deniedCountries', 'allowedCountries'))) as fc.Arbitrary<CreateTokenInput>;
}

/** Drops one of each pair of fields that a token may not have both of (which one: by `n`). */
function exclusive<T extends Record<string, unknown>>(r: T, n: number, bind: string, ips: string, denied: string, allowed: string): T {
  const out: Record<string, unknown> = { ...r };
  delete out[n % 2 === 0 ? bind : ips];
  delete out[n % 3 === 0 ? allowed : denied];
  return out as T;
}

export function updateInput(kind: TokenKind): fc.Arbitrary<UpdateTokenInput> {
  const common = {
    label: text,
    isActive: fc.boolean(),
    refreshToken: fc.boolean(),
    addTokenStreams: fc.array(streamEntry, { maxLength: 3 }),
    removeTokenStreams: fc.array(fc.oneof(text, streamEntry), { maxLength: 3 }),
    updateAllowedOrigins: origins,
    updateAllowedIpAddresses: ips,
    updateBindIpsOnUsage: bind,
    updateAllowedCountries: countries,
    updateDeniedCountries: countries,
    expires: fc.option(expires, { nil: null }),
  };
  const record =
    kind === 'publish'
      ? fc.record({ ...common, subscribeRequiresAuth: fc.boolean(), record: fc.boolean(), enableThumbnails: fc.boolean() }, { requiredKeys: [] })
      : fc.record({ ...common, tracking: fc.option(tracking, { nil: null }) }, { requiredKeys: [] });
  return fc
    .tuple(record, fc.nat(9))
    .map(([r, n]) => (n === 0 ? r : exclusive(r as Record<string, unknown>, n, 'updateBindIpsOnUsage', 'updateAllowedIpAddresses', 'updateDeniedCountries', 'updateAllowedCountries')))
    .filter((u) => Object.keys(u).length > 0) as fc.Arbitrary<UpdateTokenInput>;
}

export const kind = fc.constantFrom<TokenKind>('publish', 'subscribe');
