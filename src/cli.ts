// The streamgate command: operator tasks that work directly on the configured store.
//   streamgate serve [--config file]
//   streamgate accounts create --name <name>
//   streamgate accounts list
//   streamgate accounts secret refresh|delete <accountId>
//   streamgate keys rotate [director|viewer]
//   streamgate tokens list|show|create|enable|disable|delete ... (src/cli-tokens.ts)
//   streamgate issuers list|show|create|update|delete ... (src/cli-issuers.ts)
//   streamgate store session-records [compact|json]
//   streamgate sign-subscribe --token <token> --token-id <id> --stream <name> [--expires-in 600] ...
//   streamgate help
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.js';
import type { Config } from './config/schema.js';
import { createLogger } from './observability/logger.js';
import { createStore, createTokenService, usesRedis } from './services.js';
import { AccountService, accountView } from './management/accounts.js';
import { AccountNameTaken } from './errors.js';
import { KeyRing } from './director/keys.js';
import { CredentialKeys } from './sessions/credential-keys.js';
import { signSubscribeJwt, SELF_SIGNED_ALGS, type SelfSignedAlg } from './policy/self-signed.js';
import { TOKEN_VERBS, UsageError, runTokenCommand, tokenCommand, type StreamArg, type TokenVerb } from './cli-tokens.js';
import { ISSUER_VERBS, issuerCommand, runIssuerCommand, type IssuerVerb } from './cli-issuers.js';
import { IssuerService, issuerLimits } from './management/issuers.js';
import { KeySources } from './enforce/key-sources.js';
import { copyWith } from './domain/objects.js';
import { CLI_ACTOR } from './audit/actor.js';
import { AuditKeyMissing, AuditLog } from './audit/log.js';
import { auditKey } from './audit/key.js';
import { SESSION_RECORDS_META, isSessionRecordForm } from './store/redis/session-record.js';

export const USAGE = `usage:
  streamgate serve [--config <file>]
  streamgate accounts create --name <name>
  streamgate accounts list
  streamgate accounts secret refresh <accountId>
  streamgate accounts secret delete <accountId>
  streamgate keys rotate [director|viewer]
                              director (the default): the director's JWT signing key;
                              viewer: the key of HTTP viewer credentials (the previous one is
                              accepted for one credential life; unused with sessions.http.secret)
  streamgate tokens list [--kind publish|subscribe] [--show-values]
  streamgate tokens show <id> [--show-values]
  streamgate tokens create --label <label> (--stream <name> | --stream-regex <pattern>)...
      [--kind publish|subscribe, default subscribe] [--expires <ISO 8601 time> | --expires-in <seconds>]
  streamgate tokens enable|disable|delete <id>
                              every tokens command: [--account <id>] (needed when the store holds
                              more than one account), [--json] (one JSON record a line); show,
                              enable, disable and delete find the token's kind (or take --kind);
                              list and show print no token value without --show-values
  streamgate issuers list
  streamgate issuers show <id>
  streamgate issuers create (--from <JSON file> | --body <JSON>)
  streamgate issuers update <id> (--from <JSON file> | --body <JSON>)
  streamgate issuers delete <id>
                              the JSON is the body of POST /api/issuers (update: of PUT, the
                              fields to change, rev optional); a secret only in a --from file;
                              every issuers command: [--account <id>], [--json]; no secret is printed
  streamgate store session-records [compact|json]
                              on Redis: which form session records are written in (shows it
                              without an argument); switch a store an earlier build used to
                              compact once every instance runs this build
  streamgate sign-subscribe --token <subscribe token> --token-id <id> --stream <name>
      [--expires-in <seconds, default 600>] [--tracking-id <id>] [--origin <host>]... [--ip <cidr>]...
      [--custom-viewer-data <text>] [--alg HS256|HS384|HS512]
  streamgate help             this text (also --help, -h)
options:
  --config <file>   settings file layered over config/default.yaml (also STREAMGATE_CONFIG)
The commands on accounts, keys, tokens and issuers work on the store the server uses: dataDir
(STREAMGATE_DATA_DIR, default ./data, relative to the current directory) or Redis (REDIS_URL).
Exit codes: 0 done, 1 refused or failed (the message says why), 2 a wrong command line.`;

type Out = { out: (s: string) => void; err: (s: string) => void };

/**
 * What a store command does to a store that is not there yet: `creates` starts a new one (with a
 * warning), `needs` refuses, since it can only read or change what an existing store holds.
 */
const STORE_COMMANDS: Record<string, 'creates' | 'needs'> = {
  'accounts create': 'creates',
  'keys rotate': 'creates',
  'keys rotate director': 'creates',
  'keys rotate viewer': 'creates',
  'accounts list': 'needs',
  'store session-records': 'needs',
  'accounts secret refresh': 'needs',
  'accounts secret delete': 'needs',
  ...Object.fromEntries(TOKEN_VERBS.map((v) => [`tokens ${v}`, 'needs' as const])),
  ...Object.fromEntries(ISSUER_VERBS.map((v) => [`issuers ${v}`, 'needs' as const])),
};

/** The store command the positionals name, or a usage error naming what is unknown. */
function storeCommand(positionals: string[]): string {
  const [group, verb, a] = positionals;
  const name =
    (group === 'accounts' && verb === 'secret') || (group === 'keys' && verb === 'rotate') ? `${group} ${verb} ${a ?? ''}`.trim() : `${group} ${verb ?? ''}`.trim();
  if (name in STORE_COMMANDS) return name;
  if (group !== 'accounts' && group !== 'keys' && group !== 'tokens' && group !== 'issuers' && group !== 'store') throw new UsageError(`unknown command '${positionals.join(' ')}'`);
  throw new UsageError(`unknown command '${positionals.slice(0, 3).join(' ')}'`);
}

/**
 * The embedded store is a file under dataDir, relative to the current directory: run from another
 * directory, a command would open (and create) an empty store nobody serves. Returns the message
 * that refuses the command, or null; a creating command gets a warning on stderr instead.
 */
function checkStoreExists(command: string, config: Config, io: Out): string | null {
  if (usesRedis(config)) return null;
  const dir = path.resolve(config.dataDir);
  const file = path.resolve(dir, config.store.sqliteFile);
  if (existsSync(file)) return null;
  const where = existsSync(dir) ? `no store file ${file}` : `the data dir ${dir} does not exist`;
  const fix = 'set STREAMGATE_DATA_DIR (or dataDir in a --config file) to the data dir the server uses, or REDIS_URL for a Redis store';
  if (STORE_COMMANDS[command] === 'needs') {
    const relative = path.isAbsolute(config.dataDir) ? '' : ` (dataDir '${config.dataDir}' is relative to the current directory ${process.cwd()})`;
    return `streamgate: ${command}: ${where}, so there is nothing to read${relative}; ${fix}`;
  }
  io.err(`streamgate: warning: ${where}; '${command}' creates a new empty store at ${file}. If the server uses another store, ${fix}.`);
  return null;
}

/**
 * Runs one command. Returns the exit code: 0 done, 1 failed (message on err), 2 usage or
 * configuration error (message and usage on err), -1 `serve` (the process keeps running).
 */
export async function runCli(argv: string[], io: Out, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    return await run(argv, io, env);
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`streamgate: ${(e as Error).message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof ConfigError) {
      io.err(`streamgate: ${e.message}`);
      return 2;
    }
    if (e instanceof AuditKeyMissing) {
      io.err(`streamgate: ${e.publicMessage}`);
      return 1;
    }
    throw e;
  }
}

async function run(argv: string[], io: Out, env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: {
      config: { type: 'string' },
      name: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      token: { type: 'string' },
      'token-id': { type: 'string' },
      stream: { type: 'string', multiple: true },
      'stream-regex': { type: 'string', multiple: true },
      account: { type: 'string' },
      kind: { type: 'string' },
      label: { type: 'string' },
      expires: { type: 'string' },
      json: { type: 'boolean' },
      'show-values': { type: 'boolean' },
      'expires-in': { type: 'string' },
      'tracking-id': { type: 'string' },
      origin: { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      'custom-viewer-data': { type: 'string' },
      alg: { type: 'string' },
      from: { type: 'string' },
      body: { type: 'string' },
    },
  });
  if (values.help || positionals[0] === 'help') {
    io.out(USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given');
  if (positionals[0] === 'serve') {
    await import('./main.js');
    return -1; // keeps running
  }
  if (positionals[0] === 'sign-subscribe') {
    // Pure computation: needs no store, so it works anywhere the parent token is known.
    const tokenId = Number(values['token-id']);
    const expiresIn = Number(values['expires-in'] ?? 600);
    if (!values.token) throw new UsageError('sign-subscribe needs --token <subscribe token>');
    if (!Number.isInteger(tokenId) || tokenId < 1) throw new UsageError('sign-subscribe needs --token-id <positive integer>');
    if (!values.stream) throw new UsageError('sign-subscribe needs --stream <name>');
    if (values.stream.length > 1) throw new UsageError('sign-subscribe takes one --stream <name>');
    if (!Number.isInteger(expiresIn) || expiresIn < 1) throw new UsageError('--expires-in must be a positive number of seconds');
    const alg = (values.alg ?? 'HS256').toUpperCase();
    if (!(SELF_SIGNED_ALGS as readonly string[]).includes(alg)) throw new UsageError('--alg must be HS256, HS384 or HS512');
    io.out(
      await signSubscribeJwt({
        token: values.token,
        tokenId,
        streamName: values.stream[0]!,
        expiresInSeconds: expiresIn,
        trackingId: values['tracking-id'],
        allowedOrigins: values.origin,
        allowedIpAddresses: values.ip,
        customViewerData: values['custom-viewer-data'],
        alg: alg as SelfSignedAlg,
      }),
    );
    return 0;
  }
  // Everything is checked before the store is opened: a mistyped command creates nothing.
  const command = storeCommand(positionals);
  const [, , a, b] = positionals;
  const tokensCommand = positionals[0] === 'tokens' ? tokenCommand(positionals[1] as TokenVerb, positionals.slice(2), values, optionNames(tokens), streamArgs(tokens)) : null;
  const issuersCommand = positionals[0] === 'issuers' ? issuerCommand(positionals[1] as IssuerVerb, positionals.slice(2), values, optionNames(tokens)) : null;
  if (command === 'accounts create' && !values.name?.trim()) throw new UsageError('accounts create needs --name <name> (not blank)');
  if (command.startsWith('accounts secret') && !b) throw new UsageError(`${command} needs an account id`);
  if (command === 'store session-records' && a !== undefined && !isSessionRecordForm(a)) throw new UsageError(`store session-records takes compact or json, not '${a}'`);
  const config = loadConfig({ file: values.config, env });
  if (command === 'store session-records' && !usesRedis(config)) {
    io.err('streamgate: store session-records: the embedded store keeps session records in SQLite rows, in one form; the setting is for a Redis store (REDIS_URL)');
    return 1;
  }
  const refusal = checkStoreExists(command, config, io);
  if (refusal) {
    io.err(refusal);
    return 1;
  }
  const logger = createLogger('warn');
  const store = await createStore(config, logger);
  // Every write is recorded as the server records it, actor `cli` (docs/api.md#audit-log), with the
  // server's key: configured, or the embedded store's <dataDir>/audit-key (made here when the store is new).
  const audit = new AuditLog(store, auditKey(config, { embedded: !usesRedis(config), create: true }).key, config.audit, logger);
  // without the key, a store that keeps chains refuses the CLI's writes (AuditKeyMissing) too
  await audit.checkKey(false);
  const accounts = new AccountService(store, Date.now, audit);
  try {
    if (command === 'store session-records') {
      // settled first as the server settles it at start (an unset store gets its default)
      await store.upgrade?.();
      if (a !== undefined) await store.setMeta(SESSION_RECORDS_META, a);
      io.out(JSON.stringify({ sessionRecords: await store.getMeta(SESSION_RECORDS_META) }));
      return 0;
    }
    if (tokensCommand) {
      // Data of an earlier build brought up to this one's indexes, as the server does at start.
      await store.upgrade?.();
      // No running sessions here to end on a change: callers that re-ask see it (docs/api.md#running-sessions).
      const now = () => Date.now();
      const ctx = { store, accounts, tokens: createTokenService(config, store, { now, audit }), now, out: io.out };
      return await runTokenCommand(tokensCommand, ctx, io.err);
    }
    if (issuersCommand) {
      await store.upgrade?.();
      return await runIssuerCommand(
        issuersCommand,
        { accounts, issuers: new IssuerService(store, issuerLimits(config), Date.now, new KeySources(copyWith(config.issuers, { env })), audit), out: io.out },
        io.err,
      );
    }
    if (command === 'keys rotate' || command === 'keys rotate director') {
      const r = await KeyRing.rotate(store);
      io.out(JSON.stringify(r));
      return 0;
    }
    if (command === 'keys rotate viewer') {
      const r = await CredentialKeys.rotate(store);
      if (config.sessions.http.secret !== '') {
        io.err('streamgate: warning: sessions.http.secret is set, so credentials are signed with it and not with the rotated key; change the secret on every instance instead');
      }
      io.out(JSON.stringify(r));
      return 0;
    }
    if (command === 'accounts create') {
      // as the server does at start, before the store's first account (upgrade.ts settles what depends on it)
      await store.upgrade?.();
      let created: Awaited<ReturnType<AccountService['create']>>;
      try {
        created = await accounts.create(values.name!, CLI_ACTOR);
      } catch (e) {
        if (!(e instanceof AccountNameTaken)) throw e;
        io.err(`streamgate: accounts create: ${e.message}; account names are unique (compared without case and surrounding white space)`);
        return 1;
      }
      const { account, apiSecret } = created;
      io.out(JSON.stringify({ id: account.id, name: account.name, apiSecret, createdOn: account.createdOn }));
      return 0;
    }
    if (command === 'accounts list') {
      for (const acc of await accounts.list()) io.out(JSON.stringify(accountView(acc)));
      return 0;
    }
    if (a === 'refresh') {
      const apiSecret = await accounts.refreshSecret(b!, CLI_ACTOR);
      if (!apiSecret) {
        io.err(`streamgate: no account with id ${b}`);
        return 1;
      }
      io.out(JSON.stringify({ id: b, apiSecret }));
      return 0;
    }
    if (!(await accounts.deleteSecret(b!, CLI_ACTOR))) {
      io.err(`streamgate: no account with id ${b}`);
      return 1;
    }
    io.out(JSON.stringify({ id: b, apiSecret: null }));
    return 0;
  } finally {
    await store.close();
  }
}

type ArgToken = ReturnType<typeof parseArgs>['tokens'] extends Array<infer T> | undefined ? T : never;

/** The options given on the command line, by name. */
const optionNames = (tokens: ArgToken[] = []): string[] => tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : []));

/** The --stream and --stream-regex values, in the order given. */
const streamArgs = (tokens: ArgToken[] = []): StreamArg[] =>
  tokens.flatMap((t) =>
    t.kind === 'option' && (t.name === 'stream' || t.name === 'stream-regex') && t.value !== undefined
      ? [{ option: t.name === 'stream' ? ('--stream' as const) : ('--stream-regex' as const), streamName: t.value, isRegex: t.name === 'stream-regex' }]
      : [],
  );

const isMain = process.argv[1] !== undefined && /(?:cli\.[tj]s|streamgate(?:\.mjs)?)$/.test(process.argv[1]);
if (isMain) {
  runCli(process.argv.slice(2), { out: (s) => console.log(s), err: (s) => console.error(s) })
    .then((code) => {
      if (code >= 0) process.exit(code);
    })
    .catch((e: unknown) => {
      console.error(`streamgate: ${(e as Error).message}`);
      process.exit(1);
    });
}
