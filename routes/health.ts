import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { statesOnly } from '../src/readiness.js';
import { errorResponses } from '../src/schemas/common.js';

const Readiness = Type.Object({
  status: Type.String(),
  details: Type.Boolean({ description: 'Whether the locations (databaseLocation, store, the Ollama host) are shown: with a valid API key, or READY_DETAILS=true' }),
  database: Type.String({ description: '`ok`, `locked` (another program holds the write lock: writes answer 503 DATABASE_BUSY) or `unavailable`' }),
  databaseLocation: Type.Optional(Type.Union(
    [Type.Object({ kind: Type.Literal('sqlite'), file: Type.String() }), Type.Object({ kind: Type.Literal('postgres'), url: Type.String() })],
    { description: 'Which database the service uses (DATABASE_URL): a SQLite file, or a PostgreSQL URL with its password hidden' },
  )),
  storage: Type.String({
    description:
      '`ok`, `full` (writes answer 507 INSUFFICIENT_STORAGE; indexing and the job loop wait) or `unreachable` (the file store does not answer: uploads and deletes answer 503 STORAGE_UNAVAILABLE; indexing waits)',
  }),
  store: Type.Optional(
    Type.Union(
      [
        Type.Object({ kind: Type.Literal('local'), path: Type.String() }),
        Type.Object({ kind: Type.Literal('s3'), bucket: Type.String(), prefix: Type.String(), endpoint: Type.Union([Type.String(), Type.Null()]), region: Type.String() }),
      ],
      { description: 'Where knowledge files are stored (STORAGE_URL): local disk under DATA_DIR/storage, or an S3-compatible bucket' },
    ),
  ),
  jobs: Type.String({ description: 'The job loop: `running`, `waiting` (cannot write), `starting` (start retried: not ready), `stopping` or `stopped`' }),
  indexing: Type.String({ description: '`ok` or `waiting` (knowledge indexing waits for the disk, the database or the file store)' }),
  generator: Type.Object({
    mode: Type.String(),
    active: Type.String(),
    ollama: Type.Object({ host: Type.Optional(Type.String()), model: Type.String(), reachable: Type.Boolean(), modelAvailable: Type.Boolean() }),
  }),
  retrieval: Type.Object(
    {
      mode: Type.Union([Type.Literal('lexical'), Type.Literal('hybrid')]),
      model: Type.Optional(Type.String({ description: 'The embedding model configured (OLLAMA_EMBED_MODEL)' })),
    },
    { description: 'Knowledge search: `hybrid` (BM25 fused with embeddings) while Ollama serves the embedding model, `lexical` (BM25) otherwise' },
  ),
});

export default async function healthRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/health',
    { schema: { tags: ['health'], operationId: 'getHealth', summary: 'Liveness: the process answers', security: [], response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/ready',
    { schema: { tags: ['health'], operationId: 'getReadiness', summary: 'Readiness: the database answers; the generator in use', security: [], response: { 200: Readiness, 503: Readiness, ...errorResponses } } },
    async (request, reply) => {
      const { ready, ...report } = await app.readiness.check();
      // Where things are (paths, hosts, users, buckets) is for operators: a key or READY_DETAILS.
      // A key that cannot be checked (the database is down: the report says so) shows no more.
      const details = app.config.readyDetails || (await app.hasValidKey(request).catch(() => false));
      const shown = details ? { ...report, ready } : statesOnly({ ...report, ready });
      const { ready: _ready, ...body } = shown;
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', details, ...body });
    },
  );
}
