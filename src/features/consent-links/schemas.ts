// Consent link schemas (original spec §2.3, §2.4, §4.3; contract §5).
import { Type, type Static } from 'typebox';
import { Email, Nullable, NullableTimestamp, Phone, Text, Timestamp } from '../../platform/http/schema-kit.js';

export const CONSENT_ACTIONS = ['approved', 'partial_consent', 'declined', 'revoked'] as const;
export type ConsentAction = (typeof CONSENT_ACTIONS)[number];
export type LinkStatus = 'active' | 'complete' | 'expired';

const ExpiryHours = Type.Integer({ minimum: 1, maximum: 24, default: 24, description: 'Hours until the link expires: 1-24, default 24' });
const SendSms = Type.Boolean({ default: true, description: 'Queue an SMS with the link to the phone (default true)' });
const DeliveryChannelStatus = Type.Unsafe<'queued' | 'sent' | 'failed'>({ type: 'string', enum: ['queued', 'sent', 'failed'] });

export const DeliveryStatus = Type.Object(
  { sms: Type.Optional(DeliveryChannelStatus), email: Type.Optional(DeliveryChannelStatus) },
  { description: 'One key per channel used' },
);

export const CreateConsentLinkBody = Type.Object(
  {
    asset_id: Type.String({ format: 'uuid', 'x-message': 'must be a UUID' }),
    collection_point_id: Text(64, { description: 'UUID or display_id of an active collection point of that asset' }),
    phone: Phone({ description: "The data principal's phone: E.164, or 10 digits (DEFAULT_COUNTRY_CODE is prefixed)" }),
    dp_id: Type.Optional(Text(255, { description: "Your identifier for the data principal" })),
    email: Type.Optional(Email({ description: 'Also send the link by email; the address is not kept on the request' })),
    expiry_hours: Type.Optional(ExpiryHours),
    send_sms: Type.Optional(SendSms),
  },
  { additionalProperties: false },
);
export type CreateConsentLinkInput = Static<typeof CreateConsentLinkBody>;

export const DuplicateConsentLinkBody = Type.Object(
  { expiry_hours: Type.Optional(ExpiryHours), send_sms: Type.Optional(SendSms) },
  { additionalProperties: false },
);
export type DuplicateConsentLinkInput = Static<typeof DuplicateConsentLinkBody>;

export const ConsentLinkCreated = Type.Object(
  {
    request_id: Type.String({ format: 'uuid', description: 'Stable id of the consent request' }),
    event_id: Type.String({ format: 'uuid', description: 'Id of this link instance' }),
    consent_link: Type.String({ description: "The link, on the organization's own subdomain" }),
    expires_at: Timestamp(),
    delivery_status: DeliveryStatus,
  },
  { title: 'ConsentLinkCreated' },
);
export const ConsentLinkDuplicated = Type.Object(
  { ...ConsentLinkCreated.properties, regeneration_count: Type.Integer({ description: 'Times this request has been regenerated (at most 5)' }) },
  { title: 'ConsentLinkDuplicated' },
);

export const RequestParams = Type.Object({ request_id: Type.String({ description: 'The request_id returned at creation' }) });

export const TIMESTAMP_MESSAGE = 'must be an ISO 8601 date-time with a time zone';

export const HistoryQuery = Type.Object({
  asset_id: Type.String({ maxLength: 255, description: 'Required: the asset whose links to list' }),
  collection_point_id: Type.Optional(Type.String({ maxLength: 255, description: 'UUID or display_id' })),
  event_id: Type.Optional(Type.String({ maxLength: 255, description: 'Any link instance of a request (current or earlier)' })),
  dp_id: Type.Optional(Type.String({ maxLength: 255, description: "The request's data principal id" })),
  from: Type.Optional(
    Type.String({ format: 'date-time', 'x-message': TIMESTAMP_MESSAGE, description: 'created_at >= from; must be in the past' }),
  ),
  to: Type.Optional(
    Type.String({ format: 'date-time', 'x-message': TIMESTAMP_MESSAGE, description: 'created_at <= to; default now' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
});
export type HistoryQueryInput = Static<typeof HistoryQuery>;

export const DailyCountsQuery = Type.Object({
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30, description: 'How many UTC days, ending today' })),
  asset_id: Type.Optional(Type.String({ format: 'uuid', 'x-message': 'must be a UUID', description: 'Only this asset (default: every asset)' })),
});
export type DailyCountsInput = Static<typeof DailyCountsQuery>;

const DayCounts = {
  created: Type.Integer({ description: 'Links created that day' }),
  completed: Type.Integer({ description: 'Of those, completed (consent given)' }),
  active: Type.Integer({ description: 'Of those, still open now' }),
  expired: Type.Integer({ description: 'Of those, expired without consent' }),
};

export const DailyCounts = Type.Object(
  {
    from: Type.String({ format: 'date', description: 'First day (UTC)' }),
    to: Type.String({ format: 'date', description: 'Last day (UTC): today' }),
    days: Type.Array(Type.Object({ date: Type.String({ format: 'date' }), ...DayCounts }), { description: 'Every day of the window, oldest first, zeros included' }),
    totals: Type.Object(DayCounts),
  },
  { title: 'ConsentLinkDailyCounts' },
);

export const HistoryHeaders = Type.Object({ 'x-org-id': Type.Optional(Type.String({ description: 'The organization slug (required)' })) });

export const ConsentLinkRequest = Type.Object(
  {
    request_id: Type.String(),
    event_id: Type.String({ description: 'The most recently issued link instance' }),
    collection_point_id: Type.String(),
    asset_id: Type.String(),
    phone: Type.String({ description: 'Masked: + then * per hidden digit, then the last 4 (3 under 10 digits)' }),
    status: Type.Unsafe<LinkStatus>({ type: 'string', enum: ['active', 'complete', 'expired'] }),
    created_at: Timestamp(),
    expires_at: Timestamp(),
    completed_at: NullableTimestamp(),
    consent_action: Nullable(Type.Unsafe<ConsentAction>({ type: 'string', enum: [...CONSENT_ACTIONS] })),
    regeneration_count: Type.Integer(),
  },
  { title: 'ConsentLinkRequest' },
);

const Counts = Type.Object({ total: Type.Integer(), active: Type.Integer(), completed: Type.Integer(), expired: Type.Integer() });

export const HistoryEnvelope = Type.Object(
  {
    data: Type.Array(ConsentLinkRequest),
    count: Type.Integer({ description: 'Records matching the filters' }),
    summary: Type.Object({
      total_links: Type.Integer(),
      active: Type.Integer(),
      completed: Type.Integer(),
      expired: Type.Integer(),
    }),
    collectionPointSummary: Type.Record(Type.String(), Counts, { description: 'Keyed by collection point UUID; points with links in the filtered set' }),
    filters: Type.Object({
      assetId: Type.String(),
      collectionPointId: Nullable(Type.String()),
      eventId: Nullable(Type.String()),
      dpId: Nullable(Type.String()),
      from: Nullable(Type.String()),
      to: Type.String(),
      limit: Type.Integer(),
      offset: Type.Integer(),
    }),
  },
  { title: 'ConsentLinkHistory' },
);
