import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { closeObjects } from '../src/unknown-fields.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The multipart body of an upload, for the document only (the route reads the parts itself). */
    multipartBody?: object;
  }
}

/** The one file part of a knowledge upload, as the document describes it. */
export const KnowledgeUploadBody = Type.Object(
  { file: Type.String({ format: 'binary', description: '.txt .md .pdf .doc .docx .csv, at most 10 MB' }) },
  { description: 'multipart/form-data with exactly one part, named "file"' },
);

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { type: 'integer', description: 'Requests allowed per window (per API key; per client address on public routes)' },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window' },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until the current window ends' },
};
const RETRY_AFTER_HEADER = { 'Retry-After': { type: 'integer', description: 'Seconds to wait before sending again' } };
const REPLAYED_HEADER = {
  'Idempotent-Replayed': { type: 'string', enum: ['true'], description: 'Set on the stored answer of an earlier request with the same Idempotency-Key, replayed' },
};
const IDEMPOTENCY_KEY_HEADER = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        'Makes a retry safe: the first answer is kept for 24 hours and replayed (Idempotent-Replayed: true) to a retry of the same request; ' +
        'the same key with another request is 422 IDEMPOTENCY_KEY_REUSED, and 409 IDEMPOTENCY_KEY_IN_USE while the first still runs',
    },
  },
};

type Responses = Record<string, Record<string, unknown> & { headers?: object }>;

/** The headers rate limits and idempotency add to a route's answers, for the document only. */
function documentHeaders(response: Responses, config: { idempotent?: boolean; rateLimitPolicy?: string }): Responses {
  const documented: Responses = {};
  for (const [code, schema] of Object.entries(response)) {
    const headers = { ...(config.rateLimitPolicy ? RATE_LIMIT_HEADERS : {}), ...(config.idempotent && code.startsWith('2') ? REPLAYED_HEADER : {}) };
    documented[code] = Object.keys(headers).length ? { ...schema, headers: { ...schema.headers, ...headers } } : schema;
  }
  if (config.rateLimitPolicy) {
    documented['429'] = { $ref: 'ErrorEnvelope', description: 'Too many requests (RATE_LIMITED): wait Retry-After seconds', headers: { ...RETRY_AFTER_HEADER, ...RATE_LIMIT_HEADERS } };
  }
  return documented;
}

interface QuerySchema {
  properties?: Record<string, { default?: unknown }>;
  required?: string[];
}

/** A parameter the server gives a default is optional for clients, whatever the validator needs. */
function optionalDefaults(querystring: QuerySchema): QuerySchema {
  const required = (querystring.required ?? []).filter((name) => querystring.properties?.[name]?.default === undefined);
  return { ...querystring, required };
}

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** OpenAPI 3 document built from the routes' TypeBox schemas: /docs/json, and Swagger UI at /docs. */
export default fp(
  async function openapiPlugin(app: FastifyInstance) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Blog publishing service',
          version: '1.0.0',
          description:
            'Posts of many blog sites, AI-generated posts grounded in a per-site knowledge base, scheduled batch generation, ' +
            'and the public content API. Every `/api/v1` request carries `Authorization: Bearer <API_KEY>`; the key decides the site.',
          license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' },
        },
        // Relative: the document is the same whatever address the service is reached at.
        servers: [{ url: '/', description: 'This service' }],
        tags: [
          { name: 'posts', description: 'Create, read, publish and delete posts; generate them with AI, one or a batch' },
          { name: 'knowledge', description: 'Files of the per-site knowledge base that grounds generated posts' },
          { name: 'tasks', description: 'Scheduled batch generation tasks' },
          { name: 'site', description: 'The settings of the key’s site' },
          { name: 'stats', description: 'Views and visitors of the public pages, counted on the server (no cookie, no script)' },
          { name: 'webhooks', description: 'Signed (Standard Webhooks) notifications of post, task and knowledge events, retried for a day' },
          { name: 'auth', description: 'Staff sign-in: sessions (the blog_session cookie), one-time setup links, passwords' },
          { name: 'users', description: 'The staff of the site and their roles (owners only)' },
          { name: 'keys', description: 'The API keys of the site (owners only)' },
          { name: 'content', description: 'Published posts for front ends, without a key' },
          { name: 'health', description: 'Liveness and readiness probes' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key of a site (acts as its owner)' },
            sessionCookie: {
              type: 'apiKey',
              in: 'cookie',
              name: 'blog_session',
              description: "A staff session (POST /api/v1/auth/sign-in); state-changing requests must come from the service's own origin (Origin or Referer)",
            },
          },
        },
        security: [{ bearerAuth: [] }, { sessionCookie: [] }],
      },
      transform({ schema, url, route }) {
        if (!schema) return { schema, url };
        const documented = { ...schema } as Record<string, unknown>;
        if (schema.querystring) documented.querystring = optionalDefaults(schema.querystring as QuerySchema);
        // As validated: a JSON body takes no field its schema does not declare.
        if (schema.body) documented.body = closeObjects(schema.body);
        if (route.config?.multipartBody) documented.body = route.config.multipartBody;
        if (route.config?.idempotent) documented.headers = IDEMPOTENCY_KEY_HEADER;
        if (schema.response && (route.config?.idempotent || route.config?.rateLimitPolicy)) documented.response = documentHeaders(schema.response as Responses, route.config);
        return { schema: documented, url };
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
    });
    // Swagger UI's page: its own scripts, its styles (it adds a style element as it renders:
    // inline styles, never scripts), the document and "Try it out" fetched from the service,
    // framed by nobody.
    await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP });
  },
  { name: 'openapi' },
);
