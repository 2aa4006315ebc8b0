import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Site } from '../src/db/schema.js';
import { AppError } from '../src/errors.js';
import { signUp } from '../src/newsletters/sign-up.js';
import type { NoticeContent } from '../src/public-site/render.js';

/** A form's fields are a few short values: an address, the proof of work, a token. */
const FORM_BODY_LIMIT = 16 * 1024;
/** What a token of this service looks like (base64url of 32 bytes); anything else is looked up nowhere. */
const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

const hostOf = (request: FastifyRequest) => request.headers.host?.toLowerCase().replace(/:(80|443)$/, '');
const tokenOf = (value: unknown) => (typeof value === 'string' && TOKEN.test(value) ? value : null);

const SignUpForm = {
  type: 'object',
  properties: {
    email: { type: 'string', maxLength: 1000 },
    altcha: { type: 'string', maxLength: 8000 },
    website: { type: 'string', maxLength: 1000 },
  },
} as const;
const TokenForm = { type: 'object', properties: { token: { type: 'string', maxLength: 1000 } } } as const;
const TokenQuery = { type: 'object', properties: { token: { type: 'string' } }, additionalProperties: true } as const;
const NoticeQuery = { type: 'object', properties: { sent: { type: 'string' } }, additionalProperties: true } as const;

interface Where {
  site: Site;
  /** '' on the site's own domain, '/sites/<handle>' on the platform's. */
  basePath: string;
}

/**
 * The newsletter's pages for readers, without JavaScript: the sign-up form's POST (303 to a
 * notice), the confirmation link (a page whose button confirms: a mail scanner's GET confirms
 * nothing), and unsubscribing (RFC 8058's one-click POST acts at once; the GET page asks first).
 * Under /sites/<handle>/ on any host, and at the root of a site's proven domain.
 */
export default async function newsletterPages(app: FastifyInstance) {
  // Forms come URL-encoded; a one-click unsubscribe may come as multipart (RFC 8058), its body unread.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, _body, done) => done(null, {}));

  const schema = { hide: true };

  const page = (reply: FastifyReply, where: Where, status: number, content: NoticeContent) =>
    app.publicPages.notice(where.site, where.basePath, content).then((html) =>
      reply.code(status).header('Cache-Control', 'no-store').header('X-Robots-Tag', 'noindex').header('Referrer-Policy', 'no-referrer').type('text/html; charset=utf-8').send(html),
    );

  const routes = (prefix: string, find: (request: FastifyRequest) => Promise<Where | null>) => {
    const withSite = async (request: FastifyRequest, reply: FastifyReply, then: (where: Where) => Promise<FastifyReply>) => {
      const where = await find(request);
      if (!where || !where.site.newsletterEnabled) {
        if (prefix === '') return reply.callNotFound();
        const missing = await app.publicPages.noSite();
        return reply.code(404).type(missing.contentType).send(missing.body);
      }
      return then(where);
    };

    app.get(`${prefix}/subscribe`, { schema: { ...schema, querystring: NoticeQuery } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const sent = (request.query as { sent?: string }).sent !== undefined;
        if (sent) return page(reply, where, 200, checkInbox(where.site));
        return page(reply, where, 200, { heading: `Subscribe to ${where.site.name}`, paragraphs: ['New posts by email. You can unsubscribe from any of them with one click.'], subscribe: true });
      }),
    );

    app.post(`${prefix}/subscribe`, { schema: { ...schema, body: SignUpForm } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const body = (request.body ?? {}) as { email?: string; altcha?: string; website?: string };
        try {
          await signUp(
            { guard: app.spamGuard, newsletters: app.newsletters, mailConfigured: app.mail.configured },
            { site: where.site, email: body.email ?? '', source: 'form', clientAddress: request.ip, proof: body.altcha || null, honeypot: body.website ?? null },
          );
        } catch (error) {
          if (!(error instanceof AppError) || error.statusCode >= 500 && error.code !== 'MAIL_NOT_CONFIGURED') throw error;
          if (error.statusCode === 429) reply.header('Retry-After', String((error.details as { retryAfter?: number }).retryAfter ?? 60));
          return page(reply, where, error.statusCode, { heading: 'Not subscribed', paragraphs: [error.message], subscribe: error.statusCode === 400 });
        }
        // Post/Redirect/Get: the notice is a page of its own, so reloading it sends nothing again.
        return reply.code(303).header('Location', `${where.basePath}/subscribe?sent=1`).send();
      }),
    );

    app.get(`${prefix}/subscribe/confirm`, { schema: { ...schema, querystring: TokenQuery } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const token = (request.query as { token?: string }).token ?? '';
        return page(reply, where, 200, {
          heading: 'Confirm your subscription',
          paragraphs: [`Confirm to receive new posts of ${where.site.name} by email.`],
          form: { action: `${where.basePath}/subscribe/confirm`, button: 'Confirm my subscription', fields: { token: token.slice(0, 200) } },
        });
      }),
    );

    app.post(`${prefix}/subscribe/confirm`, { schema: { ...schema, body: TokenForm } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const token = tokenOf((request.body as { token?: string } | undefined)?.token);
        const confirmed = token ? await app.newsletters.confirm(token) : null;
        if (!confirmed || confirmed.siteId !== where.site.id) {
          return page(reply, where, 400, { heading: 'This link no longer works', paragraphs: ['It was used already, or it is more than 7 days old. Subscribe again to get a new one.'], subscribe: true });
        }
        return page(reply, where, 200, { heading: 'You are subscribed', paragraphs: [`New posts of ${where.site.name} will reach ${confirmed.email}. Each mail has a link to unsubscribe.`] });
      }),
    );

    // The same page for any token, known or not: it tells nothing about who is subscribed.
    app.get(`${prefix}/unsubscribe`, { schema: { ...schema, querystring: TokenQuery } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const token = (request.query as { token?: string }).token ?? '';
        return page(reply, where, 200, {
          heading: `Unsubscribe from ${where.site.name}?`,
          paragraphs: ['You will get no more posts by email.'],
          form: { action: `${where.basePath}/unsubscribe?token=${encodeURIComponent(token.slice(0, 200))}`, button: 'Unsubscribe' },
        });
      }),
    );

    // RFC 8058's one click: a POST to the List-Unsubscribe URL acts at once, without sign-in.
    app.post(`${prefix}/unsubscribe`, { schema: { ...schema, querystring: TokenQuery } }, (request, reply) =>
      withSite(request, reply, async (where) => {
        const token = tokenOf((request.query as { token?: string }).token);
        const target = token ? await app.newsletters.unsubscribeTarget(token) : null;
        if (token && target?.siteId === where.site.id) await app.newsletters.unsubscribe(token);
        return page(reply, where, 200, { heading: 'You are unsubscribed', paragraphs: [`No more posts of ${where.site.name} will be sent to this address.`] });
      }),
    );
  };

  routes('/sites/:handle', async (request) => {
    const site = await app.publicSite.byHandle((request.params as { handle: string }).handle);
    return site ? { site, basePath: `/sites/${site.handle}` } : null;
  });
  // A site's own domain, once proven.
  routes('', async (request) => {
    const site = await app.publicSite.byHost(hostOf(request));
    return site && site.domainToken === null ? { site, basePath: '' } : null;
  });
}

function checkInbox(site: Site): NoticeContent {
  return {
    heading: 'Check your inbox',
    paragraphs: [`If the address can receive posts of ${site.name}, a mail with a link to confirm is on its way. Nothing is sent until you follow it.`],
  };
}
