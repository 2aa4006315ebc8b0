// The site and the marks (see job-effect.ts) of test/jobs/postgres-queue.test.ts, its worker
// processes and test/jobs/postgres-loop.test.ts, on PostgreSQL.
import { jobs, sites } from '../../src/db/pg-schema.js';
import type { PgExecutor } from '../../src/db/postgres.js';
import { count, eq } from '../../src/db/orm.js';

export const SITE_ID = 'site-1';

/** The site every job belongs to: it must exist before the first job is added. */
export async function insertSite(db: PgExecutor): Promise<void> {
  await db.insert(sites).values({ id: SITE_ID, name: 'Jobs', handle: 'jobs', createdAt: new Date() });
}

/** How many marks of `kind` committed. */
export async function markCount(db: PgExecutor, kind: string): Promise<number> {
  return (await db.select({ n: count() }).from(jobs).where(eq(jobs.kind, kind)))[0]!.n;
}
