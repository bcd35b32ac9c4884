// The shared secret of /hooks/* (hooks.secret): callers are infrastructure, and an open hook
// endpoint would let anyone spend bind slots with forged addresses.
import type { RequestHandler } from 'express';
import { safeEqual } from '../../domain/secrets.js';

export function requireHookSecret(secret: string): RequestHandler {
  return (req, res, next) => {
    if (secret === '') return next();
    const q = req.query.secret;
    const presented = req.get('x-streamgate-hook-secret') ?? (typeof q === 'string' ? q : undefined);
    if (presented !== undefined && safeEqual(presented, secret)) return next();
    // The header wins over the query parameter; anything non-empty in either was a secret presented.
    const given = (presented !== undefined && presented !== '') || (q !== undefined && q !== '');
    res.status(401).json({ allowed: false, reason: 'hook_secret_required', message: given ? 'Unauthorized: hook secret invalid' : 'Unauthorized: hook secret required' });
  };
}
