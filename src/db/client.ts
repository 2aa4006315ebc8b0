import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { BaseSQLiteDatabase } from 'drizzle-orm/sqlite-core';
import { foldText, slugify } from '../text/slug.js';
import * as schema from './schema.js';

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

export interface DbHandle {
  db: Db;
  /** Changes exactly when another connection (the admin CLI, say) has committed. */
  dataVersion(): number;
  /** Throws when the database cannot answer. */
  ping(): void;
  close(): void;
}

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
}

/** Opens (creating if needed) DATA_DIR/blog.db in WAL mode and applies pending migrations. */
export function openDatabase(dataDir: string, { busyTimeoutMs = 5000 }: OpenOptions = {}): DbHandle {
  fs.mkdirSync(dataDir, { recursive: true });
  const sqlite = new Database(path.join(dataDir, DATABASE_FILE));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Tag and category pages match posts by the slug of their names; filters and search fold
  // case and accents (`cafe` finds "Café").
  sqlite.function('slugify', { deterministic: true }, (text) => slugify(String(text)));
  sqlite.function('fold', { deterministic: true }, (text) => (text === null ? null : foldText(String(text))));
  const db = drizzle(sqlite, { schema });
  migrate(db, { migrationsFolder: migrationsFolder() });
  sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  const dataVersion = sqlite.prepare<[], number>('PRAGMA data_version').pluck();
  const select1 = sqlite.prepare('select 1');
  return {
    db,
    dataVersion: () => dataVersion.get()!,
    ping: () => void select1.get(),
    close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
