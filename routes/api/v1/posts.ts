import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { validationError } from '../../../src/errors.js';
import { cleanTopic } from '../../../src/generation/grounded.js';
import type { PostRow } from '../../../src/posts/service.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import { BatchBody, BatchResponse, GenerateBody, GenerateResponse } from '../../../src/schemas/generation.js';
import {
  CreatePostBody,
  ListPostsQuery,
  PatchPostBody,
  PostCreatedResponse,
  PostDeletedResponse,
  PostDetailResponse,
  PostListResponse,
  PostToggledResponse,
} from '../../../src/schemas/posts.js';

/** Every stored field a response may show; each route's response schema picks its own subset. */
export const postView = (post: PostRow) => ({ ...post, cta: null });

const tags = ['posts'];

export default async function postRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);

  app.post(
    '/posts',
    { schema: { tags, summary: 'Create a post', body: CreatePostBody, response: { 201: PostCreatedResponse, ...errorResponses } } },
    async (request, reply) => {
      const post = await app.posts.create(request.site.id, request.body);
      return reply.code(201).send({ success: true, data: { message: 'Post created successfully', post: postView(post), site: request.site } });
    },
  );

  app.post(
    '/posts/generate',
    {
      schema: {
        tags,
        summary: 'Generate a post with AI, grounded in the knowledge base (no envelope)',
        body: GenerateBody,
        response: { 201: GenerateResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const topic = cleanTopic(request.body.topic);
      // A client that gives up cancels the generation instead of leaving it running.
      const abort = new AbortController();
      const onClose = () => !reply.raw.writableFinished && abort.abort(new Error('client disconnected'));
      reply.raw.once('close', onClose);
      try {
        const post = await app.writer.write(request.site.id, { ...request.body, topic }, abort.signal);
        return reply.code(201).send({
          message: 'Post generated successfully',
          post: postView(post),
          site: request.site,
          timestamp: new Date(),
          api: { version: 'v1', status: 'stable' },
        });
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  );

  app.post(
    '/posts/batch',
    { schema: { tags, summary: 'Schedule up to 100 generated posts', body: BatchBody, response: { 202: BatchResponse, ...errorResponses } } },
    async (request, reply) => {
      const { batchId, tasks } = await app.tasks.schedule(request.site.id, request.body);
      return reply.code(202).send({
        success: true,
        data: {
          message: `${tasks.length} post${tasks.length === 1 ? '' : 's'} scheduled for generation`,
          taskIds: tasks.map((task) => task.id),
          totalPosts: tasks.length,
          site: request.site,
          batchId,
        },
      });
    },
  );

  app.get(
    '/posts',
    { schema: { tags, summary: 'List posts', querystring: ListPostsQuery, response: { 200: PostListResponse, ...errorResponses } } },
    async (request) => {
      const page = await app.posts.list(request.site.id, request.query);
      return { success: true as const, data: { posts: page.items.map(postView), pagination: page.pagination, site: request.site } };
    },
  );

  app.get(
    '/posts/:id',
    { schema: { tags, summary: 'Retrieve a post', params: IdParams, response: { 200: PostDetailResponse, ...errorResponses } } },
    async (request) => {
      const post = await app.posts.get(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Post retrieved successfully', post: postView(post), site: request.site } };
    },
  );

  app.put(
    '/posts/:id',
    {
      schema: { tags, summary: 'Publish or unpublish a post (toggles isDraft)', params: IdParams, response: { 200: PostToggledResponse, ...errorResponses } },
    },
    async (request) => {
      // PUT takes no fields: edits go through PATCH, so a body with fields is a mistake to report.
      const body = request.body;
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        throw validationError('PUT toggles the draft state and takes no body; edit fields with PATCH /api/v1/posts/:id');
      }
      const post = await app.posts.toggle(request.site.id, request.params.id);
      return { success: true as const, data: { message: post.isDraft ? 'Post unpublished successfully' : 'Post published successfully', post } };
    },
  );

  app.patch(
    '/posts/:id',
    {
      schema: { tags, summary: 'Edit fields of a post', params: IdParams, body: PatchPostBody, response: { 200: PostDetailResponse, ...errorResponses } },
    },
    async (request) => {
      const post = await app.posts.update(request.site.id, request.params.id, request.body);
      return { success: true as const, data: { message: 'Post updated successfully', post: postView(post), site: request.site } };
    },
  );

  app.delete(
    '/posts/:id',
    { schema: { tags, summary: 'Delete a post permanently', params: IdParams, response: { 200: PostDeletedResponse, ...errorResponses } } },
    async (request) => {
      await app.posts.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Post deleted successfully', postId: request.params.id } };
    },
  );
}
