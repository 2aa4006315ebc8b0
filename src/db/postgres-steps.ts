import type { PgExecutor } from './postgres.js';
import { runAsync, type Steps, type StepDatabase, type AsyncAdapters } from './steps.js';

/** A savepoint in PostgreSQL: Drizzle's nested transaction. */
const savepoint = <T>(tx: PgExecutor, body: (tx: PgExecutor) => Promise<T>): Promise<T> => tx.transaction(body);

/**
 * PostgreSQL answering stores' steps with promises, a write in one READ COMMITTED transaction
 * holding one connection of the pool until it ends.
 */
export function postgresStepDatabase(db: PgExecutor, adapters: AsyncAdapters<PgExecutor>): StepDatabase & {
  /** The steps run inside a caller's PostgreSQL transaction (or on the pool). */
  runIn<T>(tx: PgExecutor, steps: Steps<T>): Promise<T>;
} {
  const runIn = <T>(tx: PgExecutor, steps: Steps<T>) => runAsync(steps, adapters, tx, savepoint);
  return {
    runIn,
    write: (steps) => db.transaction((tx) => runIn(tx, steps())),
    read: (steps) => runIn(db, steps()),
  };
}
