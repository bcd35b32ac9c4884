import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { countryFromHeader, countryFromRecord, fixedGeo, openGeo, type GeoLookup } from '../../src/enforce/geo.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('bundled database (geo-whois-asn-country)', () => {
  let geo: GeoLookup;
  before(async () => {
    geo = await openGeo({ databasePath: '' });
  });

  it('names its source', () => {
    assert.equal(geo.source, 'bundled:geo-whois-asn-country');
  });

  // Registry and operator blocks whose WHOIS country has been the same for decades.
  const known: Array<[string, string, string]> = [
    ['8.8.8.8', 'US', 'Google Public DNS, ARIN'],
    ['193.0.6.139', 'NL', 'www.ripe.net, RIPE NCC Amsterdam'],
    ['202.12.29.205', 'AU', 'APNIC Brisbane'],
    ['200.160.0.8', 'BR', 'NIC.br / registro.br'],
    ['130.149.7.201', 'DE', 'TU Berlin'],
    ['2001:4860:4860::8888', 'US', 'Google Public DNS IPv6'],
    ['2001:67c:2e8:22::c100:68b', 'NL', 'www.ripe.net IPv6'],
  ];
  for (const [ip, country, who] of known) {
    it(`${ip} (${who}) is ${country}`, () => {
      assert.equal(geo.countryOf(ip), country);
    });
  }

  it('looks up an IPv4-mapped IPv6 address as the IPv4 address', () => {
    assert.equal(geo.countryOf('::ffff:8.8.8.8'), 'US');
    assert.equal(geo.countryOf('::FFFF:193.0.6.139'), 'NL');
    assert.equal(geo.countryOf('::ffff:10.0.0.1'), undefined);
  });

  it('accepts any spelling of an IPv6 address', () => {
    assert.equal(geo.countryOf('2001:4860:4860:0:0:0:0:8888'), 'US');
    assert.equal(geo.countryOf('2001:4860:4860::8888'.toUpperCase()), 'US');
  });

  it('answers undefined for private, loopback and other non-public addresses', () => {
    for (const ip of [
      '10.0.0.1', '127.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '169.254.1.1', '0.0.0.0',
      '255.255.255.255', '224.0.0.1', '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', '2001:db8::1',
    ]) {
      assert.equal(geo.countryOf(ip), undefined, ip);
    }
  });

  it('answers undefined for malformed input, including forms the mmdb reader itself would resolve', () => {
    // '8.8.8.8.8', '264.8.8.8', '1.2.3.4x', ' 8.8.8.8' and '8.8.8' all give a country when passed
    // to maxmind's Reader.get directly.
    for (const ip of [
      'not-an-ip', '', '999.1.1.1', '8.8.8.8.8', '264.8.8.8', '1.2.3.4x', ' 8.8.8.8', '8.8.8.8 ', '8.8.8',
      '134744072', '0x8.8.8.8', '08.8.8.8', '8.8.8.8/24', '2001:4860:4860::8888:1:2:3:4', ':::',
    ]) {
      assert.equal(geo.countryOf(ip), undefined, JSON.stringify(ip));
    }
    assert.equal(geo.countryOf(undefined as unknown as string), undefined);
  });
});

describe('openGeo with a configured databasePath', () => {
  it('rejects a missing file, naming the path and the setting', async () => {
    const missing = path.join(here, 'no-such-dir', 'GeoLite2-Country.mmdb');
    await assert.rejects(openGeo({ databasePath: missing }), (err: Error) => {
      assert.ok(err.message.includes(missing), err.message);
      assert.ok(err.message.includes('geo.databasePath'), err.message);
      return true;
    });
  });

  it('rejects a file that is not an mmdb database, naming the path and the setting', async () => {
    const notMmdb = fileURLToPath(import.meta.url);
    await assert.rejects(openGeo({ databasePath: notMmdb }), (err: Error) => {
      assert.ok(err.message.includes(notMmdb), err.message);
      assert.ok(err.message.includes('geo.databasePath'), err.message);
      return true;
    });
  });
});

describe('countryFromRecord (bundled and MaxMind record shapes)', () => {
  const cases: Array<[unknown, string | undefined]> = [
    [{ country_code: 'fr' }, 'FR'],
    [{ country_code: 'NL' }, 'NL'],
    [{ country: { iso_code: 'DE' } }, 'DE'],
    [{ country: { iso_code: 'de', names: { en: 'Germany' } }, continent: { code: 'EU' } }, 'DE'],
    [{ country_code: 'JP', country: { iso_code: 'DE' } }, 'JP'],
    [{ registered_country: { iso_code: 'US' } }, undefined],
    [{}, undefined],
    [null, undefined],
    [undefined, undefined],
    ['US', undefined],
    [{ country: null }, undefined],
    [{ country: {} }, undefined],
    [{ country_code: 'USA' }, undefined],
    [{ country_code: 'U' }, undefined],
    [{ country_code: '' }, undefined],
    [{ country_code: 'U1' }, undefined],
    [{ country_code: 42 }, undefined],
    [{ country: { iso_code: 'DEU' } }, undefined],
  ];
  for (const [rec, expected] of cases) {
    it(`${JSON.stringify(rec)} → ${String(expected)}`, () => {
      assert.equal(countryFromRecord(rec), expected);
    });
  }
});

describe('fixedGeo', () => {
  const geo = fixedGeo({ '203.0.113.7': 'fr', '10.1.2.3': 'DE', '2001:db8::1': 'JP' });

  it('answers from the table by exact address', () => {
    assert.equal(geo.source, 'fixed');
    assert.equal(geo.countryOf('203.0.113.7'), 'FR');
    assert.equal(geo.countryOf('10.1.2.3'), 'DE');
    assert.equal(geo.countryOf('2001:db8::1'), 'JP');
  });

  it('treats IPv4-mapped and long IPv6 spellings as the same address', () => {
    assert.equal(geo.countryOf('::ffff:203.0.113.7'), 'FR');
    assert.equal(geo.countryOf('2001:0db8:0:0:0:0:0:1'), 'JP');
  });

  it('answers undefined for anything else', () => {
    for (const ip of ['203.0.113.8', '10.1.2.0', '', 'not-an-ip', 'constructor', '__proto__', '203.0.113.7 ']) {
      assert.equal(geo.countryOf(ip), undefined, JSON.stringify(ip));
    }
  });

  it('refuses a table entry that is not an address and a country code', () => {
    assert.throws(() => fixedGeo({ 'not-an-ip': 'US' }), /fixedGeo: bad entry 'not-an-ip'/);
    assert.throws(() => fixedGeo({ '192.0.2.1': 'USA' }), /fixedGeo: bad entry '192.0.2.1'/);
  });
});

describe('countryFromHeader (geo.trustedHeader, e.g. cf-ipcountry)', () => {
  const cases: Array<[string | string[] | undefined, string | undefined]> = [
    ['US', 'US'],
    ['de', 'DE'],
    ['  nl \t', 'NL'],
    [['fr', 'DE'], 'FR'],
    [[' gb '], 'GB'],
    ['XX', undefined],
    ['xx', undefined],
    ['T1', undefined],
    ['t1', undefined],
    [['XX', 'US'], undefined],
    [[], undefined],
    [undefined, undefined],
    ['', undefined],
    ['   ', undefined],
    ['USA', undefined],
    ['U', undefined],
    ['U1', undefined],
    ['US, FR', undefined],
    ['U S', undefined],
  ];
  for (const [value, expected] of cases) {
    it(`${JSON.stringify(value)} → ${String(expected)}`, () => {
      assert.equal(countryFromHeader(value), expected);
    });
  }
});
