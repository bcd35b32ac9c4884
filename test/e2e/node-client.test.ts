// The hosted platform's official Node REST client, unchanged, against a real Streamgate serving
// HTTPS itself on 127.0.0.1:443 (the client speaks only https to port 443). A child process runs
// the client's calls (test/e2e/node-client.calls.ts) trusting the test certificate through
// NODE_EXTRA_CA_CERTS; each call's answer, as the client hands it to its caller, is asserted here.
// Needs root (port 443) and a free port 443: without them the suite fails naming what is missing.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, runNode, type RunningServer } from '../helpers/process.js';
import { selfSignedCert, startReceiver, type Receiver } from '../helpers/receiver.js';
import { freePort } from '../helpers/redis.js';
import { exitOf, publishTestPattern, requireBinaries, startNginx } from './nginx.js';

const HOST = '127.0.0.1';
const ADMIN_KEY = 'node-client-admin-key-0123456789abcdef';
const HEX64 = /^[0-9a-f]{64}$/;
const BASE64_32 = /^[A-Za-z0-9+/]{43}=$/;
const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

type Result = { name: string; ok: true; value: any } | { name: string; ok: false; error: string };

/** Port 443 on 127.0.0.1 is free: resolves, or rejects naming who is in the way. */
function port443Free(): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) =>
      reject(new Error(`port 443 on ${HOST} cannot be bound (${e.code}): this suite owns it; stop whatever holds it`)),
    );
    s.listen(443, HOST, () => s.close(() => resolve()));
  });
}

function httpsJson(ca: Buffer, method: string, p: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port: 443, method, path: p, ca, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const CLUSTERS = [
  { id: 'eu-1', name: 'Frankfurt', publishUrls: ['wss://localhost/ws/pub/{accountId}/{streamName}'], subscribeUrls: ['wss://localhost/ws/sub/{accountId}/{streamName}'] },
  {
    id: 'us-1',
    name: 'Ashburn',
    publishUrls: ['wss://us.localhost/ws/pub/{accountId}/{streamName}'],
    subscribeUrls: ['wss://us.localhost/ws/sub/{accountId}/{streamName}'],
    rtmpPublishUrls: ['rtmp://ingest.us.localhost/live/{streamName}'],
    location: { city: 'Ashburn', region: 'Virginia', country: 'United States' },
  },
];
const CLUSTER_VIEWS = [
  { id: 'eu-1', name: 'Frankfurt', rtmp: '', srt: '', location: { city: null, region: null, country: null }, features: { transcoding: false } },
  { id: 'us-1', name: 'Ashburn', rtmp: 'ingest.us.localhost', srt: '', location: { city: 'Ashburn', region: 'Virginia', country: 'United States' }, features: { transcoding: false } },
];

const jwtClaims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8'));

describe('the official Node client (@dolbyio/dolbyio-rest-apis-client) against Streamgate over its own TLS on port 443', () => {
  let server: RunningServer | undefined;
  let rx: Receiver | undefined;
  let accountId = '';
  let webhookUrl = '';
  let apiSecret = '';
  let ca: Buffer;
  let caFile = '';
  const results = new Map<string, Result>();

  before(async () => {
    if (process.getuid?.() !== 0) throw new Error('this suite must run as root: the client connects to port 443 only');
    if (spawnSync('openssl', ['version']).error) throw new Error('openssl is needed to make the test certificate: install the Debian package openssl');
    await port443Free();
    const cert = selfSignedCert(); // valid for 127.0.0.1 and localhost; it is its own CA
    rx = await startReceiver();
    webhookUrl = `${rx.url}/node-client`;
    server = await startServer({
      PORT: '443',
      HOST,
      STREAMGATE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'sg-node-client-')),
      STREAMGATE_ADMIN_KEY: ADMIN_KEY,
      STREAMGATE_SERVER_TLS_CERTFILE: cert.cert,
      STREAMGATE_SERVER_TLS_KEYFILE: cert.key,
      // the webhook receiver is on loopback, with its own certificate
      STREAMGATE_WEBHOOKS_ALLOWPRIVATETARGETS: 'true',
      STREAMGATE_WEBHOOKS_CAFILE: rx.caFile,
      // two clusters: the first with the default director URLs (what an account that set none gets)
      STREAMGATE_DIRECTOR_CLUSTERS: JSON.stringify(CLUSTERS),
    });
    ca = readFileSync(cert.cert);
    caFile = cert.cert;
    const made = await httpsJson(ca, 'POST', '/admin/accounts', { authorization: `Bearer ${ADMIN_KEY}` }, { name: 'node-client' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    accountId = made.body.data.id;
    apiSecret = made.body.data.apiSecret;
    const run = await runNode(['--import', 'tsx', 'test/e2e/node-client.calls.ts'], {
      NODE_EXTRA_CA_CERTS: cert.cert,
      SG_HOST: HOST,
      SG_API_SECRET: apiSecret,
      SG_ACCOUNT_ID: accountId,
      SG_WEBHOOK_URL: webhookUrl,
    });
    const line = run.stdout.split('\n').find((l) => l.startsWith('RESULTS '));
    if (run.code !== 0 || !line) throw new Error(`the client script failed (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
    for (const r of JSON.parse(line.slice('RESULTS '.length)) as Result[]) results.set(r.name, r);
  });
  after(async () => {
    if (server) {
      server.proc.kill('SIGTERM');
      await server.exited;
    }
    await rx?.close();
  });

  /** The value the client resolved with; fails with the client's rejection text otherwise. */
  const value = (name: string): any => {
    const r = results.get(name);
    assert.ok(r, `the client script ran no ${name}`);
    assert.ok(r.ok, `${name} was rejected: ${r.ok ? '' : r.error}`);
    return r.value;
  };
  const v = (name: string) => results.get(name)?.ok ? (results.get(name) as { value: any }).value : undefined;

  it('publishToken.create (POST /api/publish_token/): the record, expiring in an hour', () => {
    const d = value('publishToken.create');
    assert.match(d.token, HEX64);
    assert.equal(Date.parse(d.expiresOn) - Date.parse(d.addedOn), 3600_000);
    assert.deepEqual(
      [d.label, d.isActive, d.streams, d.allowedOrigins, d.allowedIpAddresses, d.allowedCountries, d.deniedCountries, d.subscribeRequiresAuth, d.record],
      [
        'node-studio',
        true,
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'cam[0-9]+', isRegex: true },
        ],
        [],
        [],
        [],
        [],
        false,
        false,
      ],
    );
  });

  it('publishToken.read: the record the create answered', () => {
    assert.deepEqual(value('publishToken.read'), v('publishToken.create'));
  });

  it('publishToken.update (removeTokenStreams as objects): label and streams changed, the token value kept', () => {
    const d = value('publishToken.update');
    assert.deepEqual(
      [d.id, d.token, d.label, d.streams],
      [
        v('publishToken.create')?.id,
        v('publishToken.create')?.token,
        'node-studio-2',
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'backup', isRegex: false },
        ],
      ],
    );
  });

  it('publishToken.list (isDescending=false): the updated record', () => {
    assert.deepEqual(value('publishToken.list'), [v('publishToken.update')]);
  });

  it('publishToken.getActivePublishTokenId and getAllActivePublishTokenId: nothing is publishing', () => {
    assert.deepEqual(value('publishToken.getActivePublishTokenId'), { tokenIds: [] });
    assert.deepEqual(value('publishToken.getAllActivePublishTokenId'), { tokenIds: [] });
  });

  it('director.publish: the configured URLs, a connection JWT for the stream, the account', () => {
    const d = value('director.publish');
    assert.match(d.jwt, JWT);
    assert.deepEqual(
      { ...d, jwt: '' },
      { urls: [`wss://localhost/ws/pub/${accountId}/cam1`], jwt: '', iceServers: [], streamAccountId: accountId, subscribeRequiresAuth: false },
    );
    const c = jwtClaims(d.jwt);
    assert.deepEqual(
      [c.sub, c.streaming.tokenId, c.streaming.tokenType, c.streaming.streamName, c.millicast?.streamName, c.millicast?.streamAccountId],
      [`${accountId}/cam1`, v('publishToken.create')?.id, 'Publish', 'cam1', 'cam1', accountId],
    );
  });

  it('subscribeToken.create: the record with its tracking id', () => {
    const d = value('subscribeToken.create');
    assert.match(d.token, HEX64);
    assert.deepEqual(
      [d.label, d.isActive, d.streams, d.tracking, d.expiresOn ?? null],
      ['node-viewers', true, [{ streamName: 'cam1', isRegex: false }], { trackingId: 'node-group' }, null],
    );
  });

  it('subscribeToken.read: the record the create answered', () => {
    assert.deepEqual(value('subscribeToken.read'), v('subscribeToken.create'));
  });

  it('subscribeToken.update: label and streams changed, tracking kept', () => {
    const d = value('subscribeToken.update');
    assert.deepEqual(
      [d.token, d.label, d.streams, d.tracking],
      [
        v('subscribeToken.create')?.token,
        'node-viewers-2',
        [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'cam2', isRegex: false },
        ],
        { trackingId: 'node-group' },
      ],
    );
  });

  it('subscribeToken.list (AddedOn, descending): the updated record', () => {
    assert.deepEqual(value('subscribeToken.list'), [v('subscribeToken.update')]);
  });

  it('director.subscribe with the subscribe token: the viewer URLs and a JWT carrying the tracking id', () => {
    const d = value('director.subscribe (subscribe token)');
    assert.match(d.jwt, JWT);
    assert.deepEqual({ ...d, jwt: '' }, { urls: [`wss://localhost/ws/sub/${accountId}/cam1`], jwt: '', iceServers: [], streamAccountId: accountId });
    const c = jwtClaims(d.jwt);
    assert.deepEqual(
      [c.streaming.tokenId, c.streaming.tokenType, c.streaming.trackingId],
      [v('subscribeToken.create')?.id, 'Subscribe', 'node-group'],
    );
  });

  it('director.subscribe without a token ("Authorization: NoAuth"): an open stream is viewable', () => {
    const d = value('director.subscribe (no token)');
    assert.deepEqual({ ...d, jwt: '' }, { urls: [`wss://localhost/ws/sub/${accountId}/cam1`], jwt: '', iceServers: [], streamAccountId: accountId });
  });

  it('webhooks.add (POST /api/webhooks/): the record with a signing secret', () => {
    const d = value('webhooks.add');
    assert.match(d.secret, BASE64_32);
    assert.deepEqual([d.url, d.isFeedHooks, d.isRecordingHooks, d.isThumbnailHooks], [webhookUrl, true, false, false]);
  });

  it('webhooks.read: the record the add answered', () => {
    assert.deepEqual(value('webhooks.read'), v('webhooks.add'));
  });

  it('webhooks.update (isThumbnailHooks, refreshSecret): the flag set, a new secret', () => {
    const d = value('webhooks.update');
    const added = v('webhooks.add');
    assert.match(d.secret, BASE64_32);
    assert.notEqual(d.secret, added?.secret);
    assert.deepEqual({ ...d, secret: '' }, { ...added, isThumbnailHooks: true, secret: '' });
  });

  it('webhooks.list (itemCount): the updated webhook', () => {
    assert.deepEqual(value('webhooks.list'), [v('webhooks.update')]);
  });

  it('webhooks.remove: the deleted webhook (the client types the answer as a Webhook)', () => {
    assert.deepEqual(value('webhooks.remove'), v('webhooks.update'));
  });

  it('account.readGeoRestrictions: no account rules yet', () => {
    assert.deepEqual(value('account.readGeoRestrictions'), { allowedCountries: [], deniedCountries: [] });
  });

  it('account.updateGeoRestrictions (updateAllowedCountries): the account rules set', () => {
    assert.deepEqual(value('account.updateGeoRestrictions'), { allowedCountries: ['US', 'CA'], deniedCountries: [] });
  });

  it('cluster.read (GET /api/cluster): the configured clusters; the account set none, so the first is its default', () => {
    assert.deepEqual(value('cluster.read'), { defaultCluster: 'eu-1', availableClusters: CLUSTER_VIEWS });
  });

  it('cluster.update (PUT /api/cluster, no Content-Type): the new default, with the clusters', () => {
    assert.deepEqual(value('cluster.update'), { defaultCluster: 'us-1', availableClusters: CLUSTER_VIEWS });
  });

  it('director.publish after cluster.update: the URLs of the account default cluster', () => {
    const d = value('director.publish (account default us-1)');
    assert.deepEqual({ ...d, jwt: '' }, { urls: [`wss://us.localhost/ws/pub/${accountId}/cam1`], jwt: '', iceServers: [], streamAccountId: accountId, subscribeRequiresAuth: false });
  });

  it('account.getGeoCascade (GET /api/account/geo_cascade): none set', () => {
    assert.deepEqual(value('account.getGeoCascade'), { isEnabled: false, clusters: [] });
  });

  it('account.updateGeoCascade (PUT /api/account/geo_cascade, no Content-Type): the setting stored and answered', () => {
    assert.deepEqual(value('account.updateGeoCascade'), { isEnabled: true, clusters: ['us-1'] });
  });

  it("publishToken.read after both: effectiveSettings follow the account's cluster and geo cascade", () => {
    const d = value('publishToken.read (after the account settings)');
    assert.deepEqual(
      [d.originCluster, d.geoCascade, d.effectiveSettings],
      ['', undefined, { originCluster: 'us-1', allowedCountries: ['US', 'CA'], deniedCountries: [], geoCascade: { isEnabled: true, clusters: ['us-1'] } }],
    );
  });

  it('publishToken.disable: the token disabled', () => {
    assert.deepEqual(value('publishToken.disable'), { successfulTokens: [v('publishToken.create')?.id], failedTokens: [] });
  });

  it('subscribeToken.deleteToken and publishToken.deleteToken: true', () => {
    assert.equal(value('subscribeToken.deleteToken'), true);
    assert.equal(value('publishToken.deleteToken'), true);
  });

  it('stream.stop (POST /api/stream/stop): { stoppingLevel: "Stream" }, and a live nginx-rtmp publisher is cut at its next on_update', async () => {
    requireBinaries();
    const auth = { authorization: `Bearer ${apiSecret}` };
    const pub = await httpsJson(ca, 'POST', '/api/publish_token', auth, { label: 'node-stop', streams: [{ streamName: 'stopme' }] });
    assert.equal(pub.status, 200, JSON.stringify(pub.body));
    const rtmpPort = await freePort();
    const hookPort = await freePort();
    // nginx-rtmp notifies over plain HTTP: nginx's own http server carries the hooks to Streamgate's TLS.
    const nginx = await startNginx(
      `rtmp {
  server {
    listen ${HOST}:${rtmpPort};
    application live {
      live on;
      on_publish http://${HOST}:${hookPort}/hooks/nginx-rtmp;
      on_publish_done http://${HOST}:${hookPort}/hooks/nginx-rtmp;
      on_update http://${HOST}:${hookPort}/hooks/nginx-rtmp;
      notify_update_timeout 1s;
    }
  }
}
http {
  access_log off;
  client_body_temp_path DIR/tmp;
  proxy_temp_path DIR/tmp;
  fastcgi_temp_path DIR/tmp;
  uwsgi_temp_path DIR/tmp;
  scgi_temp_path DIR/tmp;
  server {
    listen ${HOST}:${hookPort};
    location /hooks/ {
      proxy_pass https://${HOST}:443;
      proxy_ssl_trusted_certificate ${caFile};
      proxy_ssl_verify on;
      proxy_ssl_name localhost;
      proxy_ssl_server_name on;
    }
  }
}`,
      [rtmpPort, hookPort],
      true,
    );
    const ff = publishTestPattern(`rtmp://${HOST}:${rtmpPort}/live/stopme?token=${pub.body.data.token}`, 120);
    try {
      const sessions = async () => (await httpsJson(ca, 'GET', `/api/sessions?tokenId=${pub.body.data.id}`, auth)).body.data.data as Array<{ id: string; endedReason: string | null }>;
      let live: Array<{ id: string; endedReason: string | null }> = [];
      for (const deadline = Date.now() + 15000; live.length === 0 && Date.now() < deadline; ) {
        live = (await sessions()).filter((x) => x.endedReason === null);
        if (live.length === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(live.length, 1, `the publisher is a live session (ffmpeg exit ${ff.exitCode}); decisions:\n${server!.logs.filter((l) => l.includes('"decision"')).join('\n')}\n${nginx.errorLog().split('\n').slice(-15).join('\n')}`);
      const at = Date.now();
      const run = await runNode(['--import', 'tsx', 'test/e2e/node-client.calls.ts'], {
        NODE_EXTRA_CA_CERTS: caFile,
        SG_HOST: HOST,
        SG_API_SECRET: apiSecret,
        SG_ACCOUNT_ID: accountId,
        SG_WEBHOOK_URL: webhookUrl,
        SG_STOP_STREAM: `${accountId}/stopme`,
      });
      const line = run.stdout.split('\n').find((l) => l.startsWith('RESULTS '));
      assert.ok(run.code === 0 && line, `the client script failed (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
      const answered = Date.now() - at;
      assert.deepEqual(JSON.parse(line.slice('RESULTS '.length)), [{ name: 'stream.stop', ok: true, value: { stoppingLevel: 'Stream' } }]);
      const code = await exitOf(ff, 5000);
      const cut = Date.now() - at;
      console.log(`# stream.stop through the client: answered ${answered} ms, publisher cut ${cut} ms after the client started (ffmpeg exit ${code})`);
      assert.ok(code !== -1 && code !== 0, `ffmpeg was cut with an error exit (got ${code})`);
      assert.ok(cut <= answered + 2000, `cut ${cut - answered} ms after the client returned (on_update every 1 s)`);
      const ended = await httpsJson(ca, 'GET', `/api/sessions/${live[0]!.id}`, auth);
      assert.equal(ended.body.data.endedReason, 'stopped');
    } finally {
      if (ff.exitCode === null && ff.signalCode === null) ff.kill('SIGKILL');
      await nginx.stop();
    }
  });
});
