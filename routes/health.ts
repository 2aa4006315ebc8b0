import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

export default async function healthRoutes(app: FastifyInstance) {
  app.get(
    '/health',
    { schema: { tags: ['health'], security: [], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/ready',
    {
      schema: {
        tags: ['health'],
        security: [],
        response: {
          200: Type.Object({ status: Type.String(), database: Type.String() }, { additionalProperties: true }),
          503: Type.Object({ status: Type.String(), database: Type.String() }, { additionalProperties: true }),
        },
      },
    },
    async (_request, reply) => {
      let database = 'ok';
      try {
        app.dbHandle.sqlite.prepare('select 1').get();
      } catch {
        database = 'unavailable';
      }
      // The generator never makes the service unready: builtin always serves in auto mode.
      const generator = await app.generator.status();
      const ready = database === 'ok';
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', database, generator });
    },
  );
}
