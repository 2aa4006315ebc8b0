import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { readingUpload, registerUploadParser } from './upload-parser.js';
import { MAX_FILE_BYTES } from '../../../src/limits.js';
import { knowledgeResource } from '../../../src/knowledge/view.js';
import { KnowledgeUploadBody } from '../../../plugins/openapi.js';
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

const tags = ['knowledge'];

export default async function knowledgeRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  await registerUploadParser(app, MAX_FILE_BYTES);
  app.addHook('onRequest', app.requireSite);

  app.post(
    '/knowledge',
    {
      schema: {
        tags,
        operationId: 'uploadKnowledge', summary: 'Upload a file to the knowledge base (multipart/form-data, one part named "file")', description: 'Accepted: .txt .md .pdf .doc .docx .csv up to 10 MB, checked by extension and content. Indexed in the background: the status moves from `uploaded` to `indexed` or `failed`.',
        consumes: ['multipart/form-data'],
        response: { 201: KnowledgeUploadResponse, ...errorResponses },
      },
      config: { multipartBody: KnowledgeUploadBody, idempotent: true },
    },
    async (request, reply) => {
      const row = await readingUpload(app.knowledge.upload(request.site.id, request.parts()));
      return reply.code(201).send({ success: true, data: { message: 'File uploaded successfully', knowledge: knowledgeResource(row), site: request.site } });
    },
  );

  app.get(
    '/knowledge',
    { schema: { tags, operationId: 'listKnowledge', summary: 'List knowledge files', querystring: KnowledgeListQuery, response: { 200: KnowledgeListResponse, ...errorResponses } } },
    async (request) => {
      const page = await app.knowledge.list(request.site.id, request.query.page, request.query.limit);
      return { success: true as const, data: { items: page.items.map(knowledgeResource), pagination: page.pagination, site: request.site } };
    },
  );

  app.get(
    '/knowledge/search',
    {
      schema: { tags, operationId: 'searchKnowledge', summary: 'Search the knowledge base (BM25, fused with embeddings when a model is configured)', description: 'The best passages for a plain-text query (never query syntax), optionally within some files. `mode` says whether this search was lexical (BM25) or hybrid (BM25 and embedding similarity, fused by reciprocal rank).', querystring: KnowledgeSearchQuery, response: { 200: KnowledgeSearchResponse, ...errorResponses } },
    },
    async (request) => {
      const { q, fileIds, limit } = request.query;
      const ids = fileIds?.split(',').map((id) => id.trim()).filter(Boolean);
      const { passages, mode } = await app.knowledge.find(request.site.id, q, { fileIds: ids?.length ? ids : undefined, limit });
      return { success: true as const, data: { query: q, mode, results: passages, site: request.site } };
    },
  );

  app.get(
    '/knowledge/:id',
    { schema: { tags, operationId: 'getKnowledge', summary: 'Retrieve a knowledge file', params: IdParams, response: { 200: KnowledgeDetailResponse, ...errorResponses } } },
    async (request) => {
      const row = await app.knowledge.get(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Knowledge item retrieved successfully', knowledge: knowledgeResource(row), site: request.site } };
    },
  );

  app.delete(
    '/knowledge/:id',
    { schema: { tags, operationId: 'deleteKnowledge', summary: 'Delete a knowledge file and its index', params: IdParams, response: { 200: KnowledgeDeletedResponse, ...errorResponses } } },
    async (request) => {
      await app.knowledge.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Knowledge item deleted successfully', knowledgeId: request.params.id, site: request.site } };
    },
  );
}
