import { aheadMark, failureAhead, forgetAhead, sendAhead, type PgExecutor, type PostgresHandle } from './postgres.js';
import { runAsync, runCommitted, type Steps, type StepDatabase, type AsyncAdapters } from './steps.js';
import { sql } from './orm.js';

let savepoints = 0;

/**
 * A savepoint in PostgreSQL, no round trip of its own: opened under a name of its own, sent
 * ahead of its steps' first statement, rolled back to should its steps fail, and otherwise left
 * to the transaction's end (releasing it would cost a round trip and change nothing a later
 * statement sees). Unique names keep nesting right: a rollback to an outer savepoint undoes the
 * inner ones with it.
 */
async function savepoint<T>(tx: PgExecutor, body: (tx: PgExecutor) => Promise<T>): Promise<T> {
  const name = `steps_${(savepoints = (savepoints + 1) % 1_000_000_000)}`;
  const mark = aheadMark(tx);
  sendAhead(tx, `savepoint ${name}`);
  try {
    return await body(tx);
  } catch (error) {
    // What failed first in its steps is what to tell (and to retry on): a statement sent ahead, or the error.
    const first = (await failureAhead(tx, mark)) ?? error;
    // Fails only where the transaction is lost anyway (a connection gone): then it ends with the first error.
    const undone = await tx.execute(sql.raw(`rollback to savepoint ${name}`)).then(() => true, () => false);
    if (undone) forgetAhead(tx, mark + 1);
    throw first;
  }
}

/**
 * PostgreSQL answering stores' steps with promises, a write in one READ COMMITTED transaction
 * holding one connection of the pool until it ends.
 */
export function postgresStepDatabase({ db, transaction }: Pick<PostgresHandle, 'db' | 'transaction'>, adapters: AsyncAdapters<PgExecutor>): StepDatabase & {
  /** The steps run inside a caller's PostgreSQL transaction (or on the pool); what they ask to run after a commit is not run (afterCommit). */
  runIn<T>(tx: PgExecutor, steps: Steps<T>): Promise<T>;
} {
  const run = <T>(tx: PgExecutor, steps: Steps<T>, committed?: (() => void)[]) => runAsync(steps, adapters, tx, savepoint, committed);
  return {
    runIn: (tx, steps) => run(tx, steps),
    write: async (steps) => {
      let committed: (() => void)[] = [];
      const result = await transaction((tx) => run(tx, steps(), (committed = [])));
      runCommitted(committed);
      return result;
    },
    read: async (steps) => {
      const committed: (() => void)[] = [];
      const result = await run(db, steps(), committed);
      runCommitted(committed);
      return result;
    },
  };
}
