import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Site } from '../../../src/db/schema.js';
import { Type } from '@sinclair/typebox';
import { AppError, conflict, notFound, validationError } from '../../../src/errors.js';
import { publicComment, submittedComment } from '../../../src/comments/view.js';
import { paginationOf } from '../../../src/pagination.js';
import { PublicCommentsResponse, SubmitCommentBody, SubmittedCommentResponse } from '../../../src/schemas/comments.js';
import { tagSlug } from '../../../src/public-site/markdown.js';
import type { PublicPost, PublicSite } from '../../../src/public-site/types.js';
import { postUrl } from '../../../src/public-site/urls.js';
import { NotModified, PageQuery, errorResponses } from '../../../src/schemas/common.js';
import { ChallengeQuery, ChallengeResponse, ContentListQuery, ContentListResponse, ContentPostParams, ContentPostResponse, ContentSiteParams } from '../../../src/schemas/content.js';

const tags = ['content'];

const postView = (site: PublicSite, post: PublicPost) => ({
  ...post,
  url: postUrl(site, post.slug),
  visibility: post.unlisted ? 'unlisted' : 'public',
});
const siteView = (site: PublicSite) => ({ name: site.name, handle: site.handle, url: site.baseUrl, language: site.language, description: site.description });

/**
 * The public content API (Ghost's Content API role): what the public pages show, as JSON, with
 * no key, open to any origin, cached like the pages.
 */
export default async function contentRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
  });
  app.options('/sites/*', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(204).header('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS').header('Access-Control-Allow-Headers', 'Content-Type').header('Access-Control-Max-Age', '86400').send(),
  );

  const siteOf = async (handle: string): Promise<Site> => {
    const site = await app.publicSite.byHandle(handle);
    if (!site) throw notFound('site');
    return site;
  };

  app.get(
    '/sites/:handle/posts',
    {
      schema: {
        tags,
        operationId: 'listPublicPosts', summary: 'List the published posts of a site, newest first (no key needed)',
        security: [],
        params: ContentSiteParams,
        querystring: ContentListQuery,
        response: { 200: ContentListResponse, 304: NotModified, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await siteOf(request.params.handle);
      const { page, limit, tag, category } = request.query;
      const view = app.publicPages.view(site, '');
      const topic = tag ? { kind: 'tag' as const, slug: tagSlug(tag) } : category ? { kind: 'category' as const, slug: tagSlug(category) } : undefined;
      // Keyed by what the answer depends on, never the raw URL: other parameters, their order
      // or spelling cannot make new entries.
      const key = `content|list|${page}|${limit}|${topic ? `${topic.kind}:${topic.slug}` : ''}`;
      const response = await app.publicPages.cached(key, site, async () => {
        const found = await app.publicSite.list(site.id, { page, limit, topic });
        const body = {
          success: true as const,
          data: {
            posts: found.posts.map((post) => postView(view, post)),
            pagination: { page, limit, total: found.total, pages: Math.ceil(found.total / limit) },
            site: siteView(view),
          },
        };
        // An empty page (a tag nobody uses, a page past the end) can be asked for in endless
        // spellings: answered, not kept.
        const keep = found.posts.length > 0 ? undefined : (false as const);
        return { status: 200, contentType: 'application/json; charset=utf-8', body: String(reply.serialize(body)), keep };
      });
      return app.sendPublic(request, reply, response);
    },
  );

  app.get(
    '/sites/:handle/posts/:slug',
    {
      schema: {
        tags,
        operationId: 'getPublicPost', summary: 'Retrieve a published post by its slug (unlisted ones too; no key needed)',
        security: [],
        params: ContentPostParams,
        response: { 200: ContentPostResponse, 304: NotModified, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await siteOf(request.params.handle);
      const view = app.publicPages.view(site, '');
      const found = await app.publicSite.bySlug(site.id, request.params.slug);
      if (!found || !('post' in found)) throw notFound('post');
      const response = await app.publicPages.cached(`content|post|${found.post.id}`, site, async () => ({
        status: 200,
        contentType: 'application/json; charset=utf-8',
        body: String(reply.serialize({ success: true as const, data: { post: postView(view, found.post), site: siteView(view) } })),
      }));
      return app.sendPublic(request, reply, response);
    },
  );

  app.get(
    '/sites/:handle/challenge',
    {
      schema: {
        tags,
        operationId: 'getSpamGuardChallenge',
        summary: 'A new proof-of-work challenge for a public form of the site (the ALTCHA widget fetches it; no key needed)',
        security: [],
        params: ContentSiteParams,
        querystring: ChallengeQuery,
        response: { 200: ChallengeResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await siteOf(request.params.handle);
      // One per form shown, never cached: each is answerable once.
      reply.header('Cache-Control', 'no-store');
      return app.spamGuard.challenge(site.id, request.query.form);
    },
  );

  const postOf = async (site: Site, slug: string) => {
    const found = await app.publicSite.bySlug(site.id, slug);
    if (!found || !('post' in found)) throw notFound('post');
    return found.post;
  };

  app.get(
    '/sites/:handle/posts/:slug/comments',
    {
      schema: {
        tags,
        operationId: 'listPublicComments',
        summary: "A post's published comments, oldest first (replies carry their parentId; no key needed)",
        security: [],
        params: ContentPostParams,
        querystring: Type.Object(PageQuery),
        response: { 200: PublicCommentsResponse, 304: NotModified, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await siteOf(request.params.handle);
      const post = await postOf(site, request.params.slug);
      if (site.commentsMode === 'off') throw notFound('comments');
      const { page, limit } = request.query;
      const response = await app.publicPages.cached(`content|comments|${post.id}|${page}|${limit}`, site, async () => {
        const { rows, total } = await app.comments.approved(post.id, page, limit);
        const body = { success: true as const, data: { comments: rows.map(publicComment), pagination: paginationOf(page, limit, total) } };
        return { status: 200, contentType: 'application/json; charset=utf-8', body: String(reply.serialize(body)), keep: rows.length > 0 ? undefined : (false as const) };
      });
      return app.sendPublic(request, reply, response);
    },
  );

  app.post(
    '/sites/:handle/posts/:slug/comments',
    {
      schema: {
        tags,
        operationId: 'submitPublicComment',
        summary: 'Send a comment on a post (no key needed; screened by the spam guard)',
        description:
          'Answered 201 with the comment\'s `status`: `approved` (shown now) or `pending` (waits for a moderator: always so without a solved challenge in `altcha`). ' +
          '400 names the field; 429 with Retry-After past the per-address window; 409 when comments are closed.',
        security: [],
        params: ContentPostParams,
        body: SubmitCommentBody,
        response: { 201: SubmittedCommentResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await siteOf(request.params.handle);
      const post = await postOf(site, request.params.slug);
      const result = await app.submitComment(site, post, request.body, request.ip);
      switch (result.kind) {
        case 'saved':
          return reply.code(201).send({
            success: true as const,
            data: { message: result.comment.status === 'approved' ? 'Comment published' : 'Comment received: it waits for a moderator', comment: submittedComment(result.comment) },
          });
        case 'invalid':
          throw validationError(`Invalid comment: ${result.problems.map((p) => `${p.path.replace('/body/', '')} ${p.message}`).join('; ')}`, result.problems);
        case 'refused':
          throw validationError(`Comment refused: ${result.reason}`, [{ path: `/body/${result.field}`, message: result.reason }]);
        case 'limited':
          reply.header('Retry-After', String(result.retryAfterSeconds));
          throw new AppError(429, 'RATE_LIMITED', `Too many comments from this address: ${result.reason}; retry in ${result.retryAfterSeconds} s`, { retryAfter: result.retryAfterSeconds });
        case 'closed':
          throw conflict('Comments are closed on this post');
      }
    },
  );
}
