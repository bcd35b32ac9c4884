// /metrics: the documented series exist, and no label value is a token, account id or stream name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { testApp } from '../helpers/app.js';

describe('metrics', () => {
  it('exposes the documented series with bounded labels only', async () => {
    const t = await testApp(new SqliteStore({ file: path.join(mkdtempSync(path.join(tmpdir(), 'sg-m-')), 'db') }));
    const acct = await t.account();
    const auth = { authorization: `Bearer ${acct.secret}` };
    const streams = ['secret-stream-name-1', 'other-stream-xyz'];
    const tok = (await request(t.app).post('/api/publish_token').set(auth).send({ label: 'l', streams: [{ streamName: streams[0] }] })).body.data;
    await request(t.app).post('/hooks/authorize').send({ action: 'publish', token: tok.token, streamName: streams[0] });
    await request(t.app).post('/hooks/authorize').send({ action: 'publish', token: tok.token, streamName: streams[1] });
    await request(t.app).post('/hooks/nginx-rtmp').type('form').send(`call=publish&name=${streams[0]}&token=${tok.token}&addr=1.2.3.4&clientid=1`);
    await request(t.app).get(`/api/publish_token/${tok.id}`).set(auth);
    await request(t.app).get('/nowhere/at/all');
    const text = (await request(t.app).get('/metrics')).text;
    for (const series of [
      'streamgate_decisions_total',
      'streamgate_decision_duration_seconds_bucket',
      'streamgate_store_errors_total',
      'streamgate_token_cache_total',
      'streamgate_webhook_deliveries_total',
      'streamgate_webhook_queue_depth',
      'streamgate_lifecycle_dropped_total',
      'streamgate_http_requests_total',
      'streamgate_http_request_duration_seconds_bucket',
      'process_cpu_user_seconds_total',
    ]) {
      assert.ok(text.includes(series), `missing ${series}`);
    }
    const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1]);
    assert.ok(labelValues.length > 10);
    for (const forbidden of [tok.token, acct.id, acct.secret, ...streams]) {
      assert.ok(!labelValues.some((v) => v.includes(forbidden)), `a label carries ${forbidden}`);
    }
    assert.match(text, /streamgate_http_requests_total\{route="\/api\/publish_token\/:id",method="GET",status="200"\} 1/);
    assert.match(text, /streamgate_http_requests_total\{route="unmatched",method="GET",status="404"\} 1/);
    assert.match(text, /streamgate_http_request_duration_seconds_count\{route="\/hooks\/authorize"\} 2/);
  });
});
