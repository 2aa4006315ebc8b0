import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { validationError } from '../../../src/errors.js';
import { stringifyWithRaw } from '../../../src/json.js';
import { cleanTopic } from '../../../src/generation/grounded.js';
import { postResource } from '../../../src/posts/view.js';
import { postEtag, withPublishTime } from '../../../src/posts/rules.js';
import { checkMayChange, checkMayToggle, checkPatchAllowed, createdBy, mayPublish, type Actor } from '../../../src/posts/permissions.js';
import { forbidden } from '../../../src/accounts/rules.js';
import { MessageResponse, PendingBody, PendingResponse, RestoreResponse, RevisionListResponse, RevisionParams, ShareResponse } from '../../../src/schemas/revisions.js';
import type { PendingChangeRow } from '../../../src/db/schema.js';
import { renderMarkdown } from '../../../src/public-site/markdown.js';
import { ownOrigins, previewCsp } from '../../../plugins/public-site.js';
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
  PreviewPostBody,
  PreviewPostResponse,
} from '../../../src/schemas/posts.js';


const tags = ['posts'];

const actorOf = (request: FastifyRequest): Actor => ({ role: request.role, userId: request.userId });

/** The If-Match header, when one was sent. */
const ifMatchOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers['if-match'];
  return Array.isArray(header) ? header.join(', ') : header;
};

/** Where a share-preview link opens the draft: on this service, signed out. */
export const sharePath = (token: string) => `/preview/${token}`;

const pendingView = (pending: PendingChangeRow | null) =>
  pending && { title: pending.title, description: pending.description, content: pending.content, authorId: pending.authorId, updatedAt: pending.updatedAt };

// The post's updatedAt, read from its JSON text (the last member; quotes inside strings are escaped, so the key cannot be mistaken).
const UPDATED_AT = '"updatedAt":"';
const updatedAtOf = (json: string) => {
  const at = json.lastIndexOf(UPDATED_AT);
  return at < 0 ? null : new Date(json.slice(at + UPDATED_AT.length, json.indexOf('"', at + UPDATED_AT.length)));
};

/** Sends an answer holding JSON the database built (see RawJson): serialized here, not by the response schema. */
const sendJson = (reply: FastifyReply, body: unknown) => reply.type('application/json; charset=utf-8').send(stringifyWithRaw(body));

export default async function postRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);

  app.post(
    '/posts',
    { schema: { tags, operationId: 'createPost', summary: 'Create a post', description: 'A draft unless `isDraft` is false; with a future `publishAt`, a draft scheduled to be published then. The slug comes from the title.', body: CreatePostBody, response: { 201: PostCreatedResponse, ...errorResponses } }, config: { idempotent: true } },
    async (request, reply) => {
      const post = await app.posts.create(request.site.id, createdBy(actorOf(request), withPublishTime(request.body)), {}, new Date(), { by: request.userId });
      reply.header('ETag', postEtag(post.updatedAt));
      return reply.code(201).send({ success: true, data: { message: 'Post created successfully', post: postResource(post), site: request.site } });
    },
  );

  app.post(
    '/posts/preview',
    {
      schema: {
        tags,
        operationId: 'previewPost', summary: 'Render Markdown as the public page would (nothing is stored)',
        description: 'The HTML the public post page shows for this Markdown: the same renderer, raw HTML escaped, `javascript:` and other unsafe links dropped. The admin editor shows it as its preview.',
        body: PreviewPostBody,
        response: { 200: PreviewPostResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { html, readingTime } = renderMarkdown(request.body.content);
      return { success: true as const, data: { html, readingTime } };
    },
  );

  app.post(
    '/posts/generate',
    {
      schema: {
        tags,
        operationId: 'generatePost', summary: 'Generate a post with AI, grounded in the knowledge base (no envelope)', description: "Writes a post on the topic with the configured generator, grounded in the site's most relevant knowledge passages, and stores it as a draft. The answer has no envelope.",
        body: GenerateBody,
        response: { 201: GenerateResponse, ...errorResponses },
      },
      config: { idempotent: true, rateLimitGroup: 'generate' },
    },
    async (request, reply) => {
      const { featureImage, featureImageAlt, ...body } = request.body;
      const topic = cleanTopic(body.topic);
      // Refused before minutes of writing, not after.
      if (featureImage) await app.media.checkFeatureImage(request.site.id, featureImage, '/body/featureImage');
      // A client that gives up cancels the generation instead of leaving it running.
      const abort = new AbortController();
      const onClose = () => !reply.raw.writableFinished && abort.abort(new Error('client disconnected'));
      reply.raw.once('close', onClose);
      try {
        const { post, generation } = await app.writer.write(request.site.id, { ...body, topic }, abort.signal, { featureImage, featureImageAlt, authorId: request.userId });
        return reply.code(201).send({
          message: 'Post generated successfully',
          post: postResource(post),
          generation,
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
    { schema: { tags, operationId: 'schedulePosts', summary: 'Schedule up to 100 generated posts', description: 'Each post becomes a task, generated by the job loop when due: spread evenly from startDate to endDate unless it names its own scheduledFor.', body: BatchBody, response: { 202: BatchResponse, ...errorResponses } }, config: { idempotent: true } },
    async (request, reply) => {
      // A batch publishes on its own schedule: a contributor publishes nothing.
      if (!mayPublish(request.role)) throw forbidden('A contributor cannot schedule a batch of posts: an editor can');
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
    { schema: { tags, operationId: 'listPosts', summary: 'List posts', description: 'Newest first. Without `status`, drafts and public posts; filters fold case and accents.', querystring: ListPostsQuery, response: { 200: PostListResponse, ...errorResponses } } },
    async (request, reply) => {
      const { posts, pagination } = await app.posts.list(request.site.id, request.query);
      return sendJson(reply, { success: true, data: { posts, pagination, site: request.site } });
    },
  );

  app.get(
    '/posts/:id',
    { schema: { tags, operationId: 'getPost', summary: 'Retrieve a post', params: IdParams, response: { 200: PostDetailResponse, ...errorResponses } } },
    async (request, reply) => {
      const post = await app.posts.getJson(request.site.id, request.params.id);
      const updatedAt = updatedAtOf(post.text);
      if (updatedAt) reply.header('ETag', postEtag(updatedAt));
      return sendJson(reply, { success: true, data: { message: 'Post retrieved successfully', post, site: request.site } });
    },
  );

  app.put(
    '/posts/:id',
    {
      schema: { tags, operationId: 'togglePostDraft', summary: 'Publish or unpublish a post (toggles isDraft)', description: 'Takes no body: field edits go through PATCH.', params: IdParams, response: { 200: PostToggledResponse, ...errorResponses } },
    },
    async (request, reply) => {
      // PUT takes no fields: edits go through PATCH, so a body with fields is a mistake to report.
      const body = request.body;
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0)) {
        throw validationError('PUT toggles the draft state and takes no body; edit fields with PATCH /api/v1/posts/:id');
      }
      checkMayToggle(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      const post = await app.posts.toggle(request.site.id, request.params.id, new Date(), { by: request.userId });
      reply.header('ETag', postEtag(post.updatedAt));
      return { success: true as const, data: { message: post.isDraft ? 'Post unpublished successfully' : 'Post published successfully', post } };
    },
  );

  app.patch(
    '/posts/:id',
    {
      schema: {
        tags,
        operationId: 'updatePost',
        summary: 'Edit fields of a post',
        description:
          "A published post keeps its slug when retitled; `slug` moves it, and the old URL redirects. With `If-Match: <the post's ETag>` (GET answers it), a post saved by someone else meanwhile is 412 PRECONDITION_FAILED instead of overwritten. Setting title, description or content applies (and clears) a published post's pending change: that is \"Update\". Every save of the text keeps a revision.",
        params: IdParams,
        body: PatchPostBody,
        response: { 200: PostDetailResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = withPublishTime(request.body);
      checkPatchAllowed(actorOf(request), await app.posts.get(request.site.id, request.params.id), body);
      const post = await app.posts.update(request.site.id, request.params.id, body, new Date(), { by: request.userId, ifMatch: ifMatchOf(request) });
      reply.header('ETag', postEtag(post.updatedAt));
      return { success: true as const, data: { message: 'Post updated successfully', post: postResource(post), site: request.site } };
    },
  );

  app.delete(
    '/posts/:id',
    { schema: { tags, operationId: 'deletePost', summary: 'Delete a post permanently', params: IdParams, response: { 200: PostDeletedResponse, ...errorResponses } } },
    async (request) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      await app.posts.delete(request.site.id, request.params.id, new Date(), { by: request.userId });
      return { success: true as const, data: { message: 'Post deleted successfully', postId: request.params.id } };
    },
  );

  app.get(
    '/posts/:id/revisions',
    { schema: { tags, operationId: 'listPostRevisions', summary: "A post's revisions, newest first", description: 'Each save of title, description or content keeps one (the last 50 per post), with who saved it and when.', params: IdParams, response: { 200: RevisionListResponse, ...errorResponses } } },
    async (request) => ({ success: true as const, data: { revisions: await app.revisions.list(request.site.id, request.params.id) } }),
  );

  app.post(
    '/posts/:id/revisions/:revId/restore',
    {
      schema: {
        tags,
        operationId: 'restorePostRevision',
        summary: "Put a revision's text back",
        description: "A draft takes the revision's title, description and content at once; a published post gets them as its pending change (live after Update). Either way a new revision records the restore.",
        params: RevisionParams,
        response: { 200: RestoreResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { id, revId } = request.params;
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, id));
      const { post, pending } = await app.revisions.restore(request.site.id, id, revId, request.userId);
      reply.header('ETag', postEtag(post.updatedAt));
      return { success: true as const, data: { message: pending ? 'Revision restored as a pending change: Update to publish it' : 'Revision restored', post: postResource(post), pending: pendingView(pending) } };
    },
  );

  app.get(
    '/posts/:id/pending',
    { schema: { tags, operationId: 'getPendingChange', summary: "A published post's edits waiting for Update", params: IdParams, response: { 200: PendingResponse, ...errorResponses } } },
    async (request, reply) => {
      const { pending, etag } = await app.revisions.pending(request.site.id, request.params.id);
      reply.header('ETag', etag);
      return { success: true as const, data: { pending: pendingView(pending), etag } };
    },
  );

  app.put(
    '/posts/:id/pending',
    {
      schema: {
        tags,
        operationId: 'savePendingChange',
        summary: "Save a published post's edits without publishing them",
        description:
          "Readers keep the live text; a PATCH of the post with the pending text applies it (\"Update\"). Fields not given keep the pending (else live) value. With `If-Match: <etag>` (as GET …/pending answers), a change saved meanwhile is 412. 409 for a draft: its edits are saved to it with PATCH.",
        params: IdParams,
        body: PendingBody,
        response: { 200: PendingResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      const { pending, etag } = await app.revisions.savePending(request.site.id, request.params.id, request.body, request.userId, ifMatchOf(request));
      reply.header('ETag', etag);
      return { success: true as const, data: { pending: pendingView(pending), etag } };
    },
  );

  app.delete(
    '/posts/:id/pending',
    { schema: { tags, operationId: 'discardPendingChange', summary: "Discard a published post's pending edits (the live text stays)", params: IdParams, response: { 200: MessageResponse, ...errorResponses } } },
    async (request) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      const had = await app.revisions.discardPending(request.site.id, request.params.id);
      return { success: true as const, data: { message: had ? 'Pending changes discarded' : 'There were no pending changes' } };
    },
  );

  app.post(
    '/posts/:id/review',
    { schema: { tags, operationId: 'submitPostForReview', summary: 'Submit a draft for review', description: 'Marks the draft (`reviewRequestedAt`) for an editor to review and publish; what a contributor does instead of publishing.', params: IdParams, response: { 200: PostDetailResponse, ...errorResponses } } },
    async (request, reply) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      const post = await app.posts.requestReview(request.site.id, request.params.id, new Date(), { by: request.userId });
      reply.header('ETag', postEtag(post.updatedAt));
      return { success: true as const, data: { message: 'Submitted for review', post: postResource(post), site: request.site } };
    },
  );

  const shareView = (token: string | null) => ({ url: token === null ? null : sharePath(token), token });

  app.get(
    '/posts/:id/share',
    { schema: { tags, operationId: 'getPostShareLink', summary: "The draft's share-preview link, if one is active", params: IdParams, response: { 200: ShareResponse, ...errorResponses } } },
    async (request) => {
      const post = await app.posts.get(request.site.id, request.params.id);
      return { success: true as const, data: shareView(post.isDraft ? post.previewToken : null) };
    },
  );

  app.post(
    '/posts/:id/share',
    {
      schema: {
        tags,
        operationId: 'sharePostPreview',
        summary: 'Make a share-preview link for a draft',
        description: 'A new unguessable link (any earlier one stops working) that shows the draft as its public page would, to anyone who has it, signed out, marked as a preview and noindex, until the post is published or the link revoked. 409 for a published post.',
        params: IdParams,
        response: { 200: ShareResponse, ...errorResponses },
      },
    },
    async (request) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      const post = await app.posts.setPreviewToken(request.site.id, request.params.id, randomBytes(24).toString('base64url'));
      return { success: true as const, data: shareView(post.previewToken) };
    },
  );

  app.delete(
    '/posts/:id/share',
    { schema: { tags, operationId: 'revokePostShareLink', summary: "Revoke the draft's share-preview link", params: IdParams, response: { 200: ShareResponse, ...errorResponses } } },
    async (request) => {
      checkMayChange(actorOf(request), await app.posts.get(request.site.id, request.params.id));
      await app.posts.setPreviewToken(request.site.id, request.params.id, null);
      return { success: true as const, data: shareView(null) };
    },
  );

  app.get(
    '/posts/:id/page',
    {
      // A page, not a JSON operation: described in the README (the admin editor frames it).
      schema: { hide: true, params: IdParams },
    },
    async (request, reply) => {
      const { post, pending } = await app.revisions.pending(request.site.id, request.params.id);
      const site = await app.sites.get(request.site.id);
      const shown = pending ? { ...post, title: pending.title, description: pending.description, content: pending.content } : post;
      const html = await app.publicPages.preview(site, await app.publicSite.preview(site.id, shown));
      return reply.header('Cache-Control', 'no-store').header('X-Robots-Tag', 'noindex').header('Content-Security-Policy', previewCsp(ownOrigins(app.config.publicBaseUrl, site))).type('text/html; charset=utf-8').send(html);
    },
  );
}
