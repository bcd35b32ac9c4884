// The management API over HTTP, run against every store backend.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import type { StoreFactory } from '../helpers/stores.js';
import { testApp, type TestApp } from '../helpers/app.js';

const HEX64 = /^[0-9a-f]{64}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function tokenApiSuite(factory: StoreFactory): void {
  describe(`token API over HTTP: ${factory.name}`, () => {
    let t: TestApp;
    let acct: { id: string; secret: string };
    before(async () => {
      await factory.setup();
    });
    after(async () => {
      await factory.teardown();
    });
    const fresh = async () => {
      t = await testApp(await factory.make());
      acct = await t.account();
    };
    const as = (secret: string) => {
      const auth = { authorization: `Bearer ${secret}` };
      return {
        get: (p: string) => request(t.app).get(p).set(auth),
        post: (p: string, body?: unknown) => request(t.app).post(p).set(auth).send(body as object),
        put: (p: string, body?: unknown) => request(t.app).put(p).set(auth).send(body as object),
        patch: (p: string, body?: unknown) => request(t.app).patch(p).set(auth).send(body as object),
        del: (p: string) => request(t.app).delete(p).set(auth),
      };
    };
    const api = () => as(acct.secret);
    const createPublish = async (body: Record<string, unknown> = {}) => {
      const r = await api().post('/api/publish_token', { label: 'pub', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data;
    };
    const createSubscribe = async (body: Record<string, unknown> = {}) => {
      const r = await api().post('/api/subscribe_token', { label: 'sub', streams: [{ streamName: 'cam1' }], ...body });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data;
    };

    describe('publish tokens: create, read, list, update, disable, delete', () => {
      before(fresh);

      it('creates a publish token and answers 200 (as the hosted API) with the full hosted record', async () => {
        const before = Date.now();
        const r = await api().post('/api/publish_token', {
          label: 'studio',
          streams: [{ streamName: 'cam1' }, { streamName: 'cam[0-9]+', isRegex: true }],
          expires: 3600,
          allowedOrigins: ['Example.com', '*.example.org'],
          allowedCountries: ['us', 'CA'],
          record: true,
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers['x-streamgate-ignored-fields'], undefined);
        assert.equal(r.body.status, 'success');
        const d = r.body.data;
        assert.match(d.token, HEX64);
        assert.match(d.addedOn, ISO);
        assert.equal(Date.parse(d.expiresOn) - Date.parse(d.addedOn), 3600_000);
        assert.ok(Date.parse(d.addedOn) >= before - 1000);
        assert.deepEqual(d, {
          id: d.id,
          label: 'studio',
          name: 'studio',
          token: d.token,
          addedOn: d.addedOn,
          expiresOn: d.expiresOn,
          isActive: true,
          streams: [
            { streamName: 'cam1', isRegex: false },
            { streamName: 'cam[0-9]+', isRegex: true },
          ],
          allowedOrigins: ['example.com', '*.example.org'],
          allowedIpAddresses: [],
          allowedCountries: ['US', 'CA'],
          deniedCountries: [],
          originCluster: '',
          subscribeRequiresAuth: false,
          record: true,
          enableThumbnails: false,
          clip: false,
          multisource: true,
          lowLatencyRtmp: true,
          displaySrtPassphrase: false,
          drm: false,
          integrationId: 'None',
          effectiveSettings: {
            originCluster: 'auto',
            allowedCountries: ['US', 'CA'],
            deniedCountries: [],
            geoCascade: { isEnabled: false, clusters: [] },
          },
          updatedOn: d.addedOn,
        });
        const read = await api().get(`/api/publish_token/${d.id}`);
        assert.equal(read.status, 200);
        assert.deepEqual(read.body, { status: 'success', data: d });
      });

      it('accepts a trailing slash and answers 404 with the hosted message for an unknown id', async () => {
        const d = await createPublish();
        assert.equal((await api().get(`/api/publish_token/${d.id}/`)).status, 200);
        const r = await api().get('/api/publish_token/999999');
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, {
          status: 'fail',
          data: { message: 'No publish token with id: 999999', tokenId: 'No publish token with id: 999999' },
        });
        const bad = await api().get('/api/publish_token/abc');
        assert.equal(bad.status, 400);
        assert.deepEqual(bad.body.data.errors, { id: ['expected a positive integer id'] });
      });

      it('updates every field, with the update* names and their aliases', async () => {
        const d = await createPublish({ streams: [{ streamName: 'a' }, { streamName: 'b.*', isRegex: true }] });
        const r = await api().put(`/api/publish_token/${d.id}`, {
          label: 'renamed',
          addTokenStreams: [{ streamName: 'c' }],
          removeTokenStreams: ['a'],
          updateAllowedOrigins: ['*.x.com'],
          updateAllowedIpAddresses: ['10.0.0.0/8', '192.0.2.7'],
          updateDeniedCountries: ['fr'],
          subscribeRequiresAuth: true,
          record: true,
          enableThumbnails: true,
          expires: 60,
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        const u = r.body.data;
        assert.equal(u.label, 'renamed');
        assert.equal(u.token, d.token);
        assert.deepEqual(u.streams, [
          { streamName: 'b.*', isRegex: true },
          { streamName: 'c', isRegex: false },
        ]);
        assert.deepEqual(u.allowedOrigins, ['*.x.com']);
        assert.deepEqual(u.allowedIpAddresses, ['10.0.0.0/8', '192.0.2.7']);
        assert.deepEqual(u.deniedCountries, ['FR']);
        assert.deepEqual([u.subscribeRequiresAuth, u.record, u.enableThumbnails], [true, true, true]);
        assert.equal(Date.parse(u.expiresOn) - Date.parse(u.updatedOn), 60_000);

        const v2 = await api().put(`/api/v2/publish_token/${d.id}`, {
          allowedOrigins: [],
          allowedIpAddresses: [],
          bindIpsOnUsage: 2,
          deniedCountries: [],
          allowedCountries: ['DE'],
          isActive: false,
          expires: null,
        });
        assert.equal(v2.status, 200, JSON.stringify(v2.body));
        const w = v2.body.data;
        assert.deepEqual([w.allowedOrigins, w.allowedIpAddresses, w.deniedCountries, w.allowedCountries], [[], [], [], ['DE']]);
        assert.equal(w.bindIpsOnUsage, 2);
        assert.deepEqual(w.boundIpAddresses, []);
        assert.equal(w.isActive, false);
        assert.equal('expiresOn' in w, false, 'no expiry: left out');
        assert.equal('name' in w, false, 'the v2 record has no deprecated name');
        const read = await api().get(`/api/publish_token/${d.id}`);
        assert.deepEqual(read.body.data, { ...w, name: w.label });

        const reset = await api().put(`/api/publish_token/${d.id}`, { bindIpsOnUsage: 0, updateAllowedIpAddresses: [] });
        assert.equal(reset.status, 200);
        assert.equal('bindIpsOnUsage' in reset.body.data, false, 'binding off: left out');
        assert.equal(reset.body.data.boundIpAddresses, undefined);
      });

      it('refreshToken issues a new token value; the old value no longer resolves', async () => {
        const d = await createPublish();
        const r = await api().put(`/api/publish_token/${d.id}`, { refreshToken: true });
        assert.equal(r.status, 200);
        assert.match(r.body.data.token, HEX64);
        assert.notEqual(r.body.data.token, d.token);
        const { tokenHash } = await import('../../src/domain/tokens.js');
        assert.equal(await t.services.store.findTokenByHash(tokenHash(d.token)), null);
        assert.equal((await t.services.store.findTokenByHash(tokenHash(r.body.data.token)))?.id, d.id);
      });

      it('refuses an empty update, a token left without streams, and a field given under both names', async () => {
        const d = await createPublish();
        const empty = await api().put(`/api/publish_token/${d.id}`, {});
        assert.equal(empty.status, 400);
        assert.deepEqual(empty.body, {
          status: 'fail',
          data: { message: 'No properties specified to update.', token: 'No properties specified to update.' },
        });
        const none = await api().put(`/api/publish_token/${d.id}`, { removeTokenStreams: ['cam1'] });
        assert.equal(none.status, 400);
        assert.deepEqual(none.body.data.errors, { removeTokenStreams: ['a token must keep at least one stream'] });
        const both = await api().put(`/api/publish_token/${d.id}`, { allowedOrigins: ['a.com'], updateAllowedOrigins: ['b.com'] });
        assert.equal(both.status, 400);
        assert.deepEqual(both.body.data.errors, { allowedOrigins: ['give either allowedOrigins or updateAllowedOrigins, not both'] });
        assert.deepEqual((await api().get(`/api/publish_token/${d.id}`)).body.data, d);
      });

      it('lists with sortBy, page, itemsOnPage and isDescending; an empty page past the end', async () => {
        await fresh();
        const made = [];
        for (const label of ['delta', 'Alpha', 'charlie', 'bravo']) made.push(await createPublish({ label }));
        const labels = async (q: string) => {
          const r = await api().get(`/api/publish_token/list${q}`);
          assert.equal(r.status, 200, JSON.stringify(r.body));
          return r.body.data.map((x: { label: string }) => x.label);
        };
        assert.deepEqual(await labels(''), ['Alpha', 'bravo', 'charlie', 'delta']);
        assert.deepEqual(await labels('?sortBy=Name&isDescending=true'), ['delta', 'charlie', 'bravo', 'Alpha']);
        assert.deepEqual(await labels('?sortBy=AddedOn'), ['delta', 'Alpha', 'charlie', 'bravo']);
        assert.deepEqual(await labels('?sortBy=AddedOn&isDescending=true&page=1&itemsOnPage=2'), ['bravo', 'charlie']);
        assert.deepEqual(await labels('?sortBy=AddedOn&isDescending=true&page=2&itemsOnPage=2'), ['Alpha', 'delta']);
        assert.deepEqual(await labels('?page=3&itemsOnPage=2'), []);
        const full = await api().get('/api/publish_token/list?itemsOnPage=1');
        assert.deepEqual(full.body.data, [made[1]]);
        const bad = await api().get('/api/publish_token/list?sortBy=Size&page=0&itemsOnPage=101&isDescending=maybe');
        assert.equal(bad.status, 400);
        assert.deepEqual(Object.keys(bad.body.data.errors).sort(), ['isDescending', 'itemsOnPage', 'page', 'sortBy']);
      });

      it('disables several tokens at once and reports unknown ids as failed', async () => {
        const a = await createPublish();
        const b = await createPublish();
        const r = await api().patch('/api/publish_token/disable', { tokenIds: [a.id, b.id, 987654] });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body.data, {
          successfulTokens: [a.id, b.id],
          failedTokens: [{ tokenId: 987654, errorMessage: 'No publish token with id: 987654' }],
        });
        assert.equal((await api().get(`/api/publish_token/${a.id}`)).body.data.isActive, false);
        assert.equal((await api().get(`/api/publish_token/${b.id}`)).body.data.isActive, false);
        const bad = await api().patch('/api/publish_token/disable', { tokenIds: [] });
        assert.equal(bad.status, 400);
        assert.deepEqual(Object.keys(bad.body.data.errors), ['tokenIds']);
      });

      it('deletes a token: true, then 404', async () => {
        const d = await createPublish();
        const r = await api().del(`/api/publish_token/${d.id}`);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { status: 'success', data: true });
        assert.equal((await api().get(`/api/publish_token/${d.id}`)).status, 404);
        assert.equal((await api().del(`/api/publish_token/${d.id}`)).status, 404);
      });

      it('answers active and active/all from the live-stream registry', async () => {
        const d = await createPublish();
        const empty = await api().get('/api/publish_token/active/all');
        assert.deepEqual(empty.body, { status: 'success', data: { tokenIds: [] } });
        await t.services.store.startLiveStream(
          { accountId: acct.id, streamName: 'cam1', tokenId: d.id, feedId: 'f1', startedOn: new Date().toISOString(), caller: 'test' },
          60,
        );
        assert.deepEqual((await api().get('/api/publish_token/active/all')).body.data, { tokenIds: [d.id] });
        assert.deepEqual((await api().get(`/api/publish_token/active?streamId=${acct.id}/cam1`)).body.data, { tokenIds: [d.id] });
        assert.deepEqual((await api().get(`/api/publish_token/active?streamId=${acct.id}/cam2`)).body.data, { tokenIds: [] });
        assert.deepEqual((await api().get('/api/publish_token/active?streamId=OTHER/cam1')).body.data, { tokenIds: [] });
        const bad = await api().get('/api/publish_token/active');
        assert.equal(bad.status, 400);
        assert.deepEqual(Object.keys(bad.body.data.errors), ['streamId']);
      });
    });

    describe('subscribe tokens', () => {
      before(fresh);

      it('creates, reads, updates tracking, lists and deletes a subscribe token', async () => {
        const d = await createSubscribe({ tracking: { trackingId: 'viewer-group-1' }, bindIpsOnUsage: 2 });
        assert.deepEqual(d, {
          id: d.id,
          label: 'sub',
          name: 'sub',
          token: d.token,
          addedOn: d.addedOn,
          isActive: true,
          streams: [{ streamName: 'cam1', isRegex: false }],
          allowedOrigins: [],
          allowedIpAddresses: [],
          bindIpsOnUsage: 2,
          boundIpAddresses: [],
          allowedCountries: [],
          deniedCountries: [],
          originCluster: '',
          tracking: { trackingId: 'viewer-group-1' },
          effectiveSettings: { originCluster: 'auto', allowedCountries: [], deniedCountries: [] },
          updatedOn: d.addedOn,
        });
        const u = await api().put(`/api/subscribe_token/${d.id}`, { tracking: { trackingId: 'g2' }, updateBindIpsOnUsage: 5 });
        assert.equal(u.status, 200);
        assert.deepEqual([u.body.data.tracking, u.body.data.bindIpsOnUsage], [{ trackingId: 'g2' }, 5]);
        const cleared = await api().put(`/api/v2/subscribe_token/${d.id}`, { tracking: null });
        assert.equal('tracking' in cleared.body.data, false, 'no tracking: left out');
        const again = await api().put(`/api/subscribe_token/${d.id}`, { tracking: { trackingId: 'g3' } });
        assert.deepEqual(again.body.data.tracking, { trackingId: 'g3' });
        const nullId = await api().put(`/api/subscribe_token/${d.id}`, { tracking: { trackingId: null } });
        assert.equal(nullId.status, 200, JSON.stringify(nullId.body));
        assert.equal('tracking' in nullId.body.data, false);
        const list = await api().get('/api/subscribe_token/list');
        assert.deepEqual(list.body.data.map((x: { id: number }) => x.id), [d.id]);
        assert.equal((await api().get(`/api/publish_token/${d.id}`)).status, 404, 'a subscribe id is not a publish token');
        const del = await api().del(`/api/subscribe_token/${d.id}`);
        assert.deepEqual(del.body, { status: 'success', data: true });
        const gone = await api().get(`/api/subscribe_token/${d.id}`);
        assert.equal(gone.status, 404);
        assert.equal(gone.body.data.message, `No subscribe token with id: ${d.id}`);
      });

      it('has no publish-only fields or endpoints: they are ignored and named, as any unknown field', async () => {
        const r = await api().post('/api/subscribe_token', { label: 's', streams: [{ streamName: 'x' }], record: true });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers['x-streamgate-ignored-fields'], 'record');
        assert.equal(r.body.data.record, undefined);
        const pub = await api().post('/api/publish_token', { label: 'p', streams: [{ streamName: 'x' }], tracking: { trackingId: 'a' } });
        assert.equal(pub.status, 200);
        assert.equal(pub.headers['x-streamgate-ignored-fields'], 'tracking');
        assert.equal(pub.body.data.tracking, undefined);
        assert.equal((await api().patch('/api/subscribe_token/disable', { tokenIds: [1] })).status, 404);
      });
    });

    describe('validation: every bad field named, nothing stored', () => {
      before(fresh);
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['look-behind', { streams: [{ streamName: '(?<=a)b', isRegex: true }] }, 'streams[0].streamName'],
        ['backreference', { streams: [{ streamName: '(a)\\1', isRegex: true }] }, 'streams[0].streamName'],
        ['unbalanced paren', { streams: [{ streamName: 'cam(', isRegex: true }] }, 'streams[0].streamName'],
        ['IP range', { allowedIpAddresses: ['1.2.3.4-1.2.3.9'] }, 'allowedIpAddresses[0]'],
        ['IP wildcard', { allowedIpAddresses: ['1.2.*.*'] }, 'allowedIpAddresses[0]'],
        ['prefix over 32', { allowedIpAddresses: ['10.0.0.1/33'] }, 'allowedIpAddresses[0]'],
        ['host bits set', { allowedIpAddresses: ['10.0.0.1/8'] }, 'allowedIpAddresses[0]'],
        ['IPv6', { allowedIpAddresses: ['2001:db8::1'] }, 'allowedIpAddresses[0]'],
        ['origin with scheme', { allowedOrigins: ['https://x.com'] }, 'allowedOrigins[0]'],
        ['bad wildcard', { allowedOrigins: ['*x.com'] }, 'allowedOrigins[0]'],
        ['origin with port', { allowedOrigins: ['x.com:8080'] }, 'allowedOrigins[0]'],
        ['three-letter country', { allowedCountries: ['USA'] }, 'allowedCountries[0]'],
        ['unknown country', { deniedCountries: ['XX'] }, 'deniedCountries[0]'],
        ['bind with allowed IPs', { bindIpsOnUsage: 2, allowedIpAddresses: ['10.0.0.1'] }, 'bindIpsOnUsage'],
        ['allowed and denied countries', { allowedCountries: ['US'], deniedCountries: ['FR'] }, 'deniedCountries'],
        ['negative count', { bindIpsOnUsage: -1 }, 'bindIpsOnUsage'],
        ['fractional count', { bindIpsOnUsage: 1.5 }, 'bindIpsOnUsage'],
        ['zero expires', { expires: 0 }, 'expires'],
        ['129-char label', { label: 'x'.repeat(129) }, 'label'],
        ['129-char stream name', { streams: [{ streamName: 'x'.repeat(129) }] }, 'streams[0].streamName'],
        ['101 streams', { streams: Array.from({ length: 101 }, (_, i) => ({ streamName: `s${i}` })) }, 'streams'],
        ['no streams', { streams: [] }, 'streams'],
        ['101 origins', { allowedOrigins: Array.from({ length: 101 }, (_, i) => `h${i}.com`) }, 'allowedOrigins'],
        ['wrong type', { label: 42 }, 'label'],
        ['wrong type of a hosted setting', { multisource: 'yes' }, 'multisource'],
        ['restream key under 5 characters', { restream: [{ url: 'rtmp://x/app', key: 'abc' }] }, 'restream[0].key'],
        ['11 restream targets', { restream: Array.from({ length: 11 }, () => ({ url: 'rtmp://x/app', key: 'abcdef' })) }, 'restream'],
        ['priority beyond int32', { priority: 2 ** 31 }, 'priority'],
        ['expiresOn not a date', { expiresOn: 'tomorrow' }, 'expiresOn'],
        ['expiresOn in the past', { expiresOn: '2001-01-01T00:00:00Z' }, 'expiresOn'],
        ['expires and expiresOn', { expires: 60, expiresOn: '2999-01-01T00:00:00Z' }, 'expiresOn'],
        ['null label (required)', { label: null }, 'label'],
      ];
      for (const [name, body, field] of cases) {
        it(`rejects ${name} with 400 naming ${field}`, async () => {
          const before = await api().get('/api/publish_token/list?itemsOnPage=100');
          const r = await api().post('/api/publish_token', { label: 'x', streams: [{ streamName: 'cam1' }], ...body });
          assert.equal(r.status, 400, JSON.stringify(r.body));
          assert.equal(r.body.status, 'fail');
          assert.equal(r.body.data.message, 'Validation errors');
          assert.deepEqual(Object.keys(r.body.data.errors), [field]);
          assert.ok(r.body.data.errors[field][0].length > 5);
          const after = await api().get('/api/publish_token/list?itemsOnPage=100');
          assert.deepEqual(after.body, before.body);
        });
      }

      it('lists every offending field in one answer', async () => {
        const r = await api().post('/api/subscribe_token', {
          label: '',
          streams: [{ streamName: '(a)\\1', isRegex: true }],
          allowedIpAddresses: ['2001:db8::1'],
          allowedOrigins: ['https://x.com'],
          allowedCountries: ['USA'],
          tracking: { trackingId: '' },
          extra: true,
        });
        assert.equal(r.status, 400);
        assert.deepEqual(Object.keys(r.body.data.errors).sort(), [
          'allowedCountries[0]',
          'allowedIpAddresses[0]',
          'allowedOrigins[0]',
          'label',
          'streams[0].streamName',
          'tracking.trackingId',
        ]);
      });

      it('rejects bad update fields and leaves the token unchanged', async () => {
        const d = await createSubscribe({ allowedIpAddresses: ['10.0.0.1'] });
        for (const [body, field] of [
          [{ updateBindIpsOnUsage: 3 }, 'updateBindIpsOnUsage'],
          [{ addTokenStreams: [{ streamName: '(?=x)', isRegex: true }] }, 'addTokenStreams[0].streamName'],
          [{ updateAllowedIpAddresses: ['10.0.0.0/33'] }, 'updateAllowedIpAddresses[0]'],
          [{ isActive: 'no' }, 'isActive'],
          [{ tracking: { trackingId: 'x'.repeat(129) } }, 'tracking.trackingId'],
          [{ refreshToken: 'yes', bogus: 1 }, 'refreshToken'],
        ] as const) {
          const r = await api().put(`/api/subscribe_token/${d.id}`, body);
          assert.equal(r.status, 400, JSON.stringify(body));
          assert.deepEqual(Object.keys(r.body.data.errors), [field]);
        }
        assert.deepEqual((await api().get(`/api/subscribe_token/${d.id}`)).body.data, d);
      });

      it('accepts patterns that are catastrophic for backtracking engines (RE2 runs them in linear time)', async () => {
        const d = await createSubscribe({
          streams: [
            { streamName: '(a+)+$', isRegex: true },
            { streamName: '(x+x+)+y', isRegex: true },
          ],
        });
        assert.deepEqual(d.streams.map((s: { streamName: string }) => s.streamName), ['(a+)+$', '(x+x+)+y']);
      });

      it('answers 400 for malformed JSON, 415 for another content type, 413 over 64 KiB', async () => {
        const auth = { authorization: `Bearer ${acct.secret}` };
        const malformed = await request(t.app).post('/api/publish_token').set(auth).set('content-type', 'application/json').send('{"label": ');
        assert.equal(malformed.status, 400);
        assert.deepEqual(malformed.body, { status: 'fail', data: { message: 'Malformed JSON in request body' } });
        const form = await request(t.app).post('/api/publish_token').set(auth).type('form').send('label=x');
        assert.equal(form.status, 415);
        assert.deepEqual(form.body, { status: 'fail', data: { message: 'Unsupported Media Type' } });
        const big = await request(t.app)
          .post('/api/publish_token')
          .set(auth)
          .send({ label: 'x', streams: [{ streamName: 'a' }], pad: 'x'.repeat(70 * 1024) });
        assert.equal(big.status, 413);
        assert.deepEqual(big.body, { status: 'fail', data: { message: 'Request body larger than 65536 bytes' } });
        const notObject = await api().post('/api/publish_token', ['label']);
        assert.equal(notObject.status, 400);
        assert.deepEqual(Object.keys(notObject.body.data.errors), ['body']);
        assert.deepEqual((await api().get('/api/publish_token/list')).body.data, []);
      });
    });

    describe('hosted API bodies, records and listings', () => {
      before(fresh);

      it('stores and returns every hosted publish-token setting; null means not given; [] clears', async () => {
        // The shape the hosted platform's clients send: every field, unset ones as null.
        const r = await api().post('/api/publish_token', {
          label: 'hosted',
          streams: [{ streamName: 'cam1', isRegex: false }],
          expires: null,
          expiresOn: '2999-12-31T23:59:59Z',
          allowedOrigins: null,
          allowedIpAddresses: null,
          bindIpsOnUsage: null,
          allowedCountries: null,
          deniedCountries: null,
          originCluster: 'fra-1',
          subscribeRequiresAuth: null,
          record: false,
          clip: true,
          multisource: false,
          enableThumbnails: null,
          displaySrtPassphrase: true,
          lowLatencyRtmp: false,
          drm: true,
          priority: 7,
          geoCascade: { isEnabled: true, clusters: ['fra-1', 'iad-1'] },
          restream: [{ url: 'rtmp://a.example/live', key: 'key-12345', label: null }],
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers['x-streamgate-ignored-fields'], undefined);
        const d = r.body.data;
        assert.equal(d.expiresOn, '2999-12-31T23:59:59.000Z');
        assert.deepEqual(
          [d.originCluster, d.subscribeRequiresAuth, d.record, d.clip, d.multisource, d.enableThumbnails, d.displaySrtPassphrase, d.lowLatencyRtmp, d.drm, d.priority],
          ['fra-1', false, false, true, false, false, true, false, true, 7],
        );
        assert.deepEqual(d.geoCascade, { isEnabled: true, clusters: ['fra-1', 'iad-1'] });
        assert.deepEqual(d.restream, [{ url: 'rtmp://a.example/live', key: 'key-12345' }]);
        assert.deepEqual(d.effectiveSettings, {
          originCluster: 'fra-1',
          allowedCountries: [],
          deniedCountries: [],
          geoCascade: { isEnabled: true, clusters: ['fra-1', 'iad-1'] },
        });
        assert.deepEqual((await api().get(`/api/publish_token/${d.id}`)).body.data, d);

        // v1 names, nulls as "not given"
        const v1 = await api().put(`/api/publish_token/${d.id}`, {
          label: null,
          isActive: null,
          refreshToken: null,
          updateOriginCluster: 'iad-1',
          updateGeoCascade: { isEnabled: false, clusters: null },
          updateRestream: [{ url: 'rtmp://b.example/live', key: 'other-key', label: 'b' }],
          updateAllowedCountries: ['de'],
          multisource: null,
          priority: null,
          expiresOn: '2998-01-01T00:00:00+01:00',
        });
        assert.equal(v1.status, 200, JSON.stringify(v1.body));
        const u = v1.body.data;
        assert.deepEqual([u.label, u.isActive, u.token, u.multisource, u.priority], ['hosted', true, d.token, false, 7]);
        assert.equal(u.originCluster, 'iad-1');
        assert.deepEqual(u.geoCascade, { isEnabled: false, clusters: [] });
        assert.deepEqual(u.restream, [{ url: 'rtmp://b.example/live', key: 'other-key', label: 'b' }]);
        assert.deepEqual(u.allowedCountries, ['DE']);
        assert.equal(u.expiresOn, '2997-12-31T23:00:00.000Z');

        // v2 names; [] clears a list
        const v2 = await api().put(`/api/v2/publish_token/${d.id}`, { originCluster: '', restream: [], allowedCountries: [] });
        assert.equal(v2.status, 200, JSON.stringify(v2.body));
        assert.deepEqual([v2.body.data.originCluster, 'restream' in v2.body.data, v2.body.data.allowedCountries], ['', false, []]);
        assert.equal(v2.body.data.effectiveSettings.originCluster, 'auto');
        const twice = await api().put(`/api/publish_token/${d.id}`, { restream: [], updateRestream: [] });
        assert.equal(twice.status, 400);
        assert.deepEqual(twice.body.data.errors, { restream: ['give either restream or updateRestream, not both'] });
      });

      it('an update target without url keeps the url of the target with its key; a new key without url is a 400, nothing stored', async () => {
        const d = await createPublish({ restream: [{ url: 'rtmp://a.example/live', key: 'key-12345', label: 'a' }] });
        const kept = await api().put(`/api/v2/publish_token/${d.id}`, { restream: [{ key: 'key-12345', label: 'renamed' }] });
        assert.equal(kept.status, 200, JSON.stringify(kept.body));
        assert.deepEqual(kept.body.data.restream, [{ url: 'rtmp://a.example/live', key: 'key-12345', label: 'renamed' }]);
        for (const body of [{ restream: [{ key: 'other-key' }] }, { updateRestream: [{ key: 'key-12345' }, { key: 'other-key', url: null }] }]) {
          const r = await api().put(`/api/publish_token/${d.id}`, body);
          const at = `updateRestream.${body.restream ? 0 : 1}.url`;
          assert.deepEqual([r.status, r.body.data.errors], [400, { [at]: ['required for a target the token does not have (no target with this key)'] }], JSON.stringify(body));
        }
        assert.deepEqual((await api().get(`/api/publish_token/${d.id}`)).body.data, { ...kept.body.data, name: d.label });
      });

      it('ignores a field neither the hosted API nor Streamgate knows, names it in x-streamgate-ignored-fields, and stores nothing of it', async () => {
        const r = await api().post('/api/subscribe_token', {
          label: 'x',
          streams: [{ streamName: 'cam1', color: 'red' }],
          futureSetting: { a: 1 },
          'naïve,field': 1,
          tracking: { trackingId: 't1', extra: true },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers['x-streamgate-ignored-fields'], 'streams[0].color, futureSetting, na%C3%AFve%2Cfield, tracking.extra');
        const stored = await t.services.store.getToken(acct.id, 'subscribe', r.body.data.id);
        assert.deepEqual(stored?.streams, [{ streamName: 'cam1', isRegex: false }]);
        assert.deepEqual(stored?.tracking, { trackingId: 't1' });
        assert.equal(JSON.stringify(stored).includes('futureSetting'), false);
        const u = await api().put(`/api/subscribe_token/${r.body.data.id}`, { label: 'y', updateSomethingNew: [] });
        assert.equal(u.status, 200);
        assert.equal(u.headers['x-streamgate-ignored-fields'], 'updateSomethingNew');
        assert.equal(u.body.data.label, 'y');
        // only unknown fields: nothing to update
        const none = await api().put(`/api/subscribe_token/${r.body.data.id}`, { somethingElse: 1 });
        assert.equal(none.status, 400);
        assert.equal(none.body.data.message, 'No properties specified to update.');
      });

      it('with api.unknownFields: reject, an unknown field is a 400 naming it and nothing is stored', async () => {
        const strict = await testApp(await factory.make(), { api: { unknownFields: 'reject' } });
        const { secret } = await strict.account('strict');
        const auth = { authorization: `Bearer ${secret}` };
        const r = await request(strict.app)
          .post('/api/publish_token')
          .set(auth)
          .send({ label: 'x', streams: [{ streamName: 'a', color: 'red' }], labell: 'typo', multisource: false });
        assert.equal(r.status, 400);
        assert.deepEqual(r.body.data.errors, { labell: ['unknown field'], 'streams[0].color': ['unknown field'] });
        const proto = await request(strict.app)
          .post('/api/publish_token')
          .set(auth)
          .set('content-type', 'application/json')
          .send('{"label":"x","streams":[{"streamName":"a"}],"__proto__":{"isActive":false}}');
        assert.equal(proto.status, 400);
        assert.deepEqual(proto.body.data.errors, JSON.parse('{"__proto__": ["unknown field"]}'));
        const list = await request(strict.app).get('/api/publish_token/list').set(auth);
        assert.deepEqual(list.body.data, []);
      });

      it('a __proto__ key is ignored like any unknown field and sets nothing', async () => {
        const r = await request(t.app)
          .post('/api/publish_token')
          .set({ authorization: `Bearer ${acct.secret}` })
          .set('content-type', 'application/json')
          .send('{"label":"p","streams":[{"streamName":"a"}],"__proto__":{"isActive":false}}');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.headers['x-streamgate-ignored-fields'], '__proto__');
        assert.equal(r.body.data.isActive, true);
      });

      it('list_by_name finds labels and exact stream names; list_by_cluster by origin cluster; query booleans as the clients spell them', async () => {
        await fresh();
        const a = await createPublish({ label: 'Lobby camera', streams: [{ streamName: 'lobby' }] });
        const b = await createPublish({ label: 'stage', streams: [{ streamName: 'Main-Stage' }, { streamName: 'lobby.*', isRegex: true }], originCluster: 'fra-1' });
        const c = await createPublish({ label: 'backstage', streams: [{ streamName: 'cam9' }], originCluster: 'FRA-1' });
        const ids = async (q: string, kind = 'publish') => {
          const r = await api().get(`/api/${kind}_token/${q}`);
          assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body)}`);
          return r.body.data.map((x: { id: number }) => x.id);
        };
        assert.deepEqual(await ids('list_by_name?name=lobby&page=1&itemsOnPage=10'), [a.id]);
        assert.deepEqual(await ids('list_by_name?name=STAGE&filterBy=TokenName&page=1&itemsOnPage=10'), [c.id, b.id]);
        assert.deepEqual(await ids('list_by_name?name=stage&filterBy=StreamName&page=1&itemsOnPage=10'), [b.id]);
        assert.deepEqual(await ids('list_by_name?name=stage&filterBy=Token&page=1&itemsOnPage=10'), [c.id, b.id]);
        assert.deepEqual(await ids('list_by_name?name=stage&page=2&itemsOnPage=1&isDescending=True'), [c.id]);
        assert.deepEqual(await ids('list_by_name?name=stage&page=3&itemsOnPage=1'), []);
        assert.deepEqual(await ids('list_by_name?name=x&filterBy=None&page=1&itemsOnPage=10&sortBy=AddedOn&isDescending=1'), [c.id, b.id, a.id]);
        assert.deepEqual(await ids('list_by_name?name=lobby&page=1&itemsOnPage=10', 'subscribe'), []);
        assert.deepEqual(await ids('list_by_cluster?cluster=fra-1&page=1&itemsOnPage=10'), [c.id, b.id]);
        assert.deepEqual(await ids('list_by_cluster?cluster=auto&page=1&itemsOnPage=10'), [a.id]);
        assert.deepEqual(await ids('list?isDescending=False'), [c.id, a.id, b.id]);
        assert.deepEqual(await ids('list?isDescending=0&sortBy=AddedOn'), [a.id, b.id, c.id]);
        const bad = await api().get('/api/publish_token/list_by_name?filterBy=Label&isDescending=yes');
        assert.equal(bad.status, 400);
        assert.deepEqual(Object.keys(bad.body.data.errors).sort(), ['filterBy', 'isDescending', 'name']);
        assert.equal((await api().get('/api/subscribe_token/list_by_cluster?cluster=x')).status, 400, 'subscribe tokens have no list_by_cluster');
      });
    });

    describe('account isolation', () => {
      before(fresh);

      it("shows account B nothing of account A's tokens on any endpoint, and changes nothing", async () => {
        const pub = await createPublish();
        const sub = await createSubscribe();
        const b = as((await t.account('other')).secret);
        for (const [kind, tok] of [
          ['publish', pub],
          ['subscribe', sub],
        ] as const) {
          const msg = `No ${kind} token with id: ${tok.id}`;
          const expect404 = (r: request.Response) => {
            assert.equal(r.status, 404);
            assert.deepEqual(r.body, { status: 'fail', data: { message: msg, tokenId: msg } });
          };
          expect404(await b.get(`/api/${kind}_token/${tok.id}`));
          expect404(await b.put(`/api/${kind}_token/${tok.id}`, { label: 'stolen', isActive: false }));
          expect404(await b.put(`/api/v2/${kind}_token/${tok.id}`, { refreshToken: true }));
          expect404(await b.del(`/api/${kind}_token/${tok.id}`));
          assert.deepEqual((await b.get(`/api/${kind}_token/list`)).body, { status: 'success', data: [] });
        }
        const dis = await b.patch('/api/publish_token/disable', { tokenIds: [pub.id] });
        assert.deepEqual(dis.body.data, {
          successfulTokens: [],
          failedTokens: [{ tokenId: pub.id, errorMessage: `No publish token with id: ${pub.id}` }],
        });
        await t.services.store.startLiveStream(
          { accountId: acct.id, streamName: 'cam1', tokenId: pub.id, feedId: 'f', startedOn: new Date().toISOString(), caller: 'test' },
          60,
        );
        assert.deepEqual((await b.get('/api/publish_token/active/all')).body.data, { tokenIds: [] });
        assert.deepEqual((await b.get(`/api/publish_token/active?streamId=${acct.id}/cam1`)).body.data, { tokenIds: [] });
        assert.deepEqual((await api().get(`/api/publish_token/${pub.id}`)).body.data, pub);
        assert.deepEqual((await api().get(`/api/subscribe_token/${sub.id}`)).body.data, sub);
      });
    });

    describe('API secrets', () => {
      before(fresh);
      const admin = () => as('test-admin-key-0123456789abcdefghij');

      it('answers 401 without a secret, with a malformed one and with an unknown one', async () => {
        const expected = { status: 'fail', data: { message: 'Unauthorized' } };
        const none = await request(t.app).get('/api/publish_token/list');
        assert.equal(none.status, 401);
        assert.deepEqual(none.body, expected);
        for (const s of ['short', 'f'.repeat(64), `${acct.secret} extra`]) {
          const r = await as(s).get('/api/publish_token/list');
          assert.equal(r.status, 401);
          assert.deepEqual(r.body, expected);
        }
      });

      it('after an admin refresh the old secret gets 401 and the new one works; after delete, 401', async () => {
        const old = acct.secret;
        const r = await admin().post(`/admin/accounts/${acct.id}/secret`);
        assert.equal(r.status, 200);
        const fresh = r.body.data.apiSecret;
        assert.match(fresh, HEX64);
        assert.equal((await as(old).get('/api/publish_token/list')).status, 401);
        assert.equal((await as(fresh).get('/api/publish_token/list')).status, 200);
        const del = await admin().del(`/admin/accounts/${acct.id}/secret`);
        assert.deepEqual(del.body, { status: 'success', data: true });
        assert.equal((await as(fresh).get('/api/publish_token/list')).status, 401);
        const again = await admin().post(`/admin/accounts/${acct.id}/secret`);
        acct.secret = again.body.data.apiSecret;
        assert.equal((await api().get('/api/publish_token/list')).status, 200);
      });

      it('lets the account holder rotate its own secret', async () => {
        const old = acct.secret;
        const r = await api().post('/api/account/secret');
        assert.equal(r.status, 200);
        acct.secret = r.body.data.apiSecret;
        assert.equal((await as(old).get('/api/publish_token/list')).status, 401);
        assert.equal((await api().get('/api/publish_token/list')).status, 200);
      });

      it('lists accounts without secrets, sets secureViewer, and refuses a wrong admin key', async () => {
        const list = await admin().get('/admin/accounts');
        assert.equal(list.status, 200);
        const mine = list.body.data.find((a: { id: string }) => a.id === acct.id);
        assert.deepEqual(Object.keys(mine).sort(), ['createdOn', 'hasApiSecret', 'id', 'ipRulesOnRtmp', 'name', 'secureViewer']);
        assert.equal(mine.ipRulesOnRtmp, true, 'address rules apply on RTMP unless the operator turns them off');
        assert.ok(!JSON.stringify(list.body).includes(acct.secret));
        const put = await admin().put(`/admin/accounts/${acct.id}`, { secureViewer: true });
        assert.equal(put.body.data.secureViewer, true);
        assert.equal((await t.services.store.getAccount(acct.id))?.secureViewer, true);
        assert.equal((await admin().put('/admin/accounts/NOPE99', { secureViewer: true })).status, 404);
        // ipRulesOnRtmp: set, shown, stored; a wrong type is a 400 naming it, nothing stored
        const off = await admin().put(`/admin/accounts/${acct.id}`, { ipRulesOnRtmp: false });
        assert.deepEqual([off.status, off.body.data.ipRulesOnRtmp, off.body.data.secureViewer], [200, false, true]);
        assert.equal((await t.services.store.getAccount(acct.id))?.ipRulesOnRtmp, false);
        assert.equal((await admin().get('/admin/accounts')).body.data.find((a: { id: string }) => a.id === acct.id).ipRulesOnRtmp, false);
        const bad = await admin().put(`/admin/accounts/${acct.id}`, { ipRulesOnRtmp: 'no' });
        assert.deepEqual([bad.status, Object.keys(bad.body.data.errors)], [400, ['ipRulesOnRtmp']]);
        const on = await admin().put(`/admin/accounts/${acct.id}`, { ipRulesOnRtmp: true });
        assert.deepEqual([on.status, on.body.data.ipRulesOnRtmp], [200, true]);
        assert.equal((await t.services.store.getAccount(acct.id))?.ipRulesOnRtmp, undefined, 'on is the default: stored as absent');
        assert.equal((await as('wrong').get('/admin/accounts')).status, 401);
        assert.equal((await as(acct.secret).get('/admin/accounts')).status, 401);
      });
    });

    describe('account names', () => {
      before(fresh);
      const admin = () => as('test-admin-key-0123456789abcdefghij');
      const taken = (name: string, by: string) => ({ status: 'fail', data: { message: `Account name ${JSON.stringify(name)} is taken by account ${by}`, name, takenBy: by } });
      const create = async (name: string) => {
        const r = await admin().post('/admin/accounts', { name });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        return r.body.data as { id: string; name: string };
      };

      it('stores a name without the white space around it, and refuses a name another account has, whatever its case, with a 409 naming both; nothing is stored', async () => {
        const globex = await create('  Globex\t');
        assert.equal(globex.name, 'Globex');
        const listed = (await admin().get('/admin/accounts')).body.data;
        for (const name of ['Globex', 'globex', ' GLOBEX\n']) {
          const r = await admin().post('/admin/accounts', { name });
          assert.deepEqual([r.status, r.body], [409, taken(name.trim(), globex.id)], JSON.stringify(name));
        }
        assert.deepEqual((await admin().get('/admin/accounts')).body.data, listed);
      });

      it('refuses a rename to a name another account has with a 409 and changes nothing; its own name in another case and a free name are accepted', async () => {
        const initech = await create('Initech');
        const hooli = await create('Hooli');
        const r = await admin().put(`/admin/accounts/${hooli.id}`, { name: 'initech ', secureViewer: true });
        assert.deepEqual([r.status, r.body], [409, taken('initech', initech.id)]);
        const stored = await t.services.store.getAccount(hooli.id);
        assert.deepEqual([stored?.name, stored?.secureViewer], ['Hooli', false]);
        const upper = await admin().put(`/admin/accounts/${hooli.id}`, { name: 'HOOLI' });
        assert.deepEqual([upper.status, upper.body.data.name], [200, 'HOOLI']);
        const moved = await admin().put(`/admin/accounts/${initech.id}`, { name: ' Initrode ' });
        assert.deepEqual([moved.status, moved.body.data.name], [200, 'Initrode']);
        const freed = await admin().put(`/admin/accounts/${hooli.id}`, { name: 'initech' });
        assert.deepEqual([freed.status, freed.body.data.name], [200, 'initech']);
        const back = await admin().put(`/admin/accounts/${initech.id}`, { name: 'Initech' });
        assert.deepEqual([back.status, back.body], [409, taken('Initech', hooli.id)]);
      });

      it('refuses a blank name with a 400 naming the field', async () => {
        const blank = { status: 'fail', data: { message: 'Validation errors', errors: { name: ['must not be blank'] } } };
        const before = (await admin().get('/admin/accounts')).body.data;
        const made = await admin().post('/admin/accounts', { name: ' \t ' });
        assert.deepEqual([made.status, made.body], [400, blank]);
        const renamed = await admin().put(`/admin/accounts/${acct.id}`, { name: '  ' });
        assert.deepEqual([renamed.status, renamed.body], [400, blank]);
        assert.deepEqual((await admin().get('/admin/accounts')).body.data, before);
      });

      it('of two creates of one name at once, one is 201 and the other 409', async () => {
        const [a, b] = await Promise.all([admin().post('/admin/accounts', { name: 'Umbrella' }), admin().post('/admin/accounts', { name: 'umbrella' })]);
        assert.deepEqual([a.status, b.status].sort(), [201, 409]);
        const won = a.status === 201 ? a : b;
        const lost = a.status === 201 ? b : a;
        assert.deepEqual(lost.body, taken(lost === a ? 'Umbrella' : 'umbrella', won.body.data.id));
        const named = (await admin().get('/admin/accounts')).body.data.filter((x: { name: string }) => x.name.toLowerCase() === 'umbrella');
        assert.deepEqual(named.map((x: { id: string }) => x.id), [won.body.data.id]);
      });
    });

    describe('conventions', () => {
      before(fresh);

      it('echoes a valid x-request-id and generates one otherwise', async () => {
        const r = await request(t.app).get('/healthz').set('x-request-id', 'abc-123');
        assert.equal(r.headers['x-request-id'], 'abc-123');
        const g = await request(t.app).get('/healthz').set('x-request-id', 'bad id with spaces');
        assert.match(g.headers['x-request-id'], /^[0-9a-f-]{36}$/);
      });

      it('serves health, readiness and an OpenAPI 3.1 document of the endpoints', async () => {
        assert.equal((await request(t.app).get('/healthz')).status, 200);
        const ready = await request(t.app).get('/readyz');
        assert.deepEqual(ready.body, { status: 'success', data: { ready: true, store: factory.name } });
        const doc = (await request(t.app).get('/api/openapi.json')).body;
        assert.equal(doc.openapi, '3.1.0');
        for (const p of [
          '/api/publish_token',
          '/api/publish_token/{id}',
          '/api/publish_token/list',
          '/api/publish_token/disable',
          '/api/publish_token/active',
          '/api/publish_token/active/all',
          '/api/v2/publish_token/{id}',
          '/api/subscribe_token',
          '/api/subscribe_token/{id}',
          '/admin/accounts',
          '/api/account/secret',
          '/api/publish_token/{id}/check',
          '/api/director/publish',
          '/api/director/subscribe',
          '/.well-known/jwks.json',
          '/hooks/authorize',
          '/hooks/auth-request',
          '/hooks/nginx-rtmp',
          '/hooks/mediamtx/auth',
          '/hooks/srs',
          '/hooks/ome/admission',
        ]) {
          assert.ok(doc.paths[p], `missing ${p}`);
        }
        const create = doc.paths['/api/publish_token'].post.requestBody.content['application/json'].schema;
        assert.deepEqual(create.required, ['label', 'streams']);
        assert.equal(create.additionalProperties, false);
        assert.equal(create.properties.label.maxLength, 128);
      });

      it('answers unknown routes with a 404 envelope', async () => {
        const r = await api().get('/api/nothing-here');
        assert.equal(r.status, 404);
        assert.deepEqual(r.body, { status: 'fail', data: { message: 'Not found: GET /api/nothing-here' } });
      });
    });
  });
}
