import { WRITE_TRANSACTION, type Executor } from './client.js';
import { runSync, type Steps, type StepDatabase, type SyncAdapters } from './steps.js';

/** A savepoint in SQLite: Drizzle's nested transaction on better-sqlite3. */
const savepoint = <T>(tx: Executor, body: (tx: Executor) => T): T => tx.transaction(body);

/**
 * SQLite answering stores' steps: synchronously, a write inside one `BEGIN IMMEDIATE`
 * transaction (never spanning an `await`). One promise per call, none per statement.
 */
export function sqliteStepDatabase(db: Executor, adapters: SyncAdapters<Executor>): StepDatabase & {
  /** The steps run at once inside a caller's SQLite transaction (or on the connection). */
  runIn<T>(tx: Executor, steps: Steps<T>): T;
} {
  const runIn = <T>(tx: Executor, steps: Steps<T>) => runSync(steps, adapters, tx, savepoint);
  return {
    runIn,
    write: async (steps) => db.transaction((tx) => runIn(tx, steps()), WRITE_TRANSACTION),
    read: async (steps) => runIn(db, steps()),
  };
}
