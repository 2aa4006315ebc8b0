import fs from 'node:fs';
import type Database from 'better-sqlite3';
import t from 'tap';
import { openDatabase } from '../../src/db/sqlite.js';
import { sites } from '../../src/db/schema.js';
import { tempDataDir, waitFor } from '../helpers/app.js';

t.test('a listening server copies the write-ahead log into the database in the background, not in its commits', async (t) => {
  const handle = openDatabase(tempDataDir(t));
  t.teardown(() => handle.close());
  // drizzle's handle keeps its better-sqlite3 connection as $client; the Db type leaves it out.
  const sqlite = (handle.db as typeof handle.db & { $client: Database.Database }).$client;
  t.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000, 'SQLite checkpoints in commits by default');

  handle.startBackgroundCheckpoints();
  handle.startBackgroundCheckpoints(); // a second call changes nothing
  t.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 20_000, 'commits checkpoint only if the checkpointer falls behind');

  const databaseFile = sqlite.name;
  const before = fs.statSync(databaseFile).size;
  const insert = sqlite.prepare('insert into sites (id, name, handle, created_at) values (?, ?, ?, ?)');
  // One quick commit, well before the checkpointer's first turn (half a second after it starts).
  sqlite.transaction(() => {
    for (let i = 0; i < 1500; i++) insert.run(`site-${i}`, `Site ${i}`, `site-${i}`, Date.now());
  })();
  t.equal(fs.statSync(databaseFile).size, before, 'the commits left their pages in the log');
  // Only a checkpoint writes pages into the database file, and nobody here runs one.
  await waitFor(() => fs.statSync(databaseFile).size > before, 'the background checkpoint');
  t.equal(handle.db.select().from(sites).all().length, 1500, 'every row is there');
});

t.test('closing stops the checkpointer, and is done once its thread has ended', async (t) => {
  const dir = tempDataDir(t);
  const handle = openDatabase(dir);
  // The process's threads (Linux): the checkpointer is one of them while it lives.
  const threads = () => (fs.existsSync('/proc/self/task') ? fs.readdirSync('/proc/self/task').length : null);
  const before = threads();
  handle.startBackgroundCheckpoints();
  // Closed at once, while the thread is most likely still loading SQLite (a process that ended
  // then could abort, on Node 24: seen once in a suite run, not reproducible on demand). The close
  // settles after the thread has ended, its last turn having closed the last connection: SQLite
  // then removes the write-ahead log and its index, and nothing reopens them.
  await handle.close();
  t.equal(threads(), before, 'the checkpointer thread has ended when the close settles');
  t.same(
    fs.readdirSync(dir).filter((name) => name.startsWith('blog.db-')),
    [],
    'no -wal or -shm file left: the checkpointer had closed its connection',
  );
  handle.startBackgroundCheckpoints(); // after close: nothing to start
  await handle.close();
  t.pass('a second close has nothing to wait for');
});
