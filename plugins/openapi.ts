import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** OpenAPI 3 document built from the routes' TypeBox schemas: /docs/json, and Swagger UI at /docs. */
export default fp(
  async function openapiPlugin(app: FastifyInstance) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: {
          title: 'Blog publishing service',
          version: '1.0.0',
          description: 'Posts, AI-generated posts grounded in a per-site knowledge base, and scheduled batch generation.',
        },
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key of a site' } } },
        security: [{ bearerAuth: [] }],
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'openapi' },
);
