// The Decisions page in Chromium on two instances sharing one Redis (docs/api.md#decision-history):
// a viewer refused by the first instance is found, with the rule that refused it, on the dashboard
// the second instance serves — by its pasted decisionId and among the recent refusals. The embedded
// store's run of the same page is in dashboard.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { build } from 'vite';
import type { Browser, Page } from 'playwright-core';
import { eventually, launchChromium, requireChromium, text } from './chromium.js';
import { redisDeployment, type Deployment } from '../helpers/instances.js';
import { ROOT } from '../helpers/process.js';

describe('dashboard decisions in Chromium: two instances on one Redis', () => {
  let d: Deployment;
  let browser: Browser;
  let page: Page;
  let acct: { id: string; secret: string };

  before(async () => {
    requireChromium();
    await build({ configFile: path.join(ROOT, 'dashboard/vite.config.ts'), logLevel: 'warn' });
    d = await redisDeployment(2, { hooks: { secret: '', trustedProxies: [], omeSecret: '', mediamtx: { allowApiFrom: [] } } });
    acct = await d.instances[0].t.account('decisions two');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await d?.close();
  });

  it('finds a refusal of the first instance on the second instance’s Decisions page, with the rule that refused it', async () => {
    const [first, second] = d.instances;
    const created = await fetch(`${first.base}/api/subscribe_token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'two instances', streams: [{ streamName: 'cam1' }], allowedOrigins: ['good.example'] }),
    });
    const sub = ((await created.json()) as { data: { id: number; token: string } }).data;
    const refused = await fetch(`${first.base}/hooks/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'subscribe', streamName: 'cam1', token: sub.token, origin: 'https://evil.example', clientIp: '203.0.113.78' }),
    });
    assert.equal(refused.status, 403);
    const { decisionId } = (await refused.json()) as { decisionId: string };
    // the first instance writes what it queued (its timer would within history.flushMs)
    await first.t.services.history!.flush();

    await page.goto(`${second.base}/dashboard/`);
    await page.getByLabel('API secret').fill(acct.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await eventually(() => text(page.locator('h1')), 'Publish tokens', 'signed in');
    await page.getByRole('link', { name: 'Decisions' }).click();
    await eventually(() => text(page.locator('h1')), 'Decisions', 'decisions page');

    const shows = async (what: string) => {
      await eventually(() => text(page.locator('#decision-decision')), 'Denied: Unauthorized: Origin not allowed (HTTP 403, origin_not_allowed)', `${what}: decision`);
      assert.match(await text(page.locator('#decision-failing-rule')), /^Failing rule: origin allowed/);
      const facts = await text(page.locator('#decision-facts'));
      for (const f of [decisionId, '203.0.113.78', 'evil.example', String(sub.id)]) assert.ok(facts.includes(f), `${what}: ${f} in ${facts}`);
    };
    await page.getByLabel('Decision id').fill(decisionId);
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await shows('pasted');

    await page.getByRole('link', { name: 'Decisions' }).click();
    await eventually(() => text(page.locator('#decision-decision')), '<absent>', 'started over');
    const pick = page.getByRole('button', { name: `Explain decision ${decisionId}` });
    await pick.waitFor();
    await pick.click();
    await shows('picked');
    await page.screenshot({ path: path.join(ROOT, 'test/e2e/screenshots/decisions-two-instances.png'), fullPage: true });
  });
});
