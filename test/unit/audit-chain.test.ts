// The audit chain without a store (docs/api.md#audit-log): the canonical form, the MAC chain, the
// diff with secret values masked, and the walk that names a chain's first broken link.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { auditDiff, canonicalJson, ChainWalk, CHANGED, MASK, sealEntry, type AuditAnchor, type AuditEntry, type AuditHead } from '../../src/domain/audit.js';
import { ISSUER, TOKEN, WEBHOOK } from '../../src/audit/log.js';
import { newTokenRecord } from '../../src/domain/tokens.js';

const KEY = 'unit-test-audit-key-0123456789abcdef';
const T = '2026-11-28T20:00:00.000Z';

/** A chain of n entries of account A. */
function chain(n: number, from: AuditHead | null = null, key = KEY): AuditEntry[] {
  const out: AuditEntry[] = [];
  let head = from;
  for (let i = 0; i < n; i++) {
    const e = sealEntry(key, head, { accountId: 'A', at: T, actor: 'admin', address: '203.0.113.7', requestId: `r${i}`, action: 'update', resource: 'account', resourceId: 'A', changes: { n: { from: i, to: i + 1 } } });
    out.push(e);
    head = { seq: e.seq, mac: e.mac };
  }
  return out;
}

/** Retention's bound an hour after the entries were made: each of them may have been removed. */
const AFTER = Date.parse(T) + 3_600_000;

function verdict(texts: string[], opts: { anchor?: AuditAnchor | null; removableBefore?: number | null; head?: AuditHead | null; logged?: AuditHead; key?: string } = {}) {
  const w = new ChainWalk(opts.key ?? KEY, 'A', opts.anchor ?? null, opts.removableBefore === undefined ? AFTER : opts.removableBefore, opts.logged);
  for (const t of texts) w.push(t);
  return w.finish(opts.head === undefined ? null : opts.head);
}
const texts = (es: AuditEntry[]) => es.map((e) => JSON.stringify(e));
const headOf = (e: AuditEntry): AuditHead => ({ seq: e.seq, mac: e.mac });
/** The anchor retention leaves when it removes es[0..i]. */
const anchorOf = (es: AuditEntry[], i: number): AuditAnchor => ({ seq: es[i].seq, mac: es[i].mac, text: JSON.stringify(es[i]), previousMac: i === 0 ? '' : es[i - 1].mac });

describe('audit chain', () => {
  it('canonical JSON sorts keys at every depth and leaves undefined members out', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined }], c: null } }), '{"a":{"c":null,"d":[2,{"z":1}]},"b":1}');
    assert.equal(canonicalJson({ x: 'é"' }), '{"x":"é\\""}');
  });

  it('mac_n = HMAC-SHA256(key, mac_{n-1} || canonical JSON of entry n with its seq)', () => {
    const [a, b] = chain(2);
    const { mac: macA, ...restA } = a;
    assert.equal(macA, createHmac('sha256', KEY).update(canonicalJson(restA)).digest('hex'));
    const { mac: macB, ...restB } = b;
    assert.equal(b.seq, 2);
    assert.equal(macB, createHmac('sha256', KEY).update(macA + canonicalJson(restB)).digest('hex'));
  });

  it('a sound chain verifies, from its anchor too, and against a logged head it holds', () => {
    const es = chain(5);
    assert.deepEqual(verdict(texts(es), { head: headOf(es[4]) }), { ok: true, entries: 5, first: 1, last: 5 });
    assert.deepEqual(verdict(texts(es.slice(2)), { anchor: anchorOf(es, 1), head: headOf(es[4]) }), { ok: true, entries: 3, first: 3, last: 5 });
    assert.deepEqual(verdict(texts(es), { head: headOf(es[4]), logged: headOf(es[2]) }), { ok: true, entries: 5, first: 1, last: 5, logged: 'matched' });
    assert.deepEqual(verdict(texts(es.slice(3)), { anchor: anchorOf(es, 2), head: headOf(es[4]), logged: headOf(es[0]) }), { ok: true, entries: 2, first: 4, last: 5, logged: 'pruned' });
    assert.deepEqual(verdict([], {}), { ok: true, entries: 0, first: null, last: null });
  });

  it('names the first broken link: deleted, edited, reordered, forged, unsealed, unreadable, another key', () => {
    const es = chain(5);
    const t = texts(es);
    const head = headOf(es[4]);
    const broken = (v: ReturnType<typeof verdict>) => (v.ok ? null : [v.broken.seq, v.broken.problem]);
    assert.deepEqual(broken(verdict([t[0], t[1], t[3], t[4]], { head })), [3, 'missing']);
    assert.deepEqual(broken(verdict([t[1], t[2], t[3], t[4]], { head })), [1, 'missing'], 'the first one deleted');
    const edited = JSON.stringify(Object.assign({}, es[2], { actor: 'cli' }));
    assert.deepEqual(broken(verdict([t[0], t[1], edited, t[3], t[4]], { head })), [3, 'edited']);
    assert.deepEqual(broken(verdict([t[0], t[2], t[1], t[3], t[4]], { head })), [2, 'out_of_order']);
    assert.deepEqual(broken(verdict([t[0], t[1], t[2], t[2], t[3], t[4]], { head })), [3, 'out_of_order'], 'an entry twice');
    const forged = JSON.stringify(Object.assign({}, es[4], { seq: 6, mac: 'f'.repeat(64) }));
    assert.deepEqual(broken(verdict([...t, forged], { head: { seq: 6, mac: 'f'.repeat(64) } })), [6, 'edited']);
    const { mac: _mac, ...unsealed } = es[1];
    assert.deepEqual(broken(verdict([t[0], JSON.stringify(unsealed), t[2], t[3], t[4]], { head })), [2, 'unsealed']);
    assert.deepEqual(broken(verdict([t[0], '{not json', t[2], t[3], t[4]], { head })), [2, 'edited']);
    assert.deepEqual(broken(verdict(t, { head, key: 'another-key-0123456789abcdef0123456' })), [1, 'edited']);
    const moved = JSON.stringify(Object.assign({}, es[0], { accountId: 'B' }));
    assert.deepEqual(broken(verdict([moved, ...t.slice(1)], { head })), [1, 'edited'], 'an entry of another account');
  });

  it('a tail cut off shows only against a head: the stored one, or a logged one when the stored head was cut too', () => {
    const es = chain(5);
    const t = texts(es);
    assert.equal(verdict(t.slice(0, 3), { head: headOf(es[2]) }).ok, true, 'cut with its head: nothing shows');
    const v = verdict(t.slice(0, 3), { head: headOf(es[2]), logged: headOf(es[4]) });
    assert.deepEqual(v.ok ? null : v.broken, { seq: 4, problem: 'missing', detail: 'entry 4 is missing: the logged head names entry 5, the chain ends at 3' });
    const s = verdict(t.slice(0, 3), { head: headOf(es[4]) });
    assert.deepEqual(s.ok ? null : [s.broken.seq, s.broken.problem], [4, 'missing']);
    // rebuilt with another key from entry 3 on: the logged head's link differs
    const rebuilt = [...es.slice(0, 2), ...chain(3, headOf(es[1]), 'attacker-key-0123456789abcdef01234')];
    const r = verdict(texts(rebuilt), { head: headOf(rebuilt[4]), logged: headOf(es[4]) });
    assert.deepEqual(r.ok ? null : [r.broken.seq, r.broken.problem], [3, 'edited']);
  });

  it('an anchor is vouched for: a genuine entry of the account, made before retention’s bound; else the start was moved', () => {
    const es = chain(5);
    const t = texts(es);
    const head = headOf(es[4]);
    const broken = (v: ReturnType<typeof verdict>) => (v.ok ? null : v.broken);
    // everything removed and the anchor set past a logged head: a made-up link is not an anchor
    const madeUp: AuditAnchor = { seq: 9, mac: 'f'.repeat(64), text: '', previousMac: '' };
    assert.deepEqual(broken(verdict([], { anchor: madeUp, head: { seq: 9, mac: 'f'.repeat(64) }, logged: headOf(es[2]) })), {
      seq: 9,
      problem: 'edited',
      detail: "the anchor (entry 9, the last one retention removed) is not that entry: the chain's start was moved",
    });
    const forgedText: AuditAnchor = Object.assign(anchorOf(es, 3), { text: JSON.stringify(Object.assign({}, es[3], { actor: 'cli' })) });
    assert.deepEqual(broken(verdict(t.slice(4), { anchor: forgedText, head })), {
      seq: 4,
      problem: 'edited',
      detail: "the anchor (entry 4, the last one retention removed) does not match its MAC: the chain's start was moved",
    });
    assert.deepEqual(broken(verdict(t.slice(4), { anchor: Object.assign(anchorOf(es, 3), { previousMac: 'e'.repeat(64) }), head }))?.problem, 'edited');
    // a genuine entry, but too new for retention to have removed it: the entries before it were deleted
    assert.deepEqual(broken(verdict(t.slice(4), { anchor: anchorOf(es, 3), head, removableBefore: Date.parse(T) })), {
      seq: 4,
      problem: 'missing',
      detail: `entries up to 4 were removed, but retention removes only entries made before ${T} and entry 4 was made at ${T}`,
    });
    assert.deepEqual(broken(verdict(t.slice(4), { anchor: anchorOf(es, 3), head, removableBefore: null })), {
      seq: 4,
      problem: 'missing',
      detail: 'entries up to 4 were removed, and retention is off (audit.retentionDays is 0)',
    });
    assert.deepEqual(verdict(t.slice(4), { anchor: anchorOf(es, 3), head, logged: headOf(es[1]) }), { ok: true, entries: 1, first: 5, last: 5, logged: 'pruned' });
    assert.deepEqual(verdict([], { anchor: anchorOf(es, 4), head, logged: headOf(es[4]) }), { ok: true, entries: 0, first: null, last: null, logged: 'matched' });
  });

  it('diffs mask secrets: a set secret shows ***, a replaced one *** → changed, a removed one *** → null; unchanged fields are left out', () => {
    const rules = { secret: ['secret'], ignore: ['rev'] };
    assert.deepEqual(auditDiff(null, { a: 1, secret: 's3cr3t', rev: 1 }, rules), { a: { to: 1 }, secret: { to: MASK } });
    assert.deepEqual(auditDiff({ a: 1, secret: 'x', rev: 1 }, { a: 2, secret: 'y', rev: 2 }, rules), { a: { from: 1, to: 2 }, secret: { from: MASK, to: CHANGED } });
    assert.deepEqual(auditDiff({ a: 1, secret: 'x' }, { a: 1, secret: null }, rules), { secret: { from: MASK, to: null } });
    assert.deepEqual(auditDiff({ a: [1], secret: 'x' }, null, rules), { a: { from: [1] }, secret: { from: MASK } });
    assert.deepEqual(auditDiff({ a: { b: 1 } }, { a: { b: 1 } }, rules), {});
  });

  it("a token's value and an issuer's secret, private key and EdgeAuth salt never reach an entry", () => {
    const before = Object.assign(newTokenRecord('publish', 'A', { label: 'l', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), Date.parse(T)), { id: 1, rev: 1 });
    const after = Object.assign({}, before, { token: 'b'.repeat(64), label: 'm', rev: 2 });
    const changes = TOKEN.changes(before, after);
    assert.deepEqual(changes, { label: { from: 'l', to: 'm' }, token: { from: MASK, to: CHANGED } });
    assert.doesNotMatch(JSON.stringify(TOKEN.changes(null, before)), /a{64}/);
    const issuer = { id: 2, secret: 'issuer-secret-value-xyz', signingKey: '-----BEGIN PRIVATE KEY-----', settings: { format: 'akamai-edgeauth', salt: 'salty-salt-value', names: ['hdnts'] } };
    const text = JSON.stringify([
      ISSUER.changes(null, issuer as never),
      ISSUER.changes(issuer as never, Object.assign({}, issuer, { settings: Object.assign({}, issuer.settings, { salt: 'other-salt' }) }) as never),
    ]);
    for (const secret of ['issuer-secret-value-xyz', 'PRIVATE KEY', 'salty-salt-value', 'other-salt']) assert.ok(!text.includes(secret), secret);
    assert.match(text, /"settings\.salt":\{"from":"\*\*\*","to":"changed"\}/);
  });

  it('restream stream keys, URL credentials and query values, and the holds of cut sessions never reach an entry; a change of them shows as changed', () => {
    const base = Object.assign(newTokenRecord('publish', 'A', { label: 'l', streams: [{ streamName: 'cam1' }] }, 'a'.repeat(64), Date.parse(T)), { id: 1, rev: 1 });
    const before = Object.assign({}, base, { restream: [{ url: 'rtmp://live.example/app', key: 'stream-key-one', label: 'yt' }] });
    const after = Object.assign({}, base, {
      restream: [{ url: 'rtmp://user:pw-secret@live.example/app?auth=query-secret', key: 'stream-key-two', label: 'yt' }],
      holds: [{ until: T, clientIp: '198.51.100.23' }],
      rev: 2,
    });
    const changes = TOKEN.changes(before, after);
    assert.deepEqual(changes, {
      restream: {
        from: [{ url: 'rtmp://live.example/app', key: MASK, label: 'yt' }],
        to: [{ url: 'rtmp://***@live.example/app?auth=***', key: MASK, label: 'yt' }],
      },
      'restream.secrets': { from: MASK, to: CHANGED },
    });
    const keyOnly = TOKEN.changes(before, Object.assign({}, before, { restream: [{ url: 'rtmp://live.example/app', key: 'stream-key-three', label: 'yt' }] }));
    assert.deepEqual(keyOnly, { 'restream.secrets': { from: MASK, to: CHANGED } }, 'a new stream key alone shows');
    const text = JSON.stringify([changes, TOKEN.changes(null, after), TOKEN.changes(after, null)]);
    for (const secret of ['stream-key', 'pw-secret', 'query-secret', '198.51.100.23', 'user:']) assert.ok(!text.includes(secret), secret);

    const hook = { id: 3, accountId: 'A', url: 'https://hooks:hook-pass@receiver.example/in?token=hook-token&x=1', secret: 's', isFeedHooks: true, isRecordingHooks: false, isThumbnailHooks: false, createdOn: T, updatedOn: T, rev: 1 };
    const created = WEBHOOK.changes(null, hook as never);
    assert.deepEqual([created.url, created['url.secrets']], [{ to: 'https://***@receiver.example/in?token=***&x=***' }, { to: MASK }]);
    const moved = WEBHOOK.changes(hook as never, Object.assign({}, hook, { url: 'https://receiver.example/in' }) as never);
    assert.deepEqual(moved, { url: { from: 'https://***@receiver.example/in?token=***&x=***', to: 'https://receiver.example/in' }, 'url.secrets': { from: MASK, to: null } });
    assert.ok(!JSON.stringify([created, moved]).includes('hook-pass') && !JSON.stringify([created, moved]).includes('hook-token'));
  });
});
