import { createHash } from 'node:crypto';
import path from 'node:path';
import type { SQL } from 'drizzle-orm';
import type { NodePgDatabase, NodePgQueryResultHKT } from 'drizzle-orm/node-postgres';
import type { PgDatabase } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { PgContentVersions } from './pg-content-versions.js';
import { migrationsFolder } from './sqlite.js';
import { maskDatabaseUrl } from './url.js';
import { nodePostgres, nodePostgresMigrator, pgCore } from './pg-orm.js';

const { drizzle } = nodePostgres;
const { migrate } = nodePostgresMigrator;
const { PgDialect } = pgCore;

export { maskDatabaseUrl };

export type PgDb = NodePgDatabase;

/**
 * The database or a transaction open on it, as Executor is for SQLite: what a data-layer
 * function takes so that it runs alone or inside a caller's transaction. Unlike SQLite's, these
 * transactions are asynchronous and hold one connection of the pool until they end.
 */
export type PgExecutor = PgDatabase<NodePgQueryResultHKT>;

export interface PostgresHandle {
  db: PgDb;
  /** Runs `body` in one transaction on one connection of the pool: committed if it succeeds. */
  transaction<T>(body: (tx: PgExecutor) => Promise<T>): Promise<T>;
  /** Rejects when the database cannot answer. */
  ping(): Promise<void>;
  /** Ends every connection of the pool; calling it again does nothing. */
  close(): Promise<void>;
  /** The database's URL with its password hidden: for logs and readiness reports. */
  describe(): string;
  /** Sites' content versions as notified by the database (started by the stores; closed with the pool). */
  contentVersions: PgContentVersions;
}

export interface PostgresOptions {
  /** Most connections open at once (DATABASE_POOL_MAX; default 10). */
  poolMax?: number;
  /** Longest wait for a connection, new or from the pool, before a query fails (default 5000 ms). */
  connectionTimeoutMs?: number;
  /** Errors of idle connections (the server restarted, say): the pool drops them and goes on. */
  onIdleError?(error: Error): void;
}

export const DEFAULT_POOL_MAX = 10;

/**
 * Runs a hot statement as a named prepared statement of the connection (planned once per
 * connection, parsed never again), on the executor's own connection: the pool, or the
 * transaction's. Without a query builder's work per call: for the few statements every request
 * or write runs. Rows come as node-postgres gives them (timestamptz as Dates).
 */
export async function namedQuery<R extends Record<string, unknown>>(db: PgExecutor, name: string, text: string, values: unknown[]): Promise<R[]> {
  return (await connectionOf(db).query<R>({ name, text, values })).rows;
}

/** namedQuery for a statement that returns no rows: how many rows it changed. */
export async function namedChange(db: PgExecutor, name: string, text: string, values: unknown[]): Promise<number> {
  return (await connectionOf(db).query({ name, text, values })).rowCount ?? 0;
}

/** What an executor runs its statements on: the pool, or a transaction's own connection. */
export const connectionOf = (db: PgExecutor) => (db as unknown as { session: { client: pg.Pool | pg.PoolClient } }).session.client;

/** The statements sent ahead in each open transaction (see sendAhead), in the order sent. */
const sentAhead = new WeakMap<object, Promise<unknown>[]>();

function aheadOf(tx: PgExecutor): Promise<unknown>[] {
  const ahead = sentAhead.get(connectionOf(tx));
  if (!ahead) throw new Error('A statement is sent ahead only inside a transaction');
  return ahead;
}

/**
 * Sends a statement of a transaction whose answer nothing waits for (BEGIN, SAVEPOINT, a row
 * lock) ahead of the next one: the pool's connections pipeline, so both go in one round trip.
 * Should it fail, the statements behind it fail too ("transaction aborted"): the transaction,
 * and a savepoint rolled back, tell its failure instead (failureAhead), and the transaction
 * checks every one before it commits.
 */
export function sendAhead(tx: PgExecutor, statement: string | pg.QueryConfig): void {
  const ahead = aheadOf(tx);
  const sent = (connectionOf(tx) as pg.PoolClient).query(statement);
  sent.catch(() => {});
  ahead.push(sent);
}

/** Where a savepoint starts among its transaction's statements sent ahead. */
export const aheadMark = (tx: PgExecutor): number => aheadOf(tx).length;

/** The first failure of the transaction's statements sent ahead since `mark`, in the order sent. */
export async function failureAhead(tx: PgExecutor, mark = 0): Promise<unknown> {
  for (const sent of aheadOf(tx).slice(mark)) {
    const failure = await sent.then(
      () => undefined,
      (error: unknown) => error ?? new Error('A statement failed'),
    );
    if (failure !== undefined) return failure;
  }
  return undefined;
}

/** Forgets the statements sent ahead since `mark`: a savepoint rolled back undid them. */
export function forgetAhead(tx: PgExecutor, mark: number): void {
  aheadOf(tx).length = mark;
}

const dialect = new PgDialect();
/** Statement names by text: a name always stands for one text on every connection. */
const preparedNames = new Map<string, string>();

/**
 * A query built with Drizzle's `sql`, run as a named prepared statement (see namedQuery), named
 * after `prefix` and a hash of its text: each shape of the query (its number of search terms,
 * say) is planned once per connection, where a complex query's planning can cost more than its
 * execution. Values must be parameters, never spelled into the text (or each would be a shape).
 */
export function preparedQuery<R extends Record<string, unknown>>(db: PgExecutor, prefix: string, query: SQL): Promise<R[]> {
  const { sql: text, params } = dialect.sqlToQuery(query);
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `${prefix}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
    if (preparedNames.size < 1000) preparedNames.set(text, name);
  }
  return namedQuery<R>(db, name, text, params);
}

/** PostgreSQL's error for a duplicate key reported by `constraint` (Drizzle wraps it in `cause`). */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    const { code, constraint: reported } = e as { code?: unknown; constraint?: unknown };
    if (code === '23505' && reported === constraint) return true;
  }
  return false;
}

/**
 * A write whose refusal by one of the unique indexes `constraints` becomes `taken(cause)`: the
 * error a store retries on (or answers 409 with) when another instance took the value between
 * its look and its write.
 */
export function refusedByUnique(constraints: string | readonly string[], taken: (cause: unknown) => Error): (write: PromiseLike<unknown>) => Promise<void> {
  const names = typeof constraints === 'string' ? [constraints] : constraints;
  return async (write) => {
    try {
      await write;
    } catch (error) {
      throw names.some((name) => isUniqueViolation(error, name)) ? taken(error) : error;
    }
  };
}

/** The drizzle/postgres folder of this package: PostgreSQL's migrations, beside SQLite's. */
export function postgresMigrationsFolder(): string {
  return path.join(migrationsFolder(), 'postgres');
}

/**
 * The advisory lock that migrations run under, shared by every instance of the service on the
 * database: a constant key derived from a name (hashtextextended is stable across versions).
 */
const MIGRATION_LOCK_KEY = `hashtextextended('blog-service:migrations', 0)`;

/**
 * Refuses a server the migrations cannot work on, with a message saying what is missing, before
 * they fail halfway with a less helpful one: slugify(), fold() and search_text() need a UTF8
 * database (normalize()) and ICU's root collation.
 */
async function checkServer(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ encoding: string; version: number; icu: boolean }>(
    `select current_setting('server_encoding') as encoding, current_setting('server_version_num')::int as version,
            exists (select 1 from pg_collation where collname = 'und-x-icu') as icu`,
  );
  const { encoding, version, icu } = rows[0]!;
  const problems = [
    version < 140000 ? `PostgreSQL 14 or later is needed (this is ${Math.floor(version / 10000)})` : null,
    encoding !== 'UTF8' ? `the database must use the UTF8 encoding (it uses ${encoding})` : null,
    !icu ? 'PostgreSQL must be built with ICU (the collation "und-x-icu" is missing)' : null,
  ].filter((problem) => problem !== null);
  if (problems.length) throw new Error(`Unsuitable PostgreSQL database: ${problems.join('; ')}`);
}

/**
 * Applies pending migrations on a connection of its own, holding the migration lock: when
 * several instances start at once on an empty database, one migrates and the others wait for
 * it, then find nothing left to do. The lock is a session lock, so it is released however the
 * connection ends.
 */
async function migrateUnderLock(url: string, connectionTimeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectionTimeoutMs });
  // A connection that breaks while we wait is reported by the query that fails, not here.
  client.on('error', () => {});
  await client.connect();
  try {
    await checkServer(client);
    await client.query(`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    // drizzle's migrator runs every pending migration in one transaction, recording each.
    await migrate(drizzle(client), { migrationsFolder: postgresMigrationsFolder() });
    await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A transaction on a connection of the pool, its BEGIN sent with its first statement. The
 * connection goes back to the pool however the transaction ends, broken (so the pool drops it)
 * when even its rollback failed. (drizzle's own transaction() sends BEGIN before its try: a
 * connection that broke between its checkout and its BEGIN, a server stopping, was never given
 * back, one leaked per outage, and closing the pool then waited for it forever.)
 */
export async function inTransaction<T>(pool: pg.Pool, body: (tx: PgExecutor) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // Without a schema: drizzle() reads a schema's relations at every call (about 0.2 ms).
  const tx = drizzle(client);
  sentAhead.set(client, []);
  sendAhead(tx, 'begin');
  try {
    const result = await body(tx);
    // A statement that failed turns COMMIT into a rollback without an error: look first.
    const failed = await failureAhead(tx);
    if (failed !== undefined) throw failed;
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch((rollbackError: Error) => (broken = rollbackError));
    // The first failure is the one to tell: the statements behind it failed for it.
    throw (await failureAhead(tx)) ?? error;
  } finally {
    sentAhead.delete(client);
    client.release(broken);
  }
}

/**
 * Opens a pool of connections to the PostgreSQL database at `url` (postgres:// or
 * postgresql://) after applying pending migrations, and answers a handle on it.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresHandle> {
  const { poolMax = DEFAULT_POOL_MAX, connectionTimeoutMs = 5000, onIdleError } = options;
  await migrateUnderLock(url, connectionTimeoutMs);
  // Pipelined: a statement is sent without waiting for the answers to those before it (see sendAhead).
  const pool = new pg.Pool({ connectionString: url, max: poolMax, connectionTimeoutMillis: connectionTimeoutMs, pipeline: true });
  // Without a listener, an idle connection's error (a restarted server) would end the process.
  pool.on('error', (error) => onIdleError?.(error));
  // A connection that breaks while checked out but between statements (a transaction between its
  // BEGIN and its next query when the server stops) has no listener of the pool's: without one,
  // its 'error' would end the process. The transaction using it fails on its next statement.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzle(pool);
  const contentVersions = new PgContentVersions(url);
  let closed: Promise<void> | null = null;
  return {
    db,
    contentVersions,
    transaction: (body) => inTransaction(pool, body),
    async ping() {
      await pool.query('select 1');
    },
    close() {
      closed ??= contentVersions.close().then(() => pool.end());
      return closed;
    },
    describe: () => maskDatabaseUrl(url),
  };
}
