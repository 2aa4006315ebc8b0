import { Type } from '@sinclair/typebox';
import { MAX_WEBHOOK_DESCRIPTION_LENGTH, MAX_WEBHOOK_URL_LENGTH, WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../limits.js';
import { NullableString, PageQuery, PaginationSchema, SiteRef, StringEnum, Timestamp, envelope } from './common.js';

const Events = Type.Array(StringEnum(WEBHOOK_EVENTS), {
  minItems: 1,
  maxItems: 50,
  description: `Events to deliver: ${WEBHOOK_EVENTS.join(', ')}`,
});
const Url = Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'http(s) URL the events are POSTed to; redirects are not followed' });
const Description = Type.Union([Type.String({ maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH }), Type.Null()]);

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { examples: [{ url: 'https://example.com/hooks/blog', events: ['post.published', 'post.unpublished', 'post.deleted'], description: 'Rebuild the static site' }] },
);

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Description),
    enabled: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled endpoint and clears its failure record' })),
  },
  { minProperties: 1, examples: [{ enabled: true }] },
);

export const Webhook = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  description: NullableString,
  events: Type.Array(StringEnum(WEBHOOK_EVENTS)),
  enabled: Type.Boolean(),
  disabledAt: Type.Union([Timestamp, Type.Null()]),
  disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why the endpoint is disabled (by request, or after a day of failed deliveries)' }),
  failingSince: Type.Union([Timestamp, Type.Null()], { description: 'First failed attempt since the last success' }),
  lastSuccessAt: Type.Union([Timestamp, Type.Null()]),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], { description: 'Until then the secret before the last rotation also signs' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const WebhookWithSecret = Type.Composite([
  Webhook,
  Type.Object({ secret: Type.String({ description: 'Signing secret (whsec_...): shown only in this answer' }) }),
]);

export const WebhookCreatedResponse = envelope(Type.Object({ message: Type.String(), webhook: WebhookWithSecret, site: SiteRef }));
export const WebhookResponse = envelope(Type.Object({ message: Type.String(), webhook: Webhook, site: SiteRef }));
export const WebhookListResponse = envelope(Type.Object({ webhooks: Type.Array(Webhook), pagination: PaginationSchema, site: SiteRef }));
export const WebhookDeletedResponse = envelope(Type.Object({ message: Type.String(), webhookId: Type.String(), site: SiteRef }));
export const WebhookListQuery = Type.Object(PageQuery);

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  at: Timestamp,
  durationMs: Type.Integer(),
  responseStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null when it did not answer" }),
  responseBody: Type.Union([Type.String(), Type.Null()], { description: 'The start of its answer (1,000 characters at most)' }),
  error: NullableString,
  outcome: StringEnum(['succeeded', 'retry', 'failed'] as const),
});

export const Delivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The webhook-id header: the same on every attempt' }),
  webhookId: Type.String({ format: 'uuid' }),
  event: StringEnum(WEBHOOK_EVENTS),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  retryUntil: Timestamp,
  lastAttemptAt: Type.Union([Timestamp, Type.Null()]),
  lastResponseStatus: Type.Union([Type.Integer(), Type.Null()]),
  lastError: NullableString,
  lastDurationMs: Type.Union([Type.Integer(), Type.Null()]),
  deliveredAt: Type.Union([Timestamp, Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  attemptLog: Type.Array(DeliveryAttempt, { description: 'The most recent attempts (10 at most), newest first' }),
});

export const DeliveryListQuery = Type.Object({ ...PageQuery, status: Type.Optional(StringEnum(WEBHOOK_DELIVERY_STATUSES)) });
export const DeliveryListResponse = envelope(Type.Object({ deliveries: Type.Array(Delivery), pagination: PaginationSchema, site: SiteRef }));
export const DeliveryResponse = envelope(Type.Object({ message: Type.String(), delivery: Delivery, site: SiteRef }));
export const DeliveryParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100 }),
  deliveryId: Type.String({ minLength: 1, maxLength: 100 }),
});
