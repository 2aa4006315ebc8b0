import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from './config.js';
import { ErrorEnvelope, SiteSchema } from './schemas/common.js';
import authPlugin from '../plugins/auth.js';
import dbPlugin, { type DbPluginOptions } from '../plugins/db.js';
import errorsPlugin, { describe, requestIdFor, sendError } from '../plugins/errors.js';
import generatorPlugin from '../plugins/generator.js';
import jobsPlugin, { type JobsPluginOptions } from '../plugins/jobs.js';
import knowledgePlugin, { type KnowledgePluginOptions } from '../plugins/knowledge.js';
import openapiPlugin from '../plugins/openapi.js';
import postsPlugin from '../plugins/posts.js';
import publicSitePlugin from '../plugins/public-site.js';
import sitesPlugin from '../plugins/sites.js';
import healthRoutes from '../routes/health.js';
import knowledgeRoutes from '../routes/api/v1/knowledge.js';
import postRoutes from '../routes/api/v1/posts.js';
import taskRoutes from '../routes/api/v1/tasks.js';
import siteSettingsRoutes from '../routes/api/v1/site.js';
import contentRoutes from '../routes/content/v1/sites.js';
import siteRoutes from '../routes/site.js';
import type { AppGenerator } from './generation/service.js';

export interface AppOptions {
  config: Config;
  /** Create the first site of an empty database, handing its generated key to `onKey`. */
  bootstrap?: DbPluginOptions['bootstrap'];
  /** A generator to use instead of the one GENERATOR selects (tests). */
  generator?: AppGenerator;
  jobs?: JobsPluginOptions;
  chunkSource?: KnowledgePluginOptions['chunkSource'];
}

const JSON_BODY_LIMIT = 1024 * 1024;

/** Options of the Fastify instance the app is registered on (they cannot be set from a plugin). */
export function serverOptions(config: Config, logger: FastifyServerOptions['logger'] = { level: config.logLevel }): FastifyServerOptions {
  return {
    logger,
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: (req) => requestIdFor(req.headers['x-request-id']),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Let over-long ids reach the routes, whose validation answers them with the envelope.
    routerOptions: { maxParamLength: 500 },
    // Errors Fastify raises before routing (a badly encoded URL, say) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(reply, request, describe(error)),
  };
}

// Bodies are validated strictly (wrong types are 400, never coerced); query strings and path
// parameters arrive as text and are coerced. Unknown body fields are dropped, not rejected.
function buildValidators() {
  const common = { allErrors: false, useDefaults: true, strict: false } as const;
  const body = addFormats.default(new Ajv.default({ ...common, coerceTypes: false, removeAdditional: 'all' }));
  const text = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array', removeAdditional: true }));
  for (const ajv of [body, text]) ajv.addSchema(SiteSchema).addSchema(ErrorEnvelope);
  return { body, text };
}

/**
 * The whole service as one plugin: the server, the tests and the benchmarks build a Fastify
 * instance with `serverOptions()` and register this on it.
 */
async function blogApp(app: FastifyInstance, opts: AppOptions) {
  const validators = buildValidators();
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? validators.body : validators.text).compile(schema));

  // JSON is the only body type besides the knowledge upload's multipart: plain text is 415.
  app.removeContentTypeParser('text/plain');
  // An empty body with a JSON content type (PUT and DELETE take none) is no body, not an error.
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT }, (request, body, done) => {
    if (body === '' && request.method !== 'POST' && request.method !== 'PATCH') return done(null, undefined);
    return defaultJsonParser(request, body as string, done);
  });

  app.addSchema(SiteSchema);
  app.addSchema(ErrorEnvelope);

  // While closing, answers to in-flight requests end their keep-alive connections: otherwise
  // close() waits for each client's idle connection to time out (72 s) after its last answer.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });

  await app.register(dbPlugin, { config: opts.config, bootstrap: opts.bootstrap });
  await app.register(errorsPlugin);
  await app.register(openapiPlugin);
  await app.register(sitesPlugin);
  await app.register(authPlugin);
  await app.register(postsPlugin);
  await app.register(knowledgePlugin, { chunkSource: opts.chunkSource });
  await app.register(generatorPlugin, { generator: opts.generator });
  await app.register(jobsPlugin, opts.jobs ?? {});
  await app.register(publicSitePlugin);
  await app.register(healthRoutes);
  await app.register(
    async (api) => {
      await api.register(postRoutes);
      await api.register(knowledgeRoutes);
      await api.register(taskRoutes);
      await api.register(siteSettingsRoutes);
    },
    { prefix: '/api/v1' },
  );
  await app.register(contentRoutes, { prefix: '/content/v1' });
  await app.register(siteRoutes);
}

export default fp(blogApp, { name: 'blog-app' });
