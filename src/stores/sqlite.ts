import type { DbHandle, Executor } from '../db/client.js';
import { sqliteStepDatabase } from '../db/sqlite-steps.js';
import type { SyncAdapters } from '../db/steps.js';
import { sqlitePosts } from '../posts/sqlite.js';
import { SQLITE_TEXT } from '../posts/rules.js';
import { PostStore } from '../posts/store.js';
import { glue } from './glue.js';
import type { Stores } from './index.js';

/** SQLite's answer to every port (a concern's statements as SQLite spells them). */
export const sqliteAdapters: SyncAdapters<Executor> = {
  posts: sqlitePosts,
  glue,
};

/** Every store, on SQLite. */
export function sqliteStores(handle: DbHandle): Stores {
  const db = sqliteStepDatabase(handle.db, sqliteAdapters);
  return {
    db,

    posts: new PostStore(db, SQLITE_TEXT),
  };
}
