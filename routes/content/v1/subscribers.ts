import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../../src/errors.js';
import { signUp } from '../../../src/newsletters/sign-up.js';
import { errorResponses } from '../../../src/schemas/common.js';
import { ContentSiteParams } from '../../../src/schemas/content.js';
import { PublicSubscribeBody, PublicSubscribeResponse } from '../../../src/schemas/newsletters.js';

const CHECK_INBOX = 'Check your inbox: if the address can receive posts, a mail with a link to confirm is on its way';

/** A reader's sign-up as JSON, for headless front ends: no key, open to any origin. */
export default async function contentSubscriberRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
  });
  // A JSON POST from another origin is preflighted.
  app.options('/sites/:handle/subscribers', { schema: { hide: true } }, async (_request, reply) =>
    reply.code(204).header('Access-Control-Allow-Methods', 'POST, OPTIONS').header('Access-Control-Allow-Headers', 'content-type').header('Access-Control-Max-Age', '86400').send(),
  );

  app.post(
    '/sites/:handle/subscribers',
    {
      schema: {
        tags: ['content'],
        operationId: 'subscribeToSite',
        summary: "Subscribe an address to the site's newsletter (double opt-in; no key needed)",
        description:
          'Answers 202 with the same message whether the address is new, waiting for its confirmation or already subscribed: a confirmation mail (at most one an hour per address) carries the link that confirms. The spam guard of the public forms applies (proof of work, honeypot, a window per client address). 404 when the site has no newsletter; 503 MAIL_NOT_CONFIGURED when this service cannot send mail.',
        security: [],
        params: ContentSiteParams,
        body: PublicSubscribeBody,
        response: { 202: PublicSubscribeResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const site = await app.publicSite.byHandle(request.params.handle);
      if (!site) throw notFound('site');
      const { email, altcha, website } = request.body;
      await signUp(
        { guard: app.spamGuard, newsletters: app.newsletters, mailConfigured: app.mail.configured },
        { site, email, source: 'api', clientAddress: request.ip, proof: altcha || null, honeypot: website ?? null },
      );
      reply.header('Cache-Control', 'no-store');
      return reply.code(202).send({ success: true as const, data: { message: CHECK_INBOX } });
    },
  );
}
