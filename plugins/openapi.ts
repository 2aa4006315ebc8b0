import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

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

interface QuerySchema {
  properties?: Record<string, { default?: unknown }>;
  required?: string[];
}

/** A parameter the server gives a default is optional for clients, whatever the validator needs. */
function optionalDefaults(querystring: QuerySchema): QuerySchema {
  const required = (querystring.required ?? []).filter((name) => querystring.properties?.[name]?.default === undefined);
  return { ...querystring, required };
}

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
          { name: 'content', description: 'Published posts for front ends, without a key' },
          { name: 'health', description: 'Liveness and readiness probes' },
        ],
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key of a site' } } },
        security: [{ bearerAuth: [] }],
      },
      transform({ schema, url, route }) {
        if (!schema) return { schema, url };
        const documented = { ...schema } as Record<string, unknown>;
        if (schema.querystring) documented.querystring = optionalDefaults(schema.querystring as QuerySchema);
        if (route.config?.multipartBody) documented.body = route.config.multipartBody;
        return { schema: documented, url };
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'openapi' },
);
