// First: refuses an unsupported Node before anything native loads.
import './node-version.js';
import Fastify from 'fastify';
import app, { serverOptions } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError, lockDataDir } from './db/lock.js';
import { maskDatabaseUrl } from './db/url.js';
import { isDatabaseUnavailable } from './errors.js';
import { StoreStartError } from './knowledge/storage.js';
import { setupUrl } from './accounts/rules.js';
import { serviceBaseUrl } from '../plugins/accounts.js';

/** Time the process may take, past SHUTDOWN_TIMEOUT_MS, to close connections and the database. */
const SHUTDOWN_MARGIN_MS = 2000;

async function main(config: Config) {
  // One server per SQLite data folder (its job loop returns every running task at start). On
  // PostgreSQL several instances share the database by design: tasks come back by lease expiry.
  const unlock = config.database.kind === 'sqlite' ? lockDataDir(config.dataDir) : () => {};
  const server = Fastify(serverOptions(config));
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
    // Backstop: should closing hang (a stuck connection), leave anyway after the grace period.
    const timer = setTimeout(() => {
      server.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs + SHUTDOWN_MARGIN_MS);
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
  const onTerm = () => shutdown('SIGTERM');
  const onInt = () => shutdown('SIGINT');

  try {
    await server.register(app, {
      config,
      bootstrap: {
        when: 'listen',
        onKey(siteId, key) {
          // Printed once: only the hash is stored, so this is the one chance to copy it.
          process.stdout.write(
            `\nCreated site "${config.siteName}" (${siteId}).\nIts API key, shown only this once:\n\n  ${key}\n\n` +
              'Use it as "Authorization: Bearer <key>". Manage sites and keys with: blog-admin site list\n' +
              '(npx blog-admin in a clone, docker exec <container> blog-admin in the image)\n\n',
          );
        },
        onOwnerSetup(email, token) {
          // The token rides in the URL's fragment, which browsers never send: no access log holds it.
          process.stdout.write(
            `Owner account ${email} (ADMIN_EMAIL): set its password within 24 hours, once, at\n\n  ${setupUrl(serviceBaseUrl(config), token)}\n\n` +
              'Lost it? blog-admin user reset-password --email ' + email + '\n\n',
          );
        },
      },
    });
    await server.ready(); // plugins' start-up errors surface here, not at register
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    await server.listen({ port: config.port, host: config.host });
  } catch (error) {
    // The start failed (the database or the store away, a port taken): what did start (pools,
    // the store's client, timers, the signal handlers) closes, so that a retry (see start)
    // begins from nothing.
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
    await server.close().catch(() => {});
    unlock();
    throw error;
  }
}

/** One start, in full: retried while what it needs cannot be reached yet, up to STARTUP_WAIT_SECONDS. */
async function start(config: Config) {
  const deadline = Date.now() + config.startupWaitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await main(config);
    } catch (error) {
      const left = deadline - Date.now();
      if (!mayPass(error, config) || left <= 0) throw error;
      const delay = Math.min(left, 500 * 2 ** Math.min(attempt - 1, 4));
      console.error(`${explain(error, config)}\nWaiting for it (STARTUP_WAIT_SECONDS): try ${attempt + 1} in ${(delay / 1000).toFixed(1)} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** A start-up failure that passes by itself: a PostgreSQL or a bucket not reachable yet (services of a compose file start together). */
function mayPass(error: unknown, config: Config): boolean {
  return (config.database.kind === 'postgres' && isDatabaseUnavailable(error)) || (error instanceof StoreStartError && error.transient);
}

/** A start-up failure the operator can fix, in one line; null for anything else (a bug: its stack helps). */
function explain(error: unknown, config: Config | null): string | null {
  if (error instanceof ConfigError) return `Configuration error: ${error.message}`;
  if (error instanceof DataDirLockedError || error instanceof StoreStartError) return error.message;
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  if (config && syscall === 'listen' && code === 'EADDRINUSE') {
    return `Port ${config.port} on ${config.host} is already in use (PORT): stop what uses it, or set PORT to a free port`;
  }
  if (config && syscall === 'listen' && code === 'EACCES') return `Not allowed to listen on port ${config.port} (PORT): use a port above 1023`;
  const message = (error as Error)?.message ?? '';
  if (config?.database.kind === 'postgres') {
    if (message.startsWith('Unsuitable PostgreSQL database')) return `${message} (DATABASE_URL)`;
    // Unreachable (as mid-run), or the login or the database refused (classes 28 and 3D).
    if (isDatabaseUnavailable(error) || /^(28|3D)/.test(String(code))) {
      return `Cannot use the PostgreSQL database at ${maskDatabaseUrl(config.database.url)} (DATABASE_URL): ${message || code}`;
    }
  }
  if (config && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOTDIR' || /SQLITE_(CANTOPEN|READONLY)|readonly database|unable to open/i.test(message))) {
    return (
      `Cannot write to DATA_DIR ${config.dataDir}${path && path !== config.dataDir ? ` (${path})` : ''}: ` +
      'make the folder writable by the user the service runs as (in the Docker image, a bind-mounted folder must belong to uid 1000: chown -R 1000:1000 <folder>)'
    );
  }
  return null;
}

let config: Config | null = null;
try {
  config = loadConfig();
  await start(config);
} catch (error) {
  const explained = explain(error, config);
  console.error(explained ?? error);
  process.exit(1);
}
