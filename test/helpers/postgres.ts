import { randomBytes } from 'node:crypto';
import tap from 'tap';
import { openPostgres, type PostgresHandle, type PostgresOptions } from '../../src/db/postgres.js';
import {
  adminQuery,
  adminUrlOf,
  createCluster,
  createMigratedTemplate,
  postgresUnavailable,
  removeClusterNow,
  sharedCluster,
  startServer,
  stopServer,
  withDatabase,
  type Cluster,
} from './postgres-cluster.js';

export { PG_BIN, postgresUnavailable } from './postgres-cluster.js';

// ---------------------------------------------------------------------------------------------
// A throwaway PostgreSQL for tests (test/helpers/postgres-cluster.ts), one fresh database per
// call: on the suite's shared cluster when it runs (its databases dropped when the file's tests
// end), else on a cluster of the test process's own, started on first use and removed whole when
// the process ends. A file that stops and restarts its server says so first (ownPostgres()). With
// TEST_DATABASE_URL set, that server is used instead (databases are created on it and dropped
// after each test; it cannot be stopped or restarted from here).
// ---------------------------------------------------------------------------------------------

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** CI=true (or any value but false/0): the PostgreSQL tests must run there, never skip. */
const inCI = !!process.env.CI && !/^(false|0)$/i.test(process.env.CI);

/**
 * The reason to skip a PostgreSQL test here, or false to run it: it runs wherever PostgreSQL can,
 * and always under CI, where a PostgreSQL that cannot be started fails the test instead.
 */
export function postgresSkip(): string | false {
  return (!inCI && postgresUnavailable()) || false;
}

/**
 * Defines a file's PostgreSQL tests, or skips the file saying why when PostgreSQL cannot run
 * here; under CI that is a failure instead.
 */
export function postgresTests(define: () => void): void {
  const unavailable = postgresUnavailable();
  if (!unavailable) {
    define();
  } else if (inCI) {
    tap.fail(`${unavailable}; under CI the PostgreSQL tests must run`);
  } else {
    tap.comment(unavailable);
    tap.plan(0, unavailable);
  }
}

/** Where this process's databases are made: the shared cluster, or a cluster of its own. */
interface Server {
  adminUrl: string;
  /** The migrated template, made on first use on an own cluster. */
  template: Promise<string> | null;
  /** This process's own cluster (one it can stop and restart), null on the shared one. */
  own: Cluster | null;
}

let server: Promise<Server> | null = null;
let wantsOwn = false;

/**
 * This file stops and restarts its PostgreSQL: it gets a cluster of its own, not the suite's
 * shared one. Called before the file's first database.
 */
export function ownPostgres(): void {
  if (server) throw new Error('ownPostgres() must come before the first test database');
  wantsOwn = true;
}

/** The databases made on the shared cluster: dropped when the file's tests have all ended. */
const madeOnShared: string[] = [];

async function ownCluster(): Promise<Server> {
  const cluster = await createCluster();
  const removeAtExit = () => removeClusterNow(cluster);
  // Last resort when the process ends without the root test's teardown (a crash, a kill).
  process.once('exit', removeAtExit);
  await startServer(cluster);
  tap.teardown(async () => {
    process.removeListener('exit', removeAtExit);
    await stopServer(cluster);
    removeClusterNow(cluster);
  });
  return { adminUrl: adminUrlOf(cluster), template: null, own: cluster };
}

function testServer(): Promise<Server> {
  server ??= (async () => {
    const shared = wantsOwn ? null : sharedCluster();
    if (!shared) return ownCluster();
    tap.teardown(async () => {
      // Best effort: the suite's `after` removes the whole cluster anyway.
      for (const name of madeOnShared.splice(0)) await adminQuery(shared.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    });
    return { adminUrl: shared.adminUrl, template: Promise.resolve(shared.template), own: null };
  })();
  return server;
}

/** The URL of the server's maintenance database, where databases are created and dropped. */
async function adminUrl(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  return (await testServer()).adminUrl;
}

/** Creates database `name` (`options` after its name), to be dropped when it is no longer wanted. */
async function createDatabase(t: Teardown, name: string, options = ''): Promise<string> {
  const admin = await adminUrl();
  await adminQuery(admin, `CREATE DATABASE ${name}${options}`);
  if (process.env.TEST_DATABASE_URL) t.teardown(() => adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  else if (!(await testServer()).own) madeOnShared.push(name);
  return withDatabase(admin, name);
}

/**
 * A fresh, empty database on the test PostgreSQL, and its postgres:// URL; in UTF8 unless
 * `encoding` says otherwise.
 */
export async function startPostgres(t: Teardown, options: { encoding?: 'UTF8' | 'SQL_ASCII' | 'LATIN1' } = {}): Promise<string> {
  const encoding = options.encoding ? ` ENCODING '${options.encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0` : '';
  return createDatabase(t, `test_${randomBytes(6).toString('hex')}`, encoding);
}

/**
 * A fresh database with every migration applied, and its URL, for a test app: a copy of a
 * migrated template (the shared cluster's, or one made on first use on an own cluster). On
 * TEST_DATABASE_URL's server it is an empty one (the app migrates it), as startPostgres makes.
 */
export async function startMigratedPostgres(t: Teardown): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return startPostgres(t);
  const server = await testServer();
  server.template ??= createMigratedTemplate(server.adminUrl);
  return createDatabase(t, `test_${randomBytes(6).toString('hex')}`, ` TEMPLATE ${await server.template}`);
}

/** True when tests may stop and restart the test PostgreSQL (a file's own cluster: ownPostgres()). */
export function canControlPostgres(): boolean {
  return !process.env.TEST_DATABASE_URL;
}

async function controlled(): Promise<Cluster> {
  if (!canControlPostgres()) throw new Error('the PostgreSQL at TEST_DATABASE_URL cannot be stopped or restarted by tests');
  if (!server) throw new Error('no test PostgreSQL started yet: call startPostgres first');
  const { own } = await server;
  if (!own) throw new Error("this file shares the suite's PostgreSQL, which it may not stop: call ownPostgres() before its first database");
  return own;
}

/** Stops the test PostgreSQL at once (like a crash: `pg_ctl stop -m immediate`); its data stays. */
export async function stopPostgres(): Promise<void> {
  await stopServer(await controlled());
}

/** Starts the stopped test PostgreSQL again on the same port, with the same data. */
export async function restartPostgres(): Promise<void> {
  const c = await controlled();
  if (!c.running) await startServer(c);
}

/** The service's connection to `url` (a small pool unless told), closed when the test ends. */
export async function openTestPostgres(t: Teardown, url: string, options: PostgresOptions = { poolMax: 4 }): Promise<PostgresHandle> {
  const handle = await openPostgres(url, options);
  // tap reports a teardown's error without its message: say it (seen once, after a restart of the test PostgreSQL under load).
  t.teardown(() =>
    handle.close().catch((error: unknown) => {
      console.error('teardown: closing the PostgreSQL connections failed:', error);
      throw error;
    }),
  );
  return handle;
}
