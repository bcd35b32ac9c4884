// Who is calling: the client address (forwarding headers believed only from trusted proxies),
// the page origin, a country a trusted CDN header vouches for, and a bearer credential. Shared by
// every adapter.
import type { Request } from 'express';
import { normaliseIp, originHost, TrustedProxies } from '../domain/addresses.js';
import { countryFromHeader } from '../enforce/geo.js';

export { TrustedProxies };

/** The TCP peer, normalised (::ffff:a.b.c.d → a.b.c.d). */
export const peerAddress = (req: Request): string | undefined => normaliseIp(req.socket.remoteAddress);

/**
 * The client address: the peer itself, unless the peer is a trusted proxy, in which case the
 * right-most X-Forwarded-For entry that is not itself a trusted proxy (every proxy appends the
 * address it saw, so that entry is the last one no trusted hop could have been told by the
 * client). A single-address header such as X-Real-IP is read only when hooks.realIpHeader names
 * it: a proxy that passes such a header through unchanged would let clients choose their address.
 */
export function clientAddress(req: Request, trusted: TrustedProxies): string | undefined {
  const peer = peerAddress(req);
  if (!trusted.has(peer)) return peer;
  if (trusted.realIpHeader !== '') {
    const h = req.headers[trusted.realIpHeader];
    return normaliseIp(typeof h === 'string' ? h : undefined) ?? peer;
  }
  const xff = (req.get('x-forwarded-for') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  // Several X-Forwarded-For lines arrive joined by node with ', ': one list.
  for (let i = xff.length - 1; i >= 0; i--) {
    const ip = normaliseIp(withoutPort(xff[i]));
    if (!ip) return peer; // a garbled chain is not believed
    if (!trusted.has(ip)) return ip;
  }
  return peer;
}

/**
 * Some load balancers append the client as `a.b.c.d:port` or `[v6]:port`: the address without the
 * port. Any other spelling is left for normaliseIp to accept or refuse.
 */
function withoutPort(entry: string): string {
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(entry);
  if (v4) return v4[1];
  const v6 = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$/.exec(entry);
  return v6 ? v6[1] : entry;
}

/** The host of the Origin header, else of the Referer. */
export const requestOrigin = (req: Request): string | undefined => originHost(req.get('origin')) ?? originHost(req.get('referer'));

/** A CDN's country header (geo.trustedHeader), believed only from a trusted proxy. */
export function trustedCountry(req: Request, trusted: TrustedProxies, header: string): string | undefined {
  if (header === '' || !trusted.has(peerAddress(req))) return undefined;
  return countryFromHeader(req.headers[header.toLowerCase()]);
}

/** The credential of an `Authorization: Bearer` header. */
export function bearer(req: Request): string | undefined {
  const h = req.get('authorization');
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}
