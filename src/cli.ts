// The streamgate command: operator tasks that work directly on the configured store.
//   streamgate serve [--config file]
//   streamgate accounts create --name <name>
//   streamgate accounts list
//   streamgate accounts secret refresh|delete <accountId>
import { parseArgs } from 'node:util';
import { loadConfig, ConfigError } from './config/load.js';
import { createLogger } from './observability/logger.js';
import { createStore } from './services.js';
import { AccountService, accountView } from './management/accounts.js';

const USAGE = `usage:
  streamgate serve [--config <file>]
  streamgate accounts create --name <name>
  streamgate accounts list
  streamgate accounts secret refresh <accountId>
  streamgate accounts secret delete <accountId>
options:
  --config <file>   settings file layered over config/default.yaml (also STREAMGATE_CONFIG)`;

class UsageError extends Error {}

type Out = { out: (s: string) => void; err: (s: string) => void };

export async function runCli(argv: string[], io: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string' }, name: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help || positionals.length === 0) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
  if (positionals[0] === 'serve') {
    await import('./main.js');
    return -1; // keeps running
  }
  const config = loadConfig({ file: values.config });
  const logger = createLogger('warn');
  const store = await createStore(config, logger);
  const accounts = new AccountService(store);
  try {
    const [group, verb, a, b] = positionals;
    if (group !== 'accounts') throw new UsageError(`unknown command '${group}'`);
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
