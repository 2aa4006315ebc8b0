import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import { readingUpload, registerUploadParser } from './upload-parser.js';
import { AppError, validationError } from '../../../src/errors.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import {
  NewsletterProgressResponse,
  SubscriberDeletedResponse,
  SubscriberImportBody,
  SubscriberImportResponse,
  SubscriberListQuery,
  SubscriberListResponse,
  SubscribersOverTimeResponse,
  NewsletterTestResponse,
} from '../../../src/schemas/newsletters.js';
import { StatsQuery } from '../../../src/schemas/stats.js';
import { dayIn, statsRange } from '../../../src/analytics/rules.js';
import { Type } from '@sinclair/typebox';
import { mailNotConfigured } from '../../../src/mail/service.js';
import { testMessage } from '../../../src/newsletters/message.js';

const tags = ['subscribers'];
/** Most bytes an import file may have (50,000 addresses of a generous length). */
const MAX_IMPORT_BYTES = 5 * 1024 * 1024;

export default async function subscriberRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  await registerUploadParser(app, MAX_IMPORT_BYTES);
  app.addHook('onRequest', app.requireSite);

  app.get(
    '/subscribers',
    {
      onRequest: app.requireOwner,
      schema: { tags, operationId: 'listSubscribers', summary: "List the site's newsletter subscribers, newest first", querystring: SubscriberListQuery, response: { 200: SubscriberListResponse, ...errorResponses } },
    },
    async (request) => {
      const [page, counts] = await Promise.all([app.newsletters.list(request.site.id, request.query), app.newsletters.counts(request.site.id)]);
      return { success: true as const, data: { subscribers: page.items, counts, pagination: page.pagination, site: request.site } };
    },
  );

  app.get(
    '/subscribers/stats',
    {
      schema: {
        tags,
        operationId: 'getSubscribersOverTime',
        summary: 'Subscribers over time: sign-ups confirmed and unsubscribes per day, and the active count',
        description: "Days in the site's time zone, as the other stats. Counts only: no address.",
        querystring: StatsQuery,
        response: { 200: SubscribersOverTimeResponse, ...errorResponses },
      },
    },
    async (request) => {
      const { timeZone } = await app.sites.get(request.site.id);
      const range = statsRange(request.query.from, request.query.to, dayIn(timeZone, Date.now()));
      const { days, active } = await app.newsletters.overTime(request.site.id, range, timeZone);
      return { success: true as const, data: { ...range, timeZone, active, days } };
    },
  );

  app.get(
    '/subscribers.csv',
    {
      onRequest: app.requireOwner,
      schema: {
        tags,
        operationId: 'exportSubscribers',
        summary: "Every subscriber of the site as CSV (email, status, consent_source, consented_at, created_at)",
        response: { 200: { description: 'One line per subscriber, UTF-8, CRLF line ends', content: { 'text/csv': { schema: Type.String() } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', 'attachment; filename="subscribers.csv"');
      reply.header('cache-control', 'no-store');
      return reply.send(Readable.from(app.newsletters.exportCsv(request.site.id)));
    },
  );

  app.post(
    '/subscribers/import',
    {
      onRequest: app.requireOwner,
      schema: {
        tags,
        operationId: 'importSubscribers',
        summary: 'Import addresses from CSV as confirmed subscribers (multipart/form-data, one part named "file")',
        description:
          'The importer vouches for each address\'s consent (recorded as source `import`). Lines that are not an address, repeat an earlier line or are already subscribers are reported line by line and skipped; the rest are added in one transaction, all or none.',
        consumes: ['multipart/form-data'],
        response: { 200: SubscriberImportResponse, ...errorResponses },
      },
      config: { multipartBody: SubscriberImportBody },
    },
    async (request) => {
      const text = await readingUpload(readImportFile(request.parts()));
      const report = await app.newsletters.importCsv(request.site.id, text);
      return { success: true as const, data: { message: `Imported ${report.imported} subscriber${report.imported === 1 ? '' : 's'}`, ...report } };
    },
  );

  app.delete(
    '/subscribers/:id',
    {
      onRequest: app.requireOwner,
      schema: { tags, operationId: 'deleteSubscriber', summary: 'Erase a subscriber (the address is deleted, not kept as unsubscribed)', params: IdParams, response: { 200: SubscriberDeletedResponse, ...errorResponses } },
    },
    async (request) => {
      await app.newsletters.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Subscriber erased', subscriberId: request.params.id } };
    },
  );

  app.get(
    '/posts/:id/newsletter',
    {
      schema: {
        tags,
        operationId: 'getPostNewsletter',
        summary: "The progress of a post's newsletter",
        description: 'A post is mailed once, when it is first published (if the site has newsletters on and the post does not opt out with `sendNewsletter: false`).',
        params: IdParams,
        response: { 200: NewsletterProgressResponse, ...errorResponses },
      },
    },
    async (request) => ({ success: true as const, data: { newsletter: await app.newsletters.progress(request.site.id, request.params.id) } }),
  );

  app.post(
    '/posts/:id/newsletter/test',
    {
      schema: {
        tags,
        operationId: 'sendNewsletterTest',
        summary: "Mail the post as its newsletter to the signed-in person only (a draft too)",
        description: 'For a signed-in person (not an API key): the mail goes to their own address, its subject marked [Test]; no subscriber receives anything, and the post\'s own newsletter is not made. 503 MAIL_NOT_CONFIGURED without SMTP_URL.',
        params: IdParams,
        response: { 202: NewsletterTestResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const session = request.session;
      if (!session) throw new AppError(403, 'FORBIDDEN', 'Sign in as a person to send a test: it goes to your own address, and an API key has none');
      if (!app.mail.configured) throw mailNotConfigured();
      const row = await app.posts.get(request.site.id, request.params.id);
      const site = await app.sites.get(request.site.id);
      const post = await app.publicSite.preview(site.id, row);
      const { jobId } = await app.mail.enqueue(site.id, testMessage(site, app.publicPages.view(site, ''), post, session.email));
      return reply.code(202).send({ success: true as const, data: { message: `A test is on its way to ${session.email}`, to: session.email, jobId } });
    },
  );
}

/** The one part named "file", as UTF-8 text. */
async function readImportFile(parts: AsyncIterableIterator<import('@fastify/multipart').Multipart>): Promise<string> {
  let text: string | null = null;
  for await (const part of parts) {
    if (part.type !== 'file') continue;
    if (part.fieldname !== 'file' || text !== null) throw validationError('Send one part named "file"', [{ path: '/body/file', message: 'exactly one part named "file"' }]);
    const buffer = await part.toBuffer();
    if (part.file.truncated) throw new AppError(413, 'FILE_TOO_LARGE', `An import file is at most ${MAX_IMPORT_BYTES} bytes`);
    text = new TextDecoder('utf-8', { fatal: false }).decode(buffer);
  }
  if (text === null) throw validationError('Send the CSV in a part named "file"', [{ path: '/body/file', message: 'is required' }]);
  return text;
}
