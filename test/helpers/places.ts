// A place lookup for token-sharing tests (docs/api.md#token-sharing), in place of the bundled
// databases: 198.51.<n>.1 in SHARING_COUNTRIES[n % 5] (provider 64500 + n); 192.0.2.<n> a home
// network in FR (provider 3215, Paris); 100.64.7.9 a mobile network in FR (provider 20810); any
// other address with its network only.
import { networkOf, type Place } from '../../src/domain/sharing.js';
import type { PlaceLookup } from '../../src/enforce/places.js';

export const SHARING_COUNTRIES = ['FR', 'DE', 'US', 'BR', 'JP'];

export const testPlaces: PlaceLookup = {
  async placeOf(ip: string): Promise<Place> {
    const p: Place = { ip, network: networkOf(ip) };
    const m = /^198\.51\.(\d+)\.1$/.exec(ip);
    if (m) return Object.assign(p, { asn: 64_500 + Number(m[1]), country: SHARING_COUNTRIES[Number(m[1]) % 5] });
    if (ip.startsWith('192.0.2.')) return Object.assign(p, { asn: 3215, country: 'FR', lat: 48.85, lon: 2.35 });
    if (ip === '100.64.7.9') return Object.assign(p, { asn: 20810, country: 'FR', lat: 48.9, lon: 2.4 });
    return p;
  },
};
