// Real nginx serving a static HLS folder behind auth_request to a real Streamgate process; curl is
// the viewer (with --path-as-is, or a raw socket, where the path must reach nginx unnormalised). nginx appends the client address to X-Forwarded-For and Streamgate trusts nginx for it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startServer, type RunningServer } from '../helpers/process.js';
import { freePort } from '../helpers/redis.js';
import { HTTP_TEMP_PATHS, authRequestLocation, startNginx, stopAll, requireBinaries, type Nginx } from './nginx.js';
import { CONFUSING_PATHS } from '../helpers/confusing-paths.js';
import { rawRequest } from '../helpers/raw-http.js';
import { until } from '../helpers/until.js';

const PLAYLIST = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg-0.ts\n#EXT-X-ENDLIST\n';
/** Bytes that must never reach a viewer without a token for premium. */
const PREMIUM_PLAYLIST = '#EXTM3U\n#EXT-X-VERSION:3\n#PREMIUM-ONLY\n#EXTINF:2.0,\nseg-1.ts\n#EXT-X-ENDLIST\n';
const PREMIUM_SEGMENT = Buffer.alloc(376, 0x50);
const ADMIN_KEY = 'e2e-admin-key-0123456789abcdefghijklmnop';

describe('nginx auth_request + curl end to end', () => {
  let sg: RunningServer;
  let nginx: Nginx;
  let httpPort: number;
  let secret: string;
  let dataDir: string;

  const api = async (p: string, body: unknown) => {
    const r = await fetch(sg.base + p, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return ((await r.json()) as { data: { id: number; token: string } }).data;
  };
  /** curl from a chosen loopback address; returns the status and the x-token-id nginx added. */
  const curl = (uri: string, opts: { from?: string; origin?: string } = {}) => {
    const args = ['-s', '-o', '/dev/null', '-D', '-', '-w', '%{http_code}', '--interface', opts.from ?? '127.0.0.1'];
    if (opts.origin) args.push('-H', `Origin: ${opts.origin}`);
    args.push(`http://127.0.0.1:${httpPort}${uri}`);
    const r = spawnSync('curl', args, { encoding: 'utf8' });
    const status = Number(r.stdout.slice(-3));
    const tokenId = /^x-token-id: (\S+)/im.exec(r.stdout)?.[1];
    const decisionId = /^x-decision-id: (\S+)/im.exec(r.stdout)?.[1];
    return { status, tokenId, ...(decisionId !== undefined ? { decisionId } : {}) };
  };

  before(async () => {
    requireBinaries();
    dataDir = mkdtempSync(path.join(tmpdir(), 'sg-e2e-'));
    sg = await startServer({ STREAMGATE_DATA_DIR: dataDir, STREAMGATE_HOOKS_TRUSTEDPROXIES: '127.0.0.1', STREAMGATE_ADMIN_KEY: ADMIN_KEY });
    secret = readFileSync(path.join(dataDir, 'default-api-secret'), 'utf8').trim();
    httpPort = await freePort();
    nginx = await startNginx(
      `http {
  ${HTTP_TEMP_PATHS}
  server {
    listen 127.0.0.1:${httpPort};
    root DIR/www;
    location /hls/ {
      auth_request /_streamgate;
      auth_request_set $sg_token_id $upstream_http_x_streamgate_token_id;
      add_header X-Token-Id $sg_token_id always;
      auth_request_set $sg_decision $upstream_http_x_streamgate_decision_id;
      add_header X-Decision-Id $sg_decision always;
    }
    ${authRequestLocation(sg.port)}
  }
}`,
      [httpPort],
      false,
    );
    mkdirSync(path.join(nginx.dir, 'www/hls/cam1'), { recursive: true });
    writeFileSync(path.join(nginx.dir, 'www/hls/cam1/index.m3u8'), PLAYLIST);
    writeFileSync(path.join(nginx.dir, 'www/hls/cam1/seg-0.ts'), Buffer.alloc(188, 0x47));
    for (const d of ['open', 'premium']) mkdirSync(path.join(nginx.dir, 'www/hls', d), { recursive: true });
    writeFileSync(path.join(nginx.dir, 'www/hls/open/index.m3u8'), PLAYLIST);
    writeFileSync(path.join(nginx.dir, 'www/hls/premium/index.m3u8'), PREMIUM_PLAYLIST);
    writeFileSync(path.join(nginx.dir, 'www/hls/premium/seg-1.ts'), PREMIUM_SEGMENT);
  });

  after(() => stopAll([], nginx, sg));

  it('serves the playlist and segments to a valid subscribe token, with the token id from auth_request_set', async () => {
    const s = await api('/api/subscribe_token', { label: 'hls', streams: [{ streamName: 'cam1' }] });
    const r = curl(`/hls/cam1/index.m3u8?token=${s.token}`);
    assert.deepEqual(r, { status: 200, tokenId: String(s.id) });
    assert.equal(curl(`/hls/cam1/seg-0.ts?token=${s.token}`).status, 200);
  });

  it('refuses a bad token (401), an origin outside allowedOrigins (403) and an address outside allowedIpAddresses (403)', async () => {
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${'0'.repeat(64)}`).status, 401);
    const o = await api('/api/subscribe_token', { label: 'o', streams: [{ streamName: 'cam1' }], allowedOrigins: ['*.example.com'] });
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${o.token}`, { origin: 'https://evil.com' }).status, 403);
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${o.token}`, { origin: 'https://www.example.com' }).status, 200);
    const ip = await api('/api/subscribe_token', { label: 'ip', streams: [{ streamName: 'cam1' }], allowedIpAddresses: ['127.0.0.2/32'] });
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${ip.token}`, { from: '127.0.0.2' }).status, 200, 'client 127.0.0.2 (X-Forwarded-For) is inside');
    assert.equal(curl(`/hls/cam1/index.m3u8?token=${ip.token}`, { from: '127.0.0.3' }).status, 403, 'client 127.0.0.3 (X-Forwarded-For) is outside');
    assert.equal(curl(`/hls/cam2/index.m3u8?token=${ip.token}`, { from: '127.0.0.2' }).status, 403, 'another stream');
  });

  it("hands a refused viewer the decision's id through auth_request_set, and the decision history explains it", async () => {
    const o = await api('/api/subscribe_token', { label: 'd', streams: [{ streamName: 'cam1' }], allowedOrigins: ['*.example.com'] });
    const r = curl(`/hls/cam1/index.m3u8?token=${o.token}`, { origin: 'https://evil.com', from: '127.0.0.4' });
    assert.equal(r.status, 403);
    assert.match(r.decisionId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // kept decisions are written within history.flushMs (1 s)
    let found: { status: number; body: { data: Record<string, unknown> } } | undefined;
    await until(
      async () => {
        const res = await fetch(`${sg.base}/api/decisions/${r.decisionId}`, { headers: { authorization: `Bearer ${secret}` } });
        found = { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
        return res.status === 200;
      },
      10_000,
      'the decision in the history',
    );
    const d = found!.body.data;
    assert.deepEqual(
      [d.caller, d.reason, d.rule, d.tokenId, d.clientIp, d.origin, d.streamName],
      ['auth-request', 'origin_not_allowed', 'origin allowed', o.id, '127.0.0.4', 'evil.com', 'cam1'],
    );
  });

  /** curl --path-as-is (curl sends the path exactly as written): the status and the body bytes. */
  const get = (uri: string) => {
    const r = spawnSync('curl', ['-s', '--path-as-is', '-o', '-', '-w', '\n%{http_code}', `http://127.0.0.1:${httpPort}${uri}`], { encoding: 'buffer' });
    const out = r.stdout;
    const nl = out.lastIndexOf(0x0a);
    return { status: Number(out.subarray(nl + 1).toString()), body: out.subarray(0, nl) };
  };
  const premiumBytes = (body: Buffer) => body.includes('#PREMIUM-ONLY') || body.includes(PREMIUM_SEGMENT.subarray(0, 64));
  /** Traversal spellings that lead from a directory the viewer may open to the premium one. */
  const traversals = (from: string) => [
    `/hls/${from}/../premium/index.m3u8`,
    `/hls/${from}%2F..%2Fpremium/index.m3u8`,
    `/hls/${from}/%2e%2e/premium/index.m3u8`,
    `/hls/${from}/..%2Fpremium/seg-1.ts`,
    `/hls/${from}/./../premium/index.m3u8`,
    `/hls/${from}//../premium/index.m3u8`,
    `/hls/${from}/x/y/../../../premium/index.m3u8`,
    `/hls/${from}/..;/premium/index.m3u8`,
    `/hls/${from}/%252e%252e/premium/index.m3u8`,
    `/hls/${from}/..%5cpremium/index.m3u8`,
  ];

  it('path confusion: traversal spellings get auth_request 403 and never premium bytes; the plain paths still serve', async () => {
    await api('/api/publish_token', { label: 'premium', streams: [{ streamName: 'premium' }], subscribeRequiresAuth: true });
    const viewer = await api('/api/subscribe_token', { label: 'premium viewer', streams: [{ streamName: 'premium' }] });
    const cam1 = await api('/api/subscribe_token', { label: 'cam1 viewer', streams: [{ streamName: 'cam1' }] });

    const open = get('/hls/open/index.m3u8');
    assert.deepEqual([open.status, open.body.toString()], [200, PLAYLIST]);
    assert.equal(get('/hls/premium/index.m3u8').status, 401);
    const paid = get(`/hls/premium/index.m3u8?token=${viewer.token}`);
    assert.deepEqual([paid.status, paid.body.toString()], [200, PREMIUM_PLAYLIST]);
    const seg = get(`/hls/premium/seg-1.ts?token=${viewer.token}`);
    assert.equal(seg.status, 200);
    assert.ok(seg.body.equals(PREMIUM_SEGMENT));

    for (const p of traversals('open')) {
      const r = get(p);
      assert.equal(r.status, 403, p);
      assert.ok(!premiumBytes(r.body), `premium bytes served for ${p}`);
    }
    // a valid token for cam1 opens cam1 only
    assert.equal(get(`/hls/cam1/index.m3u8?token=${cam1.token}`).status, 200);
    for (const p of traversals('cam1')) {
      const r = get(`${p}?token=${cam1.token}`);
      assert.equal(r.status, 403, p);
      assert.ok(!premiumBytes(r.body), `premium bytes served for ${p}`);
    }
  });

  it('path confusion: every spelling in the shared table, sent byte for byte, is refused by nginx (400, or 404 outside /hls/) or by auth_request (401/403), never premium bytes', async () => {
    const cam1 = await api('/api/subscribe_token', { label: 'cam1 viewer 2', streams: [{ streamName: 'cam1' }] });
    const seen = new Map<number, number>();
    for (const p of CONFUSING_PATHS.filter((x) => !/[\r\n]/.test(x))) {
      for (const target of [p, `${p.replaceAll('/open', '/cam1')}?token=${cam1.token}`]) {
        const r = await rawRequest(httpPort, target);
        assert.ok([400, 401, 403, 404].includes(r.status), `${JSON.stringify(target)} answered ${r.status}`);
        assert.ok(!premiumBytes(r.body), `premium bytes served for ${JSON.stringify(target)}`);
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
      }
    }
    // most spellings reach auth_request and are refused there; nginx itself rejects the rest
    console.log(`statuses over ${CONFUSING_PATHS.length * 2} requests: ${JSON.stringify([...seen].sort())}`);
    assert.ok((seen.get(403) ?? 0) >= 60, JSON.stringify([...seen]));
  });

  it("path confusion: with secureViewer on, another tenant's token for its own cam1 does not open /hls/cam1/../premium", async () => {
    const admin = async (method: string, p: string, body?: unknown) => {
      const r = await fetch(sg.base + p, { method, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return ((await r.json()) as { data: unknown }).data;
    };
    const accounts = (await admin('GET', '/admin/accounts')) as Array<{ id: string }>;
    assert.equal(accounts.length, 1);
    const other = (await admin('POST', '/admin/accounts', { name: 'other tenant' })) as { id: string; apiSecret: string };
    await admin('PUT', `/admin/accounts/${accounts[0].id}`, { secureViewer: true });
    const r = await fetch(`${sg.base}/api/subscribe_token`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.apiSecret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'their cam1', streams: [{ streamName: 'cam1' }] }),
    });
    const theirs = ((await r.json()) as { data: { token: string } }).data;
    assert.equal(get('/hls/open/index.m3u8').status, 401, 'secureViewer: the open stream needs a token now');
    assert.equal(get(`/hls/cam1/index.m3u8?token=${theirs.token}`).status, 200);
    for (const p of traversals('cam1')) {
      const a = get(`${p}?token=${theirs.token}`);
      assert.equal(a.status, 403, p);
      assert.ok(!premiumBytes(a.body), `premium bytes served for ${p}`);
    }
  });
});
