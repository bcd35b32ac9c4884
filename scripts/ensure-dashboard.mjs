#!/usr/bin/env node
// prestart: builds the dashboard when dist/dashboard/index.html is missing, so `npm ci && npm start`
// serves it on a fresh clone. Never blocks the start: without the build tools (production installs
// omit dev dependencies) /dashboard/ answers 503 with the command to run.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

if (!existsSync('dist/dashboard/index.html')) {
  if (!existsSync('node_modules/vite/package.json')) {
    console.error('streamgate: dashboard not built and vite not installed; /dashboard/ will answer 503 (run npm run build:dashboard)');
  } else {
    console.error('streamgate: building the dashboard (dist/dashboard/ is missing)');
    const r = spawnSync('npm', ['run', '--silent', 'build:dashboard'], { stdio: 'inherit' });
    if (r.status !== 0) console.error('streamgate: dashboard build failed; starting without it');
  }
}
