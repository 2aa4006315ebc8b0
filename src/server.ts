import Fastify from 'fastify';
import app, { serverOptions } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError, lockDataDir } from './db/lock.js';

async function main() {
  const config = loadConfig();
  const unlock = lockDataDir(config.dataDir);
  const server = Fastify(serverOptions(config));
  await server.register(app, {
    config,
    bootstrap: {
      onKey(siteId, key) {
        // Printed once: only the hash is stored, so this is the one chance to copy it.
        process.stdout.write(
          `\nCreated site "${config.siteName}" (${siteId}).\nIts API key, shown only this once:\n\n  ${key}\n\n` +
            'Use it as "Authorization: Bearer <key>". Manage keys with: npm run admin -- key create --site <siteId>\n\n',
        );
      },
    },
  });

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
    // Backstop: should closing hang (a stuck connection), leave anyway after the grace period.
    const timer = setTimeout(() => {
      server.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000);
    timer.unref();
    server.close().then(
      () => {
        unlock();
        process.exit(0);
      },
      (error) => {
        server.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  await server.listen({ port: config.port, host: config.host });
}

main().catch((error) => {
  // A bad setting or a taken data folder is the operator's to fix: say what, without a stack.
  if (error instanceof ConfigError) console.error(`Configuration error: ${error.message}`);
  else if (error instanceof DataDirLockedError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
