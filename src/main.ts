// Entry point: config → services → app → listen, first-start account, graceful shutdown.
import { loadConfig, ConfigError } from './config/load.js';
import type { Config } from './config/schema.js';
import { createServices } from './services.js';
import { createApp } from './app.js';
import { createHttpServer } from './http/server.js';
import { loadTls } from './http/tls.js';
import { configWarnings } from './observability/warnings.js';
import { flushLogs } from './observability/logger.js';

function configFileArg(argv: string[]): string | undefined {
  const i = argv.indexOf('--config');
  const eq = argv.find((a) => a.startsWith('--config='));
  const file = i >= 0 ? argv[i + 1] : eq?.slice('--config='.length);
  if ((i >= 0 || eq !== undefined) && (file === undefined || file === '' || file.startsWith('--'))) {
    throw new ConfigError('--config needs a file: --config <file>');
  }
  return file;
}

/** Why listening failed, with the setting that changes it. */
function listenFailure(e: NodeJS.ErrnoException, host: string, port: number): string {
  const at = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${at}: address already in use (set PORT or server.port)`;
    case 'EACCES':
      return `cannot listen on ${at}: permission denied${port < 1024 ? ' (ports below 1024 need privileges; set PORT or server.port)' : ''}`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${at}: address not available on this machine (set HOST or server.host)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${at}: unknown host (set HOST or server.host)`;
    default:
      return `cannot listen on ${at}: ${e.message}`;
  }
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const config: Config = loadConfig({ file: configFileArg(argv) });
  const tls = loadTls(config.server.tls);
  const services = await createServices(config, { firstStart: true });
  const { logger } = services;
  for (const warning of await configWarnings(config, services.accounts, services.audit)) logger.warn(warning);
  const app = createApp(services);
  const server = createHttpServer(app, tls);
  server.on('error', (e: NodeJS.ErrnoException) => {
    if (server.listening) {
      logger.error({ err: e.message }, 'server error');
      return;
    }
    // Cannot listen (port taken, no permission, no such address): one line on stderr, as for a
    // configuration error, rather than an unhandled 'error' stack.
    process.stderr.write(`streamgate: ${listenFailure(e, config.server.host, config.server.port)}\n`);
    setTimeout(() => process.exit(1), 2000).unref();
    void services.close(Date.now()).finally(() => process.exit(1));
  });
  server.listen(config.server.port, config.server.host, () => {
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
    logger.info({ host: config.server.host, port, store: services.store.kind, tls: tls !== null }, 'listening');
  });
  if (tls && 'setSecureContext' in server) {
    // A renewed certificate is taken up without a restart: new connections get it, open ones keep
    // theirs. A bad pair is refused and the one in use stays.
    const https = server;
    process.on('SIGHUP', () => {
      try {
        const next = loadTls(config.server.tls)!;
        https.setSecureContext({ cert: next.cert, key: next.key });
        logger.info('TLS certificate reloaded');
      } catch (e) {
        logger.error({ reason: (e as Error).message }, 'TLS certificate not reloaded; the previous one stays in use');
      }
    });
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Drain first: readiness fails and every answer closes its connection, so no client is left
    // holding an idle keep-alive socket when listening stops; in-flight requests then finish.
    services.draining = true;
    logger.info({ signal, delayMs: config.server.shutdownDelayMs }, 'shutting down');
    setTimeout(() => {
      // One deadline for requests and webhooks alike, so the process is gone within the grace.
      const deadline = Date.now() + config.server.shutdownGraceMs;
      const force = setTimeout(() => {
        logger.warn('shutdown grace period over; closing remaining connections');
        server.closeAllConnections();
      }, config.server.shutdownGraceMs);
      force.unref();
      server.close(async () => {
        clearTimeout(force); // every connection is gone; webhooks may still use the rest of the grace
        await services.close(deadline);
        logger.info('stopped');
        // A bounded last flush: a stalled log reader cannot hold the process past the grace.
        await flushLogs(logger);
        process.exit(0);
      });
      server.closeIdleConnections();
    }, config.server.shutdownDelayMs);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

// One line on stderr, last: exit code 2 when the configuration is wrong by itself (ConfigError: a
// file that cannot be read or parsed, an invalid setting, unreadable files a setting names), 1 for
// anything else, such as a store that cannot be reached (docs/operations.md#start-up-errors-and-exit-codes).
main().catch((e: unknown) => {
  const message = String((e as Error)?.message ?? e).replace(/\s*\n\s*/g, ' ');
  if (e instanceof ConfigError) {
    process.stderr.write(`streamgate: ${message}\n`);
    process.exit(2);
  }
  process.stderr.write(`streamgate: failed to start: ${message}\n`);
  process.exit(1);
});
