// `streamgate issuers …` on the configured store (docs/api.md#issuers-from-a-shell): each command's
// exact output, the stored state after it, and its refusals with their exit codes. Bodies go
// through the API's schemas and issuer service, so the API's messages apply; no secret is printed.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, USAGE } from '../../src/cli.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { IssuerRecord } from '../../src/domain/issuers.js';

const T0 = Date.parse('2026-11-27T12:00:00.000Z');
const AT0 = '2026-11-27T12:00:00.000Z';
const SECRET = 'livekit-api-secret-0123456789abcdef';

interface Run {
  code: number;
  out: string;
  err: string;
}

let dir: string;
let env: Record<string, string>;

async function cli(...args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (s) => out.push(s), err: (s) => err.push(s) }, env);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The store as the server would read it, opened after the command closed its own. */
async function stored<T>(read: (s: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore({ file: path.join(dir, 'streamgate.db') });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

async function account(name: string): Promise<string> {
  const r = await cli('accounts', 'create', '--name', name);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { id: string }).id;
}

/** A subscribe token of the account (the store's only one unless `acct` is given): its id. */
async function token(acct?: string): Promise<number> {
  const r = await cli('tokens', 'create', '--label', 'viewers', '--stream', 'cam1', '--json', ...(acct ? ['--account', acct] : []));
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { id: number }).id;
}

/** A JSON file in the data dir's directory holding `body`: its path. */
function file(name: string, body: unknown): string {
  const p = path.join(dir, name);
  writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
  return p;
}

const refused = (command: string, ...problems: string[]): Run => ({ code: 1, out: '', err: problems.map((p) => `streamgate: ${command}: ${p}`).join('\n') });
const usage = (problem: string): Run => ({ code: 2, out: '', err: `streamgate: ${problem}\n${USAGE}` });

/** A fresh data dir, and the clock at T0. */
function fresh(t: TestContext): void {
  dir = mkdtempSync(path.join(tmpdir(), 'sg-issuers-cli-'));
  env = { STREAMGATE_DATA_DIR: dir };
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
}

const livekit = (policyTokenId: number, over: Record<string, unknown> = {}) => ({
  label: 'livekit',
  policyTokenId,
  issuer: 'APIkey1',
  algorithms: ['HS256'],
  secret: SECRET,
  clockSkewSeconds: 10,
  claims: { stream: 'video.room', canSubscribe: 'video.canSubscribe' },
  ...over,
});

describe('streamgate issuers create, show and list', () => {
  it('creates from a JSON file, prints the issuer without its secret, and stores what the API would', async (t) => {
    fresh(t);
    const acct = await account('acme');
    const sub = await token();
    const r = await cli('issuers', 'create', '--from', file('lk.json', livekit(sub)));
    assert.deepEqual(r, {
      code: 0,
      err: '',
      out: [
        `created issuer 1 in account ${acct}`,
        'id:           1',
        `account:      ${acct}`,
        'label:        livekit',
        'state:        active',
        `policy token: ${sub} (subscribe)`,
        'iss:          APIkey1',
        'key ids:      any',
        'audience:     any',
        'algorithms:   HS256',
        'keys:         a secret',
        'clock skew:   10 s',
        'max lifetime: the policy token bounds it',
        'claims:       stream=video.room, canSubscribe=video.canSubscribe',
        'cookie:       none',
        'revoked:      0 jti, 0 sub, 0 kid',
        'rev:          1',
        `added:        ${AT0}`,
        `updated:      ${AT0}`,
      ].join('\n'),
    });
    assert.deepEqual(await stored((s) => s.getIssuer(acct, 1)), {
      id: 1,
      accountId: acct,
      label: 'livekit',
      type: 'jwt',
      isActive: true,
      policyTokenId: sub,
      issuer: 'APIkey1',
      keyIds: [],
      audience: [],
      algorithms: ['HS256'],
      jwks: null,
      jwksUrl: null,
      secret: SECRET,
      clockSkewSeconds: 10,
      maxLifetimeSeconds: null,
      claims: { stream: 'video.room', canSubscribe: 'video.canSubscribe' },
      cookieName: null,
      revoked: { jti: [], sub: [], kid: [] },
      settings: null,
      signingKey: null,
      secretFrom: null,
      signingKeyFrom: null,
      addedOn: AT0,
      updatedOn: AT0,
      rev: 1,
    } satisfies IssuerRecord);
  });

  it('lists in a table and shows one as JSON: the API record with its account, hasSecret and never the secret', async (t) => {
    fresh(t);
    const acct = await account('acme');
    const sub = await token();
    assert.deepEqual(await cli('issuers', 'list'), { code: 0, out: `no issuers in account ${acct}`, err: '' });
    await cli('issuers', 'create', '--from', file('lk.json', livekit(sub)));
    const url = { label: 'idp\nmain', policyTokenId: sub, issuer: 'https://idp.example.com/', keyIds: ['k1', 'k2'], algorithms: ['RS256', 'ES256'], jwksUrl: 'https://idp.example.com/jwks', isActive: false };
    await cli('issuers', 'create', '--body', JSON.stringify(url));
    assert.deepEqual(await cli('issuers', 'list'), {
      code: 0,
      err: '',
      out: [
        'ID  LABEL      ISS                       KEY IDS  ALGORITHMS    POLICY TOKEN   STATE',
        `1   livekit    APIkey1                   any      HS256         ${sub} (subscribe)  active`,
        `2   idp\\nmain  https://idp.example.com/  k1, k2   RS256, ES256  ${sub} (subscribe)  disabled`,
      ].join('\n'),
    });
    const json = await cli('issuers', 'show', '1', '--json');
    assert.equal(json.code, 0);
    assert.ok(!json.out.includes(SECRET));
    assert.deepEqual(JSON.parse(json.out), {
      id: 1,
      accountId: acct,
      label: 'livekit',
      type: 'jwt',
      isActive: true,
      policyTokenId: sub,
      policyTokenKind: 'subscribe',
      issuer: 'APIkey1',
      keyIds: [],
      audience: [],
      algorithms: ['HS256'],
      jwks: null,
      jwksUrl: null,
      hasSecret: true,
      hasSigningKey: false,
      settings: null,
      secretFrom: null,
      signingKeyFrom: null,
      clockSkewSeconds: 10,
      maxLifetimeSeconds: null,
      claims: { stream: 'video.room', canSubscribe: 'video.canSubscribe' },
      cookieName: null,
      revoked: { jti: [], sub: [], kid: [] },
      addedOn: AT0,
      updatedOn: AT0,
      rev: 1,
    });
    const lines = (await cli('issuers', 'list', '--json')).out.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.map((l) => [l.id, l.hasSecret, 'secret' in l]), [[1, true, false], [2, false, false]]);
    assert.equal((await cli('issuers', 'show', '2')).out.split('\n')[9], 'keys:         https://idp.example.com/jwks');
  });

  it("refuses what the API refuses, in the API's words, one line per problem; stores nothing (exit 1)", async (t) => {
    fresh(t);
    const acct = await account('acme');
    const sub = await token();
    const other = await account('other');
    const theirs = await token(other);
    assert.deepEqual(
      await cli('issuers', 'create', '--account', acct, '--from', file('bad.json', livekit(theirs, { algorithms: ['none'], cookieName: 'a b' }))),
      refused('issuers create', "algorithms[0]: none is never accepted: an issuer's JWTs must be signed", "cookieName: a cookie name (an RFC 6265 token): letters, digits and !#$%&'*+-.^_`|~"),
    );
    assert.deepEqual(
      await cli('issuers', 'create', '--account', acct, '--from', file('bad.json', livekit(theirs, { secret: undefined }))),
      refused(
        'issuers create',
        'policyTokenId: no such token in this account',
        'secret: required for HS256: the HMAC secret its JWTs are signed with (at least 16 characters; 32 bytes or more recommended)',
      ),
    );
    assert.deepEqual(await cli('issuers', 'create', '--account', acct, '--from', path.join(dir, 'missing.json')), refused('issuers create', `--from ${path.join(dir, 'missing.json')}: cannot read it (ENOENT)`));
    assert.deepEqual(await cli('issuers', 'create', '--account', acct, '--from', file('text.json', 'label: x')), refused('issuers create', `--from ${path.join(dir, 'text.json')}: not JSON: the fields of the API's request body, as an object`));
    assert.deepEqual(await cli('issuers', 'create', '--account', acct, '--body', '[1]'), refused('issuers create', '--body: the body must be a JSON object'));
    // a secret is never taken on the command line
    assert.deepEqual(
      await cli('issuers', 'create', '--account', acct, '--body', JSON.stringify(livekit(sub))),
      refused('issuers create', '--body: a secret goes in a --from file, not on the command line (other users see command lines, and shells keep them)'),
    );
    assert.deepEqual(await stored((s) => s.listIssuers(acct)), []);
    // the deployment-wide overlap, named without the other account
    assert.equal((await cli('issuers', 'create', '--account', other, '--from', file('lk.json', livekit(theirs)))).code, 0);
    assert.deepEqual(
      await cli('issuers', 'create', '--account', acct, '--from', file('lk.json', livekit(sub))),
      refused(
        'issuers create',
        'An issuer of iss "APIkey1" is declared already for any key id: a JWT must select one issuer, so no two issuers of the deployment share an iss and a key id (an issuer naming no key ids takes every key id of its iss)',
      ),
    );
    assert.deepEqual(await stored((s) => s.listIssuers(acct)), []);
  });
});

describe('streamgate issuers update and delete', () => {
  it('update sets the fields given (a rev is checked), delete removes the issuer', async (t) => {
    fresh(t);
    const acct = await account('acme');
    const sub = await token();
    await cli('issuers', 'create', '--from', file('lk.json', livekit(sub)));
    t.mock.timers.tick(1000);
    assert.deepEqual(await cli('issuers', 'update', '1', '--body', '{"isActive":false,"revoked":{"sub":["banned"]}}'), { code: 0, out: `updated issuer 1 in account ${acct}: rev 2`, err: '' });
    const rec = (await stored((s) => s.getIssuer(acct, 1)))!;
    assert.deepEqual([rec.isActive, rec.revoked, rec.secret, rec.rev, rec.updatedOn], [false, { jti: [], sub: ['banned'], kid: [] }, SECRET, 2, '2026-11-27T12:00:01.000Z']);
    // a new secret from a file; a stale rev is refused
    assert.deepEqual(await cli('issuers', 'update', '1', '--from', file('s.json', { secret: 'a-new-secret-of-some-length', rev: 2 }), '--json').then((r) => [r.code, JSON.parse(r.out).hasSecret, r.out.includes('a-new-secret')]), [0, true, false]);
    assert.equal((await stored((s) => s.getIssuer(acct, 1)))?.secret, 'a-new-secret-of-some-length');
    assert.deepEqual(await cli('issuers', 'update', '1', '--body', '{"label":"x","rev":2}'), refused('issuers update', 'Issuer 1 changed since rev 2: it is at rev 3; read it again and send its current rev'));
    assert.deepEqual(await cli('issuers', 'update', '1', '--body', '{"algorithms":["RS256"]}'), refused(
      'issuers update',
      'secret: only HS256, HS384 and HS512 use a secret and algorithms lists none of them: list one, or remove the secret (null)',
      'jwks: required for RS256, or jwksUrl: the public keys that verify its JWTs',
    ));
    assert.equal((await stored((s) => s.getIssuer(acct, 1)))?.rev, 3);
    assert.deepEqual(await cli('issuers', 'delete', '1', '--json'), { code: 0, out: JSON.stringify({ id: 1, accountId: acct, deleted: true }), err: '' });
    assert.equal(await stored((s) => s.getIssuer(acct, 1)), null);
    assert.deepEqual(await cli('issuers', 'delete', '1'), refused('issuers delete', `no issuer with id 1 in account ${acct}`));
  });

  it("another account's issuer is not found (exit 1) and stays as it was", async (t) => {
    fresh(t);
    const mine = await account('acme');
    const theirs = await account('other');
    await cli('issuers', 'create', '--account', theirs, '--from', file('lk.json', livekit(await token(theirs))));
    const before = await stored((s) => s.getIssuer(theirs, 1));
    assert.deepEqual(await cli('issuers', 'show', '1', '--account', mine), refused('issuers show', `no issuer with id 1 in account ${mine}`));
    assert.deepEqual(await cli('issuers', 'update', '1', '--account', mine, '--body', '{"isActive":false}'), refused('issuers update', `no issuer with id 1 in account ${mine}`));
    assert.deepEqual(await cli('issuers', 'delete', '1', '--account', mine), refused('issuers delete', `no issuer with id 1 in account ${mine}`));
    assert.deepEqual(await stored((s) => s.getIssuer(theirs, 1)), before);
  });

  it('a wrong command line is a usage error (exit 2), checked before the store', async (t) => {
    fresh(t);
    const a = await account('acme');
    const b = await account('other');
    assert.deepEqual(await cli('issuers', 'list'), usage(`issuers list needs --account <id>: the store holds 2 accounts (${a}, ${b}; \`streamgate accounts list\` shows their names)`));
    assert.deepEqual(await cli('issuers', 'create', '--account', a), usage("issuers create needs the issuer's fields: --from <JSON file> or --body <JSON>, one of them"));
    assert.deepEqual(await cli('issuers', 'update', '1', '--from', 'x.json', '--body', '{}'), usage("issuers update needs the issuer's fields: --from <JSON file> or --body <JSON>, one of them"));
    assert.deepEqual(await cli('issuers', 'show'), usage('issuers show needs one issuer id'));
    assert.deepEqual(await cli('issuers', 'delete', 'abc'), usage("issuers delete: 'abc' is not an issuer id (a positive integer)"));
    assert.deepEqual(await cli('issuers', 'list', 'x'), usage("issuers list takes no argument ('x'); options start with --"));
    assert.deepEqual(await cli('issuers', 'list', '--from', 'x.json'), usage('issuers list does not take --from'));
    assert.deepEqual(await cli('issuers', 'show', '1', '--label', 'x'), usage('issuers show does not take --label'));
    assert.deepEqual(await cli('issuers', 'enable', '1'), usage("unknown command 'issuers enable 1'"));
    assert.deepEqual(await cli('tokens', 'list', '--from', 'x.json'), usage('tokens list does not take --from'));
  });
});
