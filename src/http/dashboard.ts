// The web dashboard: static files built by `npm run build:dashboard` into dist/dashboard/, served
// at /dashboard/ without authentication (the files hold no data; every API call carries the secret).
import express, { type Express, type RequestHandler } from 'express';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { mountEndpoints, type Endpoint } from './surfaces.js';
import { fileURLToPath } from 'node:url';

/** src/http/ and dist/http/ both sit two levels below the package root. */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../dist/dashboard/', import.meta.url));

// The bundle loads nothing from elsewhere and talks only to this origin's /api.
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('content-security-policy', DASHBOARD_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  next();
};

/** The dashboard's entry of the route table (src/http/surfaces.ts), when it is enabled. */
export function dashboardEndpoint(opts: { enabled: boolean; dir?: string }): Endpoint | undefined {
  if (!opts.enabled) return undefined;
  const dir = opts.dir ?? DASHBOARD_DIR;
  const index = path.join(dir, 'index.html');
  const built: RequestHandler = (req, res, next) => {
    // Relative asset URLs in index.html need the trailing slash.
    if (req.originalUrl.split('?')[0] === '/dashboard') return res.redirect(301, '/dashboard/');
    // Checked per request, so building after start needs no restart.
    if (!existsSync(index)) {
      res.status(503).type('text/plain').send('dashboard not built: run npm run build:dashboard');
      return;
    }
    next();
  };
  const files = express.static(dir, {
    index: 'index.html',
    redirect: false,
    setHeaders(res, file) {
      // Vite puts content-hashed names under assets/; index.html must be revalidated to find them.
      const hashed = path.relative(dir, file).split(path.sep)[0] === 'assets';
      res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  return {
    surface: 'operations',
    method: 'all',
    path: '/dashboard',
    below: true,
    auth: 'none',
    served: 'layer',
    summary: 'The web dashboard (static files; every API call it makes carries the API secret)',
    openapi: [],
    handlers: [securityHeaders, built, files],
  };
}

export function mountDashboard(app: Express, opts: { enabled: boolean; dir?: string }): void {
  const e = dashboardEndpoint(opts);
  if (e) mountEndpoints({ app }, [e], {});
}
