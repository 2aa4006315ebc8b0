import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, type DbHandle } from './db/client.js';
import { bootstrapFirstSite } from './sites/keys.js';
import { ErrorEnvelope, SiteSchema } from './schemas/common.js';
import dbPlugin from '../plugins/db.js';
import errorsPlugin, { describe, requestIdFor, sendError } from '../plugins/errors.js';
import authPlugin from '../plugins/auth.js';
import openapiPlugin from '../plugins/openapi.js';
import healthRoutes from '../routes/health.js';
import postRoutes from '../routes/api/v1/posts.js';
import knowledgeRoutes from '../routes/api/v1/knowledge.js';
import storagePlugin from '../plugins/storage.js';
import generatorPlugin, { type AppGenerator } from '../plugins/generator.js';
import jobsPlugin, { type JobsPluginOptions } from '../plugins/jobs.js';
import taskRoutes from '../routes/api/v1/tasks.js';

export interface BuildOptions {
  config: Config;
  logger?: FastifyServerOptions['logger'];
  /** Called once with the key of a site created on first start, so it can be shown once. */
  onBootstrapKey?: (siteId: string, key: string) => void;
  /** A generator to use instead of the one GENERATOR selects (tests). */
  generator?: AppGenerator;
  jobs?: JobsPluginOptions;
}

const JSON_BODY_LIMIT = 1024 * 1024;

// Bodies are validated strictly (wrong types are 400, never coerced); query strings and path
// parameters arrive as text and are coerced. Unknown body fields are dropped, not rejected.
function buildValidators() {
  const common = { allErrors: false, useDefaults: true, strict: false } as const;
  const body = addFormats.default(new Ajv.default({ ...common, coerceTypes: false, removeAdditional: 'all' }));
  const text = addFormats.default(new Ajv.default({ ...common, coerceTypes: 'array', removeAdditional: true }));
  for (const ajv of [body, text]) ajv.addSchema(SiteSchema).addSchema(ErrorEnvelope);
  return { body, text };
}

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options;
  const handle: DbHandle = openDatabase(config.dataDir);
  const bootstrapped = bootstrapFirstSite(handle.db, config.siteName, config.bootstrapApiKey);
  if (bootstrapped?.generatedKey) options.onBootstrapKey?.(bootstrapped.site.id, bootstrapped.generatedKey);

  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: (req) => requestIdFor(req.headers['x-request-id']),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Let over-long ids reach the routes, whose validation answers them with the envelope.
    routerOptions: { maxParamLength: 500 },
    // Errors Fastify raises before routing (a badly encoded URL, say) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(reply, request, describe(error)),
  });

  const validators = buildValidators();
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? validators.body : validators.text).compile(schema),
  );

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

  try {
    await app.register(dbPlugin, { config, handle });
    await app.register(errorsPlugin);
    await app.register(openapiPlugin);
    await app.register(authPlugin);
    await app.register(storagePlugin);
    await app.register(generatorPlugin, { generator: options.generator });
    await app.register(jobsPlugin, options.jobs ?? {});
    await app.register(healthRoutes);
    await app.register(
      async (api) => {
        await api.register(postRoutes);
        await api.register(knowledgeRoutes);
        await api.register(taskRoutes);
      },
      { prefix: '/api/v1' },
    );
    await app.ready();
  } catch (error) {
    handle.close();
    throw error;
  }
  return app;
}
