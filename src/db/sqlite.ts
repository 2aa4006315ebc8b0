import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { SQL, Table } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import { foldText, slugify } from '../text/slug.js';
import { isStorageFull } from '../errors.js';
import * as schema from './schema.js';
import { getTableColumns, sql, betterSqlite3, betterSqlite3Migrator } from './orm.js';

const { drizzle } = betterSqlite3;
const { migrate } = betterSqlite3Migrator;

export type Db = BetterSQLite3Database<typeof schema>;

/**
 * The database or a transaction open on it: what every data-layer function takes, so the
 * same function runs alone or inside a caller's transaction. Transactions are synchronous
 * (better-sqlite3) and never span an `await`.
 */
export type Executor = BaseSQLiteDatabase<'sync', Database.RunResult, typeof schema>;

/**
 * For transactions that read before they write: the write lock is taken at BEGIN (waiting on
 * the busy timeout), so the write cannot fail later for a snapshot another process has moved on.
 */
export const WRITE_TRANSACTION = { behavior: 'immediate' } as const;

/**
 * A statement built once per connection and reused: preparing is most of a small query's cost
 * (Drizzle builds the SQL, SQLite compiles it). A transaction runs on its database's
 * connection, so a statement prepared once serves the database and all its transactions.
 * `build` must be a module-level function (its identity is the cache key).
 */
const preparedStatements = new WeakMap<object, Map<(db: Executor) => unknown, unknown>>();

export function prepared<T>(db: Executor, build: (db: Executor) => T): T {
  // Drizzle's transactions share the session (and so the connection) of their database.
  const connection = (db as unknown as { session: object }).session;
  let statements = preparedStatements.get(connection);
  if (!statements) preparedStatements.set(connection, (statements = new Map()));
  let statement = statements.get(build) as T | undefined;
  if (statement === undefined) statements.set(build, (statement = build(db)));
  return statement;
}

/**
 * An insert of whole rows prepared once: every column of `table` as a placeholder named like
 * its field, filled by `driverRow`. (Drizzle's own placeholder encoding mishandles nulls.)
 */
export function placeholderRow<T extends Table>(table: T): { [K in keyof T['$inferInsert'] & string]: SQL } {
  return Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, sql`${sql.placeholder(key)}`])) as never;
}

/** A row's values as the driver stores them (each column's own encoding; null stays null). */
export function driverRow<T extends Table>(table: T, row: T['$inferInsert']): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = (row as Record<string, unknown>)[key];
    values[key] = value === null || value === undefined ? null : column.mapToDriverValue(value);
  }
  return values;
}

export interface DbHandle {
  db: Db;
  /** Changes exactly when another connection (the admin CLI, say) has committed. */
  dataVersion(): number;
  /** Throws when the database cannot answer. */
  ping(): void;
  /** Moves WAL checkpoints off the event loop, into a worker thread (a listening server). */
  startBackgroundCheckpoints(): void;
  /**
   * Closes the connection at once; the promise settles when the checkpointer thread has ended
   * too. A process must not exit before that: a thread still loading SQLite's native module as
   * the process ends aborts it (Node 24: `FATAL ERROR: Error::New napi_get_last_error_info`).
   */
  close(): Promise<void>;
}

/** Longest wait for the checkpointer's last turn before its thread is stopped. */
const CHECKPOINTER_STOP_MS = 5000;

/** How often the background checkpointer copies the write-ahead log into the database. */
const CHECKPOINT_INTERVAL_MS = 500;
/**
 * With background checkpoints, the size (in 4 KiB pages) at which a commit still checkpoints
 * itself: only reached if the checkpointer falls behind.
 */
const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000;
const CHECKPOINT_WORKER = new URL(`./checkpoint-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** The drizzle/ folder of this package, found from this file whether it runs from src/ or dist/. */
export function migrationsFolder(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'drizzle');
    if (fs.existsSync(path.join(candidate, 'meta', '_journal.json'))) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('drizzle/ migrations folder not found');
}

/** The database's file name inside DATA_DIR. */
export const DATABASE_FILE = 'blog.db';

/**
 * How long the server's statements wait for a lock another connection holds: SQLite waits
 * synchronously, on the event loop, so a long wait freezes every request. A backup tool's or
 * a shell's `BEGIN EXCLUSIVE` makes writes fail fast instead (503 DATABASE_BUSY, and the
 * background work backs off); migrations at start-up still wait the default.
 */
export const SERVER_BUSY_TIMEOUT_MS = 250;

export interface OpenOptions {
  /** Lock wait once open (default 5000 ms, for the admin CLI; the server uses SERVER_BUSY_TIMEOUT_MS). */
  busyTimeoutMs?: number;
  /** The database file (DATABASE_URL's path); DATA_DIR/blog.db by default. */
  file?: string | null;
  /** Told when the disk had no room for WAL mode's shared-memory file: the database is held by this process alone. */
  onFullDisk?: () => void;
}

/** SQLite could not make or grow blog.db-shm (or the log) for lack of space. */
const isNoRoomForWalIndex = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return isStorageFull(error) || (typeof code === 'string' && code.startsWith('SQLITE_IOERR_SHM'));
};

/** The file a SQLite database of DATA_DIR `dataDir` lives in: `file` when DATABASE_URL names one. */
export const databaseFile = (dataDir: string, file?: string | null) => file ?? path.join(dataDir, DATABASE_FILE);

/** Cosine distance of two int8 vectors, as sqlite-vec's vec_distance_cosine(vec_int8(a), vec_int8(b)) computes it. */
function int8CosineDistance(a: Buffer, b: Buffer): number {
  if (a.byteLength !== b.byteLength) throw new Error('vector dimensions differ');
  const x = new Int8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Int8Array(b.buffer, b.byteOffset, b.byteLength);
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < x.length; i++) {
    dot += x[i]! * y[i]!;
    nx += x[i]! * x[i]!;
    ny += y[i]! * y[i]!;
  }
  return 1 - dot / (Math.sqrt(nx) * Math.sqrt(ny) || 1);
}

/**
 * sqlite-vec (knowledge search's vector side: vec_distance_cosine over int8 vectors). Where its
 * prebuilt library cannot load (a platform it does not ship for), the same functions in
 * JavaScript stand in, for the int8 vectors the service stores: slower, same answers, and the
 * service still starts.
 */
function loadVectorFunctions(sqlite: Database.Database): void {
  try {
    sqliteVec.load(sqlite);
  } catch {
    // vec_int8 only marks a BLOB as int8 for sqlite-vec; here it is the BLOB itself.
    sqlite.function('vec_int8', { deterministic: true }, (blob) => blob);
    sqlite.function('vec_distance_cosine', { deterministic: true }, (a, b) => int8CosineDistance(a as Buffer, b as Buffer));
  }
}

/** Opens (creating if needed) DATA_DIR/blog.db (or `file`) in WAL mode and applies pending migrations. */
export function openDatabase(dataDir: string, { busyTimeoutMs = 5000, file = null, onFullDisk }: OpenOptions = {}): DbHandle {
  const location = databaseFile(dataDir, file);
  fs.mkdirSync(path.dirname(location), { recursive: true });
  let sqlite = new Database(location);
  let alone = false;
  try {
    sqlite.pragma('journal_mode = WAL');
    // The shared-memory index (blog.db-shm) is made at the first read, not by the pragma.
    sqlite.prepare('select count(*) from sqlite_master').get();
  } catch (error) {
    if (!isNoRoomForWalIndex(error)) throw error;
    // A restart on a full disk: there is no room for the shared-memory index WAL mode keeps
    // in blog.db-shm. Holding the database alone (exclusive locking mode) keeps that index in
    // this process's memory instead, so the service starts, reads, and writes again once
    // space is back; other processes (blog-admin) wait until the next restart.
    sqlite.close();
    sqlite = new Database(location);
    sqlite.pragma('locking_mode = EXCLUSIVE');
    sqlite.pragma('journal_mode = WAL');
    alone = true;
    onFullDisk?.();
  }
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Tag and category pages match posts by the slug of their names; filters and search fold
  // case and accents (`cafe` finds "Café").
  sqlite.function('slugify', { deterministic: true }, (text) => (text === null ? null : slugify(String(text))));
  sqlite.function('fold', { deterministic: true }, (text) => (text === null ? null : foldText(String(text))));
  loadVectorFunctions(sqlite);
  const db = drizzle(sqlite, { schema });
  migrate(db, { migrationsFolder: migrationsFolder() });
  sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  const dataVersion = sqlite.prepare<[], number>('PRAGMA data_version').pluck();
  const select1 = sqlite.prepare('select 1');
  let checkpointer: Worker | null = null;
  return {
    db,
    dataVersion: () => dataVersion.get()!,
    ping: () => void select1.get(),
    startBackgroundCheckpoints() {
      // SQLite checkpoints inside the commit that crosses 1,000 pages of log, on the event loop,
      // with an fsync: under a stream of writes that was a third of a post's creation.
      // Held alone, no other connection may open it: commits checkpoint for themselves.
      if (checkpointer || !sqlite.open || alone) return;
      checkpointer = new Worker(CHECKPOINT_WORKER, { workerData: { file: sqlite.name, intervalMs: CHECKPOINT_INTERVAL_MS } });
      checkpointer.unref();
      // Should the thread die, commits checkpoint for themselves again.
      checkpointer.on('error', () => {
        if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
      });
      sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
    },
    close() {
      const worker = checkpointer;
      checkpointer = null;
      if (sqlite.open) sqlite.close();
      if (!worker) return Promise.resolve();
      // It copies what is left and closes its own connection; a thread that does not end in
      // time (a checkpoint stuck on the disk) is stopped.
      const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      // Held (not unref'd) from now on, so that a process awaiting this stays up until it ends.
      worker.ref();
      worker.postMessage('stop');
      const stop = setTimeout(() => void worker.terminate(), CHECKPOINTER_STOP_MS);
      stop.unref();
      return ended.finally(() => clearTimeout(stop));
    },
  };
}
