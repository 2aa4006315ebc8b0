import multipart from '@fastify/multipart';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { KnowledgeFileRow } from '../../../src/db/schema.js';
import { AppError, validationError } from '../../../src/errors.js';
import { searchKnowledge } from '../../../src/knowledge/search.js';
import {
  MAX_FILE_BYTES,
  deleteKnowledgeFile,
  getKnowledgeFile,
  listKnowledgeFiles,
  receiveUpload,
  storeUpload,
  type ReceivedUpload,
} from '../../../src/knowledge/service.js';
import { formatSize } from '../../../src/knowledge/storage.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import {
  KnowledgeDeletedResponse,
  KnowledgeDetailResponse,
  KnowledgeListQuery,
  KnowledgeListResponse,
  KnowledgeSearchQuery,
  KnowledgeSearchResponse,
  KnowledgeUploadResponse,
} from '../../../src/schemas/knowledge.js';

export const knowledgeView = (row: KnowledgeFileRow) => ({
  id: row.id,
  name: row.name,
  type: row.mediaType,
  status: row.status,
  size: formatSize(row.sizeBytes),
  lastUpdated: row.updatedAt,
  s3Key: row.storageKey,
  error: row.error,
  chunkCount: row.chunkCount,
  createdAt: row.createdAt,
});

const tags = ['knowledge'];

/** The multipart parser (busboy) reports a malformed body as a plain Error, without a code. */
const isMultipartSyntaxError = (error: unknown): error is Error =>
  error instanceof Error && !(error instanceof AppError) && (error as { code?: unknown }).code === undefined && /multipart|boundary|part/i.test(error.message);

export default async function knowledgeRoutes(app: FastifyInstance) {
  await app.register(multipart, { limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 10, parts: 12, fieldSize: 1024 } });
  app.addHook('onRequest', app.requireSite);

  app.post(
    '/knowledge',
    {
      schema: {
        tags,
        summary: 'Upload a file to the knowledge base (multipart/form-data, one part named "file")',
        consumes: ['multipart/form-data'],
        response: { 201: KnowledgeUploadResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      let received: ReceivedUpload | null = null;
      try {
        for await (const part of request.parts()) {
          if (part.type !== 'file') continue;
          if (part.fieldname !== 'file' || received) {
            part.file.resume();
            throw validationError('Send exactly one file, in the part named "file"', [{ path: '/body/file', message: 'exactly one file part named "file"' }]);
          }
          received = await receiveUpload(app.storage, { filename: part.filename, stream: part.file });
        }
        if (!received) throw validationError('No file: send multipart/form-data with one part named "file"', [{ path: '/body/file', message: 'is required' }]);
      } catch (error) {
        if (received) await app.storage.discard(received.tmpPath);
        throw isMultipartSyntaxError(error) ? new AppError(400, 'BAD_REQUEST', `Malformed multipart body: ${error.message}`) : error;
      }
      const row = await storeUpload(app.dbHandle, app.storage, request.site.id, received);
      app.indexer.enqueue(row.id);
      return reply.code(201).send({ success: true, data: { message: 'File uploaded successfully', knowledge: knowledgeView(row), site: request.site } });
    },
  );

  app.get<{ Querystring: Static<typeof KnowledgeListQuery> }>(
    '/knowledge',
    { schema: { tags, summary: 'List knowledge files', querystring: KnowledgeListQuery, response: { 200: KnowledgeListResponse, ...errorResponses } } },
    async (request) => {
      const page = listKnowledgeFiles(app.db, request.site.id, request.query.page, request.query.limit);
      return { success: true, data: { items: page.items.map(knowledgeView), pagination: page.pagination, site: request.site } };
    },
  );

  app.get<{ Querystring: Static<typeof KnowledgeSearchQuery> }>(
    '/knowledge/search',
    {
      schema: { tags, summary: 'Search the knowledge base (BM25)', querystring: KnowledgeSearchQuery, response: { 200: KnowledgeSearchResponse, ...errorResponses } },
    },
    async (request) => {
      const { q, fileIds, limit } = request.query;
      const ids = fileIds?.split(',').map((id) => id.trim()).filter(Boolean);
      const results = searchKnowledge(app.dbHandle.sqlite, request.site.id, q, { fileIds: ids?.length ? ids : undefined, limit });
      return { success: true, data: { query: q, results, site: request.site } };
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/knowledge/:id',
    { schema: { tags, summary: 'Retrieve a knowledge file', params: IdParams, response: { 200: KnowledgeDetailResponse, ...errorResponses } } },
    async (request) => {
      const row = getKnowledgeFile(app.db, request.site.id, request.params.id);
      return { success: true, data: { message: 'Knowledge item retrieved successfully', knowledge: knowledgeView(row), site: request.site } };
    },
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/knowledge/:id',
    { schema: { tags, summary: 'Delete a knowledge file and its index', params: IdParams, response: { 200: KnowledgeDeletedResponse, ...errorResponses } } },
    async (request) => {
      await deleteKnowledgeFile(app.dbHandle, app.storage, request.site.id, request.params.id);
      return { success: true, data: { message: 'Knowledge item deleted successfully', knowledgeId: request.params.id, site: request.site } };
    },
  );
}
