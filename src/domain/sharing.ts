// Token sharing (docs/api.md#token-sharing): what one credential's uses within a sliding window say
// about how many people hold it. Pure: the uses (each already placed: its network, autonomous system,
// country and coordinates), the policy and the clock are arguments.

/** What an account does when a credential is flagged. */
export const SHARING_ACTIONS = ['notify', 'limit', 'disable'] as const;
export type SharingAction = (typeof SHARING_ACTIONS)[number];

/** The signals a policy can flag on. */
export const SHARING_SIGNALS = ['addresses', 'networks', 'asns', 'countries', 'travel'] as const;
export type SharingSignal = (typeof SHARING_SIGNALS)[number];

/**
 * An account's policy, or a token's override of it. A limit of 0 is off. The defaults are off as a
 * whole (`enabled: false`); once on, they leave a household behind one NAT, a few devices on one
 * network and a viewer moving between Wi-Fi and a mobile network unflagged (docs/api.md#token-sharing).
 */
export interface SharingPolicy {
  enabled: boolean;
  /** The sliding window the uses are counted over, seconds. */
  windowSeconds: number;
  /** Distinct client addresses (0: not counted: a household's devices and IPv6 privacy addresses differ). */
  maxAddresses: number;
  /** Distinct networks: an IPv4 /24, an IPv6 /48. */
  maxNetworks: number;
  /** Distinct autonomous systems (providers). */
  maxAsns: number;
  /** Distinct countries. */
  maxCountries: number;
  /** Two uses farther apart than this speed allows, km/h (0: not looked at). */
  travelKmh: number;
  /** ...and at least this far apart, km: a city database places an address only roughly. */
  travelMinKm: number;
  action: SharingAction;
}

export const SHARING_DEFAULTS: SharingPolicy = {
  enabled: false,
  windowSeconds: 3600,
  maxAddresses: 0,
  maxNetworks: 6,
  maxAsns: 3,
  maxCountries: 2,
  travelKmh: 1000,
  travelMinKm: 500,
  action: 'notify',
};

/**
 * The claim a credential issuer's subject was read from (docs/api.md#token-sharing): `sub`, `jti`,
 * `id` (a signed URL's credential id) are what the issuer's revocation lists name; `viewer` is a
 * viewer claim elsewhere (`aws:viewer-id`), which no revocation list names.
 */
export const SUBJECT_CLAIMS = ['sub', 'jti', 'id', 'viewer'] as const;
export type SubjectClaim = (typeof SUBJECT_CLAIMS)[number];

/** A subject as decisions and sessions carry it: `<claim>:<value>`. */
export const subjectOf = (claim: SubjectClaim, value: string): string => `${claim}:${value}`;

/** The claim and value of a subject made by subjectOf; null for anything else. */
export function parseSubject(s: string): { claim: SubjectClaim; value: string } | null {
  const i = s.indexOf(':');
  const claim = s.slice(0, i);
  if (i < 1 || !(SUBJECT_CLAIMS as readonly string[]).includes(claim)) return null;
  return { claim: claim as SubjectClaim, value: s.slice(i + 1) };
}

/** The revocation list of a credential issuer that refuses a subject's credentials, if one does. */
export const revocationListOf = (claim: SubjectClaim): 'sub' | 'jti' | null => (claim === 'sub' ? 'sub' : claim === 'jti' || claim === 'id' ? 'jti' : null);

/** A policy as given and stored: the settings set, the rest from its account's, then the defaults. */
export type SharingSettings = Partial<SharingPolicy>;

/** Where an address is: what the window counts of it. */
export interface Place {
  /** The canonical address. */
  ip: string;
  /** Its /24 or /48 ('' when it is not an address). */
  network: string;
  /** Its autonomous system, country and coordinates, where the databases place it. */
  asn?: number;
  country?: string;
  lat?: number;
  lon?: number;
}

/** One use of a credential, placed. */
export interface SharingUse extends Place {
  /** Epoch ms, the last time this address used the credential. */
  at: number;
}

export interface SharingTravel {
  from: { ip: string; country?: string; at: number };
  to: { ip: string; country?: string; at: number };
  km: number;
  kmh: number;
}

/** What the uses in the window say, and what the policy flags. */
export interface SharingAssessment {
  addresses: number;
  networks: number;
  asns: number;
  countries: number;
  /** The fastest pair of consecutive placed uses that no traveller could make, if any. */
  travel?: SharingTravel;
  /** The signals over their limits (empty: not flagged). */
  flags: SharingSignal[];
}

/** The policy a token is held to: its own override over its account's policy. */
export function effectiveSharing(account: Partial<SharingPolicy> | undefined, token: Partial<SharingPolicy> | undefined): SharingPolicy {
  return Object.assign({}, SHARING_DEFAULTS, account, token);
}

const EARTH_KM = 6371.0088;
const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance, km (haversine). */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The network an address belongs to for counting: its /24 (IPv4) or /48 (IPv6), from its canonical text. */
export function networkOf(ip: string): string {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return `${ip.slice(0, ip.lastIndexOf('.'))}.0/24`;
  if (!ip.includes(':')) return '';
  // the expanded form's first three groups (the caller passes ipaddr.js's normalized string)
  const groups = ip.split(':');
  if (groups.length !== 8) return '';
  return `${groups.slice(0, 3).join(':')}::/48`;
}

/**
 * Counts the distinct addresses, networks, providers and countries among the uses made within the
 * policy's window before `now`, looks for impossible travel between consecutive placed uses, and
 * names the signals over the policy's limits.
 */
export function assessSharing(uses: readonly SharingUse[], policy: SharingPolicy, now: number): SharingAssessment {
  const since = now - policy.windowSeconds * 1000;
  const inWindow = uses.filter((u) => u.at >= since && u.at <= now).sort((a, b) => a.at - b.at);
  const distinct = (f: (u: SharingUse) => string | number | undefined) => new Set(inWindow.map(f).filter((v) => v !== undefined && v !== '')).size;
  const out: SharingAssessment = {
    addresses: distinct((u) => u.ip),
    networks: distinct((u) => u.network),
    asns: distinct((u) => u.asn),
    countries: distinct((u) => u.country),
    flags: [],
  };
  if (policy.travelKmh > 0) {
    const placed = inWindow.filter((u) => u.lat !== undefined && u.lon !== undefined);
    for (let i = 1; i < placed.length; i++) {
      const a = placed[i - 1];
      const b = placed[i];
      const km = distanceKm(a.lat!, a.lon!, b.lat!, b.lon!);
      if (km < policy.travelMinKm) continue;
      // uses of the same minute count as a minute apart: the window keeps each address's last use only
      const hours = Math.max(b.at - a.at, 60_000) / 3_600_000;
      const kmh = km / hours;
      if (kmh > policy.travelKmh && (out.travel === undefined || kmh > out.travel.kmh)) {
        out.travel = { from: { ip: a.ip, country: a.country, at: a.at }, to: { ip: b.ip, country: b.country, at: b.at }, km: Math.round(km), kmh: Math.round(kmh) };
      }
    }
  }
  const over: Array<[SharingSignal, number, number]> = [
    ['addresses', out.addresses, policy.maxAddresses],
    ['networks', out.networks, policy.maxNetworks],
    ['asns', out.asns, policy.maxAsns],
    ['countries', out.countries, policy.maxCountries],
  ];
  for (const [signal, seen, max] of over) if (max > 0 && seen > max) out.flags.push(signal);
  if (out.travel !== undefined) out.flags.push('travel');
  return out;
}
