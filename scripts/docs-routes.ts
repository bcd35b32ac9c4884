// Writes the route list of docs/api.md from the route table (src/http/surfaces.ts), as the app
// builds it with the default configuration: `npm run docs:routes`. With --check it changes
// nothing and exits 1 when the page is out of date.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { createServices } from '../src/services.js';
import { createApp } from '../src/app.js';
import type { Endpoint } from '../src/http/surfaces.js';
import { withRouteList } from '../src/http/route-list.js';

const page = new URL('../docs/api.md', import.meta.url);
const dir = mkdtempSync(path.join(tmpdir(), 'streamgate-docs-routes-'));
try {
  const config = loadConfig({ env: {}, overrides: { dataDir: dir, log: { level: 'silent' } } });
  const services = await createServices(config, { firstStart: true });
  const table = createApp(services).locals.routeTable as Endpoint[];
  await services.close();
  const before = readFileSync(page, 'utf8');
  const after = withRouteList(before, table);
  if (process.argv.includes('--check')) {
    if (after !== before) {
      console.error('docs/api.md: the route list is out of date: run npm run docs:routes');
      process.exitCode = 1;
    }
  } else if (after !== before) {
    writeFileSync(page, after);
    console.log('docs/api.md: route list written');
  } else console.log('docs/api.md: route list up to date');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
