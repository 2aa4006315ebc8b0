import type Database from 'better-sqlite3';
import { WRITE_TRANSACTION, type Executor } from './sqlite.js';
import { runCommitted, runSync, type Steps, type StepDatabase, type SyncAdapters } from './steps.js';

/** The three statements of a savepoint, prepared once per connection. */
const savepointStatements = new WeakMap<Database.Database, { open: Database.Statement; release: Database.Statement; undo: Database.Statement }>();

/**
 * A savepoint in SQLite, on the connection's own prepared statements: Drizzle's nested
 * transaction prepares its SAVEPOINT and RELEASE anew each time and builds a transaction
 * object, a sixth of a post's creation. Savepoints of one name nest (the innermost is meant).
 */
function savepoint<T>(tx: Executor, body: (tx: Executor) => T): T {
  const client = (tx as unknown as { session: { client: Database.Database } }).session.client;
  let statements = savepointStatements.get(client);
  if (!statements) {
    statements = { open: client.prepare('savepoint steps'), release: client.prepare('release steps'), undo: client.prepare('rollback to steps') };
    savepointStatements.set(client, statements);
  }
  statements.open.run();
  let result: T;
  try {
    result = body(tx);
  } catch (error) {
    // Some errors (a full disk, say) make SQLite roll the whole transaction back itself: then
    // there is no savepoint left to undo, and the error to report is still the first one.
    if (client.inTransaction) {
      statements.undo.run();
      statements.release.run();
    }
    throw error;
  }
  statements.release.run();
  return result;
}

/**
 * SQLite answering stores' steps: synchronously, a write inside one `BEGIN IMMEDIATE`
 * transaction (never spanning an `await`). One promise per call, none per statement.
 */
export function sqliteStepDatabase(db: Executor, adapters: SyncAdapters<Executor>): StepDatabase & {
  /** The steps run at once inside a caller's SQLite transaction (or on the connection); what they ask to run after a commit is not run (afterCommit). */
  runIn<T>(tx: Executor, steps: Steps<T>): T;
} {
  const run = <T>(tx: Executor, steps: Steps<T>, committed?: (() => void)[]) => runSync(steps, adapters, tx, savepoint, committed);
  return {
    runIn: (tx, steps) => run(tx, steps),
    write: async (steps) => {
      let committed: (() => void)[] = [];
      const result = db.transaction((tx) => run(tx, steps(), (committed = [])), WRITE_TRANSACTION);
      runCommitted(committed);
      return result;
    },
    read: async (steps) => {
      const committed: (() => void)[] = [];
      const result = run(db, steps(), committed);
      runCommitted(committed);
      return result;
    },
  };
}
