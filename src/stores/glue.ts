/*
 * glue until posts and knowledge land: the old posts and knowledge-files stores (PostService /
 * PgPostStore, KnowledgeFiles / PgKnowledgeFiles) call their listeners with their own
 * transaction, `(tx, event) => ...`, and insert posts in a transaction they are handed. These
 * bridge them to steps both ways. Once posts and knowledge are stores over the steps bridge
 * (posts.onChange((change) => Steps), files.onSettled((file) => Steps), posts' insertSteps),
 * this file goes, with the `glue` port in src/stores/sqlite.ts and src/stores/postgres.ts.
 */
import type { Executor } from '../db/client.js';
import type { PgExecutor } from '../db/postgres.js';
import { ask, type AsyncAdapter, type Steps, type SyncAdapter } from '../db/steps.js';
import type { KnowledgeFileRow } from '../db/schema.js';
import { isPromise, type MaybePromise } from '../maybe.js';
import type { PostChange, PostInput, PostOrigin, PostRow } from '../posts/rules.js';
import type { PostInserter } from '../tasks/generate-post.js';

/** Runs work written against an old store's API on the transaction under way (glue). */
export interface TransactionGluePort {
  inTransaction(work: (tx: never) => unknown): unknown;
}

declare module '../db/steps.js' {
  interface Ports {
    glue: TransactionGluePort;
  }
}

export const sqliteGlue: SyncAdapter<TransactionGluePort, Executor> = {
  inTransaction(tx, work) {
    const answer = work(tx as never);
    // A better-sqlite3 transaction commits when its callback returns: a promise would be work left outside it.
    if (isPromise(answer)) throw new TypeError('Work answered a promise inside a SQLite transaction, which must be synchronous');
    return answer;
  },
};

export const postgresGlue: AsyncAdapter<TransactionGluePort, PgExecutor> = {
  inTransaction: async (tx, work) => work(tx as never),
};

/** Steps run inside a transaction an old store opened (its listener's `tx`): at once on SQLite, a promise on PostgreSQL. */
export interface StepsInTransaction {
  runIn<T>(tx: unknown, steps: Steps<T>): MaybePromise<T>;
}

/** PostService / PgPostStore, as far as the glue needs them. */
interface OldPosts {
  insert(tx: never, siteId: string, input: PostInput, origin?: PostOrigin, now?: Date): MaybePromise<PostRow>;
  onChange(listener: (tx: unknown, change: PostChange) => MaybePromise<void>): void;
}

/** KnowledgeFiles / PgKnowledgeFiles, as far as the glue needs them. */
interface OldKnowledgeFiles {
  onSettled(listener: (tx: unknown, file: KnowledgeFileRow) => MaybePromise<void>): void;
}

/** The posts store's insertSteps, through the old `insert(tx, ...)`. */
export function postInserterGlue(posts: OldPosts): PostInserter {
  return {
    *insertSteps(siteId, input, origin, at) {
      return (yield* ask('glue', 'inTransaction', (tx) => posts.insert(tx, siteId, input, origin, at))) as PostRow;
    },
  };
}

/** posts.onChange((change) => Steps), through the old onChange((tx, change) => ...). */
export function onPostChange(posts: OldPosts, glue: StepsInTransaction, listener: (change: PostChange) => Steps<void>): void {
  posts.onChange((tx, change) => glue.runIn(tx, listener(change)));
}

/** knowledgeFiles.onSettled((file) => Steps), through the old onSettled((tx, file) => ...). */
export function onKnowledgeSettled(files: OldKnowledgeFiles, glue: StepsInTransaction, listener: (file: KnowledgeFileRow) => Steps<void>): void {
  files.onSettled((tx, file) => glue.runIn(tx, listener(file)));
}
