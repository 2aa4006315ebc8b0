import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';

const Readiness = Type.Object({
  status: Type.String(),
  database: Type.String(),
  generator: Type.Object({
    mode: Type.String(),
    active: Type.String(),
    ollama: Type.Object({ host: Type.String(), model: Type.String(), reachable: Type.Boolean(), modelAvailable: Type.Boolean() }),
  }),
});

export default async function healthRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/health',
    { schema: { tags: ['health'], operationId: 'getHealth', summary: 'Liveness: the process answers', security: [], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/ready',
    { schema: { tags: ['health'], operationId: 'getReadiness', summary: 'Readiness: the database answers; the generator in use', security: [], response: { 200: Readiness, 503: Readiness } } },
    async (_request, reply) => {
      const { ready, database, generator } = await app.readiness.check();
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', database, generator });
    },
  );
}
