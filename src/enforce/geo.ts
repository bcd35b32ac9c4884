// Country of a client address, for the allowedCountries / deniedCountries rules of a token.
// Every lookup answers a code or undefined and never throws, so a bad address cannot fail a request.
import { createRequire } from 'node:module';
import path from 'node:path';
import maxmind from 'maxmind';
import ipaddr from 'ipaddr.js';
import { ConfigError, readFailure } from '../config/load.js';

export interface GeoLookup {
  /** Upper-case ISO 3166-1 alpha-2 code, or undefined when unknown, not public, or not an address. */
  countryOf(ip: string): string | undefined;
  readonly source: string;
}

const BUNDLED_PACKAGE = '@ip-location-db/geo-whois-asn-country-mmdb';
const BUNDLED_FILE = 'geo-whois-asn-country.mmdb';
const CODE = /^[A-Z]{2}$/;

// The bundled database stores `country_code`; MaxMind Country/City files store `country.iso_code`.
// Accepting both lets one reader serve either file.
export function countryFromRecord(rec: unknown): string | undefined {
  if (typeof rec !== 'object' || rec === null) return undefined;
  const r = rec as { country_code?: unknown; country?: { iso_code?: unknown } | null };
  const raw = r.country_code !== undefined ? r.country_code : r.country?.iso_code;
  if (typeof raw !== 'string') return undefined;
  const code = raw.toUpperCase();
  return CODE.test(code) ? code : undefined;
}

// mmdb-lib does not validate its input: '8.8.8.8.8', '264.8.8.8' and '1.2.3.4x' all resolve to a
// country. Only the forms a socket or proxy header reports are accepted, so junk never matches.
function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.IPv4.isValidFourPartDecimal(ip) && !ipaddr.IPv6.isValid(ip)) return undefined;
  try {
    // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d, which the database knows as a.b.c.d.
    return ipaddr.process(ip);
  } catch {
    return undefined;
  }
}

function canonical(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  return addr.kind() === 'ipv4' ? addr.toString() : addr.toNormalizedString();
}

function bundledPath(): string {
  // The package has no "exports" map, so its package.json resolves; this finds it wherever the
  // package manager put it (hoisted, nested, or beside dist/) rather than relative to the cwd.
  const pkg = createRequire(import.meta.url).resolve(`${BUNDLED_PACKAGE}/package.json`);
  return path.join(path.dirname(pkg), BUNDLED_FILE);
}

export async function openGeo(cfg: { databasePath: string }): Promise<GeoLookup> {
  const bundled = cfg.databasePath === '';
  let file = cfg.databasePath;
  let reader: Awaited<ReturnType<typeof maxmind.open>>;
  try {
    if (bundled) file = bundledPath();
    reader = await maxmind.open(file);
  } catch (err) {
    const what = bundled
      ? `the bundled database of ${BUNDLED_PACKAGE} (${file || 'not installed'}), used because geo.databasePath is empty`
      : `geo.databasePath '${file}'`;
    // A configured file that cannot be opened is a configuration error (exit code 2); the bundled
    // one missing is a broken installation.
    const message = `cannot open ${what}: ${bundled ? (err as Error).message : readFailure(err)}`;
    throw bundled ? new Error(message, { cause: err }) : new ConfigError(message, { cause: err });
  }
  return {
    source: bundled ? 'bundled:geo-whois-asn-country' : file,
    countryOf(ip: string): string | undefined {
      if (typeof ip !== 'string') return undefined;
      const addr = parseAddress(ip);
      // Private, loopback, link-local and other special ranges have no country, whatever a
      // particular database file happens to hold for them.
      if (addr === undefined || addr.range() !== 'unicast') return undefined;
      try {
        return countryFromRecord(reader.get(canonical(addr)));
      } catch {
        return undefined;
      }
    },
  };
}

/** A lookup from an exact-address table, standing in for a database in tests of other modules. */
export function fixedGeo(table: Record<string, string>): GeoLookup {
  const byAddress = new Map<string, string>();
  for (const [ip, country] of Object.entries(table)) {
    const addr = parseAddress(ip);
    const code = countryFromRecord({ country_code: country });
    // A typo in a test table should fail loudly, not quietly become "unknown country".
    if (addr === undefined || code === undefined) throw new Error(`fixedGeo: bad entry '${ip}': '${country}'`);
    byAddress.set(canonical(addr), code);
  }
  return {
    source: 'fixed',
    countryOf(ip: string): string | undefined {
      if (typeof ip !== 'string') return undefined;
      const addr = parseAddress(ip);
      return addr === undefined ? undefined : byAddress.get(canonical(addr));
    },
  };
}

// Cloudflare sends XX when it does not know the country and T1 for Tor exits; neither is a country.
const HEADER_PLACEHOLDERS = new Set(['XX', 'T1']);

/** The country a trusted CDN put in `geo.trustedHeader` (e.g. cf-ipcountry), if it is usable. */
export function countryFromHeader(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (typeof first !== 'string') return undefined;
  const code = first.trim().toUpperCase();
  return CODE.test(code) && !HEADER_PLACEHOLDERS.has(code) ? code : undefined;
}
