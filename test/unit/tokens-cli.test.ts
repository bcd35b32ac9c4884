// `streamgate tokens …` on the configured store (docs/api.md#tokens-from-a-shell): each command's
// exact output, the stored state after it, and its refusals with their exit codes. The values go
// through the API's schemas and token service, so the API's messages and limits apply.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, USAGE } from '../../src/cli.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { TokenKind, TokenRecord } from '../../src/domain/tokens.js';

const T0 = Date.parse('2026-11-27T12:00:00.000Z');

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

const token = (accountId: string, kind: TokenKind, id: number) => stored((s) => s.getToken(accountId, kind, id));

async function account(name: string): Promise<string> {
  const r = await cli('accounts', 'create', '--name', name);
  assert.equal(r.code, 0, r.err);
  return (JSON.parse(r.out) as { id: string }).id;
}

const refused = (command: string, problem: string): Run => ({ code: 1, out: '', err: `streamgate: ${command}: ${problem}` });
const usage = (problem: string): Run => ({ code: 2, out: '', err: `streamgate: ${problem}\n${USAGE}` });

/** A fresh data dir, and the clock at T0 (moved by the test's own mock timers). */
function fresh(t: TestContext): void {
  dir = mkdtempSync(path.join(tmpdir(), 'sg-tokens-cli-'));
  env = { STREAMGATE_DATA_DIR: dir };
  t.mock.timers.enable({ apis: ['Date'], now: T0 });
}

describe('streamgate tokens create', () => {
  it('makes a subscribe token by default, prints it with its value once, and stores what the API would', async (t) => {
    fresh(t);
    const acct = await account('acme');
    const r = await cli('tokens', 'create', '--label', 'viewers', '--stream', 'cam1', '--stream-regex', 'cam[0-9]+');
    const rec = (await token(acct, 'subscribe', 1)) as TokenRecord;
    assert.deepEqual(
      { ...rec, token: 'value' },
      {
        id: 1,
        kind: 'subscribe',
        accountId: acct,
        label: 'viewers',
        token: 'value',
        addedOn: '2026-11-27T12:00:00.000Z',
        updatedOn: '2026-11-27T12:00:00.000Z',
        isActive: true,
        streams: [
          { streamName: 'cam1', isRegex: false },
          { streamName: 'cam[0-9]+', isRegex: true },
        ],
        allowedOrigins: [],
        allowedIpAddresses: [],
        allowedCountries: [],
        deniedCountries: [],
        rev: rec.rev,
      },
    );
    assert.match(rec.token, /^[0-9a-f]{64}$/);
    assert.deepEqual(r, {
      code: 0,
      out: [
        `created subscribe token 1 in account ${acct}`,
        'id:      1',
        'kind:    subscribe',
        `account: ${acct}`,
        'label:   viewers',
        'streams: cam1, regex:cam[0-9]+',
        'state:   active',
        'expires: never',
        'added:   2026-11-27T12:00:00.000Z',
        'updated: 2026-11-27T12:00:00.000Z',
        `token:   ${rec.token}`,
      ].join('\n'),
      err: '',
    });
  });

  it('--kind publish, streams in the order given, --expires and --json: the API record with its kind and account', async (t) => {
    fresh(t);
    const acct = await account('acme');
    const r = await cli('tokens', 'create', '--kind', 'publish', '--label', 'studio', '--stream-regex', 'live-.*', '--stream', 'cam1', '--expires', '2027-01-01T00:00:00Z', '--json');
    assert.equal(r.code, 0, r.err);
    const rec = (await token(acct, 'publish', 1)) as TokenRecord;
    assert.deepEqual(rec.streams, [
      { streamName: 'live-.*', isRegex: true },
      { streamName: 'cam1', isRegex: false },
    ]);
    assert.equal(rec.expiresOn, '2027-01-01T00:00:00.000Z');
    assert.deepEqual(JSON.parse(r.out), {
      id: 1,
      kind: 'publish',
      accountId: acct,
      label: 'studio',
      name: 'studio',
      token: rec.token,
      addedOn: '2026-11-27T12:00:00.000Z',
      expiresOn: '2027-01-01T00:00:00.000Z',
      isActive: true,
      streams: rec.streams,
      allowedOrigins: [],
      allowedIpAddresses: [],
      allowedCountries: [],
      deniedCountries: [],
      originCluster: '',
      subscribeRequiresAuth: false,
      record: false,
      enableThumbnails: false,
      clip: false,
      multisource: true,
      lowLatencyRtmp: true,
      displaySrtPassphrase: false,
      drm: false,
      integrationId: 'None',
      effectiveSettings: { originCluster: 'auto', allowedCountries: [], deniedCountries: [], geoCascade: { isEnabled: false, clusters: [] } },
      updatedOn: '2026-11-27T12:00:00.000Z',
    });
  });

  it("refuses what the API refuses, with the API's words, naming the option; stores nothing (exit 1)", async (t) => {
    fresh(t);
    const acct = await account('acme');
    assert.deepEqual(
      await cli('tokens', 'create', '--label', 'x', '--stream', 'cam1', '--stream-regex', 'cam[', '--expires', 'tomorrow'),
      {
        code: 1,
        out: '',
        err: [
          'streamgate: tokens create: --stream-regex "cam[": not a valid regular expression for the RE2 engine (no backreferences or look-around): missing ]: [',
          'streamgate: tokens create: --expires: expected an ISO 8601 date-time such as 2026-12-31T23:59:59Z',
        ].join('\n'),
      },
    );
    assert.deepEqual(await cli('tokens', 'create', '--label', 'x', '--stream', 'cam1', '--expires', '2026-11-27T11:00:00Z'), refused('tokens create', '--expires: must be in the future'));
    assert.deepEqual(await cli('tokens', 'create', '--label', '', '--stream', 'cam1'), refused('tokens create', '--label: Too small: expected string to have >=1 characters'));
    assert.deepEqual(await stored((s) => s.listTokens(acct, 'subscribe', { sortBy: 'AddedOn', descending: false, page: 1, itemsOnPage: 10 })), []);
  });

  it("keeps the configured limits, as the server's API does", async (t) => {
    fresh(t);
    await account('acme');
    env.STREAMGATE_LIMITS_TOKENSPERACCOUNT = '1';
    assert.equal((await cli('tokens', 'create', '--label', 'a', '--stream', 'cam1')).code, 0);
    assert.deepEqual(
      await cli('tokens', 'create', '--label', 'b', '--stream', 'cam1'),
      refused('tokens create', 'an account holds at most 1 subscribe tokens (limits.tokensPerAccount): delete unused ones first'),
    );
    assert.equal((await cli('tokens', 'create', '--kind', 'publish', '--label', 'b', '--stream', 'cam1')).code, 0, 'the limit is per kind');
  });

  it('the command line is checked before the store: missing --label or stream, a stray argument, a bad --expires-in (exit 2)', async (t) => {
    fresh(t);
    await account('acme');
    assert.deepEqual(await cli('tokens', 'create', '--stream', 'cam1'), usage('tokens create needs --label <label>'));
    assert.deepEqual(await cli('tokens', 'create', '--label', 'x'), usage('tokens create needs --stream <name> or --stream-regex <pattern> (either repeatable)'));
    assert.deepEqual(await cli('tokens', 'create', 'cam1', '--label', 'x'), usage("tokens create takes no argument ('cam1'); options start with --"));
    assert.deepEqual(await cli('tokens', 'create', '--label', 'x', '--stream', 'a', '--expires-in', '1h'), usage('--expires-in must be a whole number of seconds'));
    assert.deepEqual(await cli('tokens', 'create', '--label', 'x', '--stream', 'a', '--show-values'), usage('tokens create does not take --show-values'));
  });
});

describe('streamgate tokens list and show', () => {
  it('lists both kinds by id in a table without token values; --show-values adds them, --kind filters', async (t) => {
    fresh(t);
    const acct = await account('acme');
    await cli('tokens', 'create', '--kind', 'publish', '--label', 'studio', '--stream', 'cam1', '--stream', 'cam2', '--stream', 'cam3', '--stream-regex', 'cam[0-9]+');
    await cli('tokens', 'create', '--label', 'short\nlived', '--stream', 'cam1', '--expires-in', '60');
    await cli('tokens', 'create', '--label', 'off', '--stream', 'cam2');
    await cli('tokens', 'disable', '2');
    await cli('tokens', 'disable', '3');
    t.mock.timers.tick(61_000);
    assert.deepEqual(await cli('tokens', 'list'), {
      code: 0,
      out: [
        'ID  KIND       LABEL         STREAMS                     STATE              EXPIRES',
        '1   publish    studio        cam1, cam2, cam3 (+1 more)  active             never',
        '2   subscribe  short\\nlived  cam1                        disabled, expired  2026-11-27T12:01:00.000Z',
        '3   subscribe  off           cam2                        disabled           never',
      ].join('\n'),
      err: '',
    });
    const values = await Promise.all([token(acct, 'publish', 1), token(acct, 'subscribe', 2)]);
    assert.deepEqual(await cli('tokens', 'list', '--kind', 'subscribe', '--show-values'), {
      code: 0,
      out: [
        'ID  KIND       LABEL         STREAMS  STATE              EXPIRES                   TOKEN',
        `2   subscribe  short\\nlived  cam1     disabled, expired  2026-11-27T12:01:00.000Z  ${values[1]!.token}`,
        `3   subscribe  off           cam2     disabled           never                     ${(await token(acct, 'subscribe', 3))!.token}`,
      ].join('\n'),
      err: '',
    });
    const json = await cli('tokens', 'list', '--kind', 'publish', '--json');
    const lines = json.out.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual([lines.length, lines[0]!.id, lines[0]!.kind, lines[0]!.accountId, 'token' in lines[0]!], [1, 1, 'publish', acct, false]);
    assert.ok(!json.out.includes(values[0]!.token), 'no token value without --show-values');
    const shown = await cli('tokens', 'list', '--kind', 'publish', '--json', '--show-values');
    assert.equal((JSON.parse(shown.out) as { token: string }).token, values[0]!.token);
  });

  it('says so when the account has no tokens', async (t) => {
    fresh(t);
    const acct = await account('acme');
    assert.deepEqual(await cli('tokens', 'list'), { code: 0, out: `no tokens in account ${acct}`, err: '' });
    assert.deepEqual(await cli('tokens', 'list', '--kind', 'publish'), { code: 0, out: `no publish tokens in account ${acct}`, err: '' });
    assert.deepEqual(await cli('tokens', 'list', '--json'), { code: 0, out: '', err: '' });
  });

  it('shows one token, finding its kind; the value only with --show-values', async (t) => {
    fresh(t);
    const acct = await account('acme');
    await cli('tokens', 'create', '--kind', 'publish', '--label', 'studio', '--stream', 'cam1');
    const details = [
      'id:      1',
      'kind:    publish',
      `account: ${acct}`,
      'label:   studio',
      'streams: cam1',
      'state:   active',
      'expires: never',
      'added:   2026-11-27T12:00:00.000Z',
      'updated: 2026-11-27T12:00:00.000Z',
    ];
    assert.deepEqual(await cli('tokens', 'show', '1'), { code: 0, out: details.join('\n'), err: '' });
    const value = (await token(acct, 'publish', 1))!.token;
    assert.deepEqual(await cli('tokens', 'show', '1', '--show-values'), { code: 0, out: [...details, `token:   ${value}`].join('\n'), err: '' });
    const json = JSON.parse((await cli('tokens', 'show', '1', '--json')).out) as Record<string, unknown>;
    assert.deepEqual([json.id, json.kind, json.label, 'token' in json], [1, 'publish', 'studio', false]);
  });
});

describe('streamgate tokens disable, enable and delete', () => {
  it('disable and enable set isActive through the token service; delete removes the token', async (t) => {
    fresh(t);
    const acct = await account('acme');
    await cli('tokens', 'create', '--kind', 'publish', '--label', 'studio', '--stream', 'cam1');
    t.mock.timers.tick(1000);
    assert.deepEqual(await cli('tokens', 'disable', '1'), { code: 0, out: `disabled publish token 1 in account ${acct}`, err: '' });
    const off = (await token(acct, 'publish', 1))!;
    assert.deepEqual([off.isActive, off.updatedOn], [false, '2026-11-27T12:00:01.000Z']);
    const enabled = await cli('tokens', 'enable', '1', '--json');
    assert.deepEqual([enabled.code, (JSON.parse(enabled.out) as { isActive: boolean }).isActive, enabled.out.includes(off.token)], [0, true, false]);
    assert.equal((await token(acct, 'publish', 1))!.isActive, true);
    assert.deepEqual(await cli('tokens', 'delete', '1', '--json'), { code: 0, out: JSON.stringify({ id: 1, kind: 'publish', accountId: acct, deleted: true }), err: '' });
    assert.equal(await token(acct, 'publish', 1), null);
    assert.deepEqual(await cli('tokens', 'delete', '1'), refused('tokens delete', 'no token with id 1'));
  });

  it("refuses an unknown id, another account's token and a token of the other kind (exit 1), changing nothing", async (t) => {
    fresh(t);
    const mine = await account('acme');
    await cli('tokens', 'create', '--label', 'v', '--stream', 'cam1');
    const theirs = await account('other');
    assert.equal((await cli('tokens', 'create', '--account', theirs, '--label', 'theirs', '--stream', 'cam1')).code, 0);
    for (const verb of ['disable', 'delete', 'show', 'enable']) {
      assert.deepEqual(await cli('tokens', verb, '99', '--account', mine), refused(`tokens ${verb}`, 'no token with id 99'));
      assert.deepEqual(
        await cli('tokens', verb, '2', '--account', mine),
        refused(`tokens ${verb}`, `no token with id 2 in account ${mine} (token 2 is in account ${theirs}: give --account ${theirs})`),
      );
      assert.deepEqual(
        await cli('tokens', verb, '1', '--account', mine, '--kind', 'publish'),
        refused(`tokens ${verb}`, `no publish token with id 1 in account ${mine} (token 1 is a subscribe token: give --kind subscribe or leave --kind out)`),
      );
    }
    assert.deepEqual([(await token(theirs, 'subscribe', 2))?.isActive, (await token(mine, 'subscribe', 1))?.isActive], [true, true]);
  });
});

describe('streamgate tokens: the account and the command line', () => {
  it('needs --account when the store holds two accounts (exit 2, naming them), and refuses an unknown one (exit 1)', async (t) => {
    fresh(t);
    const a = await account('acme');
    const b = await account('other');
    assert.deepEqual(
      await cli('tokens', 'list'),
      usage(`tokens list needs --account <id>: the store holds 2 accounts (${a}, ${b}; \`streamgate accounts list\` shows their names)`),
    );
    assert.deepEqual(await cli('tokens', 'list', '--account', 'NOPE99'), refused('tokens list', 'no account with id NOPE99 (`streamgate accounts list` shows the ids)'));
    assert.deepEqual(await cli('tokens', 'list', '--account', b), { code: 0, out: `no tokens in account ${b}`, err: '' });
  });

  it('refuses a store with no account, and a store that does not exist', async (t) => {
    fresh(t);
    const none = await cli('keys', 'rotate'); // a store with keys and no account
    assert.equal(none.code, 0, none.err);
    assert.deepEqual(await cli('tokens', 'list'), refused('tokens list', 'the store holds no account: create one with `streamgate accounts create --name <name>`'));
    env = { STREAMGATE_DATA_DIR: path.join(dir, 'elsewhere') };
    const r = await cli('tokens', 'create', '--label', 'x', '--stream', 'cam1');
    assert.equal(r.code, 1);
    assert.match(r.err, /^streamgate: tokens create: the data dir .*elsewhere does not exist, so there is nothing to read;/);
  });

  it('a bad --kind, id, option or verb is a usage error (exit 2)', async (t) => {
    fresh(t);
    await account('acme');
    assert.deepEqual(await cli('tokens', 'list', '--kind', 'viewer'), usage("--kind must be publish or subscribe, not 'viewer'"));
    assert.deepEqual(await cli('tokens', 'create', '--kind', 'Publish', '--label', 'x', '--stream', 'a'), usage("--kind must be publish or subscribe, not 'Publish'"));
    assert.deepEqual(await cli('tokens', 'delete', 'abc'), usage("tokens delete: 'abc' is not a token id (a positive integer)"));
    assert.deepEqual(await cli('tokens', 'delete'), usage('tokens delete needs one token id'));
    assert.deepEqual(await cli('tokens', 'disable', '1', '2'), usage('tokens disable needs one token id'));
    assert.deepEqual(await cli('tokens', 'list', '--label', 'x'), usage('tokens list does not take --label'));
    assert.deepEqual(await cli('tokens', 'frob'), usage("unknown command 'tokens frob'"));
    assert.deepEqual(await cli('tokens'), usage("unknown command 'tokens'"));
  });
});
