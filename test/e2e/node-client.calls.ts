// Run by test/e2e/node-client.test.ts as a child process: the hosted platform's official Node REST
// client (@dolbyio/dolbyio-rest-apis-client), pointed at Streamgate, makes its calls unchanged and
// the answers are printed as one JSON line. The client speaks only https to port 443 of the host
// set with urls.initialize; NODE_EXTRA_CA_CERTS makes it trust the test certificate.
// Environment: SG_HOST, SG_API_SECRET, SG_ACCOUNT_ID, SG_WEBHOOK_URL, optionally SG_STOP_STREAM.
import { streaming, urls } from '@dolbyio/dolbyio-rest-apis-client';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const host = env('SG_HOST');
const secret = env('SG_API_SECRET');
const accountId = env('SG_ACCOUNT_ID');
const webhookUrl = env('SG_WEBHOOK_URL');

urls.initialize({ rts: host, rtsDirector: host });

type Result = { name: string; ok: true; value: unknown } | { name: string; ok: false; error: string };
const results: Result[] = [];

/** Runs one client call; a rejection (the client rejects with a text naming the status) is kept. */
async function step<T>(name: string, f: () => Promise<T>): Promise<T | undefined> {
  try {
    const value = await f();
    results.push({ name, ok: true, value: value === undefined ? null : value });
    return value;
  } catch (e) {
    results.push({ name, ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    return undefined;
  }
}

const { publishToken, subscribeToken, webhooks, director, account, stream, cluster } = streaming;

// SG_STOP_STREAM set: only stream.stop of that stream (the suite has a publisher live on it).
const stopStream = process.env.SG_STOP_STREAM;
if (stopStream) {
  await step('stream.stop', () => stream.stop(secret, stopStream));
  process.stdout.write(`RESULTS ${JSON.stringify(results)}\n`);
  process.exit(0);
}

const pub = await step('publishToken.create', () =>
  publishToken.create(secret, {
    label: 'node-studio',
    expires: 3600,
    streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }],
  }),
);
// The client types ids as strings; the wire carries numbers.
const pubId = Number(pub?.id);
await step('publishToken.read', () => publishToken.read(secret, pubId));
await step('publishToken.update', () =>
  publishToken.update(secret, pubId, { label: 'node-studio-2', addTokenStreams: [{ streamName: 'backup' }], removeTokenStreams: [{ streamName: 'cam[0-9]+', isRegex: true }] }),
);
await step('publishToken.list', () => publishToken.list(secret, 'Name', 1, 25, false));
await step('publishToken.getActivePublishTokenId', () => publishToken.getActivePublishTokenId(secret, `${accountId}/cam1`));
await step('publishToken.getAllActivePublishTokenId', () => publishToken.getAllActivePublishTokenId(secret));
await step('director.publish', () => director.publish(pub?.token ?? 'none', 'cam1'));

const sub = await step('subscribeToken.create', () =>
  subscribeToken.create(secret, { label: 'node-viewers', streams: [{ streamName: 'cam1' }], tracking: { trackingId: 'node-group' } }),
);
const subId = Number(sub?.id);
await step('subscribeToken.read', () => subscribeToken.read(secret, subId));
await step('subscribeToken.update', () => subscribeToken.update(secret, subId, { label: 'node-viewers-2', addTokenStreams: [{ streamName: 'cam2' }] }));
await step('subscribeToken.list', () => subscribeToken.list(secret, 'AddedOn', 1, 10, true));
await step('director.subscribe (subscribe token)', () => director.subscribe('cam1', accountId, sub?.token ?? 'none'));
// Without a token the client sends "Authorization: NoAuth"; cam1 is open (no securing token).
await step('director.subscribe (no token)', () => director.subscribe('cam1', accountId));

const hook = await step('webhooks.add', () => webhooks.add(secret, { url: webhookUrl, isFeedHooks: true, isRecordingHooks: false }));
const hookId = Number(hook?.id);
await step('webhooks.read', () => webhooks.read(secret, hookId));
await step('webhooks.update', () => webhooks.update(secret, hookId, { isThumbnailHooks: true, refreshSecret: true }));
await step('webhooks.list', () => webhooks.list(secret, { itemCount: 10 }));
await step('webhooks.remove', () => webhooks.remove(secret, hookId));

await step('account.readGeoRestrictions', () => account.readGeoRestrictions(secret));
await step('account.updateGeoRestrictions', () => account.updateGeoRestrictions(secret, ['US', 'CA']));

// Clusters and geo cascade: both updates go out without a Content-Type header.
await step('cluster.read', () => cluster.read(secret));
await step('cluster.update', () => cluster.update(secret, 'us-1'));
await step('director.publish (account default us-1)', () => director.publish(pub?.token ?? 'none', 'cam1'));
await step('account.getGeoCascade', () => account.getGeoCascade(secret));
await step('account.updateGeoCascade', () => account.updateGeoCascade(secret, { isEnabled: true, clusters: ['us-1'] }));
await step('publishToken.read (after the account settings)', () => publishToken.read(secret, pubId));

await step('publishToken.disable', () => publishToken.disable(secret, [pubId]));
await step('subscribeToken.deleteToken', () => subscribeToken.deleteToken(secret, subId));
await step('publishToken.deleteToken', () => publishToken.deleteToken(secret, pubId));

process.stdout.write(`RESULTS ${JSON.stringify(results)}\n`);
