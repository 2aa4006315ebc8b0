import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { checkComment, commentProblems, type CommentInput } from '../src/comments/rules.js';
import { NOTICE_INTERVAL_MS, pendingCommentsMail } from '../src/comments/notice.js';
import type { CommentStore } from '../src/comments/store.js';
import { ask } from '../src/db/steps.js';
import { renderMail } from '../src/mail/render.js';
import type { CommentRow, Site } from '../src/db/schema.js';
import type { ErrorDetail } from '../src/errors.js';
import type { PublicPost } from '../src/public-site/types.js';

/** What became of a reader's comment. */
export type Submitted =
  | { kind: 'saved'; comment: CommentRow }
  | { kind: 'invalid'; problems: ErrorDetail[] }
  | { kind: 'refused'; status: 400; field: string; reason: string }
  | { kind: 'limited'; reason: string; retryAfterSeconds: number }
  | { kind: 'closed' };

declare module 'fastify' {
  interface FastifyInstance {
    comments: CommentStore;
    /** A reader's comment on a post readers can see: checked, screened by the spam guard, then kept. */
    submitComment(site: Site, post: PublicPost, input: CommentInput & { altcha?: unknown; website?: unknown }, clientAddress: string): Promise<Submitted>;
  }
}

/** Readers' comments: the store, the screening of a reader's comment, and webhook events. */
export default fp(
  async function commentsPlugin(app: FastifyInstance) {
    const store = app.stores.comments;
    app.decorate('comments', store);
    store.onEvent((type, comment, post) => app.webhooks.commentEvent(type, comment, post));
    // Staff who take it are mailed when a comment waits: at most once per post an hour.
    const base = app.config.publicBaseUrl.replace(/\/+$/, '');
    store.onEvent(function* (type, comment, post) {
      if (type !== 'comment.created' || comment.status !== 'pending' || !app.mail.configured) return;
      const recipients = yield* ask('comments', 'noticeRecipients', comment.siteId);
      if (recipients.length === 0) return;
      const now = comment.createdAt;
      if (!(yield* ask('comments', 'claimNotice', comment.siteId, post.id, now, new Date(now.getTime() - NOTICE_INTERVAL_MS)))) return;
      const pending = yield* ask('comments', 'count', comment.siteId, 'pending', post.id);
      const message = renderMail(
        pendingCommentsMail({ postTitle: post.title, pending, latest: { name: comment.authorName, body: comment.body }, moderateUrl: `${base}/admin/comments?postId=${encodeURIComponent(post.id)}` }),
      );
      for (const to of recipients) yield* app.mail.enqueueSteps(comment.siteId, { to, ...message }, now);
    });

    app.decorate('submitComment', async (site: Site, post: PublicPost, input: CommentInput & { altcha?: unknown; website?: unknown }, clientAddress: string): Promise<Submitted> => {
      if (site.commentsMode === 'off' || !post.commentsEnabled) return { kind: 'closed' };
      const problems = commentProblems(input);
      if (problems.length > 0) return { kind: 'invalid', problems };
      const comment = checkComment(input);
      const verdict = await app.spamGuard.check({
        siteId: site.id,
        form: 'comment',
        clientAddress,
        proof: typeof input.altcha === 'string' && input.altcha !== '' ? input.altcha : null,
        honeypot: typeof input.website === 'string' ? input.website : null,
        texts: [comment.name, comment.body],
        blockedWords: site.blockedWords,
      });
      if (verdict.outcome === 'refuse') {
        return verdict.status === 429 ? { kind: 'limited', reason: verdict.reason, retryAfterSeconds: verdict.retryAfterSeconds } : { kind: 'refused', status: 400, field: verdict.field, reason: verdict.reason };
      }
      return { kind: 'saved', comment: await store.submit(site, post, comment, verdict) };
    });
  },
  { name: 'comments', dependencies: ['public-site', 'spam-guard', 'webhooks', 'mail'] },
);

