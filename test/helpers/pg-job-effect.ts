// The effect of the jobs in test/postgres-queue.test.ts and its worker processes: a post whose
// source_task_id is the job's id. posts_source_task_unique allows one per job, so a job whose
// effect committed twice would fail loudly rather than pass unnoticed.
import { randomUUID } from 'node:crypto';
import { count } from 'drizzle-orm';
import { posts, sites } from '../../src/db/pg-schema.js';
import type { PgExecutor } from '../../src/db/postgres.js';

export const SITE_ID = 'site-1';

/** The site every post belongs to: it must exist before the first job commits. */
export async function insertSite(db: PgExecutor): Promise<void> {
  await db.insert(sites).values({ id: SITE_ID, name: 'Jobs', handle: 'jobs', createdAt: new Date() });
}

/** Commits the post of job `jobId`; what the job keeps as its result is the post's id. */
export async function commitPostFor(tx: PgExecutor, jobId: string): Promise<{ postId: string }> {
  const postId = randomUUID();
  const now = new Date();
  await tx.insert(posts).values({ id: postId, siteId: SITE_ID, slug: `post-${jobId}`, title: `Post of ${jobId}`, isDraft: false, sourceTaskId: jobId, createdAt: now, updatedAt: now });
  return { postId };
}

export async function postCount(db: PgExecutor): Promise<number> {
  return (await db.select({ n: count() }).from(posts))[0]!.n;
}
