/**
 * afterCommit through both runners: callbacks asked in a savepoint that rolled back, or in an
 * attempt that was retried, are not kept. A stand-in database answers the one port used here.
 */
import t from 'tap';
import { afterCommit, ask, inSavepoint, runAsync, runSync, type Steps, type SyncAdapters, type AsyncAdapters } from '../../src/db/steps.js';

type Tx = { depth: number };
// The steps ask a port the stores declare; here one of posts' methods stands in (its answer is ignored).
const sync = { posts: { contentVersion: () => 7 } } as unknown as SyncAdapters<Tx>;
const async = { posts: { contentVersion: async () => 7 } } as unknown as AsyncAdapters<Tx>;
const syncSavepoint = <T>(tx: Tx, body: (tx: Tx) => T) => body({ depth: tx.depth + 1 });
const asyncSavepoint = <T>(tx: Tx, body: (tx: Tx) => Promise<T>) => body({ depth: tx.depth + 1 });

function* steps(told: string[]): Steps<string> {
  yield* afterCommit(() => told.push('first'));
  yield* ask('posts', 'contentVersion', 'site');
  let attempts = 0;
  const kept = yield* inSavepoint(
    function* () {
      attempts++;
      yield* afterCommit(() => told.push(`attempt ${attempts}`));
      if (attempts < 2) throw new Error('again');
      return 'done';
    },
    { attempts: 3, retryIf: () => true },
  );
  try {
    yield* inSavepoint(function* () {
      yield* afterCommit(() => told.push('rolled back'));
      throw new Error('undone');
    });
  } catch {
    // The steps handle it: the transaction goes on without that savepoint's work.
  }
  yield* afterCommit(() => told.push('last'));
  return kept;
}

t.test('callbacks kept in order, none from a savepoint rolled back or an attempt retried', async (t) => {
  for (const [name, run] of [
    ['runSync', (told: string[], committed: (() => void)[]) => runSync(steps(told), sync, { depth: 0 }, syncSavepoint, committed)],
    ['runAsync', (told: string[], committed: (() => void)[]) => runAsync(steps(told), async, { depth: 0 }, asyncSavepoint, committed)],
  ] as const) {
    const told: string[] = [];
    const committed: (() => void)[] = [];
    t.equal(await run(told, committed), 'done', name);
    t.same(told, [], `${name}: nothing runs before the commit`);
    for (const callback of committed) callback();
    t.same(told, ['first', 'attempt 2', 'last'], `${name}: the kept callbacks, in order`);
  }
});
