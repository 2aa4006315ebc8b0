import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CommentFormState } from '../src/comments/section.js';
import type { Site } from '../src/db/schema.js';
import type { Submitted } from '../plugins/comments.js';
import { publicPolicyHook } from '../plugins/public-site.js';

/** The comment form's body: small, and one field of each name. */
const FORM_BODY_LIMIT = 64 * 1024;
const FIELDS = ['name', 'email', 'body', 'parentId', 'altcha', 'website'] as const;

/** What a page says after a comment was sent (`?comment=` of the redirect). */
export const COMMENT_NOTICES: Record<string, string> = {
  pending: 'Thanks: your comment waits for a moderator',
  published: 'Thanks: your comment is published',
};

const hostOf = (request: FastifyRequest) => request.headers.host?.toLowerCase().replace(/:(80|443)$/, '');

/** A field's problem as the form shows it beside the field. */
function formErrors(result: Exclude<Submitted, { kind: 'saved' }>): Record<string, string> {
  switch (result.kind) {
    case 'invalid':
      return Object.fromEntries(result.problems.map((problem) => [problem.path.replace('/body/', ''), problem.message]));
    case 'refused':
      return { form: `Your comment could not be accepted: ${result.reason}. Please try again.` };
    case 'limited':
      return { form: `Too many comments from here: please wait ${result.retryAfterSeconds} seconds and try again.` };
    case 'closed':
      return { form: 'Comments are closed' };
  }
}

/**
 * The comment form without JavaScript: `POST /sites/<handle>/<slug>/comments` (and
 * `/<slug>/comments` on a site's own domain), form-encoded, answered 303 to the post's
 * `#comments` with a notice, or the page again with the problems beside what was typed.
 */
export default async function commentFormRoutes(app: FastifyInstance) {
  // The pages it answers are public pages: their policy.
  publicPolicyHook(app);
  // Form bodies are read here only (this plugin's scope): the API stays JSON.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    const params = new URLSearchParams(body as string);
    const fields: Record<string, string> = {};
    for (const name of FIELDS) {
      const value = params.get(name);
      if (value !== null) fields[name] = value;
    }
    done(null, fields);
  });
  const schema = { hide: true };

  async function submit(site: Site, basePath: string, slug: string, request: FastifyRequest, reply: FastifyReply) {
    const body = (request.body ?? {}) as Record<string, string>;
    const found = await app.publicSite.bySlug(site.id, slug);
    if (!found || !('post' in found)) return app.sendPublic(request, reply, await app.publicPages.page(site, basePath, `/${slug}/comments`));
    const result = await app.submitComment(site, found.post, body, request.ip);
    if (result.kind === 'saved') {
      const notice = result.comment.status === 'approved' ? 'published' : 'pending';
      return reply.code(303).header('Location', `${basePath}/${slug}/?comment=${notice}#comments`).send();
    }
    const status = result.kind === 'limited' ? 429 : 400;
    if (result.kind === 'limited') reply.header('Retry-After', String(result.retryAfterSeconds));
    const values = { name: body.name, email: body.email, body: body.body, parentId: body.parentId };
    const page = await app.publicPages.postWithForm(site, basePath, slug, { values, errors: formErrors(result) }, status);
    return reply.code(status).header('Cache-Control', 'no-store').type(page!.contentType).send(page!.body);
  }

  app.post('/sites/:handle/:slug/comments', { schema }, async (request, reply) => {
    const { handle, slug } = request.params as { handle: string; slug: string };
    const site = await app.publicSite.byHandle(handle);
    if (!site) return app.sendPublic(request, reply, await app.publicPages.noSite());
    return submit(site, `/sites/${site.handle}`, slug, request, reply);
  });

  app.post('/:slug/comments', { schema }, async (request, reply) => {
    const site = await app.publicSite.byHost(hostOf(request));
    if (!site) return reply.callNotFound();
    return submit(site, '', (request.params as { slug: string }).slug, request, reply);
  });
}

/** The form state a post page's query asks for: a notice after a comment was sent, or the comment a reply is for. */
export function formStateOf(query: unknown): CommentFormState | null {
  const { comment, replyTo } = (query ?? {}) as Record<string, unknown>;
  if (typeof comment === 'string' && COMMENT_NOTICES[comment]) return { notice: COMMENT_NOTICES[comment] };
  if (typeof replyTo === 'string' && /^[0-9a-f-]{36}$/.test(replyTo)) return { values: { parentId: replyTo } };
  return null;
}
