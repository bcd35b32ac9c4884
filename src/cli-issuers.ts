// `streamgate issuers list|show|create|update|delete`: an account's credential issuers on the
// store the server uses. A body goes through the request schemas of /api/issuers and the issuer
// service behind them, so an issuer made here follows the API's rules (docs/api.md#issuers-from-a-shell).
// No secret is ever printed, and none is taken on the command line.
import { readFile } from 'node:fs/promises';
import { CLI_ACTOR } from './audit/actor.js';
import { ApiError } from './errors.js';
import type { AccountService } from './management/accounts.js';
import type { IssuerService, IssuerView } from './management/issuers.js';
import { issuerSchemas, parseSettings } from './http/management/issuers.routes.js';
import { idParamsSchema } from './http/management/schemas.js';
import { parseOr400Async } from './http/validation.js';
import { Refused, UsageError, commandAccount, printable } from './cli-tokens.js';

export const ISSUER_VERBS = ['list', 'show', 'create', 'update', 'delete'] as const;
export type IssuerVerb = (typeof ISSUER_VERBS)[number];

/** The options each verb takes (beyond --config); any other is a usage error. */
const VERB_OPTIONS: Record<IssuerVerb, readonly string[]> = {
  list: ['account', 'json'],
  show: ['account', 'json'],
  create: ['account', 'json', 'from', 'body'],
  update: ['account', 'json', 'from', 'body'],
  delete: ['account', 'json'],
};

/** An issuer command, checked before the store is opened. */
export interface IssuerCommand {
  verb: IssuerVerb;
  account?: string;
  id?: number;
  json: boolean;
  /** create, update: where the request body is, a JSON file (--from) or the option's own text (--body). */
  body?: { option: '--from' | '--body'; value: string };
}

export interface IssuerOptionValues {
  account?: string;
  json?: boolean;
  from?: string;
  body?: string;
}

/**
 * Reads an issuer command's arguments (`given` names the options on the command line). Throws
 * UsageError for the command line's own mistakes (exit 2); the body is the API's to judge (exit 1).
 */
export function issuerCommand(verb: IssuerVerb, rest: string[], values: IssuerOptionValues, given: string[]): IssuerCommand {
  const command = `issuers ${verb}`;
  const other = given.find((o) => o !== 'config' && o !== 'help' && !VERB_OPTIONS[verb].includes(o));
  if (other) throw new UsageError(`${command} does not take --${other}`);
  if (values.account === '') throw new UsageError('--account needs an account id');
  const cmd: IssuerCommand = { verb, account: values.account, json: values.json ?? false };
  if (verb === 'list' || verb === 'create') {
    if (rest.length > 0) throw new UsageError(`${command} takes no argument ('${printable(rest[0]!)}'); options start with --`);
  } else {
    if (rest.length !== 1) throw new UsageError(`${command} needs one issuer id`);
    const id = idParamsSchema.safeParse({ id: rest[0] });
    if (!id.success) throw new UsageError(`${command}: '${printable(rest[0]!)}' is not an issuer id (a positive integer)`);
    cmd.id = id.data.id;
  }
  if (verb === 'create' || verb === 'update') {
    if ((values.from === undefined) === (values.body === undefined)) throw new UsageError(`${command} needs the issuer's fields: --from <JSON file> or --body <JSON>, one of them`);
    cmd.body = values.from !== undefined ? { option: '--from', value: values.from } : { option: '--body', value: values.body! };
  }
  return cmd;
}

export interface IssuerContext {
  accounts: AccountService;
  issuers: IssuerService;
  out: (s: string) => void;
}

/** Runs a checked issuer command. Returns the exit code; a refusal is written to `err`. */
export async function runIssuerCommand(cmd: IssuerCommand, ctx: IssuerContext, err: (s: string) => void): Promise<number> {
  try {
    await run(cmd, ctx);
    return 0;
  } catch (e) {
    const r = e instanceof Refused ? e : e instanceof ApiError ? refusal(e) : null;
    if (!r) throw e;
    for (const line of r.message.split('\n')) err(`streamgate: issuers ${cmd.verb}: ${printable(line)}`);
    return 1;
  }
}

async function run(cmd: IssuerCommand, ctx: IssuerContext): Promise<void> {
  const account = await commandAccount(`issuers ${cmd.verb}`, cmd.account, ctx.accounts);
  const { issuers, out } = ctx;
  const where = `in account ${account.id}`;
  if (cmd.verb === 'list') {
    const all = await issuers.list(account.id);
    if (cmd.json) for (const v of all) out(JSON.stringify(row(account.id, v)));
    else out(all.length === 0 ? `no issuers ${where}` : table(all));
    return;
  }
  if (cmd.verb === 'create') {
    const body = await parseOr400Async(issuerSchemas.create, await bodyOf(cmd.body!), 'body');
    const v = await issuers.create(account.id, Object.assign({}, body, { settings: parseSettings(body.type ?? 'jwt', body.settings) }), CLI_ACTOR);
    out(cmd.json ? JSON.stringify(row(account.id, v)) : `created issuer ${v.id} ${where}\n${details(account.id, v)}`);
    return;
  }
  const id = cmd.id!;
  try {
    if (cmd.verb === 'show') {
      const v = await issuers.read(account.id, id);
      out(cmd.json ? JSON.stringify(row(account.id, v)) : details(account.id, v));
    } else if (cmd.verb === 'update') {
      const { rev, ...input } = await parseOr400Async(issuerSchemas.update, await bodyOf(cmd.body!), 'body');
      if (input.settings !== undefined) input.settings = parseSettings((await issuers.read(account.id, id)).type, input.settings);
      const v = await issuers.update(account.id, id, input, CLI_ACTOR, rev);
      out(cmd.json ? JSON.stringify(row(account.id, v)) : `updated issuer ${id} ${where}: rev ${v.rev}`);
    } else {
      await issuers.remove(account.id, id, CLI_ACTOR);
      out(cmd.json ? JSON.stringify({ id, accountId: account.id, deleted: true }) : `deleted issuer ${id} ${where}`);
    }
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) throw new Refused(`no issuer with id ${id} ${where}`);
    throw e;
  }
}

/**
 * The JSON body a --from file or --body holds. A secret is refused in --body: a command line is
 * seen by other users of the machine (ps) and kept in shell history.
 */
async function bodyOf(source: NonNullable<IssuerCommand['body']>): Promise<unknown> {
  let text = source.value;
  if (source.option === '--from') {
    try {
      text = await readFile(source.value, 'utf8');
    } catch (e) {
      throw new Refused(`--from ${source.value}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Refused(`${source.option}${source.option === '--from' ? ` ${source.value}` : ''}: not JSON: the fields of the API's request body, as an object`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refused(`${source.option}: the body must be a JSON object`);
  if (source.option === '--body' && typeof (body as { secret?: unknown }).secret === 'string') {
    throw new Refused('--body: a secret goes in a --from file, not on the command line (other users see command lines, and shells keep them)');
  }
  return body;
}

/** An API refusal as lines: one per problem, named by the body's field, or the message. */
function refusal(e: ApiError): Refused {
  const errors = e.details.errors as Record<string, string[]> | undefined;
  if (!errors) return new Refused(e.message);
  return new Refused(Object.entries(errors).flatMap(([field, problems]) => problems.map((p) => `${field}: ${p}`)).join('\n'));
}

type Row = Record<string, unknown>;

/** The API's record with the issuer's account, which its path says there. */
function row(accountId: string, v: IssuerView): Row {
  const { id, ...rest } = v;
  return Object.assign({ id, accountId }, rest);
}

const issText = (v: IssuerView) => (v.issuer === null ? '(none)' : printable(v.issuer));
const keyIdText = (v: IssuerView) => (v.keyIds.length === 0 ? 'any' : v.keyIds.map(printable).join(', '));
const policyText = (v: IssuerView) => `${v.policyTokenId} (${v.policyTokenKind ?? 'missing: every JWT is refused'})`;
const stateText = (v: IssuerView) => (v.isActive ? 'active' : 'disabled');

function table(rows: IssuerView[]): string {
  const head = ['ID', 'LABEL', 'ISS', 'KEY IDS', 'ALGORITHMS', 'POLICY TOKEN', 'STATE'];
  // a signed-URL issuer's format stands where a JWT issuer's algorithms do
  const cells = rows.map((v) => [String(v.id), printable(v.label), issText(v), keyIdText(v), v.type === 'jwt' ? v.algorithms.join(', ') : v.type, policyText(v), stateText(v)]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  ');
  return [line(head), ...cells.map(line)].join('\n');
}

/** Where the issuer's keys are: the inline set's size, the URL, whether it has a secret (never the secret). */
function keysText(v: IssuerView): string {
  const parts: string[] = [];
  if (v.jwks !== null) parts.push(`${v.jwks.keys.length} inline key${v.jwks.keys.length === 1 ? '' : 's'}`);
  if (v.jwksUrl !== null) parts.push(printable(v.jwksUrl));
  if (v.hasSecret) parts.push('a secret');
  if (v.secretFrom !== null) parts.push(`the secret from ${printable(v.secretFrom)}`);
  if (v.settings !== null && 'publicKeys' in v.settings && v.settings.publicKeys.length > 0) parts.push(`${v.settings.publicKeys.length} public key${v.settings.publicKeys.length === 1 ? '' : 's'}`);
  if (v.hasSigningKey) parts.push('a signing key');
  if (v.signingKeyFrom !== null) parts.push(`the signing key from ${printable(v.signingKeyFrom)}`);
  return parts.join(', ') || 'none';
}

/** One issuer as `name: value` lines (every field of the record, the secret aside: --json). */
function details(accountId: string, v: IssuerView): string {
  const claims = Object.entries(v.claims).map(([k, p]) => `${k}=${printable(p as string)}`).join(', ');
  const fields: Array<[string, string]> = [
    ['id', String(v.id)],
    ['account', accountId],
    ['label', printable(v.label)],
    ['state', stateText(v)],
    ['policy token', policyText(v)],
    ['iss', issText(v)],
    ['key ids', keyIdText(v)],
    ['audience', v.audience.length === 0 ? 'any' : v.audience.map(printable).join(', ')],
    ['algorithms', v.algorithms.join(', ')],
    ['keys', keysText(v)],
    ['clock skew', `${v.clockSkewSeconds} s`],
    ['max lifetime', v.maxLifetimeSeconds === null ? 'the policy token bounds it' : `${v.maxLifetimeSeconds} s`],
    ['claims', claims],
    ['cookie', v.cookieName ?? 'none'],
    ['revoked', `${v.revoked.jti.length} jti, ${v.revoked.sub.length} sub, ${v.revoked.kid.length} kid`],
    ...(v.settings !== null ? ([
      ['type', v.type],
      ['settings', printable(JSON.stringify(Object.fromEntries(Object.entries(v.settings).filter(([k]) => k !== 'format' && k !== 'publicKeys'))))],
    ] as Array<[string, string]>) : []),
    ['rev', String(v.rev)],
    ['added', v.addedOn],
    ['updated', v.updatedOn],
  ];
  return fields.map(([k, x]) => `${`${k}:`.padEnd(14)}${x}`).join('\n');
}
