import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParams, errorResponses } from '../../../src/schemas/common.js';
import {
  CreateWebhookBody,
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryParams,
  DeliveryResponse,
  PatchWebhookBody,
  WebhookCreatedResponse,
  WebhookDeletedResponse,
  WebhookListQuery,
  WebhookListResponse,
  WebhookResponse,
} from '../../../src/schemas/webhooks.js';
import type { WebhookRow } from '../../../src/webhooks/store.js';

/** An endpoint as the API shows it; the secret only where the schema asks for it (creation, rotation). */
export const webhookView = (row: WebhookRow) => row;

const tags = ['webhooks'];

export default async function webhookRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', app.requireSite);
  // Webhooks are owners' business (an API key acts as owner).
  app.addHook('onRequest', app.requireOwner);

  app.post(
    '/webhooks',
    {
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint (the answer shows its signing secret, once)',
        description:
          'Events are POSTed as Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` (v1, HMAC-SHA256 with the secret) headers, ' +
          'retried with backoff for a day. Loopback, private and link-local addresses are refused unless the server allows them (WEBHOOK_ALLOW_PRIVATE).',
        body: CreateWebhookBody,
        response: { 201: WebhookCreatedResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const webhook = await app.webhooks.create(request.site.id, request.body);
      return reply.code(201).send({ success: true, data: { message: 'Webhook created: keep its secret, it is not shown again', webhook: webhookView(webhook), site: request.site } });
    },
  );

  app.get(
    '/webhooks',
    { schema: { tags, operationId: 'listWebhooks', summary: 'List webhook endpoints', querystring: WebhookListQuery, response: { 200: WebhookListResponse, ...errorResponses } } },
    async (request) => {
      const page = await app.webhooks.list(request.site.id, request.query.page, request.query.limit);
      return { success: true as const, data: { webhooks: page.items.map(webhookView), pagination: page.pagination, site: request.site } };
    },
  );

  app.get(
    '/webhooks/:id',
    { schema: { tags, operationId: 'getWebhook', summary: 'Retrieve a webhook endpoint (whether it is enabled, and why not)', params: IdParams, response: { 200: WebhookResponse, ...errorResponses } } },
    async (request) => {
      const webhook = await app.webhooks.get(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Webhook retrieved successfully', webhook: webhookView(webhook), site: request.site } };
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint: url, events, description, enabled',
        params: IdParams,
        body: PatchWebhookBody,
        response: { 200: WebhookResponse, ...errorResponses },
      },
    },
    async (request) => {
      const webhook = await app.webhooks.update(request.site.id, request.params.id, request.body);
      return { success: true as const, data: { message: 'Webhook updated successfully', webhook: webhookView(webhook), site: request.site } };
    },
  );

  app.delete(
    '/webhooks/:id',
    { schema: { tags, operationId: 'deleteWebhook', summary: 'Delete a webhook endpoint and its deliveries', params: IdParams, response: { 200: WebhookDeletedResponse, ...errorResponses } } },
    async (request) => {
      await app.webhooks.delete(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Webhook deleted successfully', webhookId: request.params.id, site: request.site } };
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Replace the signing secret (the answer shows the new one, once)',
        description: 'Takes no body. For 24 hours deliveries carry two signatures, with the new and the previous secret, so receivers can switch without losing events.',
        params: IdParams,
        response: { 200: WebhookCreatedResponse, ...errorResponses },
      },
    },
    async (request) => {
      const webhook = await app.webhooks.rotateSecret(request.site.id, request.params.id);
      return { success: true as const, data: { message: 'Secret rotated: keep it, it is not shown again', webhook: webhookView(webhook), site: request.site } };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'Recent deliveries of an endpoint, with their attempts',
        description: 'Newest first; each with its status, attempts, next attempt and the most recent attempts (response code, duration, error).',
        params: IdParams,
        querystring: DeliveryListQuery,
        response: { 200: DeliveryListResponse, ...errorResponses },
      },
    },
    async (request) => {
      const page = await app.webhooks.deliveries(request.site.id, request.params.id, request.query);
      return { success: true as const, data: { deliveries: page.items, pagination: page.pagination, site: request.site } };
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again now (same webhook-id and body)',
        description: 'Takes no body. 409 while the delivery is still queued or its endpoint is disabled.',
        params: DeliveryParams,
        response: { 202: DeliveryResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const delivery = await app.webhooks.retryDelivery(request.site.id, request.params.id, request.params.deliveryId);
      return reply.code(202).send({ success: true, data: { message: 'Delivery queued', delivery, site: request.site } });
    },
  );
}
