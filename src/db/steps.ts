/*
 * The one bridge between a store's logic and the two databases. A store writes its logic once,
 * as steps: a generator that yields each question it has for the database (a method of one of
 * the ports below) and is resumed with the answer. SQLite answers at once, inside its
 * synchronous transaction (no promise per statement); PostgreSQL answers with promises. What a
 * store checks, in which order it writes, which events it raises and which errors it throws is
 * therefore the same code on both; only the adapters (one per port and database, holding the
 * SQL as each dialect spells it) differ.
 *
 * A port is an interface of synchronous methods, added to `Ports` by the concern that owns it
 * (declaration merging), e.g. in src/posts/port.ts:
 *
 *     declare module '../db/steps.js' { interface Ports { posts: PostPort } }
 *
 * Each database then has to answer it (`SyncAdapters`, `AsyncAdapters`): a port missing from
 * either database's adapters does not compile.
 *
 * Write steps as module-level generator functions or methods, and hand them over in an arrow
 * (`db.read(() => this.findSteps(id))`): V8 takes microseconds to make a generator function
 * anew (a `function* () {}` written inside a method), against a fraction of one to call one.
 */

/** The questions stores ask their database, by concern (each concern adds its port). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Ports {}

export type PortName = keyof Ports;

type Params<F> = F extends (...args: infer P) => unknown ? P : never;
type Answer<F> = F extends (...args: never[]) => infer R ? R : never;

/** One question: a port's method and its arguments. */
export type PortQuestion = {
  [P in PortName]: { [M in keyof Ports[P]]: { port: P; method: M; args: Params<Ports[P][M]> } }[keyof Ports[P]];
}[PortName];

/** Steps run in a savepoint of their own, again (up to `attempts` in all) while `retryIf` holds for their error. */
interface SavepointQuestion {
  port: null;
  steps: () => Steps<unknown>;
  attempts: number;
  retryIf: (error: unknown) => boolean;
}

/** A callback for once the transaction the steps run in has committed. */
interface CommitQuestion {
  port: null;
  committed: () => void;
}

export type Question = PortQuestion | SavepointQuestion | CommitQuestion;

/** The steps of a store's operation ending with a `T`. */
export type Steps<T> = Generator<Question, T, unknown>;

/** Asks the database one question; the runner resumes the steps with its answer. */
export function* ask<P extends PortName, M extends keyof Ports[P]>(port: P, method: M, ...args: Params<Ports[P][M]>): Generator<Question, Answer<Ports[P][M]>, unknown> {
  return (yield { port, method, args } as unknown as Question) as Answer<Ports[P][M]>;
}

/**
 * Runs `steps` (made afresh for each attempt) in a savepoint: a statement that fails there
 * undoes only their writes, and the transaction goes on. Where a unique index is the last word
 * (a slug a writer outside the store took meanwhile), `retryIf` names the errors worth another go.
 */
export function* inSavepoint<T>(steps: () => Steps<T>, { attempts = 1, retryIf = () => false }: { attempts?: number; retryIf?: (error: unknown) => boolean } = {}): Steps<T> {
  return (yield { port: null, steps, attempts, retryIf }) as T;
}

/**
 * Has `callback` run once the transaction the steps run in has committed, and never when it
 * rolls back, nor when the savepoint it was asked in does: what a process keeps beside the
 * database (a cache) then follows only what the database kept. Steps run outside a
 * transaction (reads) have it run when they end; steps run inside a caller's own transaction
 * (`runIn`) never have it run, since when that commits is the caller's to know.
 */
export function* afterCommit(callback: () => void): Steps<void> {
  yield { port: null, committed: callback };
}

/** Runs what the steps of a transaction asked to run once it has committed. */
export function runCommitted(callbacks: readonly (() => void)[]): void {
  for (const callback of callbacks) callback();
}

/** A port as one database answers it at once, inside transaction (or connection) `Tx`. */
export type SyncAdapter<Port, Tx> = { [M in keyof Port]: (tx: Tx, ...args: Params<Port[M]>) => Answer<Port[M]> };
/** A port as one database answers it with promises. */
export type AsyncAdapter<Port, Tx> = { [M in keyof Port]: (tx: Tx, ...args: Params<Port[M]>) => Promise<Answer<Port[M]>> };

/** Every port, answered at once: what SQLite gives. */
export type SyncAdapters<Tx> = { [P in PortName]: SyncAdapter<Ports[P], Tx> };
/** Every port, answered with promises: what PostgreSQL gives. */
export type AsyncAdapters<Tx> = { [P in PortName]: AsyncAdapter<Ports[P], Tx> };

type AnyAdapters<Tx> = Record<string, Record<string, (tx: Tx, ...args: unknown[]) => unknown>>;

const answer = <Tx>(adapters: AnyAdapters<Tx>, tx: Tx, question: Question) => {
  const { port, method, args } = question as unknown as { port: string; method: string; args: unknown[] };
  return adapters[port]![method]!(tx, ...args);
};

/** How a database opens a savepoint inside transaction `tx` and runs `body` in it. */
export type SyncSavepoint<Tx> = <T>(tx: Tx, body: (tx: Tx) => T) => T;
export type AsyncSavepoint<Tx> = <T>(tx: Tx, body: (tx: Tx) => Promise<T>) => Promise<T>;

/**
 * Runs steps against a database that answers at once; what they ask to run after the commit
 * (`afterCommit`) is added to `committed`.
 */
export function runSync<T, Tx>(steps: Steps<T>, adapters: SyncAdapters<Tx>, tx: Tx, savepoint: SyncSavepoint<Tx>, committed: (() => void)[] = []): T {
  const all = adapters as unknown as AnyAdapters<Tx>;
  let step = steps.next();
  while (!step.done) {
    const question = step.value;
    if (isCommitCallback(question)) {
      committed.push(question.committed);
      step = steps.next();
      continue;
    }
    if (isSavepoint(question)) {
      const outcome = attempt(question, () => {
        // Callbacks asked in an attempt that rolled back are not kept.
        const inner: (() => void)[] = [];
        const value = savepoint(tx, (insideTx) => runSync(question.steps(), adapters, insideTx, savepoint, inner));
        committed.push(...inner);
        return { ok: true, value };
      });
      // The steps that asked may handle a failure (a conflict answered as 409, say).
      step = outcome.ok ? steps.next(outcome.value) : steps.throw(outcome.error);
      continue;
    }
    step = steps.next(answer(all, tx, question));
  }
  return step.value;
}

const isCommitCallback = (question: Question): question is CommitQuestion => 'committed' in question;
const isSavepoint = (question: Question): question is SavepointQuestion => question.port === null && !('committed' in question);

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function attempt(question: SavepointQuestion, run: () => Outcome): Outcome {
  for (let n = 1; ; n++) {
    try {
      return run();
    } catch (error) {
      if (n >= question.attempts || !question.retryIf(error)) return { ok: false, error };
    }
  }
}

/** Runs steps against a database that answers with promises (`committed` as in runSync). */
export async function runAsync<T, Tx>(steps: Steps<T>, adapters: AsyncAdapters<Tx>, tx: Tx, savepoint: AsyncSavepoint<Tx>, committed: (() => void)[] = []): Promise<T> {
  const all = adapters as unknown as AnyAdapters<Tx>;
  let step = steps.next();
  while (!step.done) {
    const question = step.value;
    if (isCommitCallback(question)) {
      committed.push(question.committed);
      step = steps.next();
      continue;
    }
    if (isSavepoint(question)) {
      let outcome: Outcome;
      for (let attempt = 1; ; attempt++) {
        try {
          const inner: (() => void)[] = [];
          outcome = { ok: true, value: await savepoint(tx, (insideTx) => runAsync(question.steps(), adapters, insideTx, savepoint, inner)) };
          committed.push(...inner);
          break;
        } catch (error) {
          if (attempt >= question.attempts || !question.retryIf(error)) {
            outcome = { ok: false, error };
            break;
          }
        }
      }
      step = outcome.ok ? steps.next(outcome.value) : steps.throw(outcome.error);
      continue;
    }
    step = steps.next(await answer(all, tx, question));
  }
  return step.value;
}

/**
 * A database as stores see it: it runs their steps. Built once per database by
 * sqliteStores/postgresStores; stores hold it and never the connection.
 */
export interface StepDatabase {
  /** Runs the steps (made afresh should the database retry) in one write transaction. */
  write<T>(steps: () => Steps<T>): Promise<T>;
  /** Runs the steps outside a transaction of their own: reads, or one statement. */
  read<T>(steps: () => Steps<T>): Promise<T>;
}
