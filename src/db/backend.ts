import { databaseFile, openDatabase, SERVER_BUSY_TIMEOUT_MS, type DbHandle, type OpenOptions } from './sqlite.js';
import type { PostgresHandle } from './postgres.js';
import type { DatabaseTarget } from './url.js';

/** What opening the database needs of the configuration. */
export interface DatabaseSettings {
  database: DatabaseTarget;
  /** DATA_DIR: SQLite's default file lives there. */
  dataDir: string;
}

/**
 * The database the service runs on, as DATABASE_URL chose it. plugins/db.ts builds its stores from it
 * (`kind` tells which database's); nothing else looks at it.
 */
export type Backend = ({ kind: 'sqlite'; sqlite: DbHandle } | { kind: 'postgres'; postgres: PostgresHandle }) & {
  /** Where the data is, without secrets: what /ready and the start-up log show. */
  location: DatabaseLocation;
  /** Rejects when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
};

export type DatabaseLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** Where the data is, for a person (the start-up log). */
export const describeDatabase = (location: DatabaseLocation) => (location.kind === 'sqlite' ? `SQLite file ${location.file}` : `PostgreSQL at ${location.url}`);

export interface BackendOptions {
  /** SQLite's lock wait (the server uses SERVER_BUSY_TIMEOUT_MS, the admin CLI the default). */
  busyTimeoutMs?: OpenOptions['busyTimeoutMs'];
  /** Errors of idle PostgreSQL connections (a restarted server): logged, never fatal. */
  onIdleError?(error: Error): void;
  /** SQLite opened on a full disk, held by this process alone (see openDatabase). */
  onFullDisk?: OpenOptions['onFullDisk'];
}

/**
 * How long a request waits for one of the pool's connections. Writes of one site queue on its
 * row lock, each holding a connection: a burst of them (200 at once) must wait its turn, not
 * fail. A server that is down refuses new connections at once whatever this is.
 */
const POOL_WAIT_MS = 15_000;

/** Opens the database of `config` (applying its pending migrations). */
export async function openBackend(config: DatabaseSettings, options: BackendOptions = {}): Promise<Backend> {
  const target = config.database;
  if (target.kind === 'postgres') {
    // Loaded only here: a service on SQLite never loads PostgreSQL's driver and stores.
    const { openPostgres } = await import('./postgres.js');
    const postgres = await openPostgres(target.url, { poolMax: target.poolMax, connectionTimeoutMs: POOL_WAIT_MS, onIdleError: options.onIdleError });
    return {
      kind: 'postgres',
      postgres,
      location: { kind: 'postgres', url: postgres.describe() },
      ping: () => postgres.ping(),
      close: () => postgres.close(),
    };
  }
  const sqlite = openDatabase(config.dataDir, { busyTimeoutMs: options.busyTimeoutMs ?? SERVER_BUSY_TIMEOUT_MS, file: target.path, onFullDisk: options.onFullDisk });
  const file = databaseFile(config.dataDir, target.path);
  return {
    kind: 'sqlite',
    sqlite,
    location: { kind: 'sqlite', file },
    ping: async () => sqlite.ping(),
    close: () => sqlite.close(),
  };
}
