import type { FastifyInstance } from 'fastify';
import * as pgSchema from '../../src/db/pg-schema.js';
import * as sqliteSchema from '../../src/db/schema.js';
import { asc, count, eq } from '../../src/db/orm.js';

/**
 * Knowledge rows behind the API, on whichever database the app runs (SQLite, or PostgreSQL with
 * TEST_DATABASE=postgres): what tests of knowledge files check or set beside the API.
 */
export function knowledgeRows(app: FastifyInstance) {
  const { backend } = app;
  return {
    async fileCount(): Promise<number> {
      if (backend.kind === 'sqlite') return backend.sqlite.db.select({ n: count() }).from(sqliteSchema.knowledgeFiles).get()!.n;
      return (await backend.postgres.db.select({ n: count() }).from(pgSchema.knowledgeFiles))[0]!.n;
    },

    /** The text of every chunk (of one file when given), in the order they were written. */
    async chunkTexts(fileId?: string): Promise<string[]> {
      if (backend.kind === 'sqlite') {
        const { knowledgeChunks } = sqliteSchema;
        const where = fileId === undefined ? undefined : eq(knowledgeChunks.fileId, fileId);
        return backend.sqlite.db.select({ text: knowledgeChunks.text }).from(knowledgeChunks).where(where).orderBy(asc(knowledgeChunks.id)).all().map((row) => row.text);
      }
      const { knowledgeChunks } = pgSchema;
      const where = fileId === undefined ? undefined : eq(knowledgeChunks.fileId, fileId);
      return (await backend.postgres.db.select({ text: knowledgeChunks.text }).from(knowledgeChunks).where(where).orderBy(asc(knowledgeChunks.id))).map((row) => row.text);
    },

    /** Puts a file back where a crash mid-indexing leaves it: `uploaded`, its chunks (if any) still there. */
    async markUploaded(fileId: string): Promise<void> {
      const changes = { status: 'uploaded' as const, chunkCount: 0 };
      if (backend.kind === 'sqlite') backend.sqlite.db.update(sqliteSchema.knowledgeFiles).set(changes).where(eq(sqliteSchema.knowledgeFiles.id, fileId)).run();
      else await backend.postgres.db.update(pgSchema.knowledgeFiles).set(changes).where(eq(pgSchema.knowledgeFiles.id, fileId));
    },
  };
}
