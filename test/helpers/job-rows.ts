import type { FastifyInstance } from 'fastify';
import * as pgSchema from '../../src/db/pg-schema.js';
import * as sqliteSchema from '../../src/db/schema.js';
import type { KnowledgeFileRow } from '../../src/db/schema.js';
import type { JobOutcome } from '../../src/jobs/loop.js';
import type { JobRow } from '../../src/jobs/rules.js';
import type { PostInput } from '../../src/posts/store.js';
import { and, asc, count, eq } from '../../src/db/orm.js';

/**
 * Jobs, posts and the webhook outbox behind the API, on whichever database the app runs
 * (SQLite, or PostgreSQL with TEST_DATABASE=postgres): what tests of batches and webhooks check
 * or do beside the API.
 */
export function jobRows(app: FastifyInstance) {
  const { backend } = app;
  return {
    /** Jobs of a kind (of every kind when none is given). */
    async jobCount(kind?: string): Promise<number> {
      if (backend.kind === 'sqlite') {
        const { jobs } = sqliteSchema;
        return backend.sqlite.db.select({ n: count() }).from(jobs).where(kind === undefined ? undefined : eq(jobs.kind, kind)).get()!.n;
      }
      const { jobs } = pgSchema;
      return (await backend.postgres.db.select({ n: count() }).from(jobs).where(kind === undefined ? undefined : eq(jobs.kind, kind)))[0]!.n;
    },

    /** Webhook deliveries queued (not what the API lists: every endpoint's). */
    async deliveryCount(): Promise<number> {
      if (backend.kind === 'sqlite') return backend.sqlite.db.select({ n: count() }).from(sqliteSchema.webhookDeliveries).get()!.n;
      return (await backend.postgres.db.select({ n: count() }).from(pgSchema.webhookDeliveries))[0]!.n;
    },

    /** Which generator wrote a post (not shown by the API). */
    async generatorProvider(postId: string): Promise<string | null> {
      if (backend.kind === 'sqlite') {
        const { posts } = sqliteSchema;
        return backend.sqlite.db.select({ provider: posts.generatorProvider }).from(posts).where(eq(posts.id, postId)).get()?.provider ?? null;
      }
      const { posts } = pgSchema;
      return (await backend.postgres.db.select({ provider: posts.generatorProvider }).from(posts).where(eq(posts.id, postId)))[0]?.provider ?? null;
    },

    /** When the first pending job of a kind is due (epoch ms), if one is. */
    async nextDue(kind: string): Promise<number | undefined> {
      if (backend.kind === 'sqlite') {
        const { jobs } = sqliteSchema;
        const row = backend.sqlite.db.select({ runAfter: jobs.runAfter }).from(jobs).where(and(eq(jobs.kind, kind), eq(jobs.status, 'pending'))).orderBy(asc(jobs.runAfter)).limit(1).get();
        return row?.runAfter.getTime();
      }
      const { jobs } = pgSchema;
      const [row] = await backend.postgres.db.select({ runAfter: jobs.runAfter }).from(jobs).where(and(eq(jobs.kind, kind), eq(jobs.status, 'pending'))).orderBy(asc(jobs.runAfter)).limit(1);
      return row?.runAfter.getTime();
    },

    /** Tells the webhooks that knowledge files settled, in one transaction (as the indexer does). */
    async knowledgeSettled(files: readonly KnowledgeFileRow[]): Promise<void> {
      const { webhooks } = app;
      await app.stores.db.write(function* () {
        for (const file of files) yield* webhooks.knowledgeSettled(file);
      });
    },

    /** Tells the webhooks that a job settled, in a transaction of its own (as the job loop does). */
    async taskSettled(job: JobRow, outcome: JobOutcome): Promise<void> {
      await app.stores.db.write(() => app.webhooks.taskSettled(job, outcome));
    },

    /** Inserts a post in a transaction that then fails (rejects with its error). */
    async rolledBackPost(siteId: string, input: PostInput): Promise<void> {
      const abort = new Error('abort');
      await app.stores.db.write(function* () {
        yield* app.posts.createSteps(siteId, input);
        throw abort;
      });
    },
  };
}
