import type { IncomingMessage, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from './config.js';
import { AppError, validationError } from './errors.js';
import { jsonDepthExceeds } from './json.js';
import { redactUrl } from './log-redact.js';
import { closeObjects, unknownFieldErrors } from './unknown-fields.js';
import { compiledOnce, onFirstCall, sharedSerializers } from './compiled-once.js';
import { MAX_JSON_DEPTH } from './limits.js';
import { ErrorEnvelope, SiteSchema } from './schemas/common.js';
import accountsPlugin from '../plugins/accounts.js';
import analyticsPlugin, { type AnalyticsPluginOptions } from '../plugins/analytics.js';
import adminUiPlugin from '../plugins/admin-ui.js';
import authPlugin from '../plugins/auth.js';
import dbPlugin, { type DbPluginOptions } from '../plugins/db.js';
import errorsPlugin, { clientErrorHandler, describe, requestIdFor, sendError } from '../plugins/errors.js';
import generatorPlugin from '../plugins/generator.js';
import jobsPlugin, { type JobsPluginOptions } from '../plugins/jobs.js';
import embeddingsPlugin, { type EmbeddingsPluginOptions } from '../plugins/embeddings.js';
import publishingPlugin from '../plugins/publishing.js';
import mailPlugin, { type MailPluginOptions } from '../plugins/mail.js';
import newslettersPlugin, { type NewslettersPluginOptions } from '../plugins/newsletters.js';
import knowledgePlugin, { type KnowledgeEmbeddingOptions, type KnowledgePluginOptions } from '../plugins/knowledge.js';
import mediaPlugin from '../plugins/media.js';
import openapiPlugin from '../plugins/openapi.js';
import postsPlugin from '../plugins/posts.js';
import publicSitePlugin from '../plugins/public-site.js';
import sitesPlugin, { type SitesPluginOptions } from '../plugins/sites.js';
import spamGuardPlugin, { type SpamGuardPluginOptions } from '../plugins/spam-guard.js';
import commentsPlugin from '../plugins/comments.js';
import commentRoutes from '../routes/api/v1/comments.js';
import commentFormRoutes from '../routes/comments-form.js';
import healthRoutes from '../routes/health.js';
import knowledgeRoutes from '../routes/api/v1/knowledge.js';
import mediaRoutes from '../routes/api/v1/media.js';
import postRoutes from '../routes/api/v1/posts.js';
import taskRoutes from '../routes/api/v1/tasks.js';
import authRoutes from '../routes/api/v1/auth.js';
import userRoutes from '../routes/api/v1/users.js';
import keyRoutes from '../routes/api/v1/keys.js';
import siteSettingsRoutes from '../routes/api/v1/site.js';
import contentRoutes from '../routes/content/v1/sites.js';
import contentSubscriberRoutes from '../routes/content/v1/subscribers.js';
import newsletterPages from '../routes/newsletter-pages.js';
import siteRoutes from '../routes/site.js';
import idempotencyPlugin from '../plugins/idempotency.js';
import rateLimitPlugin from '../plugins/rate-limit.js';
import webhooksPlugin, { type WebhooksPluginOptions } from '../plugins/webhooks.js';
import webhookRoutes from '../routes/api/v1/webhooks.js';
import statsRoutes from '../routes/api/v1/stats.js';
import subscriberRoutes from '../routes/api/v1/subscribers.js';
import type { AppGenerator } from './generation/service.js';

export interface AppOptions {
  config: Config;
  /** Create the first site of an empty database, handing its generated key to `onKey`. */
  bootstrap?: DbPluginOptions['bootstrap'];
  /** A generator to use instead of the one GENERATOR selects (tests). */
  generator?: AppGenerator;
  jobs?: JobsPluginOptions;
  /** Webhook delivery (tests); its clock, randomness and start follow `jobs` unless set here. */
  webhooks?: WebhooksPluginOptions;
  chunkSource?: KnowledgePluginOptions['chunkSource'];
  /** DNS TXT lookups proving custom domains (tests). */
  resolveTxt?: SitesPluginOptions['resolveTxt'];
  /** Lanes and backoff of the knowledge indexer (tests). */
  indexer?: KnowledgePluginOptions['indexer'];
  /** The embedding loop and the vector side of search, when OLLAMA_EMBED_MODEL is set (tests); clock and start follow `jobs` unless set here. */
  embeddings?: EmbeddingsPluginOptions & KnowledgeEmbeddingOptions;
  /** The mail loop (tests); its clock, randomness and start follow `jobs` unless set here. */
  mail?: MailPluginOptions;
  /** The newsletter loop (tests): as `mail`. */
  newsletters?: NewslettersPluginOptions;
  /** The clock of analytics (tests). */
  analytics?: AnalyticsPluginOptions;
  /** The spam guard of the public forms (tests give it a clock). */
  spamGuard?: SpamGuardPluginOptions;
}

const JSON_BODY_LIMIT = 1024 * 1024;

/** A body that sends nothing for this long is cut off (at most; shorter with a short REQUEST_TIMEOUT_MS). */
const BODY_IDLE_TIMEOUT_MS = 30_000;
/** A request without Content-Length or Transfer-Encoding has no body to wait for. */
const hasBody = (raw: IncomingMessage) => raw.headers['transfer-encoding'] !== undefined || (raw.headers['content-length'] ?? '0') !== '0';
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && [Object.prototype, null].includes(Object.getPrototypeOf(value));
const bodyIdleTimeoutMs = (config: Config) => Math.min(BODY_IDLE_TIMEOUT_MS, Math.max(500, Math.floor(config.requestTimeoutMs / 2)));

/** What a request log line says about the request: Fastify's default fields, the URL redacted. */
function serializeRequest(request: FastifyRequest) {
  // The client's address is personal data (readers of the public pages): logged at debug level only.
  const debug = request.log.level === 'debug' || request.log.level === 'trace';
  return {
    method: request.method,
    url: redactUrl(request.url),
    version: request.headers['accept-version'] as string | undefined,
    host: request.host,
    remoteAddress: debug ? request.ip : undefined,
    remotePort: request.socket?.remotePort,
  };
}

/** Options of the Fastify instance the app is registered on (they cannot be set from a plugin). */
export function serverOptions(
  config: Config,
  logger: FastifyServerOptions['logger'] = { level: config.logLevel },
): FastifyServerOptions & { http: ServerOptions } {
  return {
    // Requests are logged with their URL: secret query parameters (a key put there) redacted.
    logger: logger && typeof logger === 'object' ? { ...logger, serializers: { req: serializeRequest, ...logger.serializers } } : logger,
    bodyLimit: JSON_BODY_LIMIT,
    // Whether X-Forwarded-* are believed (request.ip, request.protocol: the session cookie's Secure flag).
    trustProxy: config.trustProxy as boolean | string,
    genReqId: (req) => requestIdFor(req.headers['x-request-id']),
    requestIdHeader: false,
    return503OnClosing: true,
    // A start takes as long as its migrations: on a large database, or waiting for another
    // instance that holds the migration lock, that is more than Fastify's 10 s per plugin, which
    // would end the start with a timeout. What can hang has deadlines of its own (the database's
    // connection timeout, STARTUP_WAIT_SECONDS).
    pluginTimeout: 0,
    forceCloseConnections: 'idle',
    // Let over-long ids reach the routes, whose validation answers them with the envelope.
    routerOptions: { maxParamLength: 500 },
    // Response serializers compiled once per process, not again for every app built in it.
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers } },
    // Errors Fastify raises before routing (a badly encoded URL, say) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(reply, request, describe(error)),
    // And so do those Node's HTTP parser raises before a request exists.
    clientErrorHandler,
    // The whole request (headers and body) must arrive within REQUEST_TIMEOUT_MS: a client
    // trickling its body is cut off (408) and its upload's temporary file removed. It stops
    // counting once the body is in, so a generation waiting on the model is never cut by it.
    requestTimeout: config.requestTimeoutMs,
    http: {
      // How often Node checks that deadline (30 s by default): a fraction of it.
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(config.requestTimeoutMs / 4))),
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      // Checked by the errors plugin instead, which answers in the envelope.
      requireHostHeader: false,
    },
  };
}

// Bodies are validated strictly: wrong types are 400, never coerced, and so is a field no
// schema declares (see unknown-fields.ts). Query strings and path parameters arrive as text and
// are coerced; unknown query parameters are dropped.
function buildValidators() {
  const common = { allErrors: false, useDefaults: true, strict: false } as const;
  const body = addFormats.default(new Ajv.default({ ...common, coerceTypes: false }));
  // Only for a body that failed: every unknown field of it, each with its object's schema.
  const everyError = addFormats.default(new Ajv.default({ ...common, coerceTypes: false, allErrors: true, verbose: true }));
  const text = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array', removeAdditional: true }));
  for (const ajv of [body, everyError, text]) {
    ajv.addSchema(SiteSchema).addSchema(ErrorEnvelope);
    // RFC 3339 allows a leap second (23:59:60), which no Date holds: a time that passes the
    // format must also be a real instant, or it would reach the database as an invalid date.
    const rfc3339 = ajv.formats['date-time'] as { validate: (text: string) => boolean };
    ajv.addFormat('date-time', { type: 'string', validate: (text: string) => rfc3339.validate(text) && !Number.isNaN(Date.parse(text)) });
  }
  const compileBody = compiledOnce((schema: object) => onFirstCall(() => {
    const closed = closeObjects(schema);
    const validate = body.compile(closed);
    let findAll: ValidateFunction | undefined;
    const validateBody = (data: unknown) => {
      if (validate(data)) {
        validateBody.errors = null;
        return true;
      }
      findAll ??= everyError.compile(closed);
      findAll(data);
      const unknown = unknownFieldErrors(findAll.errors);
      validateBody.errors = unknown ? [...unknown, ...(validate.errors ?? []).filter((error) => error.keyword !== 'additionalProperties')] : validate.errors;
      return false;
    };
    validateBody.errors = null as ErrorObject[] | null | undefined;
    return validateBody;
  }));
  return { compileBody, compileText: compiledOnce((schema: object) => onFirstCall(() => text.compile(schema), { withContext: true })) };
}

/** The validators, built once per process (each route schema compiled on its first request): see compiled-once.ts. */
let validators: ReturnType<typeof buildValidators> | undefined;

/**
 * The whole service as one plugin: the server, the tests and the benchmarks build a Fastify
 * instance with `serverOptions()` and register this on it.
 */
async function blogApp(app: FastifyInstance, opts: AppOptions) {
  validators ??= buildValidators();
  const { compileBody, compileText } = validators;
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? compileBody(schema) : compileText(schema)));

  // JSON is the only body type besides the knowledge upload's multipart: plain text is 415.
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type (PUT and DELETE take none) is no body, not an error.
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (request, body, done) => {
    if (body === '' && request.method !== 'POST' && request.method !== 'PATCH') return done(null, undefined);
    if (jsonDepthExceeds(body as string, MAX_JSON_DEPTH)) {
      return done(validationError(`Request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`, [{ path: '/body', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }]), undefined);
    }
    return defaultJsonParser(request, body as string, done);
  });

  app.addSchema(SiteSchema);
  app.addSchema(ErrorEnvelope);

  // A compressed body would otherwise be read as if it were plain JSON: 415 before it is read,
  // saying the one encoding taken (RFC 7694).
  app.addHook('onRequest', (request, reply, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding === undefined || !hasBody(request.raw) || encoding.split(',').every((coding) => ['identity', ''].includes(coding.trim().toLowerCase()))) return done();
    reply.header('Accept-Encoding', 'identity');
    done(new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding.slice(0, 50)} is not supported: send the body uncompressed`));
  });

  // A route that takes no body has no field to set: a JSON object with fields sent to one is
  // refused like any unknown field (PUT /posts/:id with {"isDraft": false} toggles, whatever it says).
  app.addHook('preValidation', (request, _reply, done) => {
    const { body } = request;
    if (request.routeOptions.schema?.body !== undefined || !isPlainObject(body) || !request.headers['content-type']?.toLowerCase().includes('json')) return done();
    // An upload's route reads multipart itself and answers any other body 415, which says more.
    if (request.routeOptions.config?.multipartBody !== undefined) return done();
    const fields = Object.keys(body);
    if (fields.length === 0) return done();
    const shown = fields.slice(0, 20).map((field) => (field.length > 100 ? `${field.slice(0, 100)}…` : field));
    // The operation's own description says where such fields go (PUT /posts/:id: to PATCH).
    const where = request.routeOptions.schema?.description ? ` (${request.routeOptions.schema.description})` : '';
    done(validationError(`This request takes no body: ${shown.join(', ')} ${fields.length === 1 ? 'is not a known field' : 'are not known fields'}${where}`, shown.map((field) => ({ path: `/body/${field.replaceAll('~', '~0').replaceAll('/', '~1')}`, message: 'is not a known field: this request takes no body' }))));
  });

  // A body that stops arriving is cut off long before REQUEST_TIMEOUT_MS: its socket idles.
  const idleMs = bodyIdleTimeoutMs(opts.config);
  app.addHook('onRequest', (request, _reply, done) => {
    const { raw } = request;
    const socket = raw.socket as Socket | undefined;
    if (!hasBody(raw) || !socket || raw.complete || typeof socket.setTimeout !== 'function') return done();
    socket.setTimeout(idleMs);
    raw.once('timeout', () => clientErrorHandler.call(app, Object.assign(new Error('request body idle'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket));
    raw.once('end', () => socket.setTimeout(0));
    raw.once('close', () => socket.setTimeout(0));
    done();
  });

  // While closing, answers to in-flight requests end their keep-alive connections: otherwise
  // close() waits for each client's idle connection to time out (72 s) after its last answer.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    // Every answer: its type is the one it says (no sniffing a text into a script or a page), and
    // a link followed to another site tells only this origin. Routes with a stricter need set their own.
    if (!reply.hasHeader('X-Content-Type-Options')) reply.header('X-Content-Type-Options', 'nosniff');
    if (!reply.hasHeader('Referrer-Policy')) reply.header('Referrer-Policy', 'strict-origin-when-cross-origin');
    done(null, payload);
  });

  await app.register(dbPlugin, { config: opts.config, bootstrap: opts.bootstrap });
  await app.register(errorsPlugin);
  await app.register(openapiPlugin);
  await app.register(sitesPlugin, { resolveTxt: opts.resolveTxt });
  await app.register(accountsPlugin);
  await app.register(authPlugin);
  await app.register(postsPlugin);
  await app.register(knowledgePlugin, { chunkSource: opts.chunkSource, indexer: opts.indexer, embeddings: opts.embeddings });
  await app.register(mediaPlugin);
  await app.register(generatorPlugin, { generator: opts.generator });
  await app.register(jobsPlugin, opts.jobs ?? {});
  await app.register(webhooksPlugin, { autoStart: opts.jobs?.autoStart, clock: opts.jobs?.clock, random: opts.jobs?.random, ...opts.webhooks });
  await app.register(publishingPlugin, { autoStart: opts.jobs?.autoStart, clock: opts.jobs?.clock, random: opts.jobs?.random });
  await app.register(mailPlugin, { autoStart: opts.jobs?.autoStart, clock: opts.jobs?.clock, random: opts.jobs?.random, ...opts.mail });
  await app.register(newslettersPlugin, { autoStart: opts.jobs?.autoStart, clock: opts.jobs?.clock, random: opts.jobs?.random, ...opts.newsletters });
  await app.register(embeddingsPlugin, { autoStart: opts.jobs?.autoStart, clock: opts.jobs?.clock, random: opts.jobs?.random, ...opts.embeddings });
  await app.register(idempotencyPlugin);
  // Before every route it limits (all but the API reference).
  await app.register(rateLimitPlugin);
  await app.register(analyticsPlugin, opts.analytics ?? {});
  await app.register(publicSitePlugin);
  await app.register(spamGuardPlugin, opts.spamGuard ?? {});
  await app.register(commentsPlugin);
  await app.register(healthRoutes);
  await app.register(
    async (api) => {
      await api.register(postRoutes);
      await api.register(knowledgeRoutes);
      await api.register(mediaRoutes);
      await api.register(taskRoutes);
      await api.register(siteSettingsRoutes);
      await api.register(webhookRoutes);
      await api.register(authRoutes);
      await api.register(userRoutes);
      await api.register(keyRoutes);
      await api.register(statsRoutes);
      await api.register(subscriberRoutes);
      await api.register(commentRoutes);
    },
    { prefix: '/api/v1' },
  );
  await app.register(contentRoutes, { prefix: '/content/v1' });
  await app.register(contentSubscriberRoutes, { prefix: '/content/v1' });
  // The admin UI at /admin/, a client of the API above (before the public catch-all of custom domains).
  await app.register(adminUiPlugin);
  await app.register(commentFormRoutes);
  await app.register(newsletterPages);
  await app.register(siteRoutes);
}

export default fp(blogApp, { name: 'blog-app' });
