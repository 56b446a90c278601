// Webhook endpoint and delivery schemas (contract §9): validation, serialization and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { ListOf, Nullable, NullableTimestamp, Paging, Text, Timestamp } from '../../platform/http/schema-kit.js';
import { EVENT_TYPES, type EventType } from '../../platform/webhooks/events.js';

const EventTypeEnum = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES], description: 'An event type' });

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://[^\\s\\x00-\\x1f\\x7f/$.?#][^\\s\\x00-\\x1f\\x7f]*$',
  'x-message': 'must be an http(s) URL',
  description:
    'Where events are POSTed: https (or http). Refused when it resolves to a loopback, private or link-local address or names this service, unless the operator set WEBHOOK_ALLOW_PRIVATE=1',
  examples: ['https://hooks.example.com/assent'],
});

const Events = Type.Array(EventTypeEnum, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: 'The event types sent to this endpoint' });

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Type.Array(EventTypeEnum),
    enabled: Type.Boolean({ description: 'false after 3 days of failed deliveries (the owners are emailed), or when turned off; PATCH enabled: true turns it back on' }),
    disabled_reason: Nullable(Type.String()),
    disabled_at: NullableTimestamp(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'WebhookEndpoint' },
);

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({
      description: 'The signing secret (whsec_…), shown only in this answer: keep it to verify signatures',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
  { title: 'WebhookEndpointWithSecret' },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    events: Events,
    description: Type.Optional(Nullable(Text(500))),
  },
  { additionalProperties: false, title: 'CreateWebhookEndpoint' },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    description: Type.Optional(Nullable(Text(500))),
    enabled: Type.Optional(Type.Boolean({ description: 'true turns a disabled endpoint back on (its pending deliveries resume)' })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateWebhookEndpoint' },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookList = Type.Object({ data: Type.Array(WebhookEndpoint) }, { title: 'WebhookEndpointList' });

export const WebhookParams = Type.Object({ id: Type.String({ description: 'UUID of the endpoint; a malformed one is simply not found' }) });
export const DeliveryParams = Type.Object({
  id: Type.String({ description: 'UUID of the endpoint' }),
  delivery_id: Type.String({ description: 'UUID of the delivery' }),
});

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
const DeliveryStatus = Type.Unsafe<(typeof DELIVERY_STATUSES)[number]>({
  type: 'string',
  enum: [...DELIVERY_STATUSES],
  description: 'pending: waiting for its (next) attempt; delivered: a 2xx within 10 s; failed: given up after 3 days',
});

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    endpoint_id: Type.String({ format: 'uuid' }),
    event_id: Type.String({ format: 'uuid', description: 'The event (its `id` in the body and the webhook-id header)' }),
    event_type: Type.String({ examples: ['grievance.created'] }),
    status: DeliveryStatus,
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    next_attempt_at: NullableTimestamp('When the next attempt is due (pending only)'),
    last_attempt_at: NullableTimestamp(),
    last_response_status: Nullable(Type.Integer({ description: "The receiver's HTTP status at the last attempt (null: no answer)" })),
    last_error: Nullable(Type.String({ description: 'Why the last attempt failed' })),
    delivered_at: NullableTimestamp(),
    created_at: Timestamp(),
  },
  { title: 'WebhookDelivery' },
);

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'The attempt number (1 is the first); a retry from the API continues the count' }),
    attempted_at: Timestamp('When the attempt was sent'),
    duration_ms: Type.Integer({ description: 'From sending to the answer (or the failure), in milliseconds' }),
    response_status: Nullable(Type.Integer({ description: "The receiver's HTTP status (null: no answer)" })),
    error: Nullable(Type.String({ description: 'Why the attempt failed (null: delivered)' })),
  },
  { title: 'WebhookAttempt' },
);

export const WebhookAttemptList = Type.Object(
  {
    delivery: WebhookDelivery,
    attempts: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
  },
  { title: 'WebhookAttemptList' },
);

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  ...Paging,
});
export type ListDeliveriesInput = Static<typeof ListDeliveriesQuery>;

export const WebhookDeliveryList = ListOf(WebhookDelivery, 'WebhookDeliveryList', 'Deliveries matching the filter, over all pages');
