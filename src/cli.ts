// The streamgate command: operator tasks that work directly on the configured store.
//   streamgate serve [--config file]
//   streamgate accounts create --name <name>
//   streamgate accounts list
//   streamgate accounts secret refresh|delete <accountId>
//   streamgate keys rotate
//   streamgate sign-subscribe --token <token> --token-id <id> --stream <name> [--expires-in 600] ...
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.js';
import { createLogger } from './observability/logger.js';
import { createStore } from './services.js';
import { AccountService, accountView } from './management/accounts.js';
import { KeyRing } from './director/keys.js';
import { signSubscribeJwt, SELF_SIGNED_ALGS, type SelfSignedAlg } from './policy/self-signed.js';

const USAGE = `usage:
  streamgate serve [--config <file>]
  streamgate accounts create --name <name>
  streamgate accounts list
  streamgate accounts secret refresh <accountId>
  streamgate accounts secret delete <accountId>
  streamgate keys rotate
  streamgate sign-subscribe --token <subscribe token> --token-id <id> --stream <name>
      [--expires-in <seconds, default 600>] [--tracking-id <id>] [--origin <host>]... [--ip <cidr>]...
      [--custom-viewer-data <text>] [--alg HS256|HS384|HS512]
options:
  --config <file>   settings file layered over config/default.yaml (also STREAMGATE_CONFIG)`;

class UsageError extends Error {}

type Out = { out: (s: string) => void; err: (s: string) => void };

export async function runCli(argv: string[], io: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      name: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      token: { type: 'string' },
      'token-id': { type: 'string' },
      stream: { type: 'string' },
      'expires-in': { type: 'string' },
      'tracking-id': { type: 'string' },
      origin: { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      'custom-viewer-data': { type: 'string' },
      alg: { type: 'string' },
    },
  });
  if (values.help || positionals.length === 0) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
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
    if (!Number.isInteger(expiresIn) || expiresIn < 1) throw new UsageError('--expires-in must be a positive number of seconds');
    const alg = (values.alg ?? 'HS256').toUpperCase();
    if (!(SELF_SIGNED_ALGS as readonly string[]).includes(alg)) throw new UsageError('--alg must be HS256, HS384 or HS512');
    io.out(
      await signSubscribeJwt({
        token: values.token,
        tokenId,
        streamName: values.stream,
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
  const config = loadConfig({ file: values.config });
  const logger = createLogger('warn');
  const store = await createStore(config, logger);
  const accounts = new AccountService(store);
  try {
    const [group, verb, a, b] = positionals;
    if (group === 'keys' && verb === 'rotate') {
      const r = await KeyRing.rotate(store);
      io.out(JSON.stringify(r));
      return 0;
    }
    if (group !== 'accounts') throw new UsageError(`unknown command '${positionals.join(' ')}'`);
    if (verb === 'create') {
      if (!values.name) throw new UsageError('accounts create needs --name <name>');
      const { account, apiSecret } = await accounts.create(values.name);
      io.out(JSON.stringify({ id: account.id, name: account.name, apiSecret, createdOn: account.createdOn }));
      return 0;
    }
    if (verb === 'list') {
      for (const acc of await accounts.list()) io.out(JSON.stringify(accountView(acc)));
      return 0;
    }
    if (verb === 'secret' && (a === 'refresh' || a === 'delete')) {
      if (!b) throw new UsageError(`accounts secret ${a} needs an account id`);
      if (a === 'refresh') {
        const apiSecret = await accounts.refreshSecret(b);
        if (!apiSecret) {
          io.err(`streamgate: no account with id ${b}`);
          return 1;
        }
        io.out(JSON.stringify({ id: b, apiSecret }));
        return 0;
      }
      if (!(await accounts.deleteSecret(b))) {
        io.err(`streamgate: no account with id ${b}`);
        return 1;
      }
      io.out(JSON.stringify({ id: b, apiSecret: null }));
      return 0;
    }
    throw new UsageError(`unknown command 'accounts ${[verb, a].filter(Boolean).join(' ')}'`);
  } finally {
    await store.close();
  }
}

const isMain = process.argv[1] !== undefined && /(?:cli\.[tj]s|streamgate(?:\.mjs)?)$/.test(process.argv[1]);
if (isMain) {
  runCli(process.argv.slice(2), { out: (s) => console.log(s), err: (s) => console.error(s) })
    .then((code) => {
      if (code >= 0) process.exit(code);
    })
    .catch((e: unknown) => {
      if (e instanceof UsageError || e instanceof ConfigError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        console.error(`streamgate: ${(e as Error).message}\n${USAGE}`);
        process.exit(2);
      }
      console.error(`streamgate: ${(e as Error).message}`);
      process.exit(1);
    });
}
