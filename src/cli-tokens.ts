// `streamgate tokens list|show|create|enable|disable|delete`: an account's publish and subscribe
// tokens on the store the server uses. The values go through the request schemas of
// /api/{publish,subscribe}_token (src/http/management/schemas.ts) and the token service behind them
// (src/management/tokens.ts), so a token made here follows the API's rules (docs/api.md#tokens-from-a-shell).
import { ApiError } from './errors.js';
import { CLI_ACTOR } from './audit/actor.js';
import type { Store, Account } from './store/store.js';
import type { CreateTokenInput, TokenKind } from './domain/tokens.js';
import { streamPatternProblem } from './domain/matchers.js';
import { idParamsSchema, tokenSchemas } from './http/management/schemas.js';
import { parseOr400Async } from './http/validation.js';
import type { TokenService } from './management/tokens.js';
import type { AccountService } from './management/accounts.js';

/** A mistake in the command line: exit 2, with the usage. */
export class UsageError extends Error {}

/** What a store command refused (an unknown account or token, a value the API refuses): exit 1. */
export class Refused extends Error {}

export const TOKEN_VERBS = ['list', 'show', 'create', 'enable', 'disable', 'delete'] as const;
export type TokenVerb = (typeof TOKEN_VERBS)[number];

/** The options each verb takes (beyond --config); any other is a usage error. */
const VERB_OPTIONS: Record<TokenVerb, readonly string[]> = {
  list: ['account', 'kind', 'json', 'show-values'],
  show: ['account', 'kind', 'json', 'show-values'],
  create: ['account', 'kind', 'json', 'label', 'stream', 'stream-regex', 'expires', 'expires-in'],
  enable: ['account', 'kind', 'json'],
  disable: ['account', 'kind', 'json'],
  delete: ['account', 'kind', 'json'],
};

export interface StreamArg {
  /** The option that gave it, for messages: --stream or --stream-regex. */
  option: '--stream' | '--stream-regex';
  streamName: string;
  isRegex: boolean;
}

/** A token command, checked before the store is opened. */
export interface TokenCommand {
  verb: TokenVerb;
  account?: string;
  /** Absent: both kinds (list), the token's own (show, enable, disable, delete), subscribe (create). */
  kind?: TokenKind;
  id?: number;
  json: boolean;
  showValues: boolean;
  /** create: the request body, as POST /api/{kind}_token takes it. */
  body?: Record<string, unknown>;
  streams: StreamArg[];
}

export interface TokenOptionValues {
  account?: string;
  kind?: string;
  label?: string;
  expires?: string;
  'expires-in'?: string;
  json?: boolean;
  'show-values'?: boolean;
}

/**
 * Reads a token command's arguments: `given` names the options on the command line and `streams`
 * the --stream and --stream-regex values in their order. Throws UsageError for the command line's
 * own mistakes (exit 2); the values themselves are the API's to judge (exit 1, see run).
 */
export function tokenCommand(verb: TokenVerb, rest: string[], values: TokenOptionValues, given: string[], streams: StreamArg[]): TokenCommand {
  const command = `tokens ${verb}`;
  const other = given.find((o) => o !== 'config' && o !== 'help' && !VERB_OPTIONS[verb].includes(o));
  if (other) throw new UsageError(`${command} does not take --${other}`);
  let kind: TokenKind | undefined;
  if (values.kind !== undefined) {
    if (values.kind !== 'publish' && values.kind !== 'subscribe') throw new UsageError(`--kind must be publish or subscribe, not '${printable(values.kind)}'`);
    kind = values.kind;
  }
  if (values.account === '') throw new UsageError('--account needs an account id');
  const cmd: TokenCommand = { verb, account: values.account, kind, json: values.json ?? false, showValues: values['show-values'] ?? false, streams };
  if (verb === 'list' || verb === 'create') {
    if (rest.length > 0) throw new UsageError(`${command} takes no argument ('${printable(rest[0]!)}'); options start with --`);
  } else {
    if (rest.length !== 1) throw new UsageError(`${command} needs one token id`);
    const id = idParamsSchema.safeParse({ id: rest[0] });
    if (!id.success) throw new UsageError(`${command}: '${printable(rest[0]!)}' is not a token id (a positive integer)`);
    cmd.id = id.data.id;
  }
  if (verb !== 'create') return cmd;
  if (values.label === undefined) throw new UsageError('tokens create needs --label <label>');
  if (streams.length === 0) throw new UsageError('tokens create needs --stream <name> or --stream-regex <pattern> (either repeatable)');
  const body: Record<string, unknown> = {
    label: values.label,
    streams: streams.map((s) => (s.isRegex ? { streamName: s.streamName, isRegex: true } : { streamName: s.streamName })),
  };
  if (values.expires !== undefined) body.expiresOn = values.expires;
  if (values['expires-in'] !== undefined) {
    if (!/^[0-9]{1,10}$/.test(values['expires-in'])) throw new UsageError('--expires-in must be a whole number of seconds');
    body.expires = Number(values['expires-in']);
  }
  cmd.body = body;
  return cmd;
}

export interface TokenContext {
  store: Store;
  accounts: AccountService;
  tokens: TokenService;
  now: () => number;
  out: (s: string) => void;
}

/** Runs a checked token command. Returns the exit code; a refusal is written to `err`. */
export async function runTokenCommand(cmd: TokenCommand, ctx: TokenContext, err: (s: string) => void): Promise<number> {
  try {
    await run(cmd, ctx);
    return 0;
  } catch (e) {
    const r = e instanceof Refused ? e : e instanceof ApiError ? refusal(e, cmd.streams) : null;
    if (!r) throw e;
    for (const line of r.message.split('\n')) err(`streamgate: tokens ${cmd.verb}: ${printable(line)}`);
    return 1;
  }
}

async function run(cmd: TokenCommand, ctx: TokenContext): Promise<void> {
  const account = await commandAccount(`tokens ${cmd.verb}`, cmd.account, ctx.accounts);
  const { tokens, out } = ctx;
  if (cmd.verb === 'list') {
    const kinds: TokenKind[] = cmd.kind ? [cmd.kind] : ['publish', 'subscribe'];
    const all: Row[] = [];
    for (const kind of kinds) {
      for (let page = 1; ; page++) {
        const got = await tokens.list(account.id, kind, { sortBy: 'AddedOn', descending: false, page, itemsOnPage: 100 });
        for (const v of got) all.push(row(kind, account.id, v));
        if (got.length < 100) break;
      }
    }
    all.sort((a, b) => (a.id as number) - (b.id as number));
    if (cmd.json) {
      for (const r of all) out(JSON.stringify(shown(r, cmd.showValues)));
      return;
    }
    if (all.length === 0) {
      out(`no ${cmd.kind ? `${cmd.kind} ` : ''}tokens in account ${account.id}`);
      return;
    }
    out(table(all, ctx.now(), cmd.showValues));
    return;
  }
  if (cmd.verb === 'create') {
    const kind = cmd.kind ?? 'subscribe';
    // The API's body schema: the same field rules and messages as POST /api/{kind}_token (the
    // synchronous pattern check is the one the API runs on its workers); then the token service.
    const body = await parseOr400Async(tokenSchemas({ problem: streamPatternProblem }).create(kind), cmd.body, 'body');
    const r = row(kind, account.id, await tokens.create(account.id, kind, body as CreateTokenInput, CLI_ACTOR));
    if (cmd.json) out(JSON.stringify(r));
    else out(`created ${kind} token ${r.id} in account ${account.id}\n${details(r, ctx.now(), true)}`);
    return;
  }
  const id = cmd.id!;
  const kind = cmd.kind ?? (await ctx.store.findTokenById(id))?.kind ?? 'publish';
  try {
    if (cmd.verb === 'delete') {
      await tokens.remove(account.id, kind, id, CLI_ACTOR);
      if (cmd.json) out(JSON.stringify({ id, kind, accountId: account.id, deleted: true }));
      else out(`deleted ${kind} token ${id} in account ${account.id}`);
      return;
    }
    const v =
      cmd.verb === 'show'
        ? await tokens.read(account.id, kind, id)
        : await tokens.update(account.id, kind, id, { isActive: cmd.verb === 'enable' }, CLI_ACTOR);
    const r = row(kind, account.id, v);
    if (cmd.json) out(JSON.stringify(shown(r, cmd.showValues)));
    else if (cmd.verb === 'show') out(details(r, ctx.now(), cmd.showValues));
    else out(`${cmd.verb}d ${kind} token ${id} in account ${account.id}`);
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) throw await notFound(ctx.store, account.id, id, cmd.kind);
    throw e;
  }
}

/** The account a store command works on: --account, else the store's only account. */
export async function commandAccount(command: string, account: string | undefined, accounts: AccountService): Promise<Account> {
  if (account !== undefined) {
    const a = await accounts.get(account);
    if (!a) throw new Refused(`no account with id ${printable(account)} (\`streamgate accounts list\` shows the ids)`);
    return a;
  }
  const all = await accounts.list();
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw new Refused('the store holds no account: create one with `streamgate accounts create --name <name>`');
  const ids = all.slice(0, 10).map((a) => a.id).join(', ');
  const more = all.length > 10 ? ` and ${all.length - 10} more` : '';
  throw new UsageError(
    `${command} needs --account <id>: the store holds ${all.length} accounts (${ids}${more}; \`streamgate accounts list\` shows their names)`,
  );
}

/** Why the account has no token `id` (of `kind`, when given): whether it is another account's or kind's. */
async function notFound(store: Store, accountId: string, id: number, kind: TokenKind | undefined): Promise<Refused> {
  const t = await store.findTokenById(id);
  const what = kind ? `${kind} token` : 'token';
  if (!t) return new Refused(`no ${what} with id ${id}`);
  if (t.accountId !== accountId) return new Refused(`no ${what} with id ${id} in account ${accountId} (token ${id} is in account ${t.accountId}: give --account ${t.accountId})`);
  return new Refused(`no ${what} with id ${id} in account ${accountId} (token ${id} is a ${t.kind} token: give --kind ${t.kind} or leave --kind out)`);
}

/**
 * An API refusal as lines naming the command-line option each field came from: `streams[1]` is the
 * second --stream/--stream-regex given, `expiresOn` is --expires, `expires` --expires-in.
 */
function refusal(e: ApiError, streams: StreamArg[]): Refused {
  const errors = e.details.errors as Record<string, string[]> | undefined;
  if (!errors) return new Refused(e.message);
  const lines: string[] = [];
  for (const [field, problems] of Object.entries(errors)) {
    const at = /^streams\[(\d+)\]/.exec(field);
    const s = at ? streams[Number(at[1])] : undefined;
    const option = s
      ? `${s.option} ${JSON.stringify(s.streamName)}`
      : (({ label: '--label', streams: '--stream', expiresOn: '--expires', expires: '--expires-in' }) as Record<string, string>)[field] ?? field;
    for (const p of problems) lines.push(`${option}: ${p}`);
  }
  return new Refused(lines.join('\n'));
}

type Row = Record<string, unknown>;

/** The API's record with the token's kind and account, which its path says there. */
function row(kind: TokenKind, accountId: string, view: Record<string, unknown>): Row {
  const { id, ...rest } = view;
  return { id, kind, accountId, ...rest };
}

/** The record without its token value unless asked for: a token value is a secret. */
function shown(r: Row, showValues: boolean): Row {
  if (showValues) return r;
  const { token: _token, ...rest } = r;
  return rest;
}

/** Control characters of stored text as escapes: a label cannot move the cursor or end a line. */
export function printable(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters replaced
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    const escaped = JSON.stringify(c).slice(1, -1); // \n, \t, \u001b; JSON leaves DEL and C1 as they are
    return escaped !== c ? escaped : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

const MAX_STREAMS_SHOWN = 3;

function streamList(r: Row, all: boolean): string {
  const streams = r.streams as Array<{ streamName: string; isRegex: boolean }>;
  const names = streams.map((s) => printable(s.isRegex ? `regex:${s.streamName}` : s.streamName));
  if (all || names.length <= MAX_STREAMS_SHOWN) return names.join(', ');
  return `${names.slice(0, MAX_STREAMS_SHOWN).join(', ')} (+${names.length - MAX_STREAMS_SHOWN} more)`;
}

/** active, disabled, expired, or both of the last two (the rule of src/policy/evaluate.ts: expired at expiresOn). */
function state(r: Row, now: number): string {
  const expired = typeof r.expiresOn === 'string' && Date.parse(r.expiresOn) <= now;
  if (r.isActive === false) return expired ? 'disabled, expired' : 'disabled';
  return expired ? 'expired' : 'active';
}

function table(rows: Row[], now: number, showValues: boolean): string {
  const head = ['ID', 'KIND', 'LABEL', 'STREAMS', 'STATE', 'EXPIRES', ...(showValues ? ['TOKEN'] : [])];
  const cells = rows.map((r) => [
    String(r.id),
    String(r.kind),
    printable(String(r.label)),
    streamList(r, false),
    state(r, now),
    (r.expiresOn as string | undefined) ?? 'never',
    ...(showValues ? [String(r.token)] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  ');
  return [line(head), ...cells.map(line)].join('\n');
}

/** One token as `name: value` lines (every field of the record: --json). */
function details(r: Row, now: number, showValue: boolean): string {
  const fields: Array<[string, string]> = [
    ['id', String(r.id)],
    ['kind', String(r.kind)],
    ['account', String(r.accountId)],
    ['label', printable(String(r.label))],
    ['streams', streamList(r, true)],
    ['state', state(r, now)],
    ['expires', (r.expiresOn as string | undefined) ?? 'never'],
    ['added', String(r.addedOn)],
    ['updated', String(r.updatedOn)],
  ];
  if (showValue) fields.push(['token', String(r.token)]);
  return fields.map(([k, v]) => `${`${k}:`.padEnd(9)}${v}`).join('\n');
}
