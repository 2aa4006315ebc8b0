import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../../src/errors.js';
import { KeyCreatedResponse, KeyListResponse, KeyRevokedResponse } from '../../../src/schemas/accounts.js';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import type { ApiKeyInfo } from '../../../src/sites/store.js';

const tags = ['keys'];

const keyView = (key: ApiKeyInfo) => ({ id: key.id, prefix: key.prefix, createdAt: key.createdAt, lastUsedAt: null, revokedAt: key.revokedAt });

/** The API keys of the current site: owners only (or an API key). */
export default async function keyRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);
  app.addHook('onRequest', app.requireOwner);

  app.get(
    '/keys',
    { schema: { tags, operationId: 'listKeys', summary: "The site's API keys (prefix only)", response: { 200: KeyListResponse, ...errorResponses } } },
    async (request) => ({ success: true as const, data: { keys: (await app.sites.listKeys(request.site.id)).map(keyView) } }),
  );

  app.post(
    '/keys',
    { schema: { tags, operationId: 'createKey', summary: 'Create an API key (the answer shows it, once)', response: { 201: KeyCreatedResponse, ...errorResponses } } },
    async (request, reply) => {
      const { key, info } = await app.sites.createKey(request.site.id);
      request.log.info({ keyId: info.id, by: request.userId ?? request.apiKeyId }, 'API key created');
      return reply.code(201).send({ success: true, data: { message: 'Key created: copy it now, it is not shown again', key: keyView(info), apiKey: key } });
    },
  );

  app.delete(
    '/keys/:id',
    { schema: { tags, operationId: 'revokeKey', summary: 'Revoke an API key of the site (it stops working at once)', params: IdParams, response: { 200: KeyRevokedResponse, ...errorResponses } } },
    async (request) => {
      // Only a key of this site: another site's key is "not found", as everywhere.
      const found = (await app.sites.listKeys(request.site.id)).find((key) => key.id === request.params.id);
      if (!found) throw notFound('key');
      await app.sites.revokeKey(found.id);
      request.log.info({ keyId: found.id, by: request.userId ?? request.apiKeyId }, 'API key revoked');
      const after = (await app.sites.listKeys(request.site.id)).find((key) => key.id === found.id) ?? found;
      return { success: true as const, data: { message: 'Key revoked', key: keyView(after) } };
    },
  );
}
