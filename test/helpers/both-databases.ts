import type { Test } from 'tap';
import { openDatabase, type DbHandle } from '../../src/db/sqlite.js';
import * as pgSchema from '../../src/db/pg-schema.js';
import type { PostgresHandle } from '../../src/db/postgres.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { tempDataDir } from './app.js';
import { openTestPostgres, startMigratedPostgres } from './postgres.js';

/** A SQLite and a PostgreSQL database holding the same sites, for tests that compare the two. */
export interface Databases {
  sqlite: ReturnType<typeof openDatabase>['db'];
  sqliteHandle: DbHandle;
  pg: PostgresHandle;
  url: string;
}

export async function bothDatabases(t: Test, sites: (typeof sqliteSchema.sites.$inferInsert)[]): Promise<Databases> {
  const sqliteHandle = openDatabase(tempDataDir(t));
  t.teardown(() => sqliteHandle.close());
  const url = await startMigratedPostgres(t);
  const pg = await openTestPostgres(t, url);
  for (const site of sites) {
    sqliteHandle.db.insert(sqliteSchema.sites).values(site).run();
    await pg.db.insert(pgSchema.sites).values(site);
  }
  return { sqlite: sqliteHandle.db, sqliteHandle, pg, url };
}
