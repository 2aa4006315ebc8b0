import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { checkComment } from '../../../src/comments/rules.js';
import { staffComment } from '../../../src/comments/view.js';
import { ask } from '../../../src/db/steps.js';
import { AppError, notFound, validationError } from '../../../src/errors.js';
import { paginationOf } from '../../../src/pagination.js';
import {
  CommentDeletedResponse,
  CommentListQuery,
  CommentListResponse,
  CommentMailBody,
  CommentMailResponse,
  CommentResponse,
  EraseEmailBody,
  EraseEmailResponse,
  PatchCommentBody,
  StaffReplyBody,
} from '../../../src/schemas/comments.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';

const tags = ['comments'];

/** Owners and editors moderate (an API key acts as owner). */
const requireModerator: onRequestHookHandler = (request, _reply, done) => {
  if (request.role !== 'owner' && request.role !== 'editor') return done(new AppError(403, 'FORBIDDEN', 'Owners and editors moderate comments'));
  done();
};

/** A post of the site as comments name it. */
function* postRef(siteId: string, postId: string) {
  const post = yield* ask('posts', 'find', siteId, postId);
  return post && { id: post.id, title: post.title, slug: post.slug };
}

export default async function commentRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);
  app.addHook('onRequest', requireModerator);

  const withPost = async (siteId: string, row: Parameters<typeof staffComment>[0]) => {
    const post = await app.posts.get(siteId, row.postId).catch(() => null);
    return staffComment({ ...row, postTitle: post?.title, postSlug: post?.slug });
  };

  app.get(
    '/comments',
    { schema: { tags, operationId: 'listComments', summary: "The site's comments, newest first, by status and post", querystring: CommentListQuery, response: { 200: CommentListResponse, ...errorResponses } } },
    async (request) => {
      const { page, limit, status, postId } = request.query;
      const { rows, total } = await app.comments.list(request.site.id, { status, postId }, page, limit);
      const pending = await app.comments.count(request.site.id, 'pending');
      return { success: true as const, data: { comments: rows.map(staffComment), pagination: paginationOf(page, limit, total), pending } };
    },
  );

  app.patch(
    '/comments/:id',
    {
      schema: { tags, operationId: 'moderateComment', summary: 'Approve a comment, or mark it pending or spam', params: IdParams, body: PatchCommentBody, response: { 200: CommentResponse, ...errorResponses } },
    },
    async (request) => {
      const row = await app.comments.moderate(request.site.id, request.params.id, request.body.status, (postId) => postRef(request.site.id, postId));
      return { success: true as const, data: { message: `Comment ${row.status}`, comment: await withPost(request.site.id, row) } };
    },
  );

  app.delete(
    '/comments/:id',
    { schema: { tags, operationId: 'deleteComment', summary: 'Delete a comment and its replies', params: IdParams, response: { 200: CommentDeletedResponse, ...errorResponses } } },
    async (request) => {
      await app.comments.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Comment deleted', commentId: request.params.id } };
    },
  );

  app.post(
    '/posts/:id/comments',
    {
      schema: {
        tags,
        operationId: 'replyToPost',
        summary: "A comment or reply written as the site's (published at once)",
        params: IdParams,
        body: StaffReplyBody,
        response: { 201: CommentResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await app.sites.get(request.site.id);
      const post = await app.posts.get(site.id, request.params.id);
      if (post.isDraft) throw notFound('post');
      const input = checkComment({ name: site.name.slice(0, 80), body: request.body.body, parentId: request.body.parentId ?? null });
      const row = await app.comments.staffReply(site, { id: post.id, title: post.title, slug: post.slug, commentsEnabled: true }, input);
      return reply.code(201).send({ success: true as const, data: { message: 'Reply published', comment: staffComment({ ...row, postTitle: post.title, postSlug: post.slug }) } });
    },
  );

  /** Only a person has a mailbox: an API key has no such choice. */
  const personOf = (userId: string | null) => {
    if (!userId) throw validationError('Mail about pending comments is a choice of a signed-in person, not of an API key');
    return userId;
  };

  app.get(
    '/comments/mail',
    { schema: { tags, operationId: 'getCommentMail', summary: 'Whether you are mailed when comments wait on this site (signed in)', response: { 200: CommentMailResponse, ...errorResponses } } },
    async (request) => {
      const enabled = await app.comments.mailChoice(personOf(request.userId), request.site.id, request.role);
      return { success: true as const, data: { enabled, mailConfigured: app.mail.configured } };
    },
  );

  app.put(
    '/comments/mail',
    {
      schema: { tags, operationId: 'setCommentMail', summary: 'Turn the mail about waiting comments on or off for you on this site (signed in)', body: CommentMailBody, response: { 200: CommentMailResponse, ...errorResponses } },
    },
    async (request) => {
      await app.comments.setMailChoice(personOf(request.userId), request.site.id, request.body.enabled);
      return { success: true as const, data: { enabled: request.body.enabled, mailConfigured: app.mail.configured } };
    },
  );

  app.post(
    '/comments/erase-email',
    {
      onRequest: app.requireOwner,
      schema: { tags, operationId: 'eraseCommenterEmail', summary: "Forget a commenter's email on every comment of the site (owners)", body: EraseEmailBody, response: { 200: EraseEmailResponse, ...errorResponses } },
    },
    async (request) => {
      const erased = await app.comments.eraseEmail(request.site.id, request.body.email);
      return { success: true as const, data: { message: `Email erased from ${erased} comment${erased === 1 ? '' : 's'}`, erased } };
    },
  );
}
