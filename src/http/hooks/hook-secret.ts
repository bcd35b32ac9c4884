// The guard `hookSecret` of the route table (src/http/surfaces.ts): the shared secret of /hooks/*
// (hooks.secret): callers are infrastructure, and an open hook
// endpoint would let anyone spend bind slots with forged addresses. A caller that can only send
// the secret where it is logged (nginx-rtmp's notify URLs) may instead be named in hooks.allowFrom
// with the socket addresses it calls from (docs/callers.md#nginx-rtmp-debian-libnginx-mod-rtmp):
// a request from such an address to that caller's own routes needs no secret; from anywhere else,
// or to another caller's routes, it still does.
import type { Request, RequestHandler } from 'express';
import { safeEqual } from '../../domain/secrets.js';
import { peerAddress, TrustedProxies } from '../client.js';
import { routeKey } from '../decision-routes.js';
import type { Endpoint } from '../surfaces.js';

/** A caller's routes as the guard needs them (src/callers/caller.ts). */
export interface GuardedCaller {
  name: string;
  routes: ReadonlyArray<{ path: string; below?: boolean }>;
}

/** The callers of the route table's hook endpoints (src/http/surfaces.ts), each with its routes. */
export function hookCallers(endpoints: readonly Endpoint[]): GuardedCaller[] {
  const byName = new Map<string, Array<{ path: string; below?: boolean }>>();
  for (const e of endpoints) {
    if (e.surface !== 'hooks' || e.caller === undefined) continue;
    const routes = byName.get(e.caller) ?? [];
    routes.push({ path: e.path, below: e.below });
    byName.set(e.caller, routes);
  }
  return [...byName].map(([name, routes]) => ({ name, routes }));
}

/**
 * Which addresses may call which routes without the secret: the routes of every caller that
 * hooks.allowFrom names, by the key the decision table matches paths with. Undefined when none.
 */
function addressRule(allowFrom: Record<string, string[]>, callers: readonly GuardedCaller[]): ((req: Request) => boolean) | undefined {
  const exact = new Map<string, TrustedProxies>();
  const below: Array<[string, TrustedProxies]> = [];
  for (const c of callers) {
    const list = allowFrom[c.name];
    if (list === undefined || list.length === 0) continue;
    const from = new TrustedProxies(list);
    for (const r of c.routes) {
      const key = routeKey(r.path);
      exact.set(key, from);
      if (r.below) below.push([`${key}/`, from]);
    }
  }
  if (exact.size === 0) return undefined;
  return (req) => {
    const key = routeKey(req.path);
    let from = exact.get(key);
    if (from === undefined) for (const [prefix, f] of below) if (key.startsWith(prefix)) from = f;
    // the TCP peer alone: a forwarded header is the client's word, never an address to trust here
    return from?.has(peerAddress(req)) === true;
  };
}

export function requireHookSecret(secret: string, opts: { allowFrom?: Record<string, string[]>; callers?: readonly GuardedCaller[] } = {}): RequestHandler {
  const listed = addressRule(opts.allowFrom ?? {}, opts.callers ?? []);
  return (req, res, next) => {
    if (secret === '') return next();
    if (listed?.(req)) return next();
    const q = req.query.secret;
    const presented = req.get('x-streamgate-hook-secret') ?? (typeof q === 'string' ? q : undefined);
    if (presented !== undefined && safeEqual(presented, secret)) return next();
    // The header wins over the query parameter; anything non-empty in either was a secret presented.
    const given = (presented !== undefined && presented !== '') || (q !== undefined && q !== '');
    res.status(401).json({ allowed: false, reason: 'hook_secret_required', message: given ? 'Unauthorized: hook secret invalid' : 'Unauthorized: hook secret required' });
  };
}
